/// \file
/// Splitting a total privacy budget between the private prior (Algorithm 4 of Ghazi et al.,
/// ICLR 2023, "RR-on-Bins") and the mechanism that randomizes the labels (their Algorithm 3).
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// How a total budget \f$\varepsilon = \varepsilon_1 + \varepsilon_2\f$ is spent by the two-stage
/// randomizer (Ghazi et al. 2023, Algorithm 3 and Theorem 6): \f$\varepsilon_1\f$ on the private
/// histogram that estimates the prior, \f$\varepsilon_2\f$ on the label mechanism. By basic
/// composition the released labels are \f$(\varepsilon_1 + \varepsilon_2)\f$-label-DP.
///
/// \code{.cpp}
/// auto split = labeldp::BudgetSplit::of(0.1, 0.9);   // eps_prior, eps_mechanism
/// double total = split.total();                        // 1.0
/// \endcode
struct BudgetSplit {
  /// \f$\varepsilon_1\f$: spent on the private prior (Algorithm 4).
  double eps_prior = 0;
  /// \f$\varepsilon_2\f$: spent on the label mechanism (RR-on-Bins).
  double eps_mechanism = 0;

  /// A validated split.
  /// \throws std::invalid_argument naming 'eps_prior' or 'eps_mechanism' unless both are finite
  ///         and positive.
  static BudgetSplit of(double eps_prior, double eps_mechanism) {
    validate_epsilon(eps_prior, "eps_prior");
    validate_epsilon(eps_mechanism, "eps_mechanism");
    return BudgetSplit{eps_prior, eps_mechanism};
  }

  /// The total budget \f$\varepsilon_1 + \varepsilon_2\f$ that the two stages spend together.
  double total() const { return eps_prior + eps_mechanism; }

  /// Re-checks the invariants (for splits built field by field).
  /// \throws std::invalid_argument as of().
  void validate() const { (void)of(eps_prior, eps_mechanism); }
};

namespace detail {

/// The largest double r with \f$\varepsilon_1 + r \le \varepsilon\f$ in exact arithmetic, for
/// \f$0 < \varepsilon_1 < \varepsilon\f$: fl(eps - eps1), lowered by one ulp when Fast2Sum
/// shows it was rounded up (eps >= eps1, so the error term is exact).
inline double budget_remainder(double eps, double eps1) {
  const double r = eps - eps1;
  const double err = -eps1 - (r - eps);  // (eps - eps1) - r exactly
  return err < 0 ? std::nextafter(r, 0.0) : r;
}

}  // namespace detail

/// Spends `eps_prior` of the total `eps` on the prior and the rest on the mechanism: the
/// mechanism gets the largest double with eps_prior + eps_mechanism <= eps exactly.
/// \throws std::invalid_argument naming 'eps' unless it is finite and positive, and naming
///         'eps_prior' unless 0 < eps_prior < eps.
inline BudgetSplit split_budget(double eps, double eps_prior) {
  validate_epsilon(eps);
  validate_epsilon(eps_prior, "eps_prior");
  if (!(eps_prior < eps))
    detail::fail_parameter("eps_prior", "must be less than the total eps " + detail::format_number(eps), eps_prior);
  return BudgetSplit::of(eps_prior, detail::budget_remainder(eps, eps_prior));
}

/// The prior budget suggested by Theorem 7 of Ghazi et al. (2023):
/// \f$\varepsilon_1 = \sqrt{k/n}\f$ for a support of k values and n labels, which balances the
/// histogram's L1 error \f$O(\sqrt{k/n} + k/(\varepsilon_1 n))\f$ against the loss of
/// \f$\varepsilon_1\f$ from the mechanism's budget (their proof bounds it by \f$2B\varepsilon_1\f$).
///
/// The theorem needs \f$n > k/\varepsilon^2\f$ (their footnote 7) so that
/// \f$\varepsilon_2 = \varepsilon - \varepsilon_1 > 0\f$. Outside that regime (few labels, large
/// support) \f$\sqrt{k/n}\f$ is clamped to `max_prior_fraction * eps` (default half the budget):
/// a prior estimated with less would be mostly noise, while spending more would leave the
/// mechanism too little. The result always satisfies \f$0 < \varepsilon_1 < \varepsilon\f$.
///
/// \param eps total budget, finite and > 0.
/// \param k support size, >= 1.
/// \param n number of labels, >= 1.
/// \param max_prior_fraction largest share of `eps` given to the prior, in (0, 1).
/// \throws std::invalid_argument naming the offending parameter.
inline BudgetSplit theorem7_split(double eps, Index k, Index n, double max_prior_fraction = 0.5) {
  validate_epsilon(eps);
  if (k < 1) detail::fail_parameter("k", "must be at least 1", double(k));
  if (n < 1) detail::fail_parameter("n", "must be at least 1", double(n));
  if (!(max_prior_fraction > 0 && max_prior_fraction < 1))
    detail::fail_parameter("max_prior_fraction", "must be in (0, 1)", max_prior_fraction);
  const double eps1 = std::min(std::sqrt(double(k) / double(n)), max_prior_fraction * eps);
  return BudgetSplit::of(eps1, detail::budget_remainder(eps, eps1));
}

}  // namespace labeldp
