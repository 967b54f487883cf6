/// \file
/// The Newton system of the staircase interior point (StaircaseBarrier in staircase_barrier.hpp;
/// the LPs of Badanidiyuru et al. 2023, Alg. 1, and Ghazi et al. 2023, LP (2)): per output an
/// arrow-matrix barrier Hessian inverted in O(k); the normal matrix of the coupling rows,
/// factorized densely (one rank-n update, then Cholesky) or by the Woodbury identity with
/// iterative refinement against it; Mehrotra's and Gondzio's correctors' right-hand sides; and
/// the direction, in passes over the outputs. Member functions of StaircaseBarrier.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "labeldp/mechanisms/detail/staircase_barrier.hpp"

namespace labeldp::detail {

/// Arrow-matrix data and the normal matrix of the coupling rows; false on breakdown.
/// `dropped` (optional, n flags): outputs whose variables are held at zero (their blocks
/// leave the normal matrix).
template <typename Deferred>
inline bool BasicStaircaseBarrier<Deferred>::factorize(const std::vector<char>* dropped) {
  const Index k = m_k, n = m_n, m = m_m;
  // Per output (one pass over each column): dU = lU / U, dG = lG / G, Dinv = 1 / (dU + dG),
  // q = dG Dinv, gamma = dT + w^2 sum dG dU / D (written through q).
  m_Dinv.resize(k, n);
  m_q.resize(k, n);
  m_gamma.resize(n);
  Eigen::VectorXd dU(k);  // lU / U of one output, computed once
  for (Index o = 0; o < n; ++o) {
    auto Dinv = m_Dinv.col(o);
    auto q = m_q.col(o);
    q = m_lG.col(o).cwiseQuotient(m_G.col(o));  // dG
    dU = m_lU.col(o).cwiseQuotient(m_U.col(o));
    Dinv = (dU + q).cwiseInverse();  // 1 / (dU + dG)
    q = q.cwiseProduct(Dinv);
    m_gamma[o] = m_lT[o] / m_T[o] + m_w * m_w * q.dot(dU);
  }
  if (dropped)
    for (Index o = 0; o < n; ++o)
      if ((*dropped)[std::size_t(o)]) {
        m_Dinv.col(o).setZero();
        m_q.col(o).setZero();
        m_gamma[o] = std::numeric_limits<double>::infinity();
      }
  if (m_bounded) m_Hz = m_lz.cwiseQuotient(m_z) + m_lzb.cwiseQuotient(m_zb);
  // F: column o = [f_o; x_o f_o] / sqrt(gamma_o), f_o = low + w q_o.
  m_F.resize(m, n);
  for (Index o = 0; o < n; ++o) {
    const double g = 1 / std::sqrt(m_gamma[o]);
    m_F.col(o).head(k) = (m_low + m_w * m_q.col(o).array()) * g;
    if (m_bias) m_F.col(o).tail(k) = m_x[o] * m_F.col(o).head(k);
  }
  m_E1 = m_Dinv.rowwise().sum();
  if (m_bias) {
    m_E2 = m_Dinv * m_x;
    m_E3 = m_Dinv * m_x.cwiseProduct(m_x);
    if (m_bounded) m_E3 += m_Hz.cwiseInverse();
  }
  if (!m_F.allFinite() || !m_E1.allFinite()) return false;
  m_dense_ready = false;
  m_product_ready = false;
  // After Woodbury failed once, the product form (LP (2) rows) is built right away.
  if (m_product && n < m) return factorize_product() || factorize_dense();
  m_woodbury = n < m && !m_woodbury_failed;
  if (m_woodbury) {
    // Block-diagonal part's inverse (per label a 2 x 2 block [E1 E2; E2 E3]), written as
    // L0^-T diag(1 / E1, 1 / V) L0^-1 (factorize_product(): xbar = E2 / E1, V = E3 - E2^2 / E1
    // summed without cancellation).
    m_Dg11.resize(k);
    m_Dg12.resize(k);
    m_Dg22.resize(k);
    if (m_bias) block_schur();
    bool ok = true;
    for (Index y = 0; y < k; ++y) {
      if (m_bias) {
        const double V = m_pf_V[y], xbar = m_pf_xbar[y];
        if (!(V > 1e-15 * m_E3[y])) ok = false;
        m_Dg22[y] = 1 / V;
        m_Dg12[y] = -xbar / V;
        m_Dg11[y] = 1 / m_E1[y] + xbar * xbar / V;
      } else {
        m_Dg11[y] = 1 / m_E1[y];
      }
    }
    if (ok) {
      apply_Dg_inverse(m_F, m_GF);
      Eigen::MatrixXd C = Eigen::MatrixXd::Identity(n, n);
      // F^T Dg^-1 F = H^T H, one symmetric rank-m update of the lower triangle (all that the
      // Cholesky reads): half the flops of the general product, which were a fifth of the solve
      // (near-uniform k = 214, n = 107, eps 12; LP (2) rows) and 15% of it (n = 51, eps 12,
      // unbiasedness rows). LP (2) rows: H = Dg^-1/2 F. Unbiasedness rows: H = diag(1 / sqrt(E1),
      // 1 / sqrt(V)) L0^-1 F, whose label rows are f / sqrt(E1) and bias rows (x_o - xbar) f / sqrt(V).
      Eigen::MatrixXd H(m, n);
      if (m_bias) {
        const Eigen::ArrayXd s1 = m_E1.array().rsqrt(), s2 = m_pf_V.array().rsqrt();
        for (Index o = 0; o < n; ++o) {
          H.col(o).head(k) = s1 * m_F.col(o).head(k).array();
          H.col(o).tail(k) = (m_x[o] - m_pf_xbar.array()) * s2 * m_F.col(o).head(k).array();
        }
      } else {
        H = m_Dg11.cwiseSqrt().asDiagonal() * m_F;
      }
      C.selfadjointView<Eigen::Lower>().rankUpdate(H.transpose());
      m_small.compute(C);
      if (m_small.info() == Eigen::Success) return true;
    }
    m_woodbury = false;
    if (m_bias && product_pays()) {
      // Unbiasedness rows: a nearly singular block (or C) is the start of the end game, where
      // Woodbury's refinement fails too; the product form from now on, as after that failure
      // (the dense factorization of order m = 2k cost 2-5 of 30 iterations' time at k = 214).
      m_woodbury_failed = m_product = true;
      return factorize_product() || factorize_dense();
    }
  }
  return factorize_dense();
}

/// Dense factorization of the normal matrix: S = F F^T (one rank-n update) plus the
/// per-label blocks, then Cholesky; with unbiasedness rows, of S with its 2 x 2 blocks
/// factorized exactly first (block_schur(), dense_solve()).
template <typename Deferred>
inline bool BasicStaircaseBarrier<Deferred>::factorize_dense() {
  const Index k = m_k, m = m_m;
  m_dense_ready = true;
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(m, m);
  if (m_bias) {
    // With unbiasedness rows, the factors are those of S' = L_0^{-1} S L_0^{-T} =
    // diag(E_1, V) + F' F'^T (block_schur(); F' as in factorize_product()), whose per-label
    // blocks are diagonal: Cholesky on S itself forms E_3 - E_2^2 / E_1 by cancellation, which
    // near the optimum (one output carrying a label's weight) lost every digit of the solve
    // (weeks-like k = 52, grid 52, eps 12: residuals of 1e-7 to 0.4 |r| after refinement,
    // though the componentwise backward error was 1e-15; a step of 1e-10, and 5 of 22
    // interior-point iterations went to recovering: 17 with S'). Same cost, plus O(m n).
    block_schur();
    Eigen::MatrixXd H(m, m_n);
    for (Index o = 0; o < m_n; ++o) {
      H.col(o).head(k) = m_F.col(o).head(k);
      H.col(o).tail(k) = (m_x[o] - m_pf_xbar.array()) * m_F.col(o).head(k).array();
    }
    S.selfadjointView<Eigen::Lower>().rankUpdate(H);
    S.diagonal().head(k) += m_E1;
    S.diagonal().tail(k) += m_pf_V;
  } else {
    S.selfadjointView<Eigen::Lower>().rankUpdate(m_F);
    S.diagonal().head(k) += m_E1;
  }
  // A relative diagonal shift if roundoff broke positivity (the iterate is then near the
  // end; the refinement in solve_S() works against the unshifted S).
  for (double shift = 0;; shift = shift == 0 ? 1e-14 : shift * 100) {
    if (shift > 0) S.diagonal().array() += shift * S.diagonal().cwiseAbs().maxCoeff();
    m_dense.compute(S);
    if (m_dense.info() == Eigen::Success) return true;
    if (shift > 1e-6) return false;
  }
}

/// Product-form Cholesky factorization (Goldfarb and Scheinberg 2004) of S = Dg + F F^T: S =
/// L_1 ... L_n D L_n^T ... L_1^T, where L_o is the identity plus the strictly lower part of
/// \f$p_o \beta_o^T\f$, from n rank-one updates of a positive diagonal by Gill, Golub, Murray and
/// Saunders' (1974) method C1 (stable for positive updates: the diagonal only grows). Column o of
/// F enters after the factors before it have been divided out, applied to all remaining columns
/// at once (vectorized across them). With unbiasedness rows Dg has a 2 x 2 block per label,
/// \f$[E_1, E_2; E_2, E_3]\f$ (\f$E_j = \sum_o D^{-1}_{y,o} x_o^{j-1}\f$), written exactly as
/// \f$L_0 \mathrm{diag}(E_1, V) L_0^T\f$ with \f$L_0 = [1, 0; \bar x_y, 1]\f$, \f$\bar x_y = E_2 / E_1\f$ and
/// \f$V_y = \sum_o D^{-1}_{y,o} (x_o - \bar x_y)^2\f$ (+ the bias slack's \f$1 / H_z\f$), summed
/// directly: near the optimum the block is nearly singular (one output carries a label's
/// weight) and \f$E_3 - E_2^2 / E_1\f$ would cancel. Then \f$S = L_0 (\mathrm{diag}(E_1, V) + F' F'^T)
/// L_0^T\f$ with \f$F' = L_0^{-1} F\f$, whose bias rows are \f$(x_o - \bar x_y) f_{y,o}\f$, and the
/// product form factorizes the middle matrix. O(m n^2) work and storage O(m n). False when a
/// diagonal entry is not positive and finite.
template <typename Deferred>
inline bool BasicStaircaseBarrier<Deferred>::factorize_product() {
  const Index k = m_k, n = m_n, m = m_m;
  m_product_ready = false;
  m_pf_p = m_F;  // row-major copy: row i holds F(i, o) for every o, divided out in place below
  m_pf_beta.resize(m, n);
  m_pf_d.resize(m);
  m_pf_d.head(k) = m_E1;
  if (m_bias) {
    block_schur();
    m_pf_d.tail(k) = m_pf_V;
    for (Index y = 0; y < k; ++y)
      for (Index o = 0; o < n; ++o) m_pf_p(k + y, o) = (m_x[o] - m_pf_xbar[y]) * m_F(y, o);
  }
  m_pf_s.resize(n);
  if (!(m_pf_d.minCoeff() > 0) || !m_pf_d.allFinite() || !m_pf_p.allFinite()) return false;
  for (Index o = 0; o < n; ++o) {
    double t = 1;
    for (Index y = 0; y < m; ++y) {
      const double p = m_pf_p(y, o), d = m_pf_d[y];
      const double tn = t + p * p / d;
      m_pf_d[y] = d * (tn / t);
      m_pf_beta(y, o) = p / (d * tn);
      t = tn;
    }
    // The later columns through L_o^{-1}: x_y = v_y - p_y sum_{y' < y} beta_y' x_y'.
    const Index rest = n - o - 1;
    if (rest == 0) break;
    auto acc = m_pf_s.head(rest);
    acc.setZero();
    for (Index y = 0; y < m; ++y) {
      auto row = m_pf_p.row(y).segment(o + 1, rest);
      row.noalias() -= m_pf_p(y, o) * acc.transpose();
      acc.noalias() += m_pf_beta(y, o) * row.transpose();
    }
  }
  if (!(m_pf_d.minCoeff() > 0) || !m_pf_d.allFinite() || !m_pf_beta.allFinite()) return false;
  m_product_ready = true;
  return true;
}

/// Solves S x = r with the dense factorization (factorize_dense()): with unbiasedness rows,
/// through \f$L_0^{-1}\f$, the Cholesky factors of \f$S' = L_0^{-1} S L_0^{-T}\f$, then
/// \f$L_0^{-T}\f$ (as solve_product()).
template <typename Deferred>
inline Eigen::VectorXd BasicStaircaseBarrier<Deferred>::dense_solve(const Eigen::VectorXd& r) const {
  if (!m_bias) return m_dense.solve(r);
  const Index k = m_k;
  Eigen::VectorXd v = r;
  v.tail(k) -= m_pf_xbar.cwiseProduct(v.head(k));
  m_dense.solveInPlace(v);
  v.head(k) -= m_pf_xbar.cwiseProduct(v.tail(k));
  return v;
}

/// Solves S v = r in place with the product-form factors (through \f$L_0^{-1}\f$ with
/// unbiasedness rows, forward through every L_o, the diagonal, backward through every L_o^T,
/// then \f$L_0^{-T}\f$), row by row so that the n running sums advance together: O(m n).
/// Results are bit for bit those of one row at a time.
template <typename Deferred>
inline void BasicStaircaseBarrier<Deferred>::solve_product(Eigen::VectorXd& v) const {
  const Index k = m_k, n = m_n, m = m_m;
  if (m_bias) v.tail(k) -= m_pf_xbar.cwiseProduct(v.head(k));
  // Two rows at a time, interleaved per output: each row's running value is a chain of
  // dependent multiply-adds, and the second row's chain (which needs s[o] after the first row's
  // update of it) runs alongside the first's, with the same operations in the same order.
  Eigen::VectorXd s = Eigen::VectorXd::Zero(n);
  Index y = 0;
  for (; y + 1 < m; y += 2) {
    double x0 = v[y], x1 = v[y + 1];
    const double *p0 = m_pf_p.row(y).data(), *b0 = m_pf_beta.row(y).data();
    const double *p1 = m_pf_p.row(y + 1).data(), *b1 = m_pf_beta.row(y + 1).data();
    for (Index o = 0; o < n; ++o) {
      double so = s[o];
      x0 -= p0[o] * so;
      so += b0[o] * x0;
      x1 -= p1[o] * so;
      s[o] = so + b1[o] * x1;
    }
    v[y] = x0 / m_pf_d[y];
    v[y + 1] = x1 / m_pf_d[y + 1];
  }
  for (; y < m; ++y) {
    double x = v[y];
    const double* p = m_pf_p.row(y).data();
    const double* b = m_pf_beta.row(y).data();
    for (Index o = 0; o < n; ++o) {
      x -= p[o] * s[o];
      s[o] += b[o] * x;
    }
    v[y] = x / m_pf_d[y];
  }
  s.setZero();
  y = m - 1;
  for (; y >= 1; y -= 2) {
    double x0 = v[y], x1 = v[y - 1];
    const double *p0 = m_pf_p.row(y).data(), *b0 = m_pf_beta.row(y).data();
    const double *p1 = m_pf_p.row(y - 1).data(), *b1 = m_pf_beta.row(y - 1).data();
    for (Index o = n - 1; o >= 0; --o) {
      double so = s[o];
      x0 -= b0[o] * so;
      so += p0[o] * x0;
      x1 -= b1[o] * so;
      s[o] = so + p1[o] * x1;
    }
    v[y] = x0;
    v[y - 1] = x1;
  }
  for (; y >= 0; --y) {
    double x = v[y];
    const double* p = m_pf_p.row(y).data();
    const double* b = m_pf_beta.row(y).data();
    for (Index o = n - 1; o >= 0; --o) {
      x -= b[o] * s[o];
      s[o] += p[o] * x;
    }
    v[y] = x;
  }
  if (m_bias) v.head(k) -= m_pf_xbar.cwiseProduct(v.tail(k));
}

/// Whether the product form (factorize_product()) is cheaper per iteration than the dense
/// factorization of order m (factorize_dense()), by a cost model: the product form's factors cost
/// \f$m n^2\f$ and each of its ~40 solves per iteration (directions, correctors, refinement) a
/// chain of 2 m n dependent multiply-adds, latency-bound (weight 4); the dense factorization
/// \f$m^2 n / 2 + m^3 / 3\f$ at BLAS-3 speed (weight 1/2) and each solve \f$m^2\f$. Measured with
/// unbiasedness rows: at k = 214, grid 51 (m = 428) the product form saves 2-5 dense
/// factorizations, 30% of the solve; at k = 52, grid 52 (m = 104) it cost 10% more than the
/// dense path (eps 4), as the model says.
template <typename Deferred>
inline bool BasicStaircaseBarrier<Deferred>::product_pays() const {
  const double m = double(m_m), n = double(m_n), solves = 40;
  return m * n * n + solves * 4 * 2 * m * n < 0.5 * (m * m * n / 2 + m * m * m / 3) + solves * m * m;
}

/// With unbiasedness rows, the factorization \f$[E_1, E_2; E_2, E_3] = L_0 \mathrm{diag}(E_1, V) L_0^T\f$
/// of every label's 2 x 2 block (factorize_product()): \f$\bar x_y = E_2 / E_1\f$ and
/// \f$V_y = \sum_o D^{-1}_{y,o} (x_o - \bar x_y)^2\f$ (+ \f$1 / H_z\f$ with a bias bound), the
/// weighted variance summed directly (\f$E_3 - E_2^2 / E_1\f$ cancels where one output carries
/// the label's weight). O(k n).
template <typename Deferred>
inline void BasicStaircaseBarrier<Deferred>::block_schur() {
  const Index k = m_k, n = m_n;
  m_pf_xbar = m_E2.cwiseQuotient(m_E1);
  m_pf_V.resize(k);
  for (Index y = 0; y < k; ++y) {
    double v = 0;
    for (Index o = 0; o < n; ++o) {
      const double dx = m_x[o] - m_pf_xbar[y];
      v += m_Dinv(y, o) * dx * dx;
    }
    m_pf_V[y] = v;
  }
  if (m_bounded) m_pf_V += m_Hz.cwiseInverse();
}

/// out = Dg^{-1} in (columnwise; Dg the per-label 2 x 2 block part of the normal matrix).
template <typename Deferred>
inline void BasicStaircaseBarrier<Deferred>::apply_Dg_inverse(const Eigen::MatrixXd& in, Eigen::MatrixXd& out) const {
  const Index k = m_k;
  out.resize(in.rows(), in.cols());
  if (!m_bias) {
    out = m_Dg11.asDiagonal() * in;
    return;
  }
  out.topRows(k) = m_Dg11.asDiagonal() * in.topRows(k) + m_Dg12.asDiagonal() * in.bottomRows(k);
  out.bottomRows(k) = m_Dg12.asDiagonal() * in.topRows(k) + m_Dg22.asDiagonal() * in.bottomRows(k);
}

/// S v exactly (block part plus F F^T).
template <typename Deferred>
inline Eigen::VectorXd BasicStaircaseBarrier<Deferred>::apply_S(const Eigen::VectorXd& v) const {
  const Index k = m_k;
  Eigen::VectorXd out = m_F * (m_F.transpose() * v);
  out.head(k) += m_E1.cwiseProduct(v.head(k));
  if (m_bias) {
    out.head(k) += m_E2.cwiseProduct(v.tail(k));
    out.tail(k) += m_E2.cwiseProduct(v.head(k)) + m_E3.cwiseProduct(v.tail(k));
  }
  return out;
}

/// Solves S x = r: Woodbury with iterative refinement against S itself; if that does not
/// reach roundoff level (the per-label blocks are nearly singular near the optimum), the
/// dense factorization is used from then on.
template <typename Deferred>
inline Eigen::VectorXd BasicStaircaseBarrier<Deferred>::solve_S(const Eigen::VectorXd& r) {
  const double rn = std::max(r.cwiseAbs().maxCoeff(), 1e-300);
  if (m_woodbury) {
    auto once = [&](const Eigen::VectorXd& b) {
      Eigen::MatrixXd Db;
      apply_Dg_inverse(b, Db);
      const Eigen::VectorXd t = m_small.solve(m_GF.transpose() * b);
      return Eigen::VectorXd(Db.col(0) - m_GF * t);
    };
    Eigen::VectorXd x = once(r);
    for (int pass = 0; pass < 3; ++pass) {
      const Eigen::VectorXd res = r - apply_S(x);
      const double e = res.cwiseAbs().maxCoeff();
      if (e <= 1e-12 * rn && x.allFinite()) return x;
      x += once(res);
    }
    if ((r - apply_S(x)).cwiseAbs().maxCoeff() <= 1e-10 * rn && x.allFinite()) return x;
    m_woodbury = false;
    m_woodbury_failed = true;
    m_product = !m_bias || product_pays();  // the stable product form from now on (if it pays)
  }
  if (m_product && (m_product_ready || (!m_dense_ready && factorize_product()))) {
    // Accepted at a small componentwise backward error (Oettli and Prager 1964):
    // |r - S x|_i <= tol (|r| + |S| |x|)_i, |S| |x| = |Dg| |x| + |F| (|F|^T |x|) in O(m n). Near
    // the optimum the diagonal spans 30 orders of magnitude while r is at roundoff, so a
    // residual relative to r alone cannot be met by any method (nor is it by the dense path).
    const Eigen::MatrixXd absF = m_F.cwiseAbs();
    const auto backward = [&](const Eigen::VectorXd& res, const Eigen::VectorXd& x) {
      if (!x.allFinite()) return std::numeric_limits<double>::infinity();
      const Eigen::VectorXd ax = x.cwiseAbs();
      Eigen::VectorXd scale = r.cwiseAbs() + absF * (absF.transpose() * ax);
      scale.head(m_k) += m_E1.cwiseProduct(ax.head(m_k));
      if (m_bias) {
        const Eigen::VectorXd aE2 = m_E2.cwiseAbs();
        scale.head(m_k) += aE2.cwiseProduct(ax.tail(m_k));
        scale.tail(m_k) += aE2.cwiseProduct(ax.head(m_k)) + m_E3.cwiseProduct(ax.tail(m_k));
      }
      double worst = 0;
      for (Index i = 0; i < res.size(); ++i)
        if (res[i] != 0) worst = std::max(worst, std::abs(res[i]) / std::max(scale[i], 1e-300));
      return worst;
    };
    Eigen::VectorXd x = r;
    solve_product(x);
    double err = 0;
    for (int pass = 0; pass < 3; ++pass) {
      Eigen::VectorXd res = r - apply_S(x);
      err = backward(res, x);
      if (err <= 1e-15) break;
      solve_product(res);
      x += res;
      if (pass == 2) err = backward(r - apply_S(x), x);
    }
    if (err <= 1e-12) return x;
    m_product = m_product_ready = false;  // the dense factorization from now on
  }
  if (!m_dense_ready) factorize_dense();
  Eigen::VectorXd x = dense_solve(r);
  for (int pass = 0; pass < 2; ++pass) {
    const Eigen::VectorXd res = r - apply_S(x);
    if (res.cwiseAbs().maxCoeff() <= 1e-13 * rn) break;
    x += dense_solve(res);
  }
  return x;
}

/// Complementarity rhs: target - s lambda (- ds_aff dlambda_aff for Mehrotra's corrector).
template <typename Deferred>
inline void BasicStaircaseBarrier<Deferred>::complementarity_rhs(double target, const Direction* aff,
                                                                 Direction& d) const {
  d.rT = (target - m_T.array() * m_lT.array()).matrix();
  d.rU = (target - m_U.array() * m_lU.array()).matrix();
  d.rG = (target - m_G.array() * m_lG.array()).matrix();
  if (m_bounded) {
    d.rz = (target - m_z.array() * m_lz.array()).matrix();
    d.rzb = (target - m_zb.array() * m_lzb.array()).matrix();
  }
  if (aff) {
    d.rT -= aff->dT.cwiseProduct(aff->dlT);
    d.rU -= aff->dU.cwiseProduct(aff->dlU);
    const Eigen::MatrixXd& dG = aff->dG;
    d.rG -= dG.cwiseProduct(aff->dlG);
    if (m_bounded) {
      d.rz -= aff->dz.cwiseProduct(aff->dlz);
      d.rzb += aff->dz.cwiseProduct(aff->dlzb);  // d(zb) = -dz
    }
  }
}

/// Gondzio's corrector rhs from direction d taken with trial steps; false if nothing to correct.
template <typename Deferred>
inline bool BasicStaircaseBarrier<Deferred>::gondzio_rhs(const Direction& d, double ap, double ad, double target,
                                                         Direction& g) const {
  const double lo = 0.1 * target, hi = 10 * target;
  auto correction = [&](double v) { return v < lo ? lo - v : (v > hi ? std::max(hi - v, -hi) : 0.0); };
  g.rT = d.rT;
  g.rz = d.rz;
  g.rzb = d.rzb;
  g.rU = d.rU;
  g.rG = d.rG;
  bool any = false;
  auto fix = [&](const auto& s, const auto& ds, const auto& l, const auto& dl, auto& r) {
    for (Index j = 0; j < r.cols(); ++j)
      for (Index i = 0; i < r.rows(); ++i) {
        const double v = (s(i, j) + ap * ds(i, j)) * (l(i, j) + ad * dl(i, j));
        const double c = correction(v);
        if (c != 0) any = true;
        r(i, j) += c;
      }
  };
  fix(m_T, d.dT, m_lT, d.dlT, g.rT);
  fix(m_U, d.dU, m_lU, d.dlU, g.rU);
  fix(m_G, d.dG, m_lG, d.dlG, g.rG);
  if (m_bounded) {
    fix(m_z, d.dz, m_lz, d.dlz, g.rz);
    const Eigen::VectorXd mdz = -d.dz;
    fix(m_zb, mdz, m_lzb, d.dlzb, g.rzb);
  }
  return any;
}

/// Solves H [a; w] = [rho; r] for every output (arrow matrices), in place: rhoT -> dT, R -> dU.
template <typename Deferred>
inline void BasicStaircaseBarrier<Deferred>::arrow_solve(Eigen::VectorXd& rhoT, Eigen::MatrixXd& R) const {
  for (Index o = 0; o < m_n; ++o) {
    const double a = (rhoT[o] + m_w * m_q.col(o).dot(R.col(o))) / m_gamma[o];
    R.col(o) = R.col(o).cwiseProduct(m_Dinv.col(o)) + (m_w * a) * m_q.col(o);
    rhoT[o] = a;
  }
}

/// The Newton direction for the complementarity rhs in d (rT, rU, rG, rz, rzb).
///
/// Written as passes over the outputs, each touching one column of every k x n array once
/// (the whole-matrix expressions this replaced made a dozen k x n temporaries per call, which
/// cost more than the factorization on k = 52, n = 416).
template <typename Deferred>
inline void BasicStaircaseBarrier<Deferred>::direction(Direction& d) {
  const Index k = m_k, n = m_n;
  // Pass 1, per output: g = r_d - G^T rho (rho_i = r_i / s_i), x0 = -H^{-1} g by the arrow
  // solve, kept in d.dT and d.dU, and A x0.
  d.dU.resize(k, n);
  d.dT.resize(n);
  Eigen::VectorXd Ax0 = Eigen::VectorXd::Zero(m_m);
  double sum_T = 0, sum_xT = 0;
  for (Index o = 0; o < n; ++o) {
    auto x = d.dU.col(o);
    x = d.rG.col(o).cwiseQuotient(m_G.col(o));  // rho_G
    const double sum_rho_G = x.sum();
    x = (d.rU.col(o).cwiseQuotient(m_U.col(o)) - x) - m_rdU.col(o);  // -g_U
    const double minus_gT = d.rT[o] / m_T[o] + m_w * sum_rho_G - m_rdT[o];
    const double a = (minus_gT + m_w * m_q.col(o).dot(x)) / m_gamma[o];
    x = x.cwiseProduct(m_Dinv.col(o)) + (m_w * a) * m_q.col(o);
    d.dT[o] = a;
    Ax0.head(k) += x;
    sum_T += a;
    if (m_bias) {
      Ax0.tail(k) += m_x[o] * x;
      sum_xT += m_x[o] * a;
    }
  }
  Ax0.head(k).array() += m_low * sum_T;
  Eigen::VectorXd x0z;
  if (m_bias) Ax0.tail(k).array() += m_low * sum_xT;
  if (m_bounded) {
    x0z = (d.rz.cwiseQuotient(m_z) - d.rzb.cwiseQuotient(m_zb) - m_rdz).cwiseQuotient(m_Hz);
    Ax0.tail(k) += x0z;
  }
  d.dy = solve_S(m_rp - Ax0);
  // Pass 2: dx = H^{-1} A^T dy + x0 (A^T dy at output o is pi_dy + x_o sigma_dy), and A dx.
  Eigen::VectorXd r(k), Adx = Eigen::VectorXd::Zero(m_m);
  sum_T = sum_xT = 0;
  for (Index o = 0; o < n; ++o) {
    r = d.dy.head(k);
    if (m_bias) r += m_x[o] * d.dy.tail(k);
    const double a = (m_low * r.sum() + m_w * m_q.col(o).dot(r)) / m_gamma[o];
    auto x = d.dU.col(o);
    x += r.cwiseProduct(m_Dinv.col(o)) + (m_w * a) * m_q.col(o);
    d.dT[o] += a;
    Adx.head(k) += x;
    sum_T += d.dT[o];
    if (m_bias) {
      Adx.tail(k) += m_x[o] * x;
      sum_xT += m_x[o] * d.dT[o];
    }
  }
  Adx.head(k).array() += m_low * sum_T;
  if (m_bias) Adx.tail(k).array() += m_low * sum_xT;
  if (m_bounded) {
    d.dz = d.dy.tail(k).cwiseQuotient(m_Hz) + x0z;
    Adx.tail(k) += d.dz;
  }
  auto lift = [&](const Eigen::VectorXd& dy, Eigen::VectorXd& dT, Eigen::MatrixXd& dU) {
    dU = dy.head(k).replicate(1, m_n);
    if (m_bias) dU.noalias() += dy.tail(k) * m_x.transpose();
    dT = m_low * dU.colwise().sum().transpose();
    arrow_solve(dT, dU);
  };
  // Iterative refinement of the primal rows A dx = r_p: near the optimum the barrier
  // Hessian spans 30 orders of magnitude and the eliminations above lose digits, so that a
  // full step can leave the rows violated by 1e-7 where they were met to 1e-13 (near-uniform
  // prior with zero-probability labels, eps 3). One correction dy' = S^{-1} (r_p - A dx),
  // dx' = H^{-1} A^T dy' restores them (the dual and complementarity parts are changed only
  // at the level of that error).
  // Only an error that matters is corrected: above 1% of the current row residual (a full
  // step then leaves at least that much) and above roundoff.
  const double wanted = std::max(1e-14 * m_bnorm, 1e-2 * m_rp.cwiseAbs().maxCoeff());
  for (int pass = 0; pass < 2; ++pass) {
    if (pass > 0) apply_A(d.dT, d.dU, m_bounded ? d.dz : Eigen::VectorXd::Zero(k), Adx);
    const Eigen::VectorXd err = m_rp - Adx;
    if (err.cwiseAbs().maxCoeff() <= wanted || !err.allFinite()) break;
    const Eigen::VectorXd dy2 = solve_S(err);
    Eigen::VectorXd dT2;
    Eigen::MatrixXd dU2;
    lift(dy2, dT2, dU2);
    d.dy += dy2;
    d.dT += dT2;
    d.dU += dU2;
    if (m_bounded) d.dz += dy2.tail(k).cwiseQuotient(m_Hz);
  }
  // Pass 3: dlambda_i = (r_i - lambda_i ds_i) / s_i, and the slack's step dG = (1 - low) dT - dU.
  d.dG.resize(k, n);
  d.dlU.resize(k, n);
  d.dlG.resize(k, n);
  for (Index o = 0; o < n; ++o) {
    d.dG.col(o) = Eigen::VectorXd::Constant(k, m_w * d.dT[o]) - d.dU.col(o);
    d.dlU.col(o) = (d.rU.col(o) - m_lU.col(o).cwiseProduct(d.dU.col(o))).cwiseQuotient(m_U.col(o));
    d.dlG.col(o) = (d.rG.col(o) - m_lG.col(o).cwiseProduct(d.dG.col(o))).cwiseQuotient(m_G.col(o));
  }
  d.dlT = (d.rT - m_lT.cwiseProduct(d.dT)).cwiseQuotient(m_T);
  if (m_bounded) {
    d.dlz = (d.rz - m_lz.cwiseProduct(d.dz)).cwiseQuotient(m_z);
    d.dlzb = (d.rzb + m_lzb.cwiseProduct(d.dz)).cwiseQuotient(m_zb);
  }
}

}  // namespace labeldp::detail
