// Labels per second of the Gaussian and staircase baselines with the default SecureRandom
// (ChaCha20 keyed from the OS), on 65,536 labels spread over [0, 5000] at eps = 0.1, 1 and 8
// (delta = 1e-6 for the Gaussians; resolution 50 for the discrete ones; outputs clipped):
//  - Batch: the span interface, sample(in, out, gen);
//  - Single: one sample(y, gen) call per label.
// Also the construction cost of each mechanism (sigma search and exact delta, optimal r).
//
// And the Gaussians' noise alone (Noise_*): the tabled discrete Gaussian the mechanisms use
// (detail::TabledDiscreteGaussian, one word per draw up to sigma = 512 steps) against CKS 2020's
// exact rejection sampler (Algorithm 3), at sigma = 6.3, 63, 632 and 6,325 lattice steps.
//
// Targets: >= 20 M labels/s/core for every baseline here (issue 12); the Gaussians through
// Python >= 50 M/s (issue 15). The staircases' samplers are exact (rational Bernoulli draws in
// 128-bit arithmetic), which costs several 64-bit random words per label; the Gaussians' table
// is within a factor 1 +- 2^-36 of the discrete Gaussian, its delta audited for that. The
// figures are stated, not assumed.
#include <benchmark/benchmark.h>

#include <cmath>
#include <labeldp/core/random.hpp>
#include <labeldp/mechanisms/gaussian.hpp>
#include <labeldp/mechanisms/staircase.hpp>
#include <span>
#include <vector>

#include "sampling_loops.hpp"

namespace {

const std::vector<double>& labels() {
  static const std::vector<double> v = [] {
    std::vector<double> x(65536);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 5000.0 * double((i * 2654435761u) % 65536) / 65536.0;
    return x;
  }();
  return v;
}

double eps_of(const benchmark::State& state) { return double(state.range(0)) / 10.0; }

template <typename M>
void run_batch(benchmark::State& state, const M& m) {
  labeldp::bench::run_batch(state, m, labels());
}
template <typename M>
void run_single(benchmark::State& state, const M& m) {
  labeldp::bench::run_single(state, m, labels());
}

void BM_DiscreteGaussian_Batch(benchmark::State& state) {
  run_batch(state, labeldp::DiscreteGaussianMechanism(0, 5000, eps_of(state), 1e-6, 50, true));
}
void BM_DiscreteGaussian_Single(benchmark::State& state) {
  run_single(state, labeldp::DiscreteGaussianMechanism(0, 5000, eps_of(state), 1e-6, 50, true));
}
void BM_AnalyticGaussian_Batch(benchmark::State& state) {
  run_batch(state, labeldp::AnalyticGaussianMechanism(0, 5000, eps_of(state), 1e-6, true));
}
void BM_AnalyticGaussian_Single(benchmark::State& state) {
  run_single(state, labeldp::AnalyticGaussianMechanism(0, 5000, eps_of(state), 1e-6, true));
}
void BM_Staircase_Batch(benchmark::State& state) {
  run_batch(state, labeldp::StaircaseMechanism(0, 5000, eps_of(state), true));
}
void BM_Staircase_Single(benchmark::State& state) {
  run_single(state, labeldp::StaircaseMechanism(0, 5000, eps_of(state), true));
}
void BM_DiscreteStaircase_Batch(benchmark::State& state) {
  run_batch(state, labeldp::DiscreteStaircaseMechanism(0, 5000, eps_of(state), 50, true));
}
void BM_DiscreteStaircase_Single(benchmark::State& state) {
  run_single(state, labeldp::DiscreteStaircaseMechanism(0, 5000, eps_of(state), 50, true));
}

#define LABELDP_NOISE_BENCH(name) BENCHMARK(name)->Arg(1)->Arg(10)->Arg(80)->Unit(benchmark::kMillisecond)
LABELDP_NOISE_BENCH(BM_DiscreteGaussian_Batch);
LABELDP_NOISE_BENCH(BM_DiscreteGaussian_Single);
LABELDP_NOISE_BENCH(BM_AnalyticGaussian_Batch);
LABELDP_NOISE_BENCH(BM_AnalyticGaussian_Single);
LABELDP_NOISE_BENCH(BM_Staircase_Batch);
LABELDP_NOISE_BENCH(BM_Staircase_Single);
LABELDP_NOISE_BENCH(BM_DiscreteStaircase_Batch);
LABELDP_NOISE_BENCH(BM_DiscreteStaircase_Single);

// The noise alone, in lattice steps: sigma^2 = 40, 4,000, 4e5 and 4e7.
double noise_s2(const benchmark::State& state) { return 40 * std::pow(10.0, double(state.range(0)) / 2); }
void BM_Noise_TabledDiscreteGaussian(benchmark::State& state) {
  const auto exact = labeldp::detail::dyadic_sampler(noise_s2(state));
  const auto table = labeldp::detail::TabledDiscreteGaussian::build(exact.m, exact.f);
  if (!table) return state.SkipWithError("no table");
  labeldp::SecureRandom gen;
  for (auto _ : state) benchmark::DoNotOptimize((*table)(gen));
  state.SetItemsProcessed(state.iterations());
}
void BM_Noise_ExactDiscreteGaussian(benchmark::State& state) {
  const auto exact = labeldp::detail::dyadic_sampler(noise_s2(state));
  labeldp::SecureRandom gen;
  for (auto _ : state) benchmark::DoNotOptimize(exact(gen));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Noise_TabledDiscreteGaussian)->Arg(0)->Arg(4)->Arg(8)->Arg(12);
BENCHMARK(BM_Noise_ExactDiscreteGaussian)->Arg(0)->Arg(4)->Arg(8)->Arg(12);

// Construction: the sigma search with exact deltas (Gaussians), the optimal plateau (staircases).
void BM_Construct_DiscreteGaussian(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(labeldp::DiscreteGaussianMechanism(0, 5000, eps_of(state), 1e-6, 50, true).sigma());
}
void BM_Construct_AnalyticGaussian(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(labeldp::AnalyticGaussianMechanism(0, 5000, eps_of(state), 1e-6, true).sigma());
}
void BM_Construct_Staircase(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(labeldp::StaircaseMechanism(0, 5000, eps_of(state), true).r());
}
LABELDP_NOISE_BENCH(BM_Construct_DiscreteGaussian);
LABELDP_NOISE_BENCH(BM_Construct_AnalyticGaussian);
LABELDP_NOISE_BENCH(BM_Construct_Staircase);

}  // namespace

BENCHMARK_MAIN();
