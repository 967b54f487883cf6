// Tests of labeldp::optimal_mechanism_lp(): the column-generation optimum equals GLPK's optimum
// of the explicit LP (all M[y][o] variables, pairwise privacy rows); Theorem 5 of Ghazi et al.
// (2023) checked by computation against RR-on-Bins; every returned mechanism passes the exact
// privacy audit.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/mechanisms/optimal_lp.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "oracles/glpk_oracle.hpp"

using labeldp::AbsoluteLoss;
using labeldp::FinitePrior;
using labeldp::Index;
using labeldp::PoissonLogLoss;
using labeldp::SquaredLoss;
using labeldp::optim::SolveStatus;

namespace {

bool close_relative(double a, double b, double rel) {
  return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)});
}

FinitePrior<> random_prior(std::mt19937_64& rng, Index k, bool nonnegative_values) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> values, weights;
  double v = nonnegative_values ? 4 * u(rng) : -5 + 4 * u(rng);
  for (Index i = 0; i < k; ++i) {
    values.push_back(v);
    v += 0.2 + 3 * u(rng);
    weights.push_back(u(rng) < 0.15 ? 0.0 : u(rng));  // some labels of probability 0
  }
  weights[0] += 0.1;
  return FinitePrior<>::from_weights(values, weights);
}

Eigen::VectorXd grid(double lo, double hi, Index n) { return Eigen::VectorXd::LinSpaced(n, lo, hi); }

// Checks what every returned mechanism must satisfy: rows sum to 1, entries >= 0, inputs equal
// the prior's values, only used outputs, and the exact privacy audit.
template <typename Loss>
void check_mechanism(const labeldp::OptimalLPResult<double>& r, const FinitePrior<>& prior, double eps,
                     const Eigen::VectorXd& outputs, const Loss& loss) {
  REQUIRE(r.status == SolveStatus::Optimal);
  const auto& M = r.mechanism;
  REQUIRE(M.inputs() == prior.values());
  const double audited = labeldp::audit_epsilon(M);
  INFO("audited eps " << audited << " vs " << eps);
  REQUIRE(audited <= eps * (1 + 1e-12));
  for (Index y = 0; y < M.num_inputs(); ++y) REQUIRE(std::abs(M.probabilities().row(y).sum() - 1) <= 1e-12);
  REQUIRE(M.probabilities().minCoeff() >= 0);
  for (Index j = 0; j < M.num_outputs(); ++j) {
    REQUIRE(M.probabilities().col(j).maxCoeff() > 0);
    bool found = false;
    for (Index i = 0; i < outputs.size(); ++i) found = found || outputs[i] == M.outputs()[j];
    REQUIRE(found);
  }
  REQUIRE(close_relative(M.expected_loss(prior, loss), r.expected_loss, 1e-12));
}

template <typename Loss>
void check_against_explicit_lp(const FinitePrior<>& prior, double eps, const Eigen::VectorXd& outputs, const Loss& loss) {
  const auto r = labeldp::optimal_mechanism_lp(prior, eps, outputs, loss);
  check_mechanism(r, prior, eps, outputs, loss);
  const auto explicit_lp = labeldp::test::explicit_mechanism_lp(prior.values(), prior.probabilities(), eps, outputs, loss);
  const auto g = labeldp::test::solve_with_glpk(explicit_lp);
  REQUIRE(g.status == SolveStatus::Optimal);
  INFO("column generation " << r.expected_loss << ", GLPK explicit LP " << g.objective << ", rounds " << r.rounds);
  REQUIRE(close_relative(r.expected_loss, g.objective, 1e-9));
}

}  // namespace

TEST_CASE("optimal LP: equals GLPK on the explicit LP (squared loss)", "[optimal_lp][glpk]") {
  std::mt19937_64 rng(101);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < 40; ++t) {
    const Index k = 2 + Index(u(rng) * 6);
    const auto prior = random_prior(rng, k, false);
    const double eps = std::exp(std::log(0.05) + u(rng) * (std::log(6.0) - std::log(0.05)));
    const Index n = 2 + Index(u(rng) * 14);
    const Eigen::VectorXd outputs = grid(prior.value(0) - 1, prior.value(k - 1) + 1, n);
    INFO("trial " << t << ": k = " << k << ", n = " << n << ", eps = " << eps);
    check_against_explicit_lp(prior, eps, outputs, SquaredLoss<>{});
  }
}
