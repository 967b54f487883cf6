// Independent oracles for the optimal unbiased randomizer (tests and bench/bench_unbiased.cpp):
// the paper's Algorithm 1 LP written out explicitly and solved by GLPK, and a brute-force
// RR-on-Bins optimum (paper 1's Theorem 5 limit of the bias-bounded randomizer).
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <limits>
#include <vector>

#include "oracles/glpk_oracle.hpp"

namespace labeldp::test {

/// Which explicit form of Algorithm 1 to build.
enum class UnbiasedLpForm {
  /// As printed: variables M[y][i], rows M[y'][i] - e^eps M[y][i] <= 0 for every ordered pair.
  Pairwise,
  /// M[y][i] = lo_i + s[y][i] with 0 <= s[y][i] <= (e^eps - 1) lo_i: n + kn variables, kn
  /// privacy rows (the "compact form" used for the HiGHS and GLPK timings).
  Compact,
};

/// Alg. 1's LP for labels/probs/outputs with cost p_y * loss(y, i) (loss given as a k x n
/// matrix) and bias bound B (B = 0: equality rows). Variables of the Pairwise form: M[y][i] at
/// y * n + i. Compact form: lo_i at i, then s[y][i] at n + y * n + i.
inline SparseLinearProgram unbiased_lp(const Eigen::VectorXd& labels, const Eigen::VectorXd& probs, double eps,
                                       const Eigen::VectorXd& outputs, const Eigen::MatrixXd& loss, double max_bias,
                                       UnbiasedLpForm form) {
  const Eigen::Index k = labels.size(), n = outputs.size();
  const bool bounded = max_bias > 0;
  const Eigen::Index bias_rows = bounded ? 2 * k : k;
  const bool compact = form == UnbiasedLpForm::Compact;
  const Eigen::Index privacy_rows = compact ? k * n : n * k * (k - 1);
  const Eigen::Index rows = k + bias_rows + privacy_rows;
  const Eigen::Index cols = compact ? n + k * n : k * n;
  const double e = std::exp(eps);
  std::vector<Eigen::Triplet<double>> t;
  SparseLinearProgram lp;
  lp.b = Eigen::VectorXd::Zero(rows);
  lp.c = Eigen::VectorXd::Zero(cols);
  lp.row_types.assign(std::size_t(rows), optim::RowType::LessEqual);
  // M[y][i] as a list of (column, coefficient).
  auto add_M = [&](Eigen::Index row, Eigen::Index y, Eigen::Index i, double coef) {
    if (compact) {
      t.emplace_back(row, i, coef);
      t.emplace_back(row, n + y * n + i, coef);
    } else {
      t.emplace_back(row, y * n + i, coef);
    }
  };
  for (Eigen::Index y = 0; y < k; ++y) {
    lp.b[y] = 1;
    lp.row_types[std::size_t(y)] = optim::RowType::Equal;
    if (bounded) {
      lp.b[k + y] = labels[y] + max_bias;
      lp.b[2 * k + y] = labels[y] - max_bias;
      lp.row_types[std::size_t(2 * k + y)] = optim::RowType::GreaterEqual;
    } else {
      lp.b[k + y] = labels[y];
      lp.row_types[std::size_t(k + y)] = optim::RowType::Equal;
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      add_M(y, y, i, 1.0);
      add_M(k + y, y, i, outputs[i]);
      if (bounded) add_M(2 * k + y, y, i, outputs[i]);
      const double cost = probs[y] * loss(y, i);
      if (compact) {
        lp.c[i] += cost;
        lp.c[n + y * n + i] = cost;
      } else {
        lp.c[y * n + i] = cost;
      }
    }
  }
  Eigen::Index r = k + bias_rows;
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index y = 0; y < k; ++y) {
      if (compact) {
        t.emplace_back(r, n + y * n + i, 1.0);
        t.emplace_back(r, i, -(e - 1));
        ++r;
        continue;
      }
      for (Eigen::Index y2 = 0; y2 < k; ++y2) {
        if (y2 == y) continue;
        t.emplace_back(r, y2 * n + i, 1.0);
        t.emplace_back(r, y * n + i, -e);
        ++r;
      }
    }
  lp.A.resize(rows, cols);
  lp.A.setFromTriplets(t.begin(), t.end());
  return lp;
}

/// The k x n probability matrix of a solution of unbiased_lp().
inline Eigen::MatrixXd unbiased_lp_matrix(const Eigen::VectorXd& x, Eigen::Index k, Eigen::Index n,
                                          UnbiasedLpForm form) {
  Eigen::MatrixXd M(k, n);
  for (Eigen::Index y = 0; y < k; ++y)
    for (Eigen::Index i = 0; i < n; ++i)
      M(y, i) = form == UnbiasedLpForm::Compact ? x[i] + x[n + y * n + i] : x[y * n + i];
  return M;
}

/// Brute-force optimal RR-on-Bins (Ghazi et al. 2023, Alg. 1) for the squared loss: every split
/// of the sorted labels into consecutive bins (2^(k-1) of them); for a fixed split the best
/// output of bin b is the mean of the labels weighted by p_y (e^eps if y in b, else 1).
/// Returns the least expected loss sum_y p_y E[(M(y) - y)^2]. Only for small k.
inline double brute_force_rr_on_bins_loss(const Eigen::VectorXd& labels, const Eigen::VectorXd& probs, double eps,
                                          std::vector<double>* best_outputs_per_label = nullptr) {
  const int k = int(labels.size());
  const double e = std::exp(eps);
  double best = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << (k - 1)); ++mask) {
    std::vector<int> bin(static_cast<std::size_t>(k));
    int d = 0;
    for (int y = 0; y < k; ++y) {
      if (y > 0 && (mask >> (y - 1)) & 1u) ++d;
      bin[std::size_t(y)] = d;
    }
    ++d;
    std::vector<double> out(static_cast<std::size_t>(d));
    for (int b = 0; b < d; ++b) {
      double w = 0, wy = 0;
      for (int y = 0; y < k; ++y) {
        const double wt = probs[y] * (bin[std::size_t(y)] == b ? e : 1.0);
        w += wt;
        wy += wt * labels[y];
      }
      out[std::size_t(b)] = wy / w;
    }
    double loss = 0;
    for (int y = 0; y < k; ++y)
      for (int b = 0; b < d; ++b) {
        const double pr = (bin[std::size_t(y)] == b ? e : 1.0) / (e + d - 1);
        loss += probs[y] * pr * (out[std::size_t(b)] - labels[y]) * (out[std::size_t(b)] - labels[y]);
      }
    if (loss < best) {
      best = loss;
      if (best_outputs_per_label) {
        best_outputs_per_label->clear();
        for (int y = 0; y < k; ++y) best_outputs_per_label->push_back(out[std::size_t(bin[std::size_t(y)])]);
      }
    }
  }
  return best;
}

}  // namespace labeldp::test
