/// \file
/// Gaussian baselines: the analytic Gaussian mechanism (Balle and Wang 2018) and the discrete
/// Gaussian mechanism (Canonne, Kamath and Steinke 2020), both sampled in integer arithmetic.
///
/// A continuous Gaussian cannot be sampled exactly in floating point, and textbook floating-point
/// noise leaks through the gaps between doubles (Mironov 2012). Both mechanisms here therefore
/// add discrete Gaussian noise on a public lattice to the label snapped to that lattice, drawn with
/// integer arithmetic only: from a dyadic alias table whose realized law is within a factor
/// \f$1 \pm \rho\f$ (\f$\rho \le 2^{-36}\f$) of the discrete Gaussian's, or, when that table's
/// delta bound does not fit, with CKS 2020's exact rejection sampler (Algorithm 3); and state the
/// (eps, delta) of what is sampled: CKS 2020, Theorem 7, exact for the rejection sampler and
/// widened by the table's \f$\rho\f$ for the table (audited_gaussian_noise()).
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "labeldp/core/concepts.hpp"
#include "labeldp/core/label_grid.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/mechanisms/detail/discrete_gaussian.hpp"
#include "labeldp/mechanisms/detail/lattice.hpp"

namespace labeldp {

namespace detail {

/// 16-point Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_16, computed once).
inline const std::array<std::array<double, 2>, 16>& gauss_legendre16() {
  static const auto table = [] {
    std::array<std::array<double, 2>, 16> t{};
    constexpr int n = 16;
    for (int i = 0; i < n; ++i) {
      double x = std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5)), dp = 1;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1, p1 = x;
        for (int k = 2; k <= n; ++k) {
          const double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (x * p1 - p0) / (x * x - 1);
        const double dx = p1 / dp;
        x -= dx;
        if (std::abs(dx) < 1e-17) break;
      }
      t[std::size_t(i)] = {x, 2 / ((1 - x * x) * dp * dp)};
    }
    return t;
  }();
  return table;
}

/// \f$\int_{x_0}^\infty f\f$ for a smooth non-negative f that decays like a Gaussian tail:
/// Gauss-Legendre panels whose width is `width(x)`, stopped once `done(x, sum)`.
template <typename F, typename W, typename Done>
double panel_integral(double x0, F f, W width, Done done) {
  const auto& gl = gauss_legendre16();
  double sum = 0, x = x0;
  for (int panel = 0; panel < 100000 && !done(x, sum); ++panel) {
    const double w = width(x), mid = x + w / 2;
    double s = 0;
    for (const auto& nw : gl) s += nw[1] * f(mid + w / 2 * nw[0]);
    sum += s * w / 2;
    x += w;
  }
  return sum;
}

}  // namespace detail

/// The exact delta of the Gaussian mechanism \f$y + N(0, \sigma^2)\f$ with L2 sensitivity
/// \f$\Delta\f$ at a given eps (Balle and Wang 2018, Theorem 8):
/// \f$\delta = \Phi(\Delta/2\sigma - \varepsilon\sigma/\Delta) - e^\varepsilon \Phi(-\Delta/2\sigma -
/// \varepsilon\sigma/\Delta)\f$. Evaluated without cancellation as the integral of a positive function, \f$\delta =
/// \int_a^\infty \phi(z)\,(1 - e^{-2u(z-a)})\,dz\f$ with \f$u = \Delta/2\sigma\f$, \f$a = \varepsilon\sigma/\Delta -
/// u\f$, by Gauss-Legendre panels (relative error about 1e-14, also for delta near 1e-300 and eps up to several
/// hundred). \throws std::invalid_argument for non-finite or non-positive sigma, eps or sensitivity.
inline double analytic_gaussian_delta(double sigma, double eps, double sensitivity) {
  validate_finite_positive("sigma", sigma);
  validate_epsilon(eps);
  validate_finite_positive("sensitivity", sensitivity);
  const double u = sensitivity / (2 * sigma), a = eps * sigma / sensitivity - u;
  const double h0 = std::min(0.5, 0.25 / u);
  if (a >= 0) {
    // delta = phi(a) * int_0^inf e^{-a s - s^2/2} (1 - e^{-2 u s}) ds: no overflow, no cancellation.
    const double inner = detail::panel_integral(
        0.0, [&](double s) { return std::exp(-a * s - s * s / 2) * -std::expm1(-2 * u * s); },
        [&](double s) { return std::min(2 / (a + s + 1), std::max(h0, s)); },
        [&](double s, double) { return s * (a + s / 2) > 90; });
    return std::exp(-a * a / 2) / std::sqrt(2 * std::numbers::pi) * inner;
  }
  const double z0 = std::max(a, -14.0);
  return detail::panel_integral(
      z0,
      [&](double z) { return std::exp(-z * z / 2) / std::sqrt(2 * std::numbers::pi) * -std::expm1(-2 * u * (z - a)); },
      [&](double z) { return std::min(2 / (std::abs(z) + 1), std::max(h0, z - a)); },
      [&](double z, double) { return z > 0 && z * z / 2 > 90; });
}

