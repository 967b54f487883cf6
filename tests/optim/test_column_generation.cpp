// Tests of labeldp::optim::solve_by_column_generation(): column generation reaches the optimum
// of the full LP solved at once (by RevisedSimplex and by GLPK), re-optimizes warm, and its
// final duals certify optimality (no column of the full LP has a negative reduced cost).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "labeldp/optim/column_generation.hpp"
#include "oracles/glpk_oracle.hpp"

using labeldp::optim::ColumnGenerationOptions;
using labeldp::optim::Index;
using labeldp::optim::LinearProgram;
using labeldp::optim::PricedColumns;
using labeldp::optim::RevisedSimplex;
using labeldp::optim::RowType;
using labeldp::optim::SolveStatus;

using labeldp::test::close_relative;

namespace {

// A full LP with many columns: covering (>=) or mixed equality rows, A >= 0, c > 0.
LinearProgram random_full_lp(std::mt19937_64& rng, Index m, Index n, bool equalities) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  LinearProgram lp;
  lp.A.resize(m, n);
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < n; ++j) lp.A(i, j) = u(rng) < 0.4 ? 0.0 : 5 * u(rng);
  lp.b = Eigen::VectorXd::NullaryExpr(m, [&]() { return 1 + 4 * u(rng); });
  lp.row_types.assign(std::size_t(m), RowType::GreaterEqual);
  if (equalities)
    for (Index i = 0; i < m; i += 2) lp.row_types[std::size_t(i)] = RowType::Equal;
  lp.c = Eigen::VectorXd::NullaryExpr(n, [&]() { return 0.5 + u(rng); });
  return lp;
}

// The restricted master: an expensive identity block (always feasible for these rows) and
// the first `start` columns of the full LP.
LinearProgram initial_master(const LinearProgram& full, Index start) {
  const Index m = full.A.rows();
  LinearProgram lp;
  lp.A.resize(m, m + start);
  lp.A << Eigen::MatrixXd::Identity(m, m), full.A.leftCols(start);
  lp.c.resize(m + start);
  lp.c << Eigen::VectorXd::Constant(m, 1e4), full.c.head(start);
  lp.b = full.b;
  lp.row_types = full.row_types;
  return lp;
}

// Prices every column of the full LP not yet in the master; returns the `per_round` most
// negative reduced costs.
struct FullPricing {
  const LinearProgram* full;
  std::vector<char> in_master;
  Index per_round;
  Index calls = 0;
  PricedColumns operator()(const Eigen::VectorXd& duals) {
    ++calls;
    const Eigen::VectorXd rc = full->c - full->A.transpose() * duals;
    std::vector<Index> candidates;
    for (Index j = 0; j < full->A.cols(); ++j)
      if (!in_master[std::size_t(j)] && rc[j] < -1e-7) candidates.push_back(j);
    std::sort(candidates.begin(), candidates.end(), [&](Index a, Index b) { return rc[a] < rc[b]; });
    if (Index(candidates.size()) > per_round) candidates.resize(std::size_t(per_round));
    PricedColumns cols;
    cols.A.resize(full->A.rows(), Index(candidates.size()));
    cols.c.resize(Index(candidates.size()));
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      cols.A.col(Index(i)) = full->A.col(candidates[i]);
      cols.c[Index(i)] = full->c[candidates[i]];
      in_master[std::size_t(candidates[i])] = 1;
    }
    return cols;
  }
};

}  // namespace

TEST_CASE("column generation: equals the full LP solved at once (RevisedSimplex and GLPK)", "[column_generation]") {
  std::mt19937_64 rng(42);
  for (int t = 0; t < 40; ++t) {
    const Index m = 5 + t % 20, n = 100 + 37 * (t % 9);
    const bool equalities = t % 2 == 1;
    const LinearProgram full = random_full_lp(rng, m, n, equalities);
    const Index start = 3;
    RevisedSimplex master(initial_master(full, start));
    FullPricing pricing{&full, std::vector<char>(std::size_t(n), 0), 1 + t % 7};
    for (Index j = 0; j < start; ++j) pricing.in_master[std::size_t(j)] = 1;
    const auto cg = labeldp::optim::solve_by_column_generation(master, pricing);

    RevisedSimplex at_once(full);
    const auto reference = at_once.solve();
    const auto glpk = labeldp::test::solve_with_glpk(full);
    INFO("trial " << t << ": " << m << " x " << n << ", rounds " << cg.rounds << ", columns " << cg.columns);
    REQUIRE(reference.status == glpk.status);
    REQUIRE(cg.master.status == reference.status);
    if (reference.status != SolveStatus::Optimal) continue;
    REQUIRE(close_relative(cg.master.objective, reference.objective, 1e-9));
    REQUIRE(close_relative(cg.master.objective, glpk.objective, 1e-9));
    REQUIRE(cg.rounds == pricing.calls);
    REQUIRE(cg.rounds >= 2);  // the start is never optimal here: pricing had to add columns
    // Certificate: the final duals leave no column of the full LP with a negative reduced cost.
    const Eigen::VectorXd rc = full.c - full.A.transpose() * cg.master.duals;
    REQUIRE(rc.minCoeff() >= -1e-7);
    // Warm: the last master solve continued from the previous basis.
    REQUIRE(cg.master.warm_started);
  }
}

