// Tests of labeldp::optim::RevisedSimplex against GLPK (an independent solver) and against
// the optimality conditions of linear programming, on random, degenerate, cycling and
// Klee-Minty problems.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "labeldp/optim/simplex.hpp"
#include "oracles/glpk_oracle.hpp"

using labeldp::optim::Index;
using labeldp::optim::LinearProgram;
using labeldp::optim::RevisedSimplex;
using labeldp::optim::RowType;
using labeldp::optim::SimplexOptions;
using labeldp::optim::SimplexResult;
using labeldp::optim::SolveStatus;

using labeldp::test::close_relative;

namespace {

// Checks the optimality conditions of an Optimal result: primal feasibility, dual feasibility
// (reduced costs >= 0, row duals of the right sign), complementary slackness, strong duality,
// and that the reported reduced costs are c - A'y.
void check_optimality_conditions(const LinearProgram& lp, const SimplexResult& r, double tol) {
  const Index m = lp.A.rows(), n = lp.A.cols();
  REQUIRE(r.x.size() == n);
  REQUIRE(r.duals.size() == m);
  REQUIRE(r.reduced_costs.size() == n);
  const double scale =
      std::max({1.0, lp.A.size() ? lp.A.cwiseAbs().maxCoeff() : 0.0, lp.b.size() ? lp.b.cwiseAbs().maxCoeff() : 0.0,
                lp.c.size() ? lp.c.cwiseAbs().maxCoeff() : 0.0});
  const double xscale = std::max(1.0, n ? r.x.cwiseAbs().maxCoeff() : 0.0);
  const double yscale = std::max(1.0, m ? r.duals.cwiseAbs().maxCoeff() : 0.0);
  const double ptol = tol * scale * xscale;
  const double dtol = tol * scale * yscale;
  const Eigen::VectorXd Ax = lp.A * r.x;
  for (Index j = 0; j < n; ++j) {
    INFO("column " << j);
    REQUIRE(r.x[j] >= 0);
    REQUIRE(r.reduced_costs[j] >= -dtol);
    REQUIRE(std::abs(r.x[j] * r.reduced_costs[j]) <= dtol * xscale);
  }
  const Eigen::VectorXd d = lp.c - lp.A.transpose() * r.duals;
  REQUIRE((d - r.reduced_costs).cwiseAbs().maxCoeff() <= dtol);
  for (Index i = 0; i < m; ++i) {
    INFO("row " << i);
    const double slack = Ax[i] - lp.b[i];
    switch (lp.row_types[std::size_t(i)]) {
      case RowType::Equal:
        REQUIRE(std::abs(slack) <= ptol);
        break;
      case RowType::LessEqual:
        REQUIRE(slack <= ptol);
        REQUIRE(r.duals[i] <= dtol);
        break;
      case RowType::GreaterEqual:
        REQUIRE(slack >= -ptol);
        REQUIRE(r.duals[i] >= -dtol);
        break;
    }
    REQUIRE(std::abs(r.duals[i] * slack) <= dtol * xscale * scale);
  }
  REQUIRE(close_relative(r.objective, lp.c.dot(r.x), 1e-12));
  // Strong duality: b'y = c'x.
  REQUIRE(close_relative(lp.b.dot(r.duals), r.objective, 1e-8 * scale));
}

LinearProgram make_lp(Eigen::MatrixXd A, Eigen::VectorXd b, std::vector<RowType> types, Eigen::VectorXd c) {
  LinearProgram lp;
  lp.A = std::move(A);
  lp.b = std::move(b);
  lp.row_types = std::move(types);
  lp.c = std::move(c);
  return lp;
}

// Random LP families of varied shape and sign pattern.
LinearProgram random_lp(std::mt19937_64& rng, int family) {
  std::uniform_int_distribution<int> dim_m(1, 25), dim_n(1, 35);
  std::uniform_real_distribution<double> u(-1.0, 1.0), pos(0.0, 1.0);
  std::uniform_int_distribution<int> small_int(-3, 3), coin(0, 3);
  const Index m = dim_m(rng), n = dim_n(rng);
  LinearProgram lp;
  lp.A.resize(m, n);
  lp.b.resize(m);
  lp.c.resize(n);
  lp.row_types.resize(std::size_t(m));
  auto random_type = [&]() {
    const int t = coin(rng) % 3;
    return t == 0 ? RowType::Equal : t == 1 ? RowType::LessEqual : RowType::GreaterEqual;
  };
  switch (family) {
    case 0: {  // packing: A >= 0 (sparse-ish), <= rows, b > 0, any costs -> bounded unless a column is all zero
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) lp.A(i, j) = coin(rng) == 0 ? 0.0 : pos(rng);
      for (Index i = 0; i < m; ++i) {
        lp.b[i] = 0.1 + pos(rng);
        lp.row_types[std::size_t(i)] = RowType::LessEqual;
      }
      for (Index j = 0; j < n; ++j) lp.c[j] = u(rng);
      break;
    }
    case 1: {  // everything random: any status
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) lp.A(i, j) = u(rng);
      for (Index i = 0; i < m; ++i) {
        lp.b[i] = u(rng);
        lp.row_types[std::size_t(i)] = random_type();
      }
      for (Index j = 0; j < n; ++j) lp.c[j] = u(rng);
      break;
    }
    case 2: {  // feasible by construction (b = A x0, x0 >= 0 with zeros: degenerate), mixed rows
      Eigen::VectorXd x0(n);
      for (Index j = 0; j < n; ++j) x0[j] = coin(rng) < 2 ? 0.0 : pos(rng);
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) lp.A(i, j) = u(rng);
      lp.b = lp.A * x0;
      for (Index i = 0; i < m; ++i) lp.row_types[std::size_t(i)] = random_type();
      for (Index j = 0; j < n; ++j) lp.c[j] = coin(rng) == 0 ? u(rng) : pos(rng);
      break;
    }
    case 3: {  // small integers, many zero right-hand sides: heavily degenerate
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) lp.A(i, j) = small_int(rng);
      for (Index i = 0; i < m; ++i) {
        lp.b[i] = coin(rng) == 0 ? small_int(rng) : 0;
        lp.row_types[std::size_t(i)] = random_type();
      }
      for (Index j = 0; j < n; ++j) lp.c[j] = small_int(rng);
      break;
    }
    default: {  // covering: A >= 0, >= rows, positive costs -> feasible and bounded (or infeasible on a zero row)
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) lp.A(i, j) = coin(rng) == 0 ? 0.0 : 10 * pos(rng);
      for (Index i = 0; i < m; ++i) {
        lp.b[i] = 1 + 5 * pos(rng);
        lp.row_types[std::size_t(i)] = coin(rng) == 0 ? RowType::Equal : RowType::GreaterEqual;
      }
      for (Index j = 0; j < n; ++j) lp.c[j] = 0.5 + pos(rng);
      break;
    }
  }
  return lp;
}

