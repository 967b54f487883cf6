/// \file
/// Optimal unbiased label randomizers (Badanidiyuru, Ghazi, Kamath, Kumar, Leeman, Manurangsi,
/// Varadarajan, Zhang: "Optimal Unbiased Randomizers for Regression with Label Differential
/// Privacy", NeurIPS 2023), computed exactly and fast, and extended past the paper:
///
/// - FeasibleOutputSet (Alg. 2), debiased randomized response (dbRR, Def. 23), unbiased
///   randomized rounding (URR, proof of Lemma 8);
/// - ComputeOptUnbiasedRand (Alg. 1) on any finite output set, by column generation over
///   staircase columns (Kairouz, Oh and Viswanath 2016: the extreme rays of the eps-DP cone): 2k equality rows instead
///   of the paper's \f$n k^2\f$-row LP;
/// - the exact optimum with outputs anywhere on the real line (no grid), by exact pricing of
///   (pattern, real output) columns; it uses at most 2k outputs (Theorem 6) and its loss is
///   never above any grid's;
/// - the bias-bounded randomizer \f$|E[M(y)] - y| \le B\f$ (the paper's "future work"): B = 0
///   is the unbiased one; for large B the loss falls to RR-on-Bins's optimum;
/// - LabelRandomizer (Alg. 3) given a privately estimated prior.
///
/// Losses: the paper optimizes \f$g(\hat y, y) = (\hat y - y)^2 / 2\f$. The solvers here take a
/// core loss (SquaredLoss \f$(\hat y - y)^2\f$ by default, or AbsoluteLoss); scaling g by 1/2
/// changes no minimizer, so the mechanisms are the paper's. Every `expected_loss` reported here
/// is \f$\sum_y p_y E[\ell(M(y), y)]\f$ with the loss as given (for SquaredLoss, twice the paper's
/// \f$\mathcal{G}(M; P)\f$; this is the sense of the CLI contract's `expected_loss`).
#pragma once

#include <Eigen/Core>
#include <Eigen/QR>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/staircase_barrier.hpp"
#include "labeldp/mechanisms/detail/unbiased_barrier.hpp"
#include "labeldp/mechanisms/detail/unbiased_lp.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"
#include "labeldp/optim/column_generation.hpp"
#include "labeldp/optim/simplex.hpp"
#include "labeldp/prior/private_histogram.hpp"

namespace labeldp {

namespace detail {

template <typename Scalar>
void validate_label_set(const Vector<Scalar>& labels) {
  if (labels.size() == 0) throw std::invalid_argument("'labels' must not be empty");
  for (Index i = 0; i < labels.size(); ++i) {
    validate_finite("labels", double(labels[i]));
    if (i > 0 && !(labels[i] > labels[i - 1]))
      throw std::invalid_argument("'labels' must be strictly increasing, got " + format_number(double(labels[i - 1])) +
                                  " then " + format_number(double(labels[i])));
  }
}

}  // namespace detail

/// The outputs \f$\Phi(y) = ((e^\varepsilon + k - 1) y - \sum_{y'} y') / (e^\varepsilon - 1)\f$ of
/// eps-debiased randomized response (Def. 23), one per label, in label order (increasing).
/// \param labels strictly increasing finite labels (k >= 1); for k = 1, \f$\Phi(y) = y\f$.
/// \param eps privacy parameter, finite and > 0.
/// \throws std::invalid_argument on a bad eps or label set.
template <typename Scalar = double>
Vector<Scalar> debiased_rr_outputs(const Vector<Scalar>& labels, double eps) {
  validate_epsilon(eps);
  detail::validate_label_set(labels);
  const Index k = labels.size();
  if (k == 1) return labels;
  const double w = std::expm1(eps);
  const double sum = double(labels.sum());
  Vector<Scalar> phi(k);
  // ((e^eps + k - 1) y - sum) / w written as y + (k y - sum) / w: no large cancelling terms
  // when eps is large.
  for (Index i = 0; i < k; ++i) phi[i] = Scalar(double(labels[i]) + (double(k) * double(labels[i]) - sum) / w);
  return phi;
}

/// eps-debiased randomized response (Def. 23): randomized response (Def. 21) on the outputs
/// debiased_rr_outputs(), which makes it unbiased: \f$E[M(y)] = y\f$.
/// \return a k x k FiniteMechanism (inputs = labels, outputs = \f$\Phi(y)\f$).
/// \throws std::invalid_argument on a bad eps or label set.
///
/// \code{.cpp}
/// labeldp::Vector<> labels(3); labels << 0, 1, 2;
/// auto dbrr = labeldp::debiased_randomized_response(labels, 1.0);
/// \endcode
template <typename Scalar = double>
FiniteMechanism<Scalar> debiased_randomized_response(const Vector<Scalar>& labels, double eps) {
  Vector<Scalar> phi = debiased_rr_outputs(labels, eps);
  const Index k = labels.size();
  Matrix<Scalar> P(k, k);
  const double denom = std::exp(eps) + double(k - 1);
  P.setConstant(Scalar(1 / denom));
  for (Index i = 0; i < k; ++i) P(i, i) = Scalar(std::exp(eps) / denom);
  return FiniteMechanism<Scalar>(labels, std::move(phi), std::move(P));
}

/// FeasibleOutputSet (Alg. 2): n evenly spaced outputs from \f$L = \Phi(\min Y)\f$ to
/// \f$U = \Phi(\max Y)\f$, the extreme dbRR outputs. Proposition 7: with these two endpoints
/// the unbiased LP of Alg. 1 is feasible.
/// \param labels strictly increasing finite labels. With one label, L = U = that label and the
///        set is that single point.
/// \param eps privacy parameter, finite and > 0.
/// \param grid_size n >= 2.
/// \throws std::invalid_argument on a bad eps, label set or grid size.
template <typename Scalar = double>
Vector<Scalar> feasible_output_set(const Vector<Scalar>& labels, double eps, Index grid_size) {
  validate_epsilon(eps);
  if (grid_size < 2) detail::fail_parameter("grid_size", "must be at least 2", double(grid_size));
  const Vector<Scalar> phi = debiased_rr_outputs(labels, eps);
  if (labels.size() == 1) return labels;
  const double L = double(phi[0]), U = double(phi[phi.size() - 1]);
  Vector<Scalar> grid(grid_size);
  for (Index i = 0; i < grid_size; ++i) grid[i] = Scalar(L + (U - L) * double(i) / double(grid_size - 1));
  grid[grid_size - 1] = Scalar(U);
  return grid;
}

/// feasible_output_set() for the values of a prior.
template <typename Scalar = double>
Vector<Scalar> feasible_output_set(const FinitePrior<Scalar>& prior, double eps, Index grid_size) {
  return feasible_output_set(prior.values(), eps, grid_size);
}

/// Unbiased randomized rounding (URR, proof of Lemma 8) onto sorted points
/// \f$x_1 < \dots < x_m\f$: a value v in \f$[x_i, x_{i+1}]\f$ becomes \f$x_{i+1}\f$ with probability
/// \f$(v - x_i)/(x_{i+1} - x_i)\f$ and \f$x_i\f$ otherwise, so \f$E = v\f$ and the error is at
/// most the gap. The coin is the core exact bernoulli(): the realized probability is exactly
/// the double computed here.
///
/// \code{.cpp}
/// labeldp::UnbiasedRandomizedRounding<> urr(grid);
/// labeldp::SecureRandom gen;
/// double rounded = urr.sample(3.7, gen);
/// \endcode
template <typename Scalar = double>
class UnbiasedRandomizedRounding {
 public:
  /// \param points strictly increasing finite points (at least one).
  /// \throws std::invalid_argument when empty, not finite or not strictly increasing.
  explicit UnbiasedRandomizedRounding(Vector<Scalar> points) : m_points(std::move(points)) {
    if (m_points.size() == 0) throw std::invalid_argument("'points' must not be empty");
    for (Index i = 0; i < m_points.size(); ++i) {
      validate_finite("points", double(m_points[i]));
      if (i > 0 && !(m_points[i] > m_points[i - 1]))
        throw std::invalid_argument("'points' must be strictly increasing, got " +
                                    detail::format_number(double(m_points[i - 1])) + " then " +
                                    detail::format_number(double(m_points[i])));
    }
  }

  /// The points.
  const Vector<Scalar>& points() const { return m_points; }

  /// The lower bracketing index i and the probability of rounding up to point i+1 (0 when v is
  /// a point).
  /// \throws std::invalid_argument when v is not finite or outside \f$[x_1, x_m]\f$ (rounding
  ///         outside the hull cannot be unbiased).
  std::pair<Index, double> bracket(Scalar v) const {
    const Index m = m_points.size();
    if (!std::isfinite(double(v)) || v < m_points[0] || v > m_points[m - 1])
      detail::fail_parameter("label",
                             "must be finite and in [" + detail::format_number(double(m_points[0])) + ", " +
                                 detail::format_number(double(m_points[m - 1])) + "]",
                             double(v));
    const Scalar* first = m_points.data();
    const Index hi = Index(std::lower_bound(first, first + m, v) - first);  // first point >= v
    if (m_points[hi] == v) return {hi, 0.0};
    const Index lo = hi - 1;
    const double up = double(v - m_points[lo]) / double(m_points[hi] - m_points[lo]);
    return {lo, std::clamp(up, 0.0, 1.0)};
  }

  /// The exact distribution over the points (m entries, at most two non-zero).
  Vector<Scalar> probabilities(Scalar v) const {
    const auto [lo, up] = bracket(v);
    Vector<Scalar> p = Vector<Scalar>::Zero(m_points.size());
    p[lo] = Scalar(1 - up);
    if (up > 0) p[lo + 1] = Scalar(up);
    return p;
  }

  /// Index of the rounded point, drawn exactly.
  template <std::uniform_random_bit_generator G>
  Index sample_index(Scalar v, G& gen) const {
    const auto [lo, up] = bracket(v);
    return (up > 0 && bernoulli(up, gen)) ? lo + 1 : lo;
  }

