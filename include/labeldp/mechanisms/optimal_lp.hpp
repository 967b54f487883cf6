/// \file
/// The optimal eps-DP mechanism onto a finite output set: LP (2) of Ghazi et al. (ICLR 2023,
/// Section 3 and Appendix A), solved by column generation over staircase columns (the extreme
/// rays of the eps-DP cone) with the library's own simplex and column-generation engine.
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

#include "labeldp/core/audit.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/lp_columns.hpp"
#include "labeldp/mechanisms/detail/optimal_lp_bins.hpp"
#include "labeldp/mechanisms/detail/optimal_lp_interior.hpp"
#include "labeldp/mechanisms/detail/optimal_lp_oracle.hpp"
#include "labeldp/mechanisms/detail/optimal_lp_shortcuts.hpp"
#include "labeldp/mechanisms/detail/staircase_barrier.hpp"
#include "labeldp/mechanisms/optimal_lp_result.hpp"
#include "labeldp/optim/column_generation.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp {

namespace detail {

/// Default column-generation options of optimal_mechanism_lp(): Wentges smoothing 0.5 and a
/// relative gap of 1e-10.
inline optim::ColumnGenerationOptions default_mechanism_lp_options() {
  optim::ColumnGenerationOptions o;
  o.dual_smoothing = 0.5;
  o.gap_tolerance = 1e-10;
  return o;
}

}  // namespace detail

/// The largest relative gap between optimal_mechanism_lp()'s loss and its certified bound with
/// which it reports SolveStatus::Optimal (when the gap tolerance option is smaller, that one).
inline constexpr double kCertifiedGap = 1e-9;

