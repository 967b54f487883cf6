/// \file
/// TabledDiscreteLaplace: unclipped discrete Laplace noise for a sensitivity of N lattice steps,
/// drawn from a constant-size dyadic alias table (core/alias_table.hpp) and exact Bernoulli
/// draws, with its realized privacy loss audited exactly when it is built.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/alias_table.hpp"
#include "labeldp/core/sampling.hpp"

namespace labeldp {

namespace detail {

/// A geometric distribution of ratio \f$\beta = e^{-x}\f$ from a one-row DyadicAliasTable: weights
/// \f$W_h = \lfloor 2^{64}(1-\beta)\beta^h \rfloor\f$ for h < T and a tail outcome weighing the
/// rest of \f$2^{64}\f$ (about \f$2^{-20}\f$, T at least `min_body`; every weight at least
/// \f$2^{32}\f$, so within \f$2^{-32}\f$ relative of the geometric's); on the tail, T is added and
/// the table drawn again (the geometric's memorylessness), so the draw is unbounded and
/// \f$\Pr[H = mT + r] = (W_\infty/2^{64})^m\,W_r/2^{64}\f$ exactly. One 64-bit word per draw but
/// for the tail. The privacy audits of its users (TabledDiscreteLaplace, StaircaseNoise) check the
/// realized weights exactly.
class TabledGeometric {
 public:
  TabledGeometric() = default;

  /// Builds the table; false when T would exceed `max_body` or a weight (the tail's too) would be
  /// below 2^32 (then not within 2^-32 relative of the geometric's probability).
  bool build(long double x, std::int64_t min_body, std::int64_t max_body) {
    if (!(x > 0)) return false;
    const long double want = std::ceil(20 * std::log(2.0L) / x);
    if (!(want <= static_cast<long double>(max_body)) || min_body > max_body) return false;
    const std::int64_t T = std::max<std::int64_t>(std::max<std::int64_t>(std::int64_t(want), min_body), 1);
    // Every weight at least 2^32 (so within 2^-32 relative of the geometric's): else no table.
    const u128 least = u128(1) << 32;
    m_weights.assign(std::size_t(T) + 1, 0);
    const long double one_minus = -std::expm1(-x), two64 = std::ldexp(1.0L, 64);
    u128 sum = 0;
    for (std::int64_t h = 0; h < T; ++h) {
      const long double scaled = std::floor(one_minus * std::exp(-x * static_cast<long double>(h)) * two64);
      if (!(scaled >= 4294967296.0L && scaled < two64)) return false;
      sum += m_weights[std::size_t(h)] = u128(static_cast<std::uint64_t>(scaled));
    }
    if (sum + least > (u128(1) << 64)) return false;
    m_weights.back() = (u128(1) << 64) - sum;
    m_table = DyadicAliasTable::from_weights(1, T + 1, m_weights);
    return true;
  }

  /// T: the entries before the tail.
  std::int64_t body() const { return std::int64_t(m_weights.size()) - 1; }
  /// \f$W_0 .. W_{T-1}\f$, then the tail \f$W_\infty\f$ (sum \f$2^{64}\f$).
  const std::vector<u128>& weights() const { return m_weights; }

  /// Whether \f$\Pr[H = h]\f$ is non-increasing in h: \f$W_h \ge W_{h+1}\f$, and across the tail
  /// \f$W_{T-1} 2^{64} \ge W_\infty W_0\f$.
  bool non_increasing() const {
    const std::size_t T = std::size_t(body());
    for (std::size_t h = 0; h + 1 < T; ++h)
      if (m_weights[h] < m_weights[h + 1]) return false;
    return scaled_le(m_weights.back() * m_weights[0], 0, m_weights[T - 1], 64);
  }

  /// Whether \f$\Pr[H = h] \cdot B \le \Pr[H = h + k]\f$ for every h, exactly, for a dyadic B
  /// and a shift 0 <= k <= T (h in [0, T) suffices: both sides gain the tail's factor per period).
  bool ratio_within(const Dyadic& bound, std::int64_t k) const {
    const std::int64_t T = body();
    if (k < 0 || k > T) return false;
    const u128 tail = m_weights.back();
    for (std::int64_t h = 0; h < T; ++h) {
      const std::int64_t j = h + k;
      const bool wrapped = j >= T;
      const u128 far = m_weights[std::size_t(wrapped ? j - T : j)] * (wrapped ? tail : u128(1));
      if (!scaled_le(m_weights[std::size_t(h)] * bound.mant, bound.exp + (wrapped ? 64 : 0), far, 0)) return false;
    }
    return true;
  }

