/// \file
/// A revised simplex method for linear programs in the form
/// \f$\min c^T x\f$ subject to \f$a_i^T x \;(=, \le, \ge)\; b_i\f$, \f$x \ge 0\f$,
/// on Eigen dense linear algebra, with warm starts after adding columns (column generation).
///
/// This is the library's own LP engine: the shipped headers depend on no LP library (GLPK is
/// used only by the tests and benchmarks, as an oracle). It solves the optimal-mechanism LP
/// (Ghazi et al. 2023, LP (2) and Appendix A) and the optimal unbiased randomizer LP
/// (Badanidiyuru et al. 2023, Algorithm 1) by column generation.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "labeldp/core/validate.hpp"
#include "labeldp/optim/detail/basis_factorization.hpp"

namespace labeldp::optim {

/// Index type (Eigen's signed index).
using Index = Eigen::Index;

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

/// Tolerances and limits of RevisedSimplex.
struct SimplexOptions {
  /// A basic variable counts as non-negative when it is >= -tolerance (Harris ratio test
  /// slack); phase 1 declares the LP infeasible when the total infeasibility exceeds this
  /// tolerance times max(1, |b|_inf).
  double primal_feasibility_tolerance = 1e-9;
  /// A reduced cost counts as non-negative (no improving column) when it is >= -tolerance
  /// (relative to max(1, |c|_inf) and the column's norm).
  double dual_feasibility_tolerance = 1e-9;
  /// Entries of \f$w = B^{-1} a_q\f$ smaller in magnitude than this times
  /// \f$\max(1, \|w\|_\infty)\f$ are treated as zero in the ratio test, so that no tiny pivot
  /// makes the basis ill-conditioned. Relative, not absolute: an absolute 1e-10 let a
  /// bias-bounded master (near-uniform k = 214 with zero-probability labels, B = 5, eps = 1)
  /// pivot on roundoff until its basis was singular.
  double pivot_tolerance = 1e-9;
  /// The solve stops with SolveStatus::IterationLimit after this many pivots.
  Index max_iterations = 1000000;
  /// Wall-clock limit of one solve() call, in seconds (>= 0; infinity: none). The clock
  /// (std::chrono::steady_clock) is read before the first pivot of each phase and then every
  /// 16 pivots, so a solve may overrun the limit by up to 16 pivots and one refactorization.
  /// When it is reached, solve() returns SolveStatus::TimeLimit with the last basic solution
  /// (primal feasible when phase 2 had started) and the duals of that basis; a basis reached in
  /// phase 2 is kept, so the next solve() continues from it (a warm start). A limit of 0 stops
  /// before the first pivot (an LP whose starting basis is optimal still ends Optimal).
  double time_limit = std::numeric_limits<double>::infinity();
  /// Every this many basis changes the factorization is checked: \f$x_B\f$ and the duals are
  /// recomputed from b and \f$c_B\f$ and their residuals \f$\|B x_B - b\|_\infty\f$,
  /// \f$\|B^T y - c_B\|_\infty\f$ measured; the basis is refactorized (fresh LU and inverse)
  /// when either exceeds 1e-11 relative, and in any case after 5 times this many changes.
  Index refactorization_interval = 100;
  /// Anti-cycling trigger. After this many consecutive degenerate pivots (pivots whose leaving
  /// variable is at zero within the feasibility tolerance, so that x does not move) the ratio
  /// test of every degenerate vertex breaks its ties by a virtual random perturbation of the
  /// right-hand side (Wolfe 1963), under which no basis can repeat; the perturbation is
  /// removed, and this count restarts, at the first pivot that moves x. The pricing rule is
  /// unchanged, and the final basis is optimal for the unperturbed LP (the perturbation never
  /// touches x). 0: perturb at every degenerate vertex. Below the trigger, degenerate ties go
  /// to the largest pivot (Harris), the numerically safest choice; short degenerate runs are
  /// common and harmless, a long one is where cycling and stalling live. Measured on random
  /// degenerate and assignment LPs, the pivot counts at 0, 10 and never differ by about 1%.
  Index degenerate_pivots_before_perturbation = 10;
  /// Whether solve() fills SimplexResult::reduced_costs (an O(mn) dense product per solve).
  /// Column generation that prices its own columns from the duals can turn it off: the
  /// unbiased-randomizer master re-solves after every round with up to a thousand columns.
  bool compute_reduced_costs = true;
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
  bool warm_started = false;  ///< true when phase 2 continued from the previous basis or from set_basis()
};

/// Revised simplex method (two phases, Dantzig pricing scaled by column norms, Harris two-pass
/// ratio test, and a virtual perturbation against cycling) on an explicit dense inverse of the
/// basis with product-form (rank-one) updates, duals updated in O(m) per pivot, and
/// residual-checked refactorization from an LU with iterative refinement.
///
/// Anti-cycling. A run of degenerate pivots (x does not move) can cycle under any tie-breaking
/// of the ratio test that depends only on the current basis' numbers (Beale 1955; Hall and
/// McKinnon 2004 for Dantzig's rule with Harris-like choices). After
/// SimplexOptions::degenerate_pivots_before_perturbation degenerate pivots in a row, each basic
/// variable at zero gets a random virtual value in [1, 2] and degenerate ratio tests compare
/// those (Wolfe 1963; Ryan and Osborne 1988): the pivots follow a random perturbation
/// \f$b + \delta B \epsilon\f$ with \f$\delta \to 0\f$, whose objective falls at every pivot, so
/// no basis repeats. Unlike a perturbation of b by a finite amount (CLP, HiGHS) it needs no
/// cleanup: the real x never moves during the perturbed pivots, and the perturbation is
/// dropped at the first pivot that makes progress, so the final basis is exactly that of the
/// unperturbed LP. Unlike Bland's rule it keeps the pricing (Bland's smallest-index choice is
/// slow on the massively degenerate mechanism LPs), and unlike a lexicographic ratio test it
/// needs no rows of \f$B^{-1}\f$. SimplexResult counts the degenerate pivots, the perturbations,
/// the perturbed pivots and the removals.
///
/// Every row gets an internal slack (inequality rows) and an artificial variable; phase 1
/// minimizes the sum of the artificials from the slack/artificial basis, phase 2 minimizes
/// \f$c^T x\f$ with the artificials kept at zero (a basic artificial blocks any step that would
/// move it, and artificials never enter). add_columns() keeps the basis: the new columns are
/// nonbasic at zero, so the basis stays primal feasible and the next solve() continues phase 2
/// from it (a warm start, which is what column generation needs). set_basis() starts phase 2
/// from a caller's feasible basis instead (a crash basis), and set_transpose_product() lets a
/// caller who knows the columns' structure price them faster than the dense \f$A^T y\f$.
///
/// \code{.cpp}
/// labeldp::optim::RevisedSimplex simplex(lp);
/// labeldp::optim::SimplexResult r = simplex.solve();
/// if (r.status == labeldp::optim::SolveStatus::Optimal) use(r.x, r.duals);
/// \endcode
class RevisedSimplex {
 public:
  /// \param lp the problem (moved in).
  /// \param options tolerances and limits.
  /// \throws std::invalid_argument when the dimensions of A, b, row_types and c disagree, when
  ///         any entry is NaN or infinite, or when an option is out of range.
  explicit RevisedSimplex(LinearProgram lp, SimplexOptions options = {}) : m_lp(std::move(lp)), m_options(options) {
    validate_options(m_options);
    validate_problem();
    const Index m = m_lp.A.rows();
    m_slack_row.clear();
    m_slack_sign.clear();
    for (Index i = 0; i < m; ++i) {
      if (m_lp.row_types[std::size_t(i)] == RowType::Equal) continue;
      m_slack_row.push_back(i);
      m_slack_sign.push_back(m_lp.row_types[std::size_t(i)] == RowType::LessEqual ? 1.0 : -1.0);
    }
    m_art_sign.resize(m);
    for (Index i = 0; i < m; ++i) m_art_sign[i] = m_lp.b[i] < 0 ? -1.0 : 1.0;
    m_column_norms.resize(m_lp.A.cols());
    for (Index j = 0; j < m_lp.A.cols(); ++j) m_column_norms[j] = std::max(m_lp.A.col(j).norm(), 1e-300);
    m_b_scale = std::max(1.0, m_lp.b.size() ? m_lp.b.cwiseAbs().maxCoeff() : 0.0);
    m_max_abs_entry = std::max(1.0, m_lp.A.size() ? m_lp.A.cwiseAbs().maxCoeff() : 0.0);
  }

