/// \file
/// Internals of the optimal unbiased randomizer (mechanisms/unbiased.hpp): the staircase-column
/// master problem and its exact pricing oracles (grid and continuous outputs).
///
/// Everything here works in *scaled units*: labels and outputs are mapped by
/// \f$t \mapsto (t - \text{shift}) / \text{scale}\f$ so that the paper's FeasibleOutputSet
/// interval \f$[L, U]\f$ becomes \f$[-1, 1]\f$. The unbiased LP is affine-equivariant (an
/// optimal mechanism for the scaled labels maps back to an optimal one for the original labels,
/// with the squared loss scaled by \f$\text{scale}^2\f$), and the scaling keeps the
/// unbiasedness rows and the costs of order 1 for the simplex's absolute tolerances.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "labeldp/core/types.hpp"

namespace labeldp::detail {

/// The data of one unbiased (or bias-bounded) randomizer problem in scaled units.
struct UnbiasedProblem {
  Eigen::VectorXd labels;  ///< scaled labels y'_1 < ... < y'_k
  Eigen::VectorXd probs;   ///< prior probabilities p_1..p_k
  /// Entry of a staircase column for labels outside its pattern ("L" in the paper's signature
  /// matrices, Def. 10); labels inside the pattern ("U") get 1. It is \f$e^{-\varepsilon}\f$
  /// rounded up, so the ratio of the two entries never exceeds \f$e^{\varepsilon}\f$.
  double low = 0;
  double eps = 0;    ///< the privacy parameter (low is e^-eps rounded up)
  double shift = 0;  ///< original = shift + scale * scaled
  double scale = 1;
  double max_bias = 0;  ///< B in scaled units; 0 selects the equality (unbiased) rows
  Index num_labels() const { return labels.size(); }
  bool bounded() const { return max_bias > 0; }
  /// Rows of the master: k normalization rows, then k unbiasedness rows (equalities), or for
  /// B > 0 k rows E[M(y)] <= y + B followed by k rows E[M(y)] >= y - B.
  Index num_rows() const { return bounded() ? 3 * num_labels() : 2 * num_labels(); }
  /// The most total weight a feasible mechanism's columns can carry: summing the k normalization
  /// rows gives \f$\sum_T m_T n_T = k\f$ with \f$n_T = \sum_y s_{T,y} \ge 1 + (k - 1) \ell\f$ on a
  /// non-empty pattern, so \f$\sum_T m_T \le \min(k / (1 + (k - 1) \ell), 1 / \ell)\f$ (about k
  /// at large eps, where \f$1/\ell = e^\varepsilon\f$ would multiply the roundoff in a least
  /// reduced cost by up to 1.6e5 at eps = 12).
  double column_mass_bound() const {
    const double k = double(num_labels());
    return std::min(k / (1 + (k - 1) * low), 1 / low);
  }
};

/// A column of the master problem: the staircase vector of `pattern` (1 on the pattern, `low`
/// elsewhere; the extreme rays of the eps-DP cone, Kairouz, Oh and Viswanath 2016) placed on one
/// output value. `grid_index` is the output's index in the grid (-1 for continuous outputs).
struct StaircaseColumn {
  std::vector<std::uint8_t> pattern;
  double output = 0;  ///< scaled output
  Index grid_index = -1;
  double reduced_cost = 0;  ///< when priced: its reduced cost under the pricing duals
};

/// Fills the master coefficients of `column` into `a` (num_rows) and returns its cost
/// \f$\sum_y s_y p_y g(o, y)\f$ with the per-label loss values `loss_at_output` (k entries,
/// \f$g(o, y_i)\f$ in scaled units, not yet weighted by the prior).
inline double staircase_coefficients(const UnbiasedProblem& P, const StaircaseColumn& column,
                                     const Eigen::VectorXd& loss_at_output, Eigen::Ref<Eigen::VectorXd> a) {
  const Index k = P.num_labels();
  double cost = 0;
  for (Index i = 0; i < k; ++i) {
    const double s = column.pattern[std::size_t(i)] ? 1.0 : P.low;
    a[i] = s;
    a[k + i] = s * column.output;
    if (P.bounded()) a[2 * k + i] = s * column.output;
    cost += s * P.probs[i] * loss_at_output[i];
  }
  return cost;
}

/// The unbiasedness duals folded into one vector: for B = 0 the equality rows' duals, for B > 0
/// the sum of the two inequality rows' duals (both multiply the same coefficient s_y o).
inline Eigen::VectorXd bias_duals(const UnbiasedProblem& P, const Eigen::VectorXd& duals) {
  const Index k = P.num_labels();
  Eigen::VectorXd sigma = duals.segment(k, k);
  if (P.bounded()) sigma += duals.segment(2 * k, k);
  return sigma;
}

/// The inverse of bias_duals(): master duals (num_rows()) from the normalization duals
/// \f$\pi\f$ and bias duals \f$\sigma\f$ stacked (2k). With a bias bound, \f$\sigma_y < 0\f$
/// goes to the upper row (<=, dual <= 0) and \f$\sigma_y > 0\f$ to the lower one (>=, dual >= 0),
/// so that \f$b^T y = 1^T\pi + \text{labels}^T\sigma - B \|\sigma\|_1\f$.
inline Eigen::VectorXd master_duals(const UnbiasedProblem& P, const Eigen::VectorXd& pi_sigma) {
  const Index k = P.num_labels();
  Eigen::VectorXd y = Eigen::VectorXd::Zero(P.num_rows());
  y.head(2 * k) = pi_sigma.head(2 * k);
  if (P.bounded())
    for (Index i = 0; i < k; ++i)
      if (pi_sigma[k + i] > 0) std::swap(y[k + i], y[2 * k + i]);
  return y;
}

/// Reduced cost of the best staircase column at output `o`, given the per-label terms
/// \f$a_y = p_y g(o, y) - \pi_y - \sigma_y o\f$: put y in the pattern iff \f$a_y < 0\f$, so the
/// reduced cost is \f$\sum_y \min(a_y, e^{-\varepsilon} a_y)\f$.
inline double best_pattern(const UnbiasedProblem& P, const Eigen::VectorXd& terms, std::vector<std::uint8_t>* pattern) {
  double rc = 0;
  if (pattern) pattern->assign(std::size_t(terms.size()), 0);
  for (Index i = 0; i < terms.size(); ++i) {
    if (terms[i] < 0) {
      rc += terms[i];
      if (pattern) (*pattern)[std::size_t(i)] = 1;
    } else {
      rc += P.low * terms[i];
    }
  }
  return rc;
}

/// The 2k columns of Proposition 7's two-point mechanism on {lo_output, hi_output} (scaled):
/// \f$M(y) = \text{lo}\f$ with probability \f$(\text{hi} - y)/(\text{hi} - \text{lo})\f$. Its column
/// at lo decreases in y and the one at hi increases, so each is a non-negative combination of
/// nested one-sided staircase vectors: prefixes of the sorted labels at lo, suffixes at hi
/// (plus the empty pattern at both). These make the first master feasible whenever the two
/// points bracket the dbRR outputs.
inline std::vector<StaircaseColumn> one_sided_columns(Index k, double output, Index grid_index) {
  std::vector<StaircaseColumn> cols;
  for (Index len = 0; len < k; ++len) {
    StaircaseColumn prefix, suffix;
    prefix.pattern.assign(std::size_t(k), 0);
    suffix.pattern.assign(std::size_t(k), 0);
    for (Index i = 0; i < len; ++i) prefix.pattern[std::size_t(i)] = 1;
    for (Index i = k - len; i < k; ++i) suffix.pattern[std::size_t(i)] = 1;
    prefix.output = suffix.output = output;
    prefix.grid_index = suffix.grid_index = grid_index;
    cols.push_back(std::move(prefix));
    if (len > 0) cols.push_back(std::move(suffix));
  }
  return cols;
}

/// The column of the interval pattern [a, b) of k labels at output `o` (grid point
/// `grid_index`) with reduced cost `rc`.
inline StaircaseColumn interval_column(Index k, Index a, Index b, double o, Index grid_index, double rc) {
  StaircaseColumn c;
  c.pattern.assign(std::size_t(k), 0);
  for (Index i = a; i < b; ++i) c.pattern[std::size_t(i)] = 1;
  c.output = o;
  c.grid_index = grid_index;
  c.reduced_cost = rc;
  return c;
}

/// Appends the one-sided columns (pattern a prefix or a suffix of the sorted labels) at output
/// `o` whose reduced cost, from the per-label terms at o, is below `-tolerance`. Adding them
/// with the best pattern at each priced output is what makes column generation converge in
/// few rounds: the optimum's patterns are intervals (Claim 11), mostly one-sided, and a master
/// that lacks the neighbours of its best pattern oscillates.
inline void append_one_sided(const UnbiasedProblem& P, const Eigen::Ref<const Eigen::VectorXd>& terms, double o,
                             Index grid_index, double tolerance, std::vector<StaircaseColumn>& out) {
  const Index k = P.num_labels();
  // Reduced cost of the prefix of length len: sum_{i<len} terms + low * sum_{i>=len} terms.
  const double total = terms.sum();
  double head = 0;
  for (Index len = 0; len < k; ++len) {
    if (len > 0) head += terms[len - 1];
    const double prefix_rc = head + P.low * (total - head);
    const double suffix_rc = (total - head) + P.low * head;  // U on labels len..k-1
    if (prefix_rc < -tolerance) out.push_back(interval_column(k, 0, len, o, grid_index, prefix_rc));
    if (len > 0 && suffix_rc < -tolerance) out.push_back(interval_column(k, len, k, o, grid_index, suffix_rc));
  }
}

/// Appends the interval patterns next to `pattern` at output `o` whose reduced cost, from the
/// per-label terms at o, is below `-tolerance`: when `pattern` is an interval of labels
/// [first, last), the four intervals with one end moved by one label ([first -+ 1, last) and
/// [first, last -+ 1)). The optimum's patterns are intervals (Claim 11); at large eps they sit
/// in the middle of the label range (each label stays near itself), where the one-sided
/// columns of append_one_sided() are no neighbours. Measured on the weeks-like k = 52 prior,
/// grid 416, eps 8: column generation converges in 63 rounds instead of 82.
inline void append_interval_neighbours(const UnbiasedProblem& P, const Eigen::Ref<const Eigen::VectorXd>& terms,
                                       const std::vector<std::uint8_t>& pattern, double o, Index grid_index,
                                       double tolerance, std::vector<StaircaseColumn>& out) {
  const Index k = P.num_labels();
  Index first = 0;
  while (first < k && !pattern[std::size_t(first)]) ++first;
  Index last = first;
  while (last < k && pattern[std::size_t(last)]) ++last;
  for (Index i = last; i < k; ++i)
    if (pattern[std::size_t(i)]) return;  // not an interval
  if (first == last) return;              // empty pattern
  const double total = terms.sum();
  auto add = [&](Index a, Index b) {
    if (a < 0 || b > k || a >= b) return;
    // Reduced cost of the interval [a, b): low * (all terms) + (1 - low) * (its terms).
    const double rc = P.low * total + (1 - P.low) * terms.segment(a, b - a).sum();
    if (rc < -tolerance) out.push_back(interval_column(k, a, b, o, grid_index, rc));
  };
  add(first - 1, last);
  add(first + 1, last);
  add(first, last - 1);
  add(first, last + 1);
}

/// Exact pricing over a finite output grid (Alg. 1's LP in staircase form). `weighted_loss` is
/// the k x n matrix \f$p_y g(o_j, y)\f$; `outputs` the n scaled grid points. For every grid point
/// the best pattern is found in O(k). At the local minima (along the grid) of the best reduced
/// cost below `-tolerance`, best first, at most `max_columns` of them, the columns returned are
/// the best pattern, its interval neighbours (append_interval_neighbours()) and every one-sided
/// pattern that prices out (append_one_sided()).
/// \return the columns; `min_reduced_cost` receives the smallest reduced cost over the grid.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline std::vector<StaircaseColumn> price_grid(const UnbiasedProblem& P, const Eigen::MatrixXd& weighted_loss,
                                               const Eigen::VectorXd& outputs, const Eigen::VectorXd& duals,
                                               double tolerance, Index max_columns, double& min_reduced_cost) {
  const Index k = P.num_labels(), n = outputs.size();
  const Eigen::VectorXd pi = duals.head(k);
  const Eigen::VectorXd sigma = bias_duals(P, duals);
  // terms(y, j) = p_y g(o_j, y) - pi_y - sigma_y o_j, for all grid points at once.
  Eigen::MatrixXd terms = weighted_loss;
  terms.colwise() -= pi;
  terms.noalias() -= sigma * outputs.transpose();
  const Eigen::RowVectorXd rc = P.low * terms.colwise().sum() + (1 - P.low) * terms.cwiseMin(0.0).colwise().sum();
  min_reduced_cost = n ? rc.minCoeff() : 0.0;
  std::vector<std::pair<double, Index>> candidates;
  for (Index j = 0; j < n; ++j) {
    if (!(rc[j] < -tolerance)) continue;
    // A local minimum of the piecewise-convex reduced cost along the grid: the staircase
    // optimum uses few outputs (Theorem 6), one per local minimum, so adding every negative
    // grid point would only bloat the master.
    const bool left_ok = j == 0 || rc[j] <= rc[j - 1];
    const bool right_ok = j + 1 == n || rc[j] < rc[j + 1];
    if (left_ok && right_ok) candidates.emplace_back(rc[j], j);
  }
  std::sort(candidates.begin(), candidates.end());
  if (Index(candidates.size()) > max_columns) candidates.resize(std::size_t(max_columns));
  std::vector<StaircaseColumn> columns;
  columns.reserve(candidates.size());
  for (const auto& [value, j] : candidates) {
    StaircaseColumn col;
    col.output = outputs[j];
    col.grid_index = j;
    col.reduced_cost = value;
    best_pattern(P, terms.col(j), &col.pattern);
    append_interval_neighbours(P, terms.col(j), col.pattern, outputs[j], j, tolerance, columns);
    columns.push_back(std::move(col));
    append_one_sided(P, terms.col(j), outputs[j], j, tolerance, columns);
  }
  return columns;
}

