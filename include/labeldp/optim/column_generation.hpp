/// \file
/// The library's one column-generation engine: a RevisedSimplex restricted master, an exact
/// pricing oracle, Wentges dual smoothing, and a certificate at the end of every solve (a
/// Lagrangian lower bound and the relative gap), so that SolveStatus::Optimal is reported only
/// when it is proved. Every LP of the library that is solved by column generation (the
/// optimal-mechanism LP (2) of Ghazi et al. 2023 and the unbiased-randomizer LP of Badanidiyuru
/// et al. 2023, Alg. 1, in staircase form) runs on solve_by_column_generation().
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <concepts>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "labeldp/core/validate.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp::optim {

/// What a pricing oracle returns for one dual vector y: candidate columns and, for exact
/// pricing, the minimum reduced cost over the whole column space it searched.
struct PricedColumns {
  Eigen::MatrixXd A;  ///< m x t candidate columns (t = 0: none)
  Eigen::VectorXd c;  ///< their t costs
  /// \f$\min_j (c_j - a_j^T y)\f$ over EVERY column of the full LP (those already in the
  /// master included), at the duals y the oracle was called with. This is what makes the
  /// answer certifiable: the engine turns it into the Lagrangian bound
  /// \f$b^T y + \kappa \min(0, \text{min\_reduced\_cost})\f$. NaN (the default) means the
  /// oracle is not exact (a heuristic): then no bound comes from this call, and running out of
  /// columns ends the solve without proof (SolveStatus::NumericalIssue, see
  /// solve_by_column_generation()). The engine also takes the minimum with the reduced costs it
  /// computes itself for the returned columns, so an oracle cannot overstate it with the very
  /// columns it returns.
  double min_reduced_cost = std::numeric_limits<double>::quiet_NaN();
  /// A lower bound on \f$\min_j (c_j - a_j^T y) / w_j\f$ over every column of the full LP at
  /// the duals y of the call, \f$w_j > 0\f$ the column weights of
  /// ColumnGenerationOptions::column_weight_bound. NaN (the default) = not computed. Used only
  /// with an exact min_reduced_cost and a finite column_weight_bound: the engine's bound is then
  /// also \f$b^T y + W \min(0, \text{ratio})\f$, and the higher of the two counts.
  double min_reduced_cost_ratio = std::numeric_limits<double>::quiet_NaN();
};

