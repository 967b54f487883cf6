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

using labeldp::test::close_relative;

namespace {

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
void check_against_explicit_lp(const FinitePrior<>& prior, double eps, const Eigen::VectorXd& outputs, const Loss& loss,
                               bool also_dense_simplex = false) {
  const auto r = labeldp::optimal_mechanism_lp(prior, eps, outputs, loss);
  check_mechanism(r, prior, eps, outputs, loss);
  const auto explicit_lp = labeldp::test::explicit_mechanism_lp(prior.values(), prior.probabilities(), eps, outputs, loss);
  const auto g = labeldp::test::solve_with_glpk(explicit_lp);
  REQUIRE(g.status == SolveStatus::Optimal);
  INFO("column generation " << r.expected_loss << ", GLPK explicit LP " << g.objective << ", rounds " << r.rounds);
  REQUIRE(close_relative(r.expected_loss, g.objective, 1e-9));
  // The certificate: the dual bound is a lower bound on GLPK's optimum and meets ours.
  REQUIRE(r.dual_bound <= g.objective + 1e-9 * std::max(1.0, std::abs(g.objective)));
  REQUIRE(close_relative(r.dual_bound, r.expected_loss, 1e-9));
  if (also_dense_simplex) {
    // Second oracle: the same explicit LP, dense, through the library's own simplex.
    labeldp::optim::LinearProgram dense;
    dense.A = Eigen::MatrixXd(explicit_lp.A);
    dense.b = explicit_lp.b;
    dense.row_types = explicit_lp.row_types;
    dense.c = explicit_lp.c;
    labeldp::optim::RevisedSimplex simplex(dense);
    const auto s = simplex.solve();
    REQUIRE(s.status == SolveStatus::Optimal);
    REQUIRE(close_relative(r.expected_loss, s.objective, 1e-9));
  }
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
    check_against_explicit_lp(prior, eps, outputs, SquaredLoss<>{}, t % 4 == 0);
  }
}

TEST_CASE("optimal LP: equals GLPK on the explicit LP (absolute loss)", "[optimal_lp][glpk]") {
  std::mt19937_64 rng(202);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < 30; ++t) {
    const Index k = 2 + Index(u(rng) * 6);
    const auto prior = random_prior(rng, k, false);
    const double eps = std::exp(std::log(0.05) + u(rng) * (std::log(6.0) - std::log(0.05)));
    const Index n = 2 + Index(u(rng) * 14);
    const Eigen::VectorXd outputs = grid(prior.value(0) - 1, prior.value(k - 1) + 1, n);
    INFO("trial " << t << ": k = " << k << ", n = " << n << ", eps = " << eps);
    check_against_explicit_lp(prior, eps, outputs, AbsoluteLoss<>{}, t % 4 == 0);
  }
}

TEST_CASE("optimal LP: equals GLPK on the explicit LP (Poisson log loss)", "[optimal_lp][glpk]") {
  std::mt19937_64 rng(303);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < 30; ++t) {
    const Index k = 2 + Index(u(rng) * 6);
    const auto prior = random_prior(rng, k, true);
    const double eps = std::exp(std::log(0.05) + u(rng) * (std::log(6.0) - std::log(0.05)));
    const Index n = 2 + Index(u(rng) * 14);
    const Eigen::VectorXd outputs = grid(0.05, prior.value(k - 1) + 1, n);
    INFO("trial " << t << ": k = " << k << ", n = " << n << ", eps = " << eps);
    check_against_explicit_lp(prior, eps, outputs, PoissonLogLoss<>{}, t % 4 == 0);
  }
}

TEST_CASE("optimal LP: a 52-label instance equals GLPK's explicit LP", "[optimal_lp][glpk]") {
  // Larger k exercises the degenerate master; the explicit LP has 52 + 52*51*12 rows.
  std::mt19937_64 rng(404);
  const auto prior = random_prior(rng, 52, false);
  const Eigen::VectorXd outputs = grid(prior.value(0), prior.value(51), 12);
  check_against_explicit_lp(prior, 1.0, outputs, SquaredLoss<>{});
}

