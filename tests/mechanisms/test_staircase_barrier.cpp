// The staircase interior-point method (mechanisms/detail/staircase_barrier.hpp) and the grid
// solver that uses it (optimal_unbiased_on_outputs). Oracles: GLPK on the explicit compact LP
// (the same LP written out variable by variable), weak duality (the certified bound never
// exceeds GLPK's optimum) and exact pricing (status Optimal only when no column prices out).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <labeldp/core/audit.hpp>
#include <labeldp/mechanisms/detail/staircase_barrier.hpp>
#include <labeldp/mechanisms/unbiased.hpp>
#include <random>
#include <string>
#include <vector>

#include "../../bench/bench_priors.hpp"  // the benchmarks' instances
#include "mechanisms/test_unbiased_oracle.hpp"
#include "oracles/prior_shapes.hpp"

using labeldp::FinitePrior;
using labeldp::Index;
using labeldp::UnbiasedOptions;
using labeldp::Vector;
using labeldp::detail::StaircaseRows;
using labeldp::optim::SolveStatus;

namespace {

using labeldp::test::Shape;
using labeldp::test::shape_name;

// A random prior of the given shape on k labels with random integer gaps.
FinitePrior<> random_prior(std::mt19937_64& rng, Shape shape, int k) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v, w;
  double y = std::floor(20 * u(rng)) - 10;
  for (int i = 0; i < k; ++i) {
    v.push_back(y);
    y += 1 + std::floor(3 * u(rng));
    double weight = 0;
    switch (shape) {
      case Shape::NearUniform:
        weight = 0.5 + u(rng);
        break;
      case Shape::Spiky:
        weight = u(rng) < 0.2 ? 20 + 20 * u(rng) : 0.2 + u(rng);
        break;
      case Shape::HeavyTailed:
        weight = std::exp(-std::pow(std::log(1.0 + i) - 1, 2)) / (1.0 + i);
        break;
      case Shape::WithZeros:
        weight = (i % 3 == 1) ? 0.0 : 0.1 + u(rng);
        break;
    }
    w.push_back(weight);
  }
  return FinitePrior<>::from_weights(v, w);
}

// The staircase LP of a prior on a grid in the units of optimal_unbiased_on_outputs()
// (scaled labels and outputs, squared loss divided by the loss across the dbRR interval).
struct Case {
  labeldp::detail::UnbiasedProblem P;
  labeldp::detail::StaircaseBarrierProblem Q;
  Eigen::MatrixXd loss;  // k x n, unweighted
};

Case make_case(const FinitePrior<>& prior, double eps, Index n, StaircaseRows rows, double max_bias) {
  Case c;
  c.P = labeldp::detail::make_unbiased_problem(prior, eps, max_bias);
  const Vector<> grid = labeldp::feasible_output_set(prior, eps, n);
  const Index k = prior.size();
  c.Q.outputs.resize(n);
  for (Index j = 0; j < n; ++j) c.Q.outputs[j] = (grid[j] - c.P.shift) / c.P.scale;
  c.loss.resize(k, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < k; ++i) c.loss(i, j) = std::pow(c.Q.outputs[j] - c.P.labels[i], 2) / 4;
  c.Q.cost = c.P.probs.asDiagonal() * c.loss;
  c.Q.targets = c.P.labels;
  c.Q.rows = rows;
  c.Q.max_bias = c.P.max_bias;
  c.Q.low = c.P.low;
  return c;
}

