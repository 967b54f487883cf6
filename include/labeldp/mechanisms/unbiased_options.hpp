/// \file
/// Options and result of the optimal unbiased and bias-bounded randomizer solvers
/// (Badanidiyuru et al. 2023, Alg. 1 and its bias-bounded extension): UnbiasedOptions (bias
/// bound B of \f$|E[M(y)] - y| \le B\f$, output range, column-generation, simplex and time
/// limits, certificate tolerance), ContinuousMethod and UnbiasedResult (status, mechanism, loss,
/// achieved bias, certified lower bound and gap).
#pragma once

#include <cmath>
#include <limits>

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

/// Options of the optimal unbiased / bias-bounded randomizer solvers.
struct UnbiasedOptions {
  /// B >= 0: require \f$|E[M(y)] - y| \le B\f$ for every label; 0 = unbiased (Alg. 1).
  double max_bias = 0;
  /// Continuous solver only: outputs restricted to [output_lower, output_upper] (default: the
  /// whole real line). Lemma 8 compares a grid with the optimum over \f$[L, U]\f$.
  double output_lower = -std::numeric_limits<double>::infinity();
  double output_upper = std::numeric_limits<double>::infinity();
  /// Column-generation rounds before giving up with SolveStatus::IterationLimit.
  Index max_rounds = 10000;
  /// A column enters when its reduced cost (scaled units, costs of order 1) is below minus this.
  double pricing_tolerance = 1e-9;
  /// Continuous solver only: size of the grid (over [L, U]) solved first to seed the exact
  /// solver with near-optimal columns; -1 = automatic (4k), 0 or 1 = no seeding. Seeding cuts the
  /// exact solver's rounds several-fold; it never changes the optimum.
  Index seed_grid_size = -1;
  /// Columns added to the master per pricing round, most negative reduced cost first;
  /// -1 = automatic (2k), 0 = all that price out.
  Index max_columns_per_round = -1;
  /// Wentges dual smoothing in [0, 1): pricing uses this weight on the best-bound duals (0 =
  /// plain column generation); -1 = automatic (0.5 from 100 labels on, where it cut the rounds
  /// by a third in our measurements; 0 below, where it cost more than it saved). Never changes
  /// the optimum, only the path to it.
  double dual_smoothing = -1;
  /// Wall-clock limit in seconds (>= 0; infinity, the default: none). On a finite output set
  /// (optimal_unbiased_on_outputs(), optimal_unbiased_grid()) it covers the whole call: the
  /// column-generation stage, every interior-point iteration and the crossover get what the
  /// earlier stages left; for the continuous solver it limits each column-generation solve.
  /// When it passes, the solve stops with SolveStatus::TimeLimit and the best feasible master
  /// so far with its certified bound and gap (optim::ColumnGenerationOptions). Not interrupted:
  /// the first simplex solve of a column-generation stage (there is no feasible answer before it).
  double time_limit = std::numeric_limits<double>::infinity();
  /// Column generation stops as Optimal once its certified lower bound is within this relative
  /// gap of the master's objective (finite, >= 0; or when exact pricing at the master's duals
  /// finds no column the simplex would pivot in).
  double gap_tolerance = 1e-9;
  /// Options of the master's simplex.
  optim::SimplexOptions simplex{};
  /// Continuous solver only: how to reach the optimum (ContinuousMethod::Automatic: the
  /// interior-point method over interval patterns whenever it applies, column generation
  /// otherwise or as its fallback).
  ContinuousMethod continuous_method = ContinuousMethod::Automatic;
};

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

namespace detail {

inline void validate_unbiased_options(const UnbiasedOptions& o) {
  validate_finite_nonnegative("max_bias", o.max_bias);
  if (std::isnan(o.output_lower)) fail_parameter("output_lower", "must not be NaN", o.output_lower);
  if (std::isnan(o.output_upper)) fail_parameter("output_upper", "must not be NaN", o.output_upper);
  if (!(o.output_lower < o.output_upper))
    throw std::invalid_argument("'output_lower' must be below 'output_upper', got " + format_number(o.output_lower) +
                                " and " + format_number(o.output_upper));
  if (o.max_rounds < 1) fail_parameter("max_rounds", "must be at least 1", double(o.max_rounds));
  if (o.max_columns_per_round < -1)
    fail_parameter("max_columns_per_round", "must be -1 (automatic), 0 (all) or positive",
                   double(o.max_columns_per_round));
  if (!(o.dual_smoothing == -1 || (o.dual_smoothing >= 0 && o.dual_smoothing < 1)))
    fail_parameter("dual_smoothing", "must be -1 (automatic) or in [0, 1)", o.dual_smoothing);
  if (o.seed_grid_size < -1)
    fail_parameter("seed_grid_size", "must be -1 (automatic) or >= 0", double(o.seed_grid_size));
  if (!std::isfinite(o.pricing_tolerance) || !(o.pricing_tolerance > 0))
    fail_parameter("pricing_tolerance", "must be finite and positive", o.pricing_tolerance);
  if (std::isnan(o.time_limit) || o.time_limit < 0)
    fail_parameter("time_limit", "must be >= 0 seconds (infinity = no limit)", o.time_limit);
  if (!std::isfinite(o.gap_tolerance) || o.gap_tolerance < 0)
    fail_parameter("gap_tolerance", "must be finite and >= 0", o.gap_tolerance);
}

}  // namespace detail

}  // namespace labeldp