TEST_CASE("optimal LP: the known example of the unbiased-randomizer paper", "[optimal_lp]") {
  // Prior {0: 0.6, 1: 0.25, 2: 0.15}, eps = 0.5, squared loss: RR-on-Bins with
  // Phi(0) ~ 0.396, Phi(1) = Phi(2) ~ 0.720 (shared/ALGORITHMS.md, Section 1). A grid that
  // contains those outputs must give the same optimum.
  const auto prior = FinitePrior<>::from_probabilities({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  const auto rr = labeldp::optimal_rr_on_bins(prior, 0.5);
  REQUIRE(rr.num_outputs() == 2);
  REQUIRE(rr.outputs()[0] == Approx(0.396).margin(1e-3));
  REQUIRE(rr.outputs()[1] == Approx(0.720).margin(1e-3));
  Eigen::VectorXd outputs(5);
  outputs << 0.0, rr.outputs()[0], 0.5, rr.outputs()[1], 2.0;
  const auto r = labeldp::optimal_mechanism_lp(prior, 0.5, outputs);
  check_mechanism(r, prior, 0.5, outputs, SquaredLoss<>{});
  REQUIRE(close_relative(r.expected_loss, rr.expected_loss(prior), 1e-9));
  REQUIRE(r.mechanism.num_outputs() == 2);
}

namespace {

// Theorem 5 of Ghazi et al. (2023): the optimum over all eps-DP mechanisms is an RR-on-Bins.
// Over a grid O containing the optimal RR-on-Bins outputs, the LP optimum therefore equals the
// RR-on-Bins optimum (<= because that RR-on-Bins is feasible in O, >= by the theorem); over any
// grid it is never below it.
template <typename Loss>
void check_theorem_5(std::mt19937_64& rng, bool nonnegative, const Loss& loss, int trials) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < trials; ++t) {
    const Index k = 2 + Index(u(rng) * 9);
    const auto prior = random_prior(rng, k, nonnegative);
    const double eps = std::exp(std::log(0.05) + u(rng) * (std::log(8.0) - std::log(0.05)));
    const auto rr = labeldp::optimal_rr_on_bins(prior, eps, loss);
    const double rr_loss = rr.expected_loss(prior, loss);
    const double lo = nonnegative ? std::max(0.05, prior.value(0)) : prior.value(0);
    const double hi = prior.value(k - 1);
    const Index n = 30 + Index(u(rng) * 50);
    const Eigen::VectorXd fine = grid(lo, hi, n);
    INFO("trial " << t << ": k = " << k << ", eps = " << eps << ", |O| = " << n << ", RR-on-Bins " << rr_loss);

    Eigen::VectorXd with(n + rr.num_outputs());
    with << fine, rr.outputs();
    const auto r_with = labeldp::optimal_mechanism_lp(prior, eps, with, loss);
    check_mechanism(r_with, prior, eps, with, loss);
    INFO("LP over the grid with the RR-on-Bins outputs " << r_with.expected_loss);
    REQUIRE(close_relative(r_with.expected_loss, rr_loss, 1e-9));

    // A grid shifted off the RR-on-Bins outputs (half a step, clipped to the label range).
    Eigen::VectorXd without = fine;
    const double step = n > 1 ? (hi - lo) / double(n - 1) : 1.0;
    for (Index i = 0; i < n; ++i) without[i] = std::min(hi, without[i] + 0.5 * step);
    bool hits = false;
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < rr.num_outputs(); ++j) hits = hits || without[i] == rr.outputs()[j];
    if (hits) continue;
    const auto r_without = labeldp::optimal_mechanism_lp(prior, eps, without, loss);
    check_mechanism(r_without, prior, eps, without, loss);
    INFO("LP over the shifted grid " << r_without.expected_loss);
    REQUIRE(r_without.expected_loss >= rr_loss * (1 - 1e-9) - 1e-12);
  }
}

}  // namespace

TEST_CASE("optimal LP: Theorem 5 by computation (squared loss)", "[optimal_lp][theorem5]") {
  std::mt19937_64 rng(55);
  check_theorem_5(rng, false, SquaredLoss<>{}, 40);
}

TEST_CASE("optimal LP: Theorem 5 by computation (absolute loss)", "[optimal_lp][theorem5]") {
  std::mt19937_64 rng(66);
  check_theorem_5(rng, false, AbsoluteLoss<>{}, 40);
}

TEST_CASE("optimal LP: Theorem 5 by computation (Poisson log loss)", "[optimal_lp][theorem5]") {
  std::mt19937_64 rng(77);
  check_theorem_5(rng, true, PoissonLogLoss<>{}, 40);
}

TEST_CASE("optimal LP: duplicate and unsorted outputs are accepted, unused outputs omitted", "[optimal_lp]") {
  const auto prior = FinitePrior<>::from_probabilities({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  Eigen::VectorXd outputs(7);
  outputs << 2.0, 0.4, 0.4, 100.0, 0.7, -50.0, 2.0;
  const auto r = labeldp::optimal_mechanism_lp(prior, 0.5, outputs);
  check_mechanism(r, prior, 0.5, outputs, SquaredLoss<>{});
  for (Index j = 0; j < r.mechanism.num_outputs(); ++j) {
    REQUIRE(r.mechanism.outputs()[j] != 100.0);  // dominated outputs get probability 0
    REQUIRE(r.mechanism.outputs()[j] != -50.0);
  }
}

TEST_CASE("optimal LP: a single output gives the constant mechanism", "[optimal_lp]") {
  const auto prior = FinitePrior<>::from_probabilities({0.0, 1.0}, {0.5, 0.5});
  const auto r = labeldp::optimal_mechanism_lp(prior, 1.0, Eigen::VectorXd(Eigen::VectorXd::Constant(1, 0.25)));
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(r.mechanism.num_outputs() == 1);
  REQUIRE(r.expected_loss == Approx(0.5 * 0.0625 + 0.5 * 0.5625).epsilon(1e-12));
}

// --- rejected inputs: one test per rejected value ---------------------------------------

namespace {
const FinitePrior<>& small_prior() {
  static const auto prior = FinitePrior<>::from_probabilities({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  return prior;
}
Eigen::VectorXd small_grid() { return Eigen::VectorXd::LinSpaced(5, 0.0, 2.0); }
}  // namespace

TEST_CASE("optimal LP rejects: eps = 0", "[optimal_lp][validation]") {
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), 0.0, small_grid()), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 0.0, small_grid()),
                      Catch::Contains("'eps' must be finite and positive, got 0"));
}