LinearProgram klee_minty(int n) {
  // min -sum 2^(n-1-j) x_j s.t. sum_{j<i} 2^(i-j+1) x_j + x_i <= 5^(i+1): Dantzig's rule visits
  // all 2^n vertices; optimum -5^n at x = (0, ..., 0, 5^n).
  LinearProgram lp;
  lp.A = Eigen::MatrixXd::Zero(n, n);
  lp.b.resize(n);
  lp.c.resize(n);
  lp.row_types.assign(std::size_t(n), RowType::LessEqual);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) lp.A(i, j) = std::ldexp(1.0, i - j + 1);
    lp.A(i, i) = 1;
    lp.b[i] = std::pow(5.0, i + 1);
    lp.c[i] = -std::ldexp(1.0, n - 1 - i);
  }
  return lp;
}

}  // namespace

TEST_CASE("simplex: agrees with GLPK on 1,500 random LPs of varied shape and sign pattern", "[simplex][glpk]") {
  std::mt19937_64 rng(20260422);
  std::map<SolveStatus, int> counts;
  int solved = 0;
  for (int t = 0; t < 1500; ++t) {
    const int family = t % 5;
    const LinearProgram lp = random_lp(rng, family);
    INFO("LP #" << t << " (family " << family << ", " << lp.A.rows() << " x " << lp.A.cols() << ")");
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    const auto g = labeldp::test::solve_with_glpk(lp);
    REQUIRE(g.status != SolveStatus::NumericalIssue);
    INFO("ours: " << to_string(r.status) << " " << r.objective << ", GLPK: " << to_string(g.status) << " "
                  << g.objective);
    REQUIRE(r.status == g.status);
    ++counts[r.status];
    if (r.status == SolveStatus::Optimal) {
      REQUIRE(close_relative(r.objective, g.objective, 1e-9));
      check_optimality_conditions(lp, r, 1e-9);
      ++solved;
    }
  }
  INFO("optimal " << counts[SolveStatus::Optimal] << ", infeasible " << counts[SolveStatus::Infeasible]
                  << ", unbounded " << counts[SolveStatus::Unbounded]);
  // The families must actually exercise every outcome.
  REQUIRE(counts[SolveStatus::Optimal] >= 500);
  REQUIRE(counts[SolveStatus::Infeasible] >= 100);
  REQUIRE(counts[SolveStatus::Unbounded] >= 100);
}

TEST_CASE("simplex: larger random LPs (refactorization, many basis updates) agree with GLPK", "[simplex][glpk]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> pos(0.0, 1.0), u(-1.0, 1.0);
  for (const auto& [m, n] : std::vector<std::pair<Index, Index>>{{60, 200}, {150, 120}, {200, 600}}) {
    for (int variant = 0; variant < 2; ++variant) {
      LinearProgram lp;
      lp.A.resize(m, n);
      for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) lp.A(i, j) = variant == 0 ? pos(rng) : u(rng);
      Eigen::VectorXd x0 = Eigen::VectorXd::NullaryExpr(n, [&]() { return pos(rng) < 0.5 ? 0.0 : pos(rng); });
      lp.b = lp.A * x0;
      lp.row_types.resize(std::size_t(m));
      for (Index i = 0; i < m; ++i)
        lp.row_types[std::size_t(i)] = i % 3 == 0   ? RowType::Equal
                                       : i % 3 == 1 ? RowType::LessEqual
                                                    : RowType::GreaterEqual;
      lp.c = Eigen::VectorXd::NullaryExpr(n, [&]() { return pos(rng); });
      INFO(m << " x " << n << " variant " << variant);
      SimplexOptions opt;
      opt.refactorization_interval = 20;
      RevisedSimplex simplex(lp, opt);
      const SimplexResult r = simplex.solve();
      const auto g = labeldp::test::solve_with_glpk(lp);
      REQUIRE(r.status == g.status);
      REQUIRE(r.status == SolveStatus::Optimal);
      REQUIRE(close_relative(r.objective, g.objective, 1e-9));
      check_optimality_conditions(lp, r, 1e-9);
    }
  }
}

TEST_CASE("simplex: classic cycling examples terminate at the optimum", "[simplex][degenerate]") {
  SECTION("Beale (1955): cycles under Dantzig's rule with lowest-index ties") {
    // min -3/4 x4 + 20 x5 - 1/2 x6 + 6 x7 (x1..x3 are the slacks); optimum -5/4 at x4 = x6 = 1.
    const LinearProgram lp =
        make_lp(Eigen::MatrixXd{{0.25, -8, -1, 9}, {0.5, -12, -0.5, 3}, {0, 0, 1, 0}}, Eigen::Vector3d(0, 0, 1),
                {RowType::LessEqual, RowType::LessEqual, RowType::LessEqual}, Eigen::Vector4d(-0.75, 20, -0.5, 6));
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.objective == Approx(-1.25).epsilon(1e-12));
    REQUIRE(r.iterations < 50);
    check_optimality_conditions(lp, r, 1e-9);
    REQUIRE(labeldp::test::solve_with_glpk(lp).objective == Approx(r.objective).epsilon(1e-12));
  }
  SECTION("Chvatal (Linear Programming, 1983, ch. 3): cycles under the largest-coefficient rule") {
    // max 10x1 - 57x2 - 9x3 - 24x4, optimum 1 at x1 = 1, x3 = 1.
    const LinearProgram lp =
        make_lp(Eigen::MatrixXd{{0.5, -5.5, -2.5, 9}, {0.5, -1.5, -0.5, 1}, {1, 0, 0, 0}}, Eigen::Vector3d(0, 0, 1),
                {RowType::LessEqual, RowType::LessEqual, RowType::LessEqual}, -Eigen::Vector4d(10, -57, -9, -24));
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.objective == Approx(-1).epsilon(1e-12));
    REQUIRE(r.iterations < 50);
    check_optimality_conditions(lp, r, 1e-9);
  }
  SECTION("Kuhn's example (in Balinski-Tucker 1969): cycles under Dantzig's rule") {
    const LinearProgram lp =
        make_lp(Eigen::MatrixXd{{-2, -9, 1, 9}, {1.0 / 3, 1, -1.0 / 3, -2}, {2, 3, -1, -12}}, Eigen::Vector3d(0, 0, 2),
                {RowType::LessEqual, RowType::LessEqual, RowType::LessEqual}, Eigen::Vector4d(-2, -3, 1, 12));
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    const auto g = labeldp::test::solve_with_glpk(lp);
    REQUIRE(r.status == g.status);
    REQUIRE(r.iterations < 50);
    if (r.status == SolveStatus::Optimal) {
      REQUIRE(close_relative(r.objective, g.objective, 1e-9));
      check_optimality_conditions(lp, r, 1e-9);
    }
  }
  SECTION("Hall-McKinnon (2004) 2 x 4 cycling example, bounded by x1 + x2 <= 1") {
    // max 2.3x1 + 2.15x2 - 13.55x3 - 0.4x4 on the degenerate cone at the origin; the bound
    // row makes the optimum finite so both solvers must report the same value.
    const LinearProgram lp = make_lp(
        Eigen::MatrixXd{{0.4, 0.2, -1.4, -0.2}, {-7.8, -1.4, 7.8, 0.4}, {1, 1, 0, 0}}, Eigen::Vector3d(0, 0, 1),
        {RowType::LessEqual, RowType::LessEqual, RowType::LessEqual}, -Eigen::Vector4d(2.3, 2.15, -13.55, -0.4));
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    const auto g = labeldp::test::solve_with_glpk(lp);
    REQUIRE(r.status == g.status);
    REQUIRE(r.iterations < 50);
    if (r.status == SolveStatus::Optimal) {
      REQUIRE(close_relative(r.objective, g.objective, 1e-9));
      check_optimality_conditions(lp, r, 1e-9);
    }
  }
}

