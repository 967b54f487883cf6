/// \file
/// Algorithm 1 of the RPWithPrior ICLR submission ("Compute Optimal Interval"), kept as printed
/// as a slow O(m^2) reference for the linear-time solver in rpwithprior.hpp.
#pragma once

#include <cmath>
#include <limits>

#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/rpwithprior_interval.hpp"

namespace labeldp {

/// The paper's Algorithm 1, kept readable and as printed, O(m^2) for m cells: for every pair of
/// cells i <= j it evaluates F at the four node pairs (line 5) and at the "critical points"
/// \f$e_1, e_2\f$ of Lemma 3.5 (lines 9-26).
///
/// Two corrections, both needed for it to be a correct reference:
/// - Lines 23-24 as printed update \f$[A_1, A_2]\f$ to \f$(e_1, e_2)\f$ but forget \f$f\f$; here
///   \f$f = F(e_1, e_2)\f$ is updated too (without it a later, worse candidate can overwrite the
///   interval because \f$f\f$ still holds the old, smaller value).
/// - F is only evaluated for \f$A_1 \le A_2\f$: line 5 with i = j also proposes
///   \f$(n_{i+1}, n_i)\f$, where Lemma 3.3's objective is undefined (the printed formula can
///   even be positive there, a negative mass over a negative \f$\gamma\f$).
///
/// (On each rectangle of cells F is linear-fractional, hence quasi-linear, so the critical
/// points can never beat the four vertices already checked at line 5 of the same iteration:
/// lines 10-26 are dead in exact arithmetic, and so is the bug they contain. They are kept, as
/// printed, because this function is the paper's algorithm; the tests confirm it returns the
/// node-pair optimum.)
///
/// Critical points exist only when \f$\alpha_i \ne \alpha_j\f$ (otherwise the partial
/// derivatives of Lemma 3.5 do not vanish at a point); they are skipped otherwise. Ties keep
/// the first candidate in the printed order (strict `f <` comparisons).
///
/// \param prior the histogram \f$n_0 < \dots < n_m\f$, \f$\alpha_0..\alpha_{m-1}\f$.
/// \param eps privacy budget (> 0). \param zeta neighbourhood half-width \f$\zeta > 0\f$.
/// \return the interval with first_node / last_node set when an end is a node (-1 otherwise),
///         iterations = 0, status Optimal.
/// \throws std::invalid_argument naming 'eps' or 'zeta' when not finite and positive.
template <typename Scalar>
OptimalInterval<Scalar> optimal_interval_reference(const HistogramPrior<Scalar>& prior, double eps, Scalar zeta) {
  validate_epsilon(eps);
  validate_finite_positive("zeta", double(zeta));
  const Index k = prior.num_cells();
  const Vector<Scalar>& n = prior.edges();
  const Vector<Scalar>& alpha = prior.densities();
  const Vector<Scalar>& P = prior.cumulative();
  const Scalar c = Scalar(std::exp(-eps));
  const Scalar two_zeta = 2 * zeta;

  // F(A1, A2) for A1 in cell i and A2 in cell j (Lemma 3.3), the mass read off the prefix sums.
  auto F = [&](Scalar a1, Index i, Scalar a2, Index j) -> Scalar {
    if (a1 > a2) return -std::numeric_limits<Scalar>::infinity();
    const Scalar mass = (P[j] + alpha[j] * (a2 - n[j])) - (P[i] + alpha[i] * (a1 - n[i]));
    return two_zeta * mass / (two_zeta + c * (a2 - a1));
  };

  Scalar f = 0;  // line 1
  OptimalInterval<Scalar> best{n[0], n[0], 0, 0, 0, 0, optim::SolveStatus::Optimal};
  auto consider = [&](Scalar value, Scalar a1, Index i1, Scalar a2, Index i2) {
    if (f < value) {
      f = value;
      best.a1 = a1;
      best.a2 = a2;
      best.first_node = i1;
      best.last_node = i2;
      best.objective = value;
    }
  };

  for (Index i = 0; i < k; ++i) {                                       // line 2
    for (Index j = i; j < k; ++j) {                                     // line 3
      const Scalar l1 = n[i], l2 = n[i + 1], m1 = n[j], m2 = n[j + 1];  // line 4
      // Lines 5-8: the four node pairs, in the order (l1,m1), (l1,m2), (l2,m1), (l2,m2).
      consider(F(l1, i, m1, j), l1, i, m1, j);
      consider(F(l1, i, m2, j), l1, i, m2, j + 1);
      consider(F(l2, i, m1, j), l2, i + 1, m1, j);
      consider(F(l2, i, m2, j), l2, i + 1, m2, j + 1);
      // Line 9: critical points of Lemma 3.5.
      if (alpha[i] == alpha[j]) continue;
      const Scalar h = alpha[i] * n[i + 1] + (j > i ? P[j] - P[i + 1] : Scalar(0)) - alpha[j] * n[j];
      const Scalar c1 = two_zeta * alpha[i] - c * h;
      const Scalar c2 = two_zeta * alpha[j] - c * h;
      const Scalar e1 = c2 / (c * (alpha[j] - alpha[i]));
      const Scalar e2 = c1 / (c * (alpha[j] - alpha[i]));
      const bool e2_inside = n[j] < e2 && e2 < n[j + 1];
      const bool e1_inside = n[i] < e1 && e1 < n[i + 1];
      if (e2_inside) {  // lines 10-15
        const Scalar a = F(n[i], i, e2, j), b = F(n[i + 1], i, e2, j);
        if (a >= b)
          consider(a, n[i], i, e2, -1);
        else
          consider(b, n[i + 1], i + 1, e2, -1);
      }
      if (e1_inside) {  // lines 16-21
        const Scalar a = F(e1, i, n[j], j), b = F(e1, i, n[j + 1], j);
        if (a >= b)
          consider(a, e1, -1, n[j], j);
        else
          consider(b, e1, -1, n[j + 1], j + 1);
      }
      if (e1_inside && e2_inside)  // lines 22-26, with f updated
        consider(F(e1, i, e2, j), e1, -1, e2, -1);
    }
  }
  return best;  // line 29
}

}  // namespace labeldp
