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
// The table (`bench_optimal_lp --table`, issue 11): every prior shape x eps {0.05, 1, 4, 8, 12,
// 20}, squared loss, each case solved in the same run by labeldp (the whole optimal_mechanism_lp()
// call), COIN-OR CLP (ClpSimplex::dual() on compact_mechanism_lp(), the explicit compact LP;
// loading and solving timed, building the sparse matrix not) and HiGHS
// (bench/highs_optimal_lp.py --case, run by /usr/bin/python3 once per case on a file this program
// writes: scipy.optimize.linprog(method="highs") on the same compact LP, timing only the call into
// HiGHS). Each solver's time is its least CPU time over repeats (repeated while their total is
// under 0.5 s, at most 5): CPU time of the process (HiGHS: of the Python process, all its
// threads), so that the other jobs of a loaded machine inflate none of the three as they do
// wall time. Shapes (|O| evenly spaced outputs between the smallest and largest value):
//   weeks52       bench_priors.hpp's weeks-like prior, k = 52, |O| = 52 (spiky)
//   uniform214    bench_priors.hpp's near-uniform diabetes-like prior, k = 214, |O| = 107
//   uniform214z   the same with weight 0 at every i = 3 mod 7 (zero-probability labels)
//   lognormal401  bench_priors.hpp's lognormal prior, k = 401, |O| = 101
//   random300x10  the 300-value prior of tests/mechanisms/test_optimal_lp.cpp (mt19937_64 seed
//                 4242, after its k = 40 draw), |O| = 10
// labeldp's time includes its RR-on-Bins attempt (OptimalLPOptions::rr_on_bins, on by default):
// on these shapes its duals certify every case, by water-filling at eps 0.05, 1 and 20
// everywhere, eps 4 on weeks52 and uniform214 and eps 8 - 12 on random300x10 (weeks52: 12), and
// by the piece LP (OptimalLPOptions::rr_on_bins_pieces) in the others (weeks52 eps 8: 0.3 ms;
// uniform214z eps 4, 1,525 columns and 770 pivots: 46 ms). Without a certificate the failed
// attempt is added to the interior point and column generation that answer.
// Rows are printed worst speedup first: speedup = min(HiGHS s, CLP s) / labeldp s (>= 1: labeldp
// faster than both). `--table=<substring>` runs the cases whose name contains it;
// `--time-limit=<s>` (default 120) limits each solver per solve. CLP is included when
// <ClpSimplex.hpp> is on the include path (bench/CMakeLists.txt links CLP to this program);
// otherwise its column is empty. LABELDP_PYTHON overrides /usr/bin/python3.
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_priors.hpp"
#include "labeldp/core/audit.hpp"
#include "labeldp/mechanisms/optimal_lp.hpp"
#include "oracles/glpk_oracle.hpp"

#if __has_include(<ClpSimplex.hpp>)
#include "oracles/clp_oracle.hpp"
#define LABELDP_BENCH_HAVE_CLP 1
#else
#define LABELDP_BENCH_HAVE_CLP 0
#endif

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

// tests/mechanisms/test_optimal_lp.cpp's random_prior (values from -5 + 4u, gaps 0.2 + 3u, about
// 15% of the labels of probability 0), the same draws.
labeldp::FinitePrior<> random_prior(std::mt19937_64& rng, Index k) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> values, weights;
  double v = -5 + 4 * u(rng);
  for (Index i = 0; i < k; ++i) {
    values.push_back(v);
    v += 0.2 + 3 * u(rng);
    weights.push_back(u(rng) < 0.15 ? 0.0 : u(rng));
  }
  weights[0] += 0.1;
  return labeldp::FinitePrior<>::from_weights(values, weights);
}

// One case of the table: a prior shape, its output count, eps.
struct TableCase {
  std::string prior;
  Index outputs;
  double eps;
  std::string name() const {
    std::ostringstream s;
    s << prior << "/n" << outputs << "/eps" << eps;
    return s.str();
  }
};

labeldp::FinitePrior<> table_prior(const std::string& name) {
  if (name == "uniform214") return labeldp::bench::uniform_prior(214, false);
  if (name == "uniform214z") return labeldp::bench::uniform_prior(214, true);
  if (name == "lognormal401") return labeldp::bench::lognormal_prior(401);
  if (name == "random300x10") {
    std::mt19937_64 rng(4242);
    (void)random_prior(rng, 40);  // the test's k = 40 draw comes first
    return random_prior(rng, 300);
  }
  return labeldp::bench::weeks_prior();
}