TEST_CASE("simplex: highly degenerate assignment LPs agree with GLPK", "[simplex][degenerate]") {
  // Assignment polytopes are maximally degenerate (n-1 of the 2n-1 basic variables are zero).
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> cost(0, 3);  // many ties on purpose
  for (int n : {3, 5, 8, 12}) {
    LinearProgram lp;
    lp.A = Eigen::MatrixXd::Zero(2 * n, n * n);
    lp.b = Eigen::VectorXd::Ones(2 * n);
    lp.row_types.assign(std::size_t(2 * n), RowType::Equal);
    lp.c.resize(n * n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        lp.A(i, i * n + j) = 1;
        lp.A(n + j, i * n + j) = 1;
        lp.c[i * n + j] = cost(rng);
      }
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    const auto g = labeldp::test::solve_with_glpk(lp);
    INFO("n = " << n);
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(close_relative(r.objective, g.objective, 1e-9));
    check_optimality_conditions(lp, r, 1e-9);
  }
}

TEST_CASE("simplex: Klee-Minty cubes", "[simplex][klee_minty]") {
  for (int n : {3, 6, 10, 14}) {
    const LinearProgram lp = klee_minty(n);
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    INFO("n = " << n << ", iterations " << r.iterations);  // scaled pricing avoids the 2^n path
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.objective == Approx(-std::pow(5.0, n)).epsilon(1e-12));
    REQUIRE(r.x[n - 1] == Approx(std::pow(5.0, n)).epsilon(1e-12));
    check_optimality_conditions(lp, r, 1e-9);
    REQUIRE(close_relative(labeldp::test::solve_with_glpk(lp).objective, r.objective, 1e-9));
  }
}

TEST_CASE("simplex: without reduced costs the solve is the same and the field is empty", "[simplex]") {
  // SimplexOptions::compute_reduced_costs = false only skips the final c - A^T y product.
  std::mt19937_64 rng(8);
  for (int t = 0; t < 20; ++t) {
    const LinearProgram lp = random_lp(rng, t % 4);
    RevisedSimplex with(lp);
    SimplexOptions opt;
    opt.compute_reduced_costs = false;
    RevisedSimplex without(lp, opt);
    const SimplexResult a = with.solve(), b = without.solve();
    INFO("lp " << t);
    REQUIRE(a.status == b.status);
    REQUIRE(a.iterations == b.iterations);
    REQUIRE(a.x == b.x);
    REQUIRE(a.duals == b.duals);
    REQUIRE(a.reduced_costs.size() == lp.A.cols());
    REQUIRE(b.reduced_costs.size() == 0);
  }
}

TEST_CASE("simplex: iteration limit is reported as a status", "[simplex]") {
  std::mt19937_64 rng(5);
  LinearProgram lp;
  do lp = random_lp(rng, 0);  // packing LPs with negative costs need several pivots
  while (lp.A.cols() < 20 || lp.A.rows() < 10);
  RevisedSimplex unlimited(lp);
  const SimplexResult full = unlimited.solve();
  REQUIRE(full.status == SolveStatus::Optimal);
  REQUIRE(full.iterations > 2);
  SimplexOptions opt;
  opt.max_iterations = 2;
  RevisedSimplex simplex(lp, opt);
  const SimplexResult r = simplex.solve();
  REQUIRE(r.status == SolveStatus::IterationLimit);
  REQUIRE(r.iterations == 2);
}

TEST_CASE("simplex: a zero time limit stops before the first pivot, and a warm re-solve finishes", "[simplex][glpk]") {
  // A zero limit is deterministic: the clock is read before the first pivot of each phase, and
  // any elapsed time reaches a limit of 0. A packing LP (<= rows, b > 0) starts phase 2 at once
  // from the slack basis, so the stop happens in phase 2 at x = 0 (feasible) and the basis is
  // kept; a covering LP (>= rows) needs phase-1 pivots, so it stops in phase 1 and the next
  // solve starts afresh. Either way lifting the limit reaches GLPK's optimum.
  std::mt19937_64 rng(5);
  int phase2_stops = 0, phase1_stops = 0;
  for (int t = 0; t < 60; ++t) {
    const int family = t % 2 == 0 ? 0 : 4;
    const LinearProgram lp = random_lp(rng, family);
    const auto g = labeldp::test::solve_with_glpk(lp);
    if (g.status != SolveStatus::Optimal) continue;
    INFO("LP #" << t << " (family " << family << ", " << lp.A.rows() << " x " << lp.A.cols() << ")");
    SimplexOptions opt;
    opt.time_limit = 0;
    RevisedSimplex simplex(lp, opt);
    const SimplexResult stopped = simplex.solve();
    REQUIRE(stopped.iterations == 0);
    if (stopped.status == SolveStatus::Optimal) {
      // Only when the starting basis is already optimal (no pivot needed).
      REQUIRE(close_relative(stopped.objective, g.objective, 1e-9));
      continue;
    }
    REQUIRE(stopped.status == SolveStatus::TimeLimit);
    REQUIRE(stopped.x.size() == lp.A.cols());
    REQUIRE(stopped.duals.size() == lp.A.rows());
    // The duals are those of the reported basis: c - A'y is what the result reports.
    REQUIRE((stopped.reduced_costs - (lp.c - lp.A.transpose() * stopped.duals)).cwiseAbs().maxCoeff() <= 1e-12);
    const bool in_phase2 = family == 0;
    if (in_phase2) {
      // The slack basis: x = 0, primal feasible, duals 0.
      REQUIRE(stopped.x.cwiseAbs().maxCoeff() == 0);
      REQUIRE(stopped.duals.cwiseAbs().maxCoeff() == 0);
      ++phase2_stops;
    } else {
      ++phase1_stops;
    }
    simplex.set_time_limit(std::numeric_limits<double>::infinity());
    const SimplexResult r = simplex.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.warm_started == in_phase2);
    REQUIRE(close_relative(r.objective, g.objective, 1e-9));
    check_optimality_conditions(lp, r, 1e-9);
    // A time limit reached again on a warm start keeps the (now optimal) basis: no pivot is
    // needed, so the limit does not bite.
    simplex.set_time_limit(0);
    const SimplexResult again = simplex.solve();
    REQUIRE(again.status == SolveStatus::Optimal);
    REQUIRE(again.warm_started);
    REQUIRE(again.iterations == 0);
    REQUIRE(close_relative(again.objective, g.objective, 1e-9));
  }
  REQUIRE(phase2_stops >= 10);
  REQUIRE(phase1_stops >= 10);
}