  /// \f$\Pr[H = h]\f$ as sampled (in long double).
  long double probability(std::uint64_t h) const {
    const std::uint64_t T = std::uint64_t(body());
    const long double tail = std::ldexp(static_cast<long double>(m_weights.back()), -64);
    return std::pow(tail, static_cast<long double>(h / T)) *
           std::ldexp(static_cast<long double>(m_weights[std::size_t(h % T)]), -64);
  }

  /// One draw of H.
  template <std::uniform_random_bit_generator G>
  std::uint64_t operator()(G& gen) const {
    const std::uint64_t tail = std::uint64_t(body());
    std::uint64_t h = 0;
    for (;;) {
      const auto c = std::uint64_t(m_table(0, gen));
      if (c != tail) [[likely]]
        return h + c;
      h += tail;
    }
  }

 private:
  std::vector<u128> m_weights;
  DyadicAliasTable m_table;
};

/// A dyadic upper bound of \f$e^{x}\f$ for \f$x = n/2^k - \varepsilon\f$ (n a signed integer
/// given as sign and magnitude below 2^127): long-double arithmetic, whose relative error is below
/// 2^-60 for the exponent's terms and for exp, widened by 2^-50 and rounded up.
inline Dyadic exp_upper_bound(bool negative, u128 magnitude, int k, double eps) {
  const long double ge = (negative ? -1 : 1) * std::ldexp(static_cast<long double>(magnitude), -k);
  const long double x = ge - static_cast<long double>(eps);
  const long double slack = std::ldexp(std::fabs(ge) + static_cast<long double>(eps) + 1, -50);
  return to_dyadic(std::exp(x + slack) * (1 + std::ldexp(1.0L, -50)), true);
}

}  // namespace detail

/// Discrete Laplace noise \f$\Pr[Z = z] \propto e^{-\gamma|z|}\f$ (the DiscreteLaplace it is
/// built from, \f$\gamma = s/2^k\f$) for a query of sensitivity N lattice steps, drawn from a
/// table in about two 64-bit words and with few unpredictable branches, where
/// DiscreteLaplace::operator() (Canonne, Kamath and Steinke 2020, Algorithm 2) takes 1.3 to 2.1
/// words and several coin-flip branches per draw.
///
/// **Sampling.** The magnitude is \f$|Z| = 2^K H + U\f$: the geometric's low K bits U are a
/// truncated geometric on \f$[0, 2^K)\f$, drawn exactly (K uniform bits, kept with probability
/// \f$e^{-\gamma U}\f$ by CKS 2020's Algorithm 1, BitPool::exp_neg_fraction(); \f$\gamma 2^K \le
/// 2^{-4}\f$, so at least 93% are kept; a quarter of the block table that \f$2^{-6}\f$ needed:
/// about 220 to 450 entries when N allows, 4-8 KB, resident in L1 with the labels streaming
/// through it); the block index H is geometric of ratio
/// \f$\beta = e^{-\gamma' 2^K}\f$, drawn from a one-row DyadicAliasTable over {0..T-1} and a tail
/// outcome whose weight is the rest of \f$2^{64}\f$ (about \f$2^{-20}\f$): on the tail, T is added
/// and the table drawn again (the geometric's memorylessness), so H is unbounded. A fair sign,
/// -0 rejected, makes the noise two-sided. The table's weights are floors of
/// \f$2^{64}(1-\beta)\beta^h\f$ for a \f$\gamma' = \gamma(1 - \delta)\f$ slightly below
/// \f$\gamma\f$ (\f$\delta = 2^{-32}\f$ first, then \f$2^{-28}, 2^{-24}, 2^{-20}\f$): the sampled
/// distribution is therefore not exactly the DiscreteLaplace's but its realization, with
/// probabilities \f$\Pr[H = mT + r] = (W_\infty/2^{64})^m\,W_r/2^{64}\f$ (pmf()); its scale is
/// within about \f$\delta\f$ relative of the stated one.
///
/// **Privacy, audited exactly.** For inputs at most N steps apart the realized pmf must satisfy
/// \f$p(y) \le e^{\varepsilon_r} p(y')\f$ for all magnitudes \f$|y - y'| \le N\f$, with
/// \f$\varepsilon_r\f$ the guarantee to certify (the DiscreteLaplace's \f$N\gamma\f$ rounded up,
/// DiscreteLaplace::realized_epsilon()). With \f$N = 2^K a + b\f$, \f$0 \le b < 2^K\f$, and a
/// non-increasing table (checked, across the tail too), the largest ratio is at a block shift
/// k in {a-1, a, a+1} with the low bits at their extremes: \f$W(h) e^{\gamma e_k} \le
/// e^{\varepsilon_r} W(h + k)\f$ with \f$e_{a-1} = 2^K - 1\f$, \f$e_a = b\f$, \f$e_{a+1} = b -
/// 2^K\f$; the ratios repeat with period T (both sides gain the tail's factor), so h in [0, T)
/// suffices. Each check is an exact comparison of integers with a dyadic upper bound of
/// \f$e^{\gamma e_k - \varepsilon_r}\f$; the low bits are exact, so their ratio
/// \f$e^{\gamma e}\f$ is exact too. A table that fails is rebuilt with the next \f$\delta\f$.
///
/// Work per draw: random (the low bits' rare rejection, the table's tail with probability about
/// \f$2^{-20}\f$, the -0 rejection), as for every unbounded exact noise (see core/sampling.hpp),
/// but about two words and two well-predicted branches in all but a few percent of draws.
class TabledDiscreteLaplace {
 public:
  /// The largest table (entries before the tail).
  static constexpr std::int64_t kMaxBody = std::int64_t(1) << 14;

