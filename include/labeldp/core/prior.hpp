/// \file
/// A finite prior over label values: sorted distinct values with probabilities.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// A probability distribution on finitely many real label values
/// \f$y_1 < \dots < y_k\f$ with probabilities \f$p_1, \dots, p_k\f$ (the "prior" \f$P\f$ of
/// Ghazi et al. 2023, Section 3, and of Badanidiyuru et al. 2023, Section 2).
///
/// Values are stored sorted and distinct; probabilities are normalized to sum to 1. Values with
/// probability 0 are kept (they are still possible inputs of a mechanism).
///
/// \tparam Scalar floating-point type.
///
/// \code{.cpp}
/// auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {60, 25, 15});
/// double p1 = prior.probability(1);   // 0.25
/// \endcode
template <typename Scalar = double>
class FinitePrior {
 public:
  /// Builds a prior from values and non-negative weights (probabilities or counts), in any order.
  /// Weights are normalized.
  /// \throws std::invalid_argument on an empty prior, a size mismatch, a non-finite value, a
  ///         negative / NaN / infinite weight, all weights 0, or a duplicate value.
  static FinitePrior from_weights(const std::vector<Scalar>& values, const std::vector<Scalar>& weights) {
    if (values.empty()) throw std::invalid_argument("prior is empty: at least one value is required");
    if (values.size() != weights.size())
      throw std::invalid_argument("prior has " + std::to_string(values.size()) + " values but " +
                                  std::to_string(weights.size()) + " probabilities");
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(values[i])) detail::fail_parameter("value", "must be finite", double(values[i]));
      if (std::isnan(weights[i])) detail::fail_parameter("probability", "must not be NaN", double(weights[i]));
      if (!std::isfinite(weights[i])) detail::fail_parameter("probability", "must be finite", double(weights[i]));
      if (weights[i] < 0)
        throw std::invalid_argument("probability " + detail::format_number(double(weights[i])) +
                                    " is negative (value " + detail::format_number(double(values[i])) + ")");
    }
    std::vector<std::size_t> order(values.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    FinitePrior prior;
    const Index k = static_cast<Index>(values.size());
    prior.m_values.resize(k);
    prior.m_probs.resize(k);
    for (Index i = 0; i < k; ++i) {
      prior.m_values[i] = values[order[std::size_t(i)]];
      prior.m_probs[i] = weights[order[std::size_t(i)]];
      if (i > 0 && prior.m_values[i] == prior.m_values[i - 1])
        throw std::invalid_argument("duplicate value " + detail::format_number(double(prior.m_values[i])) +
                                    " in prior");
    }
    const Scalar total = prior.m_probs.sum();
    if (!(total > 0)) throw std::invalid_argument("prior probabilities are all 0: at least one must be positive");
    if (!std::isfinite(total)) throw std::invalid_argument("prior weights overflow: their sum is not finite");
    prior.m_probs /= total;
    return prior;
  }

  /// The empirical distribution of raw labels (not private: use the estimators in
  /// `labeldp/prior/` when the prior itself must be private).
  /// \throws std::invalid_argument when `labels` is empty or holds a non-finite label.
  static FinitePrior from_labels(std::vector<Scalar> labels) {
    if (labels.empty()) throw std::invalid_argument("prior is empty: at least one label is required");
    for (Scalar y : labels)
      if (!std::isfinite(y)) detail::fail_parameter("label", "must be finite", double(y));
    std::sort(labels.begin(), labels.end());
    std::vector<Scalar> values, counts;
    for (Scalar y : labels) {
      if (values.empty() || values.back() != y) {
        values.push_back(y);
        counts.push_back(0);
      }
      counts.back() += 1;
    }
    return from_weights(values, counts);
  }

  /// Number of support values k.
  Index size() const { return m_values.size(); }
  /// Sorted distinct values \f$y_1 < \dots < y_k\f$.
  const Vector<Scalar>& values() const { return m_values; }
  /// Probabilities \f$p_1..p_k\f$, summing to 1.
  const Vector<Scalar>& probabilities() const { return m_probs; }
  /// The i-th smallest value.
  Scalar value(Index i) const { return m_values[i]; }
  /// Probability of the i-th smallest value.
  Scalar probability(Index i) const { return m_probs[i]; }

  /// Index of `y` in values(), or -1 when `y` is not a support value. O(log k).
  Index find(Scalar y) const {
    const Scalar* first = m_values.data();
    const Scalar* last = first + m_values.size();
    const Scalar* it = std::lower_bound(first, last, y);
    return (it != last && *it == y) ? Index(it - first) : Index(-1);
  }

  /// Index of `y` in values().
  /// \throws std::invalid_argument when `y` is not a support value.
  Index index_of(Scalar y) const {
    const Index i = find(y);
    if (i < 0)
      throw std::invalid_argument("label " + detail::format_number(double(y)) + " is not a value of the prior");
    return i;
  }

 private:
  FinitePrior() = default;
  Vector<Scalar> m_values;
  Vector<Scalar> m_probs;
};

}  // namespace labeldp
