/// \file
/// Vocabulary types shared by all layers.
#pragma once

#include <Eigen/Core>

namespace labeldp {

/// Index type of every container in the library (Eigen's signed index).
using Index = Eigen::Index;

/// Column vector of `Scalar`.
template <typename Scalar = double>
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

/// Dense row-major matrix of `Scalar` (rows are mechanism inputs).
template <typename Scalar = double>
using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace labeldp
