/// \file
/// Staircase baselines (Geng and Viswanath 2014; Ghazi et al. 2023, Definitions 24-25): the
/// continuous staircase mechanism with the gamma that minimizes the noise variance, and the
/// discrete staircase mechanism on a grid, both sampled exactly.
///
/// Both add noise on a public lattice \f$lo + g j\f$ (j = 0..D) to the label clipped to [lo, hi]
/// and snapped to it. The noise has the discrete staircase shape of period D: one-sided mass
/// \f$q(kD + j) = (1-b)b^k c_1\f$ for j < r and \f$(1-b)b^k c_2\f$ for r <= j < D, made
/// symmetric, with \f$b = e^{-\varepsilon}\f$ exactly (eps read as the dyadic rational it is) and
/// \f$c_1/c_2 \le 1/b\f$ (the plateau probability rounded up), so the pmf is non-increasing in
/// |z| and its ratio at any shift of at most D steps is at most 1/b = e^eps: eps-DP exactly as
/// realized. Sampling follows Geng and Viswanath's recipe (sign, geometric period, Bernoulli
/// plateau, uniform offset), each part exact: the period by Canonne, Kamath and Steinke's
/// (2020, Algorithm 2) rational method in O(1) expected draws for any eps, the plateau and the
/// offset from one 64-bit word (its high half against the plateau probability's binary
/// expansion, a tie settled by further words; its low half an exact uniform integer by Lemire's
/// multiply-and-reject, a rejection drawing a fresh word). For eps from about 1e-3 to 22 the period comes
/// instead from a TabledGeometric (one 64-bit word) of ratio \f$e^{-\varepsilon(1-\delta)}\f$,
/// \f$\delta = 2^{-32}\f$ (up to \f$2^{-20}\f$ at small eps), whose realized probabilities are
/// audited exactly when built: non-increasing, consecutive ratios at most \f$e^\varepsilon\f$, which
/// is all the proof above uses of the period's law (the pmf may then rise by a factor
/// \f$1 + \varepsilon\delta\f$ at a period's start, where the ratio is still within
/// \f$e^\varepsilon\f$), so the realized guarantee stays eps. What is sampled is then realized_pmf(),
/// within about \f$\delta\f$ relative of pmf(); the losses are pmf()'s.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "labeldp/core/concepts.hpp"
#include "labeldp/core/label_grid.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/tabled_discrete_laplace.hpp"
#include "labeldp/mechanisms/detail/lattice.hpp"

