/// \file
/// Exact samplers. None of them compares a floating-point uniform with a probability
/// (`u < p`) or inverts a floating-point CDF: such samplers realize a distribution that differs
/// from the intended one in ways that can leak the input (Mironov 2012). Every sampler here
/// realizes its stated distribution exactly, using integer comparisons on random bits.
///
/// Work per draw (what a timing observer could see):
/// - constant, one 64-bit word, one table entry, one comparison, whatever the label: the
///   dyadic alias tables of core/alias_table.hpp (DyadicAliasTable, the sampler of every
///   FiniteMechanism; CyclicRandomizedResponse; ClippedDiscreteLaplace);
/// - one word except with probability about 2^-64 (a tie), whatever p (also 0 or 1): bernoulli();
/// - one word except with probability below n 2^-64 (Lemire's rejection): uniform_below();
/// - random, depending on the value drawn: DiscreteLaplace, two_sided_geometric and
///   bernoulli_exp_neg() of core/bit_pool.hpp (unbounded noise cannot be drawn with a fixed number of words), and
///   DiscreteDistribution (rejection at a rate set by its weights).
/// What remains in the constant-work samplers: a table row addressed by the label
/// (DyadicAliasTable) is a cache-timing channel for an observer on the same machine.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "labeldp/core/bit_pool.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

namespace detail {
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
/// The first word is drawn whatever p, also for p = 0 or 1, so a coin whose probability depends
/// on a label costs the same for every label (a second word only on a tie, probability 2^-64).
/// \throws std::invalid_argument when p is NaN or outside [0, 1].
template <std::uniform_random_bit_generator G>
bool bernoulli(double p, G& gen) {
  if (!(p >= 0 && p <= 1)) detail::fail_parameter("p", "must be a probability in [0, 1]", p);
  constexpr double two64 = 18446744073709551616.0;  // 2^64: scaling by it is exact
  std::uint64_t u = random_u64(gen);
  if (p == 1) return true;
  for (;;) {
    const double scaled = p * two64;                             // < 2^64
    const std::uint64_t q = static_cast<std::uint64_t>(scaled);  // floor (scaled >= 0)
    if (u < q) return true;
    if (u > q) return false;
    p = scaled - static_cast<double>(q);  // exact fractional part: the next 64 bits of the expansion
    if (p == 0) return false;             // the expansion ended: the uniform is >= p
    u = random_u64(gen);
  }
}

/// The ratio parameter alpha of a two-sided geometric (discrete Laplace) distribution with
/// privacy `eps` for integer-valued queries of L1 sensitivity `sensitivity`:
/// \f$\alpha = e^{-\varepsilon/\Delta}\f$, rounded up to the next double so the realized
/// guarantee \f$\Delta \ln(1/\alpha)\f$ never exceeds eps.
inline double discrete_laplace_alpha(double eps, double sensitivity) {
  validate_epsilon(eps);
  validate_finite_positive("sensitivity", sensitivity);
  // exp and the division are each within one ulp: three ulps up cover both (never less noise).
  double a = std::exp(-eps / sensitivity);
  for (int i = 0; i < 3; ++i) a = std::nextafter(a, 1.0);
  return std::min(a, std::nextafter(1.0, 0.0));
}

/// A sample of the two-sided geometric distribution \f$P(z) = \frac{1-\alpha}{1+\alpha}\alpha^{|z|}\f$
/// on the integers, exactly, as the difference of two geometric variables, each drawn by exact
/// Bernoulli(alpha) trials. Expected \f$2/(1-\alpha)\f$ Bernoulli draws: fine for small scales
/// (the private histogram's \f$2/\varepsilon\f$); for any scale use DiscreteLaplace (below), O(1)
/// expected, whose \f$\alpha = e^{-\gamma}\f$ has a rational \f$\gamma\f$ instead of a dyadic
/// \f$\alpha\f$.
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

/// The discrete Laplace (two-sided geometric) distribution
/// \f$\Pr[Z = z] = \frac{1-\alpha}{1+\alpha}\alpha^{|z|}\f$, \f$\alpha = e^{-\gamma}\f$, with a
/// rational \f$\gamma = s/t\f$, sampled exactly in O(1) expected time for every scale
/// (Canonne, Kamath and Steinke 2020, "The Discrete Gaussian for Differential Privacy",
/// Algorithms 1 and 2): the magnitude, geometric of ratio \f$e^{-\gamma}\f$, is a truncated
/// geometric part on a block of \f$L \approx 1/(2\gamma)\f$ values (uniform, kept with probability
/// \f$e^{-\gamma U}\f$) plus L times a geometric part of ratio \f$e^{-\gamma L}\f$, and a fair
/// sign (rejecting \f$-0\f$) makes it two-sided. Every step is an exact Bernoulli draw of a
/// rational or of \f$e^{-\text{rational}}\f$, so the realized distribution is exactly the
/// stated one (no floating-point \f$u < p\f$, no floating-point inverse CDF, which leak: Mironov
/// 2012). The expected number of rounds is at most 2 whatever \f$s/t\f$ is, and the work never
/// depends on the value the noise is added to.
///
/// Why \f$\gamma\f$ is rational: \f$\alpha = e^{-\gamma}\f$ is then irrational, but
/// Bernoulli(\f$e^{-\gamma}\f$) draws are exact and cheap (bernoulli_exp_neg()), whereas for a
/// dyadic \f$\alpha\f$ the block probability \f$\alpha^L\f$ has L times as many bits.
///
/// \code{.cpp}
/// // eps-DP noise for an integer query of sensitivity 10:
/// auto noise = labeldp::DiscreteLaplace::for_privacy(0.5, 10);
/// labeldp::SecureRandom gen;
/// std::int64_t z = noise(gen);
/// \endcode
class DiscreteLaplace {
 public:
  /// \f$\gamma = s / t\f$.
  /// \throws std::invalid_argument unless 1 <= s < 2^63 and 1 <= t <= 2^63.
  DiscreteLaplace(std::uint64_t s, std::uint64_t t) : m_s(s), m_t(t) {
    constexpr std::uint64_t kMax = std::uint64_t(1) << 63;
    if (s < 1 || s >= kMax) detail::fail_parameter("s", "must be in [1, 2^63)", double(s));
    if (t < 1 || t > kMax) detail::fail_parameter("t", "must be in [1, 2^63]", double(t));
  }