std::vector<TableCase> table_cases() {
  std::vector<TableCase> cases;
  const std::vector<std::pair<std::string, Index>> shapes = {
      {"weeks52", 52}, {"uniform214", 107}, {"uniform214z", 107}, {"lognormal401", 101}, {"random300x10", 10}};
  for (const auto& [prior, n] : shapes)
    for (double eps : {0.05, 1.0, 4.0, 8.0, 12.0, 20.0}) cases.push_back({prior, n, eps});
  return cases;
}

Eigen::VectorXd table_outputs(const labeldp::FinitePrior<>& prior, Index n) {
  return Eigen::VectorXd::LinSpaced(n, prior.value(0), prior.value(prior.size() - 1));
}

// labeldp on one case, Google Benchmark style (the table times it itself).
void BM_Shape(benchmark::State& state, const TableCase& c) {
  const auto prior = table_prior(c.prior);
  const Eigen::VectorXd outputs = table_outputs(prior, c.outputs);
  labeldp::OptimalLPOptions opt;
  opt.column_generation.time_limit = 120;
  labeldp::OptimalLPResult<double> r;
  for (auto _ : state) {
    r = labeldp::optimal_mechanism_lp(prior, c.eps, outputs, opt, labeldp::SquaredLoss<>{});
    benchmark::DoNotOptimize(r.expected_loss);
  }
  state.counters["certified"] = r.status == labeldp::optim::SolveStatus::Optimal ? 1.0 : 0.0;
  state.counters["gap"] = r.certified_gap();
  state.counters["expected_loss"] = r.expected_loss;
  state.counters["rounds"] = double(r.rounds);
  state.counters["pivots"] = double(r.iterations);
}

// CPU time of this process in seconds (labeldp and CLP run single-threaded in it).
double cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// The least CPU time of `solve` over repeats, repeated while their total is under 0.5 s (at most 5).
template <typename Solve>
double least_time(const Solve& solve) {
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int rep = 0; rep < 5 && total < 0.5; ++rep) {
    const double t0 = cpu_seconds();
    const bool go_on = solve();
    const double t = cpu_seconds() - t0;
    best = std::min(best, t);
    total += t;
    if (!go_on) break;
  }
  return best;
}

struct ExternalRun {
  double seconds = std::numeric_limits<double>::quiet_NaN();
  std::string status = "-";
  double objective = std::numeric_limits<double>::quiet_NaN();
};

#if LABELDP_BENCH_HAVE_CLP
// CLP's dual simplex on the prebuilt LP (x >= 0), with a time limit (tests/oracles/clp_oracle.hpp:
// converting, loading and solving timed).
ExternalRun run_clp(const labeldp::test::SparseLinearProgram& lp, double limit) {
  ExternalRun out;
  out.seconds = least_time([&] {
    const labeldp::test::ClpResult r = labeldp::test::solve_with_clp(lp, limit);
    out.status = r.clp_status == 0 ? "optimal" : r.clp_status == 3 ? "limit" : "status-" + std::to_string(r.clp_status);
    out.objective = r.objective;
    return r.clp_status == 0;
  });
  return out;
}
#endif

// HiGHS through bench/highs_optimal_lp.py --case on a file with the case's data.
ExternalRun run_highs(const labeldp::FinitePrior<>& prior, double eps, const Eigen::VectorXd& outputs, double limit) {
  std::string dir(__FILE__);
  dir = dir.substr(0, dir.rfind('/'));
  const char* py = std::getenv("LABELDP_PYTHON");
  const std::string file = "/tmp/labeldp_bench_optimal_lp_case_" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream f(file);
    f << std::setprecision(17) << eps << "\n";
    for (Index y = 0; y < prior.size(); ++y) f << prior.value(y) << (y + 1 < prior.size() ? ' ' : '\n');
    for (Index y = 0; y < prior.size(); ++y) f << prior.probability(y) << (y + 1 < prior.size() ? ' ' : '\n');
    for (Index j = 0; j < outputs.size(); ++j) f << outputs[j] << (j + 1 < outputs.size() ? ' ' : '\n');
  }
  const std::string cmd = std::string(py ? py : "/usr/bin/python3") + " '" + dir + "/highs_optimal_lp.py' --case '" +
                          file + "' " + std::to_string(limit);
  ExternalRun out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    std::string text;
    while (std::fgets(buf, sizeof buf, p)) text += buf;
    ::pclose(p);
    std::istringstream in(text);
    int status = -1;
    if (in >> out.seconds >> status >> out.objective)
      out.status = status == 0 ? "optimal" : status == 1 ? "limit" : "status-" + std::to_string(status);
  }
  std::remove(file.c_str());
  return out;
}

