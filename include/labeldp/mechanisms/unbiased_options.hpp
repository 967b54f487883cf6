/// \file
/// Options and result of the optimal unbiased and bias-bounded randomizer solvers
/// (Badanidiyuru et al. 2023, Alg. 1 and its bias-bounded extension): UnbiasedOptions (bias
/// bound B of \f$|E[M(y)] - y| \le B\f$, output range, column-generation, simplex and time
/// limits, certificate tolerance; check()), ContinuousMethod and UnbiasedResult (status,
/// mechanism, loss, achieved bias, certified lower bound and gap).
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp {

/// Algorithm of optimal_unbiased_continuous().
enum class ContinuousMethod {
  /// InteriorPoint when it applies (outputs on the whole real line), falling back to
  /// ColumnGeneration if it does not certify its answer; ColumnGeneration otherwise.
  Automatic,
  /// Primal-dual interior-point method over all \f$k(k+1)/2\f$ interval patterns with free
  /// outputs (Claim 11), then crossover and Newton polish (detail/unbiased_barrier.hpp);
  /// O(k^2) work plus one Cholesky factorization of order 2k per iteration. Applies to an
  /// unrestricted output range only (otherwise column generation is used); with a bias bound
  /// it ends in an LP crossover instead of the polish (detail/interval_bias.hpp).
  InteriorPoint,
  /// Column generation over (pattern, real output) columns with exact pricing, seeded by a
  /// grid solve (the paper's LP structure; slower, kept as the reference and for bias bounds
  /// and output ranges).
  ColumnGeneration
};

using optim::kAutomatic;
using optim::kUnlimited;

/// Options of the optimal unbiased / bias-bounded randomizer solvers (optimal_unbiased_grid(),
/// optimal_unbiased_on_outputs(), optimal_unbiased_continuous(), optimal_unbiased_reference()).
/// Every field has a documented default; check() (called first by every one of them) throws
/// std::invalid_argument naming the first bad field, nested ones with their path
/// ("'simplex.pivot_tolerance' ..."). Limits mean what they say at 0; no limit is kUnlimited
/// (counts) or +infinity (seconds); kAutomatic (-1) lets the solver choose where a field allows
/// it.
///
/// \code{.cpp}
/// labeldp::UnbiasedOptions opt;
/// opt.max_bias = 0.5;      // |E[M(y)] - y| <= 0.5 for every label (0, the default: unbiased)
/// opt.time_limit = 10;     // seconds; +infinity (the default) = none
/// auto r = labeldp::optimal_unbiased_grid(prior, 1.0, 416, opt);
/// \endcode
struct UnbiasedOptions {
  /// Default 0 = unbiased, Alg. 1 (label units, finite, >= 0). B: require
  /// \f$|E[M(y)] - y| \le B\f$ for every label.
  double max_bias = 0;
  /// Default -infinity (label units, not NaN, below output_upper). Continuous solver only: the
  /// lower end of the output range [output_lower, output_upper] (default: the whole real line).
  /// Lemma 8 compares a grid with the optimum over \f$[L, U]\f$.
  double output_lower = -std::numeric_limits<double>::infinity();
  /// Default +infinity (label units, not NaN, above output_lower). Continuous solver only: the
  /// upper end of the output range.
  double output_upper = std::numeric_limits<double>::infinity();
  /// Default 10000 rounds (>= 0; kUnlimited = no limit). Column-generation rounds before giving
  /// up with SolveStatus::IterationLimit; 0: the master is solved and priced once
  /// (ColumnGenerationOptions::max_rounds).
  Index max_rounds = 10000;
  /// Default 1e-9 (scaled cost units, costs of order 1; finite, > 0). A column enters when its
  /// reduced cost is below minus this.
  double pricing_tolerance = 1e-9;
  /// Default kAutomatic = 4k points (kAutomatic or >= 0; 0 = no seeding, and so is 1: a
  /// one-point grid seeds nothing). Continuous solver only: size of the grid (over [L, U]) solved
  /// first to seed the exact solver with near-optimal columns. Seeding cuts the exact solver's
  /// rounds several-fold; it never changes the optimum.
  Index seed_grid_size = kAutomatic;
  /// Default kAutomatic = 2k columns (kAutomatic, >= 1, or kUnlimited = all that price out).
  /// Columns added to the master per pricing round, most negative reduced cost first. 0 is
  /// accepted as a synonym of kUnlimited (its spelling before kUnlimited existed); new code
  /// writes kUnlimited.
  Index max_columns_per_round = kAutomatic;
  /// Default kAutomatic (-1) = 0.5 from 100 labels on, where it cut the rounds by a third in our
  /// measurements, 0 below, where it cost more than it saved (kAutomatic or in [0, 1); 0 = plain
  /// column generation). Wentges dual smoothing: pricing uses this weight on the best-bound
  /// duals. Never changes the optimum, only the path to it.
  double dual_smoothing = double(kAutomatic);
  /// Default +infinity = no limit (seconds, >= 0). Wall-clock limit. On a finite output set
  /// (optimal_unbiased_on_outputs(), optimal_unbiased_grid()) it covers the whole call: the
  /// column-generation stage, every interior-point iteration and the crossover get what the
  /// earlier stages left; for the continuous solver too, except that its interior point and
  /// crossover LP are not interrupted (the column-generation stages get what they left).
  /// When it passes, the solve stops with SolveStatus::TimeLimit and the best feasible master
  /// so far with its certified bound and gap (optim::ColumnGenerationOptions). Not interrupted:
  /// the first simplex solve of a column-generation stage (there is no feasible answer before it).
  double time_limit = std::numeric_limits<double>::infinity();
  /// Default 1e-9 (relative, finite, >= 0). Column generation stops as Optimal once its certified
  /// lower bound is within this relative gap of the master's objective (or when exact pricing at
  /// the master's duals finds no column the simplex would pivot in).
  double gap_tolerance = 1e-9;
  /// Default optim::SimplexOptions{} (checked under "simplex."). Options of the master's simplex.
  optim::SimplexOptions simplex{};
  /// Default ContinuousMethod::Automatic: the interior-point method over interval patterns
  /// whenever it applies, column generation otherwise or as its fallback. Continuous solver only.
  ContinuousMethod continuous_method = ContinuousMethod::Automatic;
  /// Default 200 (>= 0). With a bias bound, the most re-solves of the continuous solver's interior
  /// point with the patterns that are not intervals and price out at its last centre
  /// (detail::bias_bounded_barrier()); 0: none, the interior point over interval patterns only,
  /// then column generation from its crossover. Continuous solver only. Not 60 (the default
  /// until 2026-12): on lognormal priors whose probabilities were perturbed by a relative 1e-9
  /// (eight seeds per case), some solves stopped at 60 re-solves still pricing patterns out, and
  /// column generation then took 100-140 rounds: k = 150, B = 20, eps 2, worst of twelve 19.4 ->
  /// 1.8 s CPU; k = 100, B = 20, eps 1 / 2, worst 3.2 -> 0.8 s and 4.2 -> 0.8 s (61-75 re-solves
  /// sufficed). A re-solve costs 5-25 Newton steps.
  Index bias_pattern_rounds = 200;
  /// Default 256 (>= 1). The most prior values a solve accepts: more are refused before anything
  /// is allocated (time grows faster than the square of the count: 256 values take about 1 s
  /// continuous and 4 s on a 1,000-point grid, 1,000 values 26-33 s, 10,000 ran out of 2 GB).
  Index max_labels = 256;
  /// Default 2^18 = 262,144 (>= 1). On a finite output set (optimal_unbiased_on_outputs(),
  /// optimal_unbiased_grid()): the most (prior value, output) pairs accepted, refused before the
  /// grid is allocated (3 values x 1,000,000 grid points take 0.8 s, 256 x 100,000 did not end).
  Index max_cells = Index(1) << 18;

  /// Checks every field (and `simplex`) against the rule in its comment.
  /// \throws std::invalid_argument naming the first bad field, the rule and the value, e.g.
  ///         "'max_bias' must be finite and non-negative, got -0.5".
  void check() const {
    validate_finite_nonnegative("max_bias", max_bias);
    if (std::isnan(output_lower)) detail::fail_parameter("output_lower", "must not be NaN", output_lower);
    if (std::isnan(output_upper)) detail::fail_parameter("output_upper", "must not be NaN", output_upper);
    if (!(output_lower < output_upper))
      throw std::invalid_argument("'output_lower' must be below 'output_upper', got " +
                                  detail::format_number(output_lower) + " and " + detail::format_number(output_upper));
    optim::validate_count_limit("max_rounds", max_rounds);
    validate_finite_positive("pricing_tolerance", pricing_tolerance);
    if (seed_grid_size < 0 && seed_grid_size != kAutomatic)
      detail::fail_parameter("seed_grid_size", "must be -1 (automatic) or >= 0", double(seed_grid_size));
    if (max_columns_per_round < 0 && max_columns_per_round != kAutomatic)
      detail::fail_parameter("max_columns_per_round", "must be -1 (automatic), positive, or kUnlimited (all)",
                             double(max_columns_per_round));
    if (!(dual_smoothing == double(kAutomatic) || (dual_smoothing >= 0 && dual_smoothing < 1)))
      detail::fail_parameter("dual_smoothing", "must be -1 (automatic) or in [0, 1)", dual_smoothing);
    optim::validate_time_limit("time_limit", time_limit);
    validate_finite_nonnegative("gap_tolerance", gap_tolerance);
    simplex.check("simplex.");
    if (bias_pattern_rounds < 0)
      detail::fail_parameter("bias_pattern_rounds", "must be at least 0", double(bias_pattern_rounds));
    if (max_labels < 1) detail::fail_parameter("max_labels", "must be at least 1", double(max_labels));
    if (max_cells < 1) detail::fail_parameter("max_cells", "must be at least 1", double(max_cells));
    if (continuous_method != ContinuousMethod::Automatic && continuous_method != ContinuousMethod::InteriorPoint &&
        continuous_method != ContinuousMethod::ColumnGeneration)
      detail::fail_parameter("continuous_method", "must be Automatic, InteriorPoint or ColumnGeneration",
                             double(static_cast<int>(continuous_method)));
  }
};

namespace detail {
/// Refuses a solve over `labels` prior values and `outputs` outputs (0: continuous) beyond the
/// limits of `options` (UnbiasedOptions::max_labels, max_cells), naming the limit.
inline void check_unbiased_size(const UnbiasedOptions& options, Index labels, double outputs) {
  if (labels > options.max_labels)
    throw std::invalid_argument("the unbiased randomizer takes at most " + std::to_string(options.max_labels) +
                                " prior values (UnbiasedOptions::max_labels), got " + std::to_string(labels));
  if (double(labels) * outputs > double(options.max_cells))
    throw std::invalid_argument("the unbiased randomizer takes at most " + std::to_string(options.max_cells) +
                                " (prior value, output) pairs (UnbiasedOptions::max_cells), got " +
                                std::to_string(labels) + " values x " + detail::format_number(outputs) + " outputs");
}

/// Refuses an unbiased solve whose dbRR outputs (about k (label range) / eps) overflow.
[[noreturn]] inline void refuse_unbiased_overflow(double eps) {
  throw std::invalid_argument("eps " + detail::format_number(eps) +
                              " is too small (or the labels too large) for an unbiased randomizer: its outputs, "
                              "about k * (label range) / eps in magnitude, overflow a double");
}
}  // namespace detail

/// Outcome of an unbiased-randomizer solve. `mechanism` is the optimal one when
/// `status == optim::SolveStatus::Optimal` (certified: `gap` <= UnbiasedOptions::gap_tolerance).
/// When a limit stopped the solve (TimeLimit, IterationLimit) after a feasible master was found,
/// or roundoff kept the certificate above the tolerance (NumericalIssue), `mechanism` is the best
/// feasible mechanism found (eps-DP, rows summing to 1, bias within the bound) and `gap` says how
/// far from optimal it may be; otherwise it is empty (no outputs).
template <typename Scalar = double>
struct UnbiasedResult {
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;  ///< solver outcome
  FiniteMechanism<Scalar> mechanism;                               ///< only positive-probability outputs; rows sum to 1
  /// \f$\sum_y p_y E[\ell(M(y), y)]\f$ with the solver's loss (SquaredLoss: \f$(o - y)^2\f$, i.e.
  /// twice the paper's \f$\mathcal{G}\f$ with g = (o-y)^2/2).
  Scalar expected_loss = 0;
  Scalar max_bias = 0;           ///< achieved \f$\max_y |E[M(y)] - y|\f$
  Index rounds = 0;              ///< column-generation rounds (pricing calls)
  Index columns = 0;             ///< columns in the final master
  Index simplex_iterations = 0;  ///< simplex pivots in total
  /// A certified lower bound on the optimal expected loss (over the grid, or over every real
  /// output in the range for the continuous solver), in the units of `expected_loss`, by weak
  /// duality from the final duals \f$(\pi, \sigma)\f$ and exact pricing:
  /// \f$1^T\pi + y^T\sigma - B \|\sigma\|_1 + \kappa \min(0, \min \text{reduced cost})\f$, where
  /// \f$\kappa = \min(e^\varepsilon, k / (1 + (k - 1) e^{-\varepsilon}))\f$ bounds the sum of the
  /// staircase column weights (entries \f$e^{-\varepsilon}\f$ or 1; the k normalization rows
  /// summed). `expected_loss - lower_bound` bounds the distance to the true optimum. NaN when
  /// not computed.
  Scalar lower_bound = std::numeric_limits<Scalar>::quiet_NaN();
  /// Relative gap \f$(\text{expected\_loss} - \text{lower\_bound}) / \text{expected\_loss}\f$
  /// (0 when the bound meets the loss to roundoff; infinity when no bound was computed).
  Scalar gap = std::numeric_limits<Scalar>::infinity();
  Index interior_point_iterations = 0;  ///< interior-point iterations (continuous solver)
  /// True when the solve ended optimal.
  bool optimal() const { return status == optim::SolveStatus::Optimal; }
};

}  // namespace labeldp
