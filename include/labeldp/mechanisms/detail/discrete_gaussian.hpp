/// \file
/// Discrete Gaussian samplers (the noise of mechanisms/gaussian.hpp): CKS 2020's exact rejection
/// sampler (Canonne, Kamath and Steinke 2020, Algorithm 3), and a tabled sampler of the same
/// distribution as realized by a dyadic alias table, with the bound on its difference that the
/// Gaussian mechanisms' privacy audit uses; DiscreteGaussianNoise picks the tabled one when the
/// audit passes.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "labeldp/core/alias_table.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/mechanisms/detail/lattice.hpp"

namespace labeldp::detail {

/// Exact rejection sampler of the discrete Gaussian \f$N_Z(0, \sigma^2)\f$, \f$\sigma^2 = M/2^f\f$
/// (Canonne, Kamath and Steinke 2020, Algorithm 3): proposals Y from the discrete Laplace of scale
/// t, t the smallest power of two above sigma (CKS use floor(sigma) + 1; the algorithm is exact
/// for every t > 0, and a power of two lets DiscreteLaplace draw Y with its fast exact Bernoulli
/// draws on 64-bit fractions: about 3x the throughput, for an acceptance rate of 0.55 to 0.76
/// instead of about 0.76), kept with probability \f$e^{-(|Y| - \sigma^2/t)^2/2\sigma^2}\f$, a ratio
/// of 128-bit integers. Proposals with \f$|Y| \ge 128t\f$ are rejected too, so the output is
/// \f$N_Z(0, \sigma^2)\f$ conditioned on \f$|Y| < 128t\f$: mass below \f$e^{-8192}\f$ is removed, which
/// the delta accounting absorbs (it certifies delta with a 1e-9 relative margin, far above
/// \f$2(1+e^{\varepsilon})e^{-8192}\f$).
struct DiscreteGaussianSampler {
  std::uint64_t m = 1;  // sigma^2 = m / 2^f
  int f = 0;
  std::uint64_t t = 1;

  DiscreteGaussianSampler() = default;
  DiscreteGaussianSampler(std::uint64_t num, int log2_den) : m(num), f(log2_den) {
    const u128 q = u128(1) << f;
    t = std::uint64_t(std::floor(std::sqrt(double(m) / double(q))));
    while (u128(t) * t * q <= m) ++t;  // smallest t with t^2 > sigma^2
    while (t > 1 && u128(t - 1) * (t - 1) * q > m) --t;
    t = std::bit_ceil(t);  // a power of two (exact for every t; see above)
    if (u128(t) * t * q >= (u128(1) << 56)) throw std::logic_error("discrete Gaussian parameters out of range");
    m_proposal = DiscreteLaplace(1, t);
  }
  double sigma2() const { return std::ldexp(double(m), -f); }

  template <std::uniform_random_bit_generator G>
  std::int64_t operator()(G& gen) const {
    NoiseBits<G> bits(gen);
    const u128 q = u128(1) << f, tq = u128(t) * q;
    const u128 den = 2 * u128(m) * q * u128(t) * u128(t);
    for (;;) {
      // Y: discrete Laplace of scale t (exact; -0 already rejected), |Y| < 128 t.
      const std::int64_t z = m_proposal(gen);
      const bool negative = z < 0;
      const std::uint64_t y = negative ? std::uint64_t(0) - std::uint64_t(z) : std::uint64_t(z);
      if (y >= 128 * t) continue;
      // gamma = (|y| - sigma^2/t)^2 / (2 sigma^2) = (|y| t q - m)^2 / (2 m q t^2)
      const u128 a = u128(y) * tq, diff = a >= m ? a - m : u128(m) - a;
      if (exp_minus_words(diff * diff, den, gen, bits)) return negative ? -std::int64_t(y) : std::int64_t(y);
    }
  }

  /// True with probability exactly \f$e^{-n/d}\f$, \f$d < 2^{113}\f$: CKS 2020, Algorithm 1 (as
  /// bernoulli_exp_minus()), each Bernoulli(\f$\gamma/K\f$) drawn by ratio_word().
  template <typename G>
  static bool exp_minus_words(u128 n, u128 d, G& gen, NoiseBits<G>& bits) {
    if (n <= d) return exp_unit_from(n, d, 1, gen, bits);
    for (u128 q = n / d; q > 0; --q)
      if (!exp_unit_from(1, 1, 1, gen, bits)) return false;
    return exp_unit_from(n % d, d, 1, gen, bits);
  }