// GLPK on the explicit compact LP of the case (M[y][i] = lo_i + s[y][i], 0 <= s <= (e^eps - 1)
// lo_i), with the normalization rows only for StaircaseRows::Normalization.
labeldp::test::GlpkResult glpk_optimum(const Case& c, double eps) {
  if (c.Q.rows != StaircaseRows::Normalization) {
    return labeldp::test::solve_with_glpk(labeldp::test::unbiased_lp(
        c.P.labels, c.P.probs, eps, c.Q.outputs, c.loss, c.P.max_bias, labeldp::test::UnbiasedLpForm::Compact));
  }
  const Index k = c.Q.num_labels(), n = c.Q.num_outputs();
  labeldp::test::SparseLinearProgram lp;
  std::vector<Eigen::Triplet<double>> t;
  lp.b = Eigen::VectorXd::Zero(k + k * n);
  lp.c = Eigen::VectorXd::Zero(n + k * n);
  lp.row_types.assign(std::size_t(k + k * n), labeldp::optim::RowType::LessEqual);
  for (Index y = 0; y < k; ++y) {
    lp.b[y] = 1;
    lp.row_types[std::size_t(y)] = labeldp::optim::RowType::Equal;
    for (Index i = 0; i < n; ++i) {
      t.emplace_back(y, i, 1.0);
      t.emplace_back(y, n + y * n + i, 1.0);
      lp.c[i] += c.Q.cost(y, i);
      lp.c[n + y * n + i] = c.Q.cost(y, i);
      t.emplace_back(k + i * k + y, n + y * n + i, 1.0);
      t.emplace_back(k + i * k + y, i, -std::expm1(eps));
    }
  }
  lp.A.resize(k + k * n, n + k * n);
  lp.A.setFromTriplets(t.begin(), t.end());
  return labeldp::test::solve_with_glpk(lp);
}

const double kEps[] = {0.05, 0.5, 1, 2, 4, 8, 12};
const Shape kShapes[] = {Shape::NearUniform, Shape::Spiky, Shape::HeavyTailed, Shape::WithZeros};

}  // namespace

TEST_CASE("staircase barrier: optimum and certified bound match GLPK on every row family", "[staircase_barrier]") {
  std::mt19937_64 rng(20231);
  int cases = 0;
  for (Shape shape : kShapes)
    for (double eps : kEps)
      for (StaircaseRows rows : {StaircaseRows::Normalization, StaircaseRows::Unbiased, StaircaseRows::BiasBounded}) {
        const int k = 3 + int(rng() % 6);
        const Index n = 5 + Index(rng() % 10);
        const FinitePrior<> prior = random_prior(rng, shape, k);
        const double range = prior.value(k - 1) - prior.value(0);
        const double B = rows == StaircaseRows::BiasBounded ? 0.05 * range : 0.0;
        const Case c = make_case(prior, eps, n, rows, B);
        INFO(shape_name(shape) << " k=" << k << " n=" << n << " eps=" << eps << " rows=" << int(rows));
        const labeldp::test::GlpkResult g = glpk_optimum(c, eps);
        REQUIRE(g.status == SolveStatus::Optimal);
        const auto r = labeldp::detail::solve_staircase_barrier(c.Q);
        REQUIRE(r.status == labeldp::optim::SolveStatus::Optimal);
        CHECK(labeldp::test::close_relative(r.primal_objective, g.objective, 1e-7));
        // The bound is a certificate: never above the optimum, and tight at convergence.
        const double bound = labeldp::detail::staircase_lagrangian_bound(c.Q, r.duals);
        CHECK(bound == Approx(r.dual_objective).epsilon(1e-9));  // same bound, other units
        // GLPK's objective carries roundoff of about 1e-16 of the largest cost per unit of mass
        // (k rows of mass 1): at eps 12 with zero-probability labels the optimum is 5e-6 and
        // the tight bound of the dual-feasible start was 3e-17 (6e-12 relative) above GLPK's.
        const double glpk_roundoff = 1e-15 * double(k) * c.Q.cost.cwiseAbs().maxCoeff();
        CHECK(bound <= g.objective + 1e-12 * std::abs(g.objective) + glpk_roundoff);
        CHECK(bound >= g.objective - 1e-7 * std::abs(g.objective));
        // The interior mechanism is feasible to the tolerance: rows sum to 1, every column in
        // its cone (to roundoff of the largest column).
        for (Index y = 0; y < k; ++y) CHECK(std::abs(r.mechanism.row(y).sum() - 1) <= 1e-8);
        const double roundoff = 1e-13 * r.top.maxCoeff();
        for (Index o = 0; o < n; ++o)
          for (Index y = 0; y < k; ++y) {
            CHECK(r.mechanism(y, o) >= c.Q.low * r.top[o] - roundoff);
            CHECK(r.mechanism(y, o) <= r.top[o] + roundoff);
          }
        ++cases;
      }
  CHECK(cases == 84);
}

