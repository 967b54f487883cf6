/// \file
/// From a solved staircase master (Badanidiyuru et al. 2023, Alg. 1) to a certified
/// FiniteMechanism: the support's weights re-solved, columns merged per output, rows restored by
/// column scales (which keep every column's ratios, hence eps-DP), the stored matrix made eps-DP
/// exactly; the weak-duality lower bound over every real output (Theorem 6's continuous
/// problem), and the certificate (lower bound and relative gap) attached to a result.
#pragma once

#include <Eigen/Core>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/lp_columns.hpp"
#include "labeldp/mechanisms/detail/unbiased_master.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp::detail {

/// Row sums of a staircase mechanism off from 1 by more than roundoff (weights clamped at zero
/// after a simplex tolerance, a degenerate basis) must not be fixed by dividing each row by its
/// sum: that multiplies the ratio between two rows by the ratio of their sums, and the exact
/// audit would see eps exceeded by that much. Scaling whole columns (outputs) leaves every
/// column's ratios, hence the privacy, untouched. `columns` (k x n, one column per output at
/// the scaled `outputs`) are rescaled in place by the minimum-norm scales that make the rows sum
/// to 1 and keep the conditional means, or the rows alone if that is not solvable, when those
/// scales are positive and reach roundoff; otherwise they are left as they are.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline void rescale_columns_to_rows(const UnbiasedProblem& P, const Eigen::VectorXd& outputs,
                                    Eigen::MatrixXd& columns) {
  const Index k = P.num_labels(), n = columns.cols();
  const Eigen::VectorXd unit_scales = Eigen::VectorXd::Ones(n), ones = Eigen::VectorXd::Ones(k);
  if ((columns * unit_scales - ones).cwiseAbs().maxCoeff() <= 1e-14) return;
  for (const bool with_means : {true, false}) {
    if (with_means && P.bounded()) continue;  // a bias bound does not pin the means
    const Index rows = with_means ? 2 * k : k;
    Eigen::MatrixXd E(rows, n);
    Eigen::VectorXd f(rows);
    E.topRows(k) = columns;
    f.head(k) = ones;
    if (with_means) {
      E.bottomRows(k) = columns * outputs.asDiagonal();
      f.tail(k) = P.labels;
    }
    const Eigen::VectorXd scales = unit_scales + E.completeOrthogonalDecomposition().solve(f - E * unit_scales);
    if (!scales.allFinite() || !(scales.minCoeff() > 0.5)) continue;
    if ((columns * scales - ones).cwiseAbs().maxCoeff() > 1e-14) continue;
    columns *= scales.asDiagonal();
    return;
  }
}

/// The last part of finish_unbiased(): the mechanism with columns `cols` (k entries each, in
/// the eps-DP cone to roundoff) on the distinct original outputs `outs` (ascending) becomes
/// `result.mechanism` (outputs of roundoff-level probability dropped, rows restored by
/// rescale_columns_to_rows(), the last roundoff divided out, made eps-DP exactly by
/// cap_to_epsilon()) with its loss and bias; NumericalIssue when no output is left.
template <typename Scalar, typename Loss>
void finish_columns(const FinitePrior<Scalar>& prior, const UnbiasedProblem& P, const std::vector<double>& outs,
                    const std::vector<Eigen::VectorXd>& cols, const Loss& loss, UnbiasedResult<Scalar>& result) {
  const Index k = P.num_labels();
  // Outputs whose probabilities are at roundoff level carry no meaning; keeping them would
  // list outputs of probability ~1e-17.
  std::vector<Index> keep;
  for (std::size_t j = 0; j < cols.size(); ++j)
    if (cols[j].maxCoeff() > 1e-14) keep.push_back(Index(j));
  if (keep.empty()) {
    result.status = optim::SolveStatus::NumericalIssue;
    return;
  }
  Vector<Scalar> outputs(Index(keep.size()));
  Eigen::MatrixXd kept(k, Index(keep.size()));
  Eigen::VectorXd scaled_outputs(Index(keep.size()));
  for (std::size_t t = 0; t < keep.size(); ++t) {
    outputs[Index(t)] = Scalar(outs[std::size_t(keep[t])]);
    scaled_outputs[Index(t)] = (outs[std::size_t(keep[t])] - P.shift) / P.scale;
    kept.col(Index(t)) = cols[std::size_t(keep[t])];
  }
  rescale_columns_to_rows(P, scaled_outputs, kept);
  // The columns are eps-DP in exact arithmetic; the row division (and a tolerance-feasible
  // master) can push a ratio past e^eps by a few ulps: the stored matrix is made eps-DP exactly.
  result.mechanism = mechanism_from_lp_columns(prior.values(), std::move(outputs), kept, P.eps);
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  result.max_bias = achieved_max_bias(result.mechanism, prior);
}