  /// Number of rows m.
  Index num_rows() const { return m_lp.A.rows(); }
  /// Number of structural columns n (grows with add_columns()).
  Index num_columns() const { return m_lp.A.cols(); }
  /// The problem as currently held (including added columns).
  const LinearProgram& problem() const { return m_lp; }
  /// The options.
  const SimplexOptions& options() const { return m_options; }

  /// Forgets the current basis: the next solve() starts from scratch.
  void reset() { m_warm = false; }

  /// Sets SimplexOptions::time_limit for the following solve() calls (column generation hands
  /// each master solve the time it has left).
  /// \param seconds the limit per solve() call (>= 0; infinity: none).
  /// \throws std::invalid_argument when `seconds` is negative or NaN (the message names
  ///         `time_limit`).
  void set_time_limit(double seconds) {
    validate_time_limit(seconds);
    m_options.time_limit = seconds;
  }

  /// Computes \f$A^T y\f$ for all structural columns (`out` arrives sized num_columns()).
  using TransposeProduct = std::function<void(const Eigen::VectorXd& y, Eigen::VectorXd& out)>;

  /// Replaces the dense product \f$A^T y\f$ of pricing, made once per pivot over every
  /// column, by a caller's structured one: O(m n) per pivot is most of the cost of a
  /// column-generation master with many columns, while a caller who knows how the columns are
  /// built can often compute it far faster (the unbiased-randomizer master: prefix sums per
  /// distinct output, O(1) per column). The product must equal \f$A^T y\f$ up to roundoff for
  /// the current columns, including those appended later by add_columns(). It only steers the
  /// pivots: the entering column's reduced cost is recomputed exactly and a column that does
  /// not truly improve is not taken; whenever the product reports no improving column, pricing
  /// is repeated with the dense product, and solve() ends Optimal only when that finds none
  /// either; `reduced_costs` in the result are always computed densely. So a wrong product
  /// costs time, never a wrong answer. An empty function restores dense pricing.
  void set_transpose_product(TransposeProduct product) { m_transpose_product = std::move(product); }

