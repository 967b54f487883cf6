/// \file
/// The optimal unbiased (or bias-bounded) randomizer on a finite output set: ComputeOptUnbiasedRand
/// (Badanidiyuru et al. 2023, Alg. 1) by column generation over staircase columns, switching to
/// the staircase interior point (detail/staircase_barrier.hpp) and an exact crossover when
/// column generation tails off; on the FeasibleOutputSet grid (Alg. 2, Proposition 7); and the
/// slow reference, Alg. 1's LP exactly as printed.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/lp_columns.hpp"
#include "labeldp/mechanisms/detail/staircase_barrier.hpp"
#include "labeldp/mechanisms/detail/unbiased_finish.hpp"
#include "labeldp/mechanisms/detail/unbiased_lp.hpp"
#include "labeldp/mechanisms/detail/unbiased_master.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_outputs.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp {

namespace detail {

/// optimal_unbiased_on_outputs() before its final bias check.
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> UnbiasedResult<Scalar> solve_unbiased_on_outputs(
    const FinitePrior<Scalar>& prior, double eps, const Vector<Scalar>& outputs, const UnbiasedOptions& options = {},
    const Loss& loss = Loss{}) {
  options.check();
  validate_epsilon(eps);
  eps = table_epsilon(eps);  // beyond 700 the table is computed at 700 (core/validate.hpp)
  if (outputs.size() == 0) throw std::invalid_argument("'outputs' must not be empty");
  if (prior.size() > 1) detail::check_unbiased_size(options, prior.size(), double(outputs.size()));
  for (Index j = 0; j < outputs.size(); ++j) {
    validate_finite("outputs", double(outputs[j]));
    if (j > 0 && !(outputs[j] > outputs[j - 1]))
      throw std::invalid_argument("'outputs' must be strictly increasing, got " +
                                  detail::format_number(double(outputs[j - 1])) + " then " +
                                  detail::format_number(double(outputs[j])));
  }
  for (Index i = 0; i < prior.size(); ++i) loss.validate_label(prior.value(i));
  // options.time_limit covers the whole call: every stage gets what the earlier ones left.
  const auto start = std::chrono::steady_clock::now();
  const auto remaining = [&] {
    return std::max(
        0.0, options.time_limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  const detail::UnbiasedProblem P = detail::make_unbiased_problem(prior, eps, options.max_bias);
  const Index k = P.num_labels(), n = outputs.size();
  std::vector<double> original(static_cast<std::size_t>(n));
  Eigen::VectorXd scaled(n);
  for (Index j = 0; j < n; ++j) {
    original[std::size_t(j)] = double(outputs[j]);
    scaled[j] = (double(outputs[j]) - P.shift) / P.scale;
  }
  // Costs are divided by the loss across the dbRR interval so that they are of order 1; a
  // positive factor changes no minimizer.
  double cost_unit = double(loss(Scalar(P.shift + P.scale), Scalar(P.shift - P.scale)));
  if (!(cost_unit > 0) || !std::isfinite(cost_unit)) cost_unit = 1;
  Eigen::MatrixXd loss_values(k, n), weighted(k, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < k; ++i) {
      loss_values(i, j) = double(loss(outputs[j], prior.value(i))) / cost_unit;
      weighted(i, j) = P.probs[i] * loss_values(i, j);
    }
  if (!loss_values.allFinite())
    throw std::invalid_argument("the loss overflows at some (output, label) pair, outputs reaching " +
                                detail::format_number(std::max(std::abs(original.front()), std::abs(original.back()))) +
                                ": eps " + detail::format_number(eps) +
                                " is too small (or the labels too large) for an unbiased randomizer on these outputs");

  // Two-label dbRR interval (proof of Prop. 7): the two-point mechanism on the extreme outputs
  // is eps-DP iff they bracket it.
  const double e = std::exp(eps), w = std::expm1(eps);
  const double ymin = P.labels[0], ymax = P.labels[k - 1];
  const bool bracketed =
      k == 1 ? (scaled[0] <= ymin && scaled[n - 1] >= ymax)
             : (scaled[0] <= (e * ymin - ymax) / w + 1e-12 && scaled[n - 1] >= (e * ymax - ymin) / w - 1e-12);
  // The two-point mechanism is feasible on any pair of outputs that brackets that interval,
  // and the innermost such pair of the grid is by far the cheapest start: the two-label
  // interval is about k/2 times narrower than FeasibleOutputSet's [L, U] (k = 52, eps = 1:
  // 110 against 1,595 label units), and the two-point mechanism's loss grows with the square of
  // its outputs' distance from the labels. The master starts from its one-sided columns (the
  // crash basis of solve_staircase_master); the margin keeps the decomposition's weights clear
  // of zero, since the staircase ratio 1/low is a rounding below e^eps.
  Index lo_index = 0, hi_index = n - 1;
  if (bracketed && k > 1) {
    const double margin = 1e-9;
    while (lo_index + 1 < n && scaled[lo_index + 1] <= (e * ymin - ymax) / w - margin) ++lo_index;
    while (hi_index - 1 > lo_index && scaled[hi_index - 1] >= (e * ymax - ymin) / w + margin) --hi_index;
  }
  std::vector<detail::StaircaseColumn> initial = detail::one_sided_columns(k, scaled[lo_index], lo_index);
  for (auto& c : detail::one_sided_columns(k, scaled[hi_index], hi_index)) initial.push_back(std::move(c));
  // Which path. Column generation on the staircase master is fast while it converges in few
  // rounds (the papers' priors at eps = 1: a few ms) but can tail off for hundreds of rounds
  // (near-uniform priors, large eps); the interior-point method on the compact LP
  // (detail/staircase_barrier.hpp) has a predictable cost. Rule (ski rental): give column
  // generation a budget of rounds worth the barrier's predicted work, then switch. Cost model
  // (flop-equivalents; the constants were measured on this code, one core): a round is a warm
  // re-solve of the m = 2k row master, about m pivots of O(m^2) basis work plus pricing products
  // over the master's columns, ~8 m^3; the barrier is ~40 iterations of ~200 n k for the
  // per-output blocks plus min(m^2 n, m n^2) + min(m, n)^3 / 3 for the normal equations.
  // Measured (weeks-like k = 52, grid 416, CPU time): the budget is 41 rounds; eps 8 needs 60
  // (with the interval neighbours in the pricing) where eps 2 / 3 / 4 tail off past 160 rounds,
  // and the gap at the budget does not tell them apart (eps 8: 22.5 at round 41; eps 2: 1.9),
  // but the master objective's recent fall does (the tailing-off test of `price` below).
  const double m_rows = double(2 * k), n_out = double(n);
  // The normal matrix's factorization, the cheaper of dense (m^2 n + m^3 / 3) and Woodbury
  // (m n^2 + n^3 / 3); also the corrector rule's measure below.
  const double factorization_work =
      std::min(m_rows * m_rows * n_out + std::pow(m_rows, 3) / 3, m_rows * n_out * n_out + std::pow(n_out, 3) / 3);
  const double barrier_work = 40.0 * (200.0 * n_out * double(k) + factorization_work);
  const Index budget = std::max<Index>(2, Index(std::ceil(barrier_work / (8 * std::pow(m_rows, 3)))));
  // The other known feasible start: dbRR moved onto the grid (detail::debiased_rr_crash()),
  // near the optimum at large eps where the two-point mechanism is far from it (weeks-like
  // k = 52, grid 416, eps 12: 309 column-generation rounds from the two-point start, 10 from
  // dbRR). Whichever of the two has the smaller loss is the master's crash basis.
  // Only column generation uses it: when the barrier goes first (budget below 4 rounds) it is
  // not computed (near-uniform k = 214, grid 51: 6% of the solve).
  const bool column_generation_first = options.max_rounds <= budget || budget >= 4;
  detail::StaircaseCrash crash;
  if (column_generation_first && bracketed && k > 1 && n > 1 && !P.bounded()) {
    std::vector<Index> split_at;
    std::vector<double> upper_share;
    detail::StaircaseCrash dbrr = detail::debiased_rr_crash(P, scaled, split_at, upper_share);
    const double lo = scaled[lo_index], hi = scaled[hi_index], e_eps = std::exp(eps), z = e_eps + double(k) - 1;
    double two_point_loss = 0, dbrr_loss = 0;
    for (Index y = 0; y < k; ++y) {
      const double t = (P.labels[y] - lo) / (hi - lo);
      two_point_loss += (1 - t) * weighted(y, lo_index) + t * weighted(y, hi_index);
      double row = 0;
      for (Index j = 0; j < k; ++j) {
        const std::size_t js = std::size_t(j);
        const double u = upper_share[js];
        row += (j == y ? e_eps : 1.0) * ((1 - u) * weighted(y, split_at[js]) + u * weighted(y, split_at[js] + 1));
      }
      dbrr_loss += row / z;
    }
    if (dbrr_loss < two_point_loss) {
      for (const auto& c : dbrr.columns) initial.push_back(c);
      crash = std::move(dbrr);
    }
  }
  auto loss_of = [&](const detail::StaircaseColumn& col) -> Eigen::VectorXd { return loss_values.col(col.grid_index); };
  auto price = [&](const Eigen::VectorXd& duals, double tol, double& min_rc) {
    return detail::price_grid(P, weighted, scaled, duals, tol, 2 * k + 2, min_rc);
  };
  // Costs are O(1) after scaling, so the LP's duals are far below this penalty unless the
  // output set is nearly infeasible.
  const double penalty = bracketed ? 0.0 : 1e6;
  // Certified bound (loss units) from the final master's duals: pricing over the whole grid.
  detail::StaircaseBarrierProblem Q;
  Q.cost = weighted;
  Q.outputs = scaled;
  Q.targets = P.labels;
  Q.rows = P.bounded() ? detail::StaircaseRows::BiasBounded : detail::StaircaseRows::Unbiased;
  Q.max_bias = P.max_bias;
  Q.low = P.low;
  // Any duals give a valid bound (weak duality with exact pricing), whatever the status: the
  // final master's, and the best one column generation saw (S.lower_bound).
  auto master_bound = [&](const detail::StaircaseMaster& S) {
    if (S.duals.size() != P.num_rows() || !S.duals.allFinite()) return S.lower_bound;
    Eigen::VectorXd pi_sigma(2 * k);
    pi_sigma << S.duals.head(k), detail::bias_duals(P, S.duals);
    return std::max(S.lower_bound, detail::staircase_lagrangian_bound(Q, pi_sigma));
  };
  if (!bracketed || k == 1 || options.max_rounds <= budget) {
    detail::StaircaseMaster S =
        detail::solve_staircase_master(P, std::move(initial), loss_of, price, options, penalty, {}, crash);
    UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, original, loss);
    detail::attach_certificate(result, master_bound(S) * cost_unit, options.gap_tolerance);
    return result;
  }
  // A budget of a few rounds is not worth spending: the first master solve alone can take many
  // times m pivots when column generation is going to tail off, so the barrier goes first.
  detail::StaircaseMaster S;
  if (budget >= 4) {
    // Column generation gets the rounds the model prices the barrier at, and up to 12 while
    // its certified bound is positive (relative gap below 1: the engine's bound test,
    // optim::ColumnGenerationOptions::bound_test_from): on the weeks-like k = 52 prior, grid 52,
    // eps = 1 it needs 6 rounds where the model allows 4 (its gap at round 4: 0.06; stopping
    // there for the barrier cost 4x), while at eps 2 to 12 the bound is still negative at
    // round 4 (gap 3.6 to 45) and stays so up to round 12, whose 150-390 further pivots were a
    // quarter of the solve before the barrier. More rounds on a tailing-off solve only delay
    // the barrier (weeks, grid 416, eps 2: 124 rounds = 0.1 s).
    UnbiasedOptions first = options;
    first.max_rounds = std::max<Index>(budget, 12);
    detail::StaircaseEarlyStop early;
    if (first.max_rounds > budget) early.bound_test_from = budget;
    // Past the budget, up to 3x the budget while the master objective still falls fast: the
    // engine's tailing-off control (optim::ColumnGenerationOptions::tailing_off_from, whose
    // defaults were measured here). Weeks-like k = 52, grid 416, eps 8: 60 rounds, 0.05 s CPU,
    // against 41 rounds plus the barrier, 0.14 s. Measured without dual smoothing only (k < 100
    // by default).
    if (detail::staircase_dual_smoothing(options, k) == 0 &&
        std::min(3 * budget, options.max_rounds) > first.max_rounds) {
      early.tailing_off_from = first.max_rounds;
      first.max_rounds = std::min(3 * budget, options.max_rounds);
    }
    // Up to 4k columns a round (the master's default is 2k): with the interval neighbours of
    // every priced pattern (detail::append_interval_neighbours()) more columns price out
    // than 2k, and weeks grid 416 eps 8 takes 4,098 pivots instead of 4,585.
    if (options.max_columns_per_round == kAutomatic) first.max_columns_per_round = 4 * k;
    // Pricing and pivots to 1e-11, as in the crossover below: with the defaults, weeks grid
    // 1664 eps 8 (objective ~1e-3 in scaled units) ends at round 60 with no column pricing
    // below 1e-9 but a 3.6e-5 relative gap, and the barrier then costs 8x the whole solve.
    first.pricing_tolerance = std::min(options.pricing_tolerance, 1e-11);
    first.simplex.dual_feasibility_tolerance = std::min(options.simplex.dual_feasibility_tolerance, 1e-11);
    S = detail::solve_staircase_master(P, initial, loss_of, price, first, penalty, {}, crash, early);
    // The user's time limit ends the solve here with the best feasible master and its gap.
    if (S.status == optim::SolveStatus::Optimal || S.status == optim::SolveStatus::TimeLimit) {
      UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, original, loss);
      detail::attach_certificate(result, master_bound(S) * cost_unit, options.gap_tolerance);
      if (result.optimal() || S.status == optim::SolveStatus::TimeLimit) return result;
    }
  }
  // Tailing off: the barrier's interior point. Its mechanism, written exactly as staircase
  // columns (every column in the eps-DP cone), is optimal to within the certified gap of the
  // interior duals' Lagrangian bound (exact pricing over every staircase column of the grid);
  // accepted when that gap is at most 1e-9 relative.
  detail::StaircaseBarrierOptions barrier_options;
  barrier_options.tolerance = 2e-10;
  // Near-uniform and heavy-tailed priors take 100-150 iterations of short steps (outputs that
  // leave the support squeeze their whole cone to zero at once); the crossover after an
  // unfinished barrier costs far more than the iterations that finish it.
  barrier_options.max_iterations = 400;
  // Fewer correctors after long steps (kStaircaseUnbiasedCorrectorBelow) where a corrector's
  // direction is dear next to the factorization it saves: the normal matrix's factorization
  // (the cheaper of dense and Woodbury, as in the cost model above) below 600 times the k n
  // cells of the per-output blocks that every direction passes over (weeks-like grid 52 / 416:
  // 121 / 225; near-uniform k = 214, grid 51 / 214: 106 / 500), not the heavy-tailed k = 401,
  // grid 401 (933: eps 1 took 63 iterations with correctors after every step, 66 without,
  // +10% instructions). Not from the dual-feasible start of eps > 7.6 (kStaircaseDualStartLow),
  // where they pay: weeks-like grid 52, eps 12: 17 iterations with them, 21-23 without.
  if (P.low >= detail::kStaircaseDualStartLow && factorization_work <= 600 * double(k) * n_out)
    barrier_options.corrector_below = detail::kStaircaseUnbiasedCorrectorBelow;
  barrier_options.time_limit = remaining();
  const detail::StaircaseBarrierResult ipm = detail::solve_staircase_barrier(Q, barrier_options);
  double ipm_bound = -std::numeric_limits<double>::infinity();
  if (ipm.duals.allFinite()) ipm_bound = detail::staircase_lagrangian_bound(Q, ipm.duals);
  if (ipm.status == optim::SolveStatus::Optimal) {
    // Its mechanism, every column clamped into its cone [low T_o, T_o] (the staircase
    // decomposition of the interior point, merged back per output).
    UnbiasedResult<Scalar> result;
    result.status = optim::SolveStatus::Optimal;
    result.rounds = S.rounds;
    result.simplex_iterations = S.iterations;
    std::vector<double> outs;
    std::vector<Eigen::VectorXd> cols;
    for (Index o = 0; o < n; ++o)
      if (ipm.top[o] > 0) {
        outs.push_back(original[std::size_t(o)]);
        cols.push_back(ipm.mechanism.col(o).cwiseMax(P.low * ipm.top[o]).cwiseMin(ipm.top[o]));
      }
    result.columns = Index(outs.size());
    detail::finish_columns(prior, P, outs, cols, loss, result);
    const double bound = ipm_bound * cost_unit;
    if (result.optimal() && double(result.expected_loss) - bound <= 1e-9 * std::abs(double(result.expected_loss)) &&
        double(result.max_bias) <= P.max_bias * P.scale * (1 + 1e-9) + 1e-9 * P.scale) {
      // (min: the interior mechanism meets the rows to roundoff, not exactly.)
      detail::attach_certificate(result, bound, options.gap_tolerance);
      result.interior_point_iterations = ipm.iterations;
      if (result.optimal()) return result;
    }
  }
  // Otherwise an exact crossover: the interior point's candidate columns (the nested level sets
  // of every used output's column) and Proposition 7's one-sided columns on the outermost
  // outputs involved (so the master's crash basis applies) start the staircase master again;
  // its exact pricing over the grid certifies the vertex it finds.
  std::vector<detail::StaircaseColumn> columns;
  // A stalled barrier still returns its best certified iterate: near the optimum (rows met to
  // 1e-6) its columns are the crossover's best start.
  const bool ipm_usable = ipm.status == optim::SolveStatus::Optimal ||
                          (ipm.primal_residual <= 1e-6 && ipm.mechanism.allFinite() && ipm.top.allFinite());
  if (ipm_usable) columns = detail::staircase_barrier_columns(ipm, scaled, P.low);
  Index lo_end = lo_index, hi_end = hi_index;
  for (const auto& c : columns) {
    lo_end = std::min(lo_end, c.grid_index);
    hi_end = std::max(hi_end, c.grid_index);
  }
  for (auto& c : detail::one_sided_columns(k, scaled[lo_end], lo_end)) columns.push_back(std::move(c));
  for (auto& c : detail::one_sided_columns(k, scaled[hi_end], hi_end)) columns.push_back(std::move(c));
  // The columns the first master used keep their information too.
  for (Index j = 0; j < S.x.size(); ++j)
    if (S.x[j] > 0) columns.push_back(S.columns[std::size_t(j)]);
  // The interior duals warm-start it: their certified bound ends the solve as soon as the master
  // reaches the optimum (rather than after the rounds that prove it from vertex duals, which
  // tail off exactly where the barrier was needed), and they are the smoothing center.
  const Index rounds_before = S.rounds, iterations_before = S.iterations;
  Eigen::VectorXd warm;
  if (ipm.duals.size() == Q.num_rows() && ipm.duals.allFinite()) warm = detail::master_duals(P, ipm.duals);
  UnbiasedOptions crossover = options;
  if (crossover.dual_smoothing < 0 && warm.size()) crossover.dual_smoothing = 0.5;
  // The certificate at the master's duals is about kappa times the pricing and dual tolerances
  // (absolute, scaled costs of order 1): on a small objective (weeks, grid 1664, eps 8: 1e-3)
  // the defaults leave a 5e-8 relative gap, so this stage prices and pivots to 1e-11, as the
  // continuous solver's exact stage does.
  crossover.pricing_tolerance = std::min(options.pricing_tolerance, 1e-11);
  crossover.simplex.dual_feasibility_tolerance = std::min(options.simplex.dual_feasibility_tolerance, 1e-11);
  crossover.time_limit = remaining();
  S = detail::solve_staircase_master(P, std::move(columns), loss_of, price, crossover, penalty, warm);
  S.rounds += rounds_before;
  S.iterations += iterations_before;
  UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, original, loss);
  result.interior_point_iterations = ipm.iterations;
  detail::attach_certificate(result, std::max(ipm_bound, master_bound(S)) * cost_unit, options.gap_tolerance);
  return result;
}

}  // namespace detail

