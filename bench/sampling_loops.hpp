// The two loops every labels-per-second benchmark times: one sample(y, gen) call per label, and
// the batch interface sample(in, out, gen), both with the default SecureRandom (ChaCha20 keyed
// from the OS). Items processed = labels sampled.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <labeldp/core/random.hpp>
#include <span>
#include <vector>

namespace labeldp::bench {

template <typename M>
void run_single(benchmark::State& state, const M& m, const std::vector<double>& labels) {
  labeldp::SecureRandom gen;
  double sink = 0;
  for (auto _ : state) {
    for (double y : labels) sink += m.sample(y, gen);
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(labels.size()));
}

template <typename M>
void run_batch(benchmark::State& state, const M& m, const std::vector<double>& labels) {
  std::vector<double> out(labels.size());
  labeldp::SecureRandom gen;
  for (auto _ : state) {
    m.sample(std::span<const double>(labels), std::span<double>(out), gen);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(labels.size()));
}

}  // namespace labeldp::bench