TEST_CASE("simplex: a warm start after a time limit in phase 2 continues from the kept basis", "[simplex][glpk]") {
  // Column generation's use: solve, add columns, re-solve with no time left (stops at the old
  // optimum, still feasible for the larger LP), then again with time: the same optimum as GLPK
  // on the full LP, warm both times.
  std::mt19937_64 rng(11);
  int checked = 0;
  for (int t = 0; t < 40; ++t) {
    const LinearProgram full = random_lp(rng, 0);
    const Index n = full.A.cols();
    if (n < 4) continue;
    const Index half = n / 2;
    LinearProgram first = full;
    first.A = full.A.leftCols(half);
    first.c = full.c.head(half);
    const auto g = labeldp::test::solve_with_glpk(full);
    if (g.status != SolveStatus::Optimal) continue;  // a zero column with a negative cost
    RevisedSimplex simplex(first);
    REQUIRE(simplex.solve().status == SolveStatus::Optimal);
    simplex.add_columns(full.A.rightCols(n - half), full.c.tail(n - half));
    simplex.set_time_limit(0);
    const SimplexResult stopped = simplex.solve();
    REQUIRE(stopped.warm_started);
    if (stopped.status == SolveStatus::Optimal) continue;  // the old basis was optimal already
    REQUIRE(stopped.status == SolveStatus::TimeLimit);
    REQUIRE(stopped.iterations == 0);
    // Primal feasible: packing rows A x <= b, x >= 0.
    REQUIRE(stopped.x.minCoeff() >= 0);
    REQUIRE(((full.A * stopped.x) - full.b).maxCoeff() <= 1e-9);
    REQUIRE(stopped.objective >= g.objective - 1e-9 * std::max(1.0, std::abs(g.objective)));
    simplex.set_time_limit(std::numeric_limits<double>::infinity());
    const SimplexResult r = simplex.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.warm_started);
    REQUIRE(close_relative(r.objective, g.objective, 1e-9));
    check_optimality_conditions(full, r, 1e-9);
    ++checked;
  }
  REQUIRE(checked >= 10);
}

TEST_CASE("simplex: the basis factorization detects a singular basis", "[simplex]") {
  // RevisedSimplex maps a failed refactorization to SolveStatus::NumericalIssue; the detection
  // itself is the factorization's pivot-ratio check.
  labeldp::optim::detail::BasisFactorization f;
  REQUIRE(f.refactor(Eigen::Matrix2d{{1, 2}, {3, 4}}, 1e-13));
  REQUIRE_FALSE(f.refactor(Eigen::Matrix2d{{1, 2}, {2, 4}}, 1e-13));
  REQUIRE_FALSE(f.refactor(Eigen::Matrix2d{{1, 1}, {1, 1 + 1e-15}}, 1e-13));
  // FTRAN / BTRAN through a basis update equal dense solves with the updated basis.
  Eigen::Matrix3d B{{2, 1, 0}, {1, 3, 1}, {0, 1, 4}};
  REQUIRE(f.refactor(B, 1e-13));
  const Eigen::Vector3d a(1, -2, 5);
  Eigen::VectorXd w = a;
  f.ftran(w);
  f.update(1, w);
  B.col(1) = a;
  Eigen::VectorXd v = Eigen::Vector3d(0.5, 1, -1);
  Eigen::VectorXd x = v;
  f.ftran(x);
  REQUIRE((B * x - v).norm() < 1e-12);
  Eigen::VectorXd y = v;
  f.btran(y);
  REQUIRE((B.transpose() * y - v).norm() < 1e-12);
}

TEST_CASE("simplex: a diagonal basis is inverted in O(m^2), to the LU's inverse exactly", "[simplex]") {
  // Every cold solve starts from the all-logical basis (signed unit columns): the fast path
  // must give what the O(m^3) LU and its inverse give. Oracle: Eigen's PartialPivLU inverse,
  // compared entry by entry (==), on a signed-unit and a general diagonal, and the singular and
  // non-diagonal cases left to the LU.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.1, 10.0);
  for (const bool unit : {true, false}) {
    const Index m = 300;
    Eigen::MatrixXd B = Eigen::MatrixXd::Zero(m, m);
    for (Index i = 0; i < m; ++i) B(i, i) = (rng() % 2 ? -1.0 : 1.0) * (unit ? 1.0 : u(rng));
    Eigen::MatrixXd fast;
    REQUIRE(labeldp::optim::detail::BasisFactorization::refactor_diagonal(B, 1e-13, fast));
    const Eigen::MatrixXd lu = Eigen::PartialPivLU<Eigen::MatrixXd>(B).inverse();
    CHECK((fast.array() == lu.array()).all());
    labeldp::optim::detail::BasisFactorization f;
    REQUIRE(f.refactor(B, 1e-13));
    Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(m, -1, 1), expected = lu * x;
    f.ftran(x);
    CHECK((x.array() == expected.array()).all());
  }
  Eigen::MatrixXd unused;
  CHECK_FALSE(labeldp::optim::detail::BasisFactorization::refactor_diagonal(Eigen::Matrix2d{{1, 0}, {1e-300, 1}}, 1e-13,
                                                                            unused));
  CHECK_FALSE(
      labeldp::optim::detail::BasisFactorization::refactor_diagonal(Eigen::Matrix2d{{1, 0}, {0, 0}}, 1e-13, unused));
  labeldp::optim::detail::BasisFactorization f;
  CHECK_FALSE(f.refactor(Eigen::Matrix2d{{1, 0}, {0, 1e-15}}, 1e-13));
}

TEST_CASE("simplex: 200 rank-one updates of the explicit inverse track dense solves", "[simplex]") {
  // Oracle: a fresh dense LU of the current basis after every update; the explicit inverse is
  // never refactorized here, so its drift is what is measured.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<Index> pick(0, 29);
  const Index m = 30;
  Eigen::MatrixXd B =
      Eigen::MatrixXd::NullaryExpr(m, m, [&]() { return u(rng); }) + 4 * Eigen::MatrixXd::Identity(m, m);
  labeldp::optim::detail::BasisFactorization f;
  REQUIRE(f.refactor(B, 1e-13));
  int updates = 0;
  for (int t = 0; t < 200; ++t) {
    const Eigen::VectorXd a = Eigen::VectorXd::NullaryExpr(m, [&]() { return u(rng); });
    Eigen::VectorXd w = a;
    f.ftran(w);
    // Pivot on the largest |w_r| among a few random rows, as a ratio test with a pivot
    // tolerance would: tiny pivots are refused there, so they are refused here.
    Index r = pick(rng);
    for (int tries = 0; tries < 5; ++tries) {
      const Index c = pick(rng);
      if (std::abs(w[c]) > std::abs(w[r])) r = c;
    }
    if (std::abs(w[r]) < 0.1) continue;
    f.update(r, w);
    ++updates;
    B.col(r) = a;
    const Eigen::VectorXd v = Eigen::VectorXd::NullaryExpr(m, [&]() { return u(rng); });
    Eigen::VectorXd x = v, y = v;
    f.ftran(x);
    f.btran(y);
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(B);
    const Eigen::PartialPivLU<Eigen::MatrixXd> lut(B.transpose());
    INFO("update " << updates);
    REQUIRE((x - lu.solve(v)).cwiseAbs().maxCoeff() < 1e-8);
    REQUIRE((y - lut.solve(v)).cwiseAbs().maxCoeff() < 1e-8);
    const Eigen::VectorXd rho = lut.solve(Eigen::VectorXd::Unit(m, r));
    REQUIRE((f.inverse_row(r).transpose() - rho).cwiseAbs().maxCoeff() < 1e-8);
  }
  REQUIRE(f.num_updates() == updates);
  REQUIRE(updates > 100);
}