/// The smallest sigma for which the Gaussian mechanism with L2 sensitivity `sensitivity` is
/// (eps, delta)-DP: the root of analytic_gaussian_delta(sigma) = delta (Balle and Wang 2018,
/// Theorem 8 and Algorithm 1), found by bisection on log sigma to a relative width of 1e-14;
/// the upper end is returned, so analytic_gaussian_delta(result) <= delta up to its evaluation
/// error (about 1e-14 relative).
/// \throws std::invalid_argument unless eps > 0 (at most 700), 1e-300 <= delta < 1, sensitivity > 0.
inline double analytic_gaussian_sigma(double eps, double delta, double sensitivity) {
  validate_epsilon(eps);
  if (eps > 700) detail::fail_parameter("eps", "must be at most 700 for the Gaussian mechanism", eps);
  detail::validate_delta(delta);
  validate_finite_positive("sensitivity", sensitivity);
  auto ok = [&](double s) { return analytic_gaussian_delta(s, eps, sensitivity) <= delta; };
  double lo = sensitivity, hi = sensitivity;
  while (!ok(hi)) hi *= 2;
  while (ok(lo)) lo /= 2;
  while (hi / lo - 1 > 1e-14) {
    const double mid = std::sqrt(lo * hi);
    (ok(mid) ? hi : lo) = mid;
  }
  return hi;
}

namespace detail {

/// Normalizer \f$\sum_{y \in Z} e^{-y^2/2\sigma^2}\f$: a direct sum for sigma < 8, else Poisson
/// summation \f$\sqrt{2\pi}\sigma(1 + 2e^{-2\pi^2\sigma^2})\f$ (omitted terms below 1e-1000 relative).
inline double discrete_gaussian_normalizer(double s2) {
  const double sigma = std::sqrt(s2);
  if (sigma >= 8)
    return std::sqrt(2 * std::numbers::pi * s2) * (1 + 2 * std::exp(-2 * std::numbers::pi * std::numbers::pi * s2));
  double z = 1;
  for (double y = 1; y <= 40 * sigma + 2; ++y) z += 2 * std::exp(-y * y / (2 * s2));
  return z;
}

/// Variance of the discrete Gaussian with parameter s2: s2 itself for sigma >= 4 (the Poisson
/// summation correction is below 1e-130 relative), else a direct sum.
inline double discrete_gaussian_variance(double s2) {
  const double sigma = std::sqrt(s2);
  if (sigma >= 4) return s2;
  double v = 0;
  for (double y = 1; y <= 40 * sigma + 2; ++y) v += 2 * y * y * std::exp(-y * y / (2 * s2));
  return v / discrete_gaussian_normalizer(s2);
}

}  // namespace detail

/// The exact delta at `eps` of \f$y + Z\f$, \f$Z \sim N_Z(0, \sigma^2)\f$, for integer inputs at
/// distance at most D (CKS 2020, Theorem 7):
/// \f$\delta = \sum_{y > \varepsilon\sigma^2/D - D/2} p(y)(1 - e^{\varepsilon - (2yD + D^2)/2\sigma^2})\f$,
/// a sum of positive terms (no cancellation). Distance D is the worst case: the discrete Gaussian
/// is log-concave, so its shifts have monotone likelihood ratios, the optimal distinguishing set
/// is a half-line, and the hockey-stick divergence grows with the shift.
/// \param s2 sigma^2 in lattice units. Cost: about 10 sigma terms.
/// \param eps the privacy parameter, finite and > 0.
/// \param D the sensitivity in lattice units, a positive integer.
inline double discrete_gaussian_delta(double s2, double eps, std::int64_t D) {
  validate_finite_positive("sigma^2", s2);
  validate_epsilon(eps);
  if (D < 1) throw std::invalid_argument("'sensitivity' must be a positive integer, got " + std::to_string(D));
  const double sigma = std::sqrt(s2), dd = double(D);
  const double x1 = eps * s2 / dd - dd / 2;
  double y = std::max(std::floor(x1), -std::ceil(40 * sigma) - 1);
  double sum = 0;
  for (;; ++y) {
    const double e = (2 * y * dd + dd * dd) / (2 * s2);
    const double factor = -std::expm1(eps - e);
    const double g = y * y / (2 * s2);
    if (factor > 0) {
      const double term = std::exp(-g) * factor;
      sum += term;
      if (y > 0 && (term < 1e-20 * sum || g > 746)) break;
    } else if (y > 0 && g > 746) {
      break;
    }
  }
  return sum / detail::discrete_gaussian_normalizer(s2);
}

