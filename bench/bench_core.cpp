// Core primitives: generator throughput, exact samplers and the constant-work finite-mechanism
// sampler (items/s per core).
#include <benchmark/benchmark.h>

#include <cmath>
#include <labeldp/core/alias_table.hpp>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/clipped_discrete_laplace.hpp>
#include <labeldp/core/mechanism.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/core/sampling.hpp>
#include <random>
#include <span>
#include <vector>

#include "sampling_loops.hpp"

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

// Finite mechanisms (constant work: one word per label) with the default SecureRandom: k-ary
// randomized response on k labels at eps = 1, capped to eps exactly; labels/s with one call
// per label, with the batch interface, and by input index (no label lookup).
labeldp::FiniteMechanism<> rr_mechanism(int k) {
  const double eps = 1.0, e = std::exp(eps);
  labeldp::Matrix<> P(k, k);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) P(i, j) = (i == j ? e : 1.0) / (e + k - 1);
  labeldp::cap_to_epsilon(P, eps);
  labeldp::Vector<> v(k);
  for (int i = 0; i < k; ++i) v[i] = i;
  return labeldp::FiniteMechanism<>(v, v, P);
}

std::vector<double> finite_labels(int k) {
  std::vector<double> y(4096);
  for (std::size_t t = 0; t < y.size(); ++t) y[t] = double((t * 2654435761u) % std::size_t(k));
  return y;
}

void BM_FiniteMechanism_Single(benchmark::State& state) {
  const int k = int(state.range(0));
  labeldp::bench::run_single(state, rr_mechanism(k), finite_labels(k));
}
BENCHMARK(BM_FiniteMechanism_Single)->Arg(8)->Arg(52)->Arg(401);

void BM_FiniteMechanism_Batch(benchmark::State& state) {
  const int k = int(state.range(0));
  labeldp::bench::run_batch(state, rr_mechanism(k), finite_labels(k));
}
BENCHMARK(BM_FiniteMechanism_Batch)->Arg(8)->Arg(52)->Arg(401);

void BM_FiniteMechanism_Index(benchmark::State& state) {
  const int k = int(state.range(0));
  const auto m = rr_mechanism(k);
  std::vector<labeldp::Index> idx(4096);
  for (std::size_t t = 0; t < idx.size(); ++t) idx[t] = labeldp::Index((t * 2654435761u) % std::size_t(k));
  labeldp::SecureRandom gen;
  labeldp::Index acc = 0;
  for (auto _ : state) {
    for (labeldp::Index i : idx) acc += m.sample_index(i, gen);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(idx.size()));
}
BENCHMARK(BM_FiniteMechanism_Index)->Arg(8)->Arg(401);

// Discrete Laplace noise alone at scales 1, 1e3, 1e6 grid steps, SecureRandom.
void BM_DiscreteLaplace(benchmark::State& state) {
  const auto noise = labeldp::DiscreteLaplace::for_privacy(1.0 / double(state.range(0)), 1);
  labeldp::SecureRandom gen;
  std::int64_t acc = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) acc += noise(gen);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_DiscreteLaplace)->Arg(1)->Arg(1000)->Arg(1000000);

// The constant-work samplers offered to RR-on-Bins and the clipped discrete Laplace mechanism:
// one word and one label-independent table entry per label.
void BM_CyclicRandomizedResponse(benchmark::State& state) {
  const labeldp::CyclicRandomizedResponse rr(labeldp::Index(state.range(0)), 1.0);
  labeldp::SecureRandom gen;
  labeldp::Index acc = 0, bin = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) {
      acc += rr(bin, gen);
      bin = bin + 1 == rr.size() ? 0 : bin + 1;
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_CyclicRandomizedResponse)->Arg(10)->Arg(401);

void BM_ClippedDiscreteLaplace(benchmark::State& state) {
  const labeldp::Index n = labeldp::Index(state.range(0));
  const labeldp::ClippedDiscreteLaplace noise(n, 1.0);
  labeldp::SecureRandom gen;
  labeldp::Index acc = 0, y = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1024; ++i) {
      acc += noise(y, gen);
      y = y == n ? 0 : y + 1;
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_ClippedDiscreteLaplace)->Arg(100)->Arg(65536);

}  // namespace

BENCHMARK_MAIN();
