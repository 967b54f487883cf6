/// \file
/// The interior point's own answer to the optimal-mechanism LP (Ghazi et al. 2023, LP (2)):
/// its mechanism, made exactly eps-DP with rows summing to 1, and the certified bound of its
/// duals, for optimal_mechanism_lp() to return without the simplex crossover.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/lp_columns.hpp"
#include "labeldp/mechanisms/detail/optimal_lp_oracle.hpp"
#include "labeldp/mechanisms/detail/staircase_barrier_problem.hpp"

namespace labeldp::detail {

/// The interior point's mechanism and its certificate (interior_mechanism()).
template <typename Scalar>
struct InteriorMechanism {
  FiniteMechanism<Scalar> mechanism;  ///< no outputs when the interior point has none
  double loss = 0;                    ///< its expected loss
  /// Certified lower bound on the optimum in loss units, at most `loss`.
  double bound = -std::numeric_limits<double>::infinity();
  bool floor = false;  ///< the bound is the caller's known lower bound (no duals certify it)
};

/// The mechanism of the interior point `br` of LP (2) (solved on the excess costs of `oracle`):
/// output o's column \f$v_{\cdot,o} = \ell T_o 1 + u_{\cdot,o}\f$ with \f$0 \le u \le (1 - \ell)
/// T_o\f$ lies in the eps-DP cone, so the mechanism is eps-DP up to roundoff whatever the
/// interior point's accuracy.
///
/// Outputs with \f$T_o\f$ at most `drop_threshold` times the largest are dropped. Each row's
/// deficit \f$e_y = 1 - \sum_o v_{y,o}\f$ (the interior point's row residual and the dropped
/// mass) is then added to one entry that can take it inside its cone (\f$\ell T_o \le v_{y,o} +
/// e_y \le T_o\f$), the cheapest one for a deficit and the dearest for an excess, so the rows
/// sum to 1 and every column stays in its cone. Dividing the rows by their sums instead tilts
/// the columns' ratios past \f$e^\varepsilon\f$ by the residual (1e-11), and the mass that
/// cap_to_epsilon() then moves onto the far outputs, \f$e^\varepsilon\f$ times costlier, cost
/// 4e-8 of the loss (near-uniform k = 214 with zero-probability labels, eps 12). The stored
/// matrix is made eps-DP exactly by mechanism_from_lp_columns() (a roundoff-level change).
///
/// Its loss is evaluated on the mechanism as stored, and the bound is the Lagrangian bound of
/// the interior point's duals (`bound_at(z)`: master units, given an upper bound z on the master
/// optimum, here the mechanism's own loss), or the caller's `known_floor` (master units) when
/// that is higher. When the repaired matrix's loss is not within twice `max_gap` (relative) of
/// that bound, no mechanism is built (`mechanism` has no outputs).
template <typename Scalar, typename BoundAt, typename Loss>
InteriorMechanism<Scalar> interior_mechanism(const FinitePrior<Scalar>& prior, const std::vector<Scalar>& outputs,
                                             const StaircaseBarrierResult& br, const StaircaseOracle& oracle,
                                             const BoundAt& bound_at, double known_floor, double eps,
                                             double drop_threshold, double max_gap, const Loss& loss) {
  InteriorMechanism<Scalar> out;
  const Index k = br.mechanism.rows(), n = br.mechanism.cols();
  if (k == 0 || n == 0 || br.top.size() != n || oracle.loss().rows() != k || oracle.loss().cols() != n) return out;
  const double top = br.top.maxCoeff(), low = staircase_low(eps);
  std::vector<Index> used;
  for (Index j = 0; j < n; ++j)
    if (br.top[j] > drop_threshold * top) used.push_back(j);
  if (used.empty()) return out;
  const Index d = Index(used.size());
  Vector<Scalar> values(d);
  Eigen::MatrixXd kept(k, d), cost(k, d);
  Eigen::VectorXd T(d);
  for (Index u = 0; u < d; ++u) {
    const Index j = used[std::size_t(u)];
    values[u] = outputs[std::size_t(j)];
    T[u] = br.top[j];
    kept.col(u) = br.mechanism.col(j).cwiseMax(low * T[u]).cwiseMin(T[u]);
    cost.col(u) = oracle.loss().col(j);
  }
  if (!kept.allFinite() || !T.allFinite()) return out;
  for (Index y = 0; y < k; ++y) {
    const double e = 1 - kept.row(y).sum();
    Index best = -1;
    for (Index u = 0; u < d; ++u) {
      const double v = kept(y, u) + e;
      if (!(v >= low * T[u] && v <= T[u])) continue;
      if (best < 0 || (e > 0 ? cost(y, u) < cost(y, best) : cost(y, u) > cost(y, best))) best = u;
    }
    if (best >= 0) kept(y, best) += e;
  }
  if (!(kept.rowwise().sum().minCoeff() > 0)) return out;
  // The bound (loss units) given an upper bound on the optimum, and whether it is the floor.
  const auto certified_bound = [&](double upper) {
    const double b = bound_at((upper - oracle.nonprivate_loss()) / oracle.cost_scale());  // master units
    return std::pair{std::min(upper, oracle.nonprivate_loss() + oracle.cost_scale() * std::max(b, known_floor)),
                     known_floor > b};
  };
  // The matrix as repaired differs from the stored one by roundoff: when its loss is not within
  // twice `max_gap` of the bound, no mechanism (and no sampler table) is built.
  const double approx = kept.cwiseProduct(cost).sum();
  if (approx - certified_bound(approx).first > 2 * max_gap * std::abs(approx)) return out;
  out.mechanism = mechanism_from_lp_columns(prior.values(), std::move(values), kept, eps);
  out.loss = double(out.mechanism.expected_loss(prior, loss));
  std::tie(out.bound, out.floor) = certified_bound(out.loss);
  return out;
}

}  // namespace labeldp::detail
