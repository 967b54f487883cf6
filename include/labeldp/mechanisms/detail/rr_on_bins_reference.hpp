/// \file
/// Algorithm 2 of Ghazi et al. (ICLR 2023) exactly as printed, kept as the slow reference that
/// the production solver (solve_rr_on_bins() in rr_on_bins.hpp) is tested against: the table
/// \f$L[r][i]\f$ of bin costs, the table \f$A[i][j]\f$ indexed by the bin count j, and the answer
/// \f$\min_d A[k][d]/(d - 1 + e^\varepsilon)\f$. O(k^2) memory and O(k^3) time (plus k^2 calls of
/// `loss.minimize`, O(k) each) — which is why it is not the production solver.
#pragma once

#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "labeldp/core/loss.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp::detail {

/// What the reference returns.
template <typename Scalar = double>
struct RROnBinsReferenceResult {
  Vector<Scalar> phi;    ///< \f$\Phi(y_i)\f$ for each prior value (from the traceback)
  Scalar expected_loss;  ///< \f$\min_d A[k][d]/(d - 1 + e^\varepsilon)\f$
  Index bins;            ///< the minimizing d
};

/// Algorithm 2 as printed (see the file comment). Ties are broken towards the smallest d and,
/// in \f$A[i][j]\f$, the smallest r.
/// \throws std::invalid_argument for a bad eps or a label the loss rejects.
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> RROnBinsReferenceResult<Scalar> rr_on_bins_reference(
    const FinitePrior<Scalar>& prior, double eps, const Loss& loss = {}) {
  validate_epsilon(eps);
  const Index k = prior.size();
  for (Index i = 0; i < k; ++i) loss.validate_label(prior.value(i));
  const Scalar e = Scalar(std::exp(eps));
  const Scalar inf = std::numeric_limits<Scalar>::infinity();
  const std::vector<Scalar> values(prior.values().data(), prior.values().data() + k);
  std::vector<Scalar> weights(static_cast<std::size_t>(k));
  auto at = [k](Index r, Index i) { return std::size_t(r * (k + 1) + i); };

  // L[r][i] = min_yhat sum_y p_y e^{1[y in [y_r, y_i]] eps} loss(yhat, y), 1 <= r <= i <= k.
  std::vector<Scalar> L(std::size_t((k + 1) * (k + 1)), inf), Yhat(std::size_t((k + 1) * (k + 1)), 0);
  for (Index r = 1; r <= k; ++r)
    for (Index i = r; i <= k; ++i) {
      for (Index j = 1; j <= k; ++j)
        weights[std::size_t(j - 1)] = prior.probability(j - 1) * (j >= r && j <= i ? e : Scalar(1));
      const Scalar yhat = Scalar(loss.minimize(std::span<const Scalar>(values), std::span<const Scalar>(weights)));
      Scalar s = 0;
      for (Index j = 0; j < k; ++j)
        if (weights[std::size_t(j)] > 0) s += weights[std::size_t(j)] * Scalar(loss(yhat, values[std::size_t(j)]));
      L[at(r, i)] = s;
      Yhat[at(r, i)] = yhat;
    }

  // A[i][j] = min_{0 <= r < i} A[r][j-1] + L[r+1][i]; A[0][0] = 0.
  std::vector<Scalar> A(std::size_t((k + 1) * (k + 1)), inf);
  std::vector<Index> B(std::size_t((k + 1) * (k + 1)), -1);
  A[at(0, 0)] = 0;
  for (Index i = 1; i <= k; ++i)
    for (Index j = 1; j <= i; ++j)
      for (Index r = 0; r < i; ++r) {
        if (A[at(r, j - 1)] == inf) continue;
        const Scalar cand = A[at(r, j - 1)] + L[at(r + 1, i)];
        if (cand < A[at(i, j)]) {
          A[at(i, j)] = cand;
          B[at(i, j)] = r;
        }
      }

  Index best_d = 1;
  Scalar best = inf;
  for (Index d = 1; d <= k; ++d) {
    const Scalar v = A[at(k, d)] / (Scalar(d) - 1 + e);
    if (v < best) {
      best = v;
      best_d = d;
    }
  }

  RROnBinsReferenceResult<Scalar> out{Vector<Scalar>(k), best, best_d};
  for (Index i = k, j = best_d; j > 0; --j) {
    const Index r = B[at(i, j)];
    for (Index t = r; t < i; ++t) out.phi[t] = Yhat[at(r + 1, i)];
    i = r;
  }
  return out;
}

}  // namespace labeldp::detail
