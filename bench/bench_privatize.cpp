// Privatization of the CPS 1988 weekly wages (examples/data/cps1988.csv, 28,155 labels):
//  - the two-stage randomizer (Ghazi et al., ICLR 2023, Algorithm 3) end to end: public
//    discretization (clip to [0, 5000], round to 50), private histogram (Algorithm 4, exact
//    discrete Laplace), optimal RR-on-Bins (Algorithm 2), one noisy label per wage; with and
//    without reading the CSV file;
//  - the RR-on-Bins sampler alone (Algorithm 1), labels/s with SecureRandom (the default),
//    SeededRandom and std::mt19937_64, for the CPS mechanism at eps = 1 (2 bins) and 8 (15 bins);
//  - labels/s of every finite mechanism's batch sample(in, out, gen) with SecureRandom (issue 15):
//    RR-on-Bins at eps 1, 4, 8, k-ary randomized response, a dense 101 x 101 FiniteMechanism (the
//    shape of the optimal / unbiased ones), the clipped discrete Laplace; and keyed mode
//    (sample_keyed with contiguous and with random record ids) next to the same mechanism unkeyed;
//  - the unclipped additive-noise baselines (laplace, staircase, gaussian) as the Python module
//    applies them, unkeyed and keyed, at eps 1 and 8.
//
// Targets: >= 20 million labels/s per core end to end (two-stage, secure generator); issue 15:
// >= 100 M labels/s/core for every finite mechanism at every eps, keyed <= 1.5x slower.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <labeldp/core/keyed_random.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/io/csv.hpp>
#include <labeldp/mechanisms/additive_noise.hpp>
#include <labeldp/mechanisms/any_mechanism.hpp>
#include <labeldp/mechanisms/randomized_response.hpp>
#include <labeldp/mechanisms/two_stage.hpp>
#include <map>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

std::string cps_path() {
  return (std::filesystem::path(__FILE__).parent_path().parent_path() / "examples/data/cps1988.csv").string();
}

const std::vector<double>& cps_wages() {
  static const std::vector<double> wages = labeldp::io::read_column_csv(cps_path(), "wage");
  return wages;
}

const labeldp::Discretizer<double>& wage_grid() {
  static const auto disc = labeldp::Discretizer<double>::grid(0.0, 5000.0, 50.0);
  return disc;
}