/// Options of solve_by_column_generation(). Every field has a documented default; check()
/// (called first by solve_by_column_generation()) throws std::invalid_argument naming the first
/// bad field.
///
/// \code{.cpp}
/// labeldp::optim::ColumnGenerationOptions opt;
/// opt.time_limit = 10;        // seconds for the whole solve; +infinity (the default) = none
/// opt.column_sum_bound = 1;   // kappa of the Lagrangian bound (LP (2) of Ghazi et al. 2023)
/// opt.check();                // throws e.g. "'time_limit' must be >= 0 seconds ..., got -1"
/// \endcode
struct ColumnGenerationOptions {
  /// Default 10000 rounds (>= 0; kUnlimited = no limit). Rounds that append columns before the
  /// solve stops with SolveStatus::IterationLimit. With 0 the master is solved and priced once:
  /// Optimal if that already proves optimality, IterationLimit otherwise (with the bound and gap
  /// of that one pricing).
  Index max_rounds = 10000;
  /// Default +infinity = no limit (seconds, >= 0). Wall-clock limit for the whole solve. Checked
  /// after every pricing round; every master solve after the first receives the remaining time
  /// (RevisedSimplex::set_time_limit()). The FIRST master solve is not limited by it, since
  /// without it there is neither a feasible solution nor a bound to return: time_limit = 0
  /// gives one solve, one pricing, and SolveStatus::TimeLimit (unless that already certifies
  /// the optimum) with the first master's solution and its bound.
  double time_limit = std::numeric_limits<double>::infinity();
  /// Default 1e-9 (relative, finite, >= 0). Stop with SolveStatus::Optimal when the best
  /// Lagrangian bound L satisfies \f$z - L \le \text{gap\_tolerance} \cdot |z + c_0|\f$, z the
  /// master objective, \f$c_0\f$ = objective_offset.
  double gap_tolerance = 1e-9;
  /// Default -infinity = none (not NaN). A lower bound on the LP optimum known from elsewhere
  /// (e.g. a relaxation without the hard constraints): it starts the best bound L, so the solve
  /// stops Optimal as soon as the master meets it within the gap tolerance (and the bound it
  /// reports is never below it). Dual bounds above it replace it as usual.
  double known_lower_bound = -std::numeric_limits<double>::infinity();
  /// Default 0 (finite). A constant \f$c_0\f$ the caller took out of the objective: the LP it
  /// means to solve has objective \f$c^T x + c_0\f$ (e.g. a cost shift by a part every feasible
  /// solution pays, like the non-private loss of the optimal-mechanism LP). Relative gaps are
  /// measured on that objective, \f$(z - L) / |z + c_0|\f$, so a master whose own objective is
  /// a small remainder is not held to a tolerance relative to the remainder. Bounds, objectives
  /// and duals stay those of the master (without \f$c_0\f$).
  double objective_offset = 0;
  /// Default +infinity = unknown (> 0, may be +infinity). \f$\kappa\f$: an upper bound on
  /// \f$\sum_j x_j\f$ over the oracle-priced variables of some optimal solution of the full LP,
  /// so that \f$b^T y + \kappa \min(0, \min_j \bar c_j)\f$ is a valid lower bound (Lagrangian
  /// relaxation; Lübbecke and Desrosiers 2005, Sec. 2.1). The caller derives it from its rows:
  /// LP (2) of Ghazi et al. 2023 has rows \f$\sum_j a_{yj} x_j = 1\f$ with entries
  /// \f$a_{yj} \ge 1\f$, so \f$\kappa = 1\f$; the unbiased staircase master has entries
  /// \f$\ge e^{-\varepsilon}\f$ in rows summing to 1, so \f$\kappa = e^{\varepsilon}\f$
  /// (1 / UnbiasedProblem::low). Any kappa for which the bound is valid will do: the unbiased
  /// master uses k / (1 + (k - 1) e^{-eps}) from its aggregated normalization rows (k labels),
  /// far below e^eps at large eps, where kappa multiplies the roundoff in the minimum reduced
  /// cost. Unknown: a bound then exists only where no reduced cost is negative.
  double column_sum_bound = std::numeric_limits<double>::infinity();
  /// Default +infinity = unused (> 0, may be +infinity). W of a weighted Lagrangian bound (in
  /// the style of Farley 1990): with weights \f$w_j > 0\f$ on the oracle-priced columns such
  /// that \f$\sum_j w_j x_j \le W\f$ for some optimal solution of the full LP, and an oracle
  /// that reports \f$\rho \le \min_j \bar c_j / w_j\f$ (PricedColumns::min_reduced_cost_ratio),
  /// \f$\sum_j \bar c_j x_j \ge \rho \sum_j w_j x_j \ge W \min(0, \rho)\f$, so
  /// \f$b^T y + W \min(0, \rho)\f$ is a lower bound like the kappa one (which is the case
  /// \f$w_j = 1\f$, \f$W = \kappa\f$); the engine keeps the higher of the two. It is tighter
  /// where the columns that price out have weights well above the least one: the staircase
  /// master's normalization rows give \f$w_j = k\ell + (1 - \ell)|T_j|\f$ and W = k
  /// (detail::staircase_min_ratio()), while kappa must assume the least weight for every column.
  double column_weight_bound = std::numeric_limits<double>::infinity();
  /// Default 0 = none (finite, >= 0). \f$\lambda\f$: a lower bound on the cost of every
  /// oracle-priced column (\f$c_j \ge \lambda\f$), when the master's other columns cost >= 0.
  /// Then every optimal solution has \f$\lambda \sum_j x_j \le \text{opt} \le z\f$ (z the
  /// master objective, an upper bound on the optimum), so \f$\min(\kappa, z / \lambda)\f$
  /// replaces column_sum_bound in the Lagrangian bound once a master is solved. It matters where
  /// the optimal solution's weights are far below kappa: the optimal-mechanism LP at large eps,
  /// whose optimum is a few \f$e^{-\varepsilon}\f$ while kappa is \f$e^\varepsilon\f$, so that
  /// kappa times the roundoff in the least reduced cost would exceed the gap.
  double min_column_cost = 0;
  /// Default 0 = plain column generation (in [0, 1)). Wentges dual smoothing weight
  /// \f$\alpha\f$: pricing is done at \f$\alpha\, y_{center} + (1 - \alpha)\, y_{master}\f$,
  /// \f$y_{center}\f$ the duals with the best Lagrangian bound so far (Wentges 1997; Pessoa et
  /// al. 2018, "mispricing"). When no column priced there improves the master, the round is
  /// priced again at the master's own duals, so the stopping test is always the exact one.
  /// Smoothing needs a finite column_sum_bound (no bound, no center).
  double dual_smoothing = 0;
  /// Default kUnlimited = all that improve (>= 1, or kUnlimited). At most this many columns are
  /// appended per round, those with the most negative reduced cost at the master's duals first.
  /// 0 is accepted as a synonym of kUnlimited for callers written before kUnlimited existed
  /// (it used to be the spelling of "all"); new code writes kUnlimited.
  Index max_columns_per_round = kUnlimited;
  /// Default empty = no warm start (m entries when given, finite, of the sign the rows allow).
  /// Duals of the full LP from elsewhere, e.g. an interior-point solution of the same LP. The
  /// first round is priced at them: their exact Lagrangian bound starts the certificate and they
  /// become the smoothing center, so a master that reaches the optimum stops at once instead of
  /// proving it round by round (near-optimal duals make a tailing-off column generation a
  /// crossover). The columns priced there are filtered at the master's duals as usual
  /// (mispricing re-prices at those). Never changes the answer, only the path to it.
  Eigen::VectorXd warm_duals;
  /// Default kUnlimited = off (>= 0, or kUnlimited). Tailing-off control (Lübbecke and
  /// Desrosiers 2005, Sec. 4.2: the master objective z nearly flat while the bound lags): from
  /// this many appending rounds on, a round appends only if z fell, over the last
  /// tailing_off_window rounds, by at least tailing_off_first_decrease (at the first check,
  /// round tailing_off_from) or tailing_off_decrease (after it), relative to
  /// \f$|z + c_0|\f$; otherwise the solve stops with SolveStatus::IterationLimit, its best master
  /// solution, bound and gap. A caller with a cheaper way to finish (an interior point)
  /// gives column generation that many rounds and more only while it converges fast.
  Index tailing_off_from = kUnlimited;
  /// Default 10 (>= 1). The window of the tailing-off test, in rounds.
  Index tailing_off_window = 10;
  /// Default 0.15 (finite, >= 0). Relative fall of z over the window required at the first
  /// check. Measured (unbiased grid LP, weeks-like k = 52, grid 416, check at round 41): z fell
  /// 33% over 10 rounds at eps 8 (which converges at round 60), 9% at eps 4, 6.5% at eps 3 and
  /// 1.2% at eps 2 (these tail off for 160-200 rounds).
  double tailing_off_first_decrease = 0.15;
  /// Default 0.05 (finite, >= 0). Relative fall of z over the window required after the first
  /// check.
  double tailing_off_decrease = 0.05;
  /// Default kUnlimited = off (>= 0, or kUnlimited). Bound test: from this many appending
  /// rounds on, a round appends only while the certified relative gap
  /// \f$(z - \mathrm{bound}) / |z + c_0|\f$ is below bound_test_gap; otherwise the solve stops
  /// with SolveStatus::IterationLimit, its best master solution, bound and gap. A caller with
  /// a cheaper way to finish gives column generation that many rounds, and more only while
  /// its Lagrangian bound says it is near the optimum.
  Index bound_test_from = kUnlimited;
  /// Default 1 (finite, > 0). The relative gap below which the bound test lets a round append
  /// (1: a positive bound on a positive objective).
  double bound_test_gap = 1;
  /// Default SimplexOptions{} (checked by check() under the prefix "simplex."). Simplex options
  /// for callers that build the master from these options; the engine itself uses the master's
  /// own options (RevisedSimplex::options()).
  SimplexOptions simplex{};

