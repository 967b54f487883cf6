/// \file
/// Labels of zero probability in the unbiased problem (Badanidiyuru et al. 2023, Alg. 1, with
/// outputs anywhere on the real line): the interior point of unbiased_barrier.hpp solves on the
/// labels of positive probability and the two extreme ones; the dropped labels' rows are
/// interpolated from their neighbours' (which keeps every ratio within \f$e^\varepsilon\f$ and
/// the row unbiased) and their duals are zero.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"

namespace labeldp::detail {

/// The labels of an unbiased problem that the interior point solves on: those of positive
/// probability and the two extreme ones (see restrict_to_supported_labels()).
struct SupportedLabels {
  UnbiasedProblem problem;  ///< the problem on the kept labels (same shift, scale, staircase entry)
  std::vector<Index> kept;  ///< indices of the kept labels in the full problem, increasing
  /// True when every label is kept.
  bool all(const UnbiasedProblem& full) const { return Index(kept.size()) == full.num_labels(); }
};

/// Drops the labels of zero probability strictly between the extreme labels.
///
/// Such a label costs nothing, and its row can be the convex combination of the rows of its
/// kept neighbours \f$y_- < y < y_+\f$ with weights \f$(y_+ - y, y - y_-) / (y_+ - y_-)\f$: the
/// row sums to 1, has mean y, and each of its entries lies between the neighbours' entries, so
/// every ratio to another row stays within \f$e^{\varepsilon}\f$ (interpolate_dropped_rows()). So
/// the optimum on the kept labels is the optimum on all of them, and the kept problem's optimal
/// duals extended by \f$\pi_y = \sigma_y = 0\f$ are optimal duals of the full problem: each
/// reduced cost is then the kept problem's reduced cost of the pattern restricted to the kept
/// labels (continuous_lower_bound() certifies this on the full problem). Solving on the kept
/// labels removes the degeneracy such labels bring (an optimal face of primal solutions, since
/// the label may be in or out of a pattern at no cost) that keeps the active set from being
/// clear-cut. An extreme label of zero probability is kept: its row cannot be interpolated.
inline SupportedLabels restrict_to_supported_labels(const UnbiasedProblem& P) {
  SupportedLabels out;
  const Index k = P.num_labels();
  for (Index i = 0; i < k; ++i)
    if (P.probs[i] > 0 || i == 0 || i == k - 1) out.kept.push_back(i);
  const Index kk = Index(out.kept.size());
  out.problem = P;
  out.problem.labels.resize(kk);
  out.problem.probs.resize(kk);
  for (Index t = 0; t < kk; ++t) {
    out.problem.labels[t] = P.labels[out.kept[std::size_t(t)]];
    out.problem.probs[t] = P.probs[out.kept[std::size_t(t)]];
  }
  return out;
}

/// Duals (pi, sigma) of the kept problem extended to the full one by zeros on the dropped labels.
inline Eigen::VectorXd expand_duals(const SupportedLabels& L, Index k, const Eigen::VectorXd& duals) {
  const Index kk = Index(L.kept.size());
  Eigen::VectorXd full = Eigen::VectorXd::Zero(2 * k);
  for (Index t = 0; t < kk; ++t) {
    full[L.kept[std::size_t(t)]] = duals[t];
    full[k + L.kept[std::size_t(t)]] = duals[kk + t];
  }
  return full;
}

/// A kept problem's pattern as a full one: a dropped label is in the pattern when both its kept
/// neighbours are (a starting column for column generation; any pattern is valid there).
inline std::vector<std::uint8_t> expand_pattern(const SupportedLabels& L, Index k,
                                                const std::vector<std::uint8_t>& pattern) {
  std::vector<std::uint8_t> full(std::size_t(k), 0);
  for (std::size_t t = 0; t < L.kept.size(); ++t) {
    full[std::size_t(L.kept[t])] = pattern[t];
    if (t + 1 < L.kept.size() && pattern[t] && pattern[t + 1])
      for (Index i = L.kept[t] + 1; i < L.kept[t + 1]; ++i) full[std::size_t(i)] = 1;
  }
  return full;
}

/// The rows of a mechanism on the kept labels (`rows`, one per kept label, in their order)
/// extended to every label of `values` (increasing): a kept label's row is its own, a dropped
/// label's the convex combination of its kept neighbours' rows with mean y (see
/// restrict_to_supported_labels()).
template <typename Scalar, typename RowMatrix>
RowMatrix interpolate_dropped_rows(const SupportedLabels& L, const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& values,
                                   const RowMatrix& rows) {
  RowMatrix full(values.size(), rows.cols());
  for (std::size_t t = 0; t < L.kept.size(); ++t) {
    full.row(L.kept[t]) = rows.row(Index(t));
    if (t + 1 == L.kept.size()) break;
    const Index lo = L.kept[t], hi = L.kept[t + 1];
    for (Index i = lo + 1; i < hi; ++i) {
      const Scalar w_hi = (values[i] - values[lo]) / (values[hi] - values[lo]);
      full.row(i) = (1 - w_hi) * rows.row(Index(t)) + w_hi * rows.row(Index(t + 1));
    }
  }
  return full;
}

}  // namespace labeldp::detail