  /// The rounded point, drawn exactly.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar v, G& gen) const {
    return m_points[sample_index(v, gen)];
  }

 private:
  Vector<Scalar> m_points;
};

/// Algorithm of optimal_unbiased_continuous().
enum class ContinuousMethod {
  /// InteriorPoint when it applies (outputs on the whole real line), falling back to
  /// ColumnGeneration if it does not certify its answer; ColumnGeneration otherwise.
  Automatic,
  /// Primal-dual interior-point method over all \f$k(k+1)/2\f$ interval patterns with free
  /// outputs (Claim 11), then crossover and Newton polish (detail/unbiased_barrier.hpp);
  /// O(k^2) work plus one Cholesky factorization of order 2k per iteration. Applies to an
  /// unrestricted output range only (otherwise column generation is used); with a bias bound
  /// it ends in an LP crossover instead of the polish (detail/interval_bias.hpp).
  InteriorPoint,
  /// Column generation over (pattern, real output) columns with exact pricing, seeded by a
  /// grid solve (the paper's LP structure; slower, kept as the reference and for bias bounds
  /// and output ranges).
  ColumnGeneration
};

/// Options of the optimal unbiased / bias-bounded randomizer solvers.
struct UnbiasedOptions {
  /// B >= 0: require \f$|E[M(y)] - y| \le B\f$ for every label; 0 = unbiased (Alg. 1).
  double max_bias = 0;
  /// Continuous solver only: outputs restricted to [output_lower, output_upper] (default: the
  /// whole real line). Lemma 8 compares a grid with the optimum over \f$[L, U]\f$.
  double output_lower = -std::numeric_limits<double>::infinity();
  double output_upper = std::numeric_limits<double>::infinity();
  /// Column-generation rounds before giving up with SolveStatus::IterationLimit.
  Index max_rounds = 10000;
  /// A column enters when its reduced cost (scaled units, costs of order 1) is below minus this.
  double pricing_tolerance = 1e-9;
  /// Continuous solver only: size of the grid (over [L, U]) solved first to seed the exact
  /// solver with near-optimal columns; -1 = automatic (4k), 0 or 1 = no seeding. Seeding cuts the
  /// exact solver's rounds several-fold; it never changes the optimum.
  Index seed_grid_size = -1;
  /// Columns added to the master per pricing round, most negative reduced cost first;
  /// -1 = automatic (2k), 0 = all that price out.
  Index max_columns_per_round = -1;
  /// Wentges dual smoothing in [0, 1): pricing uses this weight on the best-bound duals (0 =
  /// plain column generation); -1 = automatic (0.5 from 100 labels on, where it cut the rounds
  /// by a third in our measurements; 0 below, where it cost more than it saved). Never changes
  /// the optimum, only the path to it.
  double dual_smoothing = -1;
  /// Wall-clock limit in seconds (>= 0; infinity, the default: none). On a finite output set
  /// (optimal_unbiased_on_outputs(), optimal_unbiased_grid()) it covers the whole call: the
  /// column-generation stage, every interior-point iteration and the crossover get what the
  /// earlier stages left; for the continuous solver it limits each column-generation solve.
  /// When it passes, the solve stops with SolveStatus::TimeLimit and the best feasible master
  /// so far with its certified bound and gap (optim::ColumnGenerationOptions). Not interrupted:
  /// the first simplex solve of a column-generation stage (there is no feasible answer before it).
  double time_limit = std::numeric_limits<double>::infinity();
  /// Column generation stops as Optimal once its certified lower bound is within this relative
  /// gap of the master's objective (finite, >= 0; or when exact pricing at the master's duals
  /// finds no column the simplex would pivot in).
  double gap_tolerance = 1e-9;
  /// Options of the master's simplex.
  optim::SimplexOptions simplex{};
  /// Continuous solver only: how to reach the optimum (ContinuousMethod::Automatic: the
  /// interior-point method over interval patterns whenever it applies, column generation
  /// otherwise or as its fallback).
  ContinuousMethod continuous_method = ContinuousMethod::Automatic;
};

/// Outcome of an unbiased-randomizer solve. `mechanism` is the optimal one when
/// `status == optim::SolveStatus::Optimal` (certified: `gap` <= UnbiasedOptions::gap_tolerance).
/// When a limit stopped the solve (TimeLimit, IterationLimit) after a feasible master was found,
/// or roundoff kept the certificate above the tolerance (NumericalIssue), `mechanism` is the best
/// feasible mechanism found (eps-DP, rows summing to 1, bias within the bound) and `gap` says how
/// far from optimal it may be; otherwise it is empty (no outputs).
template <typename Scalar = double>
struct UnbiasedResult {
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;  ///< solver outcome
  FiniteMechanism<Scalar> mechanism;                               ///< only positive-probability outputs; rows sum to 1
  /// \f$\sum_y p_y E[\ell(M(y), y)]\f$ with the solver's loss (SquaredLoss: \f$(o - y)^2\f$, i.e.
  /// twice the paper's \f$\mathcal{G}\f$ with g = (o-y)^2/2).
  Scalar expected_loss = 0;
  Scalar max_bias = 0;           ///< achieved \f$\max_y |E[M(y)] - y|\f$
  Index rounds = 0;              ///< column-generation rounds (pricing calls)
  Index columns = 0;             ///< columns in the final master
  Index simplex_iterations = 0;  ///< simplex pivots in total
  /// A certified lower bound on the optimal expected loss (over the grid, or over every real
  /// output in the range for the continuous solver), in the units of `expected_loss`, by weak
  /// duality from the final duals \f$(\pi, \sigma)\f$ and exact pricing:
  /// \f$1^T\pi + y^T\sigma - B \|\sigma\|_1 + \kappa \min(0, \min \text{reduced cost})\f$, where
  /// \f$\kappa = \min(e^\varepsilon, k / (1 + (k - 1) e^{-\varepsilon}))\f$ bounds the sum of the
  /// staircase column weights (entries \f$e^{-\varepsilon}\f$ or 1; the k normalization rows
  /// summed). `expected_loss - lower_bound` bounds the distance to the true optimum. NaN when
  /// not computed.
  Scalar lower_bound = std::numeric_limits<Scalar>::quiet_NaN();
  /// Relative gap \f$(\text{expected\_loss} - \text{lower\_bound}) / \text{expected\_loss}\f$
  /// (0 when the bound meets the loss to roundoff; infinity when no bound was computed).
  Scalar gap = std::numeric_limits<Scalar>::infinity();
  Index interior_point_iterations = 0;  ///< interior-point iterations (continuous solver)
  /// True when the solve ended optimal.
  bool optimal() const { return status == optim::SolveStatus::Optimal; }
};