/// How the Gaussian mechanisms draw their noise: `table` (the default) from the audited table
/// when its delta bound fits (else exactly), `exact` always by CKS 2020's Algorithm 3 (what a
/// mechanism file written before the table, without a "noise" field, describes).
enum class GaussianNoise { table, exact };

namespace detail {

/// The widest discrete Gaussian supported, in lattice steps: each exact delta evaluation
/// (discrete_gaussian_delta()) sums about 10 sigma terms and the search takes ~30 of them, so
/// construction stays well under a second; a wider noise is refused naming this limit.
inline constexpr double kMaxGaussianSigmaSteps = 65536;
/// The same for the analytic Gaussian, whose lattice step grows with sigma (sigma stays below
/// 2^15 steps) until the whole range is one step: then sigma in steps is sigma over the range,
/// refused beyond 2^17 (eps ~ 6e-6 at delta 1e-6; construction ~0.45 s at the limit).
inline constexpr double kMaxAnalyticSigmaSteps = 131072;

/// The smallest sigma^2 (lattice units, dyadic, rounded up) whose exact delta for sensitivity D
/// is at most delta / (1 + 1e-9); search precision 1e-9 relative in sigma, then sigma^2 rounded
/// up to 24 significant bits.
inline DiscreteGaussianSampler smallest_discrete_gaussian(double eps, double delta, std::int64_t D, double max_sigma,
                                                          const char* advice) {
  const double target = delta / (1 + 1e-9);
  auto ok = [&](double sigma) { return discrete_gaussian_delta(sigma * sigma, eps, D) <= target; };
  const double guess = std::max(analytic_gaussian_sigma(eps, delta, double(D)), 0.0625);
  if (guess > max_sigma)
    throw std::invalid_argument("the noise needs sigma of about " + format_number(guess) +
                                " lattice steps, more than the supported " + format_number(max_sigma) + ": " + advice);
  double lo = guess * 0.97, hi = guess * 1.03;
  while (!ok(hi)) hi *= 1.1;
  while (lo > 0.0625 && ok(lo)) lo /= 1.1;
  if (lo < 0.0625) lo = 0.0625;
  if (!ok(lo))
    while (hi / lo - 1 > 1e-9) {
      const double mid = std::sqrt(lo * hi);
      (ok(mid) ? hi : lo) = mid;
    }
  else
    hi = lo;  // sigma = 1/16 already suffices: a smaller one is not used
  DiscreteGaussianSampler s = dyadic_sampler(hi * hi);
  while (discrete_gaussian_delta(s.sigma2(), eps, D) > target) s = dyadic_sampler(s.sigma2() * (1 + 1e-9));
  return s;
}

/// The Gaussian mechanisms' noise of sigma^2 `exact.sigma2()` and its realized delta at eps for
/// sensitivity D. The tabled sampler (TabledDiscreteGaussian: about two words per draw) is used
/// when its delta bound, \f$(1 + 2\rho)\f$ times the exact delta at \f$\varepsilon - 4\rho\f$
/// (rounded up; TabledDiscreteGaussian shows \f$(1 + \rho)\f$ at \f$\varepsilon - 3\rho\f$), is at
/// most delta / (1 + 1e-9); that bound is then the realized delta. Otherwise (a narrow noise, a
/// sigma so tight that the bound exceeds delta, or `choice` exact) CKS 2020's exact sampler, with
/// the exact delta (CKS 2020, Theorem 7).
inline std::pair<DiscreteGaussianNoise, double> audited_gaussian_noise(const DiscreteGaussianSampler& exact, double eps,
                                                                       double delta, std::int64_t D,
                                                                       GaussianNoise choice = GaussianNoise::table) {
  DiscreteGaussianNoise noise{exact, std::nullopt};
  if (choice == GaussianNoise::exact) return {std::move(noise), discrete_gaussian_delta(exact.sigma2(), eps, D)};
  if (auto table = TabledDiscreteGaussian::build(exact.m, exact.f)) {
    const double rho = double(table->relative_error());
    if (eps - 4 * rho > 0) {
      const double bound = std::nextafter((1 + 2 * rho) * discrete_gaussian_delta(exact.sigma2(), eps - 4 * rho, D),
                                          std::numeric_limits<double>::infinity());
      if (bound <= delta / (1 + 1e-9)) {
        noise.table = std::move(table);
        return {std::move(noise), bound};
      }
    }
  }
  return {std::move(noise), discrete_gaussian_delta(exact.sigma2(), eps, D)};
}

/// Exact E[(out - y)^2] for discrete Gaussian noise (sigma^2 = s2 grid steps) on a grid,
/// out = grid.output(grid.index(y) + Z, clip).
inline double grid_gaussian_loss(const LabelGrid<double>& grid, bool clip, double s2, double y) {
  const std::int64_t c = grid.index(y), n = grid.steps();
  const double g = grid.step(), z_norm = discrete_gaussian_normalizer(s2);
  auto p = [&](std::int64_t z) { return std::exp(-double(z) * double(z) / (2 * s2)) / z_norm; };
  if (!clip) {
    const double d0 = grid.lo() + double(c) * g - y;
    return d0 * d0 + g * g * discrete_gaussian_variance(s2) + top_point_correction(grid, y, p(n - c));
  }
  const std::int64_t reach = std::int64_t(std::ceil(40 * std::sqrt(s2))) + 2;
  // Middle: c + z in [0, N - 1], value lo + g (c + z); top: c + z >= N; bottom: c + z < 0.
  double mid = 0, top = 0, bottom = 0;
  for (std::int64_t z = std::max(-c, -reach); z <= std::min(n - 1 - c, reach); ++z) {
    const double e = grid.value(c + z) - y;
    mid += p(z) * e * e;
  }
  for (std::int64_t z = std::max(n - c, -reach); z <= reach; ++z) top += p(z);
  for (std::int64_t z = std::max(c + 1, -reach); z <= reach; ++z) bottom += p(z);  // P(Z <= -c-1), symmetric
  const double et = grid.top() - y, eb = grid.lo() - y;
  return mid + top * et * et + bottom * eb * eb;
}

}  // namespace detail