TEST_CASE("staircase barrier: crossover columns give the exact optimum, certified by pricing", "[staircase_barrier]") {
  // The interior point's candidate columns (plus Proposition 7's) in the staircase master with
  // exact grid pricing: status Optimal means no column of the grid prices out.
  std::mt19937_64 rng(77);
  for (Shape shape : kShapes)
    for (double eps : kEps) {
      const int k = 4 + int(rng() % 5);
      const Index n = 6 + Index(rng() % 10);
      const FinitePrior<> prior = random_prior(rng, shape, k);
      const Case c = make_case(prior, eps, n, StaircaseRows::Unbiased, 0);
      INFO(shape_name(shape) << " k=" << k << " n=" << n << " eps=" << eps);
      const auto r = labeldp::detail::solve_staircase_barrier(c.Q);
      REQUIRE(r.status == labeldp::optim::SolveStatus::Optimal);
      std::vector<labeldp::detail::StaircaseColumn> cols =
          labeldp::detail::staircase_barrier_columns(r, c.Q.outputs, c.Q.low);
      CHECK(!cols.empty());
      for (auto& col : labeldp::detail::one_sided_columns(k, c.Q.outputs[0], 0)) cols.push_back(col);
      for (auto& col : labeldp::detail::one_sided_columns(k, c.Q.outputs[n - 1], n - 1)) cols.push_back(col);
      auto loss_of = [&](const labeldp::detail::StaircaseColumn& col) -> Eigen::VectorXd {
        return c.loss.col(col.grid_index);
      };
      auto price = [&](const Eigen::VectorXd& duals, double tol, double& min_rc) {
        return labeldp::detail::price_grid(c.P, c.Q.cost, c.Q.outputs, duals, tol, 2 * k + 2, min_rc);
      };
      labeldp::detail::StaircaseMaster S =
          labeldp::detail::solve_staircase_master(c.P, cols, loss_of, price, UnbiasedOptions{});
      REQUIRE(S.status == SolveStatus::Optimal);
      double objective = 0;
      Eigen::VectorXd a(c.P.num_rows());
      for (std::size_t j = 0; j < S.columns.size(); ++j)
        objective += S.x[Index(j)] *
                     labeldp::detail::staircase_coefficients(c.P, S.columns[j], c.loss.col(S.columns[j].grid_index), a);
      const labeldp::test::GlpkResult g = glpk_optimum(c, eps);
      REQUIRE(g.status == SolveStatus::Optimal);
      CHECK(labeldp::test::close_relative(objective, g.objective, 1e-9));
      CHECK(labeldp::detail::staircase_lagrangian_bound(c.Q, r.duals) <= g.objective + 1e-12 * std::abs(g.objective));
    }
}

TEST_CASE("optimal_unbiased_on_outputs matches GLPK and reports a certified bound", "[staircase_barrier]") {
  std::mt19937_64 rng(5);
  for (Shape shape : kShapes)
    for (double eps : kEps)
      for (double bias_fraction : {0.0, 0.05}) {
        const int k = 4 + int(rng() % 6);
        const Index n = 6 + Index(rng() % 12);
        const FinitePrior<> prior = random_prior(rng, shape, k);
        const double B = bias_fraction * (prior.value(k - 1) - prior.value(0));
        INFO(shape_name(shape) << " k=" << k << " n=" << n << " eps=" << eps << " B=" << B);
        UnbiasedOptions options;
        options.max_bias = B;
        const Vector<> grid = labeldp::feasible_output_set(prior, eps, n);
        const auto r = labeldp::optimal_unbiased_on_outputs(prior, eps, grid, options);
        REQUIRE(r.status == SolveStatus::Optimal);
        Eigen::MatrixXd loss(k, n);
        for (Index j = 0; j < n; ++j)
          for (Index i = 0; i < k; ++i) loss(i, j) = std::pow(grid[j] - prior.value(i), 2);
        const labeldp::test::GlpkResult g = labeldp::test::solve_with_glpk(labeldp::test::unbiased_lp(
            prior.values(), prior.probabilities(), eps, grid, loss, B, labeldp::test::UnbiasedLpForm::Compact));
        REQUIRE(g.status == SolveStatus::Optimal);
        CHECK(labeldp::test::close_relative(r.expected_loss, g.objective, 1e-9));
        // (GLPK's own optimum is exact only to its tolerances, ~1e-9 relative.)
        CHECK(r.lower_bound <= g.objective * (1 + 1e-9));
        CHECK(r.lower_bound >= r.expected_loss * (1 - 1e-7));
        CHECK(labeldp::audit_epsilon(r.mechanism) <= eps * (1 + 1e-12));
      }
}

