/// \file
/// The Newton-matrix blocks of the interior point's extra (non-interval) patterns
/// (detail/unbiased_barrier.hpp, IntervalBarrier::add_patterns()) from the patterns' runs of
/// labels, in O(k^2 + sum of squared run counts) instead of a dense k x q x k product.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <utility>
#include <vector>

#include "labeldp/core/types.hpp"

namespace labeldp::detail {

/// 0/1 patterns over k labels stored as their runs of consecutive 1-entries, and the
/// staircase Gram blocks \f$S\, \mathrm{diag}(e)\, S^T\f$ of their staircase vectors
/// \f$s = \ell + (1 - \ell) x\f$ (x the pattern, \f$\ell\f$ the staircase's low entry).
///
/// With X the k x q matrix of the patterns, \f$S = \ell J + (1 - \ell) X\f$ (J all ones), so
/// entry (y, y') of \f$S\, \mathrm{diag}(e)\, S^T\f$ is
/// \f$\ell^2 \sum e + \ell (1 - \ell) (M_{yy} + M_{y'y'}) + (1 - \ell)^2 M_{yy'}\f$ with
/// \f$M = X\, \mathrm{diag}(e)\, X^T\f$ (whose diagonal is X e). A pattern with runs
/// \f$R_1, \ldots, R_r\f$ adds its weight to M on the r^2 rectangles \f$R_i \times R_j\f$:
/// four corners each in a two-dimensional difference array, whose prefix sums are M.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicPatternGram {
 public:
  explicit BasicPatternGram(Index k) : m_k(k) {}

  /// Appends a pattern (one 0/1 entry per label).
  void add(const std::vector<std::uint8_t>& pattern) {
    for (Index y = 0; y < m_k; ++y)
      if (pattern[std::size_t(y)] && (y == 0 || !pattern[std::size_t(y - 1)])) {
        Index last = y;
        while (last + 1 < m_k && pattern[std::size_t(last + 1)]) ++last;
        m_runs.emplace_back(y, last);
      }
    m_offsets.push_back(Index(m_runs.size()));
  }

  /// Number of patterns added.
  Index size() const { return Index(m_offsets.size()) - 1; }

  /// Adds \f$S\, \mathrm{diag}(e)\, S^T\f$ (e: one weight per pattern, any sign) to the lower
  /// triangle of `block` (k x k; the strict upper triangle too when `full`), for staircase low
  /// entry `low`.
  void add_to(const Eigen::VectorXd& e, double low, Eigen::Ref<Eigen::MatrixXd> block, bool full) {
    const Index k = m_k;
    m_D.setZero(k + 1, k + 1);
    double total = 0;
    for (Index i = 0; i < size(); ++i) {
      const double w = e[i];
      total += w;
      for (Index u = m_offsets[std::size_t(i)]; u < m_offsets[std::size_t(i) + 1]; ++u)
        for (Index v = m_offsets[std::size_t(i)]; v < m_offsets[std::size_t(i) + 1]; ++v) {
          const auto [a, b] = m_runs[std::size_t(u)];
          const auto [c, d] = m_runs[std::size_t(v)];
          m_D(a, c) += w;
          m_D(b + 1, c) -= w;
          m_D(a, d + 1) -= w;
          m_D(b + 1, d + 1) += w;
        }
    }
    // Prefix sums down each column, then across the columns: m_D(y, y') becomes M(y, y').
    for (Index c = 0; c < k; ++c)
      for (Index y = 1; y < k; ++y) m_D(y, c) += m_D(y - 1, c);
    for (Index c = 1; c < k; ++c) m_D.col(c).head(k) += m_D.col(c - 1).head(k);
    const double l2 = low * low * total, lh = low * (1 - low), h2 = (1 - low) * (1 - low);
    for (Index c = 0; c < k; ++c)
      for (Index y = full ? 0 : c; y < k; ++y) block(y, c) += l2 + lh * (m_D(y, y) + m_D(c, c)) + h2 * m_D(y, c);
  }

 private:
  Index m_k;
  std::vector<std::pair<Index, Index>> m_runs;  ///< first and last label of each run
  std::vector<Index> m_offsets{0};              ///< pattern i's runs: [m_offsets[i], m_offsets[i + 1])
  Eigen::MatrixXd m_D;                          ///< difference array, then M (workspace)
};

/// PatternGram: BasicPatternGram<> (see there).
using PatternGram = BasicPatternGram<>;

}  // namespace labeldp::detail
