// The continuous optimal unbiased and bias-bounded randomizers (Badanidiyuru et al. 2023, outputs
// anywhere on the real line; |E[M(y)] - y| <= B for the bias bound) on three prior shapes: the
// weeks-like prior (k = 52, spiky), a near-uniform prior (k = 214, diabetes-like, generated;
// optionally with every seventh label at probability zero) and a smooth heavy-tailed
// lognormal-like prior (k = 401), and the same lognormal shape at k = 100, 150 and 200 with a loose
// bias bound (B = 20 on labels 0..k-1: few bias rows active, a wide optimal dual face). Each case
// reports whether it was certified, the relative gap between the loss and the certified lower
// bound, and the interior-point and simplex counters.
//
// Arguments: prior (0 weeks, 1 near-uniform, 2 near-uniform with zeros, 3 lognormal k = 401,
// 4 lognormal k = 100, 5 lognormal k = 150, 6 lognormal k = 200), B (0 = unbiased), 10 eps
// (1, 4, 12 for priors 0-3, and 2, 3, 8 with B = 5 and 20 for prior 3; 1, 2, 4 with B = 20 for
// priors 4-5; 1, 4, 12 with B = 5 and 20 for priors 4-6). BM_ContinuousPerturbed: lognormal k,
// B, 10 eps, over nine copies of the prior perturbed by up to 1e-9 relative (the worst counts).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <labeldp/mechanisms/unbiased.hpp>
#include <random>
#include <vector>

#include "bench_priors.hpp"

namespace {

using labeldp::FinitePrior;

// Near-uniform (diabetes-like): integer labels from 25 with gaps of 1 or 2, weights uniform
// +-50% (a generated prior, not a data set).
FinitePrior<> near_uniform_prior(int k, unsigned seed, int zero_period) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> v, w;
  double x = 25;
  for (int i = 0; i < k; ++i) {
    v.push_back(x);
    x += 1 + (g() % 3 == 0);
    const double p = u(g);
    w.push_back(zero_period > 0 && i % zero_period == 3 ? 0.0 : p);
  }
  return FinitePrior<>::from_weights(v, w);
}

using labeldp::bench::lognormal_prior;

FinitePrior<> prior_of(int which) {
  switch (which) {
    case 0:
      return labeldp::bench::weeks_prior();
    case 1:
      return near_uniform_prior(214, 5, 0);
    case 2:
      return near_uniform_prior(214, 5, 7);
    case 4:
      return lognormal_prior(100);
    case 5:
      return lognormal_prior(150);
    case 6:
      return lognormal_prior(200);
    default:
      return lognormal_prior(401);
  }
}

// A case's options: the bias bound B = state.range(1) (0: unbiased), the size limit lifted to
// the prior's.
labeldp::UnbiasedOptions options_of(const benchmark::State& state, labeldp::Index labels) {
  labeldp::UnbiasedOptions options;
  options.max_bias = double(state.range(1));
  options.max_labels = labels;
  return options;
}

// Optimal, with a certified bound within a relative 1e-9 below the loss.
bool certified(const labeldp::UnbiasedResult<>& r) {
  return r.optimal() && r.lower_bound <= r.expected_loss && (r.expected_loss - r.lower_bound) / r.expected_loss <= 1e-9;
}

void BM_Continuous(benchmark::State& state) {
  const auto prior = prior_of(int(state.range(0)));
  const labeldp::UnbiasedOptions options = options_of(state, prior.size());
  const double eps = double(state.range(2)) / 10;
  labeldp::UnbiasedResult<> r;
  for (auto _ : state) r = labeldp::optimal_unbiased_continuous(prior, eps, options);
  const double gap = (r.expected_loss - r.lower_bound) / r.expected_loss;
  state.counters["certified"] = certified(r) ? 1 : 0;
  state.counters["gap"] = gap;
  state.counters["loss"] = r.expected_loss;
  state.counters["ipm_steps"] = double(r.interior_point_iterations);
  state.counters["pivots"] = double(r.simplex_iterations);
  state.counters["rounds"] = double(r.rounds);
}
BENCHMARK(BM_Continuous)
    ->ArgNames({"prior", "B", "eps10"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 5, 20}, {10, 40, 120}})
    ->ArgsProduct({{3}, {5, 20}, {20, 30, 80}})
    ->ArgsProduct({{4, 5}, {20}, {10, 20, 40}})
    ->ArgsProduct({{4, 5, 6}, {5, 20}, {10, 40, 120}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The same solves on priors a user might bring: the lognormal prior with each probability
// perturbed by a uniform relative error of at most 1e-9 (seeds 1..8, and seed 0 unperturbed).
// The bias-bounded path's count of re-solves and its crossover swing with roundoff, so one prior
// can hide a slow tail: the counters are the worst and the median CPU seconds of the nine
// solves, how many needed column generation, and how many were not certified.
void BM_ContinuousPerturbed(benchmark::State& state) {
  const auto base = lognormal_prior(int(state.range(0)));
  const labeldp::UnbiasedOptions options = options_of(state, base.size());
  const double eps = double(state.range(2)) / 10;
  std::vector<double> seconds;
  double with_column_generation = 0, uncertified = 0;
  for (auto _ : state) {
    seconds.clear();
    with_column_generation = uncertified = 0;
    for (unsigned seed = 0; seed <= 8; ++seed) {
      std::mt19937_64 g(seed);
      std::uniform_real_distribution<double> u(-1e-9, 1e-9);
      std::vector<double> values, weights;
      for (labeldp::Index i = 0; i < base.size(); ++i) {
        values.push_back(base.value(i));
        weights.push_back(base.probability(i) * (1 + (seed > 0 ? u(g) : 0.0)));
      }
      const auto prior = FinitePrior<>::from_weights(values, weights);
      const std::clock_t start = std::clock();
      const auto r = labeldp::optimal_unbiased_continuous(prior, eps, options);
      seconds.push_back(double(std::clock() - start) / CLOCKS_PER_SEC);
      with_column_generation += r.rounds > 0;
      uncertified += !certified(r);
    }
  }
  std::sort(seconds.begin(), seconds.end());
  state.counters["worst_s"] = seconds.back();
  state.counters["median_s"] = seconds[seconds.size() / 2];
  state.counters["with_cg"] = with_column_generation;
  state.counters["uncertified"] = uncertified;
}
BENCHMARK(BM_ContinuousPerturbed)
    ->ArgNames({"k", "B", "eps10"})
    ->ArgsProduct({{100, 150, 200}, {20}, {10, 20, 40}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
