/// \file
/// The linear programs of RevisedSimplex and how it reports: LinearProgram (\f$\min c^T x\f$
/// subject to \f$a_i^T x \;(=, \le, \ge)\; b_i\f$, \f$x \ge 0\f$), SimplexOptions, SimplexResult,
/// and SolveStatus, the one solver status of the library (after HiGHS's model status); the
/// spellings every options struct shares for "no limit" and "automatic" (kUnlimited,
/// kAutomatic) and the checks of limits (validate_time_limit(), validate_count_limit()).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "labeldp/core/validate.hpp"

namespace labeldp::optim {

/// Index type (Eigen's signed index).
using Index = Eigen::Index;

/// "No limit" for a count limit of any options struct (SimplexOptions::max_iterations,
/// ColumnGenerationOptions::max_rounds, ColumnGenerationOptions::max_columns_per_round, ...).
/// Every limit of the library means what it says at 0 (0 rounds, 0 pivots, 0 seconds); no limit
/// is spelled kUnlimited for counts and +infinity for seconds, never 0.
inline constexpr Index kUnlimited = std::numeric_limits<Index>::max();

/// "Let the solver choose" for the options that have an automatic setting
/// (UnbiasedOptions::seed_grid_size, UnbiasedOptions::max_columns_per_round,
/// UnbiasedOptions::dual_smoothing); never a valid value of the field itself.
inline constexpr Index kAutomatic = -1;

/// Throws unless `seconds` is a valid time limit: >= 0, +infinity for none (not NaN).
/// 	hrows std::invalid_argument "'time_limit' must be >= 0 seconds (infinity = no limit), got -1"
inline void validate_time_limit(std::string_view name, double seconds) {
  if (!(seconds >= 0)) labeldp::detail::fail_parameter(name, "must be >= 0 seconds (infinity = no limit)", seconds);
}

/// Throws unless `count` is a valid count limit: >= 0 (0 = none allowed; kUnlimited = no limit).
/// 	hrows std::invalid_argument "'max_rounds' must be >= 0, got -1"
inline void validate_count_limit(std::string_view name, Index count) {
  if (count < 0) labeldp::detail::fail_parameter(name, "must be >= 0", double(count));
}

/// Outcome of a solve, reported as a value (never thrown), after HiGHS's model status.
enum class SolveStatus {
  Optimal,         ///< an optimal basic solution was found; x, duals, reduced costs are valid
  Infeasible,      ///< phase 1 ended with a positive infeasibility: no x satisfies the rows
  Unbounded,       ///< a feasible ray of decreasing cost exists (the LP is feasible)
  IterationLimit,  ///< SimplexOptions::max_iterations pivots were made without finishing
  TimeLimit,       ///< the time limit was reached; x is the last basic solution
  NumericalIssue   ///< the basis became numerically singular, or roundoff broke an invariant
};

/// Lower-case name of a status ("optimal", "infeasible", "unbounded", "iteration-limit",
/// "time-limit", "numerical-issue").
inline std::string to_string(SolveStatus status) {
  switch (status) {
    case SolveStatus::Optimal:
      return "optimal";
    case SolveStatus::Infeasible:
      return "infeasible";
    case SolveStatus::Unbounded:
      return "unbounded";
    case SolveStatus::IterationLimit:
      return "iteration-limit";
    case SolveStatus::TimeLimit:
      return "time-limit";
    case SolveStatus::NumericalIssue:
      return "numerical-issue";
  }
  return "unknown";
}

/// Sense of a constraint row.
enum class RowType {
  Equal,        ///< \f$a_i^T x = b_i\f$
  LessEqual,    ///< \f$a_i^T x \le b_i\f$
  GreaterEqual  ///< \f$a_i^T x \ge b_i\f$
};

/// The linear program \f$\min c^T x\f$ subject to \f$a_i^T x \;(=|\le|\ge)\; b_i\f$ for every
/// row i of A, and \f$x \ge 0\f$.
///
/// \code{.cpp}
/// labeldp::optim::LinearProgram lp;
/// lp.A = Eigen::MatrixXd{{1, 1}};           // x0 + x1 >= 1
/// lp.b = Eigen::VectorXd::Ones(1);
/// lp.row_types = {labeldp::optim::RowType::GreaterEqual};
/// lp.c = Eigen::Vector2d(1, 2);              // min x0 + 2 x1  ->  x = (1, 0)
/// \endcode
struct LinearProgram {
  Eigen::MatrixXd A;               ///< m x n constraint matrix (column-major)
  Eigen::VectorXd b;               ///< m right-hand sides
  std::vector<RowType> row_types;  ///< m row senses
  Eigen::VectorXd c;               ///< n costs
};

/// Tolerances and limits of RevisedSimplex. Every field has a documented default; check()
/// (called by the RevisedSimplex constructor) throws std::invalid_argument naming the first bad
/// field.
///
/// \code{.cpp}
/// labeldp::optim::SimplexOptions opt;
/// opt.time_limit = 2.0;                       // seconds; +infinity (the default) = none
/// opt.check();                                // throws naming a bad field
/// labeldp::optim::RevisedSimplex simplex(lp, opt);
/// \endcode
struct SimplexOptions {
  /// Default 1e-9 (relative, finite, > 0). A basic variable counts as non-negative when it is
  /// >= -tolerance (Harris ratio test slack); phase 1 declares the LP infeasible when the total
  /// infeasibility exceeds this tolerance times max(1, |b|_inf).
  double primal_feasibility_tolerance = 1e-9;
  /// Default 1e-9 (relative, finite, > 0). A reduced cost counts as non-negative (no improving
  /// column) when it is >= -tolerance (relative to max(1, |c|_inf) and the column's norm).
  double dual_feasibility_tolerance = 1e-9;
  /// Default 1e-9 (relative, finite, > 0). Entries of \f$w = B^{-1} a_q\f$ smaller in magnitude
  /// than this times \f$\max(1, \|w\|_\infty)\f$ are treated as zero in the ratio test, so that
  /// no tiny pivot makes the basis ill-conditioned. Relative, not absolute: an absolute 1e-10 let
  /// a bias-bounded master (near-uniform k = 214 with zero-probability labels, B = 5, eps = 1)
  /// pivot on roundoff until its basis was singular.
  double pivot_tolerance = 1e-9;
  /// Default 1000000 pivots (>= 0; kUnlimited = no limit). The solve stops with
  /// SolveStatus::IterationLimit after this many pivots (0: before the first).
  Index max_iterations = 1000000;
  /// Default +infinity = no limit (seconds, >= 0). Wall-clock limit of one solve() call. The
  /// clock (std::chrono::steady_clock) is read before the first pivot of each phase and then
  /// every 16 pivots, so a solve may overrun the limit by up to 16 pivots and one
  /// refactorization. When it is reached, solve() returns SolveStatus::TimeLimit with the last
  /// basic solution (primal feasible when phase 2 had started) and the duals of that basis; a
  /// basis reached in phase 2 is kept, so the next solve() continues from it (a warm start). A
  /// limit of 0 stops before the first pivot (an LP whose starting basis is optimal still ends
  /// Optimal).
  double time_limit = std::numeric_limits<double>::infinity();
  /// Default 100 basis changes (>= 1). Every this many basis changes the factorization is
  /// checked: \f$x_B\f$ and the duals are recomputed from b and \f$c_B\f$ and their residuals
  /// \f$\|B x_B - b\|_\infty\f$, \f$\|B^T y - c_B\|_\infty\f$ measured; the basis is
  /// refactorized (fresh LU and inverse) when either exceeds 1e-11 relative, and in any case
  /// after 5 times this many changes.
  Index refactorization_interval = 100;
  /// Default 10 pivots (>= 0; 0 = perturb at every degenerate vertex). Anti-cycling trigger.
  /// After this many consecutive degenerate pivots (pivots whose leaving variable is at zero
  /// within the feasibility tolerance, so that x does not move) the ratio test of every
  /// degenerate vertex breaks its ties by a virtual random perturbation of the right-hand side
  /// (Wolfe 1963), under which no basis can repeat; the perturbation is removed, and this count
  /// restarts, at the first pivot that moves x. The pricing rule is unchanged, and the final
  /// basis is optimal for the unperturbed LP (the perturbation never touches x). Below the
  /// trigger, degenerate ties go to the largest pivot (Harris), the numerically safest choice;
  /// short degenerate runs are common and harmless, a long one is where cycling and stalling
  /// live. Measured on random degenerate and assignment LPs, the pivot counts at 0, 10 and never
  /// differ by about 1%.
  Index degenerate_pivots_before_perturbation = 10;
  /// Default true. Whether solve() fills SimplexResult::reduced_costs (an O(mn) dense product
  /// per solve). Column generation that prices its own columns from the duals can turn it off:
  /// the unbiased-randomizer master re-solves after every round with up to a thousand columns.
  bool compute_reduced_costs = true;