namespace detail {

inline void validate_unbiased_options(const UnbiasedOptions& o) {
  validate_finite_nonnegative("max_bias", o.max_bias);
  if (std::isnan(o.output_lower)) fail_parameter("output_lower", "must not be NaN", o.output_lower);
  if (std::isnan(o.output_upper)) fail_parameter("output_upper", "must not be NaN", o.output_upper);
  if (!(o.output_lower < o.output_upper))
    throw std::invalid_argument("'output_lower' must be below 'output_upper', got " + format_number(o.output_lower) +
                                " and " + format_number(o.output_upper));
  if (o.max_rounds < 1) fail_parameter("max_rounds", "must be at least 1", double(o.max_rounds));
  if (o.max_columns_per_round < -1)
    fail_parameter("max_columns_per_round", "must be -1 (automatic), 0 (all) or positive",
                   double(o.max_columns_per_round));
  if (!(o.dual_smoothing == -1 || (o.dual_smoothing >= 0 && o.dual_smoothing < 1)))
    fail_parameter("dual_smoothing", "must be -1 (automatic) or in [0, 1)", o.dual_smoothing);
  if (o.seed_grid_size < -1)
    fail_parameter("seed_grid_size", "must be -1 (automatic) or >= 0", double(o.seed_grid_size));
  if (!std::isfinite(o.pricing_tolerance) || !(o.pricing_tolerance > 0))
    fail_parameter("pricing_tolerance", "must be finite and positive", o.pricing_tolerance);
  if (std::isnan(o.time_limit) || o.time_limit < 0)
    fail_parameter("time_limit", "must be >= 0 seconds (infinity = no limit)", o.time_limit);
  if (!std::isfinite(o.gap_tolerance) || o.gap_tolerance < 0)
    fail_parameter("gap_tolerance", "must be finite and >= 0", o.gap_tolerance);
}

/// Scaled problem: the dbRR interval [L, U] of the labels maps to [-1, 1].
template <typename Scalar>
UnbiasedProblem make_unbiased_problem(const FinitePrior<Scalar>& prior, double eps, double max_bias) {
  UnbiasedProblem P;
  const Index k = prior.size();
  const Vector<Scalar> phi = debiased_rr_outputs(prior.values(), eps);
  const double L = double(phi[0]), U = double(phi[k - 1]);
  P.shift = 0.5 * (L + U);
  P.scale = k > 1 ? 0.5 * (U - L) : 1.0;
  P.labels.resize(k);
  P.probs.resize(k);
  for (Index i = 0; i < k; ++i) {
    P.labels[i] = (double(prior.value(i)) - P.shift) / P.scale;
    P.probs[i] = double(prior.probability(i));
  }
  P.low = std::nextafter(std::exp(-eps), 1.0);
  P.eps = eps;
  P.max_bias = max_bias / P.scale;
  return P;
}

/// The master LP's right-hand side and row types (columns are added separately).
inline optim::LinearProgram empty_master(const UnbiasedProblem& P) {
  const Index k = P.num_labels(), m = P.num_rows();
  optim::LinearProgram lp;
  lp.A.resize(m, 0);
  lp.c.resize(0);
  lp.b.resize(m);
  lp.row_types.assign(std::size_t(m), optim::RowType::Equal);
  for (Index i = 0; i < k; ++i) {
    lp.b[i] = 1;
    if (P.bounded()) {
      lp.b[k + i] = P.labels[i] + P.max_bias;
      lp.row_types[std::size_t(k + i)] = optim::RowType::LessEqual;
      lp.b[2 * k + i] = P.labels[i] - P.max_bias;
      lp.row_types[std::size_t(2 * k + i)] = optim::RowType::GreaterEqual;
    } else {
      lp.b[k + i] = P.labels[i];
    }
  }
  return lp;
}

/// State of a column-generation solve of the staircase master.
struct StaircaseMaster {
  std::vector<StaircaseColumn> columns;                         ///< metadata of the master's structural columns
  std::set<std::pair<double, std::vector<std::uint8_t>>> seen;  ///< (output, pattern) already in
  Eigen::VectorXd x;                                            ///< final primal values over `columns`
  Eigen::VectorXd duals;                                        ///< the final master's row duals (num_rows)
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;
  Index rounds = 0;      ///< pricing rounds (those that added columns, plus the final one)
  Index iterations = 0;  ///< simplex pivots
  /// Master objective of `x` (scaled cost units); NaN when no master solve ended optimal.
  double objective = std::numeric_limits<double>::quiet_NaN();
  /// Certified lower bound (scaled cost units) on the optimum over every column the pricing
  /// searches (optim::ColumnGenerationResult::lower_bound, with
  /// \f$\kappa = k / (1 + (k - 1) \ell)\f$); -infinity when none was obtained.
  double lower_bound = -std::numeric_limits<double>::infinity();
  /// Relative gap (objective - lower_bound) / |objective| (infinity without a bound).
  double gap = std::numeric_limits<double>::infinity();
  /// True when `x` is a feasible solution of the LP (the master's solution uses no penalized
  /// artificial), whatever the status: then finish_unbiased() can build a mechanism from it.
  bool feasible = false;
};

/// Inverse of the k x k prefix staircase matrix \f$S(i, \ell) = 1\f$ if \f$i < \ell\f$, else
/// `low` (\f$\ell = 0..k-1\f$: column \f$\ell\f$ is the pattern of the first \f$\ell\f$
/// labels), in closed form, O(k^2). Consecutive columns differ by \f$(1 - low) e_{\ell-1}\f$,
/// so \f$S = M D^{-1}\f$ with D the upper bidiagonal difference matrix and
/// \f$M = [low \cdot 1, (1 - low) e_0, \ldots, (1 - low) e_{k-2}]\f$, whose inverse is
/// explicit: \f$S^{-1} = D M^{-1}\f$ has rows \f$e_{k-1}/low - (e_0 - e_{k-1})/(1 - low)\f$,
/// then \f$(e_{\ell-1} - e_\ell)/(1 - low)\f$ for \f$\ell = 1..k-2\f$, and
/// \f$(e_{k-2} - e_{k-1})/(1 - low)\f$. Requires k >= 2 and 0 < low < 1.
inline Eigen::MatrixXd prefix_staircase_inverse(Index k, double low) {
  Eigen::MatrixXd inv = Eigen::MatrixXd::Zero(k, k);
  const double h = 1 / (1 - low);
  inv(0, k - 1) = 1 / low + h;
  inv(0, 0) -= h;
  for (Index len = 1; len < k; ++len) {
    inv(len, len - 1) += h;
    inv(len, len == k - 1 ? k - 1 : len) -= h;
  }
  return inv;
}

/// Column generation on the staircase master, on the library's engine
/// (optim::solve_by_column_generation(), \f$\kappa = k / (1 + (k - 1) \ell)\f$, derived below): `loss_of(column)` gives
/// the per-label loss vector at the column's output (scaled units), `price(duals, tol, min_rc)` the columns of reduced
/// cost below -tol and, in `min_rc`, the exact minimum reduced cost over its whole column space. The master starts from
/// Proposition 7's crash basis when the initial columns hold it (closed-form inverse) and prices with a structured
/// \f$A^T y\f$ (prefix sums). The result is Optimal only when certified (exact pricing at the master's duals, or the
/// Lagrangian bound within options.gap_tolerance); otherwise IterationLimit, TimeLimit
/// (options.time_limit) or NumericalIssue, with `lower_bound` and `gap` either way.
///
/// With `penalty` > 0 the master also holds 2m artificial columns \f$\pm e_r\f$ of that cost, so it
/// is feasible from the start even when the initial columns are not; a final solution that
/// still uses them is reported as SolveStatus::Infeasible (exact when `penalty` exceeds the
/// largest dual of the LP, which holds for any reasonable output set since costs are O(1)).
/// `warm_duals` (master rows, or empty): near-optimal duals of the full LP (an interior point's,
/// master_duals()); priced first, they start the certificate and the smoothing center
/// (optim::ColumnGenerationOptions::warm_duals).
template <typename LossAt, typename Price>
StaircaseMaster solve_staircase_master(const UnbiasedProblem& P, std::vector<StaircaseColumn> initial, LossAt&& loss_of,
                                       Price&& price, const UnbiasedOptions& options, double penalty = 0,
                                       const Eigen::VectorXd& warm_duals = {}) {
  StaircaseMaster S;
  const Index m = P.num_rows();
  const Index artificial = penalty > 0 ? 2 * m : 0;
  auto block = [&](const std::vector<StaircaseColumn>& cols, Eigen::MatrixXd& A, Eigen::VectorXd& c) {
    A.resize(m, Index(cols.size()));
    c.resize(Index(cols.size()));
    for (std::size_t j = 0; j < cols.size(); ++j)
      c[Index(j)] = staircase_coefficients(P, cols[j], loss_of(cols[j]), A.col(Index(j)));
  };
  std::vector<StaircaseColumn> fresh;
  for (auto& col : initial)
    if (S.seen.emplace(col.output, col.pattern).second) fresh.push_back(std::move(col));
  optim::LinearProgram lp = empty_master(P);
  {
    Eigen::MatrixXd A;
    Eigen::VectorXd c;
    block(fresh, A, c);
    lp.A = Eigen::MatrixXd::Zero(m, artificial + A.cols());
    lp.c.resize(artificial + A.cols());
    for (Index r = 0; r < artificial / 2; ++r) {
      lp.A(r, 2 * r) = 1;
      lp.A(r, 2 * r + 1) = -1;
    }
    lp.c.head(artificial).setConstant(penalty);
    lp.A.rightCols(A.cols()) = A;
    lp.c.tail(A.cols()) = c;
  }
  S.columns = std::move(fresh);
  // Structured pricing product for the master's simplex. A staircase column at output o has
  // a^T y = sum_i s_i (pi_i + o sigma_i) with s_i = low + (1 - low) [i in pattern]; with the
  // prefix sums of pi and of sigma, a column whose pattern is an interval of labels (all
  // one-sided and interval patterns, Claim 11) costs O(1) instead of O(m).
  struct Shape {
    double output = 0;
    Index first = 0, last = 0;  // pattern = labels [first, last) when `interval`
    bool interval = true;
  };
  std::vector<Shape> shapes;
  std::vector<double> prefix_pi, prefix_sigma;
  auto describe = [&](const StaircaseColumn& col) {
    Shape sh;
    sh.output = col.output;
    const Index k = P.num_labels();
    Index i = 0;
    while (i < k && !col.pattern[std::size_t(i)]) ++i;
    sh.first = i;
    while (i < k && col.pattern[std::size_t(i)]) ++i;
    sh.last = i;
    while (i < k && !col.pattern[std::size_t(i)]) ++i;
    sh.interval = i == k;
    shapes.push_back(sh);
  };
  for (const auto& col : S.columns) describe(col);
  auto product = [&](const Eigen::VectorXd& y, Eigen::VectorXd& out) {
    const Index k = P.num_labels();
    const Eigen::VectorXd sigma = bias_duals(P, y);
    prefix_pi.assign(std::size_t(k + 1), 0.0);
    prefix_sigma.assign(std::size_t(k + 1), 0.0);
    for (Index i = 0; i < k; ++i) {
      prefix_pi[std::size_t(i + 1)] = prefix_pi[std::size_t(i)] + y[i];
      prefix_sigma[std::size_t(i + 1)] = prefix_sigma[std::size_t(i)] + sigma[i];
    }
    for (Index r = 0; r < artificial / 2; ++r) {
      out[2 * r] = y[r];
      out[2 * r + 1] = -y[r];
    }
    const double all_pi = prefix_pi[std::size_t(k)], all_sigma = prefix_sigma[std::size_t(k)];
    for (std::size_t j = 0; j < shapes.size(); ++j) {
      const Shape& sh = shapes[j];
      const double o = sh.output;
      double inside;
      if (sh.interval) {
        inside = (prefix_pi[std::size_t(sh.last)] - prefix_pi[std::size_t(sh.first)]) +
                 o * (prefix_sigma[std::size_t(sh.last)] - prefix_sigma[std::size_t(sh.first)]);
      } else {
        inside = 0;
        for (Index i = 0; i < k; ++i)
          if (S.columns[j].pattern[std::size_t(i)]) inside += y[i] + o * sigma[i];
      }
      out[artificial + Index(j)] = P.low * (all_pi + o * all_sigma) + (1 - P.low) * inside;
    }
  };
  optim::SimplexOptions simplex_options = options.simplex;
  simplex_options.compute_reduced_costs = false;  // the pricing below works from the duals
  optim::RevisedSimplex master(std::move(lp), simplex_options);
  master.set_transpose_product(product);
  {
    // Crash basis (Proposition 7): when the initial columns hold the prefixes of length
    // 0..k-1 at the lowest output and the empty pattern and the suffixes of length 1..k-1 at
    // the highest, those 2k columns are a basis whose weights are the two-point mechanism's
    // decomposition, non-negative whenever the two outputs bracket the two-label dbRR interval
    // (proof of Prop. 7). Starting
    // phase 2 there skips phase 1's >= 2k pivots; if the weights are negative (not bracketed)
    // the simplex rejects the basis and runs phase 1 as before.
    const Index k = P.num_labels();
    if (!P.bounded() && !S.columns.empty()) {
      double lo = S.columns.front().output, hi = lo;
      for (const auto& col : S.columns) {
        lo = std::min(lo, col.output);
        hi = std::max(hi, col.output);
      }
      std::vector<Index> at_lo(std::size_t(k), -1), at_hi(std::size_t(k), -1);
      for (std::size_t j = 0; j < S.columns.size(); ++j) {
        const StaircaseColumn& col = S.columns[j];
        if (col.output != lo && col.output != hi) continue;
        // len = number of leading (prefix) or trailing (suffix) ones; the pattern must be
        // exactly that prefix or suffix.
        Index ones = 0, lead = 0, trail = 0;
        for (Index i = 0; i < k; ++i) ones += col.pattern[std::size_t(i)];
        while (lead < k && col.pattern[std::size_t(lead)]) ++lead;
        while (trail < k && col.pattern[std::size_t(k - 1 - trail)]) ++trail;
        const Index column = artificial + Index(j);
        if (col.output == lo && ones == lead && lead < k) at_lo[std::size_t(lead)] = column;
        if (col.output == hi && hi > lo && ones == trail && trail < k) at_hi[std::size_t(trail)] = column;
      }
      std::vector<Index> basis;
      for (Index len = 0; len < k; ++len) basis.push_back(at_lo[std::size_t(len)]);
      for (Index len = 0; len < k; ++len) basis.push_back(at_hi[std::size_t(len)]);
      if (std::find(basis.begin(), basis.end(), Index(-1)) == basis.end()) {
        // The basis is [S_lo, S_hi; lo S_lo, hi S_hi] = [I, I; lo I, hi I] diag(S_lo, S_hi) with
        // S_lo, S_hi the k x k prefix and suffix staircase matrices, so its inverse is
        // diag(S_lo^-1, S_hi^-1) [hi I, -I; -lo I, I] / (hi - lo): two k x k inverses, an
        // eighth of the O((2k)^3) factorization each (the simplex checks it before use).
        // S_hi is S_lo with its rows reversed, so its inverse is S_lo^-1 with its columns reversed.
        const Eigen::MatrixXd inv_lo = prefix_staircase_inverse(k, P.low);
        const Eigen::MatrixXd inv_hi = inv_lo.rowwise().reverse();
        Eigen::MatrixXd inverse(2 * k, 2 * k);
        inverse << hi * inv_lo, -inv_lo, -lo * inv_hi, inv_hi;
        inverse /= hi - lo;
        master.set_basis(basis, inverse);
      }
    }
  }
  // Engine options. Wentges smoothing: the master's duals jump between extreme points of a
  // highly degenerate dual (many labels, few outputs), and columns priced there are often
  // useless a round later; the smoothed point moves steadily.
  optim::ColumnGenerationOptions cg;
  cg.max_rounds = options.max_rounds;
  cg.time_limit = options.time_limit;
  cg.gap_tolerance = options.gap_tolerance;
  // kappa (Lagrangian bound b'y + kappa min(0, min reduced cost)): summing the k normalization
  // rows gives sum_j w_j x_j = k with w_j = |T_j| (1 - low) + k low for every feasible x, so
  // sum_j rc_j x_j >= k min(0, min_j rc_j / w_j) (the pricing spans every pattern). The empty
  // pattern's ratio equals the full pattern's (both are sum_i terms_i / k), so the minimum is
  // reached on a non-empty pattern, where w_j >= 1 + (k - 1) low: kappa = k / (1 + (k - 1) low),
  // at most 1/low (the plain bound on the weights' sum) and about k at large eps, where 1/low
  // = e^eps would multiply the roundoff in the minimum reduced cost by up to 1.6e5 (eps = 12).
  const double k_labels = double(P.num_labels());
  cg.column_sum_bound = std::min(1 / P.low, k_labels / (1 + (k_labels - 1) * P.low));
  cg.dual_smoothing = options.dual_smoothing < 0 ? (P.num_labels() >= 100 ? 0.5 : 0.0) : options.dual_smoothing;
  // The most negative columns first, at most max_columns_per_round of them: every column costs
  // a dot product per simplex pivot for the rest of the solve.
  cg.max_columns_per_round = options.max_columns_per_round < 0 ? 2 * P.num_labels() : options.max_columns_per_round;
  cg.warm_duals = warm_duals;
  // The pricing oracle of the engine: exact pricing (price() reports the minimum reduced cost
  // over its whole column space) returning the priced columns not yet in the master, once
  // each. `last` keeps their metadata until the engine says which ones it appended. Without
  // smoothing the oracle's duals are the master's, so only the max_columns_per_round most
  // negative can be appended: the others are not even assembled.
  std::vector<StaircaseColumn> last;
  std::set<std::pair<double, std::vector<std::uint8_t>>> in_block;
  auto oracle = [&](const Eigen::VectorXd& y) {
    optim::PricedColumns out;
    double min_rc = 0;
    std::vector<StaircaseColumn> priced = price(y, options.pricing_tolerance, min_rc);
    const std::size_t cap = std::size_t(cg.max_columns_per_round);
    if (cg.dual_smoothing == 0 && cap > 0 && priced.size() > cap)
      std::stable_sort(priced.begin(), priced.end(), [](const StaircaseColumn& u, const StaircaseColumn& v) {
        return u.reduced_cost < v.reduced_cost;
      });
    last.clear();
    in_block.clear();
    for (auto& col : priced) {
      if (cg.dual_smoothing == 0 && cap > 0 && last.size() >= cap) break;
      if (!S.seen.count({col.output, col.pattern}) && in_block.emplace(col.output, col.pattern).second)
        last.push_back(std::move(col));
    }
    block(last, out.A, out.c);
    out.min_reduced_cost = min_rc;
    return out;
  };
  auto on_append = [&](const std::vector<Index>& picked, Index) {
    for (Index t : picked) {
      StaircaseColumn& col = last[std::size_t(t)];
      S.seen.emplace(col.output, col.pattern);
      describe(col);
      S.columns.push_back(std::move(col));
    }
  };
  const optim::ColumnGenerationResult r = optim::solve_by_column_generation(master, oracle, cg, on_append);
  S.status = r.status;
  S.iterations = r.iterations;
  S.rounds = r.rounds + (r.pricing_calls > 0 ? 1 : 0);
  if (r.master.x.size() == master.num_columns()) S.x = r.master.x.tail(r.master.x.size() - artificial);
  S.duals = r.master.duals;
  S.objective = r.master.objective;
  S.lower_bound = r.lower_bound;
  S.gap = r.gap;
  S.feasible =
      S.x.size() == Index(S.columns.size()) &&
      (artificial == 0 || r.master.x.head(artificial).maxCoeff() <= options.simplex.primal_feasibility_tolerance);
  // A solution that still uses the penalized artificials is no solution of the LP.
  if (S.status == optim::SolveStatus::Optimal && artificial > 0 &&
      r.master.x.head(artificial).maxCoeff() > options.simplex.primal_feasibility_tolerance)
    S.status = optim::SolveStatus::Infeasible;
  return S;
}

/// Row sums of a staircase mechanism off from 1 by more than roundoff (weights clamped at zero
/// after a simplex tolerance, a degenerate basis) must not be fixed by dividing each row by its
/// sum: that multiplies the ratio between two rows by the ratio of their sums, and the exact
/// audit would see eps exceeded by that much. Scaling whole columns (outputs) leaves every
/// column's ratios, hence the privacy, untouched. `columns` (k x n, one column per output at
/// the scaled `outputs`) are rescaled in place by the minimum-norm scales that make the rows sum
/// to 1 and keep the conditional means, or the rows alone if that is not solvable, when those
/// scales are positive and reach roundoff; otherwise they are left as they are.
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
  Matrix<Scalar> probs = kept.cast<Scalar>();
  for (Index i = 0; i < k; ++i) probs.row(i) /= probs.row(i).sum();
  // The columns are eps-DP in exact arithmetic; the row division above (and a tolerance-feasible
  // master) can push a ratio past e^eps by a few ulps. Make the stored matrix eps-DP exactly.
  cap_to_epsilon(probs, P.eps);
  result.mechanism = FiniteMechanism<Scalar>(prior.values(), std::move(outputs), std::move(probs));
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  Scalar bias = 0;
  for (Index i = 0; i < k; ++i)
    bias = std::max(bias, Scalar(std::abs(result.mechanism.conditional_mean(i) - prior.value(i))));
  result.max_bias = bias;
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
/// With \f$\rho\f$ the smallest reduced cost over every (pattern, output) pair, any feasible
/// mechanism's loss is the dual objective plus \f$\sum_T m_T r_T \ge \min(0, \rho) \sum_T m_T\f$.
/// Summing the k normalization rows gives \f$\sum_T m_T n_T = k\f$ with \f$n_T = \sum_y s_{T,y}\f$;
/// a non-empty pattern has \f$n_T \ge 1 + (k - 1) \ell\f$, and the empty pattern is the full
/// one scaled by \f$\ell\f$ (its reduced cost too), so mass on it counts as \f$\ell\f$ times that
/// on the full pattern. Hence \f$\sum_T m_T \le k / (1 + (k - 1) \ell)\f$, at most
/// \f$\min(k, 1/\ell)\f$: the factor that multiplies the roundoff in \f$\rho\f$ (at eps = 12,
/// \f$1/\ell \approx 1.6 \cdot 10^5\f$ would swamp a 1e-9 certificate; k does not).
inline double continuous_lower_bound(const UnbiasedProblem& P, const Eigen::VectorXd& pi_sigma, double lo, double hi) {
  const Index k = P.num_labels();
  Eigen::VectorXd duals = Eigen::VectorXd::Zero(P.num_rows());
  duals.head(2 * k) = pi_sigma;
  double min_rc = 0;
  price_continuous(P, duals, lo, hi, std::numeric_limits<double>::infinity(), 0, min_rc);
  const Eigen::VectorXd sigma = pi_sigma.tail(k);
  const double mass = double(k) / (1 + double(k - 1) * P.low);
  return pi_sigma.head(k).sum() + P.labels.dot(sigma) - P.max_bias * sigma.cwiseAbs().sum() +
         std::min(0.0, min_rc) * std::min(mass, 1 / P.low);
}

/// Records the certified lower bound `bound` (units of expected_loss) and the relative gap on a
/// result that has a mechanism, and withdraws Optimal when the gap exceeds `gap_tolerance`
/// (roundoff kept the certificate from closing: the status says so, NumericalIssue, and the
/// mechanism stays as the best feasible one). A bound above the loss by roundoff (1e-10
/// relative: the final mechanism is made eps-DP exactly by cap_to_epsilon, which may lower its
/// loss by a removed mass of that order) is taken as the loss itself.
template <typename Scalar>
void attach_certificate(UnbiasedResult<Scalar>& result, double bound, double gap_tolerance) {
  if (result.mechanism.num_outputs() == 0 || !(bound > -std::numeric_limits<double>::infinity())) {
    if (result.optimal()) result.status = optim::SolveStatus::NumericalIssue;
    return;
  }
  const double loss = double(result.expected_loss), scale = std::max(std::abs(loss), 1e-300);
  if (bound > loss && bound - loss <= 1e-10 * scale) bound = loss;
  result.lower_bound = Scalar(bound);
  result.gap = Scalar(std::max(0.0, loss - bound) / scale);
  if (result.optimal() && !(double(result.gap) <= gap_tolerance)) result.status = optim::SolveStatus::NumericalIssue;
}

template <typename Scalar>
UnbiasedResult<Scalar> trivial_unbiased(const FinitePrior<Scalar>& prior) {
  UnbiasedResult<Scalar> r;
  r.status = optim::SolveStatus::Optimal;
  Matrix<Scalar> one(1, 1);
  one(0, 0) = 1;
  r.mechanism = FiniteMechanism<Scalar>(prior.values(), prior.values(), one);
  return r;
}

}  // namespace detail

