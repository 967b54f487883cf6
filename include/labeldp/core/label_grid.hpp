/// \file
/// LabelGrid: the public uniform grid \f$lo + g j\f$ onto which the additive baselines
/// (mechanisms/additive_noise.hpp, mechanisms/gaussian.hpp, mechanisms/staircase.hpp) clip and
/// snap a label before adding integer noise to its index.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

namespace detail {

/// std::llround for \f$0 \le x < 2^{63}\f$ (half away from zero), without the library call
/// and without a branch on x (the comparison is added as 0 or 1): the fractional part
/// \f$x - \lfloor x \rfloor\f$ is exact in doubles.
inline std::int64_t round_nonnegative(double x) {
  const auto i = static_cast<std::int64_t>(x);
  return i + static_cast<std::int64_t>(x - static_cast<double>(i) >= 0.5);
}

/// Throws unless lo < hi are finite (messages naming 'lo' and 'hi').
inline void validate_label_range(double lo, double hi) {
  validate_finite("lo", lo);
  validate_finite("hi", hi);
  if (!(lo < hi))
    throw std::invalid_argument("'lo' must be below 'hi', got lo = " + format_number(lo) +
                                ", hi = " + format_number(hi));
}

}  // namespace detail

/// A public grid of N + 1 points \f$lo + g j\f$, j = 0..N, onto which labels are clipped to
/// [lo, hi] and rounded to the nearest point (ties up). The map is fixed before the data is seen
/// and applied to each label on its own, so it costs no privacy; it is monotone, so two labels'
/// indices differ by at most N, the sensitivity in grid steps to which a baseline scales its
/// noise. A noisy index j + Z may leave [0, N]: value() gives every integer index a value, and
/// output() clips it back to [lo, hi] when the mechanism clips (post-processing).
///
/// Two constructions:
/// - the constructor: a step g (the 'resolution') that divides hi - lo into N steps; the top
///   point value(N) is hi itself, exactly (not \f$lo + gN\f$ rounded);
/// - power_of_two(): a step \f$g = 2^k\f$ chosen by a mechanism so that \f$lo + gj\f$ and the
///   noise on j are exact; \f$N = \mathrm{round}((hi - lo)/g)\f$ (at least 1), so the top point
///   \f$lo + gN\f$ lies within g/2 of hi, and clipped outputs at the top are
///   \f$\min(hi, lo + gN)\f$.
///
/// Relation to Discretizer (prior/discretize.hpp): a Discretizer maps labels onto an arbitrary
/// public support (not necessarily uniform) for the mechanisms that work on a prior's support;
/// LabelGrid is the uniform lattice whose index the additive baselines add integer noise to.
///
/// \tparam Scalar floating-point type of labels.
///
/// \code{.cpp}
/// labeldp::LabelGrid<> grid(0.0, 5000.0, 50.0);  // 101 points, N = 100
/// std::int64_t j = grid.index(1234.5);            // 25: clipped, rounded to 1250
/// double v = grid.value(j);                       // 1250
/// double top = grid.output(j + 90, true);         // 5000: clipped back to hi
/// \endcode
template <typename Scalar = double>
class LabelGrid {
 public:
  /// The grid of step `resolution` from lo to hi.
  /// \throws std::invalid_argument naming 'lo', 'hi' or 'resolution': unless lo < hi are finite,
  ///         resolution is finite and positive, and (hi - lo)/resolution is an integer N (within
  ///         1e-9 relative) with 1 <= N <= 2^31.
  LabelGrid(Scalar lo, Scalar hi, Scalar resolution) : m_lo(lo), m_hi(hi), m_step(resolution), m_top_point(hi) {
    detail::validate_label_range(double(lo), double(hi));
    validate_finite_positive("resolution", double(resolution));
    const double steps = double((hi - lo) / resolution), rounded = std::round(steps);
    if (std::abs(steps - rounded) > 1e-9 * std::max(1.0, steps) || rounded < 1 || rounded > 2147483648.0)
      throw std::invalid_argument("'resolution' must divide hi - lo into 1 to 2^31 steps, got " +
                                  detail::format_number(double(resolution)) + " for [" +
                                  detail::format_number(double(lo)) + ", " + detail::format_number(double(hi)) + "]");
    m_steps = m_hi_index = std::int64_t(rounded);
    m_clip_top = hi;
  }

  /// The grid of power-of-two step g anchored at lo: \f$N = \max(1, \mathrm{round}((hi - lo)/g))\f$
  /// and the top point \f$lo + gN\f$. When g exceeds 2(hi - lo), N = 1 and every label snaps to
  /// lo (index 0).
  /// \throws std::invalid_argument naming 'lo' or 'hi' (finite, lo < hi, hi - lo finite) or
  ///         'step' (a positive power of two giving at most 2^62 steps).
  static LabelGrid power_of_two(Scalar lo, Scalar hi, Scalar step) {
    detail::validate_label_range(double(lo), double(hi));
    const double range = double(hi) - double(lo);
    if (!std::isfinite(range)) throw std::invalid_argument("'hi' - 'lo' must be finite");
    validate_finite_positive("step", double(step));
    int e = 0;
    if (std::frexp(double(step), &e) != 0.5) detail::fail_parameter("step", "must be a power of two", double(step));
    const double n = std::round(double(hi - lo) / double(step));
    if (!(n <= 4611686018427387904.0))
      detail::fail_parameter(
          "step", "must divide hi - lo = " + detail::format_number(range) + " into at most 2^62 steps", double(step));
    return LabelGrid(lo, hi, step, std::int64_t(n));
  }