  /// CKS 2020's Algorithm 1 for \f$e^{-num/den}\f$, num <= den, from trial k on (k = 1: the whole
  /// algorithm; k = 2: after a first trial that came out true): trials Bernoulli(num / (den k))
  /// by ratio_word() until one is false, true when its index is odd.
  template <typename G>
  static bool exp_unit_from(u128 num, u128 den, std::uint64_t k, G& gen, NoiseBits<G>& bits) {
    while (ratio_word(num, den * k, gen, bits))
      if (++k > (std::uint64_t(1) << 14)) throw std::logic_error("exp_minus_words: impossible trial count");
    return (k & 1) == 1;
  }

  /// True with probability exactly n/d (d < 2^127): a uniform U whose first 64 bits are one
  /// word u, compared with n/d. A double estimate of \f$2^{64} n/d\f$ (relative error below
  /// \f$2^{-51}\f$, so within \f$2^{13}\f$) settles it unless u is within \f$2^{14}\f$ of it
  /// (probability below \f$2^{-49}\f$); then u's bits and further random bits are compared with
  /// the exact binary expansion of n/d (long division). One word and no loop per draw, where
  /// NoiseBits::ratio() branches on every bit.
  template <typename G>
  static bool ratio_word(u128 n, u128 d, G& gen, NoiseBits<G>& bits) {
    if (n >= d) return true;
    if (n == 0) return false;
    return ratio_prefix(random_u64(gen), 64, double(n) / double(d) * 18446744073709551616.0, n, d, bits);
  }

  /// True with probability exactly n/d (n < d < 2^127) for the uniform real U whose first `nb`
  /// bits (1 <= nb <= 64) are v and whose later bits come from `bits`: `estimate`, \f$2^{nb} n/d\f$
  /// within \f$2^{13}\f$ (a double with relative error below \f$2^{-51}\f$), settles it unless v
  /// is within \f$2^{14}\f$ of it; then v's bits and further random bits are compared with the
  /// exact binary expansion of n/d (long division). ratio_word() with nb = 64; the tabled
  /// sampler's bin offsets with the bits of a word their offset leaves.
  template <typename G>
  static bool ratio_prefix(std::uint64_t v, int nb, double estimate, u128 n, u128 d, NoiseBits<G>& bits) {
    const int settled = prefix_settles(v, estimate);
    return settled >= 0 ? settled == 1 : ratio_expansion(v, nb, n, d, bits);
  }

  /// ratio_prefix()'s estimate alone: 1 (true) when v is at least \f$2^{14}\f$ below it, 0
  /// (false) when at least \f$2^{14}\f$ above, -1 when it does not settle the comparison.
  static int prefix_settles(std::uint64_t v, double estimate) {
    constexpr std::uint64_t margin = std::uint64_t(1) << 14, top = ~std::uint64_t(0);
    const std::uint64_t e = estimate >= 18446744073709551615.0 ? top : std::uint64_t(estimate);
    const std::uint64_t lo = e > margin ? e - margin : 0, hi = e < top - margin ? e + margin : top;
    if (v < lo) return 1;  // U < (v + 1) 2^-nb <= lo 2^-nb <= n/d
    if (v > hi) return 0;  // U >= v 2^-nb > hi 2^-nb >= n/d
    return -1;
  }

  /// ratio_prefix() where its estimate does not settle it: v's nb bits, then further random
  /// bits, against the exact binary expansion of n/d (long division).
  template <typename G>
  static bool ratio_expansion(std::uint64_t v, int nb, u128 n, u128 d, NoiseBits<G>& bits) {
    u128 r = n;
    for (int i = nb - 1; i >= 0; --i) {
      r <<= 1;
      const bool digit = r >= d;
      if (digit) r -= d;
      if (bool((v >> i) & 1) != digit) return digit;
    }
    return bits.ratio(r, d);  // the first nb bits tied: the rest of the expansion, r / d
  }

