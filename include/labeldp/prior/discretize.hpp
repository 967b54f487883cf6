/// \file
/// Public discretization of real-valued labels onto a finite support.
///
/// RR-on-Bins (Ghazi et al., ICLR 2023) works on a finite label set \f$Y\f$; real labels such
/// as wages must first be mapped onto one (their Appendix E.1 rounds Criteo's sales amounts down
/// to the integers 0..400). The map costs no privacy budget only if it is *public*: fixed before
/// looking at the data and applied to each label on its own. Then it is a per-label function,
/// and the mechanism applied after it is still \f$\varepsilon\f$-label-DP. Never derive the
/// bounds, resolution or support from the labels themselves (e.g. their minimum and maximum):
/// that leaks information about the data set and voids the guarantee.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// Which support point a label between two points goes to.
enum class Rounding {
  Nearest,  ///< the closest point; exact ties go to the larger point (round half up)
  Floor,    ///< the largest point <= the (clipped) label
  Ceil      ///< the smallest point >= the (clipped) label
};

/// A public map from real labels to a finite sorted support \f$s_1 < \dots < s_k\f$: clip the
/// label to \f$[s_1, s_k]\f$, then round it to a support point by the chosen Rounding rule.
/// See the file comment for why it must be chosen without looking at the data.
///
/// Relation to LabelGrid (core/label_grid.hpp): a Discretizer maps labels onto an arbitrary
/// public support (any sorted points, a choice of rounding rule, and a grid whose last step may
/// be shorter) for the prior-based mechanisms, which work on a prior's finite support (RR-on-Bins
/// and the other finite mechanisms, e.g. in the two-stage pipeline); LabelGrid is the uniform
/// lattice \f$lo + gj\f$ of the additive baselines, to whose index they add integer noise.
///
/// \tparam Scalar floating-point type of labels and support points.
///
/// \code{.cpp}
/// // CPS weekly wages: clip to [0, 5000] dollars, round to multiples of 50 -> 101 support points.
/// auto disc = labeldp::Discretizer<>::grid(0.0, 5000.0, 50.0);
/// double y = disc(354.94);            // 350
/// labeldp::Index i = disc.index(354.94);  // 7
/// \endcode
template <typename Scalar = double>
class Discretizer {
 public:
  /// The grid \f$lo, lo + r, lo + 2r, \dots\f$ up to \f$hi\f$ (each point computed as
  /// \f$lo + i r\f$, so no error accumulates); when \f$hi - lo\f$ is not a multiple of r
  /// (within a relative 1e-9), \f$hi\f$ itself is added as the last point so that every clipped
  /// label has a point on both sides.
  /// \param lo lower clipping bound, finite.
  /// \param hi upper clipping bound, finite, > lo.
  /// \param resolution grid step r, finite, > 0, with at most 10^7 points in [lo, hi].
  /// \param rounding how a clipped label is rounded to a grid point.
  /// \throws std::invalid_argument naming 'lo', 'hi' or 'resolution'.
  static Discretizer grid(Scalar lo, Scalar hi, Scalar resolution, Rounding rounding = Rounding::Nearest) {
    validate_finite("lo", double(lo));
    validate_finite("hi", double(hi));
    if (!(hi > lo))
      detail::fail_parameter("hi", "must be greater than 'lo' = " + detail::format_number(double(lo)), double(hi));
    validate_finite_positive("resolution", double(resolution));
    const double steps = std::floor(double(hi - lo) / double(resolution) * (1 + 1e-9));
    if (!(steps <= 1e7))
      detail::fail_parameter("resolution", "must give at most 10^7 grid points in [lo, hi]", double(resolution));
    const Index m = Index(steps);
    std::vector<Scalar> points;
    points.reserve(std::size_t(m) + 2);
    for (Index i = 0; i <= m; ++i) {
      const Scalar p = lo + Scalar(i) * resolution;
      if (p >= hi) break;
      points.push_back(p);
    }
    // The last point is hi itself, whether or not it lies on the grid (up to rounding).
    if (!points.empty() && (hi - points.back()) <= 1e-9 * resolution) points.pop_back();
    points.push_back(hi);
    return Discretizer(std::move(points), rounding);
  }

  /// The given support points (any order; sorted here).
  /// \throws std::invalid_argument when `support` is empty, holds a non-finite value, or holds
  ///         a value twice.
  static Discretizer points(std::vector<Scalar> support, Rounding rounding = Rounding::Nearest) {
    if (support.empty()) throw std::invalid_argument("'support' must not be empty");
    for (Scalar s : support) validate_finite("support value", double(s));
    std::sort(support.begin(), support.end());
    for (std::size_t i = 1; i < support.size(); ++i)
      if (support[i] == support[i - 1])
        throw std::invalid_argument("duplicate support value " + detail::format_number(double(support[i])));
    return Discretizer(std::move(support), rounding);
  }

  /// Index of the support point of label `y` (after clipping). O(log k).
  /// \throws std::invalid_argument "'label' must be finite, got nan" for NaN or infinite labels.
  Index index(Scalar y) const {
    if (!std::isfinite(double(y))) detail::fail_parameter("label", "must be finite", double(y));
    const Index k = m_support.size();
    if (y <= m_support[0]) return 0;
    if (y >= m_support[k - 1]) return k - 1;
    // The last point <= y among s_1..s_{k-1} (s_1 < y < s_k), by a branch-free binary search
    // whose number of halvings depends only on k.
    const Scalar* base = m_support.data();
    for (Index n = k - 1; n > 1;) {
      const Index half = n / 2;
      base = base[half] <= y ? base + half : base;
      n -= half;
    }
    const Index lo_i = Index(base - m_support.data());
    if (*base == y) return lo_i;
    const Index hi_i = lo_i + 1;
    switch (m_rounding) {
      case Rounding::Floor:
        return lo_i;
      case Rounding::Ceil:
        return hi_i;
      case Rounding::Nearest:
        break;
    }
    return (y - m_support[lo_i] < m_support[hi_i] - y) ? lo_i : hi_i;
  }

  /// The support point of label `y`: clip to \f$[s_1, s_k]\f$, then round.
  /// \throws std::invalid_argument for non-finite labels.
  Scalar operator()(Scalar y) const { return m_support[index(y)]; }

  /// Sorted distinct support points \f$s_1 < \dots < s_k\f$.
  const Vector<Scalar>& support() const { return m_support; }
  /// Number of support points k.
  Index size() const { return m_support.size(); }
  /// Clipping bounds \f$s_1\f$ and \f$s_k\f$.
  Scalar lo() const { return m_support[0]; }
  /// \copydoc lo()
  Scalar hi() const { return m_support[m_support.size() - 1]; }
  /// The rounding rule.
  Rounding rounding() const { return m_rounding; }

 private:
  Discretizer(std::vector<Scalar> points, Rounding rounding) : m_rounding(rounding) {
    m_support = Eigen::Map<const Vector<Scalar>>(points.data(), Index(points.size()));
  }

  Vector<Scalar> m_support;
  Rounding m_rounding = Rounding::Nearest;
};

}  // namespace labeldp
