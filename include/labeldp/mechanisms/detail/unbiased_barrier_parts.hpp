/// \file
/// IntervalBarrier's (unbiased_barrier.hpp) result and its two small building blocks: the
/// O(1) product of an interval pattern's staircase vector with a vector (IntervalDot) and the
/// factorization of the active columns (ActiveFactor).
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"

namespace labeldp::detail {

/// Outcome of interval_barrier_solve().
struct IntervalBarrierResult {
  bool converged = false;                ///< crossover and polish succeeded: columns/weights are exact
  Eigen::VectorXd duals;                 ///< (pi, sigma), 2k entries: the polished or the last interior ones
  std::vector<StaircaseColumn> columns;  ///< active patterns at their optimal outputs
  Eigen::VectorXd weights;               ///< primal weight of each column (>= 0 when converged)
  /// When not converged: the intervals with m_T > r_T at the last interior point that met a
  /// gap target, at their outputs there (a starting set for column generation).
  std::vector<StaircaseColumn> candidates;
  /// bias_bounded_barrier() only: the candidates of its first solve (interval patterns only),
  /// column generation's seeds when the solves with more patterns do not certify.
  std::vector<StaircaseColumn> interval_candidates;
  double primal_objective = 0;  ///< sum of weight * cost (scaled units)
  Index newton_steps = 0;       ///< barrier Newton steps
  /// The interior phase gave up: its iteration limit, a factorization or a step that failed.
  bool stalled = false;
  /// bias_bounded_barrier() only: duals (pi, sigma) of an earlier solve at which exact pricing
  /// found no pattern to add (empty if none); their bound may be higher than that of `duals`.
  Eigen::VectorXd bound_duals;
  Index polish_steps = 0;  ///< active-set Newton steps
  /// Of those, the steps on a square active set (as many columns as rows: one LU); the others
  /// had fewer columns than rows (a degenerate optimum: one QR and a small system).
  Index square_polish_steps = 0;
};

/// \f$s_T^T x\f$ for every interval pattern T = [a, b] in O(1) from prefix sums of x:
/// \f$\ell \sum_y x_y + (1 - \ell) \sum_{a \le y \le b} x_y\f$, with \f$\ell\f$ the staircase's low entry.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicIntervalDot {
 public:
  BasicIntervalDot(const Eigen::Ref<const Eigen::VectorXd>& x, double low) : m_prefix(x.size() + 1), m_low(low) {
    m_prefix[0] = 0;
    for (Index i = 0; i < x.size(); ++i) m_prefix[i + 1] = m_prefix[i] + x[i];
  }
  double operator()(Index a, Index b) const {
    return m_low * m_prefix[m_prefix.size() - 1] + (1 - m_low) * (m_prefix[b + 1] - m_prefix[a]);
  }

 private:
  Eigen::VectorXd m_prefix;
  double m_low;
};

/// IntervalDot: BasicIntervalDot<> (see there).
using IntervalDot = BasicIntervalDot<>;

/// Factorization of the active columns' matrix G (n x q, q <= n, full column rank): an LU
/// when square, a Householder QR otherwise (a degenerate optimum with fewer than 2k active
/// patterns). One factorization serves the crossover's solve and the first Newton step.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
struct BasicActiveFactor {
  Index rows = 0, cols = 0;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  Eigen::HouseholderQR<Eigen::MatrixXd> qr;
  bool square() const { return rows == cols; }
  void compute(const Eigen::MatrixXd& G) {
    rows = G.rows();
    cols = G.cols();
    if (square())
      lu.compute(G);
    else
      qr.compute(G);
  }
  /// The least-squares solution of G x = v (exact when square).
  Eigen::VectorXd solve(const Eigen::VectorXd& v) const {
    return square() ? Eigen::VectorXd(lu.solve(v)) : Eigen::VectorXd(qr.solve(v));
  }
};

/// ActiveFactor: BasicActiveFactor<> (see there).
using ActiveFactor = BasicActiveFactor<>;

}  // namespace labeldp::detail