/// The discrete Gaussian mechanism on the grid of step R (Canonne, Kamath and Steinke 2020):
/// the label is clipped to [lo, hi] and snapped to the grid \f$lo + R j\f$, j = 0..N, and
/// \f$M(y) = lo + R(j(y) + Z)\f$ with \f$Z \sim N_Z(0, \sigma^2)\f$ in grid units (optionally
/// clipped back to [lo, hi]: post-processing). Sigma is the smallest (to 1e-9 relative, then
/// rounded up to a dyadic sigma^2 of 24 significant bits) whose exact delta for sensitivity N
/// (CKS 2020, Theorem 7; see discrete_gaussian_delta()) is at most delta / (1 + 1e-9).
/// The noise is drawn from a table whose delta bound is audited, else exactly by CKS 2020's
/// Algorithm 3 (detail::audited_gaussian_noise(); realized_delta() is what is certified for the
/// sampler used); its work does not depend on the label.
/// Supported: eps <= 100, sigma at most 2^16 grid steps (detail::kMaxGaussianSigmaSteps).
///
/// \code{.cpp}
/// labeldp::DiscreteGaussianMechanism dg(0, 5000, 1.0, 1e-6, 50, true);
/// labeldp::SecureRandom gen;
/// double noisy = dg.sample(1234.5, gen);
/// \endcode
class DiscreteGaussianMechanism : public detail::LatticeBaseline<DiscreteGaussianMechanism> {
 public:
  /// `noise`: the audited table when its delta bound fits (default; the JSON then says
  /// "noise": "table"), or always CKS 2020's exact sampler.
  /// \throws std::invalid_argument for a bad lo/hi/resolution (LabelGrid's rules), eps not in
  ///         (0, 100], delta not in [1e-300, 1), or noise wider than 2^16 grid steps.
  DiscreteGaussianMechanism(double lo, double hi, double eps, double delta, double resolution, bool clip,
                            GaussianNoise noise = GaussianNoise::table)
      : m_grid(lo, hi, resolution), m_eps(eps), m_delta(delta), m_clip(clip) {
    validate_epsilon(eps);
    if (eps > 100) detail::fail_parameter("eps", "must be at most 100 for the discrete Gaussian", eps);
    detail::validate_delta(delta);
    std::tie(m_noise, m_realized_delta) = detail::audited_gaussian_noise(
        detail::smallest_discrete_gaussian(eps, delta, m_grid.steps(), detail::kMaxGaussianSigmaSteps,
                                           "use a coarser 'resolution'"),
        eps, delta, m_grid.steps(), noise);
  }
  double eps() const { return m_eps; }
  /// The requested delta; the realized one is realized_delta() <= delta / (1 + 1e-9).
  double delta() const { return m_delta; }
  /// The certified delta at eps of the noise as sampled (see detail::audited_gaussian_noise()).
  double realized_delta() const { return m_realized_delta; }
  /// Sigma in label units.
  double sigma() const { return std::sqrt(m_noise.sigma2()) * m_grid.step(); }
  /// sigma^2 in grid units, exactly: sigma2_numerator() / 2^sigma2_log2_denominator().
  std::uint64_t sigma2_numerator() const { return m_noise.exact.m; }
  int sigma2_log2_denominator() const { return m_noise.exact.f; }
  double resolution() const { return m_grid.step(); }
  bool clipped() const { return m_clip; }
  /// The grid of step resolution() the labels are snapped to.
  const LabelGrid<>& grid() const { return m_grid; }