/// ComputeOptUnbiasedRand (Alg. 1) on the output set `outputs`: the eps-DP mechanism from the
/// prior's values to `outputs` of least expected loss with \f$E[M(y)] = y\f$ for every label
/// (or \f$|E[M(y)] - y| \le B\f$ with options.max_bias = B > 0).
///
/// Solved by column generation over staircase columns: the master has
/// 2k rows (normalization and unbiasedness; 3k with a bias bound) and columns (pattern, output);
/// pricing finds the best pattern at every output in O(k). It starts from the one-sided columns
/// of Proposition 7's two-point mechanism on the extreme outputs. When the extreme outputs do
/// not bracket the two-label dbRR interval (so that mechanism may be infeasible) penalized
/// artificial columns make the first master feasible; a solution still using them is reported
/// as SolveStatus::Infeasible.
///
/// \tparam Loss a NoisyLabelLoss (SquaredLoss, AbsoluteLoss, ...); only its values on
///         (output, label) pairs are used.
/// \param prior the label prior (its values are the mechanism's inputs).
/// \param eps privacy parameter, finite and > 0.
/// \param outputs the candidate outputs: finite, strictly increasing, at least one.
/// \param options bias bound and solver options (UnbiasedOptions; checked first).
/// \param loss the noisy-label loss minimized.
/// \return status and, when optimal, the mechanism (only outputs with positive probability),
///         its expected loss \f$\sum_y p_y E[\ell(M(y), y)]\f$ and achieved bias.
/// \throws std::invalid_argument on bad parameters (never for an infeasible or failed solve).
///
/// \code{.cpp}
/// auto prior = labeldp::FinitePrior<>::from_weights({0, 1, 2}, {0.6, 0.25, 0.15});
/// auto grid = labeldp::feasible_output_set(prior, 0.5, 256);
/// auto r = labeldp::optimal_unbiased_on_outputs(prior, 0.5, grid);
/// if (r.optimal()) use(r.mechanism);
/// \endcode
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> UnbiasedResult<Scalar> optimal_unbiased_on_outputs(
    const FinitePrior<Scalar>& prior, double eps, const Vector<Scalar>& outputs, const UnbiasedOptions& options = {},
    const Loss& loss = Loss{}) {
  return detail::refuse_bias_beyond(detail::solve_unbiased_on_outputs(prior, eps, outputs, options, loss), prior,
                                    options.max_bias);
}

