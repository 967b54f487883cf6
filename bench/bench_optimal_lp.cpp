// The optimal-mechanism LP (Ghazi et al. 2023, LP (2)) for a 52-label prior (CPS 1988 weekly
// wages bucketed into 52 values) and |O| = 52, 416, 1664 evenly spaced outputs, eps = 1, squared
// loss: labeldp's column generation over staircase columns side by side with GLPK's simplex on
// the explicit LP (k|O| variables, k + k(k-1)|O| rows). Each labeldp run checks its optimum
// against GLPK's (when GLPK ran) and reports both as counters.
//
// GLPK on the explicit LP takes about half a minute at |O| = 52 and did not finish within its
// 1,800 s time limit at |O| = 416 on the project machine, so its benchmarks run one iteration
// and are registered only up to LABELDP_BENCH_GLPK_MAX_OUTPUTS outputs (default 52); set it to
// 416 or 1664 to include the larger sizes. HiGHS: bench/highs_optimal_lp.py (run by hand).
//
// Prior shapes (BM_Shape, one iteration each, squared loss, time limit 120 s): near-uniform
// (k = 214, diabetes-like) over 428 and lognormal (k = 401) over 802 evenly spaced outputs at
// eps 0.05, 0.5, 1, 4, 12, and the spiky weeks-like prior (k = 52) over 52 outputs at eps 1. The
// same priors, from the same formulas, are timed under HiGHS by
// `python3 bench/highs_optimal_lp.py --shapes`. Counters: certified (1 when Optimal), gap,
// expected_loss, rounds, pivots.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/mechanisms/optimal_lp.hpp"
#include "oracles/glpk_oracle.hpp"