TEST_CASE("simplex: a deferred update is seen by BTRAN, inverse rows and a second update", "[simplex]") {
  // update() defers the rank-one change to the next FTRAN; everything read before that FTRAN
  // (BTRAN, a row of the inverse) and a second update() on top of a pending one must see the
  // updated basis. Oracle: dense solves with the current basis, in every order of calls.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Index m = 12;
  Eigen::MatrixXd B =
      Eigen::MatrixXd::NullaryExpr(m, m, [&]() { return u(rng); }) + 4 * Eigen::MatrixXd::Identity(m, m);
  labeldp::optim::detail::BasisFactorization f;
  REQUIRE(f.refactor(B, 1e-13));
  for (int t = 0; t < 30; ++t) {
    const Index r = t % m;
    const Eigen::VectorXd a =
        Eigen::VectorXd::NullaryExpr(m, [&]() { return u(rng); }) + 3 * Eigen::VectorXd::Unit(m, r);
    Eigen::VectorXd w = a;
    if (t % 3 == 2) {
      // FTRAN by the dense oracle, so that two updates follow each other with no FTRAN between.
      w = B.partialPivLu().solve(a);
    } else {
      f.ftran(w);
    }
    f.update(r, w);
    B.col(r) = a;
    const Eigen::MatrixXd inverse = B.inverse();
    const Eigen::VectorXd v = Eigen::VectorXd::NullaryExpr(m, [&]() { return u(rng); });
    INFO("update " << t);
    if (t % 2 == 0) {
      Eigen::VectorXd y = v;
      f.btran(y);
      REQUIRE((y - inverse.transpose() * v).cwiseAbs().maxCoeff() < 1e-10);
      REQUIRE((f.inverse_row((r + 1) % m) - inverse.row((r + 1) % m)).cwiseAbs().maxCoeff() < 1e-10);
    }
    if (t % 3 == 1) {
      Eigen::VectorXd x = v;
      f.ftran(x);
      REQUIRE((x - inverse * v).cwiseAbs().maxCoeff() < 1e-10);
    }
  }
}

namespace {

// An equality-form LP with a known primal feasible basis: A random (m x n), the columns in
// `basis` get weights x_B drawn from [0.1, 1] (or with one negative entry when `feasible` is
// false) and b = B x_B. Costs are random, so the LP may be bounded or unbounded.
LinearProgram lp_with_basis(std::mt19937_64& rng, Index m, Index n, bool feasible, std::vector<Index>& basis) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), pos(0.1, 1.0);
  LinearProgram lp;
  lp.A = Eigen::MatrixXd::NullaryExpr(m, n, [&]() { return u(rng); });
  std::vector<Index> all(static_cast<std::size_t>(n));
  for (Index j = 0; j < n; ++j) all[std::size_t(j)] = j;
  std::shuffle(all.begin(), all.end(), rng);
  basis.assign(all.begin(), all.begin() + m);
  Eigen::VectorXd xb = Eigen::VectorXd::NullaryExpr(m, [&]() { return pos(rng); });
  if (!feasible) xb[m / 2] = -0.5;
  lp.b = Eigen::VectorXd::Zero(m);
  for (Index i = 0; i < m; ++i) lp.b += xb[i] * lp.A.col(basis[std::size_t(i)]);
  lp.row_types.assign(std::size_t(m), RowType::Equal);
  lp.c = Eigen::VectorXd::NullaryExpr(n, [&]() { return 0.2 + pos(rng); });
  return lp;
}

}  // namespace

TEST_CASE("simplex: a feasible starting basis skips phase 1 and reaches GLPK's optimum", "[simplex][glpk]") {
  std::mt19937_64 rng(2026);
  int warm = 0;
  for (int t = 0; t < 200; ++t) {
    std::uniform_int_distribution<Index> dim_m(1, 20);
    const Index m = dim_m(rng);
    const Index n = m + std::uniform_int_distribution<Index>(0, 30)(rng);
    std::vector<Index> basis;
    const LinearProgram lp = lp_with_basis(rng, m, n, true, basis);
    INFO("LP #" << t << " (" << m << " x " << n << ")");
    RevisedSimplex simplex(lp);
    REQUIRE(simplex.set_basis(basis));
    const SimplexResult r = simplex.solve();
    // Phase 2 straight from the given basis (no phase 1).
    REQUIRE(r.warm_started);
    ++warm;
    const auto g = labeldp::test::solve_with_glpk(lp);
    REQUIRE(r.status == g.status);
    if (r.status == SolveStatus::Optimal) {
      REQUIRE(close_relative(r.objective, g.objective, 1e-9));
      check_optimality_conditions(lp, r, 1e-9);
    }
  }
  REQUIRE(warm == 200);
}

TEST_CASE("simplex: a starting basis with its inverse; a wrong inverse is detected and ignored", "[simplex][glpk]") {
  std::mt19937_64 rng(808);
  for (int t = 0; t < 100; ++t) {
    const Index m = 2 + t % 15, n = m + 12;
    std::vector<Index> basis;
    const LinearProgram lp = lp_with_basis(rng, m, n, true, basis);
    Eigen::MatrixXd B(m, m);
    for (Index i = 0; i < m; ++i) B.col(i) = lp.A.col(basis[std::size_t(i)]);
    const Eigen::MatrixXd inverse = B.inverse();
    const auto g = labeldp::test::solve_with_glpk(lp);
    INFO("LP #" << t << " (" << m << " x " << n << ")");
    // Correct inverse, a perturbed one, a transposed one, the wrong size, NaN: every one gives
    // the same warm phase-2 solve and GLPK's answer (the bad ones by factorizing instead).
    Eigen::MatrixXd perturbed = inverse;
    perturbed(m / 2, 0) += 1e-3;
    Eigen::MatrixXd with_nan = inverse;
    with_nan(0, 0) = std::numeric_limits<double>::quiet_NaN();
    for (const Eigen::MatrixXd& candidate : {inverse, perturbed, Eigen::MatrixXd(inverse.transpose()),
                                             Eigen::MatrixXd(Eigen::MatrixXd::Identity(m + 1, m + 1)), with_nan}) {
      RevisedSimplex simplex(lp);
      REQUIRE(simplex.set_basis(basis, candidate));
      const SimplexResult r = simplex.solve();
      REQUIRE(r.warm_started);
      REQUIRE(r.status == g.status);
      if (r.status == SolveStatus::Optimal) {
        REQUIRE(close_relative(r.objective, g.objective, 1e-9));
        check_optimality_conditions(lp, r, 1e-9);
      }
    }
  }
}

