/// \file
/// Exact privacy audit of a finite mechanism.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/types.hpp"

namespace labeldp {

/// The smallest eps for which the probability matrix is eps-DP under label replacement:
/// \f$\max_j \max_{i,i'} \ln(P[i][j] / P[i'][j])\f$, computed per column from its largest and
/// smallest entries in O(kd), **rounded up**: the result is never below the exact level of the
/// stored numbers and exceeds it by at most a few units in the last place. Each column's
/// \f$\ln(1 + (hi - lo)/lo)\f$ is evaluated in long double (hi - lo is exact for close entries,
/// so tiny levels such as 1e-12 keep their relative accuracy, unlike \f$\ln hi - \ln lo\f$),
/// then rounded up to a double (one more ulp when that double is within the long-double error of
/// the value). To decide
/// whether a matrix is eps-DP for a given eps, use satisfies_epsilon() (exact, no logarithm).
/// A column that is 0 for some inputs and positive for others gives \f$+\infty\f$; all-zero
/// columns are ignored.
template <typename Derived>
double audit_epsilon(const Eigen::MatrixBase<Derived>& probabilities) {
  using LD = long double;
  LD worst = 0;
  for (Index j = 0; j < probabilities.cols(); ++j) {
    const LD hi = LD(probabilities.col(j).maxCoeff());
    const LD lo = LD(probabilities.col(j).minCoeff());
    if (hi <= 0) continue;
    if (lo <= 0) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::log1p((hi - lo) / lo));
  }
  if (worst == 0) return 0;
  // The smallest double >= worst; one more ulp unless it clears worst by more than the long
  // double evaluation error (a few units of 2^-64 relative; 2^-60 is used).
  double up = double(worst);
  if (LD(up) < worst) up = std::nextafter(up, std::numeric_limits<double>::infinity());
  if (LD(up) - worst <= worst * std::ldexp(LD(1), -60))
    up = std::nextafter(up, std::numeric_limits<double>::infinity());
  return up;
}

/// Makes a probability matrix eps-DP *exactly as stored and as sampled*: in every column,
/// entries above \f$L \cdot m\f$ are lowered to it, where m is the column's smallest entry and L
/// a double a few ulps below \f$e^\varepsilon\f$ (std::exp is within one ulp; the product is
/// rounded once more), so that afterwards \f$P[i][j] \le e^\varepsilon P[i'][j]\f$ holds for the
/// stored doubles in exact arithmetic. A sampler draws each row over its own sum (the alias
/// table's integer weights are the row's entries over their total), so rows whose sums differ --
/// an LP solution's rows divided by floating-point sums, or rows lowered by the first pass --
/// realize \f$P[i][j] / S_i\f$; the same cap is then applied to those ratios (with L lowered by
/// a further \f$2^{-50}\f$ to absorb the long-double row sums), and the two passes alternate
/// until neither changes anything (usually one or two rounds, each removing ~1e-16 of the
/// previous one's mass). A column with a zero entry and a positive one (not eps-DP for any
/// finite eps) is zeroed.
///
/// This is the last step of every solver that builds a mechanism from a floating-point
/// solution (the optimal LP and unbiased randomizers): their columns are non-negative
/// combinations of staircase vectors, eps-DP in exact arithmetic, and only roundoff (a
/// row normalization, a tolerance-feasible simplex basis) can push a ratio past
/// \f$e^\varepsilon\f$. The mass removed is returned so the caller can tell roundoff
/// (~1e-15) from a real defect; the rows are NOT renormalized (that would move the ratios
/// again).
/// \param probabilities k x d matrix with finite entries >= 0 (modified in place).
/// \param eps privacy parameter > 0 (not validated here; +infinity leaves every column as is).
/// \return the largest total mass removed from one row.
template <typename Derived>
double cap_to_epsilon(Eigen::MatrixBase<Derived>& probabilities, double eps) {
  using LD = long double;
  double L = std::exp(eps);
  for (int step = 0; step < 4; ++step) L = std::nextafter(L, 0.0);
  if (!(L < std::numeric_limits<double>::infinity())) L = std::numeric_limits<double>::max();
  L = std::max(L, 1.0);  // e^eps rounds to 1 below eps ~ 2^-53: equal entries are eps-DP for every eps
  const Index k = probabilities.rows();
  Eigen::VectorXd removed = Eigen::VectorXd::Zero(k);
  std::vector<LD> sums(std::size_t(k), LD(1));
  // Even rounds: the stored entries. Odd rounds: the entries over their rows' sums.
  int quiet = 0;
  for (int round = 0; round < 64 && quiet < 2; ++round) {
    const bool realized = round % 2 == 1;
    const LD limit = realized ? LD(L) * (1 - std::ldexp(LD(1), -50)) : LD(L);
    for (Index i = 0; i < k; ++i) {
      LD s = 0;
      if (realized)
        for (Index j = 0; j < probabilities.cols(); ++j) s += LD(probabilities(i, j));
      sums[std::size_t(i)] = realized && s > 0 ? s : LD(1);
    }
    bool changed = false;
    for (Index j = 0; j < probabilities.cols(); ++j) {
      LD lo = std::numeric_limits<LD>::infinity();
      for (Index i = 0; i < k; ++i) lo = std::min(lo, LD(probabilities(i, j)) / sums[std::size_t(i)]);
      for (Index i = 0; i < k; ++i) {
        const double v = double(probabilities(i, j));
        // The cap in stored units, rounded down to a double (so it never exceeds the bound).
        const LD bound = realized ? lo * limit * sums[std::size_t(i)] : LD(double(lo) * L);
        double cap = double(bound);
        if (LD(cap) > bound) cap = std::nextafter(cap, 0.0);
        if (v > cap) {
          removed[i] += v - cap;
          probabilities(i, j) = typename Derived::Scalar(cap);
          changed = true;
        }
      }
    }
    quiet = changed ? 0 : quiet + 1;
  }
  return k ? removed.maxCoeff() : 0.0;
}

