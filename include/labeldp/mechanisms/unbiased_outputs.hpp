/// \file
/// The output sets of the optimal unbiased randomizers (Badanidiyuru, Ghazi, Kamath, Kumar, Leeman,
/// Manurangsi, Varadarajan, Zhang: "Optimal Unbiased Randomizers for Regression with Label
/// Differential Privacy", NeurIPS 2023): the outputs of eps-debiased randomized response (dbRR,
/// Def. 23) and dbRR itself, the FeasibleOutputSet grid (Alg. 2, feasible by Proposition 7), and
/// unbiased randomized rounding onto a set of points (URR, proof of Lemma 8).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

namespace detail {

template <typename Scalar>
void validate_label_set(const Vector<Scalar>& labels) {
  if (labels.size() == 0) throw std::invalid_argument("'labels' must not be empty");
  for (Index i = 0; i < labels.size(); ++i) {
    validate_finite("labels", double(labels[i]));
    if (i > 0 && !(labels[i] > labels[i - 1]))
      throw std::invalid_argument("'labels' must be strictly increasing, got " + format_number(double(labels[i - 1])) +
                                  " then " + format_number(double(labels[i])));
  }
}

}  // namespace detail

/// The outputs \f$\Phi(y) = ((e^\varepsilon + k - 1) y - \sum_{y'} y') / (e^\varepsilon - 1)\f$ of
/// eps-debiased randomized response (Def. 23), one per label, in label order (increasing).
/// \param labels strictly increasing finite labels (k >= 1); for k = 1, \f$\Phi(y) = y\f$.
/// \param eps privacy parameter, finite and > 0.
/// \throws std::invalid_argument on a bad eps or label set.
template <typename Scalar = double>
Vector<Scalar> debiased_rr_outputs(const Vector<Scalar>& labels, double eps) {
  validate_epsilon(eps);
  eps = table_epsilon(eps);  // beyond 700 the table is computed at 700 (core/validate.hpp)
  detail::validate_label_set(labels);
  const Index k = labels.size();
  if (k == 1) return labels;
  const double w = std::expm1(eps);
  const double sum = double(labels.sum());
  Vector<Scalar> phi(k);
  // ((e^eps + k - 1) y - sum) / w written as y + (k y - sum) / w: no large cancelling terms
  // when eps is large.
  for (Index i = 0; i < k; ++i) phi[i] = Scalar(double(labels[i]) + (double(k) * double(labels[i]) - sum) / w);
  return phi;
}

/// eps-debiased randomized response (Def. 23): randomized response (Def. 21) on the outputs
/// debiased_rr_outputs(), which makes it unbiased: \f$E[M(y)] = y\f$.
/// \return a k x k FiniteMechanism (inputs = labels, outputs = \f$\Phi(y)\f$).
/// \throws std::invalid_argument on a bad eps or label set.
///
/// \code{.cpp}
/// labeldp::Vector<> labels(3); labels << 0, 1, 2;
/// auto dbrr = labeldp::debiased_randomized_response(labels, 1.0);
/// \endcode
template <typename Scalar = double>
FiniteMechanism<Scalar> debiased_randomized_response(const Vector<Scalar>& labels, double eps) {
  Vector<Scalar> phi = debiased_rr_outputs(labels, eps);  // validates eps and the labels
  const double table_eps = table_epsilon(eps);            // beyond 700 the table is computed at 700
  const Index k = labels.size();
  const double e = std::exp(table_eps), denom = e + double(k - 1);
  Matrix<Scalar> P = Matrix<Scalar>::Constant(k, k, Scalar(1 / denom));
  for (Index i = 0; i < k; ++i) P(i, i) = Scalar(e / denom);
  // The two rounded quotients may be e^eps apart plus roundoff: eps-DP exactly as stored (and as
  // the alias table realizes it), as randomized_response().
  cap_to_epsilon(P, table_eps);
  return FiniteMechanism<Scalar>(labels, std::move(phi), std::move(P));
}

/// FeasibleOutputSet (Alg. 2): n evenly spaced outputs from \f$L = \Phi(\min Y)\f$ to
/// \f$U = \Phi(\max Y)\f$, the extreme dbRR outputs. Proposition 7: with these two endpoints
/// the unbiased LP of Alg. 1 is feasible.
/// \param labels strictly increasing finite labels. With one label, L = U = that label and the
///        set is that single point.
/// \param eps privacy parameter, finite and > 0.
/// \param grid_size n >= 2.
/// \throws std::invalid_argument on a bad eps, label set or grid size.
template <typename Scalar = double>
Vector<Scalar> feasible_output_set(const Vector<Scalar>& labels, double eps, Index grid_size) {
  validate_epsilon(eps);
  eps = table_epsilon(eps);  // beyond 700 the table is computed at 700 (core/validate.hpp)
  if (grid_size < 2) detail::fail_parameter("grid_size", "must be at least 2", double(grid_size));
  const Vector<Scalar> phi = debiased_rr_outputs(labels, eps);
  if (labels.size() == 1) return labels;
  const double L = double(phi[0]), U = double(phi[phi.size() - 1]);
  Vector<Scalar> grid(grid_size);
  for (Index i = 0; i < grid_size; ++i) grid[i] = Scalar(L + (U - L) * double(i) / double(grid_size - 1));
  grid[grid_size - 1] = Scalar(U);
  return grid;
}