// Algorithm 3 on the in-memory wages: everything but reading the file.
void BM_TwoStage_CPS(benchmark::State& state) {
  const double eps = double(state.range(0)) / 100.0;
  const auto& wages = cps_wages();
  labeldp::SecureRandom gen;
  std::size_t bins = 0;
  for (auto _ : state) {
    auto result = labeldp::two_stage_privatize(wage_grid(), std::span<const double>(wages), eps, gen);
    bins = std::size_t(result.two_stage.mechanism.num_outputs());
    benchmark::DoNotOptimize(result.noisy_labels.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(wages.size()));
  state.counters["bins"] = double(bins);
  state.counters["eps"] = eps;
}
BENCHMARK(BM_TwoStage_CPS)->Arg(10)->Arg(100)->Arg(800)->Unit(benchmark::kMillisecond);

// Algorithm 3 including parsing the 28,155-row CSV file.
void BM_TwoStage_CPS_FromFile(benchmark::State& state) {
  labeldp::SecureRandom gen;
  for (auto _ : state) {
    const auto wages = labeldp::io::read_column_csv(cps_path(), "wage");
    auto result = labeldp::two_stage_privatize(wage_grid(), std::span<const double>(wages), 1.0, gen);
    benchmark::DoNotOptimize(result.noisy_labels.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(cps_wages().size()));
}
BENCHMARK(BM_TwoStage_CPS_FromFile)->Unit(benchmark::kMillisecond);

// The fitted CPS mechanism at eps (seeded so that every generator benchmark samples the same
// mechanism), and the support indices of the wages.
struct CpsMechanism {
  labeldp::RROnBins<double> rr;
  std::vector<labeldp::Index> index;
};

CpsMechanism cps_mechanism(double eps) {
  labeldp::SeededRandom setup(2024);
  const auto& wages = cps_wages();
  auto result = labeldp::two_stage_privatize(wage_grid(), std::span<const double>(wages), eps, setup);
  std::vector<labeldp::Index> index;
  index.reserve(wages.size());
  for (double w : wages) index.push_back(wage_grid().index(w));
  return CpsMechanism{std::move(result.two_stage.mechanism), std::move(index)};
}

// Labels/s of RR-on-Bins sample_index() over the CPS wages with generator G.
template <typename G>
void BM_RROnBinsSampler(benchmark::State& state, G gen) {
  const auto m = cps_mechanism(double(state.range(0)));
  const std::size_t n = m.index.size();
  std::int64_t checksum = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) checksum += m.rr.sample_index(m.index[i], gen);
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
  state.counters["bins"] = double(m.rr.num_outputs());
}
BENCHMARK_CAPTURE(BM_RROnBinsSampler, SecureRandom, labeldp::SecureRandom())->Arg(1)->Arg(8);
BENCHMARK_CAPTURE(BM_RROnBinsSampler, SeededRandom, labeldp::SeededRandom(1))->Arg(1)->Arg(8);
BENCHMARK_CAPTURE(BM_RROnBinsSampler, mt19937_64, std::mt19937_64(1))->Arg(1)->Arg(8);

// --- Issue 15: batch throughput of every finite mechanism, unkeyed and keyed ---------------------

// The CPS wages rounded to the 50-dollar grid, repeated to 2^16 labels (in L2: the sampler's
// work, not memory bandwidth, is measured).
const std::vector<double>& grid_labels() {
  static const std::vector<double> labels = [] {
    std::vector<double> v(std::size_t(1) << 16);
    const auto& wages = cps_wages();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = wage_grid()(wages[i % wages.size()]);
    return v;
  }();
  return labels;
}

// Labels/s of m.sample(in, out, gen) with SecureRandom over grid_labels().
template <typename M>
void run_batch(benchmark::State& state, const M& m) {
  const auto& in = grid_labels();
  std::vector<double> out(in.size());
  labeldp::SecureRandom gen;
  for (auto _ : state) {
    m.sample(std::span<const double>(in), std::span<double>(out), gen);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(in.size()));
}

// Labels/s of sample_keyed(m, ...) over grid_labels() with contiguous ids (range 0) or random
// 64-bit ids (range 1).
template <typename M>
void run_keyed(benchmark::State& state, const M& m, bool random_ids) {
  const auto& in = grid_labels();
  std::vector<double> out(in.size());
  std::vector<std::uint64_t> ids(in.size());
  std::iota(ids.begin(), ids.end(), std::uint64_t{1000000});
  if (random_ids) {
    std::mt19937_64 rng(5);
    for (auto& id : ids) id = rng();
  }
  labeldp::KeyedRandom::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = std::uint8_t(i);
  const labeldp::KeyedRandom keyed(key);
  for (auto _ : state) {
    labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(ids), keyed,
                          std::span<double>(out));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(in.size()));
}

const labeldp::RROnBins<double>& cps_rr_on_bins(int eps) {
  static std::map<int, labeldp::RROnBins<double>> cache;
  auto it = cache.find(eps);
  if (it == cache.end()) it = cache.emplace(eps, cps_mechanism(double(eps)).rr).first;
  return it->second;
}

labeldp::Vector<double> grid_values() {
  labeldp::Vector<double> v(101);
  for (int i = 0; i <= 100; ++i) v[i] = 50.0 * i;
  return v;
}

void BM_Batch_RROnBins(benchmark::State& state) { run_batch(state, cps_rr_on_bins(int(state.range(0)))); }
BENCHMARK(BM_Batch_RROnBins)->Arg(1)->Arg(4)->Arg(8);

void BM_Batch_RandomizedResponse(benchmark::State& state) {
  const auto m = labeldp::randomized_response(grid_values(), double(state.range(0)));
  run_batch(state, m);
}
BENCHMARK(BM_Batch_RandomizedResponse)->Arg(1)->Arg(8);

// A dense 101 x 101 mechanism (every entry positive, rows e^eps-balanced): the shape of the
// optimal and unbiased mechanisms, whose sampler does the same work whatever the entries.
void BM_Batch_DenseFinite(benchmark::State& state) {
  const auto values = grid_values();
  labeldp::Matrix<double> p(101, 101);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 101; ++i) {
    double sum = 0;
    for (int j = 0; j < 101; ++j) sum += p(i, j) = 1.0 + double(rng() % 1000) / 1000.0;
    p.row(i) /= sum;
  }
  const labeldp::FiniteMechanism<double> m(values, values, p);
  run_batch(state, m);
}
BENCHMARK(BM_Batch_DenseFinite);

void BM_Batch_ClippedDiscreteLaplace(benchmark::State& state) {
  const labeldp::DiscreteLaplaceMechanism<double> m(labeldp::LabelGrid<double>(0, 5000, 50), double(state.range(0)),
                                                    true);
  run_batch(state, m);
}
BENCHMARK(BM_Batch_ClippedDiscreteLaplace)->Arg(1)->Arg(8);

