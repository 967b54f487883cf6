/// \file
/// Additive-noise baselines on a public grid: the discrete Laplace mechanism (Ghazi et al. 2023,
/// Definition 22), optionally clipped to the label range (their Appendix F), and the exponential
/// mechanism restricted to the label range (their Definition 26 and Appendix F).
///
/// Labels live on the public grid \f$lo + g j\f$, \f$j = 0..N\f$, \f$N = (hi - lo)/g\f$. Replacing one
/// label moves it by at most N grid steps, so noise on the step index with
/// \f$\Pr[Z = z] \propto \alpha^{|z|}\f$, \f$\alpha = e^{-\varepsilon/N}\f$, is eps-DP. Working on the
/// grid is what keeps sampling exact: textbook floating-point Laplace noise leaks through the
/// gaps of the floating-point numbers (Mironov 2012).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// A public grid \f$lo, lo + g, \dots, hi\f$ of N + 1 points onto which labels are clipped and
/// rounded (a data-independent map, so it costs no privacy).
template <typename Scalar = double>
class LabelGrid {
 public:
  /// \throws std::invalid_argument unless lo < hi are finite, g > 0 is finite, and (hi - lo)/g is
  ///         an integer N (within 1e-9 relative) with 1 <= N <= 2^31.
  LabelGrid(Scalar lo, Scalar hi, Scalar granularity) : m_lo(lo), m_hi(hi), m_step(granularity) {
    validate_finite("lo", double(lo));
    validate_finite("hi", double(hi));
    validate_finite_positive("granularity", double(granularity));
    if (!(lo < hi))
      throw std::invalid_argument("'lo' must be below 'hi', got lo = " + detail::format_number(double(lo)) +
                                  ", hi = " + detail::format_number(double(hi)));
    const double steps = double((hi - lo) / granularity);
    const double rounded = std::round(steps);
    if (std::abs(steps - rounded) > 1e-9 * std::max(1.0, steps) || rounded < 1 || rounded > 2147483648.0)
      throw std::invalid_argument("'granularity' must divide hi - lo into 1 to 2^31 steps, got " +
                                  detail::format_number(double(granularity)) + " for [" +
                                  detail::format_number(double(lo)) + ", " + detail::format_number(double(hi)) + "]");
    m_steps = std::int64_t(rounded);
  }
  Scalar lo() const { return m_lo; }
  Scalar hi() const { return m_hi; }
  Scalar step() const { return m_step; }
  /// N: the number of steps from lo to hi (there are N + 1 points).
  std::int64_t steps() const { return m_steps; }
  /// Grid index of `y` after clipping to [lo, hi] and rounding to the nearest point.
  /// \throws std::invalid_argument for a non-finite label.
  std::int64_t index(Scalar y) const {
    validate_finite("label", double(y));
    if (y <= m_lo) return 0;
    if (y >= m_hi) return m_steps;
    return std::min<std::int64_t>(m_steps, std::int64_t(std::llround(double((y - m_lo) / m_step))));
  }
  /// The value of grid index j (any integer: noisy indices may leave [0, N]).
  Scalar value(std::int64_t j) const { return j == m_steps ? m_hi : m_lo + Scalar(j) * m_step; }
  /// All N + 1 grid values.
  Vector<Scalar> values() const {
    Vector<Scalar> v(m_steps + 1);
    for (std::int64_t j = 0; j <= m_steps; ++j) v[Index(j)] = value(j);
    return v;
  }

 private:
  Scalar m_lo, m_hi, m_step;
  std::int64_t m_steps = 0;
};

/// The discrete Laplace mechanism on a LabelGrid: \f$M(y) = lo + g\,(j(y) + Z)\f$ with
/// \f$\Pr[Z = z] = \frac{1-\alpha}{1+\alpha}\alpha^{|z|}\f$ and \f$\alpha = e^{-\varepsilon/N}\f$
/// rounded up (so the realized guarantee \f$N \ln(1/\alpha)\f$ is at most eps). With `clip`, the
/// output is clipped back to [lo, hi] (post-processing: same guarantee; biased, lower error).
///
/// \code{.cpp}
/// labeldp::DiscreteLaplaceMechanism<> lap(labeldp::LabelGrid<>(0, 5000, 50), 1.0, true);
/// labeldp::SecureRandom gen;
/// double noisy = lap.sample(1234.5, gen);
/// \endcode
template <typename Scalar = double>
class DiscreteLaplaceMechanism {
 public:
  /// \throws std::invalid_argument for a bad eps.
  DiscreteLaplaceMechanism(LabelGrid<Scalar> grid, double eps, bool clip)
      : m_grid(grid), m_eps(eps), m_clip(clip) {
    validate_epsilon(eps);
    m_alpha = discrete_laplace_alpha(eps, double(grid.steps()));
  }
  const LabelGrid<Scalar>& grid() const { return m_grid; }
  double eps() const { return m_eps; }
  bool clipped() const { return m_clip; }
  /// The noise ratio \f$\alpha\f$ actually used.
  double alpha() const { return m_alpha; }