/// Turns the master's solution into a FiniteMechanism in original units: re-solves the square
/// system on the support (removing the simplex's tolerance-level residuals), merges columns
/// on the same output, drops outputs without probability, rescales outputs so that rows sum to
/// 1 (rescale_columns_to_rows()), and divides out the last roundoff.
template <typename Scalar, typename Loss>
UnbiasedResult<Scalar> finish_unbiased(const FinitePrior<Scalar>& prior, const UnbiasedProblem& P, StaircaseMaster& S,
                                       const std::vector<double>& original_outputs_of_grid, const Loss& loss) {
  UnbiasedResult<Scalar> result;
  result.status = S.status;
  result.rounds = S.rounds;
  result.columns = Index(S.columns.size());
  result.simplex_iterations = S.iterations;
  // A limit or roundoff that stopped the solve after a feasible master was found still gives
  // a mechanism: the best found, reported with its gap (attach_certificate()).
  const bool stopped_feasible =
      S.feasible && (S.status == optim::SolveStatus::TimeLimit || S.status == optim::SolveStatus::IterationLimit ||
                     S.status == optim::SolveStatus::NumericalIssue);
  if (S.status != optim::SolveStatus::Optimal && !stopped_feasible) return result;
  const Index k = P.num_labels();
  std::vector<Index> support;
  for (Index j = 0; j < S.x.size(); ++j)
    if (S.x[j] > 0) support.push_back(j);
  Eigen::VectorXd weights(Index(support.size()));
  for (std::size_t t = 0; t < support.size(); ++t) weights[Index(t)] = S.x[support[t]];
  if (!P.bounded() && !support.empty()) {
    // Unbiased: the 2k equality rows determine the support's weights; solving them directly
    // brings the residuals from the simplex tolerance down to roundoff.
    Eigen::MatrixXd A(2 * k, Index(support.size()));
    Eigen::VectorXd b(2 * k);
    for (Index i = 0; i < k; ++i) {
      b[i] = 1;
      b[k + i] = P.labels[i];
    }
    for (std::size_t t = 0; t < support.size(); ++t) {
      const StaircaseColumn& col = S.columns[std::size_t(support[t])];
      for (Index i = 0; i < k; ++i) {
        const double s = col.pattern[std::size_t(i)] ? 1.0 : P.low;
        A(i, Index(t)) = s;
        A(k + i, Index(t)) = s * col.output;
      }
    }
    // Weights already exact to roundoff (the interior point's Newton polish) need no re-solve.
    const double residual = (A * weights - b).cwiseAbs().maxCoeff();
    // Only a vertex (at most 2k columns) is re-solved: a wider support is an interior point's
    // decomposition (up to k columns per output; a QR of that block took seconds, and its
    // basic solution moved the loss by 4e-9 relative), whose rows rescale_columns_to_rows()
    // restores below.
    if (residual > 1e-14 * (1 + b.cwiseAbs().maxCoeff()) && A.cols() <= 2 * k) {
      const Eigen::VectorXd polished = A.colPivHouseholderQr().solve(b);
      if (polished.allFinite() && (A * polished - b).cwiseAbs().maxCoeff() < residual && polished.minCoeff() > -1e-12)
        weights = polished.cwiseMax(0.0);
    }
  }
  // Merge by output.
  std::vector<std::pair<double, Index>> order;  // (original output, support position)
  for (std::size_t t = 0; t < support.size(); ++t) {
    const StaircaseColumn& col = S.columns[std::size_t(support[t])];
    const double o =
        col.grid_index >= 0 ? original_outputs_of_grid[std::size_t(col.grid_index)] : P.shift + P.scale * col.output;
    order.emplace_back(o, Index(t));
  }
  std::sort(order.begin(), order.end());
  std::vector<double> outs;
  std::vector<Eigen::VectorXd> cols;
  for (const auto& [o, t] : order) {
    const StaircaseColumn& col = S.columns[std::size_t(support[std::size_t(t)])];
    if (outs.empty() || outs.back() != o) {
      outs.push_back(o);
      cols.push_back(Eigen::VectorXd::Zero(k));
    }
    for (Index i = 0; i < k; ++i) cols.back()[i] += weights[t] * (col.pattern[std::size_t(i)] ? 1.0 : P.low);
  }
  finish_columns(prior, P, outs, cols, loss, result);
  return result;
}

