/// \file
/// The exact optimal unbiased (or bias-bounded) randomizer for the squared loss with outputs
/// anywhere on the real line (Badanidiyuru et al. 2023: at most 2k outputs by Theorem 6,
/// interval patterns suffice when unbiased by Claim 11, never worse than any grid by Lemma 8):
/// the interval-pattern interior point (detail/unbiased_barrier.hpp; with a bias bound
/// detail/interval_bias.hpp and an LP crossover), certified by exact pricing over every pattern
/// and real output, with column generation over (pattern, real output) columns as the fallback.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/lp_columns.hpp"
#include "labeldp/mechanisms/detail/unbiased_barrier.hpp"
#include "labeldp/mechanisms/detail/unbiased_finish.hpp"
#include "labeldp/mechanisms/detail/unbiased_master.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"
#include "labeldp/mechanisms/detail/unbiased_supported_labels.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp {

namespace detail {

/// The relative half-width of the output bracket around each interior candidate in the
/// bias-bounded crossover (solve_unbiased_continuous()).
inline constexpr double kOutputBracket = 1e-4;

/// optimal_unbiased_continuous() before its final bias check.
template <typename Scalar = double>
UnbiasedResult<Scalar> solve_unbiased_continuous(const FinitePrior<Scalar>& prior, double eps,
                                                 const UnbiasedOptions& options = {}) {
  options.check();
  validate_epsilon(eps);
  eps = table_epsilon(eps);  // beyond 700 the table is computed at 700 (core/validate.hpp)
  if (prior.size() == 1) {
    if (double(prior.value(0)) < options.output_lower || double(prior.value(0)) > options.output_upper) {
      UnbiasedResult<Scalar> r;
      r.status = optim::SolveStatus::Infeasible;
      return r;
    }
    return detail::trivial_unbiased(prior, Scalar(0));  // squared loss
  }
  detail::check_unbiased_size(options, prior.size(), 0);
  // options.time_limit covers the whole call: each column-generation stage gets what the
  // earlier stages left (lognormal k = 150, B = 20, eps 1 with a 20 s limit ran 34 s when every
  // stage had the full limit).
  const auto start = std::chrono::steady_clock::now();
  const auto time_left = [&] {
    return std::max(
        0.0, options.time_limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  const detail::UnbiasedProblem P = detail::make_unbiased_problem(prior, eps, options.max_bias);
  const Index k = P.num_labels();
  const double lo = (options.output_lower - P.shift) / P.scale;
  const double hi = (options.output_upper - P.shift) / P.scale;
  const double a = std::clamp(-1.0, lo, hi), b = std::clamp(1.0, lo, hi);
  std::vector<detail::StaircaseColumn> initial = detail::one_sided_columns(k, a, -1);
  for (auto& c : detail::one_sided_columns(k, b, -1)) initial.push_back(std::move(c));
  const double loss_unit = P.scale * P.scale;  // scaled squared loss -> original units
  Index interior_iterations = 0;
  // Bias bound: the crossover's mechanism when the interior bound did not certify it (it is
  // the interval problem's optimum, typically below column generation's final loss).
  std::optional<UnbiasedResult<Scalar>> crossed;
  double ipm_bound = -std::numeric_limits<double>::infinity();
  // The optimum's order of magnitude (scaled units), from the first stage that has one: it sets
  // the exact stage's tolerances below.
  double objective_estimate = std::numeric_limits<double>::quiet_NaN();
  bool seeded = false;
  // The interior duals on the master's rows (master_duals()) when they are near-optimal for
  // the full problem: column generation's warm start (see below).
  Eigen::VectorXd warm;
  // Column generation resumed on the crossover's own simplex (see below), when it ran: its
  // mechanism on every label and its best bound (scaled units).
  std::optional<std::pair<UnbiasedResult<Scalar>, double>> resumed;
  // The exact stage's options (tolerances relative to the objective's estimate; see below).
  auto exact_options = [&]() {
    // The certificate's gap is about kappa (<= 1 / low, continuous_lower_bound()) times the
    // pricing and dual tolerances, which are absolute in scaled costs, over the objective.
    // Scaled objectives run from order 1 down to 1e-4 and below (a bias bound at small eps:
    // weeks, B = 20, eps = 1 has 5e-4, where 1e-11 left a gap of 1.7e-7), so the exact stage
    // prices and pivots to 1e-11 times the objective's estimate when that is below 1 (not below
    // 1e-15, the roundoff of the pricing terms; the caller's tighter values stand).
    const double objective_scale = objective_estimate > 0 ? std::clamp(objective_estimate, 1e-4, 1.0) : 1.0;
    UnbiasedOptions exact = options;
    exact.time_limit = time_left();
    exact.pricing_tolerance = std::min(options.pricing_tolerance, 1e-11 * objective_scale);
    exact.simplex.dual_feasibility_tolerance =
        std::min(options.simplex.dual_feasibility_tolerance, 1e-11 * objective_scale);
    // Wentges smoothing (automatic: 0.5 from k = 100 on) for every bias-bounded solve too.
    // There the rounds mostly pin down the duals (weeks, B = 20, eps 1: the crossover's columns
    // already held the optimal loss, and 92 rounds only closed the bound), and the master's
    // vertex duals jump across a degenerate face: 2-4x fewer seconds at eps 1-8.
    if (options.dual_smoothing == double(kAutomatic) && P.bounded()) exact.dual_smoothing = 0.5;
    // Warm-started at the interior duals, column generation can stop at its first master, whose
    // bias rows at the default tolerance were 3e-9 beyond B (k = 4; finish_unbiased() does not
    // re-solve bounded rows): they are met to 1e-13 then, as in the crossover. Not otherwise:
    // over many rounds that tolerance ended one solve NumericalIssue (k = 12, eps 4).
    if (P.bounded() && warm.size() > 0)
      exact.simplex.primal_feasibility_tolerance = std::min(exact.simplex.primal_feasibility_tolerance, 1e-13);
    return exact;
  };
  // From k = 100 on (where it was measured; smaller solves are left as they were), at most
  // 4k + 4 columns per call, the most negative first. price_continuous() adds, for each
  // of its up to 2k + 2 segment columns, every one-sided column at the same output that prices
  // out; at the exact stage's tiny tolerance (1e-11 of the objective) that was up to ~k each,
  // some 3e5 columns of k bytes per call at k = 401, all assembled into master columns (3k rows)
  // before the engine kept 2k of them: 14-17 s per round (perf: the pricing oracle and page
  // faults), lognormal k = 401, B = 20, eps 1.
  // On `Q`: the full problem, or the one on the supported labels (the resume below).
  auto price_on = [&](const detail::UnbiasedProblem& Q, const Eigen::VectorXd& duals, double tol, double& min_rc,
                      Index* argmin_size) {
    const Index n = Q.num_labels();
    std::vector<detail::StaircaseColumn> columns =
        detail::price_continuous(Q, duals, lo, hi, tol, 2 * n + 2, min_rc, argmin_size);
    const std::size_t cap = std::size_t(4 * n + 4);
    if (k >= 100 && columns.size() > cap) {
      std::nth_element(columns.begin(), columns.begin() + std::ptrdiff_t(cap), columns.end(),
                       [](const auto& u, const auto& v) { return u.reduced_cost < v.reduced_cost; });
      columns.resize(cap);
    }
    return columns;
  };
  // The pricing, the loss of a column and the weighted bound's least ratio on `Q` (P, or the
  // kept problem: both outlive the solves). The pricing also reports the size of a pattern
  // reaching the least reduced cost (`argmin_size`, when asked for): the first Dinkelbach
  // iterate of the least ratio, which then does not price the same duals again.
  auto pricing_on = [&](const detail::UnbiasedProblem& Q) {
    return [&price_on, &Q](const Eigen::VectorXd& duals, double tol, double& min_rc, Index* argmin_size = nullptr) {
      return price_on(Q, duals, tol, min_rc, argmin_size);
    };
  };
  auto loss_on = [](const detail::UnbiasedProblem& Q) {
    return [&Q](const detail::StaircaseColumn& col) -> Eigen::VectorXd {
      return (Q.labels.array() - col.output).square().matrix();
    };
  };
  const auto price = pricing_on(P);
  const auto loss_of = loss_on(P);
  // The weighted bound of the exact stages (detail::staircase_min_ratio(): each column weighed
  // by its own normalization mass instead of the least one). Lognormal k = 401, B = 5, eps 4:
  // the columns that price out at the end are wide patterns, and the plain bound's kappa = 48
  // times the master's entering tolerance left the certificate at 4.2e-9.
  auto ratio_on = [lo, hi](const detail::UnbiasedProblem& Q) {
    return [&Q, lo, hi](const Eigen::VectorXd& duals, double mu, Index argmin_size) {
      return detail::continuous_min_ratio(Q, duals, lo, hi, mu, argmin_size);
    };
  };
  const bool interior_applies = std::isinf(lo) && std::isinf(hi);
  if (interior_applies && options.continuous_method != ContinuousMethod::ColumnGeneration) {
    // Labels of zero probability between the extreme ones are solved away (their rows are
    // interpolated, their duals are zero: detail::restrict_to_supported_labels); the answer is
    // certified on the full problem.
    const detail::SupportedLabels kept = detail::restrict_to_supported_labels(P);
    detail::IntervalBarrier barrier(kept.problem);
    // With a bias bound the interior point carries the patterns that price out at its duals
    // (bias_bounded_barrier(): up to UnbiasedOptions::bias_pattern_rounds = 200 re-solves, each warm-started from the
    // last solve's path and adding up to ten of the
    // most negative non-interval patterns at the last centre, one per window of outputs, from k = 100; five below), so
    // its centre lies on the optimal dual face of the problem that holds them, not only of the interval problem.
    // Interval patterns need not suffice under a bias bound (Claim 14 orders the rows by their means, which the bound
    // lets tie or cross), and at the interval problem's centre such patterns priced out: the bound was 18% low
    // (near-uniform k = 214, B = 20, eps 4: 66 patterns at -1.4e-5), the crossover's optimum could not be certified and
    // column generation stalled on the degenerate dual (48 rounds with the objective moving by 1e-16, > 40 s); with the
    // patterns carried the crossover is certified at once (gap 2.7e-10, 4.6 s CPU under load 4.8). At every k: at k =
    // 401 (lognormal, CPU s under load 2-3, every answer certified) the re-solves take B = 20, eps 4 from 307-632 s
    // (181 rounds of column generation) to 146-165 s (55 re-solves, no round) and B = 20, eps 12 from past 310 s
    // (stopped by a time limit at a gap of 8%) to 32 s, at a cost of 19 -> 27-30 s for B = 5, eps 4; B = 5 and 20 at
    // eps 1 and B = 5 at eps 12 need no re-solve (9-11 s either way). (Before the patterns were spread over windows of
    // outputs, k = 401 gained nothing and B = 5, eps 4 ran past 150 s: it was off from k = 300.) 200, not 60: a loose
    // bound needed 11-55 on the bench priors, and 61-75 on copies perturbed by 1e-9
    // (UnbiasedOptions::bias_pattern_rounds).
    detail::IntervalBarrierResult ipm =
        P.bounded() ? detail::bias_bounded_barrier(barrier, kept.problem, 1e-11, options.bias_pattern_rounds)
                    : barrier.solve(1e-9);
    interior_iterations = ipm.newton_steps;
    const Eigen::VectorXd duals = ipm.duals.size() > 0 ? detail::expand_duals(kept, k, ipm.duals) : Eigen::VectorXd();
    // A mechanism from columns on the kept labels (weights S.x) on every label: the dropped
    // labels' rows interpolated between their neighbours' (eps-DP and within the bias bound,
    // both being preserved by convex combinations of neighbouring rows).
    auto finish_kept = [&](detail::StaircaseMaster& S) {
      if (kept.all(P)) return detail::finish_unbiased(prior, P, S, {}, SquaredLoss<Scalar>{});
      std::vector<Scalar> values, weights;
      for (const Index i : kept.kept) {
        values.push_back(prior.value(i));
        weights.push_back(prior.probability(i));
      }
      UnbiasedResult<Scalar> result = detail::finish_unbiased(FinitePrior<Scalar>::from_weights(values, weights),
                                                              kept.problem, S, {}, SquaredLoss<Scalar>{});
      if (result.mechanism.num_outputs() > 0) {
        // Interpolated rows lie between eps-DP rows, so within eps up to their rounding.
        Matrix<Scalar> rows = detail::interpolate_dropped_rows(kept, prior.values(), result.mechanism.probabilities());
        cap_to_epsilon(rows, P.eps);
        result.mechanism = FiniteMechanism<Scalar>(prior.values(), result.mechanism.outputs(), std::move(rows));
        result.expected_loss = result.mechanism.expected_loss(prior);
        result.max_bias = detail::achieved_max_bias(result.mechanism, prior);
      }
      return result;
    };
    if (ipm.converged) {
      // Certify: exact pricing over every pattern and real output at the final duals.
      const double bound = detail::continuous_lower_bound(P, duals, lo, hi);
      if (ipm.primal_objective - bound <= 1e-9 * std::abs(ipm.primal_objective)) {
        detail::StaircaseMaster S;
        S.columns = std::move(ipm.columns);
        S.x = ipm.weights;
        S.status = optim::SolveStatus::Optimal;
        UnbiasedResult<Scalar> result = finish_kept(S);
        detail::attach_certificate(result, bound * loss_unit, options.gap_tolerance);
        result.interior_point_iterations = interior_iterations;
        if (result.optimal()) return result;
      }
    }
    // Not certified: an LP crossover on the columns active at the last interior point, then
    // column generation on the full problem from them; the interior duals give a lower bound.
    if (duals.size() == 2 * k) ipm_bound = detail::continuous_lower_bound(P, duals, lo, hi);
    if (ipm.bound_duals.size() == ipm.duals.size() && duals.size() == 2 * k)
      ipm_bound = std::max(ipm_bound,
                           detail::continuous_lower_bound(P, detail::expand_duals(kept, k, ipm.bound_duals), lo, hi));
    const double interior_bound = ipm_bound;
    if (ipm_bound > 0) objective_estimate = ipm_bound;
    if (!ipm.candidates.empty()) {
      // LP crossover on the kept labels (a pattern of the full problem cannot express the
      // interpolated rows of the dropped labels: on the full problem this LP was up to 40%
      // above the optimum at k = 214 with zeros): the best mechanism on the candidates'
      // (pattern, output) columns and Proposition 7's (for feasibility). Its outputs are the
      // interior point's, so it is optimal to that accuracy. Certified by exact pricing at the
      // interior duals or at the LP's own (vertex) duals, whichever bound is higher: with a bias
      // bound the interior duals (the centre of the interval problem's optimal dual face) may
      // price out patterns that are not intervals while a vertex of that face does not.
      const detail::UnbiasedProblem& Q = kept.problem;
      const Index kk = Q.num_labels();
      std::vector<detail::StaircaseColumn> columns = ipm.candidates;
      for (auto& c : detail::one_sided_columns(kk, a, -1)) columns.push_back(std::move(c));
      for (auto& c : detail::one_sided_columns(kk, b, -1)) columns.push_back(std::move(c));
      // Tight tolerances (as the exact stage below): a bias row met to 1e-9 would leave a
      // bias 1e-9 over B, and an absolute dual tolerance of 1e-11 left the LP 2e-9 above its
      // optimum at a scaled objective of 2.6e-3 (weeks, B = 5): relative to the objective. With a
      // bias bound the bias rows are met to 1e-13 (this crossover is certified directly, without
      // column generation, and finish_unbiased() does not re-solve bounded rows: at 1e-11 the
      // returned bias was up to 3e-9 over B, labels of order 100). Where roundoff ends that solve
      // (lognormal k = 401, B = 5, eps 2: after 4.5k pivots the optimal basis is near singular,
      // condition about 1e15, its recomputed x_B off by 0.55, beyond what dual pivots could
      // repair; nearby interval patterns with nearly equal outputs make nearly dependent columns;
      // column generation then took 70 rounds, 52 s) the crossover is solved again with the bias
      // rows met to 1e-12: certified there (gap 3e-10, bias B to 12 digits, 16-23 s in all). Not 1e-12
      // from the start: column generation resumed on that simplex (below) then ended on roundoff
      // at a gap of 4e-8 (lognormal k = 300, B = 5, eps 4 without re-solves).
      const double lp_scale = ipm_bound > 0 ? std::clamp(ipm_bound, 1e-4, 1.0) : 1.0;
      // Pricing by prefix sums (O(1) per interval column): the dense A^T y over 3k rows was a
      // third of the crossover's time at k = 401 (perf, lognormal, B = 5).
      detail::StaircaseProduct product(Q, 0);
      for (const auto& c : columns) product.describe(c);
      optim::LinearProgram crossover_lp = detail::empty_master(Q);
      detail::staircase_block(Q, columns, loss_on(Q), crossover_lp.A, crossover_lp.c);
      std::optional<optim::RevisedSimplex> solver;
      auto solve_crossover = [&](double primal_tolerance) {
        optim::LinearProgram lp = crossover_lp;  // built once, copied per attempt
        optim::SimplexOptions tight = options.simplex;
        tight.primal_feasibility_tolerance = std::min(tight.primal_feasibility_tolerance, primal_tolerance);
        tight.dual_feasibility_tolerance = std::min(tight.dual_feasibility_tolerance, 1e-11 * lp_scale);
        solver.emplace(std::move(lp), tight);
        solver->set_transpose_product(
            [&product](const Eigen::VectorXd& y, Eigen::VectorXd& out) { product.multiply(y, out); });
        return solver->solve();
      };
      optim::SimplexResult lp_result = solve_crossover(P.bounded() ? 1e-13 : 1e-11);
      if (P.bounded() && lp_result.status == optim::SolveStatus::NumericalIssue) {
        const Index pivots = lp_result.iterations;
        lp_result = solve_crossover(1e-12);
        lp_result.iterations += pivots;
      }
      optim::RevisedSimplex& crossover = *solver;
      bool lp_optimal = false, certified = false;
      // The crossover's optimum: its vertex duals' bound, and whether the best bound certifies it.
      auto assess = [&]() {
        lp_optimal = lp_result.status == optim::SolveStatus::Optimal;
        if (lp_optimal && lp_result.duals.size() == Q.num_rows()) {
          Eigen::VectorXd pi_sigma(2 * kk);
          pi_sigma << lp_result.duals.head(kk), detail::bias_duals(Q, lp_result.duals);
          ipm_bound =
              std::max(ipm_bound, detail::continuous_lower_bound(P, detail::expand_duals(kept, k, pi_sigma), lo, hi));
        }
        if (lp_optimal) objective_estimate = lp_result.objective;
        certified = lp_optimal && lp_result.objective - ipm_bound <= 1e-9 * std::abs(lp_result.objective);
      };
      assess();
      // With a bias bound, when that does not certify: each candidate pattern also at its output
      // +- kOutputBracket max(1, |output|), added to the same simplex (warm). The outputs are
      // frozen at the interior point's, and a few can be off the optimum's: near-uniform k = 214
      // with zeros, B = 20, eps 4, two patterns by 2.4e-8 and 8e-8 (scaled; measured from the
      // bracketed LP's weights), which left this LP 7.8e-9 above the certified bound, and column
      // generation then spent 49 rounds (16 s) moving them. Columns of one pattern on both sides
      // of o reach every output in between: weight m at the mean output o + s, mixed from o and
      // o + d, costs m A_T s (d - s) more than one column at o + s (A_T = sum_y s_y p_y; the
      // normalization rows make sum_T m_T A_T = 1), about 1e-11 at d = 1e-4, s = 1e-7. That case
      // is then certified here (gap 2.6e-11, 5 s CPU instead of 21 s). These are ordinary
      // (pattern, output) columns: the exact pricing certificate is unchanged. Only when the
      // first LP is not certified, so that the certified cases keep their pivots (3x the columns
      // cost 10-30% more pivots at B = 5).
      if (P.bounded() && lp_optimal && !certified) {
        const std::size_t n = ipm.candidates.size();
        std::vector<detail::StaircaseColumn> bracket;
        for (std::size_t j = 0; j < n; ++j)
          for (const double side : {-1.0, 1.0}) {
            detail::StaircaseColumn c = columns[j];
            // Within the allowed outputs [lo, hi] (UnbiasedOptions::output_lower / output_upper).
            c.output = std::clamp(c.output + side * kOutputBracket * std::max(1.0, std::abs(c.output)), lo, hi);
            if (c.output != columns[j].output) bracket.push_back(std::move(c));
          }
        Eigen::MatrixXd A_new;
        Eigen::VectorXd c_new;
        detail::staircase_block(Q, bracket, loss_on(Q), A_new, c_new);
        crossover.add_columns(A_new, c_new);
        for (auto& c : bracket) {
          product.describe(c);
          columns.push_back(std::move(c));
        }
        optim::SimplexResult first = std::move(lp_result);
        lp_result = crossover.solve();
        lp_result.iterations += first.iterations;
        if (lp_result.status != optim::SolveStatus::Optimal) {
          // Roundoff on the nearly parallel columns: the first optimum stands (bracket unused).
          const Index pivots = lp_result.iterations;
          lp_result = std::move(first);
          lp_result.iterations = pivots;
          const Index before = lp_result.x.size();
          lp_result.x.conservativeResize(Index(columns.size()));
          lp_result.x.tail(Index(columns.size()) - before).setZero();
        }
        assess();
      }
      // Interior duals whose bound is within 1e-6 of the crossover's loss are near the optimal
      // dual face of the full problem: the crossover's outputs (frozen at the interior point's)
      // are what is off, by a few 1e-9 (near-uniform k = 214, B = 20: 3.5e-9 above the interior
      // bound, which was the optimum to 1e-13). Column generation warm-started at those duals
      // (their bound starts the certificate and the smoothing center) moves the outputs in 3
      // rounds; from the master's own vertex duals it needed 83-104 (30-280 s). When the
      // interval optimum is not the full one (the bound 1.5% below: weeks, B = 20, where other
      // patterns price out at the interior duals) the warm start only drags the smoothing
      // center, and column generation starts from its own duals.
      if (lp_optimal && duals.size() == 2 * k &&
          lp_result.objective - interior_bound <= 1e-6 * std::abs(lp_result.objective))
        warm = detail::master_duals(P, duals);
      if (certified || (lp_optimal && P.bounded())) {
        detail::StaircaseMaster S;
        S.columns = columns;
        S.x = lp_result.x;
        S.status = optim::SolveStatus::Optimal;
        S.iterations = lp_result.iterations;
        UnbiasedResult<Scalar> result = finish_kept(S);
        result.interior_point_iterations = interior_iterations;
        if (certified) {
          detail::attach_certificate(result, ipm_bound * loss_unit, options.gap_tolerance);
          if (result.optimal()) return result;
        } else if (result.mechanism.num_outputs() > 0) {
          crossed = std::move(result);
        }
      }
      // Not certified: column generation resumes on the crossover's simplex from its optimal
      // basis, on the kept labels (the crossover's LP is the kept problem's master on its
      // columns; that problem has the full one's optimum, so its bounds are the full problem's,
      // and its mechanism is extended by finish_kept()). With labels of zero probability the
      // fresh master below, on the full problem, started 3.4x above the optimum and ran past
      // 60 s (near-uniform k = 214 with zeros, B = 20, eps 1 and 4). A new master solved from scratch repeated the
      // crossover's pivots at a few times its cost (lognormal k = 401, B = 20, eps 1: 23 s for the first master alone,
      // the crossover 5.6 s); resumed, the rounds only move the outputs the crossover froze. A roundoff stop
      // (NumericalIssue) or an uncertified end falls back to the fresh master below. From near-optimal interior
      // duals (`warm`), and with a bias bound from any interior duals: the rounds are then warm-started at them
      // (their bound starts the certificate and the smoothing center). Lognormal k = 401, B = 5, eps 4: the interior
      // point stopped 5.8e-4 below the crossover's loss, which was already the optimum (the fresh master repeated
      // the crossover's pivots and spent 54 rounds only closing the bound, 10 s of 17.5); resumed at the master's
      // own vertex duals (bound -4e2) the smoothing spent 40 rounds getting back to the interior duals' bound and
      // priced columns of cost 10 there, whose scale (the master's entering tolerance is relative to the largest
      // cost) left it stalled at a gap of 1.2e-9; resumed at the interior duals: certified (2.4e-10) in 42
      // rounds. Only from k = 100 on, where it was measured: below, with it and the pricing cap, the weeks-like
      // B = 20 test took 6.8 s (most of its file's time) and one k <= 12 instance of the bias-bounded sweep lost its
      // certificate.
      if (lp_optimal && !certified && k >= 100 && (warm.size() > 0 || P.bounded()) && ipm.duals.size() == 2 * kk) {
        const Eigen::VectorXd warm_kept = detail::master_duals(Q, ipm.duals);
        detail::StaircaseMaster R;
        R.columns = columns;
        for (const auto& c : columns) R.seen.emplace(c.output, c.pattern);
        detail::run_staircase_master(Q, crossover, product, 0, R, loss_on(Q), pricing_on(Q), exact_options(), warm_kept,
                                     {}, ratio_on(Q));
        R.iterations += lp_result.iterations;
        if (R.status != optim::SolveStatus::NumericalIssue) {
          // Bounds on the kept problem's optimum are bounds on the full one (the same optimum);
          // the master's own duals are certified on the full problem, extended by zeros.
          double bound = R.lower_bound;
          if (R.duals.size() == Q.num_rows()) {
            Eigen::VectorXd pi_sigma(2 * kk);
            pi_sigma << R.duals.head(kk), detail::bias_duals(Q, R.duals);
            bound = std::max(bound, detail::continuous_lower_bound(P, detail::expand_duals(kept, k, pi_sigma), lo, hi));
          }
          resumed.emplace(finish_kept(R), bound);
        }
      }
    }
    // The candidates seed column generation (with a bias bound the usual way out when the
    // bounds above do not certify: a label at its bias bound joins intervals far from it, and
    // the optimum may need patterns that are not intervals).
    // With a bias bound, the interval-only solve's candidates: when the solves that carry other
    // patterns did not certify, column generation starts where it did without them (weeks-like,
    // B = 20, eps 2: from the candidates of the last solve it needed 130 rounds and 113k pivots,
    // 8 s, instead of 73 rounds and 6.5k pivots; its rounds are chaotic on the degenerate dual).
    std::vector<detail::StaircaseColumn>& seeds =
        ipm.interval_candidates.empty() ? ipm.candidates : ipm.interval_candidates;
    seeded = !seeds.empty();
    for (auto& c : seeds) {
      c.pattern = detail::expand_pattern(kept, k, c.pattern);
      initial.push_back(std::move(c));
    }
  }
  // Proposition 7's two-point mechanism on {a, b} is eps-DP iff {a, b} brackets the two-label
  // dbRR interval; a narrower output range needs the penalized artificials to start from.
  const double e = std::exp(eps), w = std::expm1(eps);
  const double ymin = P.labels[0], ymax = P.labels[k - 1];
  const bool bracketed = a <= (e * ymin - ymax) / w + 1e-12 && b >= (e * ymax - ymin) / w - 1e-12;
  const double penalty = bracketed ? 0.0 : 1e6;
  const Index n0 = options.seed_grid_size == kAutomatic ? 4 * k : options.seed_grid_size;
  Index seed_rounds = 0, seed_iterations = 0;
  if (n0 > 1 && b > a && !seeded) {
    // Stage 1: the same problem on a grid over [a, b]; its columns seed the exact stage. Column
    // generation with exact continuous pricing alone converges slowly (the outputs creep to
    // their optimal positions round by round); from the grid optimum only the last digits move.
    Eigen::VectorXd grid(n0);
    for (Index j = 0; j < n0; ++j) grid[j] = a + (b - a) * double(j) / double(n0 - 1);
    Eigen::MatrixXd weighted(k, n0);
    for (Index j = 0; j < n0; ++j)
      weighted.col(j) = P.probs.cwiseProduct((P.labels.array() - grid[j]).square().matrix());
    auto price_grid = [&](const Eigen::VectorXd& duals, double tol, double& min_rc) {
      return detail::price_grid(P, weighted, grid, duals, tol, 2 * k + 2, min_rc);
    };
    UnbiasedOptions grid_options = options;
    grid_options.time_limit = time_left();
    detail::StaircaseMaster G = detail::solve_staircase_master(P, initial, loss_of, price_grid, grid_options, penalty);
    seed_rounds = G.rounds;
    seed_iterations = G.iterations;
    if (G.status == optim::SolveStatus::Optimal) {
      objective_estimate = G.objective;
      for (Index j = 0; j < G.x.size(); ++j)
        if (G.x[j] > 0) {
          detail::StaircaseColumn c = G.columns[std::size_t(j)];
          c.grid_index = -1;
          initial.push_back(std::move(c));
        }
    }
  }
  // A column-generation answer with its certificate: the better of it and the crossover's
  // mechanism, with the best bound.
  // `result` from column generation, `bound` the best bound it saw (scaled units).
  auto conclude_with = [&](UnbiasedResult<Scalar> result, double bound) {
    result.interior_point_iterations = interior_iterations;
    bound = std::max(ipm_bound, bound);
    if (crossed && (result.mechanism.num_outputs() == 0 || crossed->expected_loss < result.expected_loss)) {
      // Any feasible mechanism with any valid bound: the better mechanism, the column-generation
      // bound (the counters say what ran).
      // A limit stays the status; otherwise the crossover's optimum is certified or not by the
      // best bound alone (attach_certificate() below says NumericalIssue when the gap is above the
      // tolerance): a column generation that stopped on roundoff with its own gap of 3e-11 left a
      // crossover certified at 1e-12 reported as NumericalIssue.
      const bool limited =
          result.status == optim::SolveStatus::TimeLimit || result.status == optim::SolveStatus::IterationLimit;
      UnbiasedResult<Scalar> better = *crossed;
      better.rounds = result.rounds;
      better.columns = result.columns;
      better.simplex_iterations += result.simplex_iterations;
      better.status = limited ? result.status : optim::SolveStatus::Optimal;
      result = std::move(better);
    }
    detail::attach_certificate(result, bound * loss_unit, options.gap_tolerance);
    return result;
  };
  auto conclude = [&](detail::StaircaseMaster& S) {
    // The best bound column generation saw (with smoothing, at a smoothed point, not the final
    // master's duals), and the final master's.
    double bound = S.lower_bound;
    if (S.duals.size() == P.num_rows()) {
      // The master's own duals (unbiasedness duals folded as in pricing) give a bound too.
      Eigen::VectorXd pi_sigma(2 * k);
      pi_sigma << S.duals.head(k), detail::bias_duals(P, S.duals);
      bound = std::max(bound, detail::continuous_lower_bound(P, pi_sigma, lo, hi));
    }
    return conclude_with(detail::finish_unbiased(prior, P, S, {}, SquaredLoss<Scalar>{}), bound);
  };
  if (resumed) {
    // Resumed on the crossover's simplex: its answer unless it is not certified without a limit
    // having stopped it; then the fresh master below, as before the resume existed.
    UnbiasedResult<Scalar> result = conclude_with(std::move(resumed->first), resumed->second);
    if (result.optimal() || result.status == optim::SolveStatus::TimeLimit ||
        result.status == optim::SolveStatus::IterationLimit)
      return result;
  }
  // The weighted bound needs the normalization rows' sum (W = k), which the penalized
  // artificials do not keep.
  detail::StaircaseMaster S = penalty == 0
                                  ? detail::solve_staircase_master(P, std::move(initial), loss_of, price,
                                                                   exact_options(), penalty, warm, {}, {}, ratio_on(P))
                                  : detail::solve_staircase_master(P, std::move(initial), loss_of, price,
                                                                   exact_options(), penalty, warm, {}, {});
  S.rounds += seed_rounds;
  S.iterations += seed_iterations;
  return conclude(S);
}

}  // namespace detail

/// The exact optimal unbiased (or bias-bounded) randomizer for the squared loss with outputs
/// anywhere on the real line (or in [options.output_lower, options.output_upper]): no grid.
/// Whatever the status, a returned mechanism meets the bias bound (a solve that would return
/// one beyond it returns none, status NumericalIssue: detail::refuse_bias_beyond()).
///
/// Unbiased, unrestricted outputs (ContinuousMethod::InteriorPoint, the default there): columns
/// with the same pattern merge at their mean output, so the problem is one free output per
/// pattern, and interval patterns suffice (Claim 11); a primal-dual interior-point method over
/// all \f$k(k+1)/2\f$ intervals (O(k^2) per iteration through two-dimensional cumulative sums,
/// plus a Cholesky factorization of order 2k), a crossover to at most 2k columns and Newton's
/// method on their optimality conditions give the exact optimum
/// (detail/unbiased_barrier.hpp). The answer is certified by exact pricing over every pattern
/// and real output (detail::price_continuous) at the final duals: `lower_bound` is then within
/// a relative 1e-9 of `expected_loss` (in practice 1e-13 or better). Labels of zero probability
/// between the extreme labels are solved away (their rows interpolate their neighbours', their
/// duals are zero: detail::restrict_to_supported_labels), which removes the degeneracy they bring
/// and certifies them as tightly. If the interior point's answer is not certified, an LP
/// crossover on its candidate columns is tried (accepted when certified to 1e-9), then column
/// generation takes over.
///
/// Bias bound B > 0: the same interior point with the bias rows' slacks (detail/interval_bias.hpp),
/// then an LP crossover on its active patterns at their outputs (and, when that is not certified,
/// also at each output +- 1e-4 relative, which lets the LP move outputs the interior point left
/// slightly off), accepted when exact pricing at the interior duals or the LP's certifies it. Interval patterns need
/// not suffice here (Claim 14 orders the rows by their means, which a bias bound lets cross: measured up to 8e-6
/// relative on small priors), so the interior point prices every pattern at its duals and solves again with the
/// patterns that are not intervals and price out (detail::bias_bounded_barrier(): the most
/// negative ones, from k = 100 in distinct windows of outputs, up to ten per re-solve and 60 re-solves, below k = 300).
/// If that still does not certify, column generation seeded by the crossover's columns finishes, and the better of the
/// two mechanisms is returned with the best bound (NumericalIssue with its gap when that is above the tolerance).
///
/// Output range, or fallback (ContinuousMethod::ColumnGeneration): column generation
/// over (pattern, real output) columns with exact pricing: between consecutive roots of the
/// per-label reduced-cost terms the best pattern is fixed and its reduced cost is a convex
/// quadratic in the output, minimized in closed form. When pricing finds nothing, the duals
/// certify optimality over every output in the range. Starts from Proposition 7's columns at
/// the dbRR endpoints L and U (clamped into the range; if the range does not contain [L, U]
/// the problem may be infeasible, reported as SolveStatus::Infeasible), seeded by a grid solve.
///
/// Either way the loss is at most that of any grid in the range (Lemma 8's \f$\mathcal{M}\f$),
/// the basic solution has at most 2k outputs (Theorem 6; 3k rows with a bias bound), and
/// `lower_bound` certifies the gap to the true optimum.
///
/// \param prior the label prior.
/// \param eps privacy parameter, finite and > 0.
/// \param options bias bound, output range and solver options (UnbiasedOptions; checked first).
/// \throws std::invalid_argument on bad parameters.
///
/// \code{.cpp}
/// auto r = labeldp::optimal_unbiased_continuous(prior, 1.0);
/// // r.mechanism.num_outputs() <= 2 * prior.size()
/// \endcode
template <typename Scalar = double>
UnbiasedResult<Scalar> optimal_unbiased_continuous(const FinitePrior<Scalar>& prior, double eps,
                                                   const UnbiasedOptions& options = {}) {
  return detail::refuse_bias_beyond(detail::solve_unbiased_continuous(prior, eps, options), prior, options.max_bias);
}

}  // namespace labeldp
