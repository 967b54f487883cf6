/// \file
/// Exact samplers. None of them compares a floating-point uniform with a probability
/// (`u < p`) or inverts a floating-point CDF: such samplers realize a distribution that differs
/// from the intended one in ways that can leak the input (Mironov 2012). Every sampler here
/// realizes its stated distribution exactly, using integer comparisons on random bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "labeldp/core/random.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

namespace detail {
__extension__ typedef unsigned __int128 u128;

inline u128 random_u128_bits(unsigned bits, std::uint64_t lo, std::uint64_t hi) {
  u128 v = (u128(hi) << 64) | u128(lo);
  return bits >= 128 ? v : (v & ((u128(1) << bits) - 1));
}
}  // namespace detail

/// A uniformly random integer in [0, n), exactly (Lemire's multiply-and-reject).
/// \pre n >= 1.
template <std::uniform_random_bit_generator G>
std::uint64_t uniform_below(std::uint64_t n, G& gen) {
  std::uint64_t x = random_u64(gen);
  detail::u128 m = detail::u128(x) * detail::u128(n);
  std::uint64_t low = std::uint64_t(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      x = random_u64(gen);
      m = detail::u128(x) * detail::u128(n);
      low = std::uint64_t(m);
    }
  }
  return std::uint64_t(m >> 64);
}

/// True with probability exactly `p` (the double's exact dyadic value), p in [0, 1].
/// Compares 64 random bits at a time with the binary expansion of p; expected 1 + 2^-63 draws.
/// \throws std::invalid_argument when p is NaN or outside [0, 1].
template <std::uniform_random_bit_generator G>
bool bernoulli(double p, G& gen) {
  if (!(p >= 0 && p <= 1)) detail::fail_parameter("p", "must be a probability in [0, 1]", p);
  if (p == 1) return true;
  constexpr double two64 = 18446744073709551616.0;  // 2^64: scaling by it is exact
  while (p > 0) {
    const double scaled = p * two64;                   // < 2^64
    const std::uint64_t q = static_cast<std::uint64_t>(scaled);  // floor (scaled >= 0)
    const std::uint64_t u = random_u64(gen);
    if (u < q) return true;
    if (u > q) return false;
    p = scaled - static_cast<double>(q);  // exact fractional part: the next 64 bits of the expansion
  }
  return false;
}

/// The ratio parameter alpha of a two-sided geometric (discrete Laplace) distribution with
/// privacy `eps` for integer-valued queries of L1 sensitivity `sensitivity`:
/// \f$\alpha = e^{-\varepsilon/\Delta}\f$, rounded up to the next double so the realized
/// guarantee \f$\Delta \ln(1/\alpha)\f$ never exceeds eps.
inline double discrete_laplace_alpha(double eps, double sensitivity) {
  validate_epsilon(eps);
  validate_finite_positive("sensitivity", sensitivity);
  const double a = std::exp(-eps / sensitivity);
  return std::nextafter(a, 1.0);
}

/// A sample of the two-sided geometric distribution \f$P(z) = \frac{1-\alpha}{1+\alpha}\alpha^{|z|}\f$
/// on the integers, exactly, as the difference of two geometric variables, each drawn by exact
/// Bernoulli(alpha) trials. Expected \f$2/(1-\alpha)\f$ Bernoulli draws.
/// \throws std::invalid_argument unless 0 <= alpha < 1.
template <std::uniform_random_bit_generator G>
std::int64_t two_sided_geometric(double alpha, G& gen) {
  if (!(alpha >= 0 && alpha < 1)) detail::fail_parameter("alpha", "must be in [0, 1)", alpha);
  auto geometric = [&]() {
    std::int64_t g = 0;
    while (bernoulli(alpha, gen)) ++g;
    return g;
  };
  const std::int64_t a = geometric();
  const std::int64_t b = geometric();
  return a - b;
}

/// Exact categorical sampling in O(1) per draw (Walker's alias method in integer arithmetic).
///
/// The weights are converted once to 128-bit integers \f$w_i\f$: the largest gets
/// \f$124 - 2\lceil\log_2 n\rceil\f$ bits, a weight \f$2^{-b}\f$ times the largest keeps that many
/// bits less (relative rounding error below \f$2^{-60}\f$ for n <= 4096 and b <= 40), and a
/// positive weight never becomes 0; and the alias table is built with exact integer arithmetic. A draw picks a
/// column uniformly and compares an exact uniform integer with the column's integer threshold,
/// so outcome i is returned with probability exactly \f$w_i / \sum_j w_j\f$; realized()
/// reports those probabilities, which audits can check.
class DiscreteDistribution {
 public:
  DiscreteDistribution() = default;

