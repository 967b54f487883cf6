// labeldp::optim::RevisedSimplex against GLPK's primal simplex (no presolve) on random dense
// LPs of a few sizes: feasible-by-construction mixed-row LPs (b = A x0, x0 >= 0) with positive
// costs, so both solvers end Optimal. Each labeldp run reports its relative difference to
// GLPK's optimum as a counter. ColdStart / CrashStart: the same LP with a known feasible basis
// solved from scratch and from that basis (RevisedSimplex::set_basis()). Assignment: the
// maximally degenerate assignment LP (n x n, costs 0..3 with many ties), whose pivots are
// mostly degenerate, at the default anti-cycling trigger and with the perturbation forced at
// every degenerate vertex (SimplexOptions::degenerate_pivots_before_perturbation = 0).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "labeldp/optim/simplex.hpp"
#include "oracles/glpk_oracle.hpp"

namespace {

using labeldp::optim::Index;
using labeldp::optim::LinearProgram;
using labeldp::optim::RowType;

LinearProgram random_lp(Index m, Index n) {
  std::mt19937_64 rng(std::uint64_t(m * 1000003 + n));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  LinearProgram lp;
  lp.A = Eigen::MatrixXd::NullaryExpr(m, n, [&]() { return u(rng) < 0.3 ? 0.0 : 2 * u(rng) - 0.5; });
  const Eigen::VectorXd x0 = Eigen::VectorXd::NullaryExpr(n, [&]() { return u(rng) < 0.5 ? 0.0 : u(rng); });
  lp.b = lp.A * x0;
  lp.row_types.resize(std::size_t(m));
  for (Index i = 0; i < m; ++i)
    lp.row_types[std::size_t(i)] = i % 3 == 0   ? RowType::Equal
                                   : i % 3 == 1 ? RowType::LessEqual
                                                : RowType::GreaterEqual;
  lp.c = Eigen::VectorXd::NullaryExpr(n, [&]() { return 0.1 + u(rng); });
  return lp;
}

// Times RevisedSimplex on `lp` (construction and solve, from `basis` when given), and reports
// its pivots and, with `versus_glpk`, its relative difference to GLPK's optimum.
void time_simplex(benchmark::State& state, const LinearProgram& lp, const std::vector<Index>* basis, bool versus_glpk) {
  labeldp::optim::SimplexResult r;
  for (auto _ : state) {
    labeldp::optim::RevisedSimplex simplex(lp);
    if (basis && !simplex.set_basis(*basis)) state.SkipWithError("basis refused");
    r = simplex.solve();
    benchmark::DoNotOptimize(r.objective);
  }
  if (r.status != labeldp::optim::SolveStatus::Optimal) state.SkipWithError("not optimal");
  state.counters["pivots"] = double(r.iterations);
  if (versus_glpk) {
    const auto g = labeldp::test::solve_with_glpk(lp);
    state.counters["rel_diff_vs_glpk"] = std::abs(r.objective - g.objective) / std::max(1.0, std::abs(g.objective));
  }
}

void BM_RevisedSimplex(benchmark::State& state) {
  time_simplex(state, random_lp(state.range(0), state.range(1)), nullptr, true);
}

void BM_Glpk(benchmark::State& state) {
  const LinearProgram lp = random_lp(state.range(0), state.range(1));
  // Loading the problem into GLPK is timed, as RevisedSimplex's construction is: end to end.
  labeldp::test::GlpkResult g;
  for (auto _ : state) {
    g = labeldp::test::solve_with_glpk(lp);
    benchmark::DoNotOptimize(g.objective);
  }
  if (g.status != labeldp::optim::SolveStatus::Optimal) state.SkipWithError("not optimal");
}

// An equality-form LP with a known feasible basis (its first m columns, b = B x_B with
// x_B > 0): the same LP solved cold (phase 1 from the artificial basis, then phase 2) and from
// that basis with set_basis() (phase 2 only), to measure what a crash basis saves.
LinearProgram lp_with_known_basis(Index m, Index n) {
  std::mt19937_64 rng(std::uint64_t(m * 7919 + n));
  std::uniform_real_distribution<double> u(-1.0, 1.0), pos(0.1, 1.0);
  LinearProgram lp;
  lp.A = Eigen::MatrixXd::NullaryExpr(m, n, [&]() { return u(rng); });
  const Eigen::VectorXd xb = Eigen::VectorXd::NullaryExpr(m, [&]() { return pos(rng); });
  lp.b = lp.A.leftCols(m) * xb;
  lp.row_types.assign(std::size_t(m), RowType::Equal);
  lp.c = Eigen::VectorXd::NullaryExpr(n, [&]() { return 0.2 + pos(rng); });
  return lp;
}

void BM_ColdStart(benchmark::State& state) {
  time_simplex(state, lp_with_known_basis(state.range(0), state.range(1)), nullptr, false);
}

void BM_CrashStart(benchmark::State& state) {
  const LinearProgram lp = lp_with_known_basis(state.range(0), state.range(1));
  std::vector<Index> basis;
  for (Index i = 0; i < lp.A.rows(); ++i) basis.push_back(i);
  time_simplex(state, lp, &basis, true);
}

// The assignment LP: rows "each i assigned once" and "each j assigned once", n^2 columns.
LinearProgram assignment_lp(Index n) {
  std::mt19937_64 rng{std::uint64_t(n)};
  std::uniform_int_distribution<int> cost(0, 3);
  LinearProgram lp;
  lp.A = Eigen::MatrixXd::Zero(2 * n, n * n);
  lp.b = Eigen::VectorXd::Ones(2 * n);
  lp.row_types.assign(std::size_t(2 * n), RowType::Equal);
  lp.c.resize(n * n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      lp.A(i, i * n + j) = 1;
      lp.A(n + j, i * n + j) = 1;
      lp.c[i * n + j] = cost(rng);
    }
  return lp;
}

// range(0): n; range(1): the trigger (-1: the default).
void BM_Assignment(benchmark::State& state) {
  const LinearProgram lp = assignment_lp(state.range(0));
  labeldp::optim::SimplexOptions options;
  if (state.range(1) >= 0) options.degenerate_pivots_before_perturbation = state.range(1);
  labeldp::optim::SimplexResult r;
  for (auto _ : state) {
    labeldp::optim::RevisedSimplex simplex(lp, options);
    r = simplex.solve();
    benchmark::DoNotOptimize(r.objective);
  }
  if (r.status != labeldp::optim::SolveStatus::Optimal) state.SkipWithError("not optimal");
  state.counters["pivots"] = double(r.iterations);
  state.counters["degenerate"] = double(r.degenerate_pivots);
  state.counters["perturbed"] = double(r.perturbed_pivots);
  const auto g = labeldp::test::solve_with_glpk(lp);
  state.counters["rel_diff_vs_glpk"] = std::abs(r.objective - g.objective) / std::max(1.0, std::abs(g.objective));
}

const std::vector<std::vector<std::int64_t>> kSizes = {{50, 100}, {200, 400}, {400, 1200}};
const std::vector<std::vector<std::int64_t>> kCrashSizes = {{104, 400}, {200, 600}};

}  // namespace