int run_table(const std::string& filter, double limit) {
  struct Row {
    std::string name, status;
    double labeldp, highs, clp, gap, loss, highs_obj, clp_obj;
    std::string highs_status, clp_status;
  };
  std::vector<Row> rows;
  std::cout << "case | labeldp CPU s | HiGHS CPU s | CLP CPU s | speedup vs min(HiGHS, CLP) | status | certified gap | "
               "|loss - HiGHS| / loss | |loss - CLP| / loss\n"
            << std::flush;
  for (const TableCase& c : table_cases()) {
    if (c.name().find(filter) == std::string::npos) continue;
    const auto prior = table_prior(c.prior);
    const Eigen::VectorXd outputs = table_outputs(prior, c.outputs);
    labeldp::OptimalLPOptions opt;
    opt.column_generation.time_limit = limit;
    labeldp::OptimalLPResult<double> r;
    Row row;
    row.name = c.name();
    row.labeldp = least_time([&] {
      r = labeldp::optimal_mechanism_lp(prior, c.eps, outputs, opt, labeldp::SquaredLoss<>{});
      return r.status == labeldp::optim::SolveStatus::Optimal;
    });
    row.status = labeldp::optim::to_string(r.status);
    row.gap = r.certified_gap();
    row.loss = r.expected_loss;
    const ExternalRun h = run_highs(prior, c.eps, outputs, limit);
    row.highs = h.seconds;
    row.highs_status = h.status;
    row.highs_obj = h.objective;
    ExternalRun clp;
#if LABELDP_BENCH_HAVE_CLP
    clp = run_clp(labeldp::test::compact_mechanism_lp(prior.values(), prior.probabilities(), c.eps, outputs,
                                                      labeldp::SquaredLoss<>{}),
                  limit);
#endif
    row.clp = clp.seconds;
    row.clp_status = clp.status;
    row.clp_obj = clp.objective;
    rows.push_back(row);
    const double ref = std::fmin(row.highs, row.clp);  // fmin ignores a NaN (solver absent)
    std::cout << row.name << " | " << row.labeldp << " | " << row.highs << " (" << row.highs_status << ") | " << row.clp
              << " (" << row.clp_status << ") | " << ref / row.labeldp << " | " << row.status << " | " << row.gap
              << " | " << std::abs(row.loss - row.highs_obj) / std::abs(row.loss) << " | "
              << std::abs(row.loss - row.clp_obj) / std::abs(row.loss) << "\n"
              << std::flush;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::fmin(a.highs, a.clp) / a.labeldp < std::fmin(b.highs, b.clp) / b.labeldp;
  });
  std::cout << "\nWorst speedup first (speedup = min(HiGHS s, CLP s) / labeldp s):\n\n"
            << "| case | labeldp CPU s | HiGHS CPU s | CLP CPU s | speedup | vs HiGHS | vs CLP | status | gap |\n"
            << "|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& row : rows)
    std::cout << std::setprecision(3) << "| " << row.name << " | " << row.labeldp << " | " << row.highs << " | "
              << row.clp << " | " << std::fmin(row.highs, row.clp) / row.labeldp << " | " << row.highs / row.labeldp
              << " | " << row.clp / row.labeldp << " | " << row.status << " | " << std::setprecision(2) << row.gap
              << " |\n";
  return 0;
}

Index glpk_max_outputs() {
  const char* env = std::getenv("LABELDP_BENCH_GLPK_MAX_OUTPUTS");
  return env ? Index(std::atol(env)) : Index(52);
}

}  // namespace

int main(int argc, char** argv) {
  using labeldp::Index;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--table" || a.rfind("--table=", 0) == 0) {
      double limit = 120;
      for (int j = 1; j < argc; ++j)
        if (std::string(argv[j]).rfind("--time-limit=", 0) == 0) limit = std::atof(argv[j] + 13);
      return run_table(a == "--table" ? std::string() : a.substr(8), limit);
    }
  }
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
  for (const TableCase& c : table_cases())
    benchmark::RegisterBenchmark(("labeldp:" + c.name()).c_str(), BM_Shape, c)->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