  /// Probability of noise z grid steps under the discrete Gaussian (the table's realized law is
  /// within a factor 1 +- rho of it: noise().table->pmf()).
  double noise_pmf(std::int64_t z) const {
    const double s2 = m_noise.sigma2();
    return std::exp(-double(z) * double(z) / (2 * s2)) / detail::discrete_gaussian_normalizer(s2);
  }
  /// The noise sampler, on grid steps.
  const detail::DiscreteGaussianNoise& noise() const { return m_noise; }
  /// E[(M(y) - y)^2] for a finite label y (clipped when the mechanism clips), measured from y: exact
  /// for the discrete Gaussian, within a factor 1 +- rho for the tabled noise.
  double conditional_loss(double y) const { return detail::grid_gaussian_loss(m_grid, m_clip, m_noise.sigma2(), y); }
  std::string to_json() const {
    return detail::baseline_json_head("discrete-gaussian", m_eps, m_grid.lo(), m_grid.hi(), m_clip, m_delta) +
           ",\"resolution\":" + json_number(m_grid.step()) + ",\"sigma\":" + json_number(sigma()) +
           ",\"sigma2_numerator\":" + std::to_string(m_noise.exact.m) +
           ",\"sigma2_log2_denominator\":" + std::to_string(m_noise.exact.f) +
           ",\"realized_delta\":" + json_number(m_realized_delta) + (m_noise.table ? ",\"noise\":\"table\"}" : "}");
  }

 private:
  LabelGrid<> m_grid;
  double m_eps, m_delta;
  bool m_clip;
  detail::DiscreteGaussianNoise m_noise;
  double m_realized_delta = 0;
};