TEST_CASE("simplex: an already optimal starting basis needs no pivot", "[simplex]") {
  std::mt19937_64 rng(31);
  std::vector<Index> basis;
  LinearProgram lp = lp_with_basis(rng, 12, 30, true, basis);
  // Make the basis optimal: zero cost on it, positive elsewhere.
  for (Index j : basis) lp.c[j] = 0;
  RevisedSimplex simplex(lp);
  REQUIRE(simplex.set_basis(basis));
  const SimplexResult r = simplex.solve();
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(r.iterations == 0);
  REQUIRE(r.objective == Approx(0).margin(1e-12));
  RevisedSimplex cold(lp);
  const SimplexResult c = cold.solve();
  REQUIRE(c.iterations >= 12);  // phase 1 from the artificial basis: one pivot per row at least
}

TEST_CASE("simplex: a row skipped by the ratio test for its tiny pivot is repaired before Optimal", "[simplex][glpk]") {
  // max x s.t. 1e-3 x <= 1 and a x <= 0, a below the pivot tolerance (1e-9): the Harris ratio
  // test lets the second row pass, the step to x = 1000 leaves its slack at -1000 a, far beyond
  // the feasibility tolerance, and that basis was reported Optimal (x clamped, the row violated).
  // The optimum is x = 0. Dual simplex pivots repair the basis; GLPK (presolved) is the oracle.
  for (const double a : {5e-10, 2e-10, 9e-10}) {
    LinearProgram lp;
    lp.A.resize(2, 1);
    lp.A << 1e-3, a;
    lp.b = Eigen::Vector2d(1, 0);
    lp.c = Eigen::VectorXd::Constant(1, -1);
    lp.row_types = {RowType::LessEqual, RowType::LessEqual};
    RevisedSimplex simplex(lp);
    const SimplexResult r = simplex.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    CHECK(r.feasibility_repairs >= 1);
    // GLPK's own simplex loops on these tiny entries; its presolver decides the LP exactly.
    labeldp::test::GlpkOptions glpk;
    glpk.presolve = true;
    glpk.time_limit_seconds = 10;
    const auto g = labeldp::test::solve_with_glpk(lp, glpk);
    REQUIRE(g.status == SolveStatus::Optimal);
    CHECK(r.objective == Approx(g.objective).margin(1e-9));
    CHECK((lp.A * r.x - lp.b).maxCoeff() <= 1e-9);
  }
}

TEST_CASE("simplex: an infeasible starting basis is refused; a singular one is repaired or refused",
          "[simplex][glpk]") {
  std::mt19937_64 rng(77);
  for (int t = 0; t < 50; ++t) {
    const Index m = 3 + t % 10, n = m + 10;
    std::vector<Index> basis;
    LinearProgram lp = lp_with_basis(rng, m, n, false, basis);
    INFO("LP #" << t);
    RevisedSimplex simplex(lp);
    // The basis's weights solve B x = b uniquely, and one is -0.5: refused.
    REQUIRE_FALSE(simplex.set_basis(basis));
    SimplexResult r = simplex.solve();
    REQUIRE_FALSE(r.warm_started);
    REQUIRE(r.basis_repairs == 0);
    auto g = labeldp::test::solve_with_glpk(lp);
    REQUIRE(r.status == g.status);
    if (r.status == SolveStatus::Optimal) REQUIRE(close_relative(r.objective, g.objective, 1e-9));

    // A singular basis: two copies of one column. The rank-revealing LU finds one copy
    // dependent, and it is replaced by the artificial of the row no other column covers (every
    // row is an equality). With b in the span of the other m - 1 columns (positive weights) the
    // artificial is 0 in the repaired basis: feasible, accepted, phase 2 from it. With a b
    // outside that span the artificial is not 0: refused, and the solve starts cold.
    for (const bool in_span : {true, false}) {
      INFO("b in the span of the independent columns: " << in_span);
      LinearProgram twin = lp;
      twin.A.col(basis[1]) = twin.A.col(basis[0]);
      if (in_span) {
        twin.b.setZero();
        for (Index i = 0; i < m; ++i)
          if (i != 1)
            twin.b += std::uniform_real_distribution<double>(0.1, 1.0)(rng) * twin.A.col(basis[std::size_t(i)]);
      }
      RevisedSimplex singular(twin);
      REQUIRE(singular.set_basis(basis) == in_span);
      r = singular.solve();
      REQUIRE(r.warm_started == in_span);
      REQUIRE(r.basis_repairs == (in_span ? 1 : 0));
      g = labeldp::test::solve_with_glpk(twin);
      REQUIRE(r.status == g.status);
      if (r.status == SolveStatus::Optimal) {
        REQUIRE(close_relative(r.objective, g.objective, 1e-9));
        check_optimality_conditions(twin, r, 1e-9);
      }
    }
  }
}

TEST_CASE("simplex: a refused basis after an optimal solve does not leave a stale warm start", "[simplex]") {
  std::mt19937_64 rng(5);
  std::vector<Index> good, bad;
  const LinearProgram lp = lp_with_basis(rng, 6, 15, true, good);
  RevisedSimplex simplex(lp);
  REQUIRE(simplex.solve().status == SolveStatus::Optimal);
  // Columns 0..5 of this LP are unlikely to form a feasible basis; whether or not they do,
  // the next solve must start from them (accepted) or from scratch (refused), never from the
  // previous optimum.
  for (Index j = 0; j < 6; ++j) bad.push_back(j);
  const bool accepted = simplex.set_basis(bad);
  const SimplexResult r = simplex.solve();
  REQUIRE(r.warm_started == accepted);
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(close_relative(r.objective, labeldp::test::solve_with_glpk(lp).objective, 1e-9));
}

namespace {
// A structured product that is exact on the first `exact` columns and "hides" the others
// (reports a value making their reduced cost +1e6): the simplex must still end at the true
// optimum, because an "optimal" from the product is confirmed with the dense one.
RevisedSimplex::TransposeProduct hiding_product(const RevisedSimplex& s, Index exact) {
  return [&s, exact](const Eigen::VectorXd& y, Eigen::VectorXd& out) {
    const LinearProgram& lp = s.problem();
    for (Index j = 0; j < lp.A.cols(); ++j) out[j] = j < exact ? lp.A.col(j).dot(y) : lp.c[j] - 1e6;
  };
}
}  // namespace

namespace {
// The simplex's outcome is GLPK's: same status and, when optimal, the same objective and the
// optimality conditions. Returns whether it was optimal.
template <typename GlpkResult>
bool require_glpk_outcome(const LinearProgram& lp, const SimplexResult& r, const GlpkResult& g) {
  REQUIRE(r.status == g.status);
  if (r.status != SolveStatus::Optimal) return false;
  REQUIRE(close_relative(r.objective, g.objective, 1e-9));
  check_optimality_conditions(lp, r, 1e-9);
  return true;
}
}  // namespace