 private:
  DiscreteLaplace m_proposal{1, 1};  // scale t
};

/// Dyadic sigma^2 >= s2 with 24 significant bits (rounded up: at most 2^-23 relative, so the
/// guarantee only improves), which keeps the acceptance test's integers (numerator below 2^126,
/// denominator 2 m 2^f t^2 below 2^113) and their long division within 128 bits.
inline DiscreteGaussianSampler dyadic_sampler(double s2) {
  const int f = std::clamp(23 - std::ilogb(s2), 0, 50);
  const double scaled = std::ceil(std::ldexp(s2, f));
  return DiscreteGaussianSampler(std::uint64_t(scaled), f);
}

/// The discrete Gaussian \f$N_Z(0, \sigma^2)\f$, \f$\sigma^2 = M/2^f\f$, as realized by a dyadic
/// alias table: one 64-bit word per draw up to sigma = 512 and about two beyond, where
/// DiscreteGaussianSampler takes about six and several unpredictable loops.
///
/// **Sampling.** The values are cut into entries of one dyadic alias table (one row of
/// DyadicAliasTable): T bins of \f$w = 2^K\f$ values on each side (w = 1 up to sigma = 512, then
/// the power of two in (sigma/128, sigma/64]): the bin h >= 0 of the values \f$hw .. hw + w - 1\f$
/// and the bin of \f$-(hw + 1) .. -(hw + w)\f$; and two tails, the values at least S = Tw and at
/// most -(S + 1) (S the least multiple of w leaving at most \f$2^{-12}\f$ of one side's mass
/// beyond it). An entry e is drawn with weight \f$W_e \approx 2^{64} P_e\f$, \f$P_e\f$ its share of
/// the mass \f$q(z) = e^{-z^2/2\sigma^2}\f$. Inside a bin of first magnitude b, the offset U is
/// uniform on K bits and kept with probability \f$e^{-((b + U)^2 - b^2)/2\sigma^2}\f$ (exact: CKS 2020's
/// Algorithm 1 with rational Bernoulli draws, the first from the rest of U's word; about 0.94 or
/// more, else U is drawn again), so the
/// value has exactly the conditional law \f$\propto q\f$ on the bin. On a tail of first magnitude
/// b, the magnitude is b + g, g >= 0 from the discrete Laplace of ratio \f$e^{-b/\sigma^2}\f$
/// (its negative draws rejected), kept with probability \f$e^{-g^2/2\sigma^2}\f$: exactly
/// \f$\propto q(b + g)\f$ (g below \f$2^{32}\f$; beyond, mass below \f$e^{-2^{63}/\sigma^2}\f$,
/// rejected). Only the entries' probabilities therefore differ from the discrete Gaussian's, and
/// pmf() is the realized law.
///
/// **How far from the discrete Gaussian.** Every realized probability is within a factor
/// \f$1 \pm \rho\f$ of \f$N_Z(0, \sigma^2)\f$'s (relative_error()): the weights are floors of
/// \f$2^{64} P_e\f$ (the bin of 0, the largest, takes the remainder), each at least \f$2^{40}\f$,
/// with \f$P_e\f$ summed in long double up to 10 sigma (compensated sums of exp terms, each within
/// \f$2^{-57}\f$ relative, the mass beyond below \f$e^{-50}\f$: bounded here by \f$2^{-52}\f$), so an
/// entry's factor is within \f$2^{-52} + 2/W_e\f$ (the remainder's within the others' summed
/// errors); \f$\rho\f$ is twice the largest, and build() refuses a table with \f$\rho > 2^{-36}\f$.
/// For shifts y, y' of such noise, \f$\max(0, \tilde p(o - y) - e^{\varepsilon}\tilde p(o - y')) \le
/// (1+\rho)\max(0, p(o - y) - e^{\varepsilon - 3\rho} p(o - y'))\f$, so the table's delta at eps is
/// at most \f$(1 + \rho)\f$ times the discrete Gaussian's at \f$\varepsilon - 3\rho\f$ (the Gaussian
/// mechanisms check that bound before using a table).
class TabledDiscreteGaussian {
 public:
  /// The tail's share of one side's mass, at most (S's rule).
  static constexpr long double kTailMass = 1.0L / 4096;
  /// The largest sigma tabled (lattice steps): at most about 4,200 entries, and 10 sigma exp
  /// terms summed when built (about 20 ms at the limit).
  static constexpr long double kMaxSigma = 131072;

  TabledDiscreteGaussian() = default;

