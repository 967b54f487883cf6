// Labels per second of the additive-noise baselines with the default generator (SecureRandom,
// ChaCha20): each mechanism with one call per label and with the batch interface, and the
// O(1/(1-alpha)) two_sided_geometric at scales 1 and 1e3 for comparison with the O(1) exact
// discrete Laplace sampler (its noise alone at scales 1, 1e3 and 1e6: bench_core's
// BM_DiscreteLaplace).
#include <benchmark/benchmark.h>

#include <labeldp/core/random.hpp>
#include <labeldp/core/sampling.hpp>
#include <labeldp/mechanisms/additive_noise.hpp>
#include <span>
#include <vector>

#include "sampling_loops.hpp"

namespace {

constexpr int kBatch = 4096;

// Labels spread over [0, 5000] (the CPS wage range of the demo).
std::vector<double> labels() {
  std::vector<double> v(kBatch);
  for (int i = 0; i < kBatch; ++i) v[std::size_t(i)] = 5000.0 * double((i * 2654435761u) % 10007) / 10007.0;
  return v;
}

// The Bernoulli-trial sampler (expected 2/(1-alpha) exact Bernoulli draws) at scales 1 and 1e3.
void BM_TwoSidedGeometricLegacy(benchmark::State& state) {
  const double alpha = labeldp::discrete_laplace_alpha(1.0 / double(state.range(0)), 1.0);
  labeldp::SecureRandom gen;
  std::int64_t acc = 0;
  for (auto _ : state) {
    acc += labeldp::two_sided_geometric(alpha, gen);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TwoSidedGeometricLegacy)->Arg(1)->Arg(1000);

template <typename M>
void run_single(benchmark::State& state, const M& m) {
  labeldp::bench::run_single(state, m, labels());
}
template <typename M>
void run_batch(benchmark::State& state, const M& m) {
  labeldp::bench::run_batch(state, m, labels());
}

void BM_Laplace_Single(benchmark::State& s) { run_single(s, labeldp::LaplaceMechanism<>(0.0, 5000.0, 1.0, false)); }
void BM_Laplace_Batch(benchmark::State& s) { run_batch(s, labeldp::LaplaceMechanism<>(0.0, 5000.0, 1.0, false)); }
void BM_DiscreteLaplace_Single(benchmark::State& s) {
  run_single(s, labeldp::DiscreteLaplaceMechanism<>(labeldp::LabelGrid<>(0.0, 5000.0, 50.0), 1.0, true));
}
void BM_DiscreteLaplace_Batch(benchmark::State& s) {
  run_batch(s, labeldp::DiscreteLaplaceMechanism<>(labeldp::LabelGrid<>(0.0, 5000.0, 50.0), 1.0, true));
}
// Unclipped: the exact sampler of Canonne, Kamath and Steinke 2020 (work varies with the noise),
// at the grid of 100 steps above and at 10^5 steps (resolution 0.05).
void BM_DiscreteLaplaceUnclipped_Single(benchmark::State& s) {
  run_single(s, labeldp::DiscreteLaplaceMechanism<>(labeldp::LabelGrid<>(0.0, 5000.0, 5000.0 / double(s.range(0))), 1.0,
                                                    false));
}
void BM_DiscreteLaplaceUnclipped_Batch(benchmark::State& s) {
  run_batch(s, labeldp::DiscreteLaplaceMechanism<>(labeldp::LabelGrid<>(0.0, 5000.0, 5000.0 / double(s.range(0))), 1.0,
                                                   false));
}
void BM_Exponential_Single(benchmark::State& s) {
  run_single(s, labeldp::ExponentialMechanism<>(labeldp::LabelGrid<>(0.0, 5000.0, 50.0), 1.0));
}
void BM_Exponential_Batch(benchmark::State& s) {
  run_batch(s, labeldp::ExponentialMechanism<>(labeldp::LabelGrid<>(0.0, 5000.0, 50.0), 1.0));
}
BENCHMARK(BM_Laplace_Single);
BENCHMARK(BM_Laplace_Batch);
BENCHMARK(BM_DiscreteLaplace_Single);
BENCHMARK(BM_DiscreteLaplace_Batch);
BENCHMARK(BM_DiscreteLaplaceUnclipped_Single)->Arg(100)->Arg(100000);
BENCHMARK(BM_DiscreteLaplaceUnclipped_Batch)->Arg(100)->Arg(100000);
BENCHMARK(BM_Exponential_Single);
BENCHMARK(BM_Exponential_Batch);

}  // namespace

BENCHMARK_MAIN();