namespace labeldp {

/// The gamma in (0, 1) that minimizes the variance of the continuous staircase distribution
/// (Geng and Viswanath 2014, the closed form for the cost \f$x^2\f$):
/// \f$\gamma^* = -\frac{b}{1-b} + \frac{(b - 2b^2 + 2b^4 - b^5)^{1/3}}{2^{1/3}(1-b)^2}\f$, \f$b = e^{-\varepsilon}\f$.
/// \throws std::invalid_argument for a bad eps.
inline double staircase_optimal_gamma(double eps) {
  validate_epsilon(eps);
  const double b = std::exp(-eps), omb = -std::expm1(-eps);
  const double g =
      -b / omb + std::cbrt(b - 2 * b * b + 2 * b * b * b * b - b * b * b * b * b) / (std::cbrt(2.0) * omb * omb);
  return std::clamp(g, 0.0, 1.0);
}

/// Variance of the continuous staircase distribution of Ghazi et al. 2023, Definition 25, with
/// period `sensitivity` (closed form: the density is piecewise constant, so each period's second
/// moment is a cubic and the periods sum as series in b).
inline double staircase_variance(double eps, double gamma, double sensitivity) {
  validate_epsilon(eps);
  validate_in_range("gamma", gamma, 0, 1);
  validate_finite_positive("sensitivity", sensitivity);
  const double b = std::exp(-eps), omb = -std::expm1(-eps), D = sensitivity;
  const double S0 = 1 / omb, S1 = b / (omb * omb), S2 = b * (1 + b) / (omb * omb * omb);
  auto G = [&](double c) { return S2 * D * D * c + S1 * D * c * c + S0 * c * c * c / 3; };
  const double a = omb / (2 * D * (gamma + b * (1 - gamma)));
  return 2 * a * (omb * G(gamma * D) + b * G(D));
}

/// Density of the continuous staircase distribution (Ghazi et al. 2023, Definition 25).
inline double staircase_pdf(double x, double eps, double gamma, double sensitivity) {
  const double b = std::exp(-eps), D = sensitivity, ax = std::abs(x);
  const double a = -std::expm1(-eps) / (2 * D * (gamma + b * (1 - gamma)));
  const double k = std::floor(ax / D), u = ax - k * D;
  return a * std::pow(b, k) * (u < gamma * D ? 1 : b);
}

namespace detail {

/// Throws unless 1e-6 <= eps <= 700 (outside, the staircase degenerates in double precision).
inline void validate_staircase_eps(double eps) {
  validate_epsilon(eps);
  if (eps < 1e-6 || eps > 700) fail_parameter("eps", "must be in [1e-06, 700] for the staircase mechanism", eps);
}

/// Exactly uniform integers on [0, n) from 32 random bits already drawn: Lemire's (2019)
/// multiply-and-reject, where a rejection (probability below n 2^-32) or an n above 2^32 draws a
/// fresh 64-bit uniform_below() instead; either way the result is uniform and independent of
/// whatever else the caller read from the other bits of the word.
class PlateauOffsets {
 public:
  PlateauOffsets() = default;
  explicit PlateauOffsets(std::int64_t n)
      : m_n(std::uint64_t(n)), m_threshold(m_n > 0 && m_n <= kWide ? std::uint32_t(kWide % m_n) : 0) {}
  template <std::uniform_random_bit_generator G>
  std::uint64_t operator()(std::uint32_t bits, G& gen) const {
    const std::uint64_t m = std::uint64_t(bits) * m_n;
    if (m_n > kWide || std::uint32_t(m) < m_threshold) [[unlikely]]
      return redraw(gen);
    return m >> 32;
  }

 private:
  static constexpr std::uint64_t kWide = std::uint64_t(1) << 32;
  // A width beyond 32 bits, or Lemire's rejection: a fresh exact draw (out of line, so that the
  // common case inlines into the sampler's loop).
  template <std::uniform_random_bit_generator G>
  [[gnu::noinline]] std::uint64_t redraw(G& gen) const {
    return uniform_below(m_n, gen);
  }
  std::uint64_t m_n = 0;
  std::uint32_t m_threshold = 0;  // 2^32 mod n: the low products below it are rejected
};

/// The realized discrete staircase noise of period D and plateau r (see the file comment).
class StaircaseNoise {
 public:
  StaircaseNoise() = default;
  StaircaseNoise(double eps, std::int64_t period, std::int64_t r) : m_D(period), m_r(r) {
    // eps is a dyadic rational s / 2^k exactly: the period is drawn with ratio exactly e^-eps.
    int e = 0;
    const double f = std::frexp(eps, &e);
    m_s = std::uint64_t(std::ldexp(f, 53));
    int k = 53 - e;
    while (k > 0 && (m_s & 1) == 0) {
      m_s >>= 1;
      --k;
    }
    if (k < 0 || k > 100) throw std::logic_error("staircase: eps outside the supported range");
    m_t = u128(1) << k;
    m_b = std::exp(-eps);
    m_omb = -std::expm1(-eps);
    if (r >= period) {
      m_r = period;
      m_pB = 0;
    } else {
      const double n2 = double(period - r);
      double p = n2 * m_b / (double(r) + n2 * m_b);
      for (int i = 0; i < 4; ++i) p = std::nextafter(p, 2.0);  // up: c1 / c2 <= 1 / b
      m_pB = std::min(p, 1.0);
    }
    m_c1 = (1 - m_pB) / double(m_r);
    m_c2 = m_r < m_D ? m_pB / double(m_D - m_r) : 0;
    m_q0 = m_omb * m_c1;
    m_periods = tabled_periods(eps);
    // pB 2^64 = Q 2^32 + f exactly (pB a double in [0, 1]): the plateau coin reads the high 32
    // bits of a word against Q, a tie (probability 2^-32) is settled by a coin of probability f
    // (exact: pB 2^32 has at most 53 significant bits, so its fractional part f is a double).
    const double scaled = std::ldexp(m_pB, 32);
    m_pB_high = std::uint64_t(scaled);
    m_pB_tie = scaled - double(m_pB_high);
    m_offsets[0] = PlateauOffsets(2 * m_r);
    m_offsets[1] = PlateauOffsets(2 * (m_D - m_r));
  }
  std::int64_t period() const { return m_D; }
  std::int64_t r() const { return m_r; }
  double b() const { return m_b; }
  double plateau2_probability() const { return m_pB; }
  /// The realized guarantee, max(eps, ln(c1/c2)) = eps (the second term computed in floating point).
  double realized_eps() const {
    const double e = double(m_s) / double(m_t);
    return m_r < m_D ? std::max(e, std::log(m_c1 / m_c2)) : e;
  }