/// ComputeOptUnbiasedRand (Alg. 1) on the output set `outputs`: the eps-DP mechanism from the
/// prior's values to `outputs` of least expected loss with \f$E[M(y)] = y\f$ for every label
/// (or \f$|E[M(y)] - y| \le B\f$ with options.max_bias = B > 0).
///
/// Solved by column generation over staircase columns: the master has
/// 2k rows (normalization and unbiasedness; 3k with a bias bound) and columns (pattern, output);
/// pricing finds the best pattern at every output in O(k). It starts from the one-sided columns
/// of Proposition 7's two-point mechanism on the extreme outputs. When the extreme outputs do
/// not bracket the two-label dbRR interval (so that mechanism may be infeasible) penalized
/// artificial columns make the first master feasible; a solution still using them is reported
/// as SolveStatus::Infeasible.
///
/// \tparam Loss a NoisyLabelLoss (SquaredLoss, AbsoluteLoss, ...); only its values on
///         (output, label) pairs are used.
/// \param prior the label prior (its values are the mechanism's inputs).
/// \param eps privacy parameter, finite and > 0.
/// \param outputs the candidate outputs: finite, strictly increasing, at least one.
/// \param options bias bound and solver options.
/// \return status and, when optimal, the mechanism (only outputs with positive probability),
///         its expected loss \f$\sum_y p_y E[\ell(M(y), y)]\f$ and achieved bias.
/// \throws std::invalid_argument on bad parameters (never for an infeasible or failed solve).
///
/// \code{.cpp}
/// auto prior = labeldp::FinitePrior<>::from_probabilities({0, 1, 2}, {0.6, 0.25, 0.15});
/// auto grid = labeldp::feasible_output_set(prior, 0.5, 256);
/// auto r = labeldp::optimal_unbiased_on_outputs(prior, 0.5, grid);
/// if (r.optimal()) use(r.mechanism);
/// \endcode
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> UnbiasedResult<Scalar> optimal_unbiased_on_outputs(
    const FinitePrior<Scalar>& prior, double eps, const Vector<Scalar>& outputs, const UnbiasedOptions& options = {},
    const Loss& loss = Loss{}) {
  validate_epsilon(eps);
  detail::validate_unbiased_options(options);
  if (outputs.size() == 0) throw std::invalid_argument("'outputs' must not be empty");
  for (Index j = 0; j < outputs.size(); ++j) {
    validate_finite("outputs", double(outputs[j]));
    if (j > 0 && !(outputs[j] > outputs[j - 1]))
      throw std::invalid_argument("'outputs' must be strictly increasing, got " +
                                  detail::format_number(double(outputs[j - 1])) + " then " +
                                  detail::format_number(double(outputs[j])));
  }
  for (Index i = 0; i < prior.size(); ++i) loss.validate_label(prior.value(i));
  // options.time_limit covers the whole call: every stage gets what the earlier ones left.
  const auto start = std::chrono::steady_clock::now();
  const auto remaining = [&] {
    return std::max(
        0.0, options.time_limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  const detail::UnbiasedProblem P = detail::make_unbiased_problem(prior, eps, options.max_bias);
  const Index k = P.num_labels(), n = outputs.size();
  std::vector<double> original(static_cast<std::size_t>(n));
  Eigen::VectorXd scaled(n);
  for (Index j = 0; j < n; ++j) {
    original[std::size_t(j)] = double(outputs[j]);
    scaled[j] = (double(outputs[j]) - P.shift) / P.scale;
  }
  // Costs are divided by the loss across the dbRR interval so that they are of order 1; a
  // positive factor changes no minimizer.
  double cost_unit = double(loss(Scalar(P.shift + P.scale), Scalar(P.shift - P.scale)));
  if (!(cost_unit > 0) || !std::isfinite(cost_unit)) cost_unit = 1;
  Eigen::MatrixXd loss_values(k, n), weighted(k, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < k; ++i) {
      loss_values(i, j) = double(loss(outputs[j], prior.value(i))) / cost_unit;
      weighted(i, j) = P.probs[i] * loss_values(i, j);
    }
  if (!loss_values.allFinite()) throw std::invalid_argument("the loss is not finite on some (output, label) pair");

  // Two-label dbRR interval (proof of Prop. 7): the two-point mechanism on the extreme outputs
  // is eps-DP iff they bracket it.
  const double e = std::exp(eps), w = std::expm1(eps);
  const double ymin = P.labels[0], ymax = P.labels[k - 1];
  const bool bracketed =
      k == 1 ? (scaled[0] <= ymin && scaled[n - 1] >= ymax)
             : (scaled[0] <= (e * ymin - ymax) / w + 1e-12 && scaled[n - 1] >= (e * ymax - ymin) / w - 1e-12);
  // The two-point mechanism is feasible on any pair of outputs that brackets that interval,
  // and the innermost such pair of the grid is by far the cheapest start: the two-label
  // interval is about k/2 times narrower than FeasibleOutputSet's [L, U] (k = 52, eps = 1:
  // 110 against 1,595 label units), and the two-point mechanism's loss grows with the square of
  // its outputs' distance from the labels. The master starts from its one-sided columns (the
  // crash basis of solve_staircase_master); the margin keeps the decomposition's weights clear
  // of zero, since the staircase ratio 1/low is a rounding below e^eps.
  Index lo_index = 0, hi_index = n - 1;
  if (bracketed && k > 1) {
    const double margin = 1e-9;
    while (lo_index + 1 < n && scaled[lo_index + 1] <= (e * ymin - ymax) / w - margin) ++lo_index;
    while (hi_index - 1 > lo_index && scaled[hi_index - 1] >= (e * ymax - ymin) / w + margin) --hi_index;
  }
  std::vector<detail::StaircaseColumn> initial = detail::one_sided_columns(k, scaled[lo_index], lo_index);
  for (auto& c : detail::one_sided_columns(k, scaled[hi_index], hi_index)) initial.push_back(std::move(c));
  auto loss_of = [&](const detail::StaircaseColumn& col) -> Eigen::VectorXd { return loss_values.col(col.grid_index); };
  auto price = [&](const Eigen::VectorXd& duals, double tol, double& min_rc) {
    return detail::price_grid(P, weighted, scaled, duals, tol, 2 * k + 2, min_rc);
  };
  // Costs are O(1) after scaling, so the LP's duals are far below this penalty unless the
  // output set is nearly infeasible.
  const double penalty = bracketed ? 0.0 : 1e6;
  // Certified bound (loss units) from the final master's duals: pricing over the whole grid.
  detail::StaircaseBarrierProblem Q;
  Q.cost = weighted;
  Q.outputs = scaled;
  Q.targets = P.labels;
  Q.rows = P.bounded() ? detail::StaircaseRows::BiasBounded : detail::StaircaseRows::Unbiased;
  Q.max_bias = P.max_bias;
  Q.low = P.low;
  // Any duals give a valid bound (weak duality with exact pricing), whatever the status: the
  // final master's, and the best one column generation saw (S.lower_bound).
  auto master_bound = [&](const detail::StaircaseMaster& S) {
    if (S.duals.size() != P.num_rows() || !S.duals.allFinite()) return S.lower_bound;
    Eigen::VectorXd pi_sigma(2 * k);
    pi_sigma << S.duals.head(k), detail::bias_duals(P, S.duals);
    return std::max(S.lower_bound, detail::staircase_lagrangian_bound(Q, pi_sigma));
  };
  // Which path. Column generation on the staircase master is fast while it converges in few
  // rounds (the papers' priors at eps = 1: a few ms) but can tail off for hundreds of rounds
  // (near-uniform priors, large eps); the interior-point method on the compact LP
  // (detail/staircase_barrier.hpp) has a predictable cost. Rule (ski rental): give column
  // generation a budget of rounds worth the barrier's predicted work, then switch. Cost model
  // (flop-equivalents; the constants were measured on this code, one core): a round is a warm
  // re-solve of the m = 2k row master, about m pivots of O(m^2) basis work plus pricing products
  // over the master's columns, ~8 m^3; the barrier is ~40 iterations of ~200 n k for the
  // per-output blocks plus min(m^2 n, m n^2) + min(m, n)^3 / 3 for the normal equations.
  const double m_rows = double(2 * k), n_out = double(n);
  const double barrier_work =
      40.0 * (200.0 * n_out * double(k) + std::min(m_rows * m_rows * n_out, m_rows * n_out * n_out) +
              std::pow(std::min(m_rows, n_out), 3) / 3);
  const Index budget = std::max<Index>(2, Index(std::ceil(barrier_work / (8 * std::pow(m_rows, 3)))));
  if (!bracketed || k == 1 || options.max_rounds <= budget) {
    detail::StaircaseMaster S = detail::solve_staircase_master(P, std::move(initial), loss_of, price, options, penalty);
    UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, original, loss);
    detail::attach_certificate(result, master_bound(S) * cost_unit, options.gap_tolerance);
    return result;
  }
  // A budget of a few rounds is not worth spending: the first master solve alone can take many
  // times m pivots when column generation is going to tail off, so the barrier goes first.
  detail::StaircaseMaster S;
  if (budget >= 4) {
    // Column generation gets the rounds the model prices the barrier at, and at least 12: on
    // the weeks-like k = 52 prior at eps = 1 it needs 10 rounds where the model allows 4 (and
    // stopping it there for the barrier cost 4x, 5.6 ms against 1.3 ms); more rounds on a
    // tailing-off solve only delay the barrier (weeks, grid 416, eps 2: 124 rounds = 0.1 s).
    UnbiasedOptions first = options;
    first.max_rounds = std::max<Index>(budget, 12);
    S = detail::solve_staircase_master(P, initial, loss_of, price, first, penalty);
    // The user's time limit ends the solve here with the best feasible master and its gap.
    if (S.status == optim::SolveStatus::Optimal || S.status == optim::SolveStatus::TimeLimit) {
      UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, original, loss);
      detail::attach_certificate(result, master_bound(S) * cost_unit, options.gap_tolerance);
      if (result.optimal() || S.status == optim::SolveStatus::TimeLimit) return result;
    }
  }
  // Tailing off: the barrier's interior point. Its mechanism, written exactly as staircase
  // columns (every column in the eps-DP cone), is optimal to within the certified gap of the
  // interior duals' Lagrangian bound (exact pricing over every staircase column of the grid);
  // accepted when that gap is at most 1e-9 relative.
  detail::StaircaseBarrierOptions barrier_options;
  barrier_options.tolerance = 2e-10;
  // Near-uniform and heavy-tailed priors take 100-150 iterations of short steps (outputs that
  // leave the support squeeze their whole cone to zero at once); the crossover after an
  // unfinished barrier costs far more than the iterations that finish it.
  barrier_options.max_iterations = 400;
  barrier_options.time_limit = remaining();
  const detail::StaircaseBarrierResult ipm = detail::solve_staircase_barrier(Q, barrier_options);
  double ipm_bound = -std::numeric_limits<double>::infinity();
  if (ipm.duals.allFinite()) ipm_bound = detail::staircase_lagrangian_bound(Q, ipm.duals);
  if (ipm.status == detail::StaircaseBarrierStatus::Converged) {
    // Its mechanism, every column clamped into its cone [low T_o, T_o] (the staircase
    // decomposition of the interior point, merged back per output).
    UnbiasedResult<Scalar> result;
    result.status = optim::SolveStatus::Optimal;
    result.rounds = S.rounds;
    result.simplex_iterations = S.iterations;
    std::vector<double> outs;
    std::vector<Eigen::VectorXd> cols;
    for (Index o = 0; o < n; ++o)
      if (ipm.top[o] > 0) {
        outs.push_back(original[std::size_t(o)]);
        cols.push_back(ipm.mechanism.col(o).cwiseMax(P.low * ipm.top[o]).cwiseMin(ipm.top[o]));
      }
    result.columns = Index(outs.size());
    detail::finish_columns(prior, P, outs, cols, loss, result);
    const double bound = ipm_bound * cost_unit;
    if (result.optimal() && double(result.expected_loss) - bound <= 1e-9 * std::abs(double(result.expected_loss)) &&
        double(result.max_bias) <= P.max_bias * P.scale * (1 + 1e-9) + 1e-9 * P.scale) {
      // (min: the interior mechanism meets the rows to roundoff, not exactly.)
      detail::attach_certificate(result, bound, options.gap_tolerance);
      result.interior_point_iterations = ipm.iterations;
      if (result.optimal()) return result;
    }
  }
  // Otherwise an exact crossover: the interior point's candidate columns (the nested level sets
  // of every used output's column) and Proposition 7's one-sided columns on the outermost
  // outputs involved (so the master's crash basis applies) start the staircase master again;
  // its exact pricing over the grid certifies the vertex it finds.
  std::vector<detail::StaircaseColumn> columns;
  // A stalled barrier still returns its best certified iterate: near the optimum (rows met to
  // 1e-6) its columns are the crossover's best start.
  const bool ipm_usable = ipm.status == detail::StaircaseBarrierStatus::Converged ||
                          (ipm.primal_residual <= 1e-6 && ipm.mechanism.allFinite() && ipm.top.allFinite());
  if (ipm_usable) columns = detail::staircase_barrier_columns(ipm, scaled, P.low);
  Index lo_end = lo_index, hi_end = hi_index;
  for (const auto& c : columns) {
    lo_end = std::min(lo_end, c.grid_index);
    hi_end = std::max(hi_end, c.grid_index);
  }
  for (auto& c : detail::one_sided_columns(k, scaled[lo_end], lo_end)) columns.push_back(std::move(c));
  for (auto& c : detail::one_sided_columns(k, scaled[hi_end], hi_end)) columns.push_back(std::move(c));
  // The columns the first master used keep their information too.
  for (Index j = 0; j < S.x.size(); ++j)
    if (S.x[j] > 0) columns.push_back(S.columns[std::size_t(j)]);
  // The interior duals warm-start it: their certified bound ends the solve as soon as the master
  // reaches the optimum (rather than after the rounds that prove it from vertex duals, which
  // tail off exactly where the barrier was needed), and they are the smoothing center.
  const Index rounds_before = S.rounds, iterations_before = S.iterations;
  Eigen::VectorXd warm;
  if (ipm.duals.size() == Q.num_rows() && ipm.duals.allFinite()) warm = detail::master_duals(P, ipm.duals);
  UnbiasedOptions crossover = options;
  if (crossover.dual_smoothing < 0 && warm.size()) crossover.dual_smoothing = 0.5;
  // The certificate at the master's duals is about kappa times the pricing and dual tolerances
  // (absolute, scaled costs of order 1): on a small objective (weeks, grid 1664, eps 8: 1e-3)
  // the defaults leave a 5e-8 relative gap, so this stage prices and pivots to 1e-11, as the
  // continuous solver's exact stage does.
  crossover.pricing_tolerance = std::min(options.pricing_tolerance, 1e-11);
  crossover.simplex.dual_feasibility_tolerance = std::min(options.simplex.dual_feasibility_tolerance, 1e-11);
  crossover.time_limit = remaining();
  S = detail::solve_staircase_master(P, std::move(columns), loss_of, price, crossover, penalty, warm);
  S.rounds += rounds_before;
  S.iterations += iterations_before;
  UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, original, loss);
  result.interior_point_iterations = ipm.iterations;
  detail::attach_certificate(result, std::max(ipm_bound, master_bound(S)) * cost_unit, options.gap_tolerance);
  return result;
}