  /// The table for \f$\sigma^2 = M/2^f\f$; nullopt when sigma is outside [1/2, kMaxSigma], a
  /// weight would be below \f$2^{40}\f$ (a narrow noise: the tails too light) or \f$\rho\f$ above
  /// \f$2^{-36}\f$; the caller then keeps DiscreteGaussianSampler.
  static std::optional<TabledDiscreteGaussian> build(std::uint64_t M, int f) {
    using LD = long double;
    TabledDiscreteGaussian t;
    t.m_m = M;
    t.m_f = f;
    t.m_scale = std::ldexp(1.0, f) / (2 * static_cast<double>(M));
    if (M == 0 || f < 0 || f > 62) return std::nullopt;
    const LD s2 = std::ldexp(static_cast<LD>(M), -f), sigma = std::sqrt(s2);
    if (!(sigma >= 0.5L && sigma <= kMaxSigma)) return std::nullopt;
    t.m_k = 0;
    // w = 2^K in (sigma / 128, sigma / 64] beyond sigma = 512, else 1. Beyond sigma = 512: at most
    // about 1,000 entries (16 KB of table, resident in L1; with bins of sigma / 256, 64 KB were
    // not), for an offset kept with probability at least e^{-1/17}. Up to sigma = 512, one value
    // per bin: about 7 sigma entries, so up to about 3,800 (60 KB) at sigma = 512.
    if (sigma > 512)
      while (std::ldexp(1.0L, t.m_k + 1) * 64 < sigma) ++t.m_k;
    // Scaled once here (a power of two: exact, so offset()'s estimate rounds as it would with the
    // scaling after its product) rather than by a call of ldexp per draw.
    t.m_scale = std::ldexp(t.m_scale, 64 - t.m_k);
    const std::uint64_t w = std::uint64_t(1) << t.m_k;
    const std::uint64_t end = static_cast<std::uint64_t>(std::ceil(10 * sigma)) + 2;  // q(end) < e^-50
    auto q = [&](std::uint64_t a) { return std::exp(-static_cast<LD>(a) * static_cast<LD>(a) / (2 * s2)); };
    // Compensated sums of the bins hw .. hw + w - 1 up to `end`.
    std::vector<LD> bins;
    for (std::uint64_t a0 = 0; a0 < end; a0 += w) {
      LD s = 0, c = 0;
      for (std::uint64_t a = a0; a < a0 + w; ++a) {
        const LD y = q(a) - c, n = s + y;
        c = (n - s) - y;
        s = n;
      }
      bins.push_back(s);
    }
    std::vector<LD> beyond(bins.size() + 1, 0);  // beyond[h]: the bins from h on, smallest first
    for (std::size_t h = bins.size(); h-- > 0;) beyond[h] = beyond[h + 1] + bins[h];
    // T: the fewest bins leaving at most kTailMass of one side's mass beyond them.
    std::size_t T = 1;
    while (T < bins.size() && beyond[T] > kTailMass * beyond[0]) ++T;
    if (T >= bins.size()) return std::nullopt;
    // Entry masses: bins h >= 0, bins -(hw + 1) .. -(hw + w), the tails >= S and <= -(S + 1).
    std::vector<LD> mass(2 * T + 2);
    for (std::size_t h = 0; h < T; ++h) {
      mass[h] = bins[h];
      mass[T + h] = bins[h] - q(h * w) + q((h + 1) * w);  // one term moved: no cancellation
    }
    mass[2 * T] = beyond[T];
    mass[2 * T + 1] = mass[2 * T] - q(T * w);
    LD total = 0;
    for (std::size_t e = mass.size(); e-- > 0;) total += mass[e];
    constexpr LD eps_c = 1.0L / 4503599627370496.0L;  // 2^-52: the sums' error bound
    const LD two64 = std::ldexp(1.0L, 64), least = std::ldexp(1.0L, 40);
    std::vector<u128> weights(mass.size());
    u128 rest = u128(1) << 64;
    LD rho = 0;
    for (std::size_t e = 1; e < mass.size(); ++e) {
      const LD x = std::floor(mass[e] / total * two64);
      if (!(x >= least && x < two64)) return std::nullopt;
      rho = std::max(rho, eps_c + 2 / x);
      weights[e] = u128(static_cast<std::uint64_t>(x));
      rest -= weights[e];
    }
    weights[0] = rest;  // the bin of 0: the remainder, within 2^64 eps_c + 2T + 2 units
    const LD slack = two64 * eps_c + static_cast<LD>(2 * T + 2), w0 = static_cast<LD>(std::uint64_t(rest));
    if (!(w0 > 2 * slack)) return std::nullopt;
    t.m_rho = 2 * std::max(rho, slack / (w0 - slack));
    if (t.m_rho > std::ldexp(1.0L, -36)) return std::nullopt;
    const u128 S = u128(T) << t.m_k;
    if ((S + 1) * (u128(1) << f) >= (u128(1) << 62)) return std::nullopt;
    t.m_mass = mass;
    t.m_weights = weights;
    t.m_bins = std::int64_t(T);
    t.m_tail_pos = DiscreteLaplace(std::uint64_t(S << f), M);
    t.m_tail_neg = DiscreteLaplace(std::uint64_t((S + 1) << f), M);
    t.m_table = DyadicAliasTable::from_weights(1, Index(mass.size()), weights);
    return t;
  }