/// Alg. 2 then Alg. 1: the optimal unbiased (or bias-bounded) randomizer on the `grid_size`-point
/// FeasibleOutputSet grid. Feasible by Proposition 7. Same result and errors as
/// optimal_unbiased_on_outputs(), plus `grid_size` < 2 is rejected, and so are more than
/// UnbiasedOptions::max_labels values or max_cells (value, grid point) pairs before the grid
/// is allocated, and an eps so small that the grid's ends overflow. Grid points that round to
/// the same double (subnormal labels) are merged. A one-value prior yields
/// the trivial mechanism (the label itself with probability 1).
///
/// \code{.cpp}
/// auto r = labeldp::optimal_unbiased_grid(prior, 1.0, 1664);   // r.mechanism, r.expected_loss
/// \endcode
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> UnbiasedResult<Scalar> optimal_unbiased_grid(const FinitePrior<Scalar>& prior,
                                                                                   double eps, Index grid_size,
                                                                                   const UnbiasedOptions& options = {},
                                                                                   const Loss& loss = Loss{}) {
  options.check();
  validate_epsilon(eps);
  eps = table_epsilon(eps);  // beyond 700 the table is computed at 700 (core/validate.hpp)
  if (grid_size < 2) detail::fail_parameter("grid_size", "must be at least 2", double(grid_size));
  if (prior.size() == 1) return detail::trivial_unbiased(prior, Scalar(loss(prior.value(0), prior.value(0))));
  detail::check_unbiased_size(options, prior.size(), double(grid_size));  // before the grid is allocated
  Vector<Scalar> grid = feasible_output_set(prior, eps, grid_size);
  // Outputs of magnitude about k (label range) / eps: at a tiny eps or huge labels they overflow.
  if (!std::isfinite(double(grid[0])) || !std::isfinite(double(grid[grid.size() - 1])))
    detail::refuse_unbiased_overflow(eps);
  // [L, U] may hold fewer than n doubles (subnormal labels): repeated points are dropped, the
  // endpoints kept (Proposition 7 needs only those).
  Index m = 1;
  for (Index i = 1; i < grid.size(); ++i)
    if (grid[i] > grid[m - 1]) grid[m++] = grid[i];
  grid.conservativeResize(m);
  return optimal_unbiased_on_outputs(prior, eps, grid, options, loss);
}

