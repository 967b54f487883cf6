/// \file
/// The closed-form answers of optimal_mechanism_lp() at the two ends of eps, each with the bound
/// that certifies it: the best constant output below eps 1e-12, and randomized response onto each
/// label's nearest output at large eps (about 30 and beyond for typical priors). There the LP
/// itself degenerates (e^eps - 1 underflows the master's scaling, or its ratios e^eps pass the
/// simplex's tolerances), so these are the answers, not shortcuts around a working solve.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <optional>
#include <vector>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/lp_columns.hpp"

namespace labeldp::detail {

/// A closed-form mechanism and a valid lower bound on the LP's optimum (in loss units).
template <typename Scalar>
struct ClosedFormAnswer {
  FiniteMechanism<Scalar> mechanism;
  double bound = 0;    ///< every eps-DP mechanism into O has at least this loss
  bool final = false;  ///< tiny eps: the answer whatever its gap (the LP degenerates there)
};

/// The closed-form answer at tiny or large eps, or nothing in between.
///
/// `weighted` is k x |O| with entries \f$w_{yo} = p_y \ell(o, y)\f$, `outputs` sorted and
/// distinct; C is the non-private bound \f$\sum_y \min_o w_{yo}\f$, valid at any eps.
///
/// Tiny eps (\f$1 - e^{-\varepsilon} \le 10^{-12}\f$): the best constant mechanism (every label
/// to the output o* of least \f$W_o = \sum_y w_{yo}\f$), exactly eps-DP for every eps, is optimal
/// up to a relative \f$1 - e^{-\varepsilon}\f$: every eps-DP M has \f$M[y][o] \ge q_o = \min_{y'}
/// M[y'][o] \ge e^{-\varepsilon} M[y][o]\f$, so \f$\sum_o q_o \ge e^{-\varepsilon}\f$ and its loss
/// is at least \f$C + e^{-\varepsilon} (W_{o^*} - C)\f$, the bound returned.
///
/// Large eps: randomized response onto each label's nearest output, \f$M[y][o^*(y)] =
/// e^\varepsilon q\f$ and q at every other output (\f$q = 1 / (e^\varepsilon + |O| - 1)\f$; a
/// column holds only q and \f$e^\varepsilon q\f$, so it is eps-DP), has loss \f$C + q \sum_{y,o}
/// (w_{yo} - \min_{o'} w_{yo'})\f$; it is returned, with the bound C, when that excess is within
/// half of `tolerance` (relative) of C. (At eps 30 the 300-value x 10-output master ended
/// NumericalIssue with a gap of 3.6e-9.)
template <typename Scalar>
std::optional<ClosedFormAnswer<Scalar>> closed_form_answer(const Vector<Scalar>& labels,
                                                           const std::vector<Scalar>& outputs,
                                                           const Eigen::MatrixXd& weighted, double eps,
                                                           double tolerance) {
  const Index k = weighted.rows(), n = weighted.cols();
  const double nonprivate = weighted.rowwise().minCoeff().sum();
  if (-std::expm1(-eps) <= 1e-12) {
    const Eigen::VectorXd W = weighted.colwise().sum().transpose();
    Index best = 0;
    W.minCoeff(&best);
    return ClosedFormAnswer<Scalar>{
        FiniteMechanism<Scalar>(labels, Vector<Scalar>::Constant(1, outputs[std::size_t(best)]),
                                Matrix<Scalar>::Constant(k, 1, Scalar(1))),
        nonprivate + std::exp(-eps) * (W[best] - nonprivate), true};
  }
  if (nonprivate <= 0 || n <= 1) return std::nullopt;
  const double q = 1 / (std::exp(eps) + double(n - 1));
  const Eigen::VectorXd least = weighted.rowwise().minCoeff();
  if (q * (weighted.colwise() - least).sum() > 0.5 * tolerance * nonprivate) return std::nullopt;
  Eigen::MatrixXd M = Eigen::MatrixXd::Constant(k, n, q);
  for (Index y = 0; y < k; ++y) {
    Index best = 0;
    weighted.row(y).minCoeff(&best);
    M(y, best) = std::exp(eps) * q;
  }
  return ClosedFormAnswer<Scalar>{
      mechanism_from_lp_columns(labels, Vector<Scalar>(Eigen::Map<const Vector<Scalar>>(outputs.data(), n)), M, eps),
      nonprivate, false};
}

}  // namespace labeldp::detail