  /// \f$\rho\f$: every realized probability is within a factor \f$1 \pm \rho\f$ of
  /// \f$N_Z(0, \sigma^2)\f$'s (at most \f$2^{-36}\f$).
  long double relative_error() const { return m_rho; }
  /// K: the bins hold \f$2^K\f$ values.
  int low_bits() const { return m_k; }
  /// T: the bins on each side.
  std::int64_t bins() const { return m_bins; }
  /// The integer weights (sum \f$2^{64}\f$): bins 0..T-1 of the values >= 0, bins T..2T-1 of the
  /// negative values, then the tails >= S and <= -(S + 1).
  const std::vector<u128>& weights() const { return m_weights; }

  /// \f$\Pr[Z = z]\f$ as sampled (in long double).
  long double pmf(std::int64_t z) const {
    using LD = long double;
    const std::uint64_t T = std::uint64_t(m_bins);
    const std::uint64_t a = z < 0 ? std::uint64_t(0) - std::uint64_t(z) : std::uint64_t(z);
    const std::uint64_t h = z < 0 ? (a - 1) >> m_k : a >> m_k;
    const std::size_t e = std::size_t(h < T ? h + (z < 0 ? T : 0) : 2 * T + (z < 0 ? 1 : 0));
    const LD q = std::exp(-static_cast<LD>(a) * static_cast<LD>(a) / (2 * std::ldexp(static_cast<LD>(m_m), -m_f)));
    return std::ldexp(static_cast<LD>(std::uint64_t(m_weights[e])), -64) * q / m_mass[e];
  }

  /// One draw of Z (see the class comment).
  template <std::uniform_random_bit_generator G>
  std::int64_t operator()(G& gen) const {
    const auto T = std::uint64_t(m_bins);
    const auto e = std::uint64_t(m_table(0, gen));
    if (e < 2 * T) [[likely]] {
      // Branch-free sign (the side is as random as the draw): neg = 1 for the negative bins.
      const std::uint64_t neg = std::uint64_t(e >= T);
      std::uint64_t a = ((e - neg * T) << m_k) + neg;  // the bin's first magnitude
      if (m_k > 0) a += offset(a, gen);
      return std::int64_t((a ^ (std::uint64_t(0) - neg)) + neg);  // -a when neg (two's complement)
    }
    const bool negative = e == 2 * T + 1;
    const std::uint64_t a = tail_draw(negative ? m_tail_neg : m_tail_pos, (T << m_k) + std::uint64_t(negative), gen);
    return negative ? -std::int64_t(a) : std::int64_t(a);
  }

 private:
  // The offset U in a bin of first magnitude b: one word gives U (its low K bits) and the first
  // trial of CKS 2020's Algorithm 1 for e^{-x}, x = (2bU + U^2) / 2 sigma^2 (its other bits, the
  // start of a uniform U' compared with x: Bernoulli(x)); a false trial keeps U (k = 1, odd),
  // a true one (probability x <= 1/17) continues the algorithm from k = 2 with one-word trials.
  // The common case (U = 0, or a first trial settled false by its estimate) is inline; the rest
  // of the algorithm, and any redraw of U, is offset_rest(), out of line, so that the batch loop
  // keeps no 128-bit or bit-pool state for it.
  template <typename G>
  std::uint64_t offset(std::uint64_t b, G& gen) const {
    const std::uint64_t w = random_u64(gen);
    const std::uint64_t u = w & ((std::uint64_t(1) << m_k) - 1);
    if (u == 0) return 0;  // x = 0: kept
    const int settled = first_trial(b, u, w);
    if (settled == 0) [[likely]]
      return u;  // the first trial false: U kept
    return offset_rest(b, w, settled, gen);
  }

