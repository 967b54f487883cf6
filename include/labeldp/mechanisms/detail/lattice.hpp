/// \file
/// Shared internals of the lattice baselines (mechanisms/gaussian.hpp, mechanisms/staircase.hpp):
/// the public lattice onto which labels are clipped and snapped, the constructors' validation, and
/// exact Bernoulli samplers for rational probabilities and for \f$e^{-n/d}\f$ (Canonne, Kamath and
/// Steinke 2020, Algorithm 1) in 128-bit integer arithmetic.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp::detail {

/// Throws unless lo < hi are finite (the messages of LabelGrid).
inline void validate_label_range(double lo, double hi) {
  validate_finite("lo", lo);
  validate_finite("hi", hi);
  if (!(lo < hi))
    throw std::invalid_argument("'lo' must be below 'hi', got lo = " + format_number(lo) +
                                ", hi = " + format_number(hi));
}

/// Throws unless delta is in (0, 1) and at least 1e-300 (below, the deltas computed in double
/// precision would underflow and could no longer certify the guarantee).
inline void validate_delta(double delta) {
  if (!(delta > 0 && delta < 1)) fail_parameter("delta", "must be in (0, 1)", delta);
  if (delta < 1e-300) fail_parameter("delta", "must be at least 1e-300", delta);
}

/// The public lattice \f$lo + g j\f$, j = 0..D, with the top point read as hi when outputs are
/// clipped. A label is clipped to [lo, hi] and snapped to the nearest lattice point; the map is
/// monotone, so two labels' indices differ by at most D (the sensitivity in lattice units).
struct Lattice {
  double lo = 0, hi = 1, step = 1;
  std::int64_t steps = 1;
  double top_value = 1;  ///< output for indices >= steps when clipping

  /// Lattice for a resolution R that divides hi - lo (the rules and messages of LabelGrid, with
  /// the parameter named 'resolution').
  static Lattice from_resolution(double lo, double hi, double resolution) {
    validate_label_range(lo, hi);
    validate_finite_positive("resolution", resolution);
    const double n = (hi - lo) / resolution, rounded = std::round(n);
    if (std::abs(n - rounded) > 1e-9 * std::max(1.0, n) || rounded < 1 || rounded > 2147483648.0)
      throw std::invalid_argument("'resolution' must divide hi - lo into 1 to 2^31 steps, got " +
                                  format_number(resolution) + " for [" + format_number(lo) + ", " + format_number(hi) +
                                  "]");
    return Lattice{lo, hi, resolution, std::int64_t(rounded), hi};
  }

  /// Lattice of power-of-two step g anchored at lo; D = round((hi - lo)/g).
  static Lattice power_of_two(double lo, double hi, double step) {
    const double n = std::round((hi - lo) / step);
    if (!(n >= 1 && n <= 4611686018427387904.0))
      throw std::invalid_argument("label range [" + format_number(lo) + ", " + format_number(hi) +
                                  "] needs a lattice of 1 to 2^62 steps of " + format_number(step));
    return Lattice{lo, hi, step, std::int64_t(n), std::min(hi, lo + step * n)};
  }

  /// Index of a label after clipping to [lo, hi] and snapping. \throws std::invalid_argument for NaN/inf.
  std::int64_t index(double y) const {
    if (!std::isfinite(y)) fail_parameter("label", "must be finite", y);
    if (y <= lo) return 0;
    if (y >= hi) return steps;
    return std::min<std::int64_t>(steps, std::llround((y - lo) / step));
  }
  /// Value of lattice index j (unclipped: any integer).
  double value(std::int64_t j) const { return lo + step * double(j); }
  /// Output value of a noisy index: clipped to [0, D] (top point hi) when `clip`.
  double output(std::int64_t j, bool clip) const {
    if (!clip) return value(j);
    if (j <= 0) return lo;
    if (j >= steps) return top();
    return value(j);
  }
  /// The value of the top index when clipping: hi for a resolution lattice, min(hi, lo + gD) otherwise.
  double top() const { return top_value; }

  /// Common mechanism-file fields: format, version, kind, eps, delta, sensitivity, lo, hi, clip.
  std::string json_head(const char* kind, double eps, double delta, bool clip) const {
    return std::string("{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":") + json_string(kind) +
           ",\"eps\":" + json_number(eps) + ",\"delta\":" + json_number(delta) +
           ",\"sensitivity\":" + json_number(hi - lo) + ",\"lo\":" + json_number(lo) + ",\"hi\":" + json_number(hi) +
           ",\"clip\":" + (clip ? "true" : "false");
  }
};

/// Random bits drawn from a generator 64 at a time and handed out as needed, so that the small
/// exact draws of the samplers (a sign, Bernoulli(1/K), a Bernoulli of a double's binary
/// expansion) cost a few bits instead of a 64-bit word each. Mechanisms create one per label and
/// drop its unused bits afterwards, so a batch call draws exactly what repeated single calls draw.
template <std::uniform_random_bit_generator G>
class NoiseBits {
 public:
  explicit NoiseBits(G& gen) : m_gen(gen) {}