/// Options of optimal_mechanism_lp(). Every field has a documented default; check() (called
/// first by optimal_mechanism_lp()) throws std::invalid_argument naming the first bad field,
/// nested ones with their path ("'column_generation.simplex.pivot_tolerance' ...").
///
/// \code{.cpp}
/// labeldp::OptimalLPOptions opt;
/// opt.column_generation.time_limit = 5;   // seconds; +infinity (the default) = none
/// auto r = labeldp::optimal_mechanism_lp(prior, 1.0, outputs, opt);
/// \endcode
struct OptimalLPOptions {
  /// Default detail::default_mechanism_lp_options(): ColumnGenerationOptions{} with Wentges
  /// smoothing 0.5 and relative gap tolerance 1e-10 (checked under "column_generation.").
  /// Column generation: round limit, time limit (seconds, +infinity = none), relative gap
  /// tolerance, Wentges smoothing, columns per round, master simplex options.
  /// `column_sum_bound`, `min_column_cost` and `objective_offset` must be valid but are not
  /// used (LP (2) fixes them); `known_lower_bound` is in loss units. The time limit covers
  /// the whole solve except the interior point's own iterations (which are not interrupted); when
  /// it expires the result says SolveStatus::TimeLimit with the best mechanism found and its gap.
  optim::ColumnGenerationOptions column_generation = detail::default_mechanism_lp_options();
  /// Default 1e-14 (relative, finite, >= 0; 0 = drop none). Staircase columns with a master
  /// value below this times the largest are dropped from the returned mechanism before its rows
  /// are renormalized (roundoff cleaning).
  double drop_tolerance = 1e-14;
  /// Default true. Start from the interior-point method on the compact form
  /// (detail::StaircaseBarrier): its duals certify the optimum and its columns seed the master
  /// (crossover). Off: plain column generation from the constant columns and every interval
  /// pattern at its best output.
  bool interior_point = true;
  /// Default false. With `interior_point` on, the interior point's own mechanism (output o's
  /// column \f$\ell T_o 1 + u_{\cdot,o}\f$, \f$0 \le u \le (1 - \ell) T_o\f$, inside the eps-DP
  /// cone) is returned when its duals certify it within the gap tolerance, and the simplex
  /// crossover is skipped (OptimalLPResult::interior_solution). That optimum need not be a
  /// vertex: where the optimum is not unique it mixes optimal vertices and may use more outputs.
  /// True: always cross over to a basic optimum of the master (at most k + 1 staircase columns).
  bool vertex = false;
  /// Default true. First try the best RR-on-Bins onto O (Ghazi et al. 2023, Alg. 1; optimal by
  /// the proof of their Theorem 5 for losses satisfying Assumption 4), certified by duals from
  /// complementary slackness and exact pricing of every output (detail::bins_mechanism(): at most
  /// 30 water-filling rounds, then the piece LP of `rr_on_bins_pieces`); when they do not certify
  /// it within the gap tolerance, the solve continues as without it. Off: skip it.
  bool rr_on_bins = true;
  /// Default true. With `rr_on_bins`, when water-filling does not certify the bins, the exact
  /// search of detail::bins_dual_pieces(): one LP over the complementary-slackness set cut into
  /// pieces at the unused outputs' breakpoints (one row per bin and per output that can price
  /// out, bounded 0/1 columns), which finds certifying duals whenever the set holds any. On the
  /// bench_optimal_lp table it certified every case water-filling did not (weeks-like k = 52,
  /// |O| = 52, eps 8: 0.3 ms, where the interior point's answer took 1.9 ms). Off: skip it.
  bool rr_on_bins_pieces = true;
  /// Default 0 (>= 0; 0 = off). With `rr_on_bins`, when neither water-filling nor the piece LP
  /// (`rr_on_bins_pieces`) certifies the bins, at most this many LPs of the older exact search
  /// for certifying duals (detail::bins_dual_lp(): the unused outputs that price out as rows,
  /// re-solved with those that still do), each at most detail::kBinsDualMaxRows rows. It
  /// certifies where water-filling does not (weeks-like k = 52, |O| = 52, eps 8 after 3 LPs;
  /// near-uniform k = 214 with zero-probability labels, |O| = 107, eps 12 after 3) but costs
  /// more than it saves (28 ms at eps 8 there, where the piece LP takes 0.3 ms): off by default.
  Index rr_on_bins_lp_rounds = 0;
  /// Default 1024 (>= 1). The most prior values accepted: more are refused before anything is
  /// allocated (the solve's time grows about as the cube of the count: 1,000 values x 10 outputs
  /// take 1.5 s, 3,000 take 40 s).
  Index max_labels = 1024;
  /// Default 2^20 = 1,048,576 (>= 1). The most (prior value, distinct output) pairs accepted:
  /// more are refused before anything is allocated (memory is about 300 bytes a pair: 1,000 x
  /// 1,000 take 7 s and 320 MB; 3,000 x 3,000 ran out of 3 GB).
  Index max_cells = Index(1) << 20;

  /// Checks every field (and `column_generation`) against the rule in its comment.
  /// \throws std::invalid_argument naming the first bad field, e.g.
  ///         "'drop_tolerance' must be finite and non-negative, got -1".
  void check() const {
    column_generation.check("column_generation.");
    validate_finite_nonnegative("drop_tolerance", drop_tolerance);
    if (max_labels < 1) detail::fail_parameter("max_labels", "must be at least 1", double(max_labels));
    if (max_cells < 1) detail::fail_parameter("max_cells", "must be at least 1", double(max_cells));
    if (rr_on_bins_lp_rounds < 0)
      detail::fail_parameter("rr_on_bins_lp_rounds", "must be non-negative", double(rr_on_bins_lp_rounds));
  }
};

