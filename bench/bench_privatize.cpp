// Privatization of the CPS 1988 weekly wages (examples/data/cps1988.csv, 28,155 labels):
//  - the two-stage randomizer (Ghazi et al., ICLR 2023, Algorithm 3) end to end: public
//    discretization (clip to [0, 5000], round to 50), private histogram (Algorithm 4, exact
//    discrete Laplace), optimal RR-on-Bins (Algorithm 2), one noisy label per wage; with and
//    without reading the CSV file;
//  - the RR-on-Bins sampler alone (Algorithm 1), labels/s with SecureRandom (the default),
//    SeededRandom and std::mt19937_64, for the CPS mechanism at eps = 1 (2 bins) and 8 (15 bins).
//
// Target (task): >= 20 million labels/s per core with the default secure generator.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <labeldp/core/random.hpp>
#include <labeldp/io/csv.hpp>
#include <labeldp/mechanisms/two_stage.hpp>
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

}  // namespace

BENCHMARK_MAIN();