TEST_CASE("optimal LP rejects: negative eps", "[optimal_lp][validation]") {
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), -1.0, small_grid()), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), -1.0, small_grid()),
                      Catch::Contains("'eps' must be finite and positive, got -1"));
}

TEST_CASE("optimal LP rejects: NaN eps", "[optimal_lp][validation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), nan, small_grid()), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), nan, small_grid()),
                      Catch::Contains("'eps' must be finite and positive, got nan"));
}

TEST_CASE("optimal LP rejects: infinite eps", "[optimal_lp][validation]") {
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), inf, small_grid()), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), inf, small_grid()),
                      Catch::Contains("'eps' must be finite and positive, got inf"));
}

TEST_CASE("optimal LP rejects: empty output set", "[optimal_lp][validation]") {
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), 1.0, Eigen::VectorXd(0)), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 1.0, Eigen::VectorXd(0)),
                      Catch::Contains("'outputs' must not be empty, got 0 values"));
}

TEST_CASE("optimal LP rejects: NaN output", "[optimal_lp][validation]") {
  Eigen::VectorXd o = small_grid();
  o[2] = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), 1.0, o), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 1.0, o), Catch::Contains("'outputs' must be finite, got nan"));
}

TEST_CASE("optimal LP rejects: infinite output", "[optimal_lp][validation]") {
  Eigen::VectorXd o = small_grid();
  o[0] = -std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), 1.0, o), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 1.0, o), Catch::Contains("'outputs' must be finite, got -inf"));
}

TEST_CASE("optimal LP rejects: Poisson loss with a negative label", "[optimal_lp][validation]") {
  const auto prior = FinitePrior<>::from_probabilities({-1.0, 1.0}, {0.5, 0.5});
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(prior, 1.0, small_grid(), PoissonLogLoss<>{}), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(prior, 1.0, small_grid(), PoissonLogLoss<>{}),
                      Catch::Contains("Poisson log loss needs labels >= 0, got -1"));
}

TEST_CASE("optimal LP rejects: Poisson loss at output 0 (infinite loss)", "[optimal_lp][validation]") {
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_grid(), PoissonLogLoss<>{}), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_grid(), PoissonLogLoss<>{}),
                      Catch::Contains("loss poisson is not finite at output 0 for label 1"));
}

TEST_CASE("optimal LP rejects: smoothing out of range", "[optimal_lp][validation]") {
  labeldp::OptimalLPOptions opt;
  opt.smoothing = 1.0;
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_grid(), SquaredLoss<>{}, opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_grid(), SquaredLoss<>{}, opt),
                      Catch::Contains("'smoothing' must be finite and in [0, 0.98999999999999999], got 1"));
}

TEST_CASE("optimal LP rejects: non-positive gap tolerance", "[optimal_lp][validation]") {
  labeldp::OptimalLPOptions opt;
  opt.gap_tolerance = 0;
  REQUIRE_THROWS_AS(labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_grid(), SquaredLoss<>{}, opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_grid(), SquaredLoss<>{}, opt),
                      Catch::Contains("'gap_tolerance' must be finite and positive, got 0"));
}

TEST_CASE("optimal LP: round limit is reported as a status", "[optimal_lp]") {
  std::mt19937_64 rng(808);
  const auto prior = random_prior(rng, 30, false);
  const Eigen::VectorXd outputs = grid(prior.value(0), prior.value(29), 200);
  const auto unlimited = labeldp::optimal_mechanism_lp(prior, 1.0, outputs);
  REQUIRE(unlimited.status == SolveStatus::Optimal);
  REQUIRE(unlimited.rounds > 0);  // the certificate needed pricing rounds ...
  labeldp::OptimalLPOptions opt;
  opt.column_generation.max_rounds = 0;
  const auto r = labeldp::optimal_mechanism_lp(prior, 1.0, outputs, SquaredLoss<>{}, opt);
  REQUIRE(r.status == SolveStatus::IterationLimit);  // ... so without them there is none
  REQUIRE(r.rounds == 0);
}
