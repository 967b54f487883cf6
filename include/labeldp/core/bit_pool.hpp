/// \file
/// Exact bit-level Bernoulli draws: a rational probability num/den and \f$e^{-n/d}\f$
/// (Canonne, Kamath and Steinke 2020, Algorithm 1), taking random bits a few at a time from
/// 64-bit words (detail::BitPool). The word-level samplers (bernoulli(), uniform_below(),
/// DiscreteLaplace, DiscreteDistribution) are in core/sampling.hpp, which includes this header;
/// the tabled noise of core/tabled_discrete_laplace.hpp uses BitPool for its e^-x trials.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include "labeldp/core/random.hpp"

namespace labeldp {

namespace detail {
__extension__ typedef unsigned __int128 u128;

/// Random bits taken a few at a time from 64-bit draws, so that an exact Bernoulli draw costs
/// 2 to 8 bits instead of a 64-bit word. A pool lives for one sample only (a batch then
/// draws exactly what repeated single calls draw).
template <std::uniform_random_bit_generator G>
class BitPool {
 public:
  explicit BitPool(G& gen) : m_gen(gen) {}

  bool bit() {
    if (m_left == 0) {
      m_buf = random_u64(m_gen);
      m_left = 64;
    }
    const bool b = (m_buf & 1) != 0;
    m_buf >>= 1;
    --m_left;
    return b;
  }

  /// k uniformly random bits, 0 <= k <= 64. When fewer than k are left they are dropped (they
  /// are independent of everything drawn) and a fresh word is taken: one branch, no splicing.
  std::uint64_t bits(unsigned k) {
    if (k > m_left) {
      m_buf = random_u64(m_gen);
      m_left = 64;
    }
    const std::uint64_t v = k >= 64 ? m_buf : (m_buf & ((std::uint64_t(1) << k) - 1));
    m_buf = k >= 64 ? 0 : (m_buf >> k);
    m_left -= k;
    return v;
  }

  /// Uniform on {0, ..., n-1}, exactly (rejection on the smallest number of bits), n >= 1.
  std::uint64_t uniform(std::uint64_t n) {
    if (n <= 1) return 0;
    const unsigned k = unsigned(std::bit_width(n - 1));
    for (;;) {
      const std::uint64_t v = bits(k);
      if (v < n) return v;
    }
  }

  /// True with probability exactly num/den (den >= 1): random bits compared lazily with the
  /// binary expansion of num/den computed by long division; two bits expected.
  bool bernoulli(std::uint64_t num, std::uint64_t den) {
    if (num == 0) return false;
    if (num >= den) return true;
    // num < den <= 2^64 - 1: r < den, so 2r may need 65 bits; keep it in 128.
    u128 r = num;
    for (;;) {
      r <<= 1;
      const bool b = r >= den;
      if (b) r -= den;
      const bool x = bit();
      if (x != b) return b;      // first differing bit: uniform < p exactly when p's bit is 1
      if (r == 0) return false;  // p's expansion ended: the uniform is >= p
    }
  }

  /// True with probability exactly 1/k, k >= 1: 8-bit chunks of random bits compared with the
  /// expansion of 1/k, whose words come from long division (a table for k <= 64).
  bool bernoulli_inverse(std::uint64_t k) {
    if (k <= 1) return true;
    // 1/k = sum of words w_i 2^(-64 i), w_i = floor(rem_i 2^64 / k); the first word from a
    // table for small k (a 128-bit division costs more than the rest of the draw).
    u128 rem;
    std::uint64_t w;
    if (k < kInverseTableSize) {
      w = inverse_table()[k];
      rem = (u128(1) << 64) - u128(w) * k;
    } else {
      w = std::uint64_t((u128(1) << 64) / k);
      rem = (u128(1) << 64) % k;
    }
    return bernoulli_expansion(w, rem, k);
  }

  /// True with probability exactly \f$(w + r/d)/2^{64}\f$ for \f$0 \le r < d\f$: 8-bit chunks of
  /// random bits against w from bit `shift` down (56: all of w; 48 once its top byte tied), then
  /// against the expansion of r/d by long division.
  bool bernoulli_expansion(std::uint64_t w, u128 r, std::uint64_t d, int shift = 56) {
    for (;;) {
      for (; shift >= 0; shift -= 8) {
        const std::uint64_t c = bits(8), b = (w >> shift) & 0xff;
        if (c != b) return c < b;
      }
      if (r == 0) return false;
      const u128 scaled = r << 64;
      w = std::uint64_t(scaled / d);
      r = scaled % d;
      shift = 56;
    }
  }