  /// One-sided mass q(i), i >= 0.
  double q(std::int64_t i) const {
    const std::int64_t k = i / m_D, j = i % m_D;
    return m_omb * std::pow(m_b, double(k)) * (j < m_r ? m_c1 : m_c2);
  }
  /// P(Z = z).
  double pmf(std::int64_t z) const { return q(z < 0 ? -z : z) / (2 - m_q0); }
  /// The audited table the period index is drawn from (see period_table()), or null when the
  /// exact sampler is used.
  const TabledGeometric* period_table() const { return m_periods.get(); }
  /// P(Z = z) as sampled: pmf() with the period's probability \f$(1-b)b^k\f$ replaced by the
  /// table's when period_table() is set (in long double).
  long double realized_pmf(std::int64_t z) const {
    if (!m_periods) return pmf(z);
    const std::int64_t i = z < 0 ? -z : z, k = i / m_D, j = i % m_D;
    const long double c = j < m_r ? m_c1 : m_c2, q0 = m_periods->probability(0) * static_cast<long double>(m_c1);
    return m_periods->probability(std::uint64_t(k)) * c / (2 - q0);
  }

  /// E[Z^2], closed form.
  double second_moment() const {
    const double b = m_b, omb = m_omb, D = double(m_D);
    const double S0 = 1 / omb, S1 = b / (omb * omb), S2 = b * (1 + b) / (omb * omb * omb);
    auto K = [&](double m) { return S2 * D * D * m + 2 * D * S1 * power_sum(1, m) + S0 * power_sum(2, m); };
    return 2 * omb / (2 - m_q0) * ((m_c1 - m_c2) * K(double(m_r)) + m_c2 * K(D));
  }

  /// sum_{i=0}^{t} i^m q(i) for 0 <= t <= D (m = 0, 1, 2).
  double partial(int m, std::int64_t t) const {
    if (t < 0) return 0;
    if (t == m_D) return partial(m, t - 1) + std::pow(double(m_D), m) * m_omb * m_b * m_c1;
    const double n = double(t + 1), r = double(m_r);
    double s = m_c1 * power_sum(m, std::min(n, r));
    if (n > r) s += m_c2 * (power_sum(m, n) - power_sum(m, r));
    return m_omb * s;
  }
  /// sum_{i >= k} q(i), k >= 0, without cancellation.
  double tail(std::int64_t k) const {
    if (k >= m_D) return m_b * tail(k - m_D);
    const double over1 = double(std::max<std::int64_t>(0, m_r - k));
    const double over2 = double(m_D - std::max(k, m_r));
    return m_b + m_omb * (m_c1 * over1 + m_c2 * over2);
  }

  /// Exact E[(out - y)^2] for out = grid.output(grid.index(y) + Z, clip), grid.steps() == period().
  double loss(const LabelGrid<double>& grid, bool clip, double y) const {
    const std::int64_t c = grid.index(y), D = grid.steps();
    const double g = grid.step(), d0 = grid.lo() + double(c) * g - y, norm = 2 - m_q0;
    if (!clip) return d0 * d0 + g * g * second_moment() + top_point_correction(grid, y, pmf(D - c));
    double M[3];
    for (int m = 0; m < 3; ++m) {
      const double neg = partial(m, c) - (m == 0 ? m_q0 : 0);
      M[m] = (partial(m, D - 1 - c) + (m == 1 ? -neg : neg)) / norm;
    }
    const double mid = d0 * d0 * M[0] + 2 * d0 * g * M[1] + g * g * M[2];
    const double top = tail(D - c) / norm, bottom = tail(c + 1) / norm;
    const double et = grid.top() - y, eb = grid.lo() - y;
    return mid + top * et * et + bottom * eb * eb;
  }

