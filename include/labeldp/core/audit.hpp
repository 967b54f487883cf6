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

namespace detail {

/// True when every column of `P` meets \f$\max_i P_{ij}/S_i \le \ell \min_i P_{ij}/S_i\f$, with
/// \f$S_i\f$ row i's sum (long double): the mechanism a sampler realizes (each row over its own
/// sum) is within the ratio bound \f$\ell\f$.
template <typename Derived>
bool realized_within_ratio(const Eigen::MatrixBase<Derived>& P, long double limit) {
  using LD = long double;
  const Index k = P.rows(), d = P.cols();
  std::vector<LD> sums(std::size_t(k), 0);
  for (Index i = 0; i < k; ++i)
    for (Index j = 0; j < d; ++j) sums[std::size_t(i)] += LD(P(i, j));
  for (Index j = 0; j < d; ++j) {
    LD hi = 0, lo = std::numeric_limits<LD>::infinity();
    for (Index i = 0; i < k; ++i) {
      const LD r = sums[std::size_t(i)] > 0 ? LD(P(i, j)) / sums[std::size_t(i)] : 0;
      hi = std::max(hi, r), lo = std::min(lo, r);
    }
    if (hi > 0 && !(hi <= limit * lo)) return false;
  }
  return true;
}

/// One closed-form projection of cap_to_epsilon() at ratio bound `limit` >= 1, on the rows of
/// `Q` (k x d, long double, each row non-negative and summing to 1, or all zero): returns R with
/// rows summing to 1 and \f$R_{ij} \le limit \cdot \min_{i'} R_{i'j}\f$ in exact arithmetic.
///
/// With \f$m_j = \min_i Q_{ij}\f$ and \f$b_j = limit \cdot m_j\f$, row i keeps its entries outside
/// a set C and sets those in C to \f$b_j\f$ after renormalization: the row's new sum is
/// \f$s = \sum_{j \notin C} Q_{ij} / (1 - \sum_{j \in C} b_j)\f$, its entries \f$Q_{ij}/s\f$ off C
/// and \f$b_j\f$ on C; C starts as the entries above \f$b_j\f$ and grows while an entry off C,
/// raised by 1/s, exceeds its bound (at most d rounds; usually one). No entry falls below its
/// column's \f$m_j\f$ (kept ones only rise, capped ones become \f$b_j \ge m_j\f$), so the bounds
/// computed once stay valid for every row. Every row fits when \f$\sum_j b_j \ge 1\f$ (each new
/// member of C had a normalized entry above its bound, so \f$\sum_C b_j\f$ stays below the row's
/// mass 1); when \f$\sum_j b_j < 1\f$ no row can (the matrix is far from eps-DP, not roundoff) and
/// every row becomes the rows' mean (equal rows are eps-DP for every eps).
inline Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic> project_rows_to_ratio(
    const Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>& Q, long double limit) {
  using LD = long double;
  const Index k = Q.rows(), d = Q.cols();
  const Eigen::Matrix<LD, Eigen::Dynamic, 1> b = Q.colwise().minCoeff().transpose() * limit;
  Eigen::Matrix<LD, Eigen::Dynamic, Eigen::Dynamic> R = Q;
  std::vector<bool> capped(static_cast<std::size_t>(d));
  bool all_fit = b.sum() >= 1;
  for (Index i = 0; all_fit && i < k; ++i) {
    std::fill(capped.begin(), capped.end(), false);
    LD s = 1;
    for (Index round = 0; all_fit && round <= d; ++round) {
      bool grew = false;
      for (Index j = 0; j < d; ++j)
        if (!capped[std::size_t(j)] && Q(i, j) > b[j] * s) capped[std::size_t(j)] = grew = true;
      if (!grew) break;
      LD rest = 0, capsum = 0;
      for (Index j = 0; j < d; ++j) {
        if (capped[std::size_t(j)])
          capsum += b[j];
        else
          rest += Q(i, j);
      }
      all_fit = capsum < 1 && rest > 0;  // fails only through roundoff when sum_j b_j is ~1
      if (all_fit) s = rest / (1 - capsum);
    }
    for (Index j = 0; all_fit && j < d; ++j) R(i, j) = capped[std::size_t(j)] ? b[j] : Q(i, j) / s;
  }
  if (!all_fit) {
    Eigen::Matrix<LD, 1, Eigen::Dynamic> mean = Q.colwise().sum();
    if (mean.sum() > 0)
      mean /= mean.sum();
    else
      mean.setConstant(LD(1) / LD(d));
    R.rowwise() = mean;
  }
  return R;
}

}  // namespace detail