/// Weak-duality lower bound (scaled units) on the continuous problem's optimum for any duals
/// (pi, sigma) (2k entries; sigma folded as in bias_duals()): see UnbiasedResult::lower_bound.
///
/// Any feasible mechanism's loss is the dual objective plus \f$\sum_T m_T r_T\f$ (\f$r_T\f$ the
/// reduced cost of a (pattern, output) pair, \f$m_T\f$ its weight). Summing the k normalization
/// rows gives \f$\sum_T m_T n_T = k\f$ with \f$n_T = \sum_y s_{T,y}\f$, so
/// \f$\sum_T m_T r_T \ge k \min_T r_T / n_T\f$: the bound is the dual objective plus k times
/// continuous_min_ratio() (staircase_min_ratio(), which derives it), at least the plain
/// \f$\min(0, \rho) \cdot k / (1 + (k - 1) \ell)\f$ with \f$\rho\f$ the least reduced cost
/// (a non-empty pattern has \f$n_T \ge 1 + (k - 1) \ell\f$; at most \f$\min(k, 1/\ell)\f$, the
/// factor that multiplies the roundoff in \f$\rho\f$: at eps = 12, \f$1/\ell \approx 1.6
/// \cdot 10^5\f$ would swamp a 1e-9 certificate). Weighing each pattern by its own
/// \f$n_T\f$ matters where the columns that price out are wide patterns (\f$n_T\f$ up to k):
/// bias-bounded lognormal k = 401 at eps 4, where the least weight is 8.3.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline double continuous_lower_bound(const UnbiasedProblem& P, const Eigen::VectorXd& pi_sigma, double lo, double hi) {
  const Index k = P.num_labels();
  Eigen::VectorXd duals = Eigen::VectorXd::Zero(P.num_rows());
  duals.head(2 * k) = pi_sigma;
  const Eigen::VectorXd sigma = pi_sigma.tail(k);
  return pi_sigma.head(k).sum() + P.labels.dot(sigma) - P.max_bias * sigma.cwiseAbs().sum() +
         double(k) * continuous_min_ratio(P, duals, lo, hi);
}