  template <std::uniform_random_bit_generator G>
  std::int64_t operator()(G& gen) const {
    for (;;) {
      const std::int64_t k = m_periods ? std::int64_t((*m_periods)(gen)) : untabled_period(gen);
      // The plateau and the offset in it from one word: its high 32 bits against pB 2^32 (Pr[upper]
      // = pB exactly, a flag rather than a branch on the coin), its low 32 bits for the uniform
      // draw on [0, 2 width) that gives the offset and the sign bit (independent of the high bits).
      const std::uint64_t x = random_u64(gen);
      bool upper = (x >> 32) < m_pB_high;
      if ((x >> 32) == m_pB_high) [[unlikely]]
        upper = tie_coin(gen);
      const std::uint64_t w = m_offsets[upper](std::uint32_t(x), gen);
      const std::int64_t i = k * m_D + (upper ? m_r : 0) + std::int64_t(w >> 1);
      const bool negative = (w & 1) != 0;
      if (negative && i == 0) continue;
      return negative ? -i : i;
    }
  }

 private:
  // The rare paths of operator(), out of line so that its common case inlines into the batch
  // loop: the period without a table (eps below about 1e-3 or above about 22), and the plateau
  // coin after its high 32 bits tied with pB 2^32 (probability 2^-32).
  template <typename G>
  [[gnu::noinline]] std::int64_t untabled_period(G& gen) const {
    NoiseBits<G> bits(gen);
    return period_index(bits);
  }
  template <typename G>
  [[gnu::noinline]] bool tie_coin(G& gen) const {
    return bernoulli(m_pB_tie, gen);
  }

  // The period index's table: geometric of ratio e^{-eps (1 - delta)} (delta = 2^-32, then 2^-28,
  // 2^-24, 2^-20), kept when the exact audit shows its realized probabilities non-increasing with
  // consecutive ratios at most e^eps: with c1 / c2 <= e^eps this is the staircase's proof with
  // the realized periods (see the file comment). Null when none passes (eps below about 1e-3, or
  // above about 22, where e^-eps 2^64 < 2^32).
  static std::shared_ptr<const TabledGeometric> tabled_periods(double eps) {
    const Dyadic bound = exp_upper_bound(false, 0, 0, eps);  // >= e^-eps
    for (int log2_delta : {-32, -28, -24, -20}) {
      auto t = std::make_shared<TabledGeometric>();
      if (t->build(static_cast<long double>(eps) * (1 - std::ldexp(1.0L, log2_delta)), 1, std::int64_t(1) << 14) &&
          t->non_increasing() && t->ratio_within(bound, 1))
        return t;
    }
    return nullptr;
  }

  // Geometric with P(k) = (1 - e^-eps) e^{-eps k}, exactly, in O(1) expected draws for any eps:
  // X = U + tV is discrete Laplace-like with P(X = x) proportional to e^{-x/t} (U uniform on
  // [0, t) accepted with probability e^{-U/t}, V geometric of ratio e^-1) and floor(X / s) is
  // geometric of ratio e^{-s/t} (Canonne, Kamath and Steinke 2020, Algorithm 2).
  template <typename G>
  std::int64_t period_index(NoiseBits<G>& bits) const {
    for (;;) {
      const u128 u = bits.below(m_t);
      if (!bernoulli_exp_minus(u, m_t, bits)) continue;
      std::uint64_t v = 0;
      while (bernoulli_exp_minus(1, 1, bits)) ++v;
      return std::int64_t((u + m_t * v) / m_s);
    }
  }