  TabledDiscreteLaplace() = default;

  /// The table for `noise` and sensitivity `sensitivity` (>= 1 lattice steps), audited against
  /// `epsilon` (normally noise.realized_epsilon(sensitivity)).
  /// \throws std::invalid_argument when \f$\gamma\f$'s denominator is not a power of two, when
  ///         the table would need more than kMaxBody entries (a wide noise for a small eps, below
  ///         about 1e-3), a weight below 2^32 (eps above about 22: the ratio e^eps across a + 2
  ///         blocks), or when no \f$\delta\f$ passes the audit; the caller then samples the
  ///         DiscreteLaplace itself.
  TabledDiscreteLaplace(const DiscreteLaplace& noise, std::int64_t sensitivity, double epsilon)
      : m_s(noise.s()), m_t(noise.t()), m_n(sensitivity), m_eps(epsilon) {
    if (!std::has_single_bit(m_t))
      throw std::invalid_argument("tabled discrete Laplace: gamma's denominator must be 2^k");
    if (sensitivity < 1) detail::fail_parameter("sensitivity", "must be at least 1", double(sensitivity));
    choose_low_bits();
    for (int log2_delta : {-32, -28, -24, -20}) {
      if (build(std::ldexp(1.0L, log2_delta)) && audit()) {
        m_delta = std::ldexp(1.0, log2_delta);
        return;
      }
    }
    throw std::invalid_argument("tabled discrete Laplace: no table passes the exact audit for eps = " +
                                detail::format_number(m_eps) + " over " + std::to_string(m_n) + " steps");
  }

  /// Builds the table with the given \f$\delta\f$ (\f$\gamma' = \gamma(1-\delta)\f$; a negative
  /// \f$\delta\f$ gives less noise than stated) and reports whether it passes the exact audit
  /// against `epsilon`, without the fallback of the constructor: for tests of the audit.
  static bool audit_passes(const DiscreteLaplace& noise, std::int64_t sensitivity, double epsilon, long double delta) {
    TabledDiscreteLaplace t;
    t.m_s = noise.s();
    t.m_t = noise.t();
    t.m_n = sensitivity;
    t.m_eps = epsilon;
    t.choose_low_bits();
    return t.build(delta) && t.audit();
  }

  /// K: the low bits drawn exactly.
  int low_bits() const { return m_k; }
  /// T: the table's entries before the tail.
  std::int64_t body() const { return m_blocks.body(); }
  /// \f$\delta\f$ of the table that passed (its block ratio is \f$e^{-\gamma(1-\delta)2^K}\f$).
  double delta() const { return m_delta; }
  /// The guarantee the audit certified (the constructor's `epsilon`).
  double epsilon() const { return m_eps; }