/// Makes a probability matrix eps-DP *exactly as stored and as sampled*, moving as little mass
/// as it can: the last step of every construction that computes a mechanism in floating point
/// (the optimal LP and unbiased randomizers, whose columns are eps-DP in exact arithmetic and
/// only roundoff -- a row division, a tolerance-feasible simplex basis, a rounded quotient --
/// pushes a ratio past \f$e^\varepsilon\f$).
///
/// First, the usual case of roundoff: entries above \f$\ell_s\f$ times their column's minimum are
/// lowered to it (rounded down), with \f$\ell_s\f$ a few ulps below \f$e^\varepsilon\f$ times
/// \f$1 - 2^{-48}\f$, rows left as they are. That suffices when the rows lose nearly the same mass.
/// When it does not (capped entries that dominate their row lower its sum, and a sampler draws
/// each row over its own sum), the rows are divided by their sums (long double) and projected in
/// closed form (detail::project_rows_to_ratio(): entries above \f$\ell\f$ times their column's
/// minimum are set to that bound *after* the row's renormalization, so no fixed-point iteration is
/// needed; the mass removed goes to the row's other entries in proportion), with \f$\ell\f$ a few
/// ulps below \f$e^\varepsilon (1 - 2^{-50})(1 - 2^{-48})\f$, and stored rounded to nearest.
/// Every result is checked exactly: the stored matrix with satisfies_epsilon(), and the realized
/// one (each row over its stored sum, as the alias table draws it) against \f$e^\varepsilon\f$
/// (a few ulps below) times \f$1 - 2^{-50}\f$; if rounding the stored entries broke a bound, the
/// projection is redone with a margin 4x wider (at most 16 times). A column with a zero entry and a
/// positive one (not eps-DP for any finite eps) is zeroed first.
///
/// \param probabilities k x d matrix with finite entries >= 0 and non-zero rows (modified in
///        place).
/// \param eps privacy parameter > 0 (not validated here; +infinity leaves the ratios free).
/// \return the largest mass removed from one row, \f$\max_i \sum_j \max(0, P_{ij} - R_{ij})\f$
///         with P the input and R the result (~1e-16 for roundoff; large values mean the input
///         was far from eps-DP).
template <typename Derived>
double cap_to_epsilon(Eigen::MatrixBase<Derived>& probabilities, double eps) {
  using LD = long double;
  using Scalar = typename Derived::Scalar;
  const Index k = probabilities.rows(), d = probabilities.cols();
  if (k == 0 || d == 0) return 0;
  double L = std::exp(eps);
  for (int step = 0; step < 4; ++step) L = std::nextafter(L, 0.0);
  if (!(L < std::numeric_limits<double>::infinity())) L = std::numeric_limits<double>::max();
  L = std::max(L, 1.0);  // e^eps rounds to 1 below eps ~ 2^-53: equal entries are eps-DP for every eps
  const LD realized_limit = std::max(LD(L) * (1 - std::ldexp(LD(1), -50)), LD(1));
  const Eigen::Matrix<LD, Eigen::Dynamic, Eigen::Dynamic> input = probabilities.template cast<LD>();
  Eigen::Matrix<LD, Eigen::Dynamic, Eigen::Dynamic> Q = input;
  for (Index j = 0; j < d; ++j)
    if (Q.col(j).minCoeff() <= 0) Q.col(j).setZero();
  const auto store = [&](const auto& R) {
    for (Index i = 0; i < k; ++i)
      for (Index j = 0; j < d; ++j) probabilities(i, j) = Scalar(R(i, j));
    return satisfies_epsilon(probabilities, eps) && detail::realized_within_ratio(probabilities, realized_limit);
  };
  // Roundoff only (the usual case): the stored entries capped in place at a bound 2^-48 inside,
  // rows not renormalized; enough when the rows lose nearly the same mass.
  Eigen::Matrix<LD, Eigen::Dynamic, Eigen::Dynamic> R = Q;
  const LD stored_limit = std::max(LD(L) * (1 - std::ldexp(LD(1), -48)), LD(1));
  for (Index j = 0; j < d; ++j) {
    const LD bound = Q.col(j).minCoeff() * stored_limit;
    double cap = double(bound);
    if (LD(cap) > bound) cap = std::nextafter(cap, 0.0);
    R.col(j) = R.col(j).cwiseMin(LD(cap));
  }
  bool ok = store(R);
  // Otherwise the closed-form projection of the renormalized rows, margin widened until the
  // rounded result passes (a margin of 2^-18 exceeds every rounding error).
  for (Index i = 0; !ok && i < k; ++i)
    if (const LD s = Q.row(i).sum(); s > 0) Q.row(i) /= s;
  for (int attempt = 0; !ok && attempt < 16; ++attempt) {
    const LD margin = std::ldexp(LD(1), -48 + 2 * attempt);
    R = detail::project_rows_to_ratio(Q, std::max(realized_limit * (1 - margin), LD(1)));
    ok = store(R);
  }
  if (!ok) {  // unreachable; equal rows are eps-DP for every eps
    R.setConstant(LD(1) / LD(d));
    store(R);
  }
  LD removed = 0;
  for (Index i = 0; i < k; ++i) removed = std::max(removed, (input.row(i) - R.row(i)).cwiseMax(LD(0)).sum());
  return double(removed);
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