  /// Checks every field (and `simplex`) against the rule in its comment.
  /// \param path prefix of the field names in the message (an enclosing struct passes e.g.
  ///        "column_generation."); empty by default.
  /// \throws std::invalid_argument naming the first field out of range, e.g.
  ///         "'gap_tolerance' must be finite and non-negative, got -1".
  void check(std::string_view path = {}) const {
    const auto name = [&](const char* field) { return std::string(path) + field; };
    validate_count_limit(name("max_rounds"), max_rounds);
    validate_time_limit(name("time_limit"), time_limit);
    validate_finite_nonnegative(name("gap_tolerance"), gap_tolerance);
    if (std::isnan(known_lower_bound) || known_lower_bound == std::numeric_limits<double>::infinity())
      labeldp::detail::fail_parameter(name("known_lower_bound"), "must be a number below +infinity", known_lower_bound);
    if (!std::isfinite(objective_offset))
      labeldp::detail::fail_parameter(name("objective_offset"), "must be finite", objective_offset);
    if (std::isnan(column_sum_bound) || !(column_sum_bound > 0))
      labeldp::detail::fail_parameter(name("column_sum_bound"), "must be positive (infinity = unknown)",
                                      column_sum_bound);
    if (std::isnan(column_weight_bound) || !(column_weight_bound > 0))
      labeldp::detail::fail_parameter(name("column_weight_bound"), "must be positive (infinity = unused)",
                                      column_weight_bound);
    if (!(std::isfinite(min_column_cost) && min_column_cost >= 0))
      labeldp::detail::fail_parameter(name("min_column_cost"), "must be finite and non-negative", min_column_cost);
    if (!(dual_smoothing >= 0 && dual_smoothing < 1))
      labeldp::detail::fail_parameter(name("dual_smoothing"), "must be in [0, 1)", dual_smoothing);
    validate_count_limit(name("max_columns_per_round"), max_columns_per_round);
    validate_count_limit(name("tailing_off_from"), tailing_off_from);
    if (tailing_off_window < 1)
      labeldp::detail::fail_parameter(name("tailing_off_window"), "must be at least 1", double(tailing_off_window));
    validate_finite_nonnegative(name("tailing_off_first_decrease"), tailing_off_first_decrease);
    validate_finite_nonnegative(name("tailing_off_decrease"), tailing_off_decrease);
    validate_count_limit(name("bound_test_from"), bound_test_from);
    if (!(std::isfinite(bound_test_gap) && bound_test_gap > 0))
      labeldp::detail::fail_parameter(name("bound_test_gap"), "must be finite and positive", bound_test_gap);
    if (!warm_duals.allFinite()) throw std::invalid_argument("'" + name("warm_duals") + "' must be finite");
    simplex.check(name("simplex."));
  }
};

