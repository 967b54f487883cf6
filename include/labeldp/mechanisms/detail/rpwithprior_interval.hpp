/// \file
/// The optimal interval \f$[A_1, A_2]\f$ of RPWithPrior (ICLR submission, Section 3.2) in O(m)
/// for a histogram prior with m cells: Dinkelbach's method on the ratio F of Lemma 3.3, each
/// step a maximum-subarray scan.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/optim/simplex_types.hpp"

namespace labeldp {

/// Outcome of an interval search (a value, not an exception).

/// An interval \f$[A_1, A_2]\f$ with its objective \f$F(A_1, A_2)\f$ (Lemma 3.3).
/// \tparam Scalar floating-point type.
template <typename Scalar = double>
struct OptimalInterval {
  Scalar a1;         ///< \f$A_1\f$.
  Scalar a2;         ///< \f$A_2\f$.
  Index first_node;  ///< i with \f$A_1 = n_i\f$, or -1 when \f$A_1\f$ is not a node.
  Index last_node;   ///< j with \f$A_2 = n_j\f$, or -1 when \f$A_2\f$ is not a node.
  Scalar objective;  ///< \f$F(A_1, A_2) = \frac{2\zeta}{2\zeta + e^{-\varepsilon}(A_2 - A_1)} \int_{A_1}^{A_2} f_Y\f$.
  Index iterations;  ///< Dinkelbach iterations (0 for solvers that do not iterate).
  optim::SolveStatus
      status;  ///< Optimal (F maximal within rounding) or IterationLimit (Dinkelbach stopped; the best interval found).
};

/// \f$F(A_1, A_2) = \frac{2\zeta}{\gamma} \int_{A_1}^{A_2} f_Y(y)\,dy\f$ with
/// \f$\gamma = 2\zeta + e^{-\varepsilon}(A_2 - A_1)\f$ (Lemma 3.3): the probability that a label
/// drawn from the prior lands in \f$[A_1, A_2]\f$ and its noisy label within \f$\zeta\f$ of it.
/// \throws std::invalid_argument naming 'eps', 'zeta', 'a1' or 'a2' (finite, a1 <= a2).
template <typename Scalar>
Scalar interval_objective(const HistogramPrior<Scalar>& prior, Scalar a1, Scalar a2, double eps, Scalar zeta) {
  validate_epsilon(eps);
  validate_finite_positive("zeta", double(zeta));
  validate_finite("a1", double(a1));
  validate_finite("a2", double(a2));
  if (a1 > a2) detail::fail_parameter("a1", "must be <= 'a2' = " + detail::format_number(double(a2)), double(a1));
  // F = mass / (1 + c (A2 - A1) / (2 zeta)): the same value, without overflow for huge zeta.
  return prior.mass_between(a1, a2) / (1 + Scalar(std::exp(-eps)) / (2 * zeta) * (a2 - a1));
}

/// The interval maximizing F (Lemma 3.3) over all \f$A_1 \le A_2\f$, exactly, in O(m) per
/// Dinkelbach iteration.
///
/// Why nodes suffice: with \f$A_1\f$ in cell i and \f$A_2\f$ in cell j, the mass is affine in
/// \f$(A_1, A_2)\f$ and so is \f$\gamma > 0\f$; a linear-fractional function on that polytope
/// (a rectangle, or a triangle when i = j) is quasi-linear, so its maximum is at a vertex, i.e.
/// at a pair of nodes; outside \f$[n_0, n_m]\f$ F is monotone toward it (Lemma 3.5). The
/// critical points of Algorithm 1 are never needed.
///
/// Dinkelbach: with prefix masses P and \f$\kappa = e^{-\varepsilon}/(2\zeta)\f$, F at nodes
/// (i, j) is \f$(P_j - P_i)/(1 + \kappa(n_j - n_i))\f$; for \f$\lambda \ge 0\f$,
/// \f$\max_{i \le j} (P_j - P_i) - \lambda(1 + \kappa(n_j - n_i))\f$ equals
/// \f$\max_{i \le j} (h_j - h_i) - \lambda\f$, \f$h_k = P_k - \lambda\kappa n_k\f$: a running
/// minimum (maximum subarray, Kadane). Starting from F of the best of a few central-quantile
/// intervals, \f$\lambda\f$ is set to F of the maximizer until it stops increasing; each step increases \f$\lambda\f$
/// strictly and there are finitely many pairs, so it ends at the optimum (superlinearly: typically 3-6 steps).
///
/// Ties (several maximizers, F equal to 1e-14 relative): the one with the smallest \f$A_2\f$
/// and, for it, the largest \f$A_1\f$ (the shortest interval), found during the last scan (at
/// the optimal \f$\lambda\f$).
///
/// \param prior histogram prior (m cells).
/// \param eps privacy budget \f$\varepsilon > 0\f$. \param zeta \f$\zeta > 0\f$.
/// \param max_iterations Dinkelbach iteration limit (>= 1).
/// \return the interval (both ends nodes), its objective, the iteration count and the status.
/// \throws std::invalid_argument naming 'eps', 'zeta' or 'max_iterations'.
///
/// \code{.cpp}
/// auto prior = labeldp::HistogramPrior<>::from_masses({0, 1, 2, 3}, {1, 8, 1});
/// auto best = labeldp::optimal_interval(prior, 1.0, 0.25);   // [1, 2]
/// \endcode
template <typename Scalar>
OptimalInterval<Scalar> optimal_interval(const HistogramPrior<Scalar>& prior, double eps, Scalar zeta,
                                         Index max_iterations = 100) {
  validate_epsilon(eps);
  validate_finite_positive("zeta", double(zeta));
  if (max_iterations < 1) detail::fail_parameter("max_iterations", "must be >= 1", double(max_iterations));
  const Index m = prior.num_cells();
  const Scalar* n = prior.edges().data();
  const Scalar* P = prior.cumulative().data();
  const Scalar n0 = n[0];
  // F(i, j) = (P_j - P_i) / (1 + kappa (n_j - n_i)), kappa = e^-eps / (2 zeta): Lemma 3.3's ratio
  // divided through by 2 zeta (no overflow for huge zeta). Coordinates relative to n_0 keep h_k
  // free of the cancellation a large offset would cause.
  const Scalar kappa = Scalar(std::exp(-eps)) / (2 * zeta);
  auto ratio = [&](Index i, Index j) { return (P[j] - P[i]) / (1 + kappa * ((n[j] - n0) - (n[i] - n0))); };
  const Scalar width = n[m] - n0;
  // argmax_{i <= j} h_j - h_i with h_k = P_k - lambda kappa (n_k - n_0) (ties: smallest j, then
  // largest i), and, for the tie rule, the first pair (smallest j; its best partner i, the
  // largest among equal minima: the shortest interval) whose F is lambda to 1e-14. Its
  // parametric value D (F - lambda) is then about 0, so F is only computed for pairs whose gain
  // passes a slightly looser threshold (gains of tied pairs can differ by rounding).
  struct Scan {
    Index best_i = 0, best_j = 0, tie_i = -1, tie_j = -1;
  };
  auto scan = [&](Scalar lambda) {
    Scan r;
    const Scalar slope = lambda * kappa;
    const Scalar threshold = lambda - Scalar(1e-12) * lambda * (1 + kappa * width);
    Scalar min_h = std::numeric_limits<Scalar>::infinity();
    Index min_i = 0;
    Scalar best = -std::numeric_limits<Scalar>::infinity();
    for (Index k = 0; k <= m; ++k) {
      const Scalar h = P[k] - slope * (n[k] - n0);
      if (h <= min_h) {
        min_h = h;
        min_i = k;
      }
      const Scalar gain = h - min_h;
      if (gain > best) {
        best = gain;
        r.best_i = min_i;
        r.best_j = k;
      }
      if (r.tie_j < 0 && min_i < k && gain >= threshold && ratio(min_i, k) >= lambda * (1 - Scalar(1e-14))) {
        r.tie_i = min_i;
        r.tie_j = k;
      }
    }
    return r;
  };

  OptimalInterval<Scalar> out{n0, n0, 0, 0, 0, 0, optim::SolveStatus::IterationLimit};
  // Start from the best of a few central-quantile intervals (O(log m) each): any F of a pair is
  // a valid lower bound, and a good one saves Dinkelbach passes over the m cells.
  Index bi = 0, bj = m;
  Scalar lambda = ratio(0, m);
  for (const Scalar tail : {Scalar(0.02), Scalar(0.1), Scalar(0.25), Scalar(0.4)}) {
    const Index i = Index(std::upper_bound(P, P + m + 1, tail) - P) - 1;
    const Index j = Index(std::lower_bound(P, P + m + 1, P[m] - tail) - P);
    if (i < j && ratio(i, j) > lambda) {
      lambda = ratio(i, j);
      bi = i;
      bj = j;
    }
  }
  for (Index it = 1; it <= max_iterations; ++it) {
    const Scan r = scan(lambda);
    const Scalar value = r.best_i < r.best_j ? ratio(r.best_i, r.best_j) : Scalar(0);
    out.iterations = it;
    if (!(value > lambda)) {
      // The parametric optimum is (numerically) 0: lambda is optimal, and this scan (at lambda)
      // found the tie rule's pair (the pair that gave lambda qualifies, so one exists).
      if (r.tie_j >= 0) {
        bi = r.tie_i;
        bj = r.tie_j;
        lambda = ratio(bi, bj);
      }
      out.status = optim::SolveStatus::Optimal;
      break;
    }
    lambda = value;
    bi = r.best_i;
    bj = r.best_j;
  }
  const Scalar objective = lambda;
  out.a1 = n[bi];
  out.a2 = n[bj];
  out.first_node = bi;
  out.last_node = bj;
  out.objective = objective;
  return out;
}

}  // namespace labeldp