/// Records the certified lower bound `bound` (units of expected_loss) and the relative gap on a
/// result that has a mechanism, and withdraws Optimal when the gap exceeds `gap_tolerance`
/// (roundoff kept the certificate from closing: the status says so, NumericalIssue, and the
/// mechanism stays as the best feasible one). A bound above the loss by roundoff (1e-10
/// relative: the final mechanism is made eps-DP exactly by cap_to_epsilon, which may lower its
/// loss by a removed mass of that order) is taken as the loss itself; beyond that it is no
/// certificate: lower_bound stays NaN, gap infinite, and Optimal becomes NumericalIssue.
template <typename Scalar>
void attach_certificate(UnbiasedResult<Scalar>& result, double bound, double gap_tolerance) {
  if (result.mechanism.num_outputs() == 0 || !(bound > -std::numeric_limits<double>::infinity())) {
    if (result.optimal()) result.status = optim::SolveStatus::NumericalIssue;
    return;
  }
  const double loss = double(result.expected_loss), scale = std::max(std::abs(loss), 1e-300);
  if (bound > loss && bound - loss <= 1e-10 * scale) bound = loss;
  if (bound > loss) {
    // A bound above a feasible mechanism's loss by more than that is roundoff, not a
    // certificate (losses at eps above ~13 of 1e-11 down to 1e-130 with bounds computed from
    // terms of order one; or a mechanism within the bias tolerance but beyond B): no bound.
    if (result.optimal()) result.status = optim::SolveStatus::NumericalIssue;
    result.lower_bound = std::numeric_limits<Scalar>::quiet_NaN();
    result.gap = std::numeric_limits<Scalar>::infinity();
    return;
  }
  result.lower_bound = Scalar(bound);
  result.gap = Scalar(std::max(0.0, loss - bound) / scale);
  if (result.optimal() && !(double(result.gap) <= gap_tolerance)) result.status = optim::SolveStatus::NumericalIssue;
}

/// The answer for a prior on one label y: the only unbiased mechanism outputs y, so its loss
/// `loss_at_label` (the loss of y against itself) is the optimum, certified with gap 0.
template <typename Scalar>
UnbiasedResult<Scalar> trivial_unbiased(const FinitePrior<Scalar>& prior, Scalar loss_at_label) {
  UnbiasedResult<Scalar> r;
  r.status = optim::SolveStatus::Optimal;
  Matrix<Scalar> one(1, 1);
  one(0, 0) = 1;
  r.mechanism = FiniteMechanism<Scalar>(prior.values(), prior.values(), one);
  r.expected_loss = r.lower_bound = loss_at_label;
  r.gap = 0;
  return r;
}

/// The last check of every unbiased solve: a mechanism whose achieved bias
/// \f$\max_y |E[M(y)] - y|\f$ exceeds the bound asked for (beyond B by more than a relative
/// 1e-6, or for B = 0 by more than \f$10^{-9}\f$ of the labels' range) is not returned, whatever
/// the solver's status (a solve that stopped on a numerical issue may hold a master that is not
/// feasible): the result then has no mechanism and status NumericalIssue, so callers can never
/// use it by mistake. Certified solves meet B up to the roundoff of the stored doubles (about
/// 1e-13 relative); an uncertified one may exceed it by the master's feasibility tolerance,
/// which its reported max_bias shows.
template <typename Scalar>
UnbiasedResult<Scalar> refuse_bias_beyond(UnbiasedResult<Scalar> result, const FinitePrior<Scalar>& prior,
                                          double max_bias) {
  if (result.mechanism.num_outputs() == 0) return result;
  const double range = double(prior.value(prior.size() - 1) - prior.value(0));
  const double allowed = max_bias > 0 ? max_bias * (1 + 1e-6) : 1e-9 * std::max(range, 1.0);
  if (double(result.max_bias) <= allowed) return result;
  UnbiasedResult<Scalar> refused;
  refused.status = optim::SolveStatus::NumericalIssue;
  refused.rounds = result.rounds;
  refused.columns = result.columns;
  refused.simplex_iterations = result.simplex_iterations;
  refused.interior_point_iterations = result.interior_point_iterations;
  refused.max_bias = result.max_bias;
  return refused;
}

}  // namespace labeldp::detail