TEST_CASE("optimal_unbiased_on_outputs: tailing-off instances take the barrier path and stay exact",
          "[staircase_barrier]") {
  // Near-uniform priors at eps >= 2 are where column generation alone tails off; the solver
  // switches to the barrier and crossover (interior_point_iterations > 0). GLPK on the explicit
  // compact LP is the oracle (k = 60, n = 20: 1,320 rows).
  std::mt19937_64 rng(11);
  for (double eps : {2.0, 4.0}) {
    const FinitePrior<> prior = random_prior(rng, Shape::NearUniform, 60);
    const Index n = 20;
    INFO("eps=" << eps);
    const Vector<> grid = labeldp::feasible_output_set(prior, eps, n);
    const auto r = labeldp::optimal_unbiased_on_outputs(prior, eps, grid);
    REQUIRE(r.status == SolveStatus::Optimal);
    CHECK(r.interior_point_iterations > 0);
    Eigen::MatrixXd loss(60, n);
    for (Index j = 0; j < n; ++j)
      for (Index i = 0; i < 60; ++i) loss(i, j) = std::pow(grid[j] - prior.value(i), 2);
    const labeldp::test::GlpkResult g = labeldp::test::solve_with_glpk(labeldp::test::unbiased_lp(
        prior.values(), prior.probabilities(), eps, grid, loss, 0.0, labeldp::test::UnbiasedLpForm::Compact));
    REQUIRE(g.status == SolveStatus::Optimal);
    CHECK(labeldp::test::close_relative(r.expected_loss, g.objective, 1e-9));
    CHECK(r.lower_bound <= g.objective * (1 + 1e-12));
    CHECK(r.lower_bound >= r.expected_loss * (1 - 1e-7));
  }
}

TEST_CASE("staircase barrier: correctors only after short steps reach the same certified optimum",
          "[staircase_barrier]") {
  // The weeks-like k = 52 prior on its 52-point grid at eps 4 (bench_solvers' weeks52/n52):
  // with corrector_below = kStaircaseUnbiasedCorrectorBelow (optimal_unbiased_on_outputs())
  // the barrier computes fewer directions (two an iteration plus the correctors: 85 -> 70 when
  // written) in no more iterations, to the same GLPK optimum and a certified bound.
  const double eps = 4;
  const Case c = make_case(labeldp::bench::weeks_prior(), eps, 52, StaircaseRows::Unbiased, 0.0);
  const labeldp::test::GlpkResult g = glpk_optimum(c, eps);
  REQUIRE(g.status == SolveStatus::Optimal);
  labeldp::detail::StaircaseBarrierOptions o;
  o.tolerance = 2e-10;
  const auto all = labeldp::detail::solve_staircase_barrier(c.Q, o);
  o.corrector_below = labeldp::detail::kStaircaseUnbiasedCorrectorBelow;
  const auto few = labeldp::detail::solve_staircase_barrier(c.Q, o);
  for (const auto* r : {&all, &few}) {
    REQUIRE(r->status == SolveStatus::Optimal);
    const double bound = labeldp::detail::staircase_lagrangian_bound(c.Q, r->duals);
    CHECK(bound <= g.objective + 1e-12 * std::abs(g.objective));
    CHECK(labeldp::test::close_relative(r->primal_objective, g.objective, 1e-8));
    CHECK(r->primal_objective - bound <= 1e-9 * std::abs(r->primal_objective));
  }
  INFO("correctors " << all.correctors << " -> " << few.correctors << ", iterations " << all.iterations << " -> "
                     << few.iterations);
  CHECK(all.correctors > 0);
  CHECK(2 * few.iterations + few.correctors < 2 * all.iterations + all.correctors);
  CHECK(few.iterations <= all.iterations);
  o.corrector_below = 0;
  CHECK_THROWS_AS(labeldp::detail::solve_staircase_barrier(c.Q, o), std::invalid_argument);
}