TEST_CASE("simplex: a structured pricing product steers pivots but never the result", "[simplex][glpk]") {
  std::mt19937_64 rng(404);
  int optimal = 0;
  for (int t = 0; t < 300; ++t) {
    const int family = t % 5;
    const LinearProgram lp = random_lp(rng, family);
    INFO("LP #" << t << " (family " << family << ")");
    const auto g = labeldp::test::solve_with_glpk(lp);
    for (const Index exact : {lp.A.cols(), lp.A.cols() / 2, Index(0)}) {
      RevisedSimplex simplex(lp);
      simplex.set_transpose_product(hiding_product(simplex, exact));
      const SimplexResult r = simplex.solve();
      INFO("exact columns " << exact << ": " << to_string(r.status) << " " << r.objective << ", GLPK "
                            << to_string(g.status) << " " << g.objective);
      if (require_glpk_outcome(lp, r, g) && exact == lp.A.cols()) ++optimal;
    }
  }
  REQUIRE(optimal >= 100);
}

TEST_CASE("simplex: a wrong structured product costs pivots, never the answer", "[simplex][glpk]") {
  // The product below is off by +-0.3 on alternate columns, so it sometimes proposes columns
  // that do not improve; those must be refused, and the end must still be GLPK's optimum.
  std::mt19937_64 rng(505);
  int optimal = 0;
  for (int t = 0; t < 300; ++t) {
    const int family = t % 5;
    const LinearProgram lp = random_lp(rng, family);
    INFO("LP #" << t << " (family " << family << ")");
    const auto g = labeldp::test::solve_with_glpk(lp);
    RevisedSimplex simplex(lp);
    simplex.set_transpose_product([&lp](const Eigen::VectorXd& y, Eigen::VectorXd& out) {
      out.noalias() = lp.A.transpose() * y;
      for (Index j = 0; j < out.size(); ++j) out[j] += j % 2 ? 0.3 : -0.3;
    });
    const SimplexResult r = simplex.solve();
    if (require_glpk_outcome(lp, r, g)) ++optimal;
  }
  REQUIRE(optimal >= 100);
}

TEST_CASE("simplex: an exact structured product reaches the dense solve's optimum", "[simplex]") {
  // Same entering choices up to roundoff: the product below is A^T y computed row by row.
  std::mt19937_64 rng(9);
  for (int t = 0; t < 50; ++t) {
    const LinearProgram lp = random_lp(rng, 2);
    RevisedSimplex dense(lp), structured(lp);
    structured.set_transpose_product([&lp](const Eigen::VectorXd& y, Eigen::VectorXd& out) {
      out.setZero();
      for (Index i = 0; i < lp.A.rows(); ++i) out += y[i] * lp.A.row(i).transpose();
    });
    const SimplexResult a = dense.solve(), b = structured.solve();
    REQUIRE(a.status == b.status);
    if (a.status == SolveStatus::Optimal) REQUIRE(close_relative(a.objective, b.objective, 1e-9));
  }
}

TEST_CASE("simplex: status names", "[simplex]") {
  REQUIRE(to_string(SolveStatus::Optimal) == "optimal");
  REQUIRE(to_string(SolveStatus::Infeasible) == "infeasible");
  REQUIRE(to_string(SolveStatus::Unbounded) == "unbounded");
  REQUIRE(to_string(SolveStatus::IterationLimit) == "iteration-limit");
  REQUIRE(to_string(SolveStatus::TimeLimit) == "time-limit");
  REQUIRE(to_string(SolveStatus::NumericalIssue) == "numerical-issue");
}

TEST_CASE("simplex: edge shapes", "[simplex]") {
  SECTION("no rows, non-negative costs: optimal at 0") {
    RevisedSimplex s(make_lp(Eigen::MatrixXd(0, 2), Eigen::VectorXd(0), {}, Eigen::Vector2d(1, 0)));
    const auto r = s.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.objective == 0);
  }
  SECTION("no rows, a negative cost: unbounded") {
    RevisedSimplex s(make_lp(Eigen::MatrixXd(0, 2), Eigen::VectorXd(0), {}, Eigen::Vector2d(1, -1)));
    REQUIRE(s.solve().status == SolveStatus::Unbounded);
  }
  SECTION("no columns: feasible iff the rows hold at x = 0") {
    RevisedSimplex ok(make_lp(Eigen::MatrixXd(2, 0), Eigen::Vector2d(0, 1), {RowType::Equal, RowType::LessEqual},
                              Eigen::VectorXd(0)));
    REQUIRE(ok.solve().status == SolveStatus::Optimal);
    RevisedSimplex bad(make_lp(Eigen::MatrixXd(1, 0), Eigen::VectorXd::Ones(1), {RowType::Equal}, Eigen::VectorXd(0)));
    REQUIRE(bad.solve().status == SolveStatus::Infeasible);
  }
  SECTION("redundant equality rows") {
    const LinearProgram lp = make_lp(Eigen::MatrixXd{{1, 1, 0}, {2, 2, 0}, {0, 1, 1}}, Eigen::Vector3d(1, 2, 1),
                                     {RowType::Equal, RowType::Equal, RowType::Equal}, Eigen::Vector3d(1, 2, 3));
    RevisedSimplex s(lp);
    const auto r = s.solve();
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(close_relative(r.objective, labeldp::test::solve_with_glpk(lp).objective, 1e-9));
    check_optimality_conditions(lp, r, 1e-9);
  }
}

TEST_CASE("simplex: add_columns keeps the basis and re-solves warm", "[simplex]") {
  std::mt19937_64 rng(3);
  const LinearProgram full = random_lp(rng, 4);
  const Index half = std::max<Index>(1, full.A.cols() / 2);
  // Start with the first half of the columns plus an expensive identity (always feasible).
  const Index m = full.A.rows();
  LinearProgram start = full;
  start.A.resize(m, half + m);
  start.A << full.A.leftCols(half), Eigen::MatrixXd::Identity(m, m);
  start.c.resize(half + m);
  start.c << full.c.head(half), Eigen::VectorXd::Constant(m, 1e3);
  start.row_types.assign(std::size_t(m), RowType::GreaterEqual);
  LinearProgram combined = start;
  combined.A.conservativeResize(m, half + m + full.A.cols() - half);
  combined.A.rightCols(full.A.cols() - half) = full.A.rightCols(full.A.cols() - half);
  combined.c.conservativeResize(combined.A.cols());
  combined.c.tail(full.A.cols() - half) = full.c.tail(full.A.cols() - half);

  RevisedSimplex s(start);
  const auto first = s.solve();
  REQUIRE(first.status == SolveStatus::Optimal);
  REQUIRE_FALSE(first.warm_started);
  s.add_columns(full.A.rightCols(full.A.cols() - half), full.c.tail(full.A.cols() - half));
  REQUIRE(s.num_columns() == combined.A.cols());
  const auto second = s.solve();
  REQUIRE(second.status == SolveStatus::Optimal);
  REQUIRE(second.warm_started);
  RevisedSimplex cold(combined);
  const auto reference = cold.solve();
  REQUIRE(close_relative(second.objective, reference.objective, 1e-9));
  check_optimality_conditions(combined, second, 1e-9);
}

// --- rejected problems: one test per rejected value ---------------------------------------