/// Alg. 2 then Alg. 1: the optimal unbiased (or bias-bounded) randomizer on the `grid_size`-point
/// FeasibleOutputSet grid. Feasible by Proposition 7. Same result and errors as
/// optimal_unbiased_on_outputs(), plus `grid_size` < 2 is rejected. A one-value prior yields
/// the trivial mechanism (the label itself with probability 1).
///
/// \code{.cpp}
/// auto r = labeldp::optimal_unbiased_grid(prior, 1.0, 1664);   // r.mechanism, r.expected_loss
/// \endcode
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> UnbiasedResult<Scalar> optimal_unbiased_grid(const FinitePrior<Scalar>& prior,
                                                                                   double eps, Index grid_size,
                                                                                   const UnbiasedOptions& options = {},
                                                                                   const Loss& loss = Loss{}) {
  validate_epsilon(eps);
  if (grid_size < 2) detail::fail_parameter("grid_size", "must be at least 2", double(grid_size));
  detail::validate_unbiased_options(options);
  if (prior.size() == 1) return detail::trivial_unbiased(prior);
  return optimal_unbiased_on_outputs(prior, eps, feasible_output_set(prior, eps, grid_size), options, loss);
}

/// The exact optimal unbiased (or bias-bounded) randomizer for the squared loss with outputs
/// anywhere on the real line (or in [options.output_lower, options.output_upper]): no grid.
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
/// then an LP crossover on its active intervals at their outputs, accepted when exact pricing at
/// the interior duals certifies it. Interval patterns need not suffice here (Claim 14 orders the
/// rows by their means, which a bias bound lets cross: measured up to 8e-6 relative on small
/// priors), and the interior duals may then price out other patterns; column generation seeded
/// by the crossover's columns finishes, and the better of the two mechanisms is returned with
/// the best bound (NumericalIssue with its gap when that is above the tolerance).
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
/// \param options bias bound, output range and solver options.
/// \throws std::invalid_argument on bad parameters.
///
/// \code{.cpp}
/// auto r = labeldp::optimal_unbiased_continuous(prior, 1.0);
/// // r.mechanism.num_outputs() <= 2 * prior.size()
/// \endcode
template <typename Scalar = double>
UnbiasedResult<Scalar> optimal_unbiased_continuous(const FinitePrior<Scalar>& prior, double eps,
                                                   const UnbiasedOptions& options = {}) {
  validate_epsilon(eps);
  detail::validate_unbiased_options(options);
  if (prior.size() == 1) {
    if (double(prior.value(0)) < options.output_lower || double(prior.value(0)) > options.output_upper) {
      UnbiasedResult<Scalar> r;
      r.status = optim::SolveStatus::Infeasible;
      return r;
    }
    return detail::trivial_unbiased(prior);
  }
  const detail::UnbiasedProblem P = detail::make_unbiased_problem(prior, eps, options.max_bias);
  const Index k = P.num_labels();
  const double lo = (options.output_lower - P.shift) / P.scale;
  const double hi = (options.output_upper - P.shift) / P.scale;
  const double a = std::clamp(-1.0, lo, hi), b = std::clamp(1.0, lo, hi);
  std::vector<detail::StaircaseColumn> initial = detail::one_sided_columns(k, a, -1);
  for (auto& c : detail::one_sided_columns(k, b, -1)) initial.push_back(std::move(c));
  const double loss_unit = P.scale * P.scale;  // scaled squared loss -> original units
  auto loss_of_output = [&](double output) -> Eigen::VectorXd { return (P.labels.array() - output).square().matrix(); };
  Index interior_iterations = 0;
  // Bias bound: the crossover's mechanism when the interior bound did not certify it (it is
  // the interval problem's optimum, typically below column generation's final loss).
  std::optional<UnbiasedResult<Scalar>> crossed;
  double ipm_bound = -std::numeric_limits<double>::infinity();
  // The optimum's order of magnitude (scaled units), from the first stage that has one: it sets
  // the exact stage's tolerances below.
  double objective_estimate = std::numeric_limits<double>::quiet_NaN();
  bool seeded = false;
  const bool interior_applies = std::isinf(lo) && std::isinf(hi);
  if (interior_applies && options.continuous_method != ContinuousMethod::ColumnGeneration) {
    // Labels of zero probability between the extreme ones are solved away (their rows are
    // interpolated, their duals are zero: detail::restrict_to_supported_labels); the answer is
    // certified on the full problem.
    const detail::SupportedLabels kept = detail::restrict_to_supported_labels(P);
    detail::IntervalBarrier barrier(kept.problem);
    detail::IntervalBarrierResult ipm = barrier.solve(P.bounded() ? 1e-11 : 1e-9);
    interior_iterations = ipm.newton_steps;
    const Eigen::VectorXd duals = ipm.duals.size() > 0 ? detail::expand_duals(kept, k, ipm.duals) : Eigen::VectorXd();
    if (ipm.converged) {
      // Certify: exact pricing over every pattern and real output at the final duals.
      const double bound = detail::continuous_lower_bound(P, duals, lo, hi);
      if (ipm.primal_objective - bound <= 1e-9 * std::abs(ipm.primal_objective)) {
        detail::StaircaseMaster S;
        S.columns = std::move(ipm.columns);
        S.x = ipm.weights;
        S.status = optim::SolveStatus::Optimal;
        UnbiasedResult<Scalar> result;
        if (kept.all(P)) {
          result = detail::finish_unbiased(prior, P, S, {}, SquaredLoss<Scalar>{});
        } else {
          std::vector<Scalar> values, weights;
          for (const Index i : kept.kept) {
            values.push_back(prior.value(i));
            weights.push_back(prior.probability(i));
          }
          result = detail::finish_unbiased(FinitePrior<Scalar>::from_weights(values, weights), kept.problem, S, {},
                                           SquaredLoss<Scalar>{});
          if (result.optimal()) {
            result.mechanism = FiniteMechanism<Scalar>(
                prior.values(), result.mechanism.outputs(),
                detail::interpolate_dropped_rows(kept, prior.values(), result.mechanism.probabilities()));
            result.expected_loss = result.mechanism.expected_loss(prior);
            Scalar bias = 0;
            for (Index i = 0; i < k; ++i)
              bias = std::max(bias, Scalar(std::abs(result.mechanism.conditional_mean(i) - prior.value(i))));
            result.max_bias = bias;
          }
        }
        detail::attach_certificate(result, bound * loss_unit, options.gap_tolerance);
        result.interior_point_iterations = interior_iterations;
        if (result.optimal()) return result;
      }
    }
    // Not certified: the intervals active at the last interior point, at its outputs, seed
    // column generation on the full problem (whose first master is then an LP crossover), and
    // the interior duals still give a lower bound.
    for (auto& c : ipm.candidates) c.pattern = detail::expand_pattern(kept, k, c.pattern);
    if (duals.size() == 2 * k) ipm_bound = detail::continuous_lower_bound(P, duals, lo, hi);
    if (ipm_bound > 0) objective_estimate = ipm_bound;
    if (!ipm.candidates.empty()) {
      // LP crossover: the best mechanism on the candidates' (pattern, output) columns and
      // Proposition 7's (for feasibility). Its outputs are the interior point's, so it is
      // optimal to that accuracy; accept it when the interior bound certifies it.
      std::vector<detail::StaircaseColumn> columns = ipm.candidates;
      for (const auto& c : initial) columns.push_back(c);
      optim::LinearProgram lp = detail::empty_master(P);
      lp.A.resize(P.num_rows(), Index(columns.size()));
      lp.c.resize(Index(columns.size()));
      for (std::size_t j = 0; j < columns.size(); ++j)
        lp.c[Index(j)] =
            detail::staircase_coefficients(P, columns[j], loss_of_output(columns[j].output), lp.A.col(Index(j)));
      // Tight tolerances (as the exact stage below): a bias row met to 1e-9 would leave a
      // bias 1e-9 over B.
      optim::SimplexOptions tight = options.simplex;
      tight.primal_feasibility_tolerance = std::min(tight.primal_feasibility_tolerance, 1e-11);
      tight.dual_feasibility_tolerance = std::min(tight.dual_feasibility_tolerance, 1e-11);
      optim::RevisedSimplex crossover(std::move(lp), tight);
      const optim::SimplexResult lp_result = crossover.solve();
      if (lp_result.status == optim::SolveStatus::Optimal) objective_estimate = lp_result.objective;
      const bool certified = lp_result.status == optim::SolveStatus::Optimal &&
                             lp_result.objective - ipm_bound <= 1e-9 * std::abs(lp_result.objective);
      if (certified || (lp_result.status == optim::SolveStatus::Optimal && P.bounded())) {
        detail::StaircaseMaster S;
        S.columns = columns;
        S.x = lp_result.x;
        S.status = optim::SolveStatus::Optimal;
        S.iterations = lp_result.iterations;
        UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, {}, SquaredLoss<Scalar>{});
        result.interior_point_iterations = interior_iterations;
        if (certified) {
          detail::attach_certificate(result, ipm_bound * loss_unit, options.gap_tolerance);
          if (result.optimal()) return result;
        } else if (result.mechanism.num_outputs() > 0) {
          crossed = std::move(result);
        }
      }
    }
    // The intervals active at the interior point seed column generation. With a bias bound
    // that is the usual way out: the interior duals then price out patterns that are not
    // intervals (a label at its bias bound joins intervals far from it; Claim 14's ordering
    // argument needs unbiased means), so the interior bound rarely certifies the crossover.
    for (auto& c : ipm.candidates) initial.push_back(std::move(c));
    seeded = !ipm.candidates.empty();
  }
  // Proposition 7's two-point mechanism on {a, b} is eps-DP iff {a, b} brackets the two-label
  // dbRR interval; a narrower output range needs the penalized artificials to start from.
  const double e = std::exp(eps), w = std::expm1(eps);
  const double ymin = P.labels[0], ymax = P.labels[k - 1];
  const bool bracketed = a <= (e * ymin - ymax) / w + 1e-12 && b >= (e * ymax - ymin) / w - 1e-12;
  const double penalty = bracketed ? 0.0 : 1e6;
  auto loss_of = [&](const detail::StaircaseColumn& col) -> Eigen::VectorXd {
    return (P.labels.array() - col.output).square().matrix();
  };
  const Index n0 = options.seed_grid_size < 0 ? 4 * k : options.seed_grid_size;
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
    detail::StaircaseMaster G = detail::solve_staircase_master(P, initial, loss_of, price_grid, options, penalty);
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
  auto price = [&](const Eigen::VectorXd& duals, double tol, double& min_rc) {
    return detail::price_continuous(P, duals, lo, hi, tol, 2 * k + 2, min_rc);
  };
  // The certificate's gap is about kappa (<= 1 / low, continuous_lower_bound()) times the
  // pricing and dual tolerances, which are absolute in scaled costs, over the objective. Scaled
  // objectives run from order 1 down to 1e-4 and below (a bias bound at small eps: weeks, B = 20,
  // eps = 1 has 5e-4, where 1e-11 left a gap of 1.7e-7), so this exact stage prices and pivots
  // to 1e-11 times the objective's estimate when that is below 1 (not below 1e-15, the
  // roundoff of the pricing terms; the caller's tighter values stand).
  const double objective_scale = objective_estimate > 0 ? std::clamp(objective_estimate, 1e-4, 1.0) : 1.0;
  UnbiasedOptions exact = options;
  exact.pricing_tolerance = std::min(options.pricing_tolerance, 1e-11 * objective_scale);
  exact.simplex.dual_feasibility_tolerance =
      std::min(options.simplex.dual_feasibility_tolerance, 1e-11 * objective_scale);
  // Wentges smoothing (automatic: 0.5 from k = 100 on) for every bias-bounded solve too. There
  // the rounds mostly pin down the duals (weeks, B = 20, eps 1: the crossover's columns already
  // held the optimal loss, and 92 rounds only closed the bound), and the master's vertex duals
  // jump across a degenerate face: 2-4x fewer seconds at eps 1-8.
  if (options.dual_smoothing < 0 && P.bounded()) exact.dual_smoothing = 0.5;
  detail::StaircaseMaster S = detail::solve_staircase_master(P, std::move(initial), loss_of, price, exact, penalty);
  S.rounds += seed_rounds;
  S.iterations += seed_iterations;
  UnbiasedResult<Scalar> result = detail::finish_unbiased(prior, P, S, {}, SquaredLoss<Scalar>{});
  result.interior_point_iterations = interior_iterations;
  // The best bound column generation saw (with smoothing, at a smoothed point, not the final
  // master's duals), and the final master's.
  double bound = std::max(ipm_bound, S.lower_bound);
  if (S.duals.size() == P.num_rows()) {
    // The master's own duals (unbiasedness duals folded as in pricing) give a bound too.
    Eigen::VectorXd pi_sigma(2 * k);
    pi_sigma << S.duals.head(k), detail::bias_duals(P, S.duals);
    bound = std::max(bound, detail::continuous_lower_bound(P, pi_sigma, lo, hi));
  }
  if (crossed && (result.mechanism.num_outputs() == 0 || crossed->expected_loss < result.expected_loss)) {
    // Any feasible mechanism with any valid bound: the better mechanism, the column-generation
    // bound (the counters say what ran).
    crossed->rounds = result.rounds;
    crossed->columns = result.columns;
    crossed->simplex_iterations += result.simplex_iterations;
    crossed->status =
        result.status == optim::SolveStatus::Infeasible ? optim::SolveStatus::NumericalIssue : result.status;
    result = std::move(*crossed);
  }
  detail::attach_certificate(result, bound * loss_unit, options.gap_tolerance);
  return result;
}