/// feasible_output_set() for the values of a prior.
template <typename Scalar = double>
Vector<Scalar> feasible_output_set(const FinitePrior<Scalar>& prior, double eps, Index grid_size) {
  return feasible_output_set(prior.values(), eps, grid_size);
}

/// Unbiased randomized rounding (URR, proof of Lemma 8) onto sorted points
/// \f$x_1 < \dots < x_m\f$: a value v in \f$[x_i, x_{i+1}]\f$ becomes \f$x_{i+1}\f$ with probability
/// \f$(v - x_i)/(x_{i+1} - x_i)\f$ and \f$x_i\f$ otherwise, so \f$E = v\f$ and the error is at
/// most the gap. The coin is the core exact bernoulli(): the realized probability is exactly
/// the double computed here.
///
/// \code{.cpp}
/// labeldp::UnbiasedRandomizedRounding<> urr(grid);
/// labeldp::SecureRandom gen;
/// double rounded = urr.sample(3.7, gen);
/// \endcode
template <typename Scalar = double>
class UnbiasedRandomizedRounding {
 public:
  /// \param points strictly increasing finite points (at least one).
  /// \throws std::invalid_argument when empty, not finite or not strictly increasing.
  explicit UnbiasedRandomizedRounding(Vector<Scalar> points) : m_points(std::move(points)) {
    if (m_points.size() == 0) throw std::invalid_argument("'points' must not be empty");
    for (Index i = 0; i < m_points.size(); ++i) {
      validate_finite("points", double(m_points[i]));
      if (i > 0 && !(m_points[i] > m_points[i - 1]))
        throw std::invalid_argument("'points' must be strictly increasing, got " +
                                    detail::format_number(double(m_points[i - 1])) + " then " +
                                    detail::format_number(double(m_points[i])));
    }
  }

  /// The points.
  const Vector<Scalar>& points() const { return m_points; }

  /// The lower bracketing index i and the probability of rounding up to point i+1 (0 when v is
  /// a point).
  /// \throws std::invalid_argument when v is not finite or outside \f$[x_1, x_m]\f$ (rounding
  ///         outside the hull cannot be unbiased).
  std::pair<Index, double> bracket(Scalar v) const {
    const Index m = m_points.size();
    if (!std::isfinite(double(v)) || v < m_points[0] || v > m_points[m - 1])
      detail::fail_parameter("label",
                             "must be finite and in [" + detail::format_number(double(m_points[0])) + ", " +
                                 detail::format_number(double(m_points[m - 1])) + "]",
                             double(v));
    const Scalar* first = m_points.data();
    const Index hi = Index(std::lower_bound(first, first + m, v) - first);  // first point >= v
    if (m_points[hi] == v) return {hi, 0.0};
    const Index lo = hi - 1;
    double num = double(v - m_points[lo]), den = double(m_points[hi] - m_points[lo]);
    if (!std::isfinite(den)) {  // a gap beyond the largest double: halve (exactly, at these magnitudes) first
      num = double(v / 2 - m_points[lo] / 2);
      den = double(m_points[hi] / 2 - m_points[lo] / 2);
    }
    return {lo, std::clamp(num / den, 0.0, 1.0)};
  }

  /// The exact distribution over the points (m entries, at most two non-zero).
  Vector<Scalar> probabilities(Scalar v) const {
    const auto [lo, up] = bracket(v);
    Vector<Scalar> p = Vector<Scalar>::Zero(m_points.size());
    p[lo] = Scalar(1 - up);
    if (up > 0) p[lo + 1] = Scalar(up);
    return p;
  }

  /// Index of the rounded point, drawn exactly. One coin (one 64-bit word, a second only on a
  /// tie of probability 2^-64) for every v, also on a point (a coin of probability 0), so the
  /// work does not tell whether the value was a point.
  template <std::uniform_random_bit_generator G>
  Index sample_index(Scalar v, G& gen) const {
    const auto [lo, up] = bracket(v);
    const bool coin = bernoulli(up, gen);
    return coin ? lo + 1 : lo;
  }

  /// The rounded point, drawn exactly.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar v, G& gen) const {
    return m_points[sample_index(v, gen)];
  }

 private:
  Vector<Scalar> m_points;
};

}  // namespace labeldp