/// The slow reference: Alg. 1 exactly as printed (variables \f$M_{y \to i}\f$, pairwise privacy
/// rows, O(n k^2) rows) solved with the in-house dense simplex. For tests on small instances
/// only; optimal_unbiased_on_outputs() computes the same optimum.
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> UnbiasedResult<Scalar> optimal_unbiased_reference(
    const FinitePrior<Scalar>& prior, double eps, const Vector<Scalar>& outputs, const UnbiasedOptions& options = {},
    const Loss& loss = Loss{}) {
  options.check();
  validate_epsilon(eps);
  eps = table_epsilon(eps);  // beyond 700 the table is computed at 700 (core/validate.hpp)
  const detail::UnbiasedProblem P = detail::make_unbiased_problem(prior, eps, options.max_bias);
  const Index k = P.num_labels(), n = outputs.size();
  Eigen::VectorXd scaled(n);
  Eigen::MatrixXd loss_values(k, n);
  for (Index j = 0; j < n; ++j) {
    scaled[j] = (double(outputs[j]) - P.shift) / P.scale;
    for (Index i = 0; i < k; ++i) loss_values(i, j) = double(loss(outputs[j], prior.value(i)));
  }
  const double unit = std::max(loss_values.cwiseAbs().maxCoeff(), 1e-300);
  optim::RevisedSimplex simplex(
      detail::explicit_unbiased_lp(P.labels, P.probs, eps, scaled, loss_values / unit, P.max_bias), options.simplex);
  const optim::SimplexResult r = simplex.solve();
  UnbiasedResult<Scalar> result;
  result.status = r.status;
  result.simplex_iterations = r.iterations;
  if (r.status != optim::SolveStatus::Optimal) return result;
  // Not detail::mechanism_from_lp_columns(): as the tests' oracle this returns the simplex's
  // solution itself, without the production path's cleaning (see detail/lp_columns.hpp).
  std::vector<Index> keep;
  for (Index j = 0; j < n; ++j) {
    double mx = 0;
    for (Index i = 0; i < k; ++i) mx = std::max(mx, r.x[i * n + j]);
    if (mx > 1e-14) keep.push_back(j);
  }
  Vector<Scalar> outs(Index(keep.size()));
  Matrix<Scalar> probs(k, Index(keep.size()));
  for (std::size_t t = 0; t < keep.size(); ++t) {
    outs[Index(t)] = outputs[keep[t]];
    for (Index i = 0; i < k; ++i) probs(i, Index(t)) = Scalar(std::max(r.x[i * n + keep[t]], 0.0));
  }
  for (Index i = 0; i < k; ++i) probs.row(i) /= probs.row(i).sum();
  result.mechanism = FiniteMechanism<Scalar>(prior.values(), std::move(outs), std::move(probs));
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  result.max_bias = detail::achieved_max_bias(result.mechanism, prior);
  return result;
}

}  // namespace labeldp