/// The slow reference: Alg. 1 exactly as printed (variables \f$M_{y \to i}\f$, pairwise privacy
/// rows, O(n k^2) rows) solved with the in-house dense simplex. For tests on small instances
/// only; optimal_unbiased_on_outputs() computes the same optimum.
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> UnbiasedResult<Scalar> optimal_unbiased_reference(
    const FinitePrior<Scalar>& prior, double eps, const Vector<Scalar>& outputs, const UnbiasedOptions& options = {},
    const Loss& loss = Loss{}) {
  validate_epsilon(eps);
  detail::validate_unbiased_options(options);
  const detail::UnbiasedProblem P = detail::make_unbiased_problem(prior, eps, options.max_bias);
  const Index k = P.num_labels(), n = outputs.size();
  Eigen::VectorXd scaled(n);
  Eigen::MatrixXd loss_values(k, n);
  for (Index j = 0; j < n; ++j) {
    scaled[j] = (double(outputs[j]) - P.shift) / P.scale;
    for (Index i = 0; i < k; ++i) loss_values(i, j) = double(loss(outputs[j], prior.value(i)));
  }
  const double unit = std::max(loss_values.cwiseAbs().maxCoeff(), 1e-300);
  optim::RevisedSimplex simplex(
      detail::explicit_unbiased_lp(P.labels, P.probs, eps, scaled, loss_values / unit, P.max_bias), options.simplex);
  const optim::SimplexResult r = simplex.solve();
  UnbiasedResult<Scalar> result;
  result.status = r.status;
  result.simplex_iterations = r.iterations;
  if (r.status != optim::SolveStatus::Optimal) return result;
  std::vector<Index> keep;
  for (Index j = 0; j < n; ++j) {
    double mx = 0;
    for (Index i = 0; i < k; ++i) mx = std::max(mx, r.x[i * n + j]);
    if (mx > 1e-14) keep.push_back(j);
  }
  Vector<Scalar> outs(Index(keep.size()));
  Matrix<Scalar> probs(k, Index(keep.size()));
  for (std::size_t t = 0; t < keep.size(); ++t) {
    outs[Index(t)] = outputs[keep[t]];
    for (Index i = 0; i < k; ++i) probs(i, Index(t)) = Scalar(std::max(r.x[i * n + keep[t]], 0.0));
  }
  for (Index i = 0; i < k; ++i) probs.row(i) /= probs.row(i).sum();
  result.mechanism = FiniteMechanism<Scalar>(prior.values(), std::move(outs), std::move(probs));
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  for (Index i = 0; i < k; ++i)
    result.max_bias =
        std::max(result.max_bias, Scalar(std::abs(result.mechanism.conditional_mean(i) - prior.value(i))));
  return result;
}