TEST_CASE("staircase barrier: a time limit of 0 ends with TimeLimit and a valid bound", "[staircase_barrier]") {
  std::mt19937_64 rng(5);
  const FinitePrior<> prior = random_prior(rng, Shape::NearUniform, 8);
  const Case c = make_case(prior, 2.0, 12, StaircaseRows::Unbiased, 0.0);
  const labeldp::test::GlpkResult g = glpk_optimum(c, 2.0);
  REQUIRE(g.status == SolveStatus::Optimal);
  labeldp::detail::StaircaseBarrierOptions o;
  o.time_limit = 0;
  const auto r = labeldp::detail::solve_staircase_barrier(c.Q, o);
  CHECK(r.status == labeldp::optim::SolveStatus::TimeLimit);
  CHECK(r.iterations == 0);
  REQUIRE(r.duals.allFinite());
  // Whatever the iterate, its duals' Lagrangian bound is a valid lower bound.
  CHECK(labeldp::detail::staircase_lagrangian_bound(c.Q, r.duals) <= g.objective + 1e-12 * std::abs(g.objective));
  // Without the limit the same problem converges.
  CHECK(labeldp::detail::solve_staircase_barrier(c.Q).status == labeldp::optim::SolveStatus::Optimal);
}

TEST_CASE("optimal_unbiased_on_outputs: the near-uniform k = 214 prior with zero-probability labels, grid 51",
          "[staircase_barrier]") {
  // The benchmark's uniform214z instance (bench/bench_solvers.cpp): at eps 3 a full Newton step
  // near the optimum used to leave the rows violated by 1e-7, the barrier stalled uncertified,
  // and the crossover ran for minutes. Certified optimum against GLPK at several eps.
  const FinitePrior<> prior = labeldp::bench::uniform_prior(214, true);
  {
    // At eps 12 (low below kStaircaseDualStartLow) the multipliers of u <= (1 - low) T start
    // dual feasible with the unbiasedness rows too: 16 interior-point iterations where the
    // constant floor start took 30 (iterations counted, not timed). GLPK fails on this LP
    // (coefficients e^-12), so the oracle is the certificate: the Lagrangian bound of exact
    // pricing over every staircase column of the grid, within 1e-9 of the loss.
    const double eps = 12;
    const Vector<> grid = labeldp::feasible_output_set(prior, eps, 51);
    const auto r = labeldp::optimal_unbiased_on_outputs(prior, eps, grid);
    REQUIRE(r.status == SolveStatus::Optimal);
    CHECK(r.lower_bound <= r.expected_loss);
    CHECK(r.expected_loss <= r.lower_bound * (1 + 1e-9));
    CHECK(r.interior_point_iterations > 0);
    CHECK(r.interior_point_iterations <= 20);
    CHECK(labeldp::audit_epsilon(r.mechanism) <= eps * (1 + 1e-12));
    for (Index i = 0; i < 214; ++i) CHECK(std::abs(r.mechanism.conditional_mean(i) - prior.value(i)) <= 1e-9 * 346);
  }
  for (double eps : {2.0, 3.0, 8.0}) {
    INFO("eps=" << eps);
    const Vector<> grid = labeldp::feasible_output_set(prior, eps, 51);
    const auto r = labeldp::optimal_unbiased_on_outputs(prior, eps, grid);
    REQUIRE(r.status == SolveStatus::Optimal);
    CHECK(r.gap <= 1e-9);
    Eigen::MatrixXd loss(214, 51);
    for (Index j = 0; j < 51; ++j)
      for (Index i = 0; i < 214; ++i) loss(i, j) = std::pow(grid[j] - prior.value(i), 2);
    const labeldp::test::GlpkResult g = labeldp::test::solve_with_glpk(labeldp::test::unbiased_lp(
        prior.values(), prior.probabilities(), eps, grid, loss, 0.0, labeldp::test::UnbiasedLpForm::Compact));
    REQUIRE(g.status == SolveStatus::Optimal);
    CHECK(labeldp::test::close_relative(r.expected_loss, g.objective, 1e-9));
    CHECK(r.lower_bound <= g.objective * (1 + 1e-12));
    CHECK(labeldp::audit_epsilon(r.mechanism) <= eps);
    for (Index i = 0; i < 214; ++i) CHECK(std::abs(r.mechanism.conditional_mean(i) - prior.value(i)) <= 1e-9 * 346);
  }
}
