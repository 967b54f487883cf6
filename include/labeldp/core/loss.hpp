/// \file
/// Losses \f$\ell(\hat y, y)\f$ between a noisy label \f$\hat y\f$ and the true label \f$y\f$.
///
/// Every loss here satisfies Assumption 4 of Ghazi et al. (ICLR 2023): \f$\ell(\hat y, y)\f$ is
/// continuous, and for fixed \f$y\f$ non-increasing in \f$\hat y\f$ below \f$y\f$ and
/// non-decreasing above it. Under that assumption some RR-on-Bins mechanism is optimal among all
/// eps-DP mechanisms (their Theorem 5).
#pragma once

#include <cmath>
#include <concepts>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include "labeldp/core/validate.hpp"

namespace labeldp {

/// A loss usable by the mechanisms: callable as `loss(output, label)`, with a weighted 1-D
/// minimizer `loss.minimize(values, weights)` returning a minimizer over all real outputs of
/// \f$\sum_i w_i \ell(o, y_i)\f$ (values sorted increasingly, weights >= 0, not all 0), a name,
/// and `validate_label(y)` that throws `std::invalid_argument` for labels outside its domain.
/// The loss must satisfy Assumption 4 of Ghazi et al. (2023) (see the file comment).
template <typename L, typename Scalar = double>
concept NoisyLabelLoss = requires(const L& loss, Scalar o, Scalar y, std::span<const Scalar> v) {
  { loss(o, y) } -> std::convertible_to<Scalar>;
  { loss.minimize(v, v) } -> std::convertible_to<Scalar>;
  { loss.name() } -> std::convertible_to<std::string>;
  loss.validate_label(y);
};

namespace detail {
template <typename Scalar>
Scalar weighted_mean(std::span<const Scalar> values, std::span<const Scalar> weights) {
  Scalar sw = 0, swy = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    sw += weights[i];
    swy += weights[i] * values[i];
  }
  return swy / sw;
}
}  // namespace detail

/// Squared loss \f$(\hat y - y)^2\f$; its weighted minimizer is the weighted mean.
template <typename Scalar = double>
struct SquaredLoss {
  Scalar operator()(Scalar o, Scalar y) const { return (o - y) * (o - y); }
  Scalar minimize(std::span<const Scalar> values, std::span<const Scalar> weights) const {
    return detail::weighted_mean(values, weights);
  }
  std::string name() const { return "squared"; }
  void validate_label(Scalar y) const { validate_finite("label", double(y)); }
};

/// Absolute loss \f$|\hat y - y|\f$; its weighted minimizer is a weighted median (the smallest
/// value at which the cumulative weight reaches half the total).
template <typename Scalar = double>
struct AbsoluteLoss {
  Scalar operator()(Scalar o, Scalar y) const { return std::abs(o - y); }
  Scalar minimize(std::span<const Scalar> values, std::span<const Scalar> weights) const {
    Scalar total = 0;
    for (Scalar w : weights) total += w;
    Scalar acc = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      acc += weights[i];
      if (2 * acc >= total) return values[i];
    }
    return values.back();
  }
  std::string name() const { return "absolute"; }
  void validate_label(Scalar y) const { validate_finite("label", double(y)); }
};

/// Poisson log loss \f$\hat y - y \ln \hat y\f$ (outputs > 0, labels >= 0); its weighted
/// minimizer is the weighted mean (which must be positive).
template <typename Scalar = double>
struct PoissonLogLoss {
  Scalar operator()(Scalar o, Scalar y) const {
    if (!(o > 0)) return y == 0 && o == 0 ? Scalar(0) : std::numeric_limits<Scalar>::infinity();
    return y == 0 ? o : o - y * std::log(o);
  }
  Scalar minimize(std::span<const Scalar> values, std::span<const Scalar> weights) const {
    return detail::weighted_mean(values, weights);
  }
  std::string name() const { return "poisson"; }
  void validate_label(Scalar y) const {
    if (!std::isfinite(y) || y < 0)
      throw std::invalid_argument("Poisson log loss needs labels >= 0, got " + detail::format_number(double(y)));
  }
};

}  // namespace labeldp