/// Where a probability matrix fails to be eps-DP: output `column`, whose entry in `high_row`
/// exceeds \f$e^\varepsilon\f$ times its entry in `low_row`; column = -1 when there is none.
struct EpsilonViolation {
  Index column = -1, high_row = -1, low_row = -1;
};

/// The first column of `probabilities` (k x d, entries >= 0) in which some ratio
/// \f$P[i][j] / P[i'][j]\f$ exceeds \f$e^\varepsilon\f$ **in exact arithmetic on the stored
/// numbers**, or column -1 when the matrix is eps-DP exactly. A column with a zero entry and a
/// positive one is a violation; an all-zero column is not.
///
/// Decided with error bounds: \f$e^\varepsilon\f$ is evaluated in long double and each
/// comparison \f$hi \le lo \cdot e^\varepsilon\f$ is settled when it holds with a relative margin
/// larger than the evaluation error (2^-58 with an 80-bit long double, 2^-48 where long double is
/// a double); a ratio closer to \f$e^\varepsilon\f$ than that counts as a violation (the safe
/// direction). Matrices passed through cap_to_epsilon() always pass.
template <typename Derived>
EpsilonViolation find_epsilon_violation(const Eigen::MatrixBase<Derived>& probabilities, double eps) {
  using LD = long double;
  const int digits = std::numeric_limits<LD>::digits;
  const LD margin = std::ldexp(LD(1), -(digits >= 64 ? 58 : 48));
  const LD e = std::max(std::exp(LD(eps)) * (1 - margin), LD(1));  // ratio 1 is eps-DP for every eps >= 0
  for (Index j = 0; j < probabilities.cols(); ++j) {
    Index hi_i = 0, lo_i = 0;
    for (Index i = 1; i < probabilities.rows(); ++i) {
      if (probabilities(i, j) > probabilities(hi_i, j)) hi_i = i;
      if (probabilities(i, j) < probabilities(lo_i, j)) lo_i = i;
    }
    const LD hi = LD(probabilities(hi_i, j)), lo = LD(probabilities(lo_i, j));
    if (hi <= 0) continue;
    if (!(hi <= lo * e)) return {j, hi_i, lo_i};
  }
  return {};
}

/// True when find_epsilon_violation() finds none: the stored probabilities are eps-DP exactly.
template <typename Derived>
bool satisfies_epsilon(const Eigen::MatrixBase<Derived>& probabilities, double eps) {
  return find_epsilon_violation(probabilities, eps).column < 0;
}

/// True when the integer table that the mechanism's sampler draws from (DyadicAliasTable: row
/// i's weights \f$W_{ij}\f$ over the common total \f$2^{64}\f$) is eps-DP **exactly**: in every
/// column, \f$\max_i W_{ij} \le L \min_i W_{ij}\f$ in exact integer arithmetic, with L a double
/// two ulps below `std::exp(eps)` (within one ulp of \f$e^\varepsilon\f$, so \f$L < e^\varepsilon\f$).
/// Unlike satisfies_epsilon() of realized_probabilities() (doubles, each rounded from a 64-bit
/// weight), no rounding is involved. A column with a zero and a positive weight fails; an
/// all-zero column passes.
template <typename Scalar>
bool realized_satisfies_epsilon(const FiniteMechanism<Scalar>& mechanism, double eps) {
  using detail::u128;
  double L = std::exp(eps);
  if (!(L < std::numeric_limits<double>::infinity())) return true;
  L = std::max(std::nextafter(std::nextafter(L, 0.0), 0.0), 1.0);  // equal weights pass for every eps
  const detail::Dyadic bound = detail::to_dyadic(static_cast<long double>(L), false);
  const Index k = mechanism.num_inputs(), d = mechanism.num_outputs();
  std::vector<u128> lo(std::size_t(d), ~u128(0)), hi(std::size_t(d), 0);
  for (Index i = 0; i < k; ++i) {
    const auto w = mechanism.sampler().row_weights(i);
    for (std::size_t j = 0; j < std::size_t(d); ++j) lo[j] = std::min(lo[j], w[j]), hi[j] = std::max(hi[j], w[j]);
  }
  for (std::size_t j = 0; j < std::size_t(d); ++j)
    if (!detail::mul_le(hi[j], detail::Dyadic{1, 0}, lo[j], bound)) return false;
  return true;
}

/// audit_epsilon() of the mechanism's stored probabilities.
template <typename Scalar>
double audit_epsilon(const FiniteMechanism<Scalar>& mechanism) {
  return audit_epsilon(mechanism.probabilities());
}

}  // namespace labeldp
