/// \file
/// A revised simplex method for linear programs in the form
/// \f$\min c^T x\f$ subject to \f$a_i^T x \;(=, \le, \ge)\; b_i\f$, \f$x \ge 0\f$,
/// on Eigen dense linear algebra, with warm starts after adding columns (column generation).
///
/// This is the library's own LP engine: the shipped headers depend on no LP library (GLPK is
/// used only by the tests and benchmarks, as an oracle). It solves the optimal-mechanism LP
/// (Ghazi et al. 2023, LP (2) and Appendix A) and the optimal unbiased randomizer LP
/// (Badanidiyuru et al. 2023, Algorithm 1) by column generation.
///
/// The LP types and SolveStatus are in simplex_types.hpp; the class's pivoting (with the
/// anti-cycling perturbation) in detail/simplex_pivoting.hpp, its basis handling in
/// detail/simplex_basis.hpp. Including this header gives all of them and column generation.
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
#include "labeldp/optim/simplex_types.hpp"

namespace labeldp::optim {

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
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicRevisedSimplex {
 public:
  /// \param lp the problem (moved in).
  /// \param options tolerances and limits (SimplexOptions; checked first, by
  ///        SimplexOptions::check()).
  /// \throws std::invalid_argument naming the option out of range, or when the dimensions of A,
  ///         b, row_types and c disagree, or when any entry is NaN or infinite.
  explicit BasicRevisedSimplex(LinearProgram lp, SimplexOptions options = {})
      : m_lp(std::move(lp)), m_options(options) {
    m_options.check();
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
    validate_time_limit("time_limit", seconds);
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
  /// A numerically singular basis is repaired first, as one reached by pivots would be: its
  /// dependent columns are replaced by logical columns (SimplexResult::basis_repairs of the next
  /// solve() counts it). The basis is accepted only when it is then primal feasible
  /// (\f$B^{-1} b \ge -\text{tol}\f$ and basic artificials within tol of zero, the tolerance of
  /// the feasibility test of a warm start); otherwise it is dropped and the next solve() starts
  /// from scratch, exactly as after reset().
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
  /// Taken by value: a caller who passes it with std::move() hands over its storage (no copy
  /// of the m x m matrix).
  /// \param columns as for set_basis(columns).
  /// \param inverse \f$B^{-1}\f$ for the basis whose i-th column is column columns[i] (m x m).
  /// \return true when the basis was accepted (primal feasible, after a repair if singular).
  /// \throws std::invalid_argument as set_basis(columns).
  bool set_basis(const std::vector<Index>& columns, Eigen::MatrixXd inverse) {
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
    m_basis_repairs = 0;
    if (!adopt_inverse(std::move(inverse)) && !refactor_and_recompute()) return false;
    if (primal_infeasibility() > infeasibility_limit()) {
      m_basis_repairs = 0;  // refused: the next solve() starts cold, and repairs nothing
      return false;
    }
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
    m_timed = std::isfinite(m_options.time_limit);
    if (m_timed) m_solve_start = std::chrono::steady_clock::now();
    SimplexResult result = solve_once();
    if (result.status != SolveStatus::NumericalIssue || !result.warm_started) return result;
    // A warm basis that ended on roundoff (a basis that became singular, a repair that failed):
    // once more from scratch, within the same time limit, with the pivots of both counted.
    const Index pivots = result.iterations, repairs = result.basis_repairs;
    m_warm = false;
    result = solve_once();
    result.iterations += pivots;
    result.basis_repairs += repairs;
    return result;
  }

 private:
  SimplexResult solve_once() {
    SimplexResult result;
    result.iterations = 0;
    const Index m = num_rows();
    if (m == 0) return solve_without_rows();
    m_rng_state = kPerturbationSeed;
    bool warm = m_warm;
    m_warm = false;
    // A warm basis is still factorized (add_columns() changes no basic column, and the last
    // solve() or set_basis() left x_B = B^{-1} b recomputed): refactorizing it again would cost
    // an O(m^3) LU per column-generation round for nothing.
    if (warm) {
      // Roundoff can leave the basic solution slightly infeasible; a clearly infeasible one
      // means the basis is no longer usable.
      for (Index i = 0; i < m; ++i)
        if (m_xb[i] < -infeasibility_limit()) warm = false;
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
    SolveStatus phase2 = iterate(/*phase=*/2, result);
    // An optimal basis whose recomputed x_B is infeasible (a row whose entry in the entering
    // column was below the pivot tolerance does not block the ratio test, and a large step moves
    // its variable by up to that entry times the step): its duals are still feasible, so dual
    // simplex pivots restore primal feasibility, and phase 2 confirms the optimum. finish()
    // refuses Optimal to a basis still infeasible after that.
    for (int round = 0; phase2 == SolveStatus::Optimal && round < kMaxFeasibilityRepairs; ++round) {
      if (!check_or_refactor()) return finish(SolveStatus::NumericalIssue, result);
      if (primal_infeasibility() <= infeasibility_limit()) break;
      ++result.feasibility_repairs;
      if (!restore_primal_feasibility(result)) return finish(SolveStatus::NumericalIssue, result);
      phase2 = iterate(/*phase=*/2, result);
    }
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

  // Basis (defined in optim/detail/simplex_basis.hpp): the starting basis, refined solves with
  // the factorization, residual checks and refactorization, phase 1's leftover artificials, and
  // the final solution.
  void set_initial_basis();
  const Eigen::MatrixXd& assemble_basis() const;
  double refined_solve(const Eigen::MatrixXd& B, const Eigen::VectorXd& rhs, bool transposed, Eigen::VectorXd& x) const;
  bool check_or_refactor();
  bool adopt_inverse(Eigen::MatrixXd&& inverse);
  bool refactor_and_recompute();
  bool repair_singular_basis(const Eigen::MatrixXd& B);
  bool drive_out_artificials();
  double primal_infeasibility() const;
  // The largest infeasibility of x_B tolerated in a warm or given basis, or at an optimum.
  double infeasibility_limit() const { return kWarmInfeasibility * m_options.primal_feasibility_tolerance * m_b_scale; }
  bool restore_primal_feasibility(SimplexResult& result);
  SimplexResult finish(SolveStatus status, SimplexResult& result);

  // Pivoting (defined in optim/detail/simplex_pivoting.hpp): the iterations of one phase, and
  // the ratio test under Wolfe's virtual perturbation against cycling.
  SolveStatus iterate(int phase, SimplexResult& result);
  Index perturbed_ratio_test(const Eigen::VectorXd& w, double feas_tol, double piv, double largest_at_zero,
                             SimplexResult& result);
  double uniform01();

  static constexpr double kSingularTolerance = 1e-13;
  // A warm or given basis is rejected when some x_B is below -this * the feasibility tolerance.
  static constexpr double kWarmInfeasibility = 100;
  // Relative residual above which check_or_refactor() refactorizes.
  static constexpr double kResidualTolerance = 1e-11;
  // Rounds of dual pivots that may repair an optimal basis found primal infeasible.
  static constexpr int kMaxFeasibilityRepairs = 3;
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
  // The basis matrix of the last assemble_basis(), kept so that the next one reuses its storage:
  // a fresh m x m allocation per residual check is touched page by page (at m = 301, 725 KB,
  // a fifth of a small optimal-LP solve went to those page faults and copies).
  mutable Eigen::MatrixXd m_basis_matrix;
  bool m_warm = false;
  Index m_basis_repairs = 0;        // repair_singular_basis() calls since the last finish()
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

/// RevisedSimplex: BasicRevisedSimplex<> (see there).
using RevisedSimplex = BasicRevisedSimplex<>;

}  // namespace labeldp::optim

// The member functions defined out of the class.
#include "labeldp/optim/detail/simplex_basis.hpp"
#include "labeldp/optim/detail/simplex_pivoting.hpp"

// Column generation belongs with the solver's public API: including either header gives both.
#include "labeldp/optim/column_generation.hpp"