  /// The distribution that makes an integer query of L1 sensitivity `sensitivity` (an integer
  /// >= 1) eps-DP: \f$\gamma = s/t\f$ is the largest fraction with \f$t = 2^{k}\f$ (k <= 62, as
  /// large as fits) not above \f$\varepsilon'/\Delta\f$, \f$\varepsilon' = \varepsilon -
  /// \max(2^{-40}\varepsilon, 2^{-48})\f$, so the realized guarantee \f$\Delta\,s/t <
  /// \varepsilon\f$ holds exactly (rounded towards more noise, never less; the relative loss
  /// is below \f$2^{-20}\f$, typically about \f$2^{-40}\f$).
  /// \throws std::invalid_argument for a bad eps, a sensitivity that is not an integer in
  ///         [1, 2^53], or \f$\varepsilon/\Delta\f$ outside \f$[2^{-42}, 2^{62}]\f$ (noise too wide
  ///         to represent its scale to 20 bits, or too narrow to be distinguishable from none).
  static DiscreteLaplace for_privacy(double eps, double sensitivity) {
    validate_epsilon(eps);
    if (!(sensitivity >= 1 && sensitivity <= 9007199254740992.0) || sensitivity != std::floor(sensitivity))
      detail::fail_parameter("sensitivity", "must be an integer in [1, 2^53]", sensitivity);
    const double ratio = eps / sensitivity;
    if (!(ratio >= std::ldexp(1.0, -42) && ratio <= std::ldexp(1.0, 62)))
      throw std::invalid_argument("'eps' / sensitivity must be in [2^-42, 2^62], got eps = " +
                                  detail::format_number(eps) + ", sensitivity = " + detail::format_number(sensitivity));
    // Target a little below eps (relative 2^-40, absolute 2^-48; the difference is exact in
    // doubles), so that floating-point audits of matrices built from this distribution, whose
    // roundoff is ~1e-16, still come out <= eps.
    const double target = eps - std::max(std::ldexp(eps, -40), std::ldexp(1.0, -48));
    const auto delta = static_cast<std::uint64_t>(sensitivity);
    for (int k = 62;; --k) {
      // floor(x 2^k / Delta) = floor(floor(x 2^k) / Delta) for an integer Delta. x 2^k must fit
      // in 128 bits: with eps up to 2^62 Delta (Delta up to 2^53), x 2^62 can reach 2^177.
      const double scaled = std::floor(std::ldexp(target, k));
      if (scaled >= std::ldexp(1.0, 127)) continue;
      const detail::u128 num = static_cast<detail::u128>(scaled);
      const detail::u128 s = num / delta;
      if (s < (detail::u128(1) << 63)) {
        std::uint64_t ss = std::uint64_t(s), t = std::uint64_t(1) << k;
        while ((ss & 1) == 0 && t > 1) {
          ss >>= 1;
          t >>= 1;
        }
        return DiscreteLaplace(ss, t);
      }
    }
  }