  /// Starts the next solve() from a given basis of structural columns (a "crash" basis),
  /// skipping phase 1: e.g. the 2k columns of Proposition 7's two-point mechanism for the
  /// unbiased-randomizer master, whose weights are known to be non-negative. Phase 1 from the
  /// all-artificial basis needs at least one pivot per row before phase 2 can start; a feasible
  /// crash basis needs none.
  ///
  /// The basis is accepted only when it is numerically nonsingular and primal feasible
  /// (\f$B^{-1} b \ge -\text{tol}\f$, the tolerance of the feasibility test of a warm start);
  /// otherwise it is dropped and the next solve() starts from scratch, exactly as after reset().
  /// \param columns m distinct structural column indices (in [0, num_columns())), one per row.
  /// \return true when the basis was accepted.
  /// \throws std::invalid_argument when `columns` does not have num_rows() entries, or an entry
  ///         is out of range or repeated (the message names the entry and its value).
  bool set_basis(const std::vector<Index>& columns) { return set_basis(columns, Eigen::MatrixXd()); }

  /// set_basis() with the basis inverse supplied by the caller, who may know it far cheaper
  /// than the O(m^3) factorization (the unbiased-randomizer crash basis is block structured:
  /// two k x k inverses instead of one 2k x 2k). The inverse is checked with a probe vector
  /// (\f$\|B (B^{-1} r) - r\|_\infty\f$ and \f$\|B^{-1} (B r) - r\|_\infty\f$ for a fixed r,
  /// O(m^2)); an empty, misshapen, non-finite or failing `inverse` is ignored and the basis
  /// factorized as by set_basis(columns), so a wrong inverse costs time, never correctness.
  /// \param columns as for set_basis(columns).
  /// \param inverse \f$B^{-1}\f$ for the basis whose i-th column is column columns[i] (m x m).
  /// \return true when the basis was accepted (nonsingular and primal feasible).
  /// \throws std::invalid_argument as set_basis(columns).
  bool set_basis(const std::vector<Index>& columns, const Eigen::MatrixXd& inverse) {
    const Index m = num_rows();
    if (Index(columns.size()) != m)
      throw std::invalid_argument("set_basis: 'columns' has " + std::to_string(columns.size()) +
                                  " entries, must equal the " + std::to_string(m) + " rows");
    std::vector<std::uint8_t> used(std::size_t(num_columns()), 0);
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const Index j = columns[i];
      if (j < 0 || j >= num_columns())
        throw std::invalid_argument("set_basis: 'columns' entry " + std::to_string(i) + " must be in [0, " +
                                    std::to_string(num_columns()) + "), got " + std::to_string(j));
      if (used[std::size_t(j)])
        throw std::invalid_argument("set_basis: 'columns' entry " + std::to_string(i) +
                                    " must not repeat an earlier entry, got " + std::to_string(j));
      used[std::size_t(j)] = 1;
    }
    m_warm = false;
    if (m == 0) return true;
    const Index off = structural_offset();
    m_basis.assign(std::size_t(m), -1);
    m_position.assign(std::size_t(num_variables()), -1);
    for (Index i = 0; i < m; ++i) {
      m_basis[std::size_t(i)] = off + columns[std::size_t(i)];
      m_position[std::size_t(off + columns[std::size_t(i)])] = i;
    }
    if (!adopt_inverse(inverse) && !refactor_and_recompute()) return false;
    for (Index i = 0; i < m; ++i)
      if (m_xb[i] < -kWarmInfeasibility * m_options.primal_feasibility_tolerance * m_b_scale) return false;
    m_warm = true;
    return true;
  }