/// A randomizer for real-valued labels built on a finite mechanism over support points
/// \f$y_1 < \dots < y_k\f$ (e.g. an optimal unbiased one): a label y in \f$[y_1, y_k]\f$ is first
/// rounded to a support point by URR (exact Bernoulli), then the mechanism's row of that point
/// is sampled (exact alias table). Unbiasedness is preserved: \f$E[M(URR(y))] = y\f$ when the
/// mechanism is unbiased. Privacy: the output distribution for any label is a mixture of the
/// mechanism's rows, and every row is within \f$e^\varepsilon\f$ of every other entrywise, so the
/// composite is eps-DP whenever the mechanism is.
///
/// \code{.cpp}
/// labeldp::UnbiasedRandomizer<> randomizer(labeldp::optimal_unbiased_continuous(prior, 1.0).mechanism);
/// labeldp::SecureRandom gen;
/// double noisy = randomizer.sample(3.25, gen);
/// \endcode
template <typename Scalar = double>
class UnbiasedRandomizer {
 public:
  /// \param mechanism the finite mechanism (its inputs are the rounding points).
  explicit UnbiasedRandomizer(FiniteMechanism<Scalar> mechanism)
      : m_mechanism(std::move(mechanism)), m_rounding(m_mechanism.inputs()) {}

