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
// priors 4-5; 1, 4, 12 with B = 5 and 20 for priors 4-6).
#include <benchmark/benchmark.h>

#include <cmath>
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

void BM_Continuous(benchmark::State& state) {
  const auto prior = prior_of(int(state.range(0)));
  labeldp::UnbiasedOptions options;
  options.max_bias = double(state.range(1));
  options.max_labels = prior.size();
  const double eps = double(state.range(2)) / 10;
  labeldp::UnbiasedResult<> r;
  for (auto _ : state) r = labeldp::optimal_unbiased_continuous(prior, eps, options);
  const double gap = (r.expected_loss - r.lower_bound) / r.expected_loss;
  state.counters["certified"] = r.optimal() && r.lower_bound <= r.expected_loss && gap <= 1e-9 ? 1 : 0;
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

}  // namespace

BENCHMARK_MAIN();