  /// Appends t columns (A_new: m x t, c_new: t). The current basis is kept: if the last solve()
  /// ended optimal, the next solve() continues phase 2 from it.
  /// \throws std::invalid_argument on a dimension mismatch or a NaN/infinite entry.
  void add_columns(const Eigen::MatrixXd& A_new, const Eigen::VectorXd& c_new) {
    if (A_new.rows() != num_rows())
      throw std::invalid_argument("add_columns: 'A_new' has " + std::to_string(A_new.rows()) +
                                  " rows, must equal the problem's " + std::to_string(num_rows()) + " rows");
    if (A_new.cols() != c_new.size())
      throw std::invalid_argument("add_columns: 'c_new' has " + std::to_string(c_new.size()) +
                                  " entries, must equal the " + std::to_string(A_new.cols()) + " columns of 'A_new'");
    check_finite_matrix("A_new", A_new);
    check_finite_vector("c_new", c_new);
    const Index n0 = m_lp.A.cols(), t = A_new.cols();
    if (t == 0) return;
    m_lp.A.conservativeResize(Eigen::NoChange, n0 + t);
    m_lp.A.rightCols(t) = A_new;
    m_lp.c.conservativeResize(n0 + t);
    m_lp.c.tail(t) = c_new;
    m_column_norms.conservativeResize(n0 + t);
    for (Index j = n0; j < n0 + t; ++j) m_column_norms[j] = std::max(m_lp.A.col(j).norm(), 1e-300);
    m_position.resize(std::size_t(num_variables()), -1);
    m_max_abs_entry = std::max(m_max_abs_entry, A_new.cwiseAbs().maxCoeff());
  }

  /// Solves the LP: warm (phase 2 from the current basis) when the previous solve ended
  /// optimal, or at the time limit in phase 2, and only columns were added since (or after
  /// set_basis()); otherwise from scratch (phase 1 + phase 2).
  /// \return status, primal values, duals, reduced costs, objective and iteration count.
  SimplexResult solve() {
    SimplexResult result;
    result.iterations = 0;
    const Index m = num_rows();
    if (m == 0) return solve_without_rows();
    m_timed = std::isfinite(m_options.time_limit);
    m_rng_state = kPerturbationSeed;
    if (m_timed) m_solve_start = std::chrono::steady_clock::now();
    bool warm = m_warm;
    m_warm = false;
    // A warm basis is still factorized (add_columns() changes no basic column, and the last
    // solve() or set_basis() left x_B = B^{-1} b recomputed): refactorizing it again would cost
    // an O(m^3) LU per column-generation round for nothing.
    if (warm) {
      // Roundoff can leave the basic solution slightly infeasible; a clearly infeasible one
      // means the basis is no longer usable.
      for (Index i = 0; i < m; ++i)
        if (m_xb[i] < -kWarmInfeasibility * m_options.primal_feasibility_tolerance * m_b_scale) warm = false;
    }
    result.warm_started = warm;
    if (!warm) {
      set_initial_basis();
      if (!refactor_and_recompute()) return finish(SolveStatus::NumericalIssue, result);
      const SolveStatus phase1 = iterate(/*phase=*/1, result);
      if (phase1 != SolveStatus::Optimal) return finish(phase1, result);
      double infeasibility = 0;
      for (Index i = 0; i < m; ++i)
        if (is_artificial(m_basis[std::size_t(i)])) infeasibility += std::max(m_xb[i], 0.0);
      if (infeasibility > m_options.primal_feasibility_tolerance * m_b_scale)
        return finish(SolveStatus::Infeasible, result);
      if (!drive_out_artificials()) return finish(SolveStatus::NumericalIssue, result);
    }
    const SolveStatus phase2 = iterate(/*phase=*/2, result);
    if (phase2 == SolveStatus::TimeLimit) {
      // The basis is primal feasible: keep it (refreshed from b) for the next solve().
      if (!check_or_refactor()) return finish(SolveStatus::NumericalIssue, result);
      m_warm = true;
    }
    if (phase2 != SolveStatus::Optimal) return finish(phase2, result);
    m_warm = true;
    return finish(SolveStatus::Optimal, result);
  }

 private:
  // Internal variables: [0, m) artificials (one per row, coefficient m_art_sign[i] * e_i),
  // [m, m + s) slacks (m_slack_sign * e_row), then the n structural columns. Structural
  // columns come last so that add_columns() appends without renumbering.
  Index num_variables() const { return num_rows() + Index(m_slack_row.size()) + num_columns(); }
  bool is_artificial(Index v) const { return v < num_rows(); }
  bool is_slack(Index v) const { return v >= num_rows() && v < num_rows() + Index(m_slack_row.size()); }
  Index structural_offset() const { return num_rows() + Index(m_slack_row.size()); }

  static void validate_options(const SimplexOptions& o) {
    validate_finite_positive("primal_feasibility_tolerance", o.primal_feasibility_tolerance);
    validate_finite_positive("dual_feasibility_tolerance", o.dual_feasibility_tolerance);
    validate_finite_positive("pivot_tolerance", o.pivot_tolerance);
    if (o.max_iterations < 0)
      labeldp::detail::fail_parameter("max_iterations", "must be >= 0", double(o.max_iterations));
    if (o.refactorization_interval < 1)
      labeldp::detail::fail_parameter("refactorization_interval", "must be >= 1", double(o.refactorization_interval));
    if (o.degenerate_pivots_before_perturbation < 0)
      labeldp::detail::fail_parameter("degenerate_pivots_before_perturbation", "must be >= 0",
                                      double(o.degenerate_pivots_before_perturbation));
    validate_time_limit(o.time_limit);
  }