/// Exact pricing over all real outputs in [lo, hi] for the squared loss
/// \f$g(o, y) = (o - y)^2\f$.
///
/// Each term \f$a_y(o) = p_y (o - y)^2 - \pi_y - \sigma_y o\f$ is a convex quadratic (linear when
/// \f$p_y = 0\f$), negative on one interval at most. Between consecutive roots of all the
/// \f$a_y\f$ the best pattern is fixed, and the reduced cost of that pattern is a convex
/// quadratic in o, minimized in closed form on the segment. So the minimum over every
/// (pattern, real output) pair is found exactly in O(k^2) per call (2k + 1 segments, O(k) each).
/// Returns, for each segment whose best reduced cost is below `-tolerance` (best first, at most
/// `max_columns` segments), its best column and the one-sided columns at the same output that
/// price out (append_one_sided()). `argmin_size`, when given, receives the number of labels in
/// the pattern of a column reaching `min_reduced_cost` (staircase_min_ratio()).
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline std::vector<StaircaseColumn> price_continuous(const UnbiasedProblem& P, const Eigen::VectorXd& duals, double lo,
                                                     double hi, double tolerance, Index max_columns,
                                                     double& min_reduced_cost, Index* argmin_size = nullptr) {
  const Index k = P.num_labels();
  const Eigen::VectorXd pi = duals.head(k);
  const Eigen::VectorXd sigma = bias_duals(P, duals);
  std::vector<double> cuts{lo, hi};
  for (Index i = 0; i < k; ++i) {
    const double p = P.probs[i], y = P.labels[i];
    if (p > 0) {
      // p o^2 - (2 p y + sigma) o + (p y^2 - pi): roots by the cancellation-free formula.
      const double b = -(2 * p * y + sigma[i]);
      const double c = p * y * y - pi[i];
      const double disc = b * b - 4 * p * c;
      if (disc > 0) {
        const double q = -0.5 * (b + std::copysign(std::sqrt(disc), b));
        cuts.push_back(q / p);
        if (q != 0) cuts.push_back(c / q);
      }
    } else if (sigma[i] != 0) {
      cuts.push_back(-pi[i] / sigma[i]);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // Segments [cuts[s], cuts[s+1]] inside [lo, hi] (lo, hi may be infinite).
  std::vector<double> points;
  for (double c : cuts)
    if (c >= lo && c <= hi) points.push_back(c);
  min_reduced_cost = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, StaircaseColumn>> candidates;
  Eigen::VectorXd terms(k);
  auto terms_at = [&](double o) {
    for (Index i = 0; i < k; ++i) {
      const double d = o - P.labels[i];
      terms[i] = P.probs[i] * d * d - pi[i] - sigma[i] * o;
    }
  };
  for (std::size_t s = 0; s + 1 < points.size(); ++s) {
    const double a = points[s], b = points[s + 1];
    if (!(b > a)) continue;
    // A representative interior point fixes the segment's pattern (finite even when a or b is
    // infinite).
    double mid;
    if (std::isfinite(a) && std::isfinite(b))
      mid = a + 0.5 * (b - a);
    else if (std::isfinite(a))
      mid = a + 1 + std::abs(a);
    else if (std::isfinite(b))
      mid = b - 1 - std::abs(b);
    else
      mid = 0;
    terms_at(mid);
    StaircaseColumn col;
    best_pattern(P, terms, &col.pattern);
    // The pattern's reduced cost sum_y s_y a_y(o) = A o^2 + B o + C with A >= min p_y s_y > 0.
    double A = 0, B = 0;
    for (Index i = 0; i < k; ++i) {
      const double s = col.pattern[std::size_t(i)] ? 1.0 : P.low;
      A += s * P.probs[i];
      B -= s * (2 * P.probs[i] * P.labels[i] + sigma[i]);
    }
    double o = A > 0 ? -B / (2 * A) : (B > 0 ? a : b);
    o = std::clamp(o, a, b);
    if (!std::isfinite(o)) continue;  // only when A == 0, which sum_y p_y = 1 excludes
    terms_at(o);
    double rc = 0;
    for (Index i = 0; i < k; ++i) rc += (col.pattern[std::size_t(i)] ? 1.0 : P.low) * terms[i];
    if (rc < min_reduced_cost) {
      min_reduced_cost = rc;
      if (argmin_size) *argmin_size = Index(std::count(col.pattern.begin(), col.pattern.end(), std::uint8_t(1)));
    }
    if (rc < -tolerance) {
      col.output = o;
      col.reduced_cost = rc;
      candidates.emplace_back(rc, std::move(col));
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  if (Index(candidates.size()) > max_columns) candidates.resize(std::size_t(max_columns));
  std::vector<StaircaseColumn> columns;
  columns.reserve(candidates.size());
  for (auto& c : candidates) {
    const double o = c.second.output;
    columns.push_back(std::move(c.second));
    terms_at(o);
    append_one_sided(P, terms, o, -1, tolerance, columns);
  }
  return columns;
}

/// A certified lower bound \f$\rho\f$ on the least reduced cost per unit of normalization mass,
/// \f$\min_j \bar c_j / w_j\f$ over every column j of the staircase master that the pricing
/// `min_rc_at` searches, with \f$w_j = k\ell + (1 - \ell)|T_j|\f$ the column's sum over the k
/// normalization rows (\f$T_j\f$ its pattern, \f$\ell\f$ = P.low). Then
/// \f$b^T y + k \rho\f$ is a lower bound on the LP's optimum (a bound in the style of Farley
/// 1990, which weighs each column by its own \f$w_j\f$ instead of the least one):
///
/// *Weights.* Summing the k normalization rows \f$\sum_j s_i(T_j) x_j = 1\f$
/// (\f$s_i = 1\f$ on the pattern, \f$\ell\f$ off it) gives \f$\sum_j w_j x_j = k\f$ for EVERY
/// feasible x (W = k, an equality). *Bound.* For duals y of the rows' signs (>= 0 on >= rows,
/// <= 0 on <= rows, any on the equalities) and feasible x, weak duality gives
/// \f$c^T x \ge b^T y + \sum_j \bar c_j(y) x_j\f$, and if \f$\rho \le \bar c_j / w_j\f$ for every j,
/// \f$\sum_j \bar c_j x_j \ge \rho \sum_j w_j x_j = k\rho\f$. *Computing rho.* Let v be 1 on the
/// normalization rows and 0 elsewhere, so \f$v^T a_j = w_j\f$ and
/// \f$\bar c_j(y) = \bar c_j(y + \lambda v) + \lambda w_j\f$ for every \f$\lambda\f$. With
/// \f$\mu(\lambda)\f$ the exact least reduced cost at \f$y + \lambda v\f$ (equality rows: any
/// shift keeps the signs) and \f$w_{min} = 1 + (k - 1)\ell\f$ the least weight of a non-empty
/// pattern, \f$\rho(\lambda) = \lambda + \min(0, \mu(\lambda)) / w_{min}\f$ is valid for every
/// \f$\lambda\f$ (the empty pattern's column is \f$\ell\f$ times the full pattern's, cost
/// included, so it has the full pattern's ratio). \f$\rho(0)\f$ is the plain bound
/// \f$b^T y + \kappa \min(0, \mu)\f$ with \f$\kappa = k / w_{min}\f$. The \f$\lambda\f$ tried
/// after 0 are Dinkelbach's (1967) iterates for the least ratio: \f$\lambda_{t+1} = \lambda_t +
/// \mu(\lambda_t) / w_{j_t}\f$, the ratio of the column \f$j_t\f$ reaching \f$\mu(\lambda_t)\f$,
/// so \f$\lambda_t\f$ decreases to the least ratio and \f$\rho(\lambda_t)\f$ closes on it from
/// below. Returned: \f$\min(0, \max_t \rho(\lambda_t))\f$ over at most `max_steps` prices
/// (never below \f$\rho(0)\f$: this bound is never worse than the plain one).
///
/// \param P the problem (its k labels and \f$\ell\f$).
/// \param duals the master's duals (num_rows(); the normalization rows first).
/// \param max_steps the most pricing calls (Dinkelbach iterates, the first at \f$\lambda = 0\f$).
/// \param min_rc_at `double(const Eigen::VectorXd& duals, Index& argmin_size)`: the exact least
///        reduced cost at `duals` and the pattern size of a column reaching it.
/// \param first_mu, first_size what `min_rc_at(duals, size)` returns at \f$\lambda = 0\f$, when the
///        caller has just priced at `duals` (column generation's oracle): that price is then
///        not repeated, and the result is the same as without them. NaN (the default): priced here.
template <typename MinRc>
double staircase_min_ratio(const UnbiasedProblem& P, const Eigen::VectorXd& duals, MinRc&& min_rc_at,
                           Index max_steps = 12, double first_mu = std::numeric_limits<double>::quiet_NaN(),
                           Index first_size = 0) {
  const Index k = P.num_labels();
  const double w_min = 1 + double(k - 1) * P.low;
  Eigen::VectorXd shifted = duals;
  double lambda = 0, best = -std::numeric_limits<double>::infinity();
  for (Index step = 0; step < max_steps; ++step) {
    if (step > 0) shifted.head(k) = duals.head(k).array() + lambda;
    Index size = 0;
    double mu = 0;
    if (step == 0 && !std::isnan(first_mu)) {
      mu = first_mu;
      size = first_size;
    } else {
      mu = min_rc_at(static_cast<const Eigen::VectorXd&>(shifted), size);
    }
    if (std::isnan(mu)) break;
    best = std::max(best, lambda + std::min(0.0, mu) / w_min);
    if (!(mu < 0)) break;
    const double next = lambda + mu / (double(k) * P.low + (1 - P.low) * double(size));
    if (!(next < lambda)) break;
    lambda = next;
  }
  return std::min(0.0, best);
}

/// staircase_min_ratio() for the continuous pricing (price_continuous() over [lo, hi]);
/// `first_mu`, `first_size`: price_continuous()'s `min_reduced_cost` and `argmin_size` at
/// `duals` over [lo, hi] when the caller has them (whatever its tolerance and column cap: they
/// do not change those two), as for staircase_min_ratio().
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline double continuous_min_ratio(const UnbiasedProblem& P, const Eigen::VectorXd& duals, double lo, double hi,
                                   double first_mu = std::numeric_limits<double>::quiet_NaN(), Index first_size = 0) {
  return staircase_min_ratio(
      P, duals,
      [&](const Eigen::VectorXd& y, Index& size) {
        double mu = 0;
        price_continuous(P, y, lo, hi, std::numeric_limits<double>::infinity(), 0, mu, &size);
        return mu;
      },
      12, first_mu, first_size);
}

}  // namespace labeldp::detail