/// Result of solve_by_column_generation().
struct ColumnGenerationResult {
  /// Optimal (proved, see solve_by_column_generation()), IterationLimit, TimeLimit,
  /// NumericalIssue (pricing ran out of columns without proving optimality), or the status of a
  /// master solve that did not end optimal (Infeasible, Unbounded, ...).
  SolveStatus status = SolveStatus::NumericalIssue;
  /// The best master solution: the last master solve that ended optimal, so `x` is feasible
  /// for the full LP (padded with zeros for columns appended after it) and `objective` is an
  /// upper bound on its optimum; `duals` are that master's duals. If the very first master
  /// solve failed, that failed solve. `iterations` counts that one solve only.
  SimplexResult master;
  /// The best certified lower bound on the full LP's optimum (Lagrangian bound, see
  /// ColumnGenerationOptions::column_sum_bound), capped at master.objective; -infinity when
  /// none was obtained.
  double lower_bound = -std::numeric_limits<double>::infinity();
  /// Relative gap (master.objective - lower_bound) / |master.objective + objective_offset| (0
  /// when the bound meets the objective; +infinity without a bound or when that denominator is 0
  /// and the bound below the objective).
  double gap = std::numeric_limits<double>::infinity();
  /// The duals at which `lower_bound` was obtained (empty when none).
  Eigen::VectorXd bound_duals;
  Index rounds = 0;         ///< rounds that appended columns
  Index pricing_calls = 0;  ///< calls of the oracle (a mispriced round calls it twice)
  Index columns = 0;        ///< columns appended in total
  Index iterations = 0;     ///< simplex pivots over all master solves
  double seconds = 0;       ///< wall-clock time of the solve
};

/// A pricing oracle: maps a dual vector (m entries) to PricedColumns.
template <typename P>
concept PricingOracle = requires(P& p, const Eigen::VectorXd& duals) {
  { p(duals) } -> std::convertible_to<PricedColumns>;
};

/// The default column callback of solve_by_column_generation(): ignores the appended columns.
struct IgnoreAppendedColumns {
  /// Does nothing.
  void operator()(const std::vector<Index>& /*picked*/, Index /*first_column*/) const {}
};