  // The first trial's comparison by its estimate (DiscreteGaussianSampler::prefix_settles()): 0
  // (false: U kept), 1 (true) or -1 (unsettled). small = (2b + U) U is below 2^40, exact in a
  // double; x 2^(64 - K) = small 2^f / 2M 2^(64 - K) < 2^(64 - K) / 17 as a double within 2^-51
  // relative (m_scale holds 2^f / 2M times 2^(64 - K)).
  int first_trial(std::uint64_t b, std::uint64_t u, std::uint64_t w) const {
    const std::uint64_t small = (2 * b + u) * u;
    return DiscreteGaussianSampler::prefix_settles(w >> m_k, static_cast<double>(small) * m_scale);
  }

  // offset() from a word w whose first trial did not settle false: the exact comparison where
  // the estimate did not settle it, Algorithm 1 from k = 2 where the trial was true, and redraws
  // of U (each as offset() draws it) until one is kept. The bit pool starts here, empty, as it
  // would have at the top of offset(): the words drawn are those of an inline loop.
  template <typename G>
  [[gnu::noinline]] std::uint64_t offset_rest(std::uint64_t b, std::uint64_t w, int settled, G& gen) const {
    NoiseBits<G> bits(gen);
    const u128 d = 2 * u128(m_m);
    const std::uint64_t mask = (std::uint64_t(1) << m_k) - 1;
    for (;;) {
      const std::uint64_t u = w & mask;
      const u128 n = u128((2 * b + u) * u) << m_f;  // x = n / d exactly
      if (settled < 0 && !DiscreteGaussianSampler::ratio_expansion(w >> m_k, 64 - m_k, n, d, bits)) return u;
      if (DiscreteGaussianSampler::exp_unit_from(n, d, 2, gen, bits)) return u;
      // U rejected: draw it again, as offset() does.
      w = random_u64(gen);
      if ((w & mask) == 0) return 0;
      settled = first_trial(b, w & mask, w);
      if (settled == 0) return w & mask;
    }
  }

  // A magnitude b + g of a tail (see the class comment); `ratio` has ratio e^{-b / sigma^2}.
  template <typename G>
  std::uint64_t tail_draw(const DiscreteLaplace& ratio, std::uint64_t b, G& gen) const {
    NoiseBits<G> bits(gen);
    for (;;) {
      const std::int64_t g = ratio(gen);
      if (g < 0 || g >= (std::int64_t(1) << 32)) continue;
      const u128 gg = u128(g) * u128(g);
      if (DiscreteGaussianSampler::exp_minus_words(gg << m_f, 2 * u128(m_m), gen, bits)) return b + std::uint64_t(g);
    }
  }

  std::uint64_t m_m = 1;
  int m_f = 0;
  int m_k = 0;
  double m_scale = 0;  // 2^f / 2M rounded (sigma^-2 / 2), times 2^(64 - K)
  std::int64_t m_bins = 0;
  long double m_rho = 1;
  std::vector<long double> m_mass;  // each entry's mass (unnormalized)
  std::vector<u128> m_weights;
  DyadicAliasTable m_table;
  DiscreteLaplace m_tail_pos{1, 1}, m_tail_neg{1, 1};  // ratios e^{-S / sigma^2}, e^{-(S + 1) / sigma^2}
};

/// The noise of the Gaussian mechanisms: \f$N_Z(0, \sigma^2)\f$ by the tabled sampler when the
/// mechanism's audit accepted it (see TabledDiscreteGaussian), else by CKS 2020's exact sampler.
struct DiscreteGaussianNoise {
  DiscreteGaussianSampler exact;
  std::optional<TabledDiscreteGaussian> table;

  /// sigma^2 in lattice units.
  double sigma2() const { return exact.sigma2(); }
  /// One draw.
  template <std::uniform_random_bit_generator G>
  std::int64_t operator()(G& gen) const {
    return table ? (*table)(gen) : exact(gen);
  }
};

}  // namespace labeldp::detail