namespace {

using labeldp::Index;

constexpr double kEps = 1.0;

// CPS 1988 weekly wages (examples/data/cps1988.csv) in 52 buckets of $50 (the last one open),
// each bucket's value its mean wage: a heavy-tailed 52-value prior.
const labeldp::FinitePrior<>& wage_prior() {
  static const labeldp::FinitePrior<> prior = [] {
    // bench/CMakeLists.txt defines no data path, so the file is found next to this source
    // (CMake compiles it by absolute path); LABELDP_DATA_DIR overrides.
    const char* env = std::getenv("LABELDP_DATA_DIR");
    std::string dir = env ? std::string(env) : std::string(__FILE__);
    if (!env) dir = dir.substr(0, dir.rfind('/')) + "/../examples/data";
    std::ifstream in(dir + "/cps1988.csv");
    if (!in) throw std::runtime_error("cannot open " + dir + "/cps1988.csv (set LABELDP_DATA_DIR)");
    std::string line;
    std::getline(in, line);
    std::vector<double> sum(52, 0.0), count(52, 0.0);
    while (std::getline(in, line)) {
      const double wage = std::stod(line.substr(0, line.find(',')));
      const std::size_t b = std::min<std::size_t>(51, std::size_t(wage / 50.0));
      sum[b] += wage;
      count[b] += 1;
    }
    std::vector<double> values, counts;
    for (std::size_t b = 0; b < 52; ++b) {
      // Empty buckets keep their midpoint as a value of probability 0 (still an input).
      values.push_back(count[b] > 0 ? sum[b] / count[b] : 50.0 * double(b) + 25.0);
      counts.push_back(count[b]);
    }
    return labeldp::FinitePrior<>::from_weights(values, counts);
  }();
  return prior;
}

Eigen::VectorXd outputs_for(Index n) {
  const auto& p = wage_prior();
  return Eigen::VectorXd::LinSpaced(n, p.value(0), p.value(p.size() - 1));
}

std::map<Index, double>& glpk_optimum() {
  static std::map<Index, double> m;
  return m;
}

void BM_ColumnGeneration(benchmark::State& state) {
  const Index n = state.range(0);
  const auto& prior = wage_prior();
  const Eigen::VectorXd outputs = outputs_for(n);
  labeldp::OptimalLPResult<double> r;
  for (auto _ : state) {
    r = labeldp::optimal_mechanism_lp(prior, kEps, outputs);
    benchmark::DoNotOptimize(r.expected_loss);
  }
  if (r.status != labeldp::optim::SolveStatus::Optimal) state.SkipWithError("column generation did not reach Optimal");
  state.counters["expected_loss"] = r.expected_loss;
  state.counters["rounds"] = double(r.rounds);
  state.counters["columns"] = double(r.columns);
  state.counters["pivots"] = double(r.iterations);
  state.counters["audit_eps"] = labeldp::audit_epsilon(r.mechanism);
  state.counters["outputs_used"] = double(r.mechanism.num_outputs());
  auto it = glpk_optimum().find(n);
  if (it != glpk_optimum().end()) {
    state.counters["glpk_loss"] = it->second;
    state.counters["rel_diff_vs_glpk"] = std::abs(r.expected_loss - it->second) / std::abs(it->second);
  }
}

void BM_GlpkExplicit(benchmark::State& state) {
  const Index n = state.range(0);
  const auto& prior = wage_prior();
  const Eigen::VectorXd outputs = outputs_for(n);
  labeldp::test::GlpkResult g;
  for (auto _ : state) {
    const auto lp = labeldp::test::explicit_mechanism_lp(prior.values(), prior.probabilities(), kEps, outputs,
                                                         labeldp::SquaredLoss<>{});
    g = labeldp::test::solve_with_glpk(lp);
    benchmark::DoNotOptimize(g.objective);
  }
  if (g.status != labeldp::optim::SolveStatus::Optimal) state.SkipWithError("GLPK did not reach Optimal");
  glpk_optimum()[n] = g.objective;
  state.counters["expected_loss"] = g.objective;
}

// The prior shapes (highs_optimal_lp.py, shape_prior, builds the same ones).
labeldp::FinitePrior<> shape_prior(const std::string& name) {
  std::vector<double> v, p;
  if (name == "near_uniform") {
    // 214 integer labels from 25 with gaps of 1 or 2, weights uniform in [0.5, 1.5) (seed 1).
    std::mt19937_64 g(1);
    std::uniform_real_distribution<double> u(0.5, 1.5);
    double x = 25;
    for (int i = 0; i < 214; ++i) {
      v.push_back(x);
      x += 1 + (g() % 3 == 0 ? 1 : 0);
      p.push_back(u(g));
    }
  } else if (name == "lognormal") {
    // Labels 0..400, weight exp(-(log(y + 1) - 3)^2 / 2) / (y + 1).
    for (int i = 0; i < 401; ++i) {
      const double y = i, t = std::log(y + 1);
      v.push_back(y);
      p.push_back(std::exp(-(t - 3) * (t - 3) / 2) / (y + 1));
    }
  } else {
    // weeks: labels 1..52, weight 30 at 52, 5 at 26, 2 at multiples of 4, else 0.5.
    for (int i = 1; i <= 52; ++i) {
      v.push_back(i);
      p.push_back(i == 52 ? 30.0 : (i == 26 ? 5.0 : (i % 4 == 0 ? 2.0 : 0.5)));
    }
  }
  return labeldp::FinitePrior<>::from_weights(v, p);
}

void BM_Shape(benchmark::State& state, const std::string& name, double eps, Index n) {
  const auto prior = shape_prior(name);
  const Eigen::VectorXd outputs = Eigen::VectorXd::LinSpaced(n, prior.value(0), prior.value(prior.size() - 1));
  labeldp::OptimalLPOptions opt;
  opt.column_generation.time_limit = 120;
  labeldp::OptimalLPResult<double> r;
  for (auto _ : state) {
    r = labeldp::optimal_mechanism_lp(prior, eps, outputs, opt, labeldp::SquaredLoss<>{});
    benchmark::DoNotOptimize(r.expected_loss);
  }
  state.counters["certified"] = r.status == labeldp::optim::SolveStatus::Optimal ? 1.0 : 0.0;
  state.counters["gap"] = r.gap;
  state.counters["expected_loss"] = r.expected_loss;
  state.counters["dual_bound"] = r.dual_bound;
  state.counters["rounds"] = double(r.rounds);
  state.counters["pivots"] = double(r.iterations);
}

Index glpk_max_outputs() {
  const char* env = std::getenv("LABELDP_BENCH_GLPK_MAX_OUTPUTS");
  return env ? Index(std::atol(env)) : Index(52);
}

}  // namespace

int main(int argc, char** argv) {
  using labeldp::Index;
  // GLPK first, so the column-generation runs can report their difference to its optimum.
  for (Index n : {52, 416, 1664})
    if (n <= glpk_max_outputs())
      benchmark::RegisterBenchmark(("GLPK_explicit_LP/" + std::to_string(n)).c_str(), BM_GlpkExplicit)
          ->Arg(n)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
  for (Index n : {52, 416, 1664})
    benchmark::RegisterBenchmark(("labeldp_column_generation/" + std::to_string(n)).c_str(), BM_ColumnGeneration)
        ->Arg(n)
        ->Unit(benchmark::kMillisecond);
  for (const char* name : {"near_uniform", "lognormal"})
    for (double eps : {0.05, 0.5, 1.0, 4.0, 12.0}) {
      const Index n = std::string(name) == "near_uniform" ? 428 : 802;
      std::ostringstream label;
      label << "shape/" << name << "/eps:" << eps << "/outputs:" << n;
      benchmark::RegisterBenchmark(label.str().c_str(), BM_Shape, std::string(name), eps, n)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  benchmark::RegisterBenchmark("shape/weeks/eps:1/outputs:52", BM_Shape, std::string("weeks"), 1.0, Index(52))
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
