/// \file
/// The answer of the optimal-LP solver (optimal_mechanism_lp() in mechanisms/optimal_lp.hpp): the
/// mechanism, its status and its certificate. Apart from the solver, so that the writers of its file
/// (io/json.hpp) need not compile the solver.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/optim/simplex_types.hpp"

namespace labeldp {

/// Result of optimal_mechanism_lp().
template <typename Scalar = double>
struct OptimalLPResult {
  /// Outcome of the column generation: Optimal only when proved (see optimal_mechanism_lp()),
  /// else IterationLimit, TimeLimit or NumericalIssue; the mechanism is then the best one found
  /// (feasible) when any master solve succeeded, with `dual_bound` and `gap`.
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;
  /// The optimal mechanism from the prior's values to the outputs it uses with positive
  /// probability (valid when status is Optimal).
  FiniteMechanism<Scalar> mechanism;
  /// Its expected noisy-label loss \f$\sum_y p_y \sum_o M[y][o]\,\ell(o, y)\f$ (the LP optimum).
  Scalar expected_loss = 0;
  /// Pricing rounds of the column generation.
  Index rounds = 0;
  /// Staircase columns in the final master (initial + generated).
  Index columns = 0;
  /// Simplex pivots over all master solves.
  Index iterations = 0;
  /// Lower bound on the LP optimum certified by `duals` (Lagrangian bound, see
  /// optimal_mechanism_lp()); equals expected_loss up to the gap tolerance when Optimal.
  double dual_bound = 0;
  /// Relative gap (master optimum - dual_bound) / master optimum of the column generation
  /// (<= the gap tolerance when Optimal; how far from proved otherwise).
  double gap = std::numeric_limits<double>::infinity();
  /// Row duals \f$\pi\f$ (one per label) that certify `dual_bound`.
  Eigen::VectorXd duals;
  /// True when `mechanism` is the interior point's own optimum, certified by its duals without
  /// the simplex crossover (OptimalLPOptions::vertex off); rounds, columns and iterations are
  /// then 0.
  bool interior_solution = false;
  /// True when `mechanism` is RR-on-Bins onto O (OptimalLPOptions::rr_on_bins), certified by
  /// complementary-slackness duals without the interior point or the master; rounds, columns
  /// and iterations are then 0.
  bool bins_solution = false;

  /// The answer's certified relative gap, (expected_loss - dual_bound) / |expected_loss|: 0 when
  /// the bound is above the loss by roundoff, infinity without a finite bound.
  double certified_gap() const {
    if (!std::isfinite(dual_bound)) return std::numeric_limits<double>::infinity();
    const double scale = std::max(std::abs(double(expected_loss)), 1e-300);
    return std::max(0.0, double(expected_loss) - dual_bound) / scale;
  }

  /// A limit reached (or a certificate roundoff kept above the tolerance) after a feasible
  /// mechanism was found still answers with that mechanism and its certified gap; before one
  /// was found there is no answer.
  /// \throws std::runtime_error when no feasible mechanism was found.
  void require_mechanism() const {
    if (status != optim::SolveStatus::Optimal && mechanism.num_outputs() == 0)
      throw std::runtime_error("the optimal-mechanism LP stopped without a certified optimum (" + to_string(status) +
                               " after " + std::to_string(rounds) +
                               " column-generation rounds, before a feasible mechanism was found)");
  }

  /// The one-line warning for a feasible answer not certified optimal; empty when Optimal.
  std::string warning() const {
    if (status == optim::SolveStatus::Optimal) return {};
    return to_string(status) +
           " reached: the mechanism is eps-DP and feasible but not certified optimal; its expected loss is at most "
           "a relative " +
           detail::format_number(certified_gap()) + " above the optimum";
  }
};

}  // namespace labeldp