  /// The underlying finite mechanism.
  const FiniteMechanism<Scalar>& mechanism() const { return m_mechanism; }

  /// The exact output distribution for label y (over mechanism().outputs()).
  /// \throws std::invalid_argument when y is not finite or outside \f$[y_1, y_k]\f$.
  Vector<Scalar> output_probabilities(Scalar y) const {
    const Vector<Scalar> r = m_rounding.probabilities(y);
    return (r.transpose() * m_mechanism.probabilities()).transpose();
  }

  /// A noisy label for the real label y (URR to the support, then the mechanism), exactly.
  /// \throws std::invalid_argument when y is not finite or outside \f$[y_1, y_k]\f$.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    const Index i = m_rounding.sample_index(y, gen);
    return m_mechanism.outputs()[m_mechanism.sample_index(i, gen)];
  }

 private:
  FiniteMechanism<Scalar> m_mechanism;
  UnbiasedRandomizedRounding<Scalar> m_rounding;
};

/// Result of label_randomizer(): the noisy labels and what produced them.
template <typename Scalar = double>
struct LabelRandomizerResult {
  std::vector<Scalar> noisy_labels;   ///< one per input label, in input order
  FinitePrior<Scalar> private_prior;  ///< \f$P'\f$, the eps1-DP prior estimate (Alg. 4)
  UnbiasedResult<Scalar> randomizer;  ///< the optimal unbiased randomizer for \f$P'\f$ (eps2)
};

/// LabelRandomizer (Alg. 3): spends eps1 on a private prior (the library's Alg. 4,
/// private_histogram_of_labels(): exact two-sided geometric noise of scale 2/eps1 on the counts,
/// clipped and normalized), builds the optimal unbiased randomizer for that prior with eps2 on
/// the `grid_size`-point FeasibleOutputSet grid, and randomizes every label with it. The whole
/// is (eps1 + eps2)-DP (basic composition; the randomizer reads the labels only through the
/// private prior and its own eps2-DP rows).
///
/// The printed Alg. 3 builds the grid as FeasibleOutputSet with eps1; Proposition 7 needs the
/// mechanism's own budget (the eps2 grid is narrower, hence finer at equal n, and still
/// feasible), so eps2 is used.
///
/// \param labels the labels, each a value of `support`.
/// \param support public label set Y, strictly increasing.
/// \param eps1 budget of the prior estimate, finite and > 0.
/// \param eps2 budget of the randomizer, finite and > 0.
/// \param grid_size n >= 2.
/// \param gen random bit generator (SecureRandom for real releases).
/// \throws std::invalid_argument on bad parameters or a label outside the support; a solve that
///         does not end optimal (never expected: Prop. 7) is reported in the message.
///
/// \code{.cpp}
/// labeldp::SecureRandom gen;
/// auto out = labeldp::label_randomizer(labels, support, 0.05, 0.95, 416, gen);
/// \endcode
template <typename Scalar = double, std::uniform_random_bit_generator G>
LabelRandomizerResult<Scalar> label_randomizer(const std::vector<Scalar>& labels, const Vector<Scalar>& support,
                                               double eps1, double eps2, Index grid_size, G& gen) {
  validate_epsilon(eps1, "eps1");
  validate_epsilon(eps2, "eps2");
  if (grid_size < 2) detail::fail_parameter("grid_size", "must be at least 2", double(grid_size));
  PrivateHistogram<Scalar> hist =
      private_histogram_of_labels(support, std::span<const Scalar>(labels.data(), labels.size()), eps1, gen);
  UnbiasedResult<Scalar> r = optimal_unbiased_grid(hist.prior, eps2, grid_size);
  if (!r.optimal()) throw std::invalid_argument("the unbiased randomizer LP ended " + optim::to_string(r.status));
  LabelRandomizerResult<Scalar> out{{}, hist.prior, r};
  out.noisy_labels.reserve(labels.size());
  for (Scalar y : labels) out.noisy_labels.push_back(r.mechanism.sample(y, gen));
  return out;
}

}  // namespace labeldp