namespace {
LinearProgram good_lp() {
  return make_lp(Eigen::MatrixXd{{1, 2}, {3, 4}}, Eigen::Vector2d(1, 2), {RowType::LessEqual, RowType::Equal},
                 Eigen::Vector2d(1, 1));
}
}  // namespace

TEST_CASE("simplex rejects: b of the wrong size", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.b = Eigen::Vector3d(1, 2, 3);
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'b' has 3 entries, must equal the 2 rows of 'A'"));
}

TEST_CASE("simplex rejects: row_types of the wrong size", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.row_types.push_back(RowType::Equal);
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'row_types' has 3 entries, must equal the 2 rows of 'A'"));
}

TEST_CASE("simplex rejects: c of the wrong size", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.c = Eigen::VectorXd::Ones(1);
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'c' has 1 entries, must equal the 2 columns of 'A'"));
}

TEST_CASE("simplex rejects: NaN in A", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.A(1, 0) = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'A' entry (1, 0) must be finite, got nan"));
}

TEST_CASE("simplex rejects: infinity in A", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.A(0, 1) = -std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'A' entry (0, 1) must be finite, got -inf"));
}

TEST_CASE("simplex rejects: NaN in b", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.b[1] = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'b' entry 1 must be finite, got nan"));
}

TEST_CASE("simplex rejects: infinity in b", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.b[0] = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'b' entry 0 must be finite, got inf"));
}

TEST_CASE("simplex rejects: NaN in c", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.c[0] = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'c' entry 0 must be finite, got nan"));
}

TEST_CASE("simplex rejects: infinity in c", "[simplex][validation]") {
  LinearProgram lp = good_lp();
  lp.c[1] = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(RevisedSimplex(lp), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(lp), Catch::Contains("'c' entry 1 must be finite, got inf"));
}

TEST_CASE("simplex rejects: non-positive tolerance", "[simplex][validation]") {
  SimplexOptions opt;
  opt.pivot_tolerance = 0;
  REQUIRE_THROWS_AS(RevisedSimplex(good_lp(), opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(good_lp(), opt),
                      Catch::Contains("'pivot_tolerance' must be finite and positive, got 0"));
}

TEST_CASE("simplex rejects: NaN tolerance", "[simplex][validation]") {
  SimplexOptions opt;
  opt.primal_feasibility_tolerance = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(RevisedSimplex(good_lp(), opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(good_lp(), opt),
                      Catch::Contains("'primal_feasibility_tolerance' must be finite and positive, got nan"));
}

TEST_CASE("simplex rejects: negative iteration limit", "[simplex][validation]") {
  SimplexOptions opt;
  opt.max_iterations = -1;
  REQUIRE_THROWS_AS(RevisedSimplex(good_lp(), opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(good_lp(), opt), Catch::Contains("'max_iterations' must be >= 0, got -1"));
}

TEST_CASE("simplex rejects: a negative or NaN time limit", "[simplex][validation]") {
  SimplexOptions opt;
  opt.time_limit = -1;
  REQUIRE_THROWS_AS(RevisedSimplex(good_lp(), opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(good_lp(), opt),
                      Catch::Contains("'time_limit' must be >= 0 seconds (infinity = no limit), got -1"));
  opt.time_limit = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_WITH(RevisedSimplex(good_lp(), opt),
                      Catch::Contains("'time_limit' must be >= 0 seconds (infinity = no limit), got nan"));
  opt.time_limit = std::numeric_limits<double>::infinity();
  RevisedSimplex s(good_lp(), opt);
  REQUIRE_THROWS_AS(s.set_time_limit(-0.5), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.set_time_limit(-0.5),
                      Catch::Contains("'time_limit' must be >= 0 seconds (infinity = no limit), got -0.5"));
  REQUIRE_THROWS_WITH(s.set_time_limit(std::numeric_limits<double>::quiet_NaN()), Catch::Contains("'time_limit'"));
  REQUIRE_NOTHROW(s.set_time_limit(0));
  REQUIRE(s.options().time_limit == 0);
}

TEST_CASE("simplex rejects: zero refactorization interval", "[simplex][validation]") {
  SimplexOptions opt;
  opt.refactorization_interval = 0;
  REQUIRE_THROWS_AS(RevisedSimplex(good_lp(), opt), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(good_lp(), opt),
                      Catch::Contains("'refactorization_interval' must be >= 1, got 0"));
}

TEST_CASE("simplex rejects: added columns with the wrong number of rows", "[simplex][validation]") {
  RevisedSimplex s(good_lp());
  REQUIRE_THROWS_AS(s.add_columns(Eigen::MatrixXd::Ones(3, 1), Eigen::VectorXd::Ones(1)), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.add_columns(Eigen::MatrixXd::Ones(3, 1), Eigen::VectorXd::Ones(1)),
                      Catch::Contains("'A_new' has 3 rows, must equal the problem's 2 rows"));
}

TEST_CASE("simplex rejects: added costs of the wrong size", "[simplex][validation]") {
  RevisedSimplex s(good_lp());
  REQUIRE_THROWS_AS(s.add_columns(Eigen::MatrixXd::Ones(2, 2), Eigen::VectorXd::Ones(1)), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.add_columns(Eigen::MatrixXd::Ones(2, 2), Eigen::VectorXd::Ones(1)),
                      Catch::Contains("'c_new' has 1 entries, must equal the 2 columns of 'A_new'"));
}

TEST_CASE("simplex rejects: NaN in added columns", "[simplex][validation]") {
  RevisedSimplex s(good_lp());
  Eigen::MatrixXd A = Eigen::MatrixXd::Ones(2, 1);
  A(1, 0) = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(s.add_columns(A, Eigen::VectorXd::Ones(1)), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.add_columns(A, Eigen::VectorXd::Ones(1)),
                      Catch::Contains("'A_new' entry (1, 0) must be finite, got nan"));
}

TEST_CASE("simplex rejects: a starting basis of the wrong size", "[simplex][validation]") {
  RevisedSimplex s(good_lp());
  REQUIRE_THROWS_AS(s.set_basis({0}), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.set_basis({0}), Catch::Contains("'columns' has 1 entries, must equal the 2 rows"));
}

TEST_CASE("simplex rejects: a negative starting basis column", "[simplex][validation]") {
  RevisedSimplex s(good_lp());
  REQUIRE_THROWS_AS(s.set_basis({0, -1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.set_basis({0, -1}), Catch::Contains("'columns' entry 1 must be in [0, 2), got -1"));
}

TEST_CASE("simplex rejects: a starting basis column past the last column", "[simplex][validation]") {
  RevisedSimplex s(good_lp());
  REQUIRE_THROWS_AS(s.set_basis({2, 0}), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.set_basis({2, 0}), Catch::Contains("'columns' entry 0 must be in [0, 2), got 2"));
}

TEST_CASE("simplex rejects: a repeated starting basis column", "[simplex][validation]") {
  RevisedSimplex s(good_lp());
  REQUIRE_THROWS_AS(s.set_basis({1, 1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(s.set_basis({1, 1}),
                      Catch::Contains("'columns' entry 1 must not repeat an earlier entry, got 1"));
}