  Scalar lo() const { return m_lo; }
  Scalar hi() const { return m_hi; }
  /// g, the distance between neighbouring points.
  Scalar step() const { return m_step; }
  /// N: the number of steps from the first point to the top point (there are N + 1 points).
  std::int64_t steps() const { return m_steps; }
  /// The output of every index >= N when clipping: hi, or \f$\min(hi, lo + gN)\f$ on a
  /// power-of-two grid.
  Scalar top() const { return m_clip_top; }

  /// Index of `y` after clipping to [lo, hi] and rounding to the nearest point (ties up):
  /// 0 for y <= lo, N for y >= hi (0 on a power-of-two grid coarser than 2(hi - lo)).
  /// \throws std::invalid_argument for a non-finite label.
  std::int64_t index(Scalar y) const {
    validate_finite("label", double(y));
    return snap(y);
  }
  /// Batch form of index(): `out[i] = index(in[i])` for every i (the same values), one pass
  /// without a call or a branch per label, after checking them all.
  /// \throws std::invalid_argument for a non-finite label (before anything is written).
  void indices(std::span<const Scalar> in, std::int64_t* out) const {
    validate_finite_labels(in);
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = snap(in[i]);
  }
  /// The value of index j, any integer: \f$lo + gj\f$, except that value(N) is the top point
  /// (hi exactly for a grid built from a resolution).
  Scalar value(std::int64_t j) const { return j == m_steps ? m_top_point : m_lo + Scalar(j) * m_step; }
  /// The output of a noisy index j: value(j), or with `clip` j clipped to [0, N] first and the
  /// top output top(). Unclipped, a value beyond the largest finite Scalar (a range near 1e308
  /// with wide noise) saturates to it: a fixed map of j, so post-processing, never infinity.
  [[gnu::always_inline]] Scalar output(std::int64_t j, bool clip) const {
    if (!clip) {
      // Saturated by a clamp rather than a branch (v is never NaN).
      constexpr Scalar most = std::numeric_limits<Scalar>::max();
      return std::min(std::max(value(j), -most), most);
    }
    // Selects rather than branches: which side of [0, N] a noisy index falls is unpredictable.
    const std::int64_t c = std::min(std::max(j, std::int64_t(0)), m_steps);
    const Scalar inside = m_lo + Scalar(c) * m_step, edge = c == 0 ? m_lo : m_clip_top;
    return ((c == 0) | (c == m_steps)) ? edge : inside;
  }
  /// Batch form of output(): `out[i] = output(j[i], clip)` for i < n.
  void outputs(const std::int64_t* j, std::size_t n, bool clip, Scalar* out) const {
    // One loop per case, the flag tested once (output() itself was not inlined into one loop).
    if (clip)
      for (std::size_t i = 0; i < n; ++i) out[i] = output(j[i], true);
    else
      for (std::size_t i = 0; i < n; ++i) out[i] = output(j[i], false);
  }
  /// All N + 1 values, value(0) .. value(N).
  Vector<Scalar> values() const {
    Vector<Scalar> v(m_steps + 1);
    for (std::int64_t j = 0; j <= m_steps; ++j) v[Index(j)] = value(j);
    return v;
  }

 private:
  // index() of a finite label, with the same work for every label (no branch on it): clamp,
  // round, then select the top index for y >= hi. y <= lo clamps to lo, whose index is 0. On a
  // power-of-two grid the division by g is a multiplication by 1/g (exact_inverse()).
  std::int64_t snap(Scalar y) const {
    const Scalar c = std::min(std::max(y, m_lo), m_hi);
    const Scalar scaled = m_inverse_step > 0 ? (c - m_lo) * m_inverse_step : (c - m_lo) / m_step;
    const std::int64_t inside = std::min<std::int64_t>(m_steps, detail::round_nonnegative(double(scaled)));
    return y >= m_hi ? m_hi_index : inside;
  }

  // 1/g when g is a power of two whose inverse is a normal number (then (c - lo) * (1/g) and
  // (c - lo) / g are the same real number, so they round to the same double), else 0.
  static Scalar exact_inverse(Scalar step) {
    int e = 0;
    const Scalar inverse = Scalar(1) / step;
    return std::frexp(double(step), &e) == 0.5 && std::isnormal(double(inverse)) && inverse * step == 1 ? inverse : 0;
  }

  // A power-of-two grid (validated by power_of_two()); n = round((hi - lo)/step) may be 0.
  LabelGrid(Scalar lo, Scalar hi, Scalar step, std::int64_t n)
      : m_lo(lo), m_hi(hi), m_step(step), m_steps(std::max<std::int64_t>(1, n)), m_hi_index(n) {
    m_top_point = m_lo + Scalar(m_steps) * m_step;
    m_clip_top = std::min(m_hi, m_top_point);
  }

  Scalar m_lo, m_hi, m_step;
  Scalar m_inverse_step = exact_inverse(m_step);  // 1/g when exact (g a power of two), else 0
  Scalar m_top_point = 0;                         // value(N)
  Scalar m_clip_top = 0;                          // output(j >= N, clip)
  std::int64_t m_steps = 1;
  std::int64_t m_hi_index = 1;  // index(hi): N, or 0 on a power-of-two grid coarser than 2(hi - lo)
};

}  // namespace labeldp