  /// \throws std::invalid_argument when `weights` is empty, holds a negative or non-finite
  ///         weight, or sums to 0.
  template <typename Derived>
  explicit DiscreteDistribution(const Eigen::DenseBase<Derived>& weights) {
    const Index n = weights.size();
    if (n == 0) throw std::invalid_argument("'weights' must not be empty");
    double wmax = 0;
    for (Index i = 0; i < n; ++i) {
      const double w = double(weights(i));
      if (!std::isfinite(w) || w < 0) detail::fail_parameter("weight", "must be finite and non-negative", w);
      wmax = std::max(wmax, w);
    }
    if (!(wmax > 0)) throw std::invalid_argument("'weights' are all 0: at least one must be positive");
    // Scale so that n * sum(w_int) < 2^126: max weight below 2^(125 - ceil(log2 n) - ceil(log2 n)).
    int lgn = 0;
    while ((Index(1) << lgn) < n) ++lgn;
    const int target_bits = 124 - 2 * lgn;
    const int shift = target_bits - (std::ilogb(wmax) + 1);
    m_weights.resize(std::size_t(n));
    m_total = 0;
    for (Index i = 0; i < n; ++i) {
      const double w = double(weights(i));
      detail::u128 wi = 0;
      if (w > 0) {
        const double scaled = std::nearbyint(std::ldexp(w, shift));
        wi = scaled >= 1 ? static_cast<detail::u128>(scaled) : detail::u128(1);
      }
      m_weights[std::size_t(i)] = wi;
      m_total += wi;
    }
    build();
  }

  /// Number of outcomes.
  Index size() const { return Index(m_weights.size()); }

  /// An outcome in [0, size()), with probability exactly realized(i).
  template <std::uniform_random_bit_generator G>
  Index operator()(G& gen) const {
    const std::uint64_t col = m_weights.size() == 1 ? 0 : uniform_below(m_weights.size(), gen);
    const detail::u128 v = uniform_total(gen);
    return v < m_threshold[col] ? Index(col) : m_alias[col];
  }

  /// The probability with which operator() returns outcome i (exactly w_i / sum w, rounded to
  /// the nearest long double).
  long double realized(Index i) const {
    return static_cast<long double>(m_weights[std::size_t(i)]) / static_cast<long double>(m_total);
  }

 private:
  template <std::uniform_random_bit_generator G>
  detail::u128 uniform_total(G& gen) const {
    for (;;) {
      const std::uint64_t lo = random_u64(gen);
      const std::uint64_t hi = m_total_bits > 64 ? random_u64(gen) : 0;
      const detail::u128 v = detail::random_u128_bits(m_total_bits, lo, hi);
      if (v < m_total) return v;
    }
  }

  void build() {
    const std::size_t n = m_weights.size();
    m_total_bits = 0;
    while (m_total_bits < 128 && (detail::u128(1) << m_total_bits) < m_total) ++m_total_bits;
    m_threshold.assign(n, 0);
    m_alias.assign(n, 0);
    // Work in units where each column holds m_total: outcome i owns n * w_i.
    std::vector<detail::u128> mass(n);
    std::vector<std::size_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      mass[i] = m_weights[i] * detail::u128(n);
      (mass[i] < m_total ? small : large).push_back(i);
    }
    while (!small.empty() && !large.empty()) {
      const std::size_t s = small.back();
      small.pop_back();
      const std::size_t l = large.back();
      m_threshold[s] = mass[s];
      m_alias[s] = Index(l);
      mass[l] -= (m_total - mass[s]);
      if (mass[l] < m_total) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // Exact arithmetic leaves every remaining column exactly full.
    for (std::size_t i : large) { m_threshold[i] = m_total; m_alias[i] = Index(i); }
    for (std::size_t i : small) { m_threshold[i] = m_total; m_alias[i] = Index(i); }
  }

  std::vector<detail::u128> m_weights;
  std::vector<detail::u128> m_threshold;
  std::vector<Index> m_alias;
  detail::u128 m_total = 0;
  unsigned m_total_bits = 0;
};

}  // namespace labeldp
