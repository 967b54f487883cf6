// Priors shared by the benchmark programs (one definition each, so that every bench and the
// Python timing scripts, which repeat the formulas, measure the same instances).
#pragma once

#include <cmath>
#include <cstdint>
#include <labeldp/core/prior.hpp>
#include <vector>

namespace labeldp::bench {

/// Weeks-worked-like prior (k = 52, labels 1..52): a smooth ramp with spikes at 26, 40, 48, 50
/// and most mass at 52 (bench/highs_unbiased.py and bench/highs_solvers.py repeat it).
inline FinitePrior<> weeks_prior() {
  std::vector<double> v, w;
  for (int y = 1; y <= 52; ++y) {
    v.push_back(y);
    double p = 0.2 + 0.02 * y;
    if (y == 52) p += 30;
    if (y == 50) p += 2;
    if (y == 48) p += 1.5;
    if (y == 40) p += 3;
    if (y == 26) p += 2;
    w.push_back(p);
  }
  return FinitePrior<>::from_weights(v, w);
}

/// Smooth heavy-tailed (lognormal-like) prior on labels 0..k-1: weight
/// exp(-(ln(y + 1) - 3)^2 / 2) / (y + 1) (bench/highs_solvers.py repeats it).
inline FinitePrior<> lognormal_prior(int k) {
  std::vector<double> v, w;
  for (int y = 0; y < k; ++y) {
    const double t = std::log(y + 1.0) - 3.0;
    v.push_back(y);
    w.push_back(std::exp(-t * t / 2) / (y + 1.0));
  }
  return FinitePrior<>::from_weights(v, w);
}

/// The near-uniform (diabetes-like) prior: k integer labels 25 + floor(321 i / (k - 1)),
/// weights 0.5 + x_{i+1} / 2^32 from the LCG x_{i+1} = (1664525 x_i + 1013904223) mod 2^32,
/// x_0 = 2023; `zeros`: weight 0 at every i = 3 mod 7 (bench/highs_solvers.py and
/// bench/highs_optimal_lp.py repeat it).
inline FinitePrior<> uniform_prior(int k, bool zeros) {
  std::vector<double> v, w;
  std::uint64_t x = 2023;
  for (int i = 0; i < k; ++i) {
    x = (1664525u * x + 1013904223u) % 4294967296u;
    v.push_back(25.0 + double((std::int64_t(i) * 321) / (k - 1)));
    w.push_back(zeros && i % 7 == 3 ? 0.0 : 0.5 + double(x) / 4294967296.0);
  }
  return FinitePrior<>::from_weights(v, w);
}

}  // namespace labeldp::bench
