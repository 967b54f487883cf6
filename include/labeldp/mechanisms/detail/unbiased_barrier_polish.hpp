/// \file
/// The end of IntervalBarrier's solve (unbiased_barrier.hpp; Badanidiyuru et al. 2023, the
/// optimum over real outputs, which uses at most 2k outputs by Theorem 6): the crossover from
/// the interior point to at most 2k active interval patterns, and Newton's method on their
/// optimality conditions (quadratically convergent), dropping patterns whose weight turns
/// negative.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "labeldp/mechanisms/detail/unbiased_barrier.hpp"

namespace labeldp::detail {

/// From the last interior point to an exact basic solution, then to the exact optimum.
///
/// Crossover: the intervals with \f$m_T > \theta r_T\f$ (the active ones, near the optimum;
/// on the central path \f$m_T / r_T = m_T^2 / \mu\f$, huge for an active interval and tiny for
/// an inactive one), for thresholds \f$\theta\f$ from strict to loose, at the outputs of the
/// interior duals; when there are more of them than rows (a degenerate optimum) a
/// column-pivoted QR picks 2k (or rank-many) independent columns, heaviest first; their
/// weights solve the 2k primal rows exactly (least squares when fewer: checked).
/// Polish: Newton's method on the optimality conditions of that basis (r_T(lambda) = 0 on it,
/// primal rows satisfied, outputs following sigma), quadratically convergent; if it fails or
/// a weight turns negative, the crossover solution stands (its outputs are optimal to the
/// interior point's accuracy, and the caller certifies the gap by exact pricing).
template <typename Deferred>
inline void BasicIntervalBarrier<Deferred>::polish(const Eigen::VectorXd& rhs, Eigen::VectorXd lambda,
                                                   const Eigen::VectorXd& weights, Index max_polish,
                                                   IntervalBarrierResult& out) {
  const Index k = m_k, n = 2 * k;
  evaluate(lambda);
  const double scale = 1 + rhs.cwiseAbs().maxCoeff();
  std::vector<std::pair<Index, Index>> basis, crossover_basis;
  Eigen::VectorXd m, crossover_m;
  ActiveFactor factor;
  bool found = false;
  Index tried = -1;
  for (const double threshold : {1e9, 1e6, 1e3, 1.0}) {
    std::vector<std::pair<Index, Index>> candidates;
    for (Index b = 0; b < k; ++b)
      for (Index a = 0; a <= b; ++a)
        if (weights[slot(a, b)] > threshold * m_r[slot(a, b)]) candidates.emplace_back(a, b);
    const Index q = Index(candidates.size());
    if (q == 0 || q == tried) continue;  // empty, or the same set as the previous threshold
    tried = q;
    Eigen::MatrixXd G = active_matrix(candidates);
    basis.clear();
    if (q <= n) {
      basis = candidates;
    } else {
      // More active intervals than rows (a degenerate optimum): independent columns,
      // heaviest first, by column-pivoted QR.
      Eigen::VectorXd heavy(q);
      for (Index j = 0; j < q; ++j)
        heavy[j] = weights[slot(candidates[std::size_t(j)].first, candidates[std::size_t(j)].second)];
      Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(G * heavy.asDiagonal());
      const Index rank = std::min(qr.rank(), n);
      std::vector<Index> chosen;
      for (Index t = 0; t < rank; ++t) chosen.push_back(qr.colsPermutation().indices()[t]);
      std::sort(chosen.begin(), chosen.end());
      Eigen::MatrixXd GB(n, rank);
      for (Index t = 0; t < rank; ++t) {
        basis.push_back(candidates[std::size_t(chosen[std::size_t(t)])]);
        GB.col(t) = G.col(chosen[std::size_t(t)]);
      }
      G = std::move(GB);
    }
    factor.compute(G);
    m = factor.solve(rhs);
    if (!m.allFinite()) continue;
    const double residual = (G * m - rhs).cwiseAbs().maxCoeff();
    // An exact crossover solution (the fallback if the polish fails).
    if (!found && m.minCoeff() >= -1e-9 && residual <= 1e-9 * scale) {
      found = true;
      crossover_basis = basis;
      crossover_m = m.cwiseMax(0.0);
    }
    // Newton's method needs only a start near the solution: it is tried from an interior
    // point that is still far from roundoff (see solve()), whose crossover is not exact yet.
    if (!(m.minCoeff() >= -1e-3 * m.cwiseAbs().maxCoeff() && residual <= 1e-3 * scale)) continue;
    Eigen::VectorXd m_polished = m, lambda_polished = lambda;
    if (newton_with_drops(rhs, basis, m_polished, lambda_polished, max_polish, factor, out)) {
      // Newton converges to the optimum of the active set it is given; that is the optimum
      // only if no interval prices out at its duals (a wrong active set, from an early
      // crossover, leaves some r_T clearly negative). Within 1e-9 / k of the dual objective,
      // or within the roundoff of evaluate() (1e-16 of C_T ~ 1), the caller's exact pricing
      // decides.
      const double tolerance = std::max(1e-9 * std::abs(rhs.dot(lambda_polished)) / double(k), 1e-14);
      if (evaluate(lambda_polished) >= -tolerance) {
        write_solution(basis, m_polished, lambda_polished, out);
        return;
      }
      evaluate(lambda);
    }
  }
  if (found) write_solution(crossover_basis, crossover_m, lambda, out);
}

/// Newton's method on the active set `basis` (newton_on_active()); if it converges with
/// negative weights, those columns are not in the optimal active set: they are dropped and
/// Newton runs again on the rest (at most three times). True on success: weights >= 0.
template <typename Deferred>
inline bool BasicIntervalBarrier<Deferred>::newton_with_drops(const Eigen::VectorXd& rhs,
                                                              std::vector<std::pair<Index, Index>>& basis,
                                                              Eigen::VectorXd& m, Eigen::VectorXd& lambda,
                                                              Index max_polish, ActiveFactor& factor,
                                                              IntervalBarrierResult& out) {
  const Eigen::VectorXd lambda0 = lambda;
  for (int drops = 0;; ++drops) {
    const bool converged = newton_on_active(rhs, basis, m, lambda, max_polish, factor, out);
    if (converged && m.minCoeff() >= 0) return true;
    if (!converged || drops == 3) return false;
    std::vector<std::pair<Index, Index>> kept;
    std::vector<double> kept_m;
    for (std::size_t j = 0; j < basis.size(); ++j)
      if (m[Index(j)] > 0) {
        kept.push_back(basis[j]);
        kept_m.push_back(m[Index(j)]);
      }
    basis = std::move(kept);
    m = Eigen::Map<const Eigen::VectorXd>(kept_m.data(), Index(kept_m.size()));
    lambda = lambda0;
    evaluate(lambda);
    factor.compute(active_matrix(basis));
  }
}

/// Stores the columns `basis` with weights m at the duals lambda (their outputs there) into `out`.
template <typename Deferred>
inline void BasicIntervalBarrier<Deferred>::write_solution(const std::vector<std::pair<Index, Index>>& basis,
                                                           const Eigen::VectorXd& m, const Eigen::VectorXd& lambda,
                                                           IntervalBarrierResult& out) {
  const Index k = m_k;
  evaluate(lambda);
  std::vector<double> outputs(basis.size());
  for (std::size_t j = 0; j < basis.size(); ++j) outputs[j] = m_o[slot(basis[j].first, basis[j].second)];
  out.converged = true;
  out.duals = lambda;
  out.weights = m;
  out.columns.clear();
  out.primal_objective = 0;
  for (std::size_t j = 0; j < basis.size(); ++j) {
    const auto [a, b] = basis[j];
    const double o = outputs[j];
    out.columns.push_back(column_of(a, b, o));
    // cost = sum_y s_y p_y (o - y)^2, term by term (A o^2 - 2 B o + C cancels to 1e-16
    // absolute, too coarse for the small losses of a large eps).
    double cost = 0;
    for (Index y = 0; y < k; ++y)
      cost += (y >= a && y <= b ? 1.0 : m_P.low) * m_P.probs[y] * (o - m_P.labels[y]) * (o - m_P.labels[y]);
    out.primal_objective += m[Index(j)] * cost;
  }
}

/// Newton iterations for a fixed active set; true when the residual fell below roundoff level.
/// `factor` holds the factorization of G at the starting duals (used by the first step).
///
/// Each step solves \f$G^T \delta\lambda = r\f$, \f$G \delta m + K \delta\lambda = -F\f$ with
/// \f$K = \mathrm{diag}(0, \sum_T m_T s_T s_T^T / (2 A_T))\f$ (the derivative of the outputs
/// \f$o_T = (2 B_T + v_T) / (2 A_T)\f$ in sigma). Square G: one LU. Fewer columns than rows
/// (q < n): with \f$G = [Q_1\, Q_2] [R; 0]\f$, \f$\delta\lambda = Q_1 R^{-T} r + Q_2 z\f$ where the
/// (n - q)-square system \f$Q_2^T K Q_2 z = -Q_2^T (F + K Q_1 R^{-T} r)\f$ fixes z, then
/// \f$\delta m = R^{-1} Q_1^T (-F - K \delta\lambda)\f$: one QR instead of an LU of order n + q.
template <typename Deferred>
inline bool BasicIntervalBarrier<Deferred>::newton_on_active(const Eigen::VectorXd& rhs,
                                                             const std::vector<std::pair<Index, Index>>& active,
                                                             Eigen::VectorXd& m, Eigen::VectorXd& lambda,
                                                             Index max_steps, ActiveFactor& factor,
                                                             IntervalBarrierResult& out) {
  const Index k = m_k, n = 2 * k, q = Index(active.size()), p = n - q;
  if (q == 0 || p < 0) return false;
  const Eigen::MatrixXd S = staircase_block(active);
  Eigen::VectorXd A(q), B(q);
  for (Index j = 0; j < q; ++j) {
    const auto [a, b] = active[std::size_t(j)];
    A[j] = m_A(a, b);
    B[j] = m_B(a, b);
  }
  const double scale = 1 + rhs.cwiseAbs().maxCoeff();
  Eigen::VectorXd o(q), r(q), F2(n), dm(q), dlambda(n), curvature(q);
  Eigen::MatrixXd G(n, q);
  // K x (only the sigma block of x matters): S (curvature .* (S^T x_sigma)), O(kq).
  auto apply_K = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd out_k = Eigen::VectorXd::Zero(n);
    out_k.tail(k) = S * (curvature.array() * (S.transpose() * x.tail(k)).array()).matrix();
    return out_k;
  };
  // The reduced costs are evaluated term by term, r_T = sum_y s_y (p_y (o_T - y)^2 - pi_y -
  // sigma_y o_T), not as C_T - u_T - h_T^2 / (4 A_T): that form cancels terms of order
  // C_T ~ 1 down to r_T = 0 and leaves roundoff of 1e-16 absolute, far above the terms' own
  // size when the loss is small (eps = 12: duals ~ 1e-4), and the certificate prices it.
  // Converged: every r_T within a few ulps of its terms' magnitude and the primal rows to
  // roundoff; or no more progress (roundoff floor), with the best iterate kept.
  constexpr double ulp = std::numeric_limits<double>::epsilon();
  Eigen::VectorXd best_m = m, best_lambda = lambda, magnitude(q);
  double best = std::numeric_limits<double>::infinity(), previous = best;
  for (Index step = 0;; ++step) {
    const auto pi = lambda.head(k), sigma = lambda.tail(k);
    const Eigen::VectorXd v = S.transpose() * sigma;
    for (Index j = 0; j < q; ++j) {
      const double h = 2 * B[j] + v[j];
      o[j] = h / (2 * A[j]);
      double rj = 0, mag = 0;
      for (Index y = 0; y < k; ++y) {
        const double d = o[j] - m_P.labels[y], c = m_P.probs[y] * d * d, lin = pi[y] + sigma[y] * o[j];
        rj += S(y, j) * (c - lin);
        mag += S(y, j) * (c + std::abs(pi[y]) + std::abs(sigma[y] * o[j]));
      }
      r[j] = rj;
      magnitude[j] = mag;
      G.col(j).head(k) = S.col(j);
      G.col(j).tail(k) = o[j] * S.col(j);
    }
    F2 = G * m - rhs;
    const double residual =
        std::max((r.array().abs() / magnitude.array().max(1e-300)).maxCoeff(), F2.cwiseAbs().maxCoeff() / scale);
    if (!std::isfinite(residual)) break;
    if (residual < best) {
      best = residual;
      best_m = m;
      best_lambda = lambda;
    }
    if (residual <= 4 * ulp || step >= max_steps || (step >= 2 && residual > 0.25 * previous)) break;
    previous = residual;
    ++out.polish_steps;
    curvature = m.array() / (2 * A.array());
    if (step > 0) factor.compute(G);
    if (p == 0) {
      ++out.square_polish_steps;
      // Square: G^T dlambda = r, then G dm = -F2 - K dlambda.
      dlambda = factor.lu.transpose().solve(r);
      dm = factor.lu.solve(Eigen::VectorXd(-F2 - apply_K(dlambda)));
    } else {
      const auto R = factor.qr.matrixQR().topLeftCorner(q, q).template triangularView<Eigen::Upper>();
      const auto Q = factor.qr.householderQ();
      Eigen::VectorXd z(n);
      z.head(q) = R.transpose().solve(r);
      z.tail(p).setZero();
      const Eigen::VectorXd base = Q * z;  // Q_1 R^{-T} r
      Eigen::MatrixXd Q2 = Eigen::MatrixXd::Zero(n, p);
      Q2.bottomRows(p).setIdentity();
      Q2.applyOnTheLeft(Q);
      Eigen::MatrixXd KQ2(n, p);
      for (Index t = 0; t < p; ++t) KQ2.col(t) = apply_K(Q2.col(t));
      const Eigen::MatrixXd small = Q2.transpose() * KQ2;
      const Eigen::FullPivLU<Eigen::MatrixXd> small_lu(small);
      if (small_lu.rank() < p) break;  // the free directions of lambda are not fixed
      const Eigen::VectorXd free = small_lu.solve(Eigen::VectorXd(-Q2.transpose() * (F2 + apply_K(base))));
      dlambda = base + Q2 * free;
      const Eigen::VectorXd t = Q.transpose() * Eigen::VectorXd(-F2 - apply_K(dlambda));
      dm = R.solve(t.head(q));
    }
    if (!dm.allFinite() || !dlambda.allFinite()) break;
    m += dm;
    lambda += dlambda;
  }
  m = best_m;
  lambda = best_lambda;
  return best <= 1e-12;
}

}  // namespace labeldp::detail