  /// Numerator s of \f$\gamma = s/t\f$.
  std::uint64_t s() const { return m_s; }
  /// Denominator t of \f$\gamma = s/t\f$.
  std::uint64_t t() const { return m_t; }
  /// \f$\gamma = s/t\f$ (rounded to long double).
  long double gamma() const { return static_cast<long double>(m_s) / static_cast<long double>(m_t); }
  /// \f$\alpha = e^{-\gamma}\f$ (rounded), for pmfs and losses; sampling never uses it.
  long double alpha() const { return std::exp(-gamma()); }
  /// The scale \f$1/\gamma\f$ in units of the integer lattice.
  long double scale() const { return static_cast<long double>(m_t) / static_cast<long double>(m_s); }
  /// \f$\Delta\,\gamma\f$, the exact guarantee for sensitivity \f$\Delta\f$, rounded up to a double.
  double realized_epsilon(double sensitivity) const {
    const long double e = static_cast<long double>(sensitivity) * gamma();
    double d = double(e);
    if (static_cast<long double>(d) < e) d = std::nextafter(d, std::numeric_limits<double>::infinity());
    return std::nextafter(d, std::numeric_limits<double>::infinity());  // one more ulp covers long double roundoff
  }
  /// \f$\Pr[Z = z]\f$.
  long double pmf(std::int64_t z) const {
    const long double a = alpha();
    const long double mag = z < 0 ? -static_cast<long double>(z) : static_cast<long double>(z);
    return -std::expm1(-gamma()) / (1 + a) * std::exp(-gamma() * mag);
  }
  /// \f$\Pr[Z \le z]\f$.
  long double cdf(std::int64_t z) const {
    const long double a = alpha();
    if (z < 0) return std::exp(-gamma() * -static_cast<long double>(z)) / (1 + a);
    return 1 - std::exp(-gamma() * static_cast<long double>(z + 1)) / (1 + a);
  }
  /// \f$E[Z^2] = 2\alpha/(1-\alpha)^2\f$.
  long double second_moment() const {
    const long double om = -std::expm1(-gamma());
    return 2 * alpha() / (om * om);
  }

  /// One exact draw. The magnitude \f$Y\f$, geometric of ratio \f$e^{-\gamma}\f$, is split as in
  /// Canonne, Kamath and Steinke 2020, Algorithm 2, into \f$Y = U + L V\f$ with the block L the
  /// power of two nearest to \f$1/(2\gamma)\f$ (1 when \f$\gamma > 1/4\f$): U uniform on
  /// {0..L-1} (log2 L random bits, no rejection) kept with probability \f$e^{-\gamma U}\f$ (so U
  /// is truncated geometric), V geometric of ratio \f$e^{-\gamma L}\f$ (\f$\gamma L\f$ in
  /// (0.35, 0.71]: U is kept about 80% of the time and V needs about 2.5 cheap trials, less work
  /// than the paper's \f$\gamma L \approx 1\f$); the sign is a fair bit, -0 rejected. Every step is
  /// an exact Bernoulli of a rational or of \f$e^{-\text{rational}}\f$ (BitPool::exp_neg_fraction():
  /// two trials of Algorithm 1 per branch); at most 2 rounds (the -0 rejection) and 1.3 to 2.1
  /// 64-bit words are expected for scales 1 to 1e9.
  ///
  /// Work per draw: the number of generator words and branches depends only on the random
  /// bits, never on a label (there is none here), but it is **not constant** and it is
  /// correlated with the value drawn (a larger |Z| takes more geometric trials, and the
  /// rejection rounds vary). A mechanism that releases y + Z therefore lets an observer of its
  /// running time learn a little about |Z|, hence about y. Unbounded exact noise cannot be drawn
  /// with a fixed number of words; for constant work, clip to a public grid and sample the
  /// resulting finite mechanism through a table (FiniteMechanism, DyadicAliasTable: one word
  /// per label).
  template <std::uniform_random_bit_generator G>
  std::int64_t operator()(G& gen) const {
    detail::BitPool<G> pool(gen);
    for (;;) {
      const std::uint64_t u = m_block == 1 ? 0 : pool.uniform(m_block);
      if (u != 0 && !exp_neg(pool, m_s * u)) continue;  // s u < s L <= t
      std::uint64_t v = 0;
      while (block_exp_neg(pool)) ++v;
      const detail::u128 y = detail::u128(u) + detail::u128(m_block) * v;
      const bool negative = pool.bit();
      if (negative && y == 0) continue;
      // |y| >= 2^63 has probability below e^-(2^20): saturate rather than wrap.
      const std::int64_t mag =
          y >= (detail::u128(1) << 63) ? std::numeric_limits<std::int64_t>::max() : std::int64_t(y);
      return negative ? -mag : mag;
    }
  }

