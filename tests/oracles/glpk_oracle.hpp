/// \file
/// GLPK as an independent oracle for the tests and benchmarks (never used by include/).
/// solve_with_glpk() solves the same LinearProgram as labeldp::optim::RevisedSimplex with
/// GLPK's primal simplex and maps its outcome onto labeldp::optim::SolveStatus.
#pragma once

#include <glpk.h>

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "labeldp/optim/simplex.hpp"

namespace labeldp::test {

/// |a - b| <= rel * max(1, |a|, |b|): the comparison of objectives used against the oracles.
inline bool close_relative(double a, double b, double rel) {
  return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)});
}

/// GLPK's answer.
struct GlpkResult {
  labeldp::optim::SolveStatus status = labeldp::optim::SolveStatus::NumericalIssue;
  double objective = std::numeric_limits<double>::quiet_NaN();  ///< c'x (valid when Optimal)
  Eigen::VectorXd x;                                            ///< primal values (n)
  Eigen::VectorXd duals;  ///< row duals (m), GLPK's sign convention = reduced costs c - A'y
  int glpk_return = 0;    ///< return code of glp_simplex / glp_exact (0 = solver finished)
};

/// The LP in sparse form (for instances too large for a dense A, e.g. the explicit
/// optimal-mechanism LP with its k(k-1)|O| pairwise privacy rows).
struct SparseLinearProgram {
  Eigen::SparseMatrix<double, Eigen::ColMajor> A;  ///< m x n
  Eigen::VectorXd b;                               ///< m
  std::vector<labeldp::optim::RowType> row_types;  ///< m
  Eigen::VectorXd c;                               ///< n
};

/// How GLPK should solve.
struct GlpkOptions {
  bool exact = false;             ///< glp_exact (rational arithmetic) after the floating simplex
  bool presolve = false;          ///< GLPK's LP presolver (statuses are less specific with it)
  double time_limit_seconds = 0;  ///< 0: no limit
  /// GLPK's primal feasibility and reduced-cost tolerances (tol_bnd, tol_dj); 0: GLPK's default
  /// 1e-7, too coarse to decide objectives to 1e-9 when coefficients reach e^12.
  double tolerance = 0;
  /// GLPK's dual simplex (GLP_DUALP: dual, then primal if it fails) instead of its primal simplex:
  /// much faster on the wide LPs whose columns are all (label, output) pairs.
  bool dual = false;
};

namespace detail {

inline void glpk_set_rows(glp_prob* P, const Eigen::VectorXd& b, const std::vector<labeldp::optim::RowType>& types) {
  const int m = int(b.size());
  if (m > 0) glp_add_rows(P, m);
  for (int i = 0; i < m; ++i) {
    switch (types[std::size_t(i)]) {
      case labeldp::optim::RowType::Equal:
        glp_set_row_bnds(P, i + 1, GLP_FX, b[i], b[i]);
        break;
      case labeldp::optim::RowType::LessEqual:
        glp_set_row_bnds(P, i + 1, GLP_UP, 0.0, b[i]);
        break;
      case labeldp::optim::RowType::GreaterEqual:
        glp_set_row_bnds(P, i + 1, GLP_LO, b[i], 0.0);
        break;
    }
  }
}

inline GlpkResult glpk_run(glp_prob* P, int m, int n, const GlpkOptions& options) {
  GlpkResult r;
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = options.presolve ? GLP_ON : GLP_OFF;
  if (options.dual) parm.meth = GLP_DUALP;
  if (options.time_limit_seconds > 0) parm.tm_lim = int(options.time_limit_seconds * 1000);
  if (options.tolerance > 0) parm.tol_bnd = parm.tol_dj = options.tolerance;
  r.glpk_return = glp_simplex(P, &parm);
  if (options.exact) {
    // After a failed floating-point solve the basis may be singular: restart the exact simplex
    // from the all-slack basis.
    if (r.glpk_return != 0) glp_std_basis(P);
    r.glpk_return = glp_exact(P, &parm);
  }
  const int st = glp_get_status(P);
  using labeldp::optim::SolveStatus;
  if (r.glpk_return == GLP_ETMLIM || r.glpk_return == GLP_EITLIM) {
    r.status = SolveStatus::IterationLimit;
  } else if (st == GLP_OPT) {
    r.status = SolveStatus::Optimal;
  } else if (st == GLP_NOFEAS || (options.presolve && r.glpk_return == GLP_ENOPFS)) {
    r.status = SolveStatus::Infeasible;
  } else if (st == GLP_UNBND || (options.presolve && r.glpk_return == GLP_ENODFS)) {
    r.status = SolveStatus::Unbounded;
  } else {
    r.status = SolveStatus::NumericalIssue;
  }
  r.x.resize(n);
  for (int j = 0; j < n; ++j) r.x[j] = glp_get_col_prim(P, j + 1);
  r.duals.resize(m);
  for (int i = 0; i < m; ++i) r.duals[i] = glp_get_row_dual(P, i + 1);
  r.objective = glp_get_obj_val(P);
  return r;
}

}  // namespace detail