/// Column generation (Dantzig-Wolfe / Gilmore-Gomory) with a certificate.
///
/// Round r: solve the master (warm from the previous basis, RevisedSimplex::add_columns());
/// y_m = its duals, projected onto the dual sign constraints (>= 0 for GreaterEqual rows,
/// <= 0 for LessEqual rows; a roundoff-level change) so that every Lagrangian bound is valid.
/// Price at y = alpha y_center + (1 - alpha) y_m (alpha = dual_smoothing once a center
/// exists, else 0): the oracle returns candidate columns and the minimum reduced cost mu(y)
/// over the full column space; L(y) = b^T y + kappa min(0, mu(y)) is a lower bound on the full
/// LP's optimum (weak duality), raised to b^T y + W min(0, rho(y)) when the oracle reports the
/// least ratio rho (ColumnGenerationOptions::column_weight_bound), and the best one so far
/// becomes the new center. Candidates are
/// kept when their reduced cost at y_m is below the master's own entering tolerance
/// (`dual_feasibility_tolerance * max(1, |c|_inf)`, the threshold below which the simplex
/// pivots a column in); if smoothing kept none (mispricing), the round is priced again at y_m.
/// The kept columns, most negative first and at most max_columns_per_round, are appended and
/// reported to `on_append`. Dedup is the oracle's business (columns already in the master
/// never pass the filter at y_m, but the oracle may want to skip them sooner).
///
/// Stopping, checked in this order after each pricing:
///  1. Optimal when the oracle, called at the master's own duals, reports mu(y_m) >= -tol with
///     tol the master's entering tolerance above (no column the master would pivot in exists:
///     the full LP is optimal to the simplex's own tolerance; the gap is then at most
///     kappa tol / |z|, reported in `gap`), or when the best bound is within gap_tolerance of the
///     master objective z (relative). Nothing else reports Optimal.
///  2. NumericalIssue when nothing passes the filter at y_m although the oracle did not prove
///     optimality (it reported mu(y_m) < -tol, or NaN): an oracle that returns non-improving
///     columns, caps them too hard, or is not exact. The master solution and bound are still
///     returned.
///  3. IterationLimit after max_rounds appending rounds, or when the tailing-off test
///     (ColumnGenerationOptions::tailing_off_from) fails; TimeLimit when time_limit has passed.
///  A master solve that does not end optimal ends the solve with its status (TimeLimit when the
///  remaining time ran out inside the simplex).
/// On every exit `master` is the best feasible master solution, `lower_bound` <= its objective
/// and `gap` their relative distance.
///
/// \param master the restricted master problem, feasible (give it artificial columns of high
///        cost if the initial columns may not be); receives the new columns. Its own
///        SimplexOptions::time_limit still bounds each solve (the first one included) and is
///        restored on return.
/// \param pricing the oracle, `PricedColumns(const Eigen::VectorXd& duals)` (PricingOracle).
/// \param options limits, tolerances, kappa, smoothing (ColumnGenerationOptions).
/// \param on_append called after each append as `on_append(picked, first_column)`: `picked[t]`
///        is the index, in the block the oracle returned last, of the column that became master
///        column `first_column + t`. Callers keep their own column metadata with it.
/// \return status, best master solution, bound, gap, counts (ColumnGenerationResult).
/// \throws std::invalid_argument on a bad option (ColumnGenerationOptions::check()) or when the
///         oracle returns a block whose shape does not match the master.
///
/// \code{.cpp}
/// // LP (2) of Ghazi et al. 2023: k equality rows (M's rows sum to 1), staircase columns with
/// // entries >= 1, hence kappa = 1.
/// labeldp::optim::RevisedSimplex master(initial_lp);
/// std::vector<Index> output_of;                       // caller's metadata per master column
/// std::vector<Index> last;                            // metadata of the last priced block
/// labeldp::optim::ColumnGenerationOptions opt;
/// opt.column_sum_bound = 1;
/// opt.dual_smoothing = 0.5;
/// auto r = labeldp::optim::solve_by_column_generation(
///     master,
///     [&](const Eigen::VectorXd& y) {
///       labeldp::optim::PricedColumns p = price_every_output(y, last);  // A, c, exact min
///       return p;
///     },
///     opt,
///     [&](const std::vector<Index>& picked, Index) {
///       for (Index t : picked) output_of.push_back(last[std::size_t(t)]);
///     });
/// if (r.status == labeldp::optim::SolveStatus::Optimal) use(r.master.x, r.lower_bound);
/// \endcode
template <typename Pricing, typename OnAppend = IgnoreAppendedColumns>
requires PricingOracle<Pricing> ColumnGenerationResult
solve_by_column_generation(RevisedSimplex& master, Pricing&& pricing, const ColumnGenerationOptions& options = {},
                           OnAppend&& on_append = OnAppend{}) {
  options.check();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  constexpr double inf = std::numeric_limits<double>::infinity();
  const Index m = master.num_rows();
  const Eigen::VectorXd b = master.problem().b;
  const std::vector<RowType> row_types = master.problem().row_types;
  double kappa = options.column_sum_bound;
  // The simplex's entering threshold (phase 2): a column enters only below -tol.
  double cost_scale = std::max(1.0, master.problem().c.size() ? master.problem().c.cwiseAbs().maxCoeff() : 0.0);
  const auto entering_tolerance = [&] { return master.options().dual_feasibility_tolerance * cost_scale; };

  // The master's own per-solve limit (SimplexOptions::time_limit) stays an upper bound for
  // every solve and is restored on return.
  const double master_time_limit = master.options().time_limit;
  ColumnGenerationResult result;
  if (options.warm_duals.size() != 0 && options.warm_duals.size() != m)
    throw std::invalid_argument("'warm_duals' has " + std::to_string(options.warm_duals.size()) +
                                " entries, the master has " + std::to_string(m) + " rows");
  Eigen::VectorXd center;  // empty while the best bound is the known one (no duals of its own)
  double best_bound = options.known_lower_bound;
  bool have_master = false;
  std::vector<double> objectives;  // the master objective of every round (tailing-off test)

  const auto finish = [&](SolveStatus status) {
    result.status = status;
    if (have_master && result.master.x.size() < master.num_columns()) {
      const Index n0 = result.master.x.size();
      result.master.x.conservativeResize(master.num_columns());
      result.master.x.tail(master.num_columns() - n0).setZero();
    }
    if (have_master) {
      const double z = result.master.objective;
      result.lower_bound = std::min(best_bound, z);
      result.bound_duals = center;
      const double diff = z - result.lower_bound;
      if (!(best_bound > -inf))
        result.gap = inf;
      else if (diff <= 0)
        result.gap = 0;
      else
        result.gap = z + options.objective_offset != 0 ? diff / std::abs(z + options.objective_offset) : inf;
    }
    master.set_time_limit(master_time_limit);
    result.seconds = elapsed();
    return result;
  };

  // Dual sign constraints of min c^T x, A x (=, <=, >=) b, x >= 0.
  const auto project = [&](Eigen::VectorXd y) {
    for (Index i = 0; i < m; ++i) {
      if (row_types[std::size_t(i)] == RowType::GreaterEqual)
        y[i] = std::max(y[i], 0.0);
      else if (row_types[std::size_t(i)] == RowType::LessEqual)
        y[i] = std::min(y[i], 0.0);
    }
    return y;
  };

  for (;;) {
    if (have_master) {
      const double remaining = options.time_limit - elapsed();
      if (remaining <= 0) return finish(SolveStatus::TimeLimit);
      master.set_time_limit(std::min(remaining, master_time_limit));
    }
    SimplexResult solve = master.solve();
    result.iterations += solve.iterations;
    if (solve.status != SolveStatus::Optimal) {
      if (!have_master) result.master = std::move(solve);
      return finish(solve.status);
    }
    result.master = std::move(solve);
    have_master = true;
    const Eigen::VectorXd y_master = project(result.master.duals);
    if (options.min_column_cost > 0 && result.master.objective >= 0)
      kappa = std::min(kappa, result.master.objective / options.min_column_cost);
    const double tol = entering_tolerance();

    // The warm start's duals are priced first (alpha = 1 at them), once.
    double alpha = center.size() ? options.dual_smoothing : 0.0;
    if (options.warm_duals.size() && result.pricing_calls == 0) {
      center = project(options.warm_duals);
      alpha = 1;
    }
    PricedColumns priced;
    Eigen::VectorXd rc_master;  // reduced costs of the priced columns at y_master
    bool exact_at_master = false;
    for (;;) {
      const Eigen::VectorXd y = alpha == 1  ? center
                                : alpha > 0 ? Eigen::VectorXd(alpha * center + (1 - alpha) * y_master)
                                            : y_master;
      priced = pricing(static_cast<const Eigen::VectorXd&>(y));
      ++result.pricing_calls;
      if (priced.A.rows() != m && !(priced.A.cols() == 0 && priced.A.rows() == 0))
        throw std::invalid_argument("pricing returned columns with " + std::to_string(priced.A.rows()) +
                                    " rows, the master has " + std::to_string(m));
      if (priced.A.cols() != priced.c.size())
        throw std::invalid_argument("pricing returned " + std::to_string(priced.A.cols()) + " columns but " +
                                    std::to_string(priced.c.size()) + " costs");
      const Index t = priced.A.cols();
      Eigen::VectorXd rc_y(t);
      if (t > 0) rc_y.noalias() = priced.c - priced.A.transpose() * y;
      double mu = priced.min_reduced_cost;
      if (!std::isnan(mu) && t > 0) mu = std::min(mu, rc_y.minCoeff());
      if (!std::isnan(mu)) {
        double bound = mu >= 0 ? b.dot(y) : (std::isinf(kappa) ? -inf : b.dot(y) + kappa * mu);
        if (mu < 0 && !std::isnan(priced.min_reduced_cost_ratio) && std::isfinite(options.column_weight_bound))
          bound =
              std::max(bound, b.dot(y) + options.column_weight_bound * std::min(0.0, priced.min_reduced_cost_ratio));
        if (bound > best_bound) {
          best_bound = bound;
          center = y;
        }
      }
      if (!(best_bound > -inf)) center.resize(0);  // warm duals without a bound: no center
      if (alpha > 0) {
        rc_master.resize(t);
        if (t > 0) rc_master.noalias() = priced.c - priced.A.transpose() * y_master;
      } else {
        rc_master = rc_y;
        exact_at_master = !std::isnan(mu) && mu >= -tol;
      }
      bool any = false;
      for (Index j = 0; j < t && !any; ++j) any = rc_master[j] < -tol;
      if (any || alpha == 0) break;
      alpha = 0;  // mispricing: price again at the master's own duals
    }

    const double z = result.master.objective;
    if (exact_at_master ||
        (best_bound > -inf && z - best_bound <= options.gap_tolerance * std::abs(z + options.objective_offset)))
      return finish(SolveStatus::Optimal);
    std::vector<Index> picked;
    for (Index j = 0; j < rc_master.size(); ++j)
      if (rc_master[j] < -tol) picked.push_back(j);
    if (picked.empty()) return finish(SolveStatus::NumericalIssue);
    if (result.rounds >= options.max_rounds) return finish(SolveStatus::IterationLimit);
    objectives.push_back(z);
    const Index round = result.rounds, window = options.tailing_off_window;
    if (round >= options.tailing_off_from && round >= window) {
      const double needed =
          round == options.tailing_off_from ? options.tailing_off_first_decrease : options.tailing_off_decrease;
      if (!(objectives[std::size_t(round - window)] - z >= needed * std::abs(z + options.objective_offset)))
        return finish(SolveStatus::IterationLimit);
    }
    if (round >= options.bound_test_from &&
        !(z - best_bound < options.bound_test_gap * std::abs(z + options.objective_offset)))
      return finish(SolveStatus::IterationLimit);
    if (elapsed() >= options.time_limit) return finish(SolveStatus::TimeLimit);

    std::stable_sort(picked.begin(), picked.end(), [&](Index u, Index v) { return rc_master[u] < rc_master[v]; });
    // 0: the old spelling of kUnlimited (ColumnGenerationOptions::max_columns_per_round).
    if (options.max_columns_per_round > 0 && Index(picked.size()) > options.max_columns_per_round)
      picked.resize(std::size_t(options.max_columns_per_round));
    const Index first = master.num_columns(), count = Index(picked.size());
    Eigen::MatrixXd A_new(m, count);
    Eigen::VectorXd c_new(count);
    for (Index t = 0; t < count; ++t) {
      A_new.col(t) = priced.A.col(picked[std::size_t(t)]);
      c_new[t] = priced.c[picked[std::size_t(t)]];
    }
    master.add_columns(A_new, c_new);
    cost_scale = std::max(cost_scale, c_new.cwiseAbs().maxCoeff());
    on_append(static_cast<const std::vector<Index>&>(picked), first);
    ++result.rounds;
    result.columns += count;
  }
}

}  // namespace labeldp::optim