  /// k uniformly random bits, 1 <= k <= 64.
  std::uint64_t bits(int k) {
    if (k == 64) return random_u64(m_gen);
    if (m_left < k) {
      m_buf = random_u64(m_gen);
      m_left = 64;
    }
    const std::uint64_t r = m_buf & ((std::uint64_t(1) << k) - 1);
    m_buf >>= k;
    m_left -= k;
    return r;
  }
  bool bit() { return bits(1) != 0; }

  /// Exactly uniform on [0, m), m >= 1, by rejection on ceil(log2 m) bits (fewer than 2 tries).
  u128 below(u128 m) {
    if (m <= 1) return 0;
    const u128 top = m - 1;
    const std::uint64_t hi = std::uint64_t(top >> 64);
    const int k = hi ? 64 + std::bit_width(hi) : std::bit_width(std::uint64_t(top));
    for (;;) {
      const u128 v = k <= 64 ? u128(bits(k)) : (u128(bits(k - 64)) << 64) | u128(bits(64));
      if (v < m) return v;
    }
  }

  /// True with probability exactly n/d (0 <= n <= d, 1 <= d < 2^127): a uniform real U is
  /// compared digit by digit with the binary expansion of n/d (long division), two bits on average.
  bool ratio(u128 n, u128 d) {
    if (n >= d) return true;
    u128 r = n;
    while (r != 0) {
      r <<= 1;
      const bool digit = r >= d;
      if (digit) r -= d;
      if (bit() != digit) return digit;
    }
    return false;
  }

  /// True with probability exactly p (the double's exact dyadic value): the random real U is
  /// compared with p bit by bit, drawing two bits on average.
  bool bernoulli(double p) {
    if (!(p >= 0 && p <= 1)) fail_parameter("p", "must be a probability in [0, 1]", p);
    if (p == 1) return true;
    while (p > 0) {
      p *= 2;  // exact: the next binary digit of p moves before the point
      const bool digit = p >= 1;
      if (digit) p -= 1;  // exact (p in [1, 2))
      const bool u = bit();
      if (u != digit) return digit;  // U's digit 0 where p's is 1: U < p
    }
    return false;
  }

 private:
  G& m_gen;
  std::uint64_t m_buf = 0;
  int m_left = 0;
};

/// True with probability exactly n/d (0 <= n <= d, d >= 1).
template <typename G>
bool bernoulli_ratio(u128 n, u128 d, NoiseBits<G>& bits) {
  return bits.ratio(n, d);
}

/// True with probability exactly \f$e^{-n/d}\f$ (Canonne, Kamath and Steinke 2020, Algorithm 1):
/// for \f$\gamma = n/d \le 1\f$ the parity of the first K with Bernoulli(gamma/K) = 0; for larger
/// gamma, floor(gamma) independent Bernoulli(e^-1) and one Bernoulli(e^-(gamma - floor gamma)).
/// \pre d < 2^113 (so d K fits in 128 bits for every K that can occur: K > 2^14 has probability
/// below 1/(2^14)!, and then std::logic_error is thrown rather than an inexact answer).
template <typename G>
bool bernoulli_exp_minus(u128 n, u128 d, NoiseBits<G>& bits) {
  auto unit = [&](u128 num, u128 den) {  // e^{-num/den}, num <= den
    std::uint64_t k = 1;
    while (bernoulli_ratio(num, den * k, bits)) {
      if (++k > (std::uint64_t(1) << 14)) throw std::logic_error("bernoulli_exp_minus: impossible trial count");
    }
    return (k & 1) == 1;
  };
  if (n <= d) return unit(n, d);
  for (u128 q = n / d; q > 0; --q)
    if (!unit(1, 1)) return false;
  return unit(n % d, d);
}

/// Power sum \f$\sum_{i=0}^{n-1} i^m\f$ for m = 0, 1, 2 (in double; n < 2^53).
inline double power_sum(int m, double n) {
  if (n <= 0) return 0;
  if (m == 0) return n;
  if (m == 1) return n * (n - 1) / 2;
  return (n - 1) * n * (2 * n - 1) / 6;
}

}  // namespace labeldp::detail
