// The prior shapes the solver tests sweep (issue "solvers that never stall": every shape, not
// the papers' prior), and their names for test messages. Each test builds its own priors of
// these shapes; the names are shared. One instance is shared too: the benchmarks' near-uniform
// prior, which two tests check at the benchmark's own size.
#pragma once

#include <cstdint>
#include <vector>

#include "labeldp/core/prior.hpp"

namespace labeldp::test {

enum class Shape { NearUniform, Spiky, HeavyTailed, WithZeros };

inline const char* shape_name(Shape s) {
  switch (s) {
    case Shape::NearUniform:
      return "near-uniform";
    case Shape::Spiky:
      return "spiky";
    case Shape::HeavyTailed:
      return "heavy-tailed";
    case Shape::WithZeros:
      return "with-zeros";
  }
  return "?";
}

/// The benchmarks' near-uniform (diabetes-like) prior, bench/bench_priors.hpp's uniform_prior():
/// k integer labels 25 + floor(321 i / (k - 1)), weights 0.5 + x_{i+1} / 2^32 from the LCG
/// x_{i+1} = (1664525 x_i + 1013904223) mod 2^32, x_0 = 2023; `zeros`: weight 0 at every
/// i = 3 mod 7.
inline FinitePrior<> benchmark_near_uniform_prior(int k, bool zeros) {
  std::vector<double> v, w;
  std::uint64_t x = 2023;
  for (int i = 0; i < k; ++i) {
    x = (1664525u * x + 1013904223u) % 4294967296u;
    v.push_back(25.0 + double((std::int64_t(i) * 321) / (k - 1)));
    w.push_back(zeros && i % 7 == 3 ? 0.0 : 0.5 + double(x) / 4294967296.0);
  }
  return FinitePrior<>::from_weights(v, w);
}

}  // namespace labeldp::test
