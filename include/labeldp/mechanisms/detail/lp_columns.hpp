/// \file
/// The one routine that turns an LP solution's columns into a FiniteMechanism, shared by the
/// optimal mechanism LP (Ghazi et al. 2023, LP (2)) and the optimal unbiased and bias-bounded
/// randomizers (Badanidiyuru et al. 2023, Alg. 1 and the optimum over real outputs), and the
/// achieved bias \f$\max_y |E[M(y)] - y|\f$ that the unbiased results report.
///
/// Which outputs are kept stays with the callers, because the LPs' columns mean different
/// things: optimal_mechanism_lp() drops staircase columns whose master weight is below its
/// `drop_tolerance` (an option, relative to the largest weight) before merging them per output,
/// while the unbiased solvers merge first and drop outputs whose probabilities are all at
/// roundoff (1e-14: their rows sum to 1), then restore the rows by column scales that keep the
/// conditional means (detail::rescale_columns_to_rows(), meaningful only with unbiasedness rows).
/// optimal_unbiased_reference() does not use this routine on purpose: it is the tests' oracle,
/// Alg. 1's LP exactly as printed, so it returns the simplex's solution (negatives clamped, rows
/// renormalized) without the production path's cleaning.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"

namespace labeldp::detail {

/// The FiniteMechanism from `inputs` to `outputs` whose column j is `columns.col(j)` (k x n: the
/// LP's probabilities of the kept outputs, each column in the eps-DP cone up to roundoff), with
/// every row divided by its sum (the simplex meets the rows to its tolerance) and the stored
/// matrix made eps-DP exactly by cap_to_epsilon(): the row division and a tolerance-feasible
/// solution can push a ratio past \f$e^\varepsilon\f$ by a few ulps, and the mass moved is
/// roundoff.
template <typename Scalar>
FiniteMechanism<Scalar> mechanism_from_lp_columns(const Vector<Scalar>& inputs, Vector<Scalar> outputs,
                                                  const Eigen::MatrixXd& columns, double eps) {
  Matrix<Scalar> probs = columns.cast<Scalar>();
  for (Index i = 0; i < probs.rows(); ++i) probs.row(i) /= probs.row(i).sum();
  cap_to_epsilon(probs, eps);
  return FiniteMechanism<Scalar>(inputs, std::move(outputs), std::move(probs));
}

/// mechanism_from_lp_columns() on the columns of `columns` (k x |O|, column j the LP's
/// probabilities of output `outputs[j]`) that carry mass: outputs no label reaches are left out.
template <typename Scalar>
FiniteMechanism<Scalar> mechanism_from_used_columns(const Vector<Scalar>& inputs, const std::vector<Scalar>& outputs,
                                                    const Eigen::MatrixXd& columns, double eps) {
  std::vector<Index> used;
  for (Index j = 0; j < columns.cols(); ++j)
    if (columns.col(j).maxCoeff() > 0) used.push_back(j);
  Vector<Scalar> values(Index(used.size()));
  Eigen::MatrixXd kept(columns.rows(), Index(used.size()));
  for (std::size_t t = 0; t < used.size(); ++t) {
    values[Index(t)] = outputs[std::size_t(used[t])];
    kept.col(Index(t)) = columns.col(used[t]);
  }
  return mechanism_from_lp_columns(inputs, std::move(values), kept, eps);
}

/// The achieved bias \f$\max_y |E[M(y)] - y|\f$ of a mechanism over the prior's values.
template <typename Scalar>
Scalar achieved_max_bias(const FiniteMechanism<Scalar>& mechanism, const FinitePrior<Scalar>& prior) {
  Scalar bias = 0;
  for (Index i = 0; i < prior.size(); ++i)
    bias = std::max(bias, Scalar(std::abs(mechanism.conditional_mean(i) - prior.value(i))));
  return bias;
}

}  // namespace labeldp::detail