  std::int64_t m_D = 1, m_r = 1;
  std::uint64_t m_s = 1;  // eps = m_s / m_t
  u128 m_t = 1;
  double m_b = 0.5, m_omb = 0.5, m_pB = 0, m_c1 = 1, m_c2 = 0, m_q0 = 0.5;
  std::uint64_t m_pB_high = 0;                       // floor(pB 2^32)
  double m_pB_tie = 0;                               // pB 2^32 - m_pB_high, exact
  PlateauOffsets m_offsets[2];                       // uniform on [0, 2 width) of the lower and the upper plateau
  std::shared_ptr<const TabledGeometric> m_periods;  // the audited period table, if any
};

/// Variance of the ideal discrete staircase (Ghazi et al. 2023, Definition 24) with period D and
/// plateau r at b = e^-eps: \f$2a(r)[(1-b)K(r) + bK(D)]\f$.
inline double discrete_staircase_variance(double eps, std::int64_t D, std::int64_t r) {
  const double b = std::exp(-eps), omb = -std::expm1(-eps), dd = double(D), rr = double(r);
  const double S0 = 1 / omb, S1 = b / (omb * omb), S2 = b * (1 + b) / (omb * omb * omb);
  auto K = [&](double m) { return S2 * dd * dd * m + 2 * dd * S1 * power_sum(1, m) + S0 * power_sum(2, m); };
  const double a = omb / (2 * rr + 2 * b * (dd - rr) - omb);
  return 2 * a * (omb * K(rr) + b * K(dd));
}

/// The plateau r in [1, D] minimizing discrete_staircase_variance(): exhaustive for D <= 2^16,
/// else integer ternary search (the variance is unimodal in r) and a scan around its end.
inline std::int64_t optimal_staircase_r(double eps, std::int64_t D) {
  auto v = [&](std::int64_t r) { return discrete_staircase_variance(eps, D, r); };
  std::int64_t lo = 1, hi = D;
  if (D > 65536) {
    while (hi - lo > 32) {
      const std::int64_t m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      (v(m1) <= v(m2) ? hi : lo) = v(m1) <= v(m2) ? m2 : m1;
    }
    lo = std::max<std::int64_t>(1, lo - 32);
    hi = std::min(D, hi + 32);
  }
  std::int64_t best = lo;
  for (std::int64_t r = lo + 1; r <= hi; ++r)
    if (v(r) < v(best)) best = r;
  return best;
}

}  // namespace detail

/// The staircase mechanism (Geng and Viswanath 2014; Ghazi et al. 2023, Definition 25) with the
/// variance-optimal gamma (staircase_optimal_gamma()), sensitivity hi - lo, sampled exactly.
///
/// A continuous staircase cannot be sampled exactly in floating point; its "uniform" part is
/// drawn on a public power-of-two lattice instead: g is the largest power of two at most
/// (hi - lo)/2^20, the label (clipped to [lo, hi]) is snapped to \f$lo + g j\f$, and the noise is
/// the discrete staircase of period \f$D = \mathrm{round}((hi - lo)/g)\f$ lattice steps (so
/// \f$2^{20} \le D < 2^{21}\f$) with plateau \f$r = \mathrm{round}(\gamma^* D)\f$. The guarantee
/// is exactly eps for the lattice (snapped labels are at most D steps apart); the loss from the
/// lattice is a period of Dg instead of hi - lo (within half a step, relative 2^-21) and the
/// snapping error, both included in expected_loss(), which is exact for what is sampled.
///
/// \code{.cpp}
/// labeldp::StaircaseMechanism st(0, 5000, 1.0, /*clip=*/true);
/// labeldp::SecureRandom gen;
/// double noisy = st.sample(1234.5, gen);
/// \endcode
class StaircaseMechanism : public detail::LatticeBaseline<StaircaseMechanism> {
 public:
  /// \throws std::invalid_argument for bad lo/hi, or eps not in [1e-6, 700].
  StaircaseMechanism(double lo, double hi, double eps, bool clip)
      : m_eps(eps), m_clip(clip), m_grid(checked_grid(lo, hi, eps)) {
    m_gamma = staircase_optimal_gamma(eps);
    const std::int64_t D = m_grid.steps();
    const std::int64_t r = std::clamp<std::int64_t>(std::llround(m_gamma * double(D)), 1, D);
    m_noise = detail::StaircaseNoise(eps, D, r);
  }
  double eps() const { return m_eps; }
  double delta() const { return 0; }
  /// The variance-optimal gamma of the continuous staircase.
  double gamma() const { return m_gamma; }
  /// The lattice's plateau: r steps of the period D (r/D is within 2^-21 of gamma()).
  std::int64_t r() const { return m_noise.r(); }
  std::int64_t period() const { return m_noise.period(); }
  double grid_step() const { return m_grid.step(); }
  bool clipped() const { return m_clip; }
  /// The power-of-two grid the labels are snapped to.
  const LabelGrid<>& grid() const { return m_grid; }
  const detail::StaircaseNoise& noise() const { return m_noise; }