  /// \f$\Pr[Z = z]\f$ as sampled (in long double).
  long double pmf(std::int64_t z) const {
    const long double zero = magnitude_probability(0);
    const std::uint64_t y = z < 0 ? std::uint64_t(0) - std::uint64_t(z) : std::uint64_t(z);
    return magnitude_probability(y) / (2 - zero);
  }

  /// One draw of Z (see the class comment).
  template <std::uniform_random_bit_generator G>
  std::int64_t operator()(G& gen) const {
    detail::BitPool<G> pool(gen);
    for (;;) {
      const std::uint64_t h = m_blocks(gen);
      std::uint64_t u = 0;
      if (m_k > 0) {
        u = pool.bits(unsigned(m_k));
        // Kept with probability e^{-gamma u}, gamma u = s u / 2^k < 2^-4 as a 64-bit fraction.
        if (u != 0 && !pool.exp_neg_fraction((m_s * u) << (64 - m_log2_t))) [[unlikely]]
          continue;
      }
      const bool negative = pool.bit();
      // |Z| >= 2^63 has probability below e^-(2^20): saturate rather than wrap.
      const std::int64_t mag = h >= (std::uint64_t(1) << (63 - m_k)) ? std::numeric_limits<std::int64_t>::max()
                                                                     : std::int64_t((h << m_k) | u);
      if (negative && mag == 0) [[unlikely]]
        continue;
      return negative ? -mag : mag;
    }
  }

 private:
  // K: the most low bits with gamma 2^K <= 2^-4 and 2^K <= N (t = 2^k).
  void choose_low_bits() {
    m_log2_t = int(std::countr_zero(m_t));
    m_k = 0;
    while (m_k < 40 && (std::int64_t(1) << (m_k + 1)) <= m_n &&
           detail::u128(m_s) << (m_k + 1) << 4 <= detail::u128(m_t))
      ++m_k;
  }

  // Pr[|Z| = y] before the -0 rejection (pmf() normalizes).
  long double magnitude_probability(std::uint64_t y) const {
    const long double block = m_blocks.probability(y >> m_k);
    if (m_k == 0) return block;
    const std::uint64_t l = y & ((std::uint64_t(1) << m_k) - 1);
    const long double g = static_cast<long double>(m_s) / static_cast<long double>(m_t);
    return block * std::expm1(-g) / std::expm1(-g * std::ldexp(1.0L, m_k)) * std::exp(-g * static_cast<long double>(l));
  }

  // The block table for gamma' = gamma (1 - delta): T >= a + 2, so that a shift by a + 1 blocks
  // crosses the tail once at most.
  bool build(long double delta) {
    const long double x =
        static_cast<long double>(m_s) / static_cast<long double>(m_t) * std::ldexp(1.0L, m_k) * (1 - delta);
    return m_blocks.build(x, (m_n >> m_k) + 2, kMaxBody);
  }

  // The exact check of the class comment.
  bool audit() const {
    if (!m_blocks.non_increasing()) return false;
    const std::int64_t a = m_n >> m_k, b = m_n - (a << m_k), span = std::int64_t(1) << m_k;
    // W_h e^{gamma e - eps} <= W_{h+k} for (k, e) = (a - 1, 2^K - 1), (a, b), (a + 1, b - 2^K).
    auto ok = [&](std::int64_t k, std::int64_t e) {
      const detail::u128 mag = detail::u128(m_s) * detail::u128(e >= 0 ? e : -e);
      return m_blocks.ratio_within(detail::exp_upper_bound(e < 0, mag, m_log2_t, m_eps), k);
    };
    return (a - 1 < 1 || ok(a - 1, span - 1)) && ok(a, b) && (b < 1 || ok(a + 1, b - span));
  }

  std::uint64_t m_s = 1, m_t = 1;
  int m_log2_t = 0;
  int m_k = 0;
  std::int64_t m_n = 1;
  double m_eps = 0;
  double m_delta = 0;
  detail::TabledGeometric m_blocks;  // H, of ratio e^{-gamma' 2^K}
};

}  // namespace labeldp