  /// True with probability exactly \f$e^{-y}\f$, \f$y = w/2^{64} < 1\f$ (Canonne, Kamath and
  /// Steinke 2020, Algorithm 1: K = the number of successes of Bernoulli(y/j), j = 1, 2, ...,
  /// before the first failure; true iff K is even), Bernoulli(y/j) comparing random bits with
  /// the expansion of \f$y/j = (\lfloor w/j \rfloor + (w \bmod j)/j)\,2^{-64}\f$. Trials 1 and 2
  /// take one byte each from one 16-bit draw and are settled by one well-predicted branch (each
  /// trial is a coin flip: a branch per trial is mispredicted about half the time); a byte that
  /// ties with the top byte of y/j (probability 1/256) is continued exactly, and trials 3, 4, ...
  /// (probability \f$y^2/2\f$) follow one at a time.
  bool exp_neg_fraction(std::uint64_t w) {
    const std::uint64_t c = bits(16), c1 = c & 0xff, c2 = c >> 8, b1 = w >> 56, b2 = w >> 57;
    const bool s1 = c1 < b1, s2 = c2 < b2;
    if ((c1 != b1) & (c2 != b2) & !(s1 & s2)) [[likely]]
      return !s1;  // trial 1 failed (K = 0), or trial 1 succeeded and trial 2 failed (K = 1)
    return exp_neg_fraction_rest(w, c1, c2);
  }

  /// exp_neg_fraction() past its first byte pair (a tie, or both trials succeeded): out of line,
  /// so that the common case inlines into the samplers' loops without this code.
  [[gnu::noinline]] bool exp_neg_fraction_rest(std::uint64_t w, std::uint64_t c1, std::uint64_t c2) {
    const std::uint64_t b1 = w >> 56, b2 = w >> 57;
    if (c1 > b1 || (c1 == b1 && !bernoulli_expansion(w, 0, 1, 48))) return true;            // K = 0
    if (c2 > b2 || (c2 == b2 && !bernoulli_expansion(w >> 1, w & 1, 2, 48))) return false;  // K = 1
    std::uint64_t k = 3;
    while (bernoulli_expansion(w / k, w % k, k)) ++k;
    return (k & 1) == 1;  // trials 1..k-1 succeeded: K = k - 1
  }

  /// True with probability exactly \f$e^{-n/d}\f$ for \f$0 \le n \le d\f$ (Canonne, Kamath and
  /// Steinke 2020, Algorithm 1, \f$\gamma \le 1\f$): K = number of successes of
  /// Bernoulli(\f$\gamma/k\f$), k = 1, 2, ..., before the first failure; true iff K is even.
  /// Bernoulli(\f$\gamma/k\f$) is drawn as Bernoulli(n/d) and Bernoulli(1/k) (no overflow).
  bool bernoulli_exp_neg(std::uint64_t n, std::uint64_t d) {
    std::uint64_t k = 1;
    while (bernoulli(n, d) && (k == 1 || bernoulli_inverse(k))) ++k;
    return (k & 1) == 1;
  }

  /// True with probability exactly \f$e^{-s/t}\f$ for any s >= 0, t >= 1 (Algorithm 1 of
  /// Canonne, Kamath and Steinke 2020, \f$\gamma > 1\f$: \f$\lfloor\gamma\rfloor\f$ draws of
  /// Bernoulli(\f$e^{-1}\f$), stopping at the first failure, then the fractional part).
  bool bernoulli_exp_neg_any(std::uint64_t s, std::uint64_t t) {
    for (std::uint64_t i = s / t; i > 0; --i)
      if (!bernoulli_exp_neg(1, 1)) return false;
    return bernoulli_exp_neg(s % t, t);
  }

 private:
  static constexpr std::uint64_t kInverseTableSize = 64;
  // floor(2^64 / k) for k = 2..63 (entry 0 and 1 unused).
  static const std::array<std::uint64_t, kInverseTableSize>& inverse_table() {
    static constexpr std::array<std::uint64_t, kInverseTableSize> table = [] {
      std::array<std::uint64_t, kInverseTableSize> t{};
      for (std::uint64_t k = 2; k < kInverseTableSize; ++k) t[k] = std::uint64_t((u128(1) << 64) / k);
      return t;
    }();
    return table;
  }

  G& m_gen;
  std::uint64_t m_buf = 0;
  unsigned m_left = 0;
};

}  // namespace detail

/// True with probability exactly `num / den` (den >= 1; num >= den gives true).
template <std::uniform_random_bit_generator G>
bool bernoulli_rational(std::uint64_t num, std::uint64_t den, G& gen) {
  detail::BitPool<G> pool(gen);
  return pool.bernoulli(num, den);
}

/// True with probability exactly \f$e^{-n/d}\f$ for integers n >= 0, d >= 1 (Canonne, Kamath and
/// Steinke 2020, Algorithm 1): only exact rational Bernoulli draws; O(1) expected work.
/// \throws std::invalid_argument when d is 0.
template <std::uniform_random_bit_generator G>
bool bernoulli_exp_neg(std::uint64_t n, std::uint64_t d, G& gen) {
  if (d == 0) throw std::invalid_argument("'d' must be at least 1, got 0");
  detail::BitPool<G> pool(gen);
  return pool.bernoulli_exp_neg_any(n, d);
}

}  // namespace labeldp