  static void validate_time_limit(double seconds) {
    if (!(seconds >= 0))
      labeldp::detail::fail_parameter("time_limit", "must be >= 0 seconds (infinity for none)", seconds);
  }

  // Whether the time limit of the current solve() has passed (never when it is infinite).
  bool time_is_up() const {
    if (!m_timed) return false;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_solve_start).count() >=
           m_options.time_limit;
  }

  static void check_finite_matrix(const char* name, const Eigen::MatrixXd& M) {
    for (Index j = 0; j < M.cols(); ++j)
      for (Index i = 0; i < M.rows(); ++i)
        if (!std::isfinite(M(i, j)))
          throw std::invalid_argument("LinearProgram: '" + std::string(name) + "' entry (" + std::to_string(i) + ", " +
                                      std::to_string(j) + ") must be finite, got " +
                                      labeldp::detail::format_number(M(i, j)));
  }
  static void check_finite_vector(const char* name, const Eigen::VectorXd& v) {
    for (Index i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        throw std::invalid_argument("LinearProgram: '" + std::string(name) + "' entry " + std::to_string(i) +
                                    " must be finite, got " + labeldp::detail::format_number(v[i]));
  }

  void validate_problem() const {
    const Index m = m_lp.A.rows(), n = m_lp.A.cols();
    if (m_lp.b.size() != m)
      throw std::invalid_argument("LinearProgram: 'b' has " + std::to_string(m_lp.b.size()) +
                                  " entries, must equal the " + std::to_string(m) + " rows of 'A'");
    if (Index(m_lp.row_types.size()) != m)
      throw std::invalid_argument("LinearProgram: 'row_types' has " + std::to_string(m_lp.row_types.size()) +
                                  " entries, must equal the " + std::to_string(m) + " rows of 'A'");
    if (m_lp.c.size() != n)
      throw std::invalid_argument("LinearProgram: 'c' has " + std::to_string(m_lp.c.size()) +
                                  " entries, must equal the " + std::to_string(n) + " columns of 'A'");
    check_finite_matrix("A", m_lp.A);
    check_finite_vector("b", m_lp.b);
    check_finite_vector("c", m_lp.c);
  }

  // With no rows the LP separates: x_j = 0 is optimal unless some c_j < 0 (unbounded).
  SimplexResult solve_without_rows() {
    SimplexResult r;
    const Index n = num_columns();
    r.x = Eigen::VectorXd::Zero(n);
    r.duals = Eigen::VectorXd(0);
    r.reduced_costs = m_lp.c;
    r.objective = 0;
    r.iterations = 0;
    r.status = (n > 0 && m_lp.c.minCoeff() < 0) ? SolveStatus::Unbounded : SolveStatus::Optimal;
    return r;
  }

  // Column v of the internal matrix, dense.
  void load_column(Index v, Eigen::VectorXd& out) const {
    const Index m = num_rows();
    if (is_artificial(v)) {
      out.setZero(m);
      out[v] = m_art_sign[v];
    } else if (is_slack(v)) {
      out.setZero(m);
      const std::size_t s = std::size_t(v - m);
      out[m_slack_row[s]] = m_slack_sign[s];
    } else {
      out = m_lp.A.col(v - structural_offset());
    }
  }

  double cost(Index v, int phase) const {
    if (phase == 1) return is_artificial(v) ? 1.0 : 0.0;
    return v >= structural_offset() ? m_lp.c[v - structural_offset()] : 0.0;
  }

  void set_initial_basis() {
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
  void assemble_basis(Eigen::MatrixXd& B) const {
    const Index m = num_rows();
    B.resize(m, m);
    Eigen::VectorXd col;
    for (Index i = 0; i < m; ++i) {
      load_column(m_basis[std::size_t(i)], col);
      B.col(i) = col;
    }
  }

  // Solves B x = rhs (transposed: B^T x = rhs) with the factorization and two steps of
  // iterative refinement, O(m^2) each. The explicit inverse after many product-form updates
  // is accurate to about 1e-12; refinement brings the residual to roundoff, which callers of
  // the solution need (the mechanisms built from x renormalize rows and are audited exactly).
  // Returns the final residual's infinity norm.
  double refined_solve(const Eigen::MatrixXd& B, const Eigen::VectorXd& rhs, bool transposed,
                       Eigen::VectorXd& x) const {
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
  bool check_or_refactor() {
    const Index m = num_rows();
    if (m_factor.num_updates() >= kMaxUpdatesPerInterval * m_options.refactorization_interval)
      return refactor_and_recompute();
    Eigen::MatrixXd B;
    assemble_basis(B);
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
  bool adopt_inverse(const Eigen::MatrixXd& inverse) {
    const Index m = num_rows();
    if (inverse.rows() != m || inverse.cols() != m || !inverse.allFinite()) return false;
    Eigen::MatrixXd B;
    assemble_basis(B);
    Eigen::VectorXd r(m);
    for (Index i = 0; i < m; ++i) r[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + double(i % 7) / 7.0);
    const double scale = std::max(1.0, m_max_abs_entry) * std::max(1.0, inverse.cwiseAbs().maxCoeff()) * double(m);
    const Eigen::VectorXd left = B * (inverse * r) - r, right = inverse * (B * r) - r;
    if (!(left.cwiseAbs().maxCoeff() <= kResidualTolerance * scale &&
          right.cwiseAbs().maxCoeff() <= kResidualTolerance * scale))
      return false;
    m_factor.set_inverse(inverse);
    m_checked_at = 0;
    m_checked_duals.resize(0);
    refined_solve(B, m_lp.b, false, m_xb);
    return m_xb.allFinite();
  }

  bool refactor_and_recompute() {
    const Index m = num_rows();
    if (Index(m_basis.size()) != m) return false;
    Eigen::MatrixXd B;
    assemble_basis(B);
    m_checked_at = 0;
    m_checked_duals.resize(0);
    if (!m_factor.refactor(B, kSingularTolerance)) return false;
    refined_solve(B, m_lp.b, false, m_xb);
    return m_xb.allFinite();
  }

  // Simplex iterations of one phase from the current (primal feasible) basis.
  SolveStatus iterate(int phase, SimplexResult& result) {
    Index& iterations = result.iterations;
    const Index m = num_rows();
    const Index off = structural_offset();
    const double dual_tol = m_options.dual_feasibility_tolerance *
                            (phase == 1 ? 1.0 : std::max(1.0, m_lp.c.size() ? m_lp.c.cwiseAbs().maxCoeff() : 0.0));
    const double feas_tol = m_options.primal_feasibility_tolerance * m_b_scale;
    Eigen::VectorXd y(m), w(m), d_struct;
    Index degenerate_run = 0;
    Index pivots_until_clock = 0;  // the clock is read before this phase's first pivot
    m_perturbed = false;
    bool confirm_dense = false;
    // The duals are computed by a BTRAN after every (re)factorization check and otherwise
    // updated in O(m) after each pivot: y += (d_q / w_r) * (row r of the old B^{-1}).
    bool duals_valid = false;
    Eigen::VectorXd rho(m);
    for (;;) {
      if (m_factor.num_updates() >= m_checked_at + m_options.refactorization_interval) {
        if (!check_or_refactor()) return SolveStatus::NumericalIssue;
        duals_valid = false;
      }
      if (!duals_valid || confirm_dense) {
        // Duals: B^T y = c_B.
        for (Index i = 0; i < m; ++i) y[i] = cost(m_basis[std::size_t(i)], phase);
        m_factor.btran(y);
        duals_valid = true;
      }
      if (!y.allFinite()) return SolveStatus::NumericalIssue;

      // Pricing: the most negative reduced cost per unit column norm (Dantzig, scaled).
      Index entering = -1;
      double best = 0, entering_d = 0;
      auto consider = [&](Index v, double d, double norm) {
        if (d >= -dual_tol) return;
        const double score = d / norm;
        if (score < best) {
          best = score;
          entering = v;
          entering_d = d;
        }
      };
      if (phase == 1) {
        for (Index v = 0; v < m; ++v)
          if (m_position[std::size_t(v)] < 0) consider(v, 1.0 - m_art_sign[v] * y[v], 1.0);
      }
      for (Index v = m; v < off; ++v) {
        if (m_position[std::size_t(v)] >= 0) continue;
        const std::size_t s = std::size_t(v - m);
        consider(v, -m_slack_sign[s] * y[m_slack_row[s]], 1.0);
      }
      // A structured product (set_transpose_product()) prices the columns; its "optimal" is
      // confirmed with the dense product, so that it can steer the path but never the result.
      const bool dense = !m_transpose_product || confirm_dense;
      confirm_dense = false;
      if (num_columns() > 0) {
        if (dense) {
          d_struct.noalias() = m_lp.A.transpose() * y;
        } else {
          d_struct.resize(num_columns());
          m_transpose_product(y, d_struct);
          if (d_struct.size() != num_columns()) return SolveStatus::NumericalIssue;
        }
        for (Index j = 0; j < num_columns(); ++j) {
          const Index v = off + j;
          if (m_position[std::size_t(v)] >= 0) continue;
          const double d = (phase == 1 ? 0.0 : m_lp.c[j]) - d_struct[j];
          consider(v, d, m_column_norms[j]);
        }
      }
      if (entering < 0) {
        if (dense) return SolveStatus::Optimal;
        confirm_dense = true;
        continue;
      }
      if (iterations >= m_options.max_iterations) return SolveStatus::IterationLimit;
      if (pivots_until_clock-- == 0) {
        if (time_is_up()) return SolveStatus::TimeLimit;
        pivots_until_clock = kPivotsPerClockRead - 1;
      }

      load_column(entering, w);
      // The entering column's reduced cost recomputed exactly (O(m)): it drives the dual
      // update, and a structured product's choice that does not truly improve is priced again
      // with the dense product, so that every pivot is one the dense rule could have made.
      const double d_exact = cost(entering, phase) - w.dot(y);
      if (!dense && !(d_exact < -dual_tol)) {
        confirm_dense = true;
        continue;
      }
      entering_d = d_exact;
      m_factor.ftran(w);
      if (!w.allFinite()) return SolveStatus::NumericalIssue;

      // Ratio test. A basic artificial in phase 2 sits at zero and may not move either way.
      const double piv = m_options.pivot_tolerance * std::max(1.0, w.cwiseAbs().maxCoeff());
      Index leave = -1;
      if (phase == 2) {
        double best_art = 0;
        for (Index i = 0; i < m; ++i)
          if (is_artificial(m_basis[std::size_t(i)]) && std::abs(w[i]) > piv && std::abs(w[i]) > best_art) {
            best_art = std::abs(w[i]);
            leave = i;
          }
      }
      double theta = 0;
      bool degenerate = leave >= 0;  // a basic artificial leaves at zero
      if (leave < 0) {
        // After a run of degenerate pivots: do rows at zero (within the feasibility tolerance)
        // block the step, i.e. is the vertex degenerate in the entering column's direction?
        // (Looked for only then: the data-dependent test costs branch mispredictions.)
        double largest_at_zero = 0;
        if (degenerate_run >= m_options.degenerate_pivots_before_perturbation)
          for (Index i = 0; i < m; ++i)
            if (w[i] > piv && m_xb[i] <= feas_tol) largest_at_zero = std::max(largest_at_zero, w[i]);
        if (largest_at_zero > 0) {
          leave = perturbed_ratio_test(w, feas_tol, piv, largest_at_zero, result);
          degenerate = true;
        } else {
          // Harris two-pass: the largest step allowed with the feasibility tolerance, then the
          // largest pivot among the rows that block within it (stability over exactness).
          double bound = std::numeric_limits<double>::infinity();
          for (Index i = 0; i < m; ++i)
            if (w[i] > piv) bound = std::min(bound, (m_xb[i] + feas_tol) / w[i]);
          double best_pivot = 0;
          for (Index i = 0; i < m; ++i)
            if (w[i] > piv && m_xb[i] / w[i] <= bound && w[i] > best_pivot) {
              best_pivot = w[i];
              leave = i;
            }
          if (leave < 0) {
            // No positive entry: the cost decreases without bound along the ray (phase 2),
            // which is impossible in phase 1 (the sum of artificials is bounded below by 0).
            return phase == 2 ? SolveStatus::Unbounded : SolveStatus::NumericalIssue;
          }
          degenerate = m_xb[leave] <= feas_tol;
          theta = std::max(m_xb[leave], 0.0) / w[leave];
          if (!degenerate && m_perturbed) {
            // Progress: the perturbation has served its purpose; the next degenerate vertex
            // is met by the Harris rule again (and perturbed afresh if it stalls there).
            m_perturbed = false;
            ++result.perturbation_removals;
          }
        }
      }

      // Update the basic solution and the basis. A degenerate pivot (the leaving variable at
      // zero within the tolerance) moves nothing: the entering variable comes in at zero.
      if (theta != 0) m_xb.noalias() -= theta * w;
      m_xb[leave] = theta;
      const Index old = m_basis[std::size_t(leave)];
      m_position[std::size_t(old)] = -1;
      m_basis[std::size_t(leave)] = entering;
      m_position[std::size_t(entering)] = leave;
      rho = m_factor.inverse_row(leave).transpose();
      y.noalias() += (entering_d / w[leave]) * rho;
      m_factor.update(leave, w);
      ++iterations;
      if (degenerate) {
        ++result.degenerate_pivots;
        ++degenerate_run;
      } else {
        degenerate_run = 0;
      }
    }
  }

  // The ratio test of a degenerate vertex under the virtual perturbation (Wolfe 1963, "A
  // technique for resolving degeneracy in linear programming"; Ryan and Osborne 1988): every
  // basic variable at zero gets a virtual value eps_i drawn uniformly from [1, 2], standing for
  // an infinitesimal perturbation of b that the real values never see. The leaving row is the
  // one of minimum eps_i / w_i among the blocking rows at zero (ties, of probability zero,
  // to the largest pivot); eps is carried through the pivot like x_B (eps -= t w, the entering
  // variable gets t), so that it stays the basic solution of the same perturbed right-hand
  // side. The perturbed objective then falls by t |d_q| > 0 at every pivot, so no basis
  // repeats while the perturbation stands: no cycle. Rows whose pivot is below 1e-7 of the
  // largest blocking one do not block (they pass, their eps falls slightly, and one that falls
  // to <= 0 is drawn afresh), so that the choice never costs the basis its conditioning.
  // Returns the leaving row (a blocking row at zero exists).
  Index perturbed_ratio_test(const Eigen::VectorXd& w, double feas_tol, double piv, double largest_at_zero,
                             SimplexResult& result) {
    const Index m = num_rows();
    if (!m_perturbed) {
      m_eps.setZero(m);
      m_perturbed = true;
      ++result.perturbations;
    }
    // Rows at zero without a virtual value (newly at zero after a refactorization, or whose
    // value fell to zero) get one.
    for (Index i = 0; i < m; ++i)
      if (m_xb[i] <= feas_tol && !(m_eps[i] > kEpsFloor)) m_eps[i] = 1.0 + uniform01();
    const double pivot_floor = std::max(piv, kPerturbedPivotRatio * largest_at_zero);
    Index leave = -1;
    double min_ratio = std::numeric_limits<double>::infinity();
    for (Index i = 0; i < m; ++i) {
      if (!(w[i] >= pivot_floor && m_xb[i] <= feas_tol)) continue;
      const double ratio = m_eps[i] / w[i];
      const double tie = 1e-12 * min_ratio;
      if (leave < 0 || ratio < min_ratio - tie || (ratio <= min_ratio + tie && w[i] > w[leave])) {
        min_ratio = leave < 0 ? ratio : std::min(min_ratio, ratio);
        leave = i;
      }
    }
    const double t = m_eps[leave] / w[leave];
    m_eps.noalias() -= t * w;
    m_eps[leave] = t;
    ++result.perturbed_pivots;
    return leave;
  }

  // A uniform draw in [0, 1) (splitmix64; reseeded by every solve(), so solves repeat exactly).
  double uniform01() {
    std::uint64_t z = (m_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53;
  }

  // After phase 1 some artificials may remain basic at zero: pivot each out on the largest
  // entry of its row of B^{-1} A (a degenerate pivot). Rows where no such entry exists are
  // redundant; their artificial stays basic at zero and blocks any move (see iterate()).
  bool drive_out_artificials() {
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

  SimplexResult finish(SolveStatus status, SimplexResult& result) {
    const Index m = num_rows(), n = num_columns(), off = structural_offset();
    // x_B is recomputed from b (dropping the drift of the pivots' updates), with a fresh
    // factorization only when the residuals ask for one (check_or_refactor()).
    if (status == SolveStatus::Optimal && !check_or_refactor()) status = SolveStatus::NumericalIssue;
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
        Eigen::MatrixXd B;
        assemble_basis(B);
        refined_solve(B, cb, true, result.duals);
      }
    }
    if (m_options.compute_reduced_costs) result.reduced_costs = m_lp.c - m_lp.A.transpose() * result.duals;
    result.objective = m_lp.c.dot(result.x);
    return result;
  }

  static constexpr double kSingularTolerance = 1e-13;
  // A warm or given basis is rejected when some x_B is below -this * the feasibility tolerance.
  static constexpr double kWarmInfeasibility = 100;
  // Relative residual above which check_or_refactor() refactorizes.
  static constexpr double kResidualTolerance = 1e-11;
  // Hard limit on updates between refactorizations, in refactorization intervals.
  static constexpr Index kMaxUpdatesPerInterval = 5;
  // A virtual value at or below this is drawn afresh (perturbed_ratio_test()).
  static constexpr double kEpsFloor = 1e-9;
  // Under the perturbation, rows whose pivot is below this times the largest do not block.
  static constexpr double kPerturbedPivotRatio = 1e-7;
  // Seed of the generator of the virtual values, set at every solve().
  static constexpr std::uint64_t kPerturbationSeed = 0x6C6162656C6470ull;
  // Pivots between two reads of the clock for SimplexOptions::time_limit.
  static constexpr Index kPivotsPerClockRead = 16;

  LinearProgram m_lp;
  SimplexOptions m_options;
  std::vector<Index> m_slack_row;
  std::vector<double> m_slack_sign;
  Eigen::VectorXd m_art_sign;
  Eigen::VectorXd m_column_norms;
  double m_b_scale = 1;
  std::vector<Index> m_basis;     // variable at each basis position
  std::vector<Index> m_position;  // basis position of each variable, -1 if nonbasic
  Eigen::VectorXd m_xb;           // values of the basic variables
  detail::BasisFactorization m_factor;
  bool m_warm = false;
  Index m_checked_at = 0;           // m_factor.num_updates() at the last passed residual check
  Eigen::VectorXd m_checked_duals;  // phase-2 duals refined by that check (empty after a refactor)
  double m_max_abs_entry = 0;       // max |A_ij| (1 for slack and artificial columns)
  TransposeProduct m_transpose_product;
  // Anti-cycling (perturbed_ratio_test()): whether the virtual perturbation stands, the
  // virtual values of the basic variables, and the generator that draws them.
  bool m_perturbed = false;
  Eigen::VectorXd m_eps;
  std::uint64_t m_rng_state = 0;
  bool m_timed = false;  // the current solve() has a finite time limit
  std::chrono::steady_clock::time_point m_solve_start;
};

}  // namespace labeldp::optim

// Column generation belongs with the solver's public API: including either header gives both.
#include "labeldp/optim/column_generation.hpp"