int main(int argc, char** argv) {
  for (const auto& s : kSizes) {
    // ostringstream rather than operator+: g++ 12 reports a false -Wrestrict on the latter.
    std::ostringstream name;
    name << "/" << s[0] << "x" << s[1];
    benchmark::RegisterBenchmark(("RevisedSimplex" + name.str()).c_str(), BM_RevisedSimplex)
        ->Args(s)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("GLPK" + name.str()).c_str(), BM_Glpk)->Args(s)->Unit(benchmark::kMillisecond);
  }
  for (const auto& s : kCrashSizes) {
    std::ostringstream name;
    name << "/" << s[0] << "x" << s[1];
    benchmark::RegisterBenchmark(("ColdStart" + name.str()).c_str(), BM_ColdStart)
        ->Args(s)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("CrashStart" + name.str()).c_str(), BM_CrashStart)
        ->Args(s)
        ->Unit(benchmark::kMillisecond);
  }
  for (const std::int64_t n : {20, 40}) {
    std::ostringstream name;
    name << "/" << n << "x" << n;
    benchmark::RegisterBenchmark(("Assignment" + name.str() + "/default").c_str(), BM_Assignment)
        ->Args({n, -1})
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("Assignment" + name.str() + "/perturb_at_once").c_str(), BM_Assignment)
        ->Args({n, 0})
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
