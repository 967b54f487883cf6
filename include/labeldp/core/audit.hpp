/// \file
/// Exact privacy audit of a finite mechanism.
#pragma once

#include <cmath>
#include <limits>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/types.hpp"

namespace labeldp {

/// The smallest eps for which the probability matrix is eps-DP under label replacement:
/// \f$\max_j \max_{i,i'} \ln(P[i][j] / P[i'][j])\f$, computed per column from its largest and
/// smallest entries in O(kd). A column that is 0 for some inputs and positive for others gives
/// \f$+\infty\f$; all-zero columns are ignored.
template <typename Derived>
double audit_epsilon(const Eigen::MatrixBase<Derived>& probabilities) {
  double eps = 0;
  for (Index j = 0; j < probabilities.cols(); ++j) {
    const double hi = double(probabilities.col(j).maxCoeff());
    const double lo = double(probabilities.col(j).minCoeff());
    if (hi <= 0) continue;
    if (lo <= 0) return std::numeric_limits<double>::infinity();
    eps = std::max(eps, std::log(hi) - std::log(lo));
  }
  return eps;
}

/// audit_epsilon() of the mechanism's stored probabilities.
template <typename Scalar>
double audit_epsilon(const FiniteMechanism<Scalar>& mechanism) {
  return audit_epsilon(mechanism.probabilities());
}

}  // namespace labeldp