/// The eps-DP mechanism from the prior's values to the finite output set O with the least
/// expected noisy-label loss \f$\sum_y p_y \sum_{o \in O} M[y][o]\,\ell(o, y)\f$ among ALL eps-DP
/// mechanisms into O: LP (2) of Ghazi et al. (2023) (Appendix A), whose variables are
/// \f$M[y][o] \ge 0\f$ with rows summing to 1 and \f$M[y][o] \le e^\varepsilon M[y'][o]\f$.
///
/// Solved without the \f$k(k-1)|O|\f$ pairwise rows: every feasible column \f$M[\cdot][o]\f$ is a
/// non-negative combination of staircase vectors (entries 1 or \f$e^\varepsilon\f$), so the LP
/// becomes k equality rows over (pattern, output) columns, priced exactly in O(k) per output.
/// The master carries the total mass as an extra variable and row so that its columns are 0/1
/// patterns (detail::StaircaseOracle): well conditioned from eps = 0.05 to eps = 12.
///
/// Column generation (optim::solve_by_column_generation) starts from the mass variable and the
/// constant column at every output, prices every output's best pattern each round at
/// Wentges-smoothed duals, and stops Optimal only when the Lagrangian bound
/// \f$\sum_y \pi_y + \min(0, \min_{T,o} \bar c_{T,o}(\pi))\f$ (valid because the master's
/// variables sum to at most 1) meets the master's optimum within the gap tolerance, or when no
/// column prices out at the master's own duals. Otherwise the status says why it stopped
/// (IterationLimit, TimeLimit, NumericalIssue) and `dual_bound` / `gap` say how far it got.
///
/// First (OptimalLPOptions::rr_on_bins), the best RR-on-Bins onto O is the answer when duals
/// from complementary slackness with it, exactly priced, certify it within the gap tolerance
/// (rounds = 0; OptimalLPResult::bins_solution): detail::bins_mechanism().
///
/// With the interior point on (the default), its own mechanism is the answer when the Lagrangian
/// bound of its duals, exactly priced, certifies it within the gap tolerance (no simplex, rounds =
/// 0; OptimalLPResult::interior_solution), unless OptimalLPOptions::vertex asks for a basic optimum.
///
/// At large eps (about 30 and beyond for typical priors), randomized response onto each label's
/// nearest output is returned when its loss is within the certified gap of the non-private
/// bound \f$\sum_y p_y \min_o \ell(o, y)\f$ (which then certifies it; rounds = 0), and below
/// eps 1e-12 the best constant output (certified by the bound \f$C + e^{-\varepsilon}(W - C)\f$).
///
/// The returned mechanism lists only outputs with positive probability; its columns are
/// non-negative combinations of staircase vectors, hence eps-DP up to roundoff
/// (audit_epsilon() <= eps (1 + 1e-12) is tested), and its rows are renormalized to sum to 1.
///
/// \tparam Scalar label type (computations in double).
/// \tparam Loss a NoisyLabelLoss.
/// \param prior the label prior (values y, probabilities p).
/// \param eps privacy parameter, finite and > 0.
/// \param outputs the finite output set O (any order; duplicates ignored), finite, non-empty;
///        the loss must be finite at every (output, label) pair.
/// \param options solver options (OptimalLPOptions; checked first).
/// \param loss the loss \f$\ell(\hat y, y)\f$.
/// \return status, mechanism, expected loss, certificate, gap, rounds, columns, iterations.
/// \throws std::invalid_argument for a bad option (naming it), a bad eps, an empty or
///         non-finite output set, a label outside the loss's domain, or an infinite loss value.
///
/// \code{.cpp}
/// auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
/// Eigen::VectorXd grid = Eigen::VectorXd::LinSpaced(201, 0.0, 2.0);
/// auto r = labeldp::optimal_mechanism_lp(prior, 0.5, grid);                       // squared loss
/// auto a = labeldp::optimal_mechanism_lp(prior, 0.5, grid, {}, labeldp::AbsoluteLoss<>{});
/// if (r.status == labeldp::optim::SolveStatus::Optimal) use(r.mechanism);
/// \endcode
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> OptimalLPResult<Scalar> optimal_mechanism_lp(const FinitePrior<Scalar>& prior,
                                                                                   double eps,
                                                                                   const Vector<Scalar>& outputs,
                                                                                   const OptimalLPOptions& options = {},
                                                                                   const Loss& loss = Loss{}) {
  options.check();
  validate_epsilon(eps);
  eps = table_epsilon(eps);  // beyond 700 the table is computed at 700 (core/validate.hpp)
  optim::ColumnGenerationOptions cg = options.column_generation;
  if (outputs.size() == 0) throw std::invalid_argument("'outputs' must not be empty, got 0 values");
  std::vector<Scalar> sorted(outputs.data(), outputs.data() + outputs.size());
  for (Scalar o : sorted)
    if (!std::isfinite(double(o))) detail::fail_parameter("outputs", "must be finite", double(o));
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const Index k = prior.size(), n = Index(sorted.size());
  if (k > options.max_labels)
    throw std::invalid_argument("the optimal-mechanism LP takes at most " + std::to_string(options.max_labels) +
                                " prior values (OptimalLPOptions::max_labels), got " + std::to_string(k));
  if (double(k) * double(n) > double(options.max_cells))
    throw std::invalid_argument("the optimal-mechanism LP takes at most " + std::to_string(options.max_cells) +
                                " (prior value, output) pairs (OptimalLPOptions::max_cells), got " + std::to_string(k) +
                                " values x " + std::to_string(n) + " outputs");
  for (Index y = 0; y < k; ++y) loss.validate_label(prior.value(y));

  Eigen::MatrixXd weighted(k, n);
  for (Index j = 0; j < n; ++j)
    for (Index y = 0; y < k; ++y) {
      const double l = double(loss(sorted[std::size_t(j)], prior.value(y)));
      if (!std::isfinite(l))
        throw std::invalid_argument("loss " + loss.name() + " is not finite at output " +
                                    detail::format_number(double(sorted[std::size_t(j)])) + " for label " +
                                    detail::format_number(double(prior.value(y))));
      weighted(y, j) = double(prior.probability(y)) * l;
    }
  // A certified answer: Optimal when (loss - bound) / |loss| is within the gap tolerance.
  const double tolerance = std::max(cg.gap_tolerance, kCertifiedGap);
  const auto answer = [tolerance](FiniteMechanism<Scalar>&& mechanism, double z, double bound) {
    OptimalLPResult<Scalar> result;
    result.mechanism = std::move(mechanism);
    result.expected_loss = Scalar(z);
    result.dual_bound = bound;
    result.gap = z != 0 ? (z - bound) / std::abs(z) : 0.0;
    result.status = result.gap <= tolerance ? optim::SolveStatus::Optimal : optim::SolveStatus::NumericalIssue;
    return result;
  };
  // At tiny and large eps the LP degenerates, and a closed form is the answer, certified by its
  // own bound (detail::closed_form_answer()).
  if (auto closed = detail::closed_form_answer(prior.values(), sorted, weighted, eps, tolerance)) {
    const double z = double(closed->mechanism.expected_loss(prior, loss));
    OptimalLPResult<Scalar> result = answer(std::move(closed->mechanism), z, std::min(z, closed->bound));
    if (closed->final || result.status == optim::SolveStatus::Optimal) return result;
  }
  detail::StaircaseOracle oracle(std::move(weighted), eps);
  cg.column_sum_bound = oracle.gamma();
  // The time limit counts from here, the RR-on-Bins attempt included (milliseconds at k = 400).
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  if (options.rr_on_bins) {
    detail::BinsMechanism<Scalar> bm = detail::bins_mechanism(
        prior, sorted, oracle, eps, cg.gap_tolerance, 30, options.rr_on_bins_pieces ? detail::kBinsPiecesMaxPivots : 0,
        options.rr_on_bins_lp_rounds, detail::kBinsDualMaxRows, loss);
    if (bm.mechanism.num_outputs() > 0) {
      OptimalLPResult<Scalar> result = answer(std::move(bm.mechanism), bm.loss, bm.bound);
      result.duals = std::move(bm.duals);
      result.bins_solution = true;
      return result;
    }
  }

  detail::StaircaseBarrierResult br;
  bool seed_intervals = !options.interior_point;
  if (options.interior_point) {
    // Interior point on the compact form with the excess costs w' (the same LP less C): its
    // objective sets the master's cost unit, its columns are the crossover's candidates and its
    // duals a certificate, re-evaluated below by exact pricing at e^eps.
    detail::StaircaseBarrierProblem bp;
    bp.cost = oracle.excess_loss();
    bp.rows = detail::StaircaseRows::Normalization;
    bp.low = detail::staircase_low(eps);
    detail::StaircaseBarrierOptions bo;
    bo.time_limit = cg.time_limit;
    // Its bound certifies the crossover only within the gap tolerance: converge an order below.
    bo.tolerance = std::clamp(cg.gap_tolerance / 10, 1e-12, bo.tolerance);
    // From the dual-feasible start of large eps, Gondzio's correctors cost more directions than
    // they save iterations (CPU, same certificates: lognormal k = 401, eps 20: 0.11 s without,
    // 0.18 s with two; 300 values x 10 outputs, eps 12: 3.3 ms, 4.3 ms).
    if (bp.low < detail::kStaircaseDualStartLow) bo.max_correctors = 0;
    br = detail::solve_staircase_barrier(bp, bo);
    // Its tolerance is relative to the excess E = opt - C, far below opt at large eps: an
    // iterate it did not call converged still seeds and certifies (its bound is re-evaluated
    // by exact pricing). Without a finite iterate, the interval seed below takes over.
    // Usable: finite, with objective and bound within 1e-6 of C + E (a stalled start is not).
    const double full = oracle.nonprivate_loss() + std::abs(br.primal_objective);
    const bool usable = br.duals.size() == k && br.duals.allFinite() && br.mechanism.allFinite() &&
                        br.top.allFinite() && std::isfinite(br.primal_objective) && br.primal_objective >= 0 &&
                        std::abs(br.primal_objective - br.dual_objective) <= 1e-6 * full;
    seed_intervals = !usable;
    // Its objective estimates E: opt = C + E is the master's cost unit.
    if (usable) oracle.set_cost_scale(std::min(oracle.cost_scale(), full));
  }
  // Master units: objective (loss - C) / s. A caller's known bound is in loss units; C itself
  // (every mechanism's loss is at least the non-private one) is 0.
  cg.objective_offset = oracle.objective_offset();
  cg.min_column_cost = oracle.min_column_cost();
  cg.known_lower_bound = std::max(0.0, (cg.known_lower_bound - oracle.nonprivate_loss()) / oracle.cost_scale());

  Eigen::VectorXd barrier_duals;  // master-space duals (rho, sigma) of the barrier's bound
  double barrier_mu = 0;          // their least reduced cost, capped at 0
  // Their Lagrangian bound given an upper bound z on the master optimum (kappa depends on it).
  const auto barrier_bound_at = [&](double z) {
    return barrier_duals.size() ? barrier_duals[k] + oracle.column_sum_bound(z) * barrier_mu
                                : -std::numeric_limits<double>::infinity();
  };
  std::vector<detail::StaircaseColumn> candidates;
  if (!seed_intervals && options.interior_point) {
    barrier_duals = oracle.master_duals_of_excess(br.duals);
    barrier_mu = std::min(0.0, oracle(barrier_duals).min_reduced_cost);
    if (!options.vertex) {
      // The interior point's own mechanism, certified by its duals: no crossover. Outputs of top
      // below 1e-9 of the largest are left out (its finalization leaves them when its projection
      // fails: 89 of 104 at uniform214z, eps 8); when moving their mass costs the certificate
      // (lognormal k = 401, eps 4: 4.8e-10), the crossover's vertex is the sparser answer.
      detail::InteriorMechanism<Scalar> im =
          detail::interior_mechanism(prior, sorted, br, oracle, barrier_bound_at, cg.known_lower_bound, eps,
                                     detail::StaircaseBarrierOptions{}.drop_threshold, cg.gap_tolerance, loss);
      const double z = im.loss;
      if (im.mechanism.num_outputs() > 0 && z - im.bound <= cg.gap_tolerance * std::abs(z)) {
        OptimalLPResult<Scalar> result = answer(std::move(im.mechanism), z, im.bound);
        if (!im.floor) result.duals = oracle.label_duals(barrier_duals);
        result.interior_solution = true;
        return result;
      }
    }
    const Eigen::VectorXd index = Eigen::VectorXd::LinSpaced(n, 0.0, double(n - 1));
    candidates = detail::staircase_barrier_columns(br, index, detail::staircase_low(eps));
  }
  // The master's columns, allocated once (every column below is written in full, by
  // oracle.column()): a resize per group copies A and touches fresh pages each time, which at
  // k = 300 cost as much as the master's pivots.
  const Index count = Index(candidates.size()), crash_columns = seed_intervals ? 0 : k,
              interval_columns = seed_intervals ? k * (k + 1) / 2 : 0;
  optim::LinearProgram lp;
  lp.A.resize(k + 1, 1 + n + count + crash_columns + interval_columns);
  lp.c.resize(lp.A.cols());
  lp.b = Eigen::VectorXd::Constant(k + 1, oracle.mass_coefficient());
  lp.b[k] = 0;
  lp.row_types.assign(std::size_t(k + 1), optim::RowType::Equal);
  // Initial master: the mass variable S (column 0) and the constant column (T empty) at every
  // output; S = 1 on the cheapest constant column is feasible.
  lp.A.col(0).head(k).setConstant(oracle.mass_coefficient());
  lp.A(k, 0) = -1;
  lp.c[0] = 0;
  std::vector<Index> col_output{-1};  // output of each master column (-1: the mass variable)
  col_output.reserve(std::size_t(lp.A.cols()));
  for (Index j = 0; j < n; ++j) {
    oracle.column(
        j, [](Index) { return false; }, lp.A.col(1 + j), lp.c[1 + j]);
    col_output.push_back(j);
  }
  // The barrier's columns (crossover candidates).
  Index next = 1 + n;
  for (const auto& c : candidates) {
    oracle.column(
        c.grid_index, [&](Index y) { return c.pattern[std::size_t(y)] != 0; }, lp.A.col(next), lp.c[next]);
    col_output.push_back(c.grid_index);
    ++next;
  }
  // Crash basis (RevisedSimplex::set_basis()): the mass variable and, for each label y, the
  // singleton pattern {y} at its cheapest output. Those k + 1 columns are feasible (every label
  // row is x_y + (gamma / r) S = gamma / r, the mass row sum_y x_y / gamma = S, so S = k / (k + r)
  // and x_y = gamma / (k + r) > 0) and their inverse is known in closed form, so the first
  // master solve starts in phase 2: no phase 1 over k + 1 artificial rows and no driving out of
  // the artificials left basic at zero (a few dozen columns cover the optimum, the rest of the
  // k + 1 rows stayed artificial: hundreds of degenerate pivots at k = 300).
  std::vector<Index> crash;
  if (!seed_intervals) {
    crash.assign(std::size_t(k + 1), 0);
    const Eigen::MatrixXd& sc = oracle.scaled_loss();
    const Eigen::VectorXd& total = oracle.total_loss();
    for (Index y = 0; y < k; ++y) {
      Index best_j = 0;
      (total.transpose() + sc.row(y)).minCoeff(&best_j);
      crash[std::size_t(y)] = next;
      oracle.column(
          best_j, [y](Index l) { return l == y; }, lp.A.col(next), lp.c[next]);
      col_output.push_back(best_j);
      ++next;
    }
  }
  if (seed_intervals) {
    // Every interval [a, b] of labels at its best output (the columns of RR-on-Bins, Ghazi et
    // al. 2023, Alg. 1, which by the proof of Theorem 5 contain an optimal solution for the
    // losses it covers); O(k^2 |O|) with prefix sums of r w.
    const Eigen::MatrixXd& sc = oracle.scaled_loss();
    Eigen::MatrixXd prefix(k + 1, n);
    prefix.row(0).setZero();
    for (Index y = 0; y < k; ++y) prefix.row(y + 1) = prefix.row(y) + sc.row(y);
    const Eigen::VectorXd& total = oracle.total_loss();
    for (Index a = 0; a < k; ++a)
      for (Index b = a; b < k; ++b) {
        Index best_j = 0;
        double best = std::numeric_limits<double>::infinity();
        for (Index j = 0; j < n; ++j) {
          const double cost = total[j] + prefix(b + 1, j) - prefix(a, j);
          if (cost < best) {
            best = cost;
            best_j = j;
          }
        }
        oracle.column(
            best_j, [&](Index y) { return y >= a && y <= b; }, lp.A.col(next), lp.c[next]);
        ++next;
        col_output.push_back(best_j);
      }
  }
  optim::SimplexOptions simplex_options = cg.simplex;
  simplex_options.compute_reduced_costs = false;
  // The time limit covers the whole solve: the master's solves (the first one included, which
  // the engine does not limit by itself) get at most what the barrier and the seed left.
  const double seeded = std::chrono::duration<double>(clock::now() - start).count();
  simplex_options.time_limit = std::min(simplex_options.time_limit, std::max(0.0, cg.time_limit - seeded));
  optim::RevisedSimplex master(std::move(lp), simplex_options);
  // Pricing over the master's nonzeros (RevisedSimplex::set_transpose_product()): its columns
  // are 0/1 label patterns, mostly short (1,988 nonzeros in the 402 x 799 master of lognormal
  // k = 401 at eps 20, 1,480 in 301 x 331 at 300 values x 10 outputs), where the dense A^T y
  // per pivot was a quarter of the solve. Columns added by column generation are indexed on
  // the first product after they arrive.
  std::vector<Index> nz_start{0}, nz_row;
  std::vector<double> nz_value;
  master.set_transpose_product(
      [&master, &nz_start, &nz_row, &nz_value](const Eigen::VectorXd& y, Eigen::VectorXd& out) {
        const Eigen::MatrixXd& A = master.problem().A;
        for (Index c = Index(nz_start.size()) - 1; c < A.cols(); ++c) {
          for (Index i = 0; i < A.rows(); ++i)
            if (A(i, c) != 0) {
              nz_row.push_back(i);
              nz_value.push_back(A(i, c));
            }
          nz_start.push_back(Index(nz_row.size()));
        }
        for (Index c = 0; c < A.cols(); ++c) {
          double sum = 0;
          for (Index t = nz_start[std::size_t(c)]; t < nz_start[std::size_t(c) + 1]; ++t)
            sum += nz_value[std::size_t(t)] * y[nz_row[std::size_t(t)]];
          out[c] = sum;
        }
      });
  if (!crash.empty()) {
    // B = [[I, b 1], [c 1^T, -1]] (b = gamma / r, c = 1 / gamma; position k = the mass
    // variable): with s = -1 - k b c, B^-1 = [[I + (b c / s) 1 1^T, -(b / s) 1], [-(c / s) 1^T, 1 / s]].
    const double bv = oracle.mass_coefficient(), cv = 1 / oracle.gamma(), sv = -1 - double(k) * bv * cv;
    Eigen::MatrixXd inverse = Eigen::MatrixXd::Constant(k + 1, k + 1, bv * cv / sv);
    inverse.topLeftCorner(k, k).diagonal().array() += 1;
    inverse.col(k).setConstant(-bv / sv);
    inverse.row(k).setConstant(-cv / sv);
    inverse(k, k) = 1 / sv;
    master.set_basis(crash, std::move(inverse));  // rejected (numerically): the first solve starts cold
  }

  // Crossover: when the master over the barrier's columns meets the barrier's certified bound,
  // that is the certificate; otherwise column generation continues from this master (warm).
  optim::ColumnGenerationResult cgr;
  bool certified_by_barrier = false;
  // The constant columns bound the optimum by min_o W'_o / s, the first master by its objective.
  double barrier_bound = barrier_bound_at(oracle.total_loss().size() ? oracle.total_loss().minCoeff() : 0.0);
  bool bound_is_floor = false;
  {
    const optim::SimplexResult first = master.solve();
    if (first.status == optim::SolveStatus::Optimal) barrier_bound = barrier_bound_at(first.objective);
    bound_is_floor = cg.known_lower_bound > barrier_bound;  // then no duals certify it
    barrier_bound = std::max(barrier_bound, cg.known_lower_bound);
    if (first.status == optim::SolveStatus::Optimal &&
        first.objective - barrier_bound <= cg.gap_tolerance * std::abs(first.objective + cg.objective_offset)) {
      certified_by_barrier = true;
      cgr.status = optim::SolveStatus::Optimal;
      cgr.master = first;
      cgr.iterations = first.iterations;
      cgr.lower_bound = std::min(barrier_bound, first.objective);
      cgr.bound_duals = bound_is_floor ? Eigen::VectorXd() : barrier_duals;
    } else if (first.status == optim::SolveStatus::Optimal) {
      cgr.iterations = first.iterations;
    }
  }
  if (!certified_by_barrier) {
    const double spent = std::chrono::duration<double>(clock::now() - start).count();
    cg.time_limit = std::max(0.0, cg.time_limit - spent);
    const Index pivots = cgr.iterations;
    // The barrier's duals warm-start it (their bound and the smoothing center).
    if (barrier_duals.size() == master.num_rows()) cg.warm_duals = barrier_duals;
    cgr = optim::solve_by_column_generation(master, oracle, cg, [&](const std::vector<Index>& picked, Index) {
      for (Index t : picked) col_output.push_back(oracle.last_outputs()[std::size_t(t)]);
    });
    cgr.iterations += pivots;
    // The barrier's bound is valid too: it may close the gap the engine left.
    if (cgr.master.status == optim::SolveStatus::Optimal && barrier_bound > cgr.lower_bound) {
      const double z = cgr.master.objective;
      cgr.lower_bound = std::min(barrier_bound, z);
      cgr.bound_duals = bound_is_floor ? Eigen::VectorXd() : barrier_duals;
      const double full = std::abs(z + cg.objective_offset);
      cgr.gap = full != 0 ? (z - cgr.lower_bound) / full : 0.0;
      if (cgr.status != optim::SolveStatus::Optimal && z - cgr.lower_bound <= cg.gap_tolerance * full)
        cgr.status = optim::SolveStatus::Optimal;
    }
  }
  if (certified_by_barrier) {
    const double z = cgr.master.objective, full = std::abs(z + cg.objective_offset);
    cgr.gap = full != 0 ? (z - cgr.lower_bound) / full : 0.0;
  }

  OptimalLPResult<Scalar> result;
  result.status = cgr.status;
  // Optimal means certified: the engine also stops when no column prices out below the master's
  // own dual tolerance, which can leave a larger gap than asked for; that is not reported as
  // Optimal.
  if (result.status == optim::SolveStatus::Optimal && !(cgr.gap <= std::max(cg.gap_tolerance, kCertifiedGap)))
    result.status = optim::SolveStatus::NumericalIssue;
  result.rounds = cgr.rounds;
  result.columns = master.num_columns() - 1;
  result.iterations = cgr.iterations;
  result.dual_bound = oracle.nonprivate_loss() + oracle.cost_scale() * cgr.lower_bound;
  result.gap = cgr.gap;
  if (cgr.bound_duals.size()) result.duals = oracle.label_duals(cgr.bound_duals);
  const Eigen::VectorXd& x = cgr.master.x;
  if (cgr.master.status != optim::SolveStatus::Optimal || x.size() != master.num_columns()) return result;

  // Assemble M[y][o] = sum of the staircase columns at o (entries 1 + r chi_T), drop
  // roundoff-level columns, and renormalize rows (sums are 1 up to the simplex's tolerance).
  const double xmax = x.tail(x.size() - 1).maxCoeff();
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(k, n);
  const Eigen::MatrixXd& A = master.problem().A;
  for (Index c = 1; c < x.size(); ++c)
    if (x[c] > options.drop_tolerance * xmax) {
      auto col = M.col(col_output[std::size_t(c)]);
      for (Index y = 0; y < k; ++y) col[y] += x[c] * (A(y, c) > 0 ? 1.0 + oracle.r() : 1.0) / oracle.gamma();
    }
  // The columns are eps-DP in exact arithmetic; roundoff (the row normalization, the simplex's
  // tolerances) can push a ratio past e^eps by a few ulps: the stored matrix is made eps-DP
  // exactly (the mass moved is roundoff).
  result.mechanism = detail::mechanism_from_used_columns(prior.values(), sorted, M, eps);
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  return result;
}

}  // namespace labeldp