void BM_Keyed_RROnBins(benchmark::State& state) {
  run_keyed(state, cps_rr_on_bins(int(state.range(0))), state.range(1) != 0);
}
BENCHMARK(BM_Keyed_RROnBins)->ArgNames({"eps", "random_ids"})->Args({1, 0})->Args({1, 1})->Args({8, 0})->Args({8, 1});

void BM_Keyed_ClippedDiscreteLaplace(benchmark::State& state) {
  const labeldp::DiscreteLaplaceMechanism<double> m(labeldp::LabelGrid<double>(0, 5000, 50), 1.0, true);
  run_keyed(state, m, state.range(0) != 0);
}
BENCHMARK(BM_Keyed_ClippedDiscreteLaplace)->ArgName("random_ids")->Arg(0)->Arg(1);

// 2^16 CPS wages (raw labels) through an AnyMechanism's batch API, per iteration: unkeyed with
// SecureRandom, or keyed with contiguous ids (or random 64-bit ids when `random_ids`).
void run_any_batch(benchmark::State& state, const labeldp::AnyMechanism& any, bool keyed_mode, bool random_ids) {
  const auto& wages = cps_wages();
  std::vector<double> in(std::size_t(1) << 16);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = wages[i % wages.size()];
  std::vector<double> out(in.size());
  std::vector<std::uint64_t> ids(in.size());
  std::iota(ids.begin(), ids.end(), std::uint64_t{0});
  if (random_ids) {
    std::mt19937_64 rng(5);
    for (auto& id : ids) id = rng();
  }
  labeldp::KeyedRandom::Key key{};
  key[0] = 1;
  const labeldp::KeyedRandom keyed(key);
  labeldp::SecureRandom gen;
  for (auto _ : state) {
    if (keyed_mode)
      labeldp::sample_keyed(any, std::span<const double>(in), std::span<const std::uint64_t>(ids), keyed,
                            std::span<double>(out));
    else
      any.sample(std::span<const double>(in), std::span<double>(out), gen);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(in.size()));
}

// What a mechanism file applies to raw labels (the CLI and the Python module): an AnyMechanism
// holding RR-on-Bins at eps 1 as a finite mechanism, with randomized rounding of the raw CPS
// wages to its inputs (two words per label). Range 0: unkeyed with SecureRandom; 1: keyed,
// contiguous ids; 2: keyed, random ids; 3 and 4: modes 0 and 1 with the same matrix under kind
// "unbiased", whose labels are mapped by unbiased randomized rounding (a Bernoulli draw) instead
// of nearest rounding.
void BM_Any_RROnBins_RawLabels(benchmark::State& state) {
  static const auto nearest = labeldp::AnyMechanism::from_finite("rr-on-bins", 1.0, cps_rr_on_bins(1).mechanism());
  static const auto unbiased = labeldp::AnyMechanism::from_finite("unbiased", 1.0, cps_rr_on_bins(1).mechanism());
  const auto& any = state.range(0) >= 3 ? unbiased : nearest;
  const int mode = int(state.range(0) % 3);
  run_any_batch(state, any, mode != 0, mode == 2);
}
BENCHMARK(BM_Any_RROnBins_RawLabels)->ArgName("mode")->DenseRange(0, 4);

// The unclipped additive-noise baselines as the Python module applies them (`baseline(kind, eps,
// 0, 5000)`: an AnyMechanism from make_baseline(), raw CPS wages, delta 1e-6 for the Gaussian), to
// split the sampler's cost from the binding's (issue 15). Args: kind (0 laplace, 1 staircase, 2
// gaussian), eps, mode (0 unkeyed SecureRandom, 1 keyed with contiguous ids).
void BM_Any_AdditiveNoise(benchmark::State& state) {
  static const char* const kinds[] = {"laplace", "staircase", "gaussian"};
  labeldp::BaselineSpec spec;
  spec.kind = kinds[state.range(0)];
  spec.eps = double(state.range(1));
  spec.delta = state.range(0) == 2 ? 1e-6 : 0.0;
  spec.lo = 0;
  spec.hi = 5000;
  run_any_batch(state, labeldp::make_baseline(spec), state.range(2) != 0, false);
}
BENCHMARK(BM_Any_AdditiveNoise)->ArgNames({"kind", "eps", "keyed"})->ArgsProduct({{0, 1, 2}, {1, 8}, {0, 1}});

}  // namespace

BENCHMARK_MAIN();