  /// A noisy label for `y` (clipped and rounded to the grid first). Exact.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    std::int64_t j = m_grid.index(y) + two_sided_geometric(m_alpha, gen);
    if (m_clip) j = std::clamp<std::int64_t>(j, 0, m_grid.steps());
    return m_grid.value(j);
  }

  /// \f$E[(M(y) - y)^2]\f$ without clipping, for y on the grid: \f$g^2\,2\alpha/(1-\alpha)^2\f$.
  Scalar unclipped_mean_squared_error() const {
    const Scalar a = Scalar(m_alpha);
    return m_grid.step() * m_grid.step() * 2 * a / ((1 - a) * (1 - a));
  }

  /// The clipped mechanism as an exact (N+1) x (N+1) matrix on the grid:
  /// \f$P[j][m] = c\,\alpha^{|m-j|}\f$ inside, \f$\alpha^{j}/(1+\alpha)\f$ at m = 0 and
  /// \f$\alpha^{N-j}/(1+\alpha)\f$ at m = N (the clipped tails), \f$c = (1-\alpha)/(1+\alpha)\f$.
  /// \throws std::logic_error when the mechanism does not clip (its outputs are unbounded);
  ///         std::invalid_argument when N > 4096 (the matrix would be too large).
  FiniteMechanism<Scalar> mechanism() const {
    if (!m_clip) throw std::logic_error("the unclipped discrete Laplace mechanism has infinitely many outputs");
    const std::int64_t n = m_grid.steps();
    if (n > 4096) throw std::invalid_argument("grid of " + std::to_string(n + 1) + " points is too large for a matrix (at most 4097)");
    const Scalar a = Scalar(m_alpha), c = (1 - a) / (1 + a);
    Matrix<Scalar> P(n + 1, n + 1);
    for (std::int64_t j = 0; j <= n; ++j)
      for (std::int64_t m = 0; m <= n; ++m) {
        Scalar p;
        if (m == 0) p = std::pow(a, Scalar(j)) / (1 + a);
        else if (m == n) p = std::pow(a, Scalar(n - j)) / (1 + a);
        else p = c * std::pow(a, Scalar(std::llabs(m - j)));
        P(Index(j), Index(m)) = p;
      }
    const Vector<Scalar> v = m_grid.values();
    return FiniteMechanism<Scalar>(v, v, std::move(P));
  }

 private:
  LabelGrid<Scalar> m_grid;
  double m_eps;
  bool m_clip;
  double m_alpha;
};

/// The exponential mechanism restricted to the label range (Ghazi et al. 2023, App. F, on the
/// grid): \f$\Pr[M(y) = lo + g m] \propto e^{-\varepsilon |m - j(y)| / (2N)}\f$ for m = 0..N.
/// The score \f$-|m - j|\f$ has sensitivity N, so this is eps-DP (Definition 26); it avoids the
/// boundary spikes of clipping but pays a factor 2 in the noise scale.
/// \throws std::invalid_argument for a bad eps or a grid of more than 4097 points.
template <typename Scalar = double>
FiniteMechanism<Scalar> exponential_mechanism(const LabelGrid<Scalar>& grid, double eps) {
  validate_epsilon(eps);
  const std::int64_t n = grid.steps();
  if (n > 4096) throw std::invalid_argument("grid of " + std::to_string(n + 1) + " points is too large for a matrix (at most 4097)");
  Matrix<Scalar> P(n + 1, n + 1);
  for (std::int64_t j = 0; j <= n; ++j) {
    for (std::int64_t m = 0; m <= n; ++m)
      P(Index(j), Index(m)) = std::exp(-Scalar(eps) * Scalar(std::llabs(m - j)) / (2 * Scalar(n)));
    P.row(Index(j)) /= P.row(Index(j)).sum();
  }
  const Vector<Scalar> v = grid.values();
  return FiniteMechanism<Scalar>(v, v, std::move(P));
}

}  // namespace labeldp