  /// Exact E[(M(y) - y)^2] for a finite label y, for the lattice mechanism sampled (closed forms).
  double conditional_loss(double y) const { return m_noise.loss(m_grid, m_clip, y); }
  std::string to_json() const {
    return detail::baseline_json_head("staircase", m_eps, m_grid.lo(), m_grid.hi(), m_clip) +
           ",\"gamma\":" + json_number(m_gamma) + ",\"grid_step\":" + json_number(m_grid.step()) +
           ",\"period\":" + std::to_string(m_noise.period()) + ",\"r\":" + std::to_string(m_noise.r()) +
           ",\"b\":" + json_number(m_noise.b()) +
           ",\"plateau2_probability\":" + json_number(m_noise.plateau2_probability()) + "}";
  }

 private:
  // The power-of-two grid of step the largest 2^k <= (hi - lo)/2^20, after validating the parameters.
  static LabelGrid<> checked_grid(double lo, double hi, double eps) {
    detail::validate_label_range(lo, hi);
    detail::validate_staircase_eps(eps);
    return LabelGrid<>::power_of_two(lo, hi, std::ldexp(1.0, std::ilogb((hi - lo) / 1048576.0)));
  }

  double m_eps;
  bool m_clip;
  LabelGrid<> m_grid;
  double m_gamma = 0;
  detail::StaircaseNoise m_noise;
};

/// The discrete staircase mechanism on the grid of step R (Ghazi et al. 2023, Definition 24;
/// Geng and Viswanath 2014): labels clipped to [lo, hi] and snapped to \f$lo + R j\f$, j = 0..N,
/// noise of period N grid steps (the sensitivity) with the plateau r in [1, N] of least variance
/// (found exactly: detail::optimal_staircase_r()); gamma = r / N. Pure eps-DP exactly as realized.
///
/// \code{.cpp}
/// labeldp::DiscreteStaircaseMechanism st(0, 5000, 1.0, 50, /*clip=*/true);
/// labeldp::SecureRandom gen;
/// double noisy = st.sample(1234.5, gen);
/// \endcode
class DiscreteStaircaseMechanism : public detail::LatticeBaseline<DiscreteStaircaseMechanism> {
 public:
  /// \throws std::invalid_argument for bad lo/hi/resolution (LabelGrid's rules), or eps not in [1e-6, 700].
  DiscreteStaircaseMechanism(double lo, double hi, double eps, double resolution, bool clip)
      : m_grid(lo, hi, resolution), m_eps(eps), m_clip(clip) {
    detail::validate_staircase_eps(eps);
    const std::int64_t N = m_grid.steps();
    m_noise = detail::StaircaseNoise(eps, N, detail::optimal_staircase_r(eps, N));
  }
  double eps() const { return m_eps; }
  double delta() const { return 0; }
  std::int64_t r() const { return m_noise.r(); }
  /// r / N.
  double gamma() const { return double(m_noise.r()) / double(m_noise.period()); }
  double resolution() const { return m_grid.step(); }
  bool clipped() const { return m_clip; }
  /// The grid of step resolution() the labels are snapped to.
  const LabelGrid<>& grid() const { return m_grid; }
  const detail::StaircaseNoise& noise() const { return m_noise; }

  /// Exact E[(M(y) - y)^2] for a finite label y (closed forms).
  double conditional_loss(double y) const { return m_noise.loss(m_grid, m_clip, y); }
  std::string to_json() const {
    return detail::baseline_json_head("discrete-staircase", m_eps, m_grid.lo(), m_grid.hi(), m_clip) +
           ",\"resolution\":" + json_number(m_grid.step()) + ",\"gamma\":" + json_number(gamma()) +
           ",\"r\":" + std::to_string(m_noise.r()) + ",\"b\":" + json_number(m_noise.b()) +
           ",\"plateau2_probability\":" + json_number(m_noise.plateau2_probability()) + "}";
  }

 private:
  LabelGrid<> m_grid;
  double m_eps;
  bool m_clip;
  detail::StaircaseNoise m_noise;
};

}  // namespace labeldp