 private:
  // Bernoulli(e^{-n/t}). With t = 2^k (every DiscreteLaplace from for_privacy()) and n < t, y =
  // n/t is the 64-bit fraction n 2^(64-k): exp_neg_fraction(); otherwise the general draw.
  template <typename Pool>
  bool exp_neg(Pool& pool, std::uint64_t n) const {
    if (m_log2_t >= 0 && n < m_t) return pool.exp_neg_fraction(m_log2_t == 0 ? 0 : n << (64 - m_log2_t));
    return pool.bernoulli_exp_neg_any(n, m_t);
  }

  // Bernoulli(e^{-s L / t}), the geometric part's trial (s L <= t).
  template <typename Pool>
  bool block_exp_neg(Pool& pool) const {
    return exp_neg(pool, m_s * m_block);
  }

  // L: the power of two nearest to 1/(2 gamma) = t/(2s) in ratio (gamma L in (0.35, 0.71]), so U
  // is drawn from log2(L) bits without rejection; 1 when gamma > 1/4 (s = 0 is rejected).
  static std::uint64_t block_size(std::uint64_t s, std::uint64_t t) {
    const std::uint64_t q = s == 0 ? 1 : t / s / 2;
    if (q <= 1) return 1;
    const std::uint64_t low = std::bit_floor(q);
    const long double half = static_cast<long double>(t) / (2 * static_cast<long double>(s));
    return 2 * static_cast<long double>(low) * static_cast<long double>(low) < half * half ? 2 * low : low;
  }

  using u128 = detail::u128;

  std::uint64_t m_s, m_t;
  std::uint64_t m_block = block_size(m_s, m_t);
  int m_log2_t = std::has_single_bit(m_t) && m_t <= (std::uint64_t(1) << 63) ? int(std::countr_zero(m_t)) : -1;
};

/// Exact categorical sampling in O(1) per draw (Walker's alias method in integer arithmetic).
///
/// The weights are converted once to 128-bit integers \f$w_i\f$: the largest gets
/// \f$124 - 2\lceil\log_2 n\rceil\f$ bits, a weight \f$2^{-b}\f$ times the largest keeps that many
/// bits less (relative rounding error below \f$2^{-60}\f$ for n <= 4096 and b <= 40), and a
/// positive weight never becomes 0; and the alias table is built with exact integer arithmetic. A draw picks a
/// column uniformly and compares an exact uniform integer with the column's integer threshold,
/// so outcome i is returned with probability exactly \f$w_i / \sum_j w_j\f$; realized()
/// reports those probabilities, which audits can check.
///
/// Its number of generator words per draw is random (rejection on the column and on the
/// 128-bit threshold, at a rate set by the weights), so distributions chosen by a label would
/// differ in work: the mechanisms sample through DyadicAliasTable instead (one word per draw
/// for every row). DiscreteDistribution keeps the finer 128-bit resolution for a single,
/// public distribution (a prior's cells).
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
    for (std::size_t i : large) {
      m_threshold[i] = m_total;
      m_alias[i] = Index(i);
    }
    for (std::size_t i : small) {
      m_threshold[i] = m_total;
      m_alias[i] = Index(i);
    }
  }

  std::vector<detail::u128> m_weights;
  std::vector<detail::u128> m_threshold;
  std::vector<Index> m_alias;
  detail::u128 m_total = 0;
  unsigned m_total_bits = 0;
};

}  // namespace labeldp
