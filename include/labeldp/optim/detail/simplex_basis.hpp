/// \file
/// RevisedSimplex's basis handling: the slack/artificial starting basis, solves with the
/// factorization and iterative refinement, residual-checked refactorization, a caller's inverse
/// (crash basis), driving phase 1's leftover artificials out of the basis, and the final primal
/// and dual solution. Member functions of the class in optim/simplex.hpp.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "labeldp/optim/simplex.hpp"

namespace labeldp::optim {

template <typename Deferred>
inline void BasicRevisedSimplex<Deferred>::set_initial_basis() {
  const Index m = num_rows();
  m_basis.assign(std::size_t(m), -1);
  m_position.assign(std::size_t(num_variables()), -1);
  // A slack whose sign matches b's can carry the row; otherwise the artificial does.
  for (std::size_t s = 0; s < m_slack_row.size(); ++s) {
    const Index i = m_slack_row[s];
    if (m_lp.b[i] == 0 || (m_lp.b[i] > 0) == (m_slack_sign[s] > 0)) m_basis[std::size_t(i)] = m + Index(s);
  }
  for (Index i = 0; i < m; ++i)
    if (m_basis[std::size_t(i)] < 0) m_basis[std::size_t(i)] = i;
  for (Index i = 0; i < m; ++i) m_position[std::size_t(m_basis[std::size_t(i)])] = i;
}

// The basis matrix (column i = internal column m_basis[i]).
template <typename Deferred>
inline const Eigen::MatrixXd& BasicRevisedSimplex<Deferred>::assemble_basis() const {
  const Index m = num_rows();
  Eigen::MatrixXd& B = m_basis_matrix;
  B.resize(m, m);
  for (Index i = 0; i < m; ++i) {
    const Index v = m_basis[std::size_t(i)];
    if (v >= structural_offset()) {
      B.col(i) = m_lp.A.col(v - structural_offset());
    } else {
      B.col(i).setZero();
      if (is_artificial(v))
        B(v, i) = m_art_sign[v];
      else
        B(m_slack_row[std::size_t(v - m)], i) = m_slack_sign[std::size_t(v - m)];
    }
  }
  return B;
}

// Solves B x = rhs (transposed: B^T x = rhs) with the factorization and two steps of
// iterative refinement, O(m^2) each. The explicit inverse after many product-form updates
// is accurate to about 1e-12; refinement brings the residual to roundoff, which callers of
// the solution need (the mechanisms built from x renormalize rows and are audited exactly).
// Returns the final residual's infinity norm.
template <typename Deferred>
inline double BasicRevisedSimplex<Deferred>::refined_solve(const Eigen::MatrixXd& B, const Eigen::VectorXd& rhs,
                                                           bool transposed, Eigen::VectorXd& x) const {
  x = rhs;
  if (transposed)
    m_factor.btran(x);
  else
    m_factor.ftran(x);
  Eigen::VectorXd r(rhs.size());
  double norm = 0;
  // Refinement stops once the residual is at the roundoff of forming it.
  const double floor = 1e-15 * std::max(1.0, rhs.size() ? rhs.cwiseAbs().maxCoeff() : 0.0);
  for (int step = 0; step <= 2; ++step) {
    if (transposed)
      r.noalias() = rhs - B.transpose() * x;
    else
      r.noalias() = rhs - B * x;
    norm = r.size() ? r.cwiseAbs().maxCoeff() : 0.0;
    if (step == 2 || !(norm > floor) || !std::isfinite(norm)) break;
    if (transposed)
      m_factor.btran(r);
    else
      m_factor.ftran(r);
    x += r;
  }
  return norm;
}

// Recomputes x_B from b and the duals from c_B with the current factorization, and
// refactorizes only when a residual (after refinement) exceeds kResidualTolerance relative,
// or when the updates reach kMaxUpdatesPerInterval refactorization intervals: O(m^2) instead
// of O(m^3) for a refactorization.
template <typename Deferred>
inline bool BasicRevisedSimplex<Deferred>::check_or_refactor() {
  const Index m = num_rows();
  if (m_factor.num_updates() >= kMaxUpdatesPerInterval * m_options.refactorization_interval)
    return refactor_and_recompute();
  const Eigen::MatrixXd& B = assemble_basis();
  Eigen::VectorXd xb, y, cb(m);
  for (Index i = 0; i < m; ++i) cb[i] = cost(m_basis[std::size_t(i)], 2);
  const double primal_residual = refined_solve(B, m_lp.b, false, xb);
  const double dual_residual = refined_solve(B, cb, true, y);
  const double a_scale = std::max(1.0, m_max_abs_entry);
  const double x_scale = std::max(1.0, m ? xb.cwiseAbs().maxCoeff() : 0.0);
  const double y_scale = std::max(1.0, m ? y.cwiseAbs().maxCoeff() : 0.0);
  const double c_scale = std::max(1.0, m ? cb.cwiseAbs().maxCoeff() : 0.0);
  if (xb.allFinite() && y.allFinite() &&
      primal_residual <= kResidualTolerance * std::max(m_b_scale, a_scale * x_scale) &&
      dual_residual <= kResidualTolerance * std::max(c_scale, a_scale * y_scale)) {
    m_xb = std::move(xb);
    m_checked_duals = std::move(y);
    m_checked_at = m_factor.num_updates();
    return true;
  }
  return refactor_and_recompute();
}

// Takes a caller's inverse of the current basis if it passes two probe residuals (a wrong
// inverse fails them except on a measure-zero set of errors), then x_B = B^{-1} b refined.
template <typename Deferred>
inline bool BasicRevisedSimplex<Deferred>::adopt_inverse(Eigen::MatrixXd&& inverse) {
  const Index m = num_rows();
  if (inverse.rows() != m || inverse.cols() != m || !inverse.allFinite()) return false;
  const Eigen::MatrixXd& B = assemble_basis();
  Eigen::VectorXd r(m);
  for (Index i = 0; i < m; ++i) r[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + double(i % 7) / 7.0);
  const double scale = std::max(1.0, m_max_abs_entry) * std::max(1.0, inverse.cwiseAbs().maxCoeff()) * double(m);
  const Eigen::VectorXd left = B * (inverse * r) - r, right = inverse * (B * r) - r;
  if (!(left.cwiseAbs().maxCoeff() <= kResidualTolerance * scale &&
        right.cwiseAbs().maxCoeff() <= kResidualTolerance * scale))
    return false;
  m_factor.set_inverse(std::move(inverse));  // taken over, not copied
  m_checked_at = 0;
  m_checked_duals.resize(0);
  refined_solve(B, m_lp.b, false, m_xb);
  return m_xb.allFinite();
}

template <typename Deferred>
inline bool BasicRevisedSimplex<Deferred>::refactor_and_recompute() {
  const Index m = num_rows();
  if (Index(m_basis.size()) != m) return false;
  const Eigen::MatrixXd& B = assemble_basis();
  m_checked_at = 0;
  m_checked_duals.resize(0);
  if (!m_factor.refactor(B, kSingularTolerance)) {
    // A basis gone singular (a pivot on roundoff that passed the pivot tolerance): repaired
    // as HiGHS and CLP do, and the pivots that follow make it feasible and optimal again.
    if (!repair_singular_basis(B)) return false;
    const Eigen::MatrixXd& repaired = assemble_basis();
    if (!m_factor.refactor(repaired, kSingularTolerance)) return false;
    refined_solve(repaired, m_lp.b, false, m_xb);
    return m_xb.allFinite();
  }
  refined_solve(B, m_lp.b, false, m_xb);
  return m_xb.allFinite();
}

// A numerically singular basis: a rank-revealing LU (full pivoting, P B Q = L U, pivots below
// kSingularTolerance times the largest counted as zero) names the dependent columns (Q's last
// m - rank) and the rows no independent column covers (P's last m - rank). Each dependent
// column leaves for the logical column of one uncovered row, its slack or else its artificial:
// in the rows ordered covered-first and the columns independent-first the new basis is block
// lower triangular, [B11 0; B21 I] with B11 nonsingular, so it is nonsingular. x_B may now be
// infeasible (a basic artificial off zero, a structural below zero); the caller's pivots repair
// that (solve()'s feasibility repair after phase 2). `B` is the current basis matrix (assemble_basis()).
// False when no logical column is free.
template <typename Deferred>
inline bool BasicRevisedSimplex<Deferred>::repair_singular_basis(const Eigen::MatrixXd& B) {
  const Index m = num_rows();
  Eigen::FullPivLU<Eigen::MatrixXd> lu(B);
  lu.setThreshold(kSingularTolerance);
  const Index rank = lu.rank();
  if (rank >= m || rank == 0) return false;
  const auto& q = lu.permutationQ().indices();
  const auto& p = lu.permutationP().indices();
  // (P B) row i is B's row r with p[r] == i.
  std::vector<Index> row_at(std::size_t(m), -1);
  for (Index r = 0; r < m; ++r) row_at[std::size_t(p[r])] = r;
  std::vector<Index> slack_of_row(std::size_t(m), -1);
  for (std::size_t s = 0; s < m_slack_row.size(); ++s) slack_of_row[std::size_t(m_slack_row[s])] = m + Index(s);
  for (Index k = rank; k < m; ++k) {
    const Index pos = q[k], row = row_at[std::size_t(k)];
    Index logical = slack_of_row[std::size_t(row)];
    if (logical < 0 || m_position[std::size_t(logical)] >= 0) logical = row;  // the artificial
    if (m_position[std::size_t(logical)] >= 0) return false;
    m_position[std::size_t(m_basis[std::size_t(pos)])] = -1;
    m_basis[std::size_t(pos)] = logical;
    m_position[std::size_t(logical)] = pos;
  }
  ++m_basis_repairs;
  return true;
}

// After phase 1 some artificials may remain basic at zero: pivot each out on the largest
// entry of its row of B^{-1} A (a degenerate pivot). Rows where no such entry exists are
// redundant; their artificial stays basic at zero and blocks any move (see iterate()).
template <typename Deferred>
inline bool BasicRevisedSimplex<Deferred>::drive_out_artificials() {
  const Index m = num_rows();
  const Index nv = num_variables();
  Eigen::VectorXd rho(m), col, w;
  for (Index r = 0; r < m; ++r) {
    if (!is_artificial(m_basis[std::size_t(r)])) continue;
    rho.setZero();
    rho[r] = 1;
    m_factor.btran(rho);
    Index best_v = -1;
    double best_abs = 1e-7;
    for (Index v = m; v < nv; ++v) {
      if (m_position[std::size_t(v)] >= 0) continue;
      double alpha;
      if (is_slack(v)) {
        const std::size_t s = std::size_t(v - m);
        alpha = m_slack_sign[s] * rho[m_slack_row[s]];
      } else {
        alpha = m_lp.A.col(v - structural_offset()).dot(rho);
      }
      if (std::abs(alpha) > best_abs) {
        best_abs = std::abs(alpha);
        best_v = v;
      }
    }
    if (best_v < 0) continue;
    load_column(best_v, w);
    m_factor.ftran(w);
    const double theta = m_xb[r] / w[r];
    m_xb.noalias() -= theta * w;
    m_xb[r] = theta;
    m_position[std::size_t(m_basis[std::size_t(r)])] = -1;
    m_basis[std::size_t(r)] = best_v;
    m_position[std::size_t(best_v)] = r;
    m_factor.update(r, w);
    if (m_factor.num_updates() >= m_options.refactorization_interval && !refactor_and_recompute()) return false;
  }
  return refactor_and_recompute();
}

// The largest violation of x >= 0 by a basic variable, or of x = 0 by a basic artificial.
template <typename Deferred>
inline double BasicRevisedSimplex<Deferred>::primal_infeasibility() const {
  double worst = 0;
  for (Index i = 0; i < num_rows(); ++i)
    worst = std::max(worst, is_artificial(m_basis[std::size_t(i)]) ? std::abs(m_xb[i]) : -m_xb[i]);
  return worst;
}

// Dual simplex pivots (Lemke 1954) from a dual feasible basis whose x_B violates its bounds:
// the most violated basic variable leaves (at zero), and the entering one is chosen by the dual
// ratio test (Harris' two passes: the largest step within the dual tolerance, then the largest
// pivot), so the reduced costs stay non-negative. Basic artificials must be zero, from either
// side; nonbasic ones never enter. True when no violation beyond the feasibility tolerance is
// left within m pivots.
template <typename Deferred>
inline bool BasicRevisedSimplex<Deferred>::restore_primal_feasibility(SimplexResult& result) {
  const Index m = num_rows(), off = structural_offset(), nv = num_variables();
  const double feas_tol = m_options.primal_feasibility_tolerance * m_b_scale;
  const double dual_tol =
      m_options.dual_feasibility_tolerance * std::max(1.0, m_lp.c.size() ? m_lp.c.cwiseAbs().maxCoeff() : 0.0);
  Eigen::VectorXd y(m), rho(m), w(m), alpha(nv), d(nv), alpha_struct;
  for (Index pivot = 0; pivot < m; ++pivot) {
    Index r = -1;
    double worst = feas_tol;
    for (Index i = 0; i < m; ++i) {
      const double x = m_xb[i], violation = is_artificial(m_basis[std::size_t(i)]) ? std::abs(x) : -x;
      if (violation > worst) {
        worst = violation;
        r = i;
      }
    }
    if (r < 0) return true;
    // x_r moves by -t w_r when the entering variable rises to t: it must rise (w_r < 0) from
    // below zero, or fall (w_r > 0) from above (a basic artificial).
    const double dir = m_xb[r] < 0 ? -1.0 : 1.0;
    for (Index i = 0; i < m; ++i) y[i] = cost(m_basis[std::size_t(i)], 2);
    m_factor.btran(y);
    rho = m_factor.inverse_row(r).transpose();
    alpha_struct.noalias() = m_lp.A.transpose() * rho;
    const Eigen::VectorXd d_struct = m_lp.c - m_lp.A.transpose() * y;
    double largest = 0;
    for (Index v = m; v < nv; ++v) {
      alpha[v] = 0;
      if (m_position[std::size_t(v)] >= 0) continue;
      if (is_slack(v)) {
        const std::size_t s = std::size_t(v - m);
        alpha[v] = dir * m_slack_sign[s] * rho[m_slack_row[s]];
        d[v] = -m_slack_sign[s] * y[m_slack_row[s]];
      } else {
        alpha[v] = dir * alpha_struct[v - off];
        d[v] = d_struct[v - off];
      }
      largest = std::max(largest, alpha[v]);
    }
    const double piv = m_options.pivot_tolerance * std::max(1.0, largest);
    double bound = std::numeric_limits<double>::infinity();
    for (Index v = m; v < nv; ++v)
      if (alpha[v] > piv) bound = std::min(bound, (std::max(d[v], 0.0) + dual_tol) / alpha[v]);
    Index entering = -1;
    for (Index v = m; v < nv; ++v)
      if (alpha[v] > piv && std::max(d[v], 0.0) / alpha[v] <= bound && (entering < 0 || alpha[v] > alpha[entering]))
        entering = v;
    if (entering < 0) return false;  // no variable can repair the row: infeasible to roundoff
    load_column(entering, w);
    m_factor.ftran(w);
    if (!w.allFinite() || !(dir * w[r] > 0)) return false;
    const double t = m_xb[r] / w[r];
    m_xb.noalias() -= t * w;
    m_xb[r] = t;
    m_position[std::size_t(m_basis[std::size_t(r)])] = -1;
    m_basis[std::size_t(r)] = entering;
    m_position[std::size_t(entering)] = r;
    m_factor.update(r, w);
    ++result.iterations;
  }
  return primal_infeasibility() <= feas_tol;
}

template <typename Deferred>
inline SimplexResult BasicRevisedSimplex<Deferred>::finish(SolveStatus status, SimplexResult& result) {
  const Index m = num_rows(), n = num_columns(), off = structural_offset();
  // x_B is recomputed from b (dropping the drift of the pivots' updates), with a fresh
  // factorization only when the residuals ask for one (check_or_refactor()).
  // (solve() has just checked an optimum: no pivot since, the check stands.)
  const bool checked = m_checked_duals.size() == m && m_checked_at == m_factor.num_updates();
  if (status == SolveStatus::Optimal && !checked && !check_or_refactor()) status = SolveStatus::NumericalIssue;
  // Never Optimal for a basis whose recomputed x_B is infeasible beyond roundoff (solve()
  // repairs such a basis first; this is what its repair could not fix).
  if (status == SolveStatus::Optimal && primal_infeasibility() > infeasibility_limit())
    status = SolveStatus::NumericalIssue;
  result.basis_repairs += m_basis_repairs;
  m_basis_repairs = 0;
  result.status = status;
  result.x = Eigen::VectorXd::Zero(n);
  result.duals = Eigen::VectorXd::Zero(m);
  if (Index(m_basis.size()) == m && m_xb.size() == m) {
    for (Index i = 0; i < m; ++i) {
      const Index v = m_basis[std::size_t(i)];
      if (v >= off) result.x[v - off] = std::max(m_xb[i], 0.0);
    }
    if (status == SolveStatus::Optimal && m_checked_duals.size() == m && m_checked_at == m_factor.num_updates()) {
      result.duals = m_checked_duals;  // refined by the check that just passed
    } else {
      Eigen::VectorXd cb(m);
      for (Index i = 0; i < m; ++i) cb[i] = cost(m_basis[std::size_t(i)], 2);
      const Eigen::MatrixXd& B = assemble_basis();
      refined_solve(B, cb, true, result.duals);
    }
  }
  if (m_options.compute_reduced_costs) result.reduced_costs = m_lp.c - m_lp.A.transpose() * result.duals;
  result.objective = m_lp.c.dot(result.x);
  return result;
}

}  // namespace labeldp::optim