TEST_CASE("column generation: re-optimization is warm (far fewer pivots than from scratch)", "[column_generation]") {
  std::mt19937_64 rng(9);
  const LinearProgram full = random_full_lp(rng, 30, 600, false);
  RevisedSimplex master(initial_master(full, 5));
  FullPricing pricing{&full, std::vector<char>(600, 0), 1};
  for (Index j = 0; j < 5; ++j) pricing.in_master[std::size_t(j)] = 1;
  // One column per round: every round after the first is a warm solve of one or a few pivots.
  auto r = master.solve();
  REQUIRE(r.status == SolveStatus::Optimal);
  Index warm_solves = 0, warm_pivots = 0;
  for (int round = 0; round < 30; ++round) {
    PricedColumns cols = pricing(r.duals);
    if (cols.A.cols() == 0) break;
    master.add_columns(cols.A, cols.c);
    r = master.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.warm_started);
    ++warm_solves;
    warm_pivots += r.iterations;
  }
  REQUIRE(warm_solves > 5);
  // A from-scratch solve of the same master needs at least the phase-1 pivots for 30 rows.
  master.reset();
  const auto cold = master.solve();
  REQUIRE_FALSE(cold.warm_started);
  REQUIRE(close_relative(cold.objective, r.objective, 1e-9));
  INFO("average warm pivots " << double(warm_pivots) / double(warm_solves) << ", cold pivots " << cold.iterations);
  REQUIRE(double(warm_pivots) / double(warm_solves) < double(cold.iterations));
}

TEST_CASE("column generation: pricing with nothing to add stops after one round", "[column_generation]") {
  std::mt19937_64 rng(1);
  const LinearProgram full = random_full_lp(rng, 6, 20, false);
  RevisedSimplex master(full);
  const auto r = labeldp::optim::solve_by_column_generation(
      master, [](const Eigen::VectorXd& duals) { return PricedColumns{Eigen::MatrixXd(duals.size(), 0), Eigen::VectorXd(0)}; });
  REQUIRE(r.master.status == SolveStatus::Optimal);
  REQUIRE(r.rounds == 1);
  REQUIRE(r.columns == 0);
}

TEST_CASE("column generation: columns that do not price out stop the loop", "[column_generation]") {
  std::mt19937_64 rng(2);
  const LinearProgram full = random_full_lp(rng, 6, 20, false);
  RevisedSimplex master(full);
  // Returns an existing column again (reduced cost >= 0 at the optimum): not an improvement.
  const auto r = labeldp::optim::solve_by_column_generation(master, [&](const Eigen::VectorXd&) {
    return PricedColumns{full.A.leftCols(1), full.c.head(1)};
  });
  REQUIRE(r.master.status == SolveStatus::Optimal);
  REQUIRE(r.columns == 0);
}

TEST_CASE("column generation: round limit gives IterationLimit", "[column_generation]") {
  std::mt19937_64 rng(3);
  const LinearProgram full = random_full_lp(rng, 20, 400, false);
  RevisedSimplex master(initial_master(full, 2));
  FullPricing pricing{&full, std::vector<char>(400, 0), 1};
  pricing.in_master[0] = pricing.in_master[1] = 1;
  ColumnGenerationOptions opt;
  opt.max_rounds = 2;
  const auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
  REQUIRE(r.master.status == SolveStatus::IterationLimit);
  REQUIRE(r.rounds == 2);
}

TEST_CASE("column generation: an infeasible master is reported, not thrown", "[column_generation]") {
  LinearProgram lp;  // x <= -1 with x >= 0
  lp.A = Eigen::MatrixXd{{1.0}};
  lp.b = Eigen::VectorXd::Constant(1, -1.0);
  lp.row_types = {RowType::LessEqual};
  lp.c = Eigen::VectorXd::Ones(1);
  RevisedSimplex master(lp);
  const auto r = labeldp::optim::solve_by_column_generation(
      master, [](const Eigen::VectorXd& duals) { return PricedColumns{Eigen::MatrixXd(duals.size(), 0), Eigen::VectorXd(0)}; });
  REQUIRE(r.master.status == SolveStatus::Infeasible);
  REQUIRE(r.rounds == 0);
}

TEST_CASE("column generation rejects: pricing block with the wrong number of rows", "[column_generation][validation]") {
  std::mt19937_64 rng(4);
  RevisedSimplex master(random_full_lp(rng, 4, 10, false));
  auto bad = [](const Eigen::VectorXd&) { return PricedColumns{Eigen::MatrixXd::Ones(3, 1), Eigen::VectorXd::Zero(1)}; };
  REQUIRE_THROWS_AS(labeldp::optim::solve_by_column_generation(master, bad), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, bad),
                      Catch::Contains("pricing returned columns with 3 rows, the master has 4"));
}

TEST_CASE("column generation rejects: negative round limit", "[column_generation][validation]") {
  std::mt19937_64 rng(5);
  RevisedSimplex master(random_full_lp(rng, 4, 10, false));
  ColumnGenerationOptions opt;
  opt.max_rounds = -1;
  auto none = [](const Eigen::VectorXd& d) { return PricedColumns{Eigen::MatrixXd(d.size(), 0), Eigen::VectorXd(0)}; };
  REQUIRE_THROWS_AS(labeldp::optim::solve_by_column_generation(master, none, opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, none, opt),
                      Catch::Contains("'max_rounds' must be >= 0, got -1"));
}