/// The analytic Gaussian mechanism (Balle and Wang 2018), sampled in integer arithmetic.
///
/// analytic_sigma() is Balle and Wang's smallest sigma for sensitivity hi - lo. What is sampled
/// is its exact lattice counterpart: the label, clipped to [lo, hi], is snapped to the public
/// lattice \f$lo + g j\f$ (LabelGrid::power_of_two()), g the largest power of two at most
/// \f$\max(\sigma/2^{14}, \min(\sigma/2^{10}, (hi - lo)/2^{12}))\f$, so snapped labels are at
/// most \f$D = \mathrm{round}((hi - lo)/g)\f$ steps apart (at most half a step more than
/// hi - lo: the guarantee's loss from the lattice; when sigma is so large that g exceeds
/// 2(hi - lo), every label snaps to lo and D = 1), and discrete Gaussian noise is added with the
/// smallest lattice sigma whose exact delta for D (CKS 2020, Theorem 7) is at most
/// delta / (1 + 1e-9), drawn as DiscreteGaussianMechanism's (an audited table, else CKS 2020's
/// Algorithm 3). sigma() is that realized sigma in label units, slightly above analytic_sigma()
/// because of the widened sensitivity (by at most g/(2(hi - lo)) relative: 1.2e-4 unless
/// sigma > 4 (hi - lo), sigma/(2^15 (hi - lo)) beyond); realized_delta() the delta certified
/// for the noise as sampled.
///
/// \code{.cpp}
/// labeldp::AnalyticGaussianMechanism ag(0, 5000, 1.0, 1e-6, /*clip=*/true);
/// labeldp::SecureRandom gen;
/// double noisy = ag.sample(1234.5, gen);
/// \endcode
class AnalyticGaussianMechanism : public detail::LatticeBaseline<AnalyticGaussianMechanism> {
 public:
  /// `noise` as DiscreteGaussianMechanism's.
  /// \throws std::invalid_argument for bad lo/hi, eps not in (0, 100], delta not in [1e-300, 1).
  AnalyticGaussianMechanism(double lo, double hi, double eps, double delta, bool clip,
                            GaussianNoise noise = GaussianNoise::table)
      : m_eps(eps),
        m_delta(delta),
        m_clip(clip),
        m_analytic_sigma(checked_analytic_sigma(lo, hi, eps, delta)),
        m_grid(LabelGrid<>::power_of_two(lo, hi, grid_step_for(m_analytic_sigma, hi - lo))) {
    std::tie(m_noise, m_realized_delta) = detail::audited_gaussian_noise(
        detail::smallest_discrete_gaussian(eps, delta, m_grid.steps(), detail::kMaxAnalyticSigmaSteps,
                                           "the noise would be more than 2^17 times the label range: "
                                           "use a larger eps or delta"),
        eps, delta, m_grid.steps(), noise);
  }
  double eps() const { return m_eps; }
  double delta() const { return m_delta; }
  double realized_delta() const { return m_realized_delta; }
  double analytic_sigma() const { return m_analytic_sigma; }
  double sigma() const { return std::sqrt(m_noise.sigma2()) * m_grid.step(); }
  /// The grid step g (a power of two).
  double grid_step() const { return m_grid.step(); }
  bool clipped() const { return m_clip; }
  /// The power-of-two grid the labels are snapped to.
  const LabelGrid<>& grid() const { return m_grid; }
  std::uint64_t sigma2_numerator() const { return m_noise.exact.m; }
  int sigma2_log2_denominator() const { return m_noise.exact.f; }

  /// The noise sampler, on grid steps.
  const detail::DiscreteGaussianNoise& noise() const { return m_noise; }
  /// E[(M(y) - y)^2] for a finite label y, for the lattice mechanism actually sampled: exact for
  /// the discrete Gaussian, within a factor 1 +- rho for the tabled noise.
  double conditional_loss(double y) const { return detail::grid_gaussian_loss(m_grid, m_clip, m_noise.sigma2(), y); }
  std::string to_json() const {
    return detail::baseline_json_head("gaussian", m_eps, m_grid.lo(), m_grid.hi(), m_clip, m_delta) +
           ",\"sigma\":" + json_number(sigma()) + ",\"analytic_sigma\":" + json_number(m_analytic_sigma) +
           ",\"grid_step\":" + json_number(m_grid.step()) + ",\"sigma2_numerator\":" + std::to_string(m_noise.exact.m) +
           ",\"sigma2_log2_denominator\":" + std::to_string(m_noise.exact.f) +
           ",\"realized_delta\":" + json_number(m_realized_delta) + (m_noise.table ? ",\"noise\":\"table\"}" : "}");
  }

 private:
  static double checked_analytic_sigma(double lo, double hi, double eps, double delta) {
    detail::validate_label_range(lo, hi);
    validate_epsilon(eps);
    if (eps > 100) detail::fail_parameter("eps", "must be at most 100 for the Gaussian mechanism", eps);
    detail::validate_delta(delta);
    return analytic_gaussian_sigma(eps, delta, hi - lo);
  }
  // The largest power of two at most max(sigma / 2^14, min(sigma / 2^10, range / 2^12)).
  static double grid_step_for(double sigma, double range) {
    return std::ldexp(1.0, std::ilogb(std::max(sigma / 16384, std::min(sigma / 1024, range / 4096))));
  }

  double m_eps, m_delta;
  bool m_clip;
  double m_analytic_sigma;
  LabelGrid<> m_grid;
  detail::DiscreteGaussianNoise m_noise;
  double m_realized_delta = 0;
};

}  // namespace labeldp
