/// \file
/// COIN-OR CLP (dual simplex) as a reference solver for the benchmarks (bench/bench_solvers.cpp):
/// solve_with_clp() loads the same SparseLinearProgram that solve_with_glpk() takes and solves it
/// with ClpSimplex::dual(). Never used by include/ or by the tests; only the benchmarks link CLP.
#pragma once

#include <ClpSimplex.hpp>
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <limits>
#include <vector>

#include "oracles/glpk_oracle.hpp"

namespace labeldp::test {

/// CLP's answer.
struct ClpResult {
  labeldp::optim::SolveStatus status = labeldp::optim::SolveStatus::NumericalIssue;
  double objective = std::numeric_limits<double>::quiet_NaN();  ///< c'x (valid when Optimal)
  int clp_status = -1;  ///< ClpSimplex::status(): 0 optimal, 1 infeasible, 2 unbounded, 3 limit, 4+ errors
};

/// Loads the LP (x >= 0, rows as `row_types`) into a ClpSimplex and solves it with the dual
/// simplex (no presolve, log off; at most `max_seconds` when positive: status IterationLimit
/// past it): the whole call is what the benchmarks time.
inline ClpResult solve_with_clp(const SparseLinearProgram& lp, double max_seconds = 0) {
  Eigen::SparseMatrix<double, Eigen::ColMajor> A = lp.A;
  A.makeCompressed();
  const int m = int(A.rows()), n = int(A.cols());
  const double inf = std::numeric_limits<double>::max();
  std::vector<double> row_lo(std::size_t(m), -inf), row_hi(std::size_t(m), inf);
  for (int i = 0; i < m; ++i) {
    switch (lp.row_types[std::size_t(i)]) {
      case labeldp::optim::RowType::Equal:
        row_lo[std::size_t(i)] = row_hi[std::size_t(i)] = lp.b[i];
        break;
      case labeldp::optim::RowType::LessEqual:
        row_hi[std::size_t(i)] = lp.b[i];
        break;
      case labeldp::optim::RowType::GreaterEqual:
        row_lo[std::size_t(i)] = lp.b[i];
        break;
    }
  }
  std::vector<CoinBigIndex> start(std::size_t(n) + 1);
  for (int j = 0; j <= n; ++j) start[std::size_t(j)] = CoinBigIndex(A.outerIndexPtr()[j]);
  const std::vector<double> col_lo(std::size_t(n), 0.0), col_hi(std::size_t(n), inf);
  ClpSimplex model;
  model.setLogLevel(0);
  if (max_seconds > 0) model.setMaximumSeconds(max_seconds);
  model.loadProblem(n, m, start.data(), A.innerIndexPtr(), A.valuePtr(), col_lo.data(), col_hi.data(), lp.c.data(),
                    row_lo.data(), row_hi.data());
  model.dual();
  ClpResult r;
  r.clp_status = model.status();
  using labeldp::optim::SolveStatus;
  switch (r.clp_status) {
    case 0:
      r.status = SolveStatus::Optimal;
      break;
    case 1:
      r.status = SolveStatus::Infeasible;
      break;
    case 2:
      r.status = SolveStatus::Unbounded;
      break;
    case 3:
      r.status = SolveStatus::IterationLimit;
      break;
    default:
      r.status = SolveStatus::NumericalIssue;
      break;
  }
  r.objective = model.objectiveValue();
  return r;
}

}  // namespace labeldp::test
