/// \file
/// The paper's Algorithm 1 LP written out explicitly (one variable per (label, output) pair),
/// kept as the slow reference that the column-generation solver is tested against.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp::detail {

/// Algorithm 1 of Badanidiyuru et al. (NeurIPS 2023) as printed, in variables
/// \f$M_{y \to i}\f$ (column index \f$y \cdot n + i\f$): k normalization rows, k unbiasedness rows
/// (or, for max_bias > 0, 2k rows \f$|\sum_i M_{y\to i} \hat y_i - y| \le B\f$), and the
/// \f$n k (k-1)\f$ pairwise privacy rows \f$M_{y' \to i} - e^{\varepsilon} M_{y \to i} \le 0\f$.
/// Cost \f$p_y \cdot \text{loss}(\hat y_i, y)\f$ with `loss_values(y, i)` = loss(o_i, y).
/// O(n k^2) rows: only for small instances.
inline optim::LinearProgram explicit_unbiased_lp(const Eigen::VectorXd& labels, const Eigen::VectorXd& probs,
                                                 double eps, const Eigen::VectorXd& outputs,
                                                 const Eigen::MatrixXd& loss_values, double max_bias) {
  const Index k = labels.size(), n = outputs.size();
  const bool bounded = max_bias > 0;
  const Index bias_rows = bounded ? 2 * k : k;
  const Index rows = k + bias_rows + n * k * (k - 1);
  optim::LinearProgram lp;
  lp.A = Eigen::MatrixXd::Zero(rows, k * n);
  lp.b = Eigen::VectorXd::Zero(rows);
  lp.c.resize(k * n);
  lp.row_types.assign(std::size_t(rows), optim::RowType::LessEqual);
  const double e = std::exp(eps);
  for (Index y = 0; y < k; ++y) {
    for (Index i = 0; i < n; ++i) {
      lp.A(y, y * n + i) = 1;
      lp.A(k + y, y * n + i) = outputs[i];
      if (bounded) lp.A(2 * k + y, y * n + i) = outputs[i];
      lp.c[y * n + i] = probs[y] * loss_values(y, i);
    }
    lp.b[y] = 1;
    lp.row_types[std::size_t(y)] = optim::RowType::Equal;
    if (bounded) {
      lp.b[k + y] = labels[y] + max_bias;
      lp.row_types[std::size_t(k + y)] = optim::RowType::LessEqual;
      lp.b[2 * k + y] = labels[y] - max_bias;
      lp.row_types[std::size_t(2 * k + y)] = optim::RowType::GreaterEqual;
    } else {
      lp.b[k + y] = labels[y];
      lp.row_types[std::size_t(k + y)] = optim::RowType::Equal;
    }
  }
  Index r = k + bias_rows;
  for (Index i = 0; i < n; ++i)
    for (Index y = 0; y < k; ++y)
      for (Index y2 = 0; y2 < k; ++y2) {
        if (y2 == y) continue;
        lp.A(r, y2 * n + i) = 1;
        lp.A(r, y * n + i) = -e;
        ++r;
      }
  return lp;
}

}  // namespace labeldp::detail