  /// Checks every field against the rule in its comment.
  /// \param path prefix of the field names in the message (an enclosing struct passes e.g.
  ///        "simplex." so that the message names "'simplex.time_limit'"); empty by default.
  /// \throws std::invalid_argument naming the first bad field, the rule and the value, e.g.
  ///         "'pivot_tolerance' must be finite and positive, got 0".
  void check(std::string_view path = {}) const {
    const auto name = [&](const char* field) { return std::string(path) + field; };
    validate_finite_positive(name("primal_feasibility_tolerance"), primal_feasibility_tolerance);
    validate_finite_positive(name("dual_feasibility_tolerance"), dual_feasibility_tolerance);
    validate_finite_positive(name("pivot_tolerance"), pivot_tolerance);
    validate_count_limit(name("max_iterations"), max_iterations);
    validate_time_limit(name("time_limit"), time_limit);
    if (refactorization_interval < 1)
      labeldp::detail::fail_parameter(name("refactorization_interval"), "must be >= 1",
                                      double(refactorization_interval));
    if (degenerate_pivots_before_perturbation < 0)
      labeldp::detail::fail_parameter(name("degenerate_pivots_before_perturbation"), "must be >= 0",
                                      double(degenerate_pivots_before_perturbation));
  }
};

/// Result of RevisedSimplex::solve().
struct SimplexResult {
  SolveStatus status = SolveStatus::NumericalIssue;  ///< outcome
  Eigen::VectorXd x;                                 ///< primal values (n); the last basic solution if not optimal
  Eigen::VectorXd duals;                             ///< row duals y (m): reduced costs are \f$c - A^T y\f$
  Eigen::VectorXd reduced_costs;  ///< \f$c - A^T y\f$ (n); empty when SimplexOptions::compute_reduced_costs is off (and
                                  ///< the LP has rows)
  double objective = std::numeric_limits<double>::quiet_NaN();  ///< \f$c^T x\f$
  Index iterations = 0;                                         ///< pivots made by this solve (both phases)
  /// Pivots of this solve whose leaving variable was at zero (within the feasibility
  /// tolerance): x did not move.
  Index degenerate_pivots = 0;
  /// Times the anti-cycling perturbation was switched on (see
  /// SimplexOptions::degenerate_pivots_before_perturbation).
  Index perturbations = 0;
  /// Pivots whose leaving row was chosen by the perturbed ratio test.
  Index perturbed_pivots = 0;
  /// Times the perturbation was removed after a pivot that moved x (a switch back to the
  /// Harris ratio test).
  Index perturbation_removals = 0;
  /// Times an optimal basis was found primal infeasible after x_B was recomputed, and repaired
  /// by dual simplex pivots (then confirmed by phase 2).
  Index feasibility_repairs = 0;
  /// Times a refactorization found the basis numerically singular and its dependent columns
  /// were replaced by the logical columns (slack, else artificial) of the rows they left
  /// uncovered (then made feasible and optimal again by the pivots that follow).
  Index basis_repairs = 0;
  bool warm_started = false;  ///< true when phase 2 continued from the previous basis or from set_basis()
};

}  // namespace labeldp::optim
