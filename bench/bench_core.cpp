// Core primitives: generator throughput and exact samplers (items/s per core).
#include <benchmark/benchmark.h>

#include <labeldp/core/random.hpp>
#include <labeldp/core/sampling.hpp>
#include <random>

namespace {

template <typename G>
void BM_Generator(benchmark::State& state) {
  G gen = [] {
    if constexpr (std::is_same_v<G, labeldp::SeededRandom>)
      return G(1);
    else if constexpr (std::is_same_v<G, std::mt19937_64>)
      return G(1);
    else
      return G();
  }();
  std::uint64_t acc = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) acc ^= gen();
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 1024);
  state.SetBytesProcessed(state.iterations() * 1024 * 8);
}
BENCHMARK_TEMPLATE(BM_Generator, labeldp::SecureRandom);
BENCHMARK_TEMPLATE(BM_Generator, labeldp::SeededRandom);
BENCHMARK_TEMPLATE(BM_Generator, std::mt19937_64);

void BM_Bernoulli(benchmark::State& state) {
  labeldp::SecureRandom gen;
  long long hits = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) hits += labeldp::bernoulli(0.3141592653589793, gen);
    benchmark::DoNotOptimize(hits);
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_Bernoulli);

void BM_UniformBelow(benchmark::State& state) {
  labeldp::SecureRandom gen;
  std::uint64_t acc = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) acc += labeldp::uniform_below(401, gen);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_UniformBelow);

void BM_DiscreteDistribution(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  Eigen::VectorXd w(n);
  for (Eigen::Index i = 0; i < n; ++i) w[i] = 1.0 + double(i % 17);
  labeldp::DiscreteDistribution d(w);
  labeldp::SecureRandom gen;
  Eigen::Index acc = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) acc += d(gen);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_DiscreteDistribution)->Arg(8)->Arg(416)->Arg(100000);

void BM_TwoSidedGeometric(benchmark::State& state) {
  labeldp::SecureRandom gen;
  const double alpha = labeldp::discrete_laplace_alpha(0.1, 2.0);
  std::int64_t acc = 0;
  for (auto _ : state) {
    acc += labeldp::two_sided_geometric(alpha, gen);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TwoSidedGeometric);

}  // namespace

BENCHMARK_MAIN();
