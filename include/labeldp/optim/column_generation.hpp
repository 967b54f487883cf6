/// \file
/// Column generation on a RevisedSimplex master problem: solve the master, ask a pricing
/// oracle for columns with negative reduced cost under the current duals, add them, re-solve
/// warm, until the oracle has none (then the master's duals certify optimality for the full LP).
#pragma once

#include <concepts>
#include <stdexcept>
#include <string>
#include <utility>

#include <Eigen/Core>

#include "labeldp/optim/simplex.hpp"

namespace labeldp::optim {

/// Columns returned by a pricing oracle: an m x t block and its t costs (t = 0: none).
struct PricedColumns {
  Eigen::MatrixXd A;  ///< m x t new columns
  Eigen::VectorXd c;  ///< t costs
};

/// Options of solve_by_column_generation().
struct ColumnGenerationOptions {
  /// Stop (with the master's last status replaced by SolveStatus::IterationLimit) after this
  /// many pricing rounds.
  Index max_rounds = 10000;
  /// Options of the master's simplex solves. Used only for documentation by
  /// solve_by_column_generation() (the master was built with its own options); the mechanism
  /// builders pass them to the RevisedSimplex they construct.
  SimplexOptions simplex{};
};

/// Result of solve_by_column_generation().
struct ColumnGenerationResult {
  SimplexResult master;  ///< the final master solve (x over all master columns, duals)
  Index rounds = 0;      ///< pricing rounds (calls of the oracle)
  Index columns = 0;     ///< columns added by the oracle in total
};

/// A pricing oracle: maps the master's row duals to the columns to add.
template <typename P>
concept PricingOracle = requires(P& p, const Eigen::VectorXd& duals) {
  { p(duals) } -> std::convertible_to<PricedColumns>;
};

/// Column generation (Dantzig-Wolfe / Gilmore-Gomory): repeat { solve the master (warm after
/// the first round); columns = pricing(duals); if none, stop; add them }.
///
/// The oracle must return only columns whose reduced cost \f$c_j - a_j^T y\f$ is negative
/// (beyond the master's dual tolerance) and return none exactly when no column of the full
/// problem has a negative reduced cost: then the final duals are dual feasible for the full
/// LP, which proves the master's optimum is the full LP's optimum. If the oracle returns only
/// columns that do not improve, the loop stops too (a safeguard against an oracle whose
/// tolerance is looser than the master's).
///
/// \param master the restricted master problem; receives the new columns.
/// \param pricing callable `PricedColumns(const Eigen::VectorXd& duals)`.
/// \param options round limit.
/// \return the last master result (status Optimal when pricing found no column), rounds, columns.
/// \throws std::invalid_argument when the oracle returns a block of the wrong shape.
///
/// \code{.cpp}
/// labeldp::optim::RevisedSimplex master(initial_lp);
/// auto r = labeldp::optim::solve_by_column_generation(master, [&](const Eigen::VectorXd& y) {
///   return price(y);   // PricedColumns{A_block, costs}
/// });
/// \endcode
template <typename Pricing>
ColumnGenerationResult solve_by_column_generation(RevisedSimplex& master, Pricing&& pricing,
                                                  ColumnGenerationOptions options = {}) {
  if (options.max_rounds < 0)
    labeldp::detail::fail_parameter("max_rounds", "must be >= 0", double(options.max_rounds));
  ColumnGenerationResult result;
  Index total_iterations = 0;
  for (;;) {
    result.master = master.solve();
    total_iterations += result.master.iterations;
    result.master.iterations = total_iterations;
    if (result.master.status != SolveStatus::Optimal) return result;
    if (result.rounds >= options.max_rounds) {
      result.master.status = SolveStatus::IterationLimit;
      return result;
    }
    PricedColumns cols = pricing(static_cast<const Eigen::VectorXd&>(result.master.duals));
    ++result.rounds;
    if (cols.A.cols() == 0) return result;
    if (cols.A.rows() != master.num_rows())
      throw std::invalid_argument("pricing returned columns with " + std::to_string(cols.A.rows()) +
                                  " rows, the master has " + std::to_string(master.num_rows()));
    // Keep only the columns that price out under the master's own tolerance.
    const double tol = master.options().dual_feasibility_tolerance *
                       std::max(1.0, master.problem().c.size() ? master.problem().c.cwiseAbs().maxCoeff() : 0.0);
    const Eigen::VectorXd reduced = cols.c - cols.A.transpose() * result.master.duals;
    Index keep = 0;
    for (Index j = 0; j < cols.A.cols(); ++j)
      if (reduced[j] < -tol * std::max(1.0, cols.A.col(j).norm())) ++keep;
    if (keep == 0) return result;
    if (keep < cols.A.cols()) {
      Eigen::MatrixXd A(cols.A.rows(), keep);
      Eigen::VectorXd c(keep);
      Index t = 0;
      for (Index j = 0; j < cols.A.cols(); ++j)
        if (reduced[j] < -tol * std::max(1.0, cols.A.col(j).norm())) {
          A.col(t) = cols.A.col(j);
          c[t] = cols.c[j];
          ++t;
        }
      cols.A = std::move(A);
      cols.c = std::move(c);
    }
    master.add_columns(cols.A, cols.c);
    result.columns += keep;
  }
}

}  // namespace labeldp::optim