/// Solves the sparse LP with GLPK's simplex (no presolve, messages off).
inline GlpkResult solve_with_glpk(const SparseLinearProgram& lp, const GlpkOptions& options = {}) {
  glp_term_out(GLP_OFF);
  glp_prob* P = glp_create_prob();
  glp_set_obj_dir(P, GLP_MIN);
  const int m = int(lp.A.rows()), n = int(lp.A.cols());
  detail::glpk_set_rows(P, lp.b, lp.row_types);
  if (n > 0) glp_add_cols(P, n);
  for (int j = 0; j < n; ++j) {
    glp_set_col_bnds(P, j + 1, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(P, j + 1, lp.c[j]);
  }
  std::vector<int> ia(1), ja(1);
  std::vector<double> ar(1);
  ia.reserve(std::size_t(lp.A.nonZeros()) + 1);
  ja.reserve(std::size_t(lp.A.nonZeros()) + 1);
  ar.reserve(std::size_t(lp.A.nonZeros()) + 1);
  for (int j = 0; j < n; ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(lp.A, j); it; ++it)
      if (it.value() != 0) {
        ia.push_back(int(it.row()) + 1);
        ja.push_back(j + 1);
        ar.push_back(it.value());
      }
  glp_load_matrix(P, int(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  GlpkResult r = detail::glpk_run(P, m, n, options);
  glp_delete_prob(P);
  return r;
}

/// Solves the dense LP with GLPK's simplex (no presolve, messages off).
inline GlpkResult solve_with_glpk(const labeldp::optim::LinearProgram& lp, const GlpkOptions& options) {
  SparseLinearProgram s;
  s.A = lp.A.sparseView(0.0, 0.0);
  s.b = lp.b;
  s.row_types = lp.row_types;
  s.c = lp.c;
  return solve_with_glpk(s, options);
}

/// Solves the dense LP with GLPK's simplex (no presolve, messages off).
inline GlpkResult solve_with_glpk(const labeldp::optim::LinearProgram& lp) {
  return solve_with_glpk(lp, GlpkOptions{});
}

/// The optimal-mechanism LP written out explicitly (Ghazi et al. 2023, LP (2)): variables
/// M[y][o] (index y * n + o) >= 0, k rows sum_o M[y][o] = 1, and k(k-1)n privacy rows
/// M[y][o] - e^eps M[y'][o] <= 0; cost p_y loss(o, y). An independent formulation of what
/// labeldp::optimal_mechanism_lp() solves by column generation.
template <typename Loss>
SparseLinearProgram explicit_mechanism_lp(const Eigen::VectorXd& values, const Eigen::VectorXd& probs, double eps,
                                          const Eigen::VectorXd& outputs, const Loss& loss) {
  const Eigen::Index k = values.size(), n = outputs.size();
  const double e = std::exp(eps);
  SparseLinearProgram lp;
  const Eigen::Index rows = k + k * (k - 1) * n;
  lp.A.resize(rows, k * n);
  lp.b = Eigen::VectorXd::Zero(rows);
  lp.row_types.assign(std::size_t(rows), labeldp::optim::RowType::LessEqual);
  lp.c.resize(k * n);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(std::size_t(k * n + 2 * k * (k - 1) * n));
  for (Eigen::Index y = 0; y < k; ++y) {
    lp.b[y] = 1;
    lp.row_types[std::size_t(y)] = labeldp::optim::RowType::Equal;
    for (Eigen::Index o = 0; o < n; ++o) {
      t.emplace_back(y, y * n + o, 1.0);
      lp.c[y * n + o] = probs[y] * loss(outputs[o], values[y]);
    }
  }
  Eigen::Index r = k;
  for (Eigen::Index o = 0; o < n; ++o)
    for (Eigen::Index y = 0; y < k; ++y)
      for (Eigen::Index z = 0; z < k; ++z) {
        if (z == y) continue;
        t.emplace_back(r, y * n + o, 1.0);
        t.emplace_back(r, z * n + o, -e);
        ++r;
      }
  lp.A.setFromTriplets(t.begin(), t.end());
  return lp;
}

/// LP (2) of Ghazi et al. (2023) in compact form: a column \f$M[\cdot][o] \ge 0\f$ is eps-DP
/// (\f$M[y][o] \le e^\varepsilon M[y'][o]\f$ for all y, y') iff some \f$l_o \ge 0\f$ has
/// \f$l_o \le M[y][o] \le e^\varepsilon l_o\f$ for every y (take \f$l_o = \min_y M[y][o]\f$). So
/// \f$M[y][o] = l_o + s[y][o]\f$ with \f$0 \le s[y][o] \le (e^\varepsilon - 1) l_o\f$: n + kn
/// variables (\f$l_o\f$ at o, \f$s[y][o]\f$ at n + y n + o), k rows \f$\sum_o M[y][o] = 1\f$ and kn
/// rows \f$s[y][o] - (e^\varepsilon - 1) l_o \le 0\f$, instead of explicit_mechanism_lp()'s
/// k(k-1)n pairwise rows. Same optimum (the tests check that on small instances).
template <typename Loss>
SparseLinearProgram compact_mechanism_lp(const Eigen::VectorXd& values, const Eigen::VectorXd& probs, double eps,
                                         const Eigen::VectorXd& outputs, const Loss& loss) {
  const Eigen::Index k = values.size(), n = outputs.size();
  const double r = std::exp(eps) - 1;  // exact given e^eps: the same LP as explicit_mechanism_lp()
  SparseLinearProgram lp;
  const Eigen::Index rows = k + k * n;
  lp.A.resize(rows, n + k * n);
  lp.b = Eigen::VectorXd::Zero(rows);
  lp.row_types.assign(std::size_t(rows), labeldp::optim::RowType::LessEqual);
  lp.c = Eigen::VectorXd::Zero(n + k * n);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(std::size_t(4 * k * n));
  for (Eigen::Index y = 0; y < k; ++y) {
    lp.b[y] = 1;
    lp.row_types[std::size_t(y)] = labeldp::optim::RowType::Equal;
    for (Eigen::Index o = 0; o < n; ++o) {
      const double cost = probs[y] * loss(outputs[o], values[y]);
      t.emplace_back(y, o, 1.0);
      t.emplace_back(y, n + y * n + o, 1.0);
      lp.c[o] += cost;
      lp.c[n + y * n + o] = cost;
      const Eigen::Index row = k + y * n + o;
      t.emplace_back(row, n + y * n + o, 1.0);
      t.emplace_back(row, o, -r);
    }
  }
  lp.A.setFromTriplets(t.begin(), t.end());
  return lp;
}

}  // namespace labeldp::test
