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
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/lp_columns.hpp"
#include "labeldp/mechanisms/detail/staircase_barrier.hpp"
#include "labeldp/optim/column_generation.hpp"
#include "labeldp/optim/simplex.hpp"

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

namespace detail {

/// The staircase pricing oracle of LP (2) of Ghazi et al. (2023) in the well-conditioned master
/// form used by optimal_mechanism_lp().
///
/// A staircase column (T, o) of LP (2) has entries \f$1 + r\,\chi_T(y)\f$, \f$r = e^\varepsilon - 1\f$
/// (the extreme rays of the eps-DP cone \f$\{v \ge 0 : v_y \le e^\varepsilon v_{y'}\}\f$,
/// Kairouz-Oh-Viswanath 2016), and cost \f$\sum_y (1 + r\chi_T(y))\, w_{y,o}\f$ with
/// \f$w_{y,o} = p_y \ell(o, y)\f$. At small eps all these columns are within r of the all-ones
/// vector, so every basis of the k rows \f$\sum_c x_c a_c = 1\f$ is ill-conditioned (condition
/// ~ k / r; this is what made the master fail at eps = 0.05). The master therefore carries the
/// total mass \f$S = \sum_c x_c\f$ as a variable: row k is \f$\sum_c x_c - S = 0\f$, and label row
/// y, the original row minus row k and scaled by \f$\gamma / r\f$ with \f$\gamma = \max(1, r)\f$, is
/// \f$\gamma \sum_c x_c \chi_{T_c}(y) + (\gamma / r) S = \gamma / r\f$. A column is then \f$\gamma\f$
/// on T, 0 elsewhere and 1 in the mass row: 0/1 patterns up to one scale, whose bases are as
/// well conditioned as the label sets they encode, at any eps.
///
/// Master column 0 is S; the oracle prices the staircase columns. With master duals
/// \f$(\rho, \sigma)\f$ the reduced cost of (T, o) is \f$W_o - \sigma + \sum_{y \in T} (r w_{y,o} -
/// \gamma \rho_y)\f$, \f$W_o = \sum_y w_{y,o}\f$, minimized over T by taking the labels with a
/// negative term: O(k) per output, exact over all \f$2^k |O|\f$ columns. The original LP's duals
/// are \f$\pi = (\gamma / r) \rho\f$.
class StaircaseOracle {
 public:
  /// \param weighted_loss k x |O| matrix \f$w_{y,o} = p_y \ell(o, y)\f$.
  /// \param eps privacy parameter (> 0).
  StaircaseOracle(Eigen::MatrixXd weighted_loss, double eps)
      : m_loss(std::move(weighted_loss)), m_r(std::expm1(eps)), m_gamma(std::max(1.0, m_r)) {
    const Eigen::VectorXd total = m_loss.colwise().sum().transpose();
    m_cost_scale = total.size() && total.minCoeff() > 0   ? total.minCoeff()
                   : total.size() && total.maxCoeff() > 0 ? total.maxCoeff()
                                                          : 1.0;
    m_total = total / m_cost_scale;
    m_scaled = (m_r / m_cost_scale) * m_loss;
  }

  /// Number of labels k.
  Index num_labels() const { return m_loss.rows(); }
  /// Number of outputs |O|.
  Index num_outputs() const { return m_loss.cols(); }
  /// Master rows: k label rows and the mass row.
  Index num_rows() const { return num_labels() + 1; }
  /// \f$r = e^\varepsilon - 1\f$.
  double r() const { return m_r; }
  /// \f$\gamma = \max(1, r)\f$, the entry of a staircase column in the label rows of T.
  double gamma() const { return m_gamma; }
  /// The master's cost unit: the least constant mechanism's loss \f$\min_o W_o\f$ (an upper
  /// bound on the optimum), so that master objectives and tolerances are relative.
  double cost_scale() const { return m_cost_scale; }
  /// \f$\gamma / r\f$: the mass variable's entry in every label row, and every label row's
  /// right-hand side.
  double mass_coefficient() const { return m_gamma / m_r; }

  /// The master column of pattern T (`in_t(y)` true for y in T) at output j, and its cost.
  template <typename Mask>
  void column(Index j, const Mask& in_t, Eigen::Ref<Eigen::VectorXd> a, double& cost) const {
    cost = m_total[j];
    for (Index y = 0; y < num_labels(); ++y) {
      const bool in = in_t(y);
      a[y] = in ? 1.0 : 0.0;
      if (in) cost += m_scaled(y, j);
    }
    cost /= m_gamma;
    a[num_labels()] = 1.0 / m_gamma;
  }

  /// The original LP's row duals \f$\pi = (\gamma / r) \rho\f$ from master duals \f$(\rho, \sigma)\f$.
  Eigen::VectorXd label_duals(const Eigen::VectorXd& y) const {
    return (m_cost_scale * mass_coefficient()) * y.head(num_labels());
  }
  /// Master duals \f$(\rho, \sigma)\f$ of the original LP's duals \f$\pi\f$ (inverse of label_duals(),
  /// with \f$\sigma\f$ making the mass variable's reduced cost 0).
  Eigen::VectorXd master_duals(const Eigen::VectorXd& pi) const {
    Eigen::VectorXd y(num_rows());
    y.head(num_labels()) = pi / (m_cost_scale * mass_coefficient());
    y[num_labels()] = pi.sum() / m_cost_scale;
    return y;
  }

  /// Exact pricing at master duals y = \f$(\rho, \sigma)\f$: for every output, the reduced cost
  /// of its best pattern (O(k |O|) in total).
  Eigen::VectorXd reduced_costs(const Eigen::VectorXd& y) const {
    const Index k = num_labels();
    const Eigen::VectorXd g = m_gamma * y.head(k);
    return (m_total.array() - y[k] + ((m_scaled.colwise() - g).cwiseMin(0.0)).colwise().sum().transpose().array()) /
           m_gamma;
  }

  /// The pricing oracle (optim::PricingOracle): the best column of every output whose reduced
  /// cost at y is negative, and as `min_reduced_cost` the minimum over all staircase columns
  /// plus the mass variable's reduced cost \f$\sigma - (\gamma / r) \sum_y \rho_y\f$ when that is
  /// negative. The engine's Lagrangian bound \f$b^T y + \min(0, \mu)\f$ with \f$\kappa = 1\f$ is then
  /// valid, because every feasible point has \f$\sum_c x_c = S \le 1\f$ (each original column
  /// has entries >= 1 in rows summing to 1).
  optim::PricedColumns operator()(const Eigen::VectorXd& y) {
    const Index k = num_labels(), n = num_outputs();
    const Eigen::VectorXd rc = reduced_costs(y);
    const double rc_mass = y[k] - mass_coefficient() * y.head(k).sum();
    m_last.clear();
    for (Index j = 0; j < n; ++j)
      if (rc[j] < 0) m_last.push_back(j);
    optim::PricedColumns out;
    out.A.resize(num_rows(), Index(m_last.size()));
    out.c.resize(Index(m_last.size()));
    const Eigen::VectorXd g = m_gamma * y.head(k);
    for (std::size_t t = 0; t < m_last.size(); ++t) {
      const Index j = m_last[t];
      column(
          j, [&](Index l) { return m_scaled(l, j) - g[l] < 0; }, out.A.col(Index(t)), out.c[Index(t)]);
    }
    const double mu = n > 0 ? rc.minCoeff() : 0.0;
    out.min_reduced_cost = rc_mass < 0 ? std::min(mu, 0.0) + rc_mass / m_gamma : mu;
    return out;
  }

  /// The k x |O| matrix \f$w_{y,o}\f$.
  const Eigen::MatrixXd& loss() const { return m_loss; }
  /// The k x |O| matrix \f$r\,w_{y,o}\f$.
  const Eigen::MatrixXd& scaled_loss() const { return m_scaled; }
  /// \f$W_o = \sum_y w_{y,o}\f$ per output.
  const Eigen::VectorXd& total_loss() const { return m_total; }

  /// Outputs of the columns returned by the last call of operator() (in order).
  const std::vector<Index>& last_outputs() const { return m_last; }

 private:
  Eigen::MatrixXd m_loss;    // w_{y,o}
  Eigen::MatrixXd m_scaled;  // r w_{y,o}
  Eigen::VectorXd m_total;   // W_o
  double m_r, m_gamma, m_cost_scale = 1;
  std::vector<Index> m_last;
};

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
  /// `column_sum_bound` must be valid but is not used (LP (2) fixes it). The time limit covers
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
  // Tiny eps (1 - e^-eps <= 1e-12): the best constant mechanism (every label to the output o*
  // of least W_o = sum_y p_y loss(o, y)), exactly eps-DP for every eps, is optimal up to a relative
  // 1 - e^-eps: every eps-DP M has M[y][o] >= q_o = min_y' M[y'][o] >= e^-eps M[y][o], so
  // sum_o q_o >= e^-eps and its loss is at least C + e^-eps min_o (W_o - C), C = sum_y p_y
  // min_o loss(o, y). The LP itself degenerates there (r = e^eps - 1 underflows the master's
  // scaling), so this is the answer, certified by that bound.
  // Every mechanism's loss is at least the non-private C = sum_y p_y min_o loss(o, y): a valid
  // bound at any eps, within ~e^-eps of the optimum at large eps, where the master's duals can no
  // longer certify (their bound cancels at ratios e^eps beyond the simplex's tolerances).
  const double nonprivate = weighted.rowwise().minCoeff().sum();
  if (-std::expm1(-eps) <= 1e-12) {
    const Eigen::VectorXd W = weighted.colwise().sum().transpose();
    Index best = 0;
    W.minCoeff(&best);
    const double C = nonprivate;
    OptimalLPResult<Scalar> result;
    result.mechanism = FiniteMechanism<Scalar>(prior.values(), Vector<Scalar>::Constant(1, sorted[std::size_t(best)]),
                                               Matrix<Scalar>::Constant(k, 1, Scalar(1)));
    result.expected_loss = result.mechanism.expected_loss(prior, loss);
    result.dual_bound = std::min(double(result.expected_loss), C + std::exp(-eps) * (W[best] - C));
    const double z = double(result.expected_loss);
    result.gap = z != 0 ? (z - result.dual_bound) / std::abs(z) : 0.0;
    result.status = result.gap <= std::max(cg.gap_tolerance, kCertifiedGap) ? optim::SolveStatus::Optimal
                                                                            : optim::SolveStatus::NumericalIssue;
    return result;
  }
  detail::StaircaseOracle oracle(std::move(weighted), eps);
  cg.column_sum_bound = oracle.gamma();
  cg.known_lower_bound = std::max(cg.known_lower_bound, nonprivate / oracle.cost_scale());

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // Initial master: the mass variable S (column 0) and the constant column (T empty) at every
  // output; S = 1 on the cheapest constant column is feasible.
  optim::LinearProgram lp;
  lp.A = Eigen::MatrixXd::Zero(k + 1, 1 + n);
  lp.c = Eigen::VectorXd::Zero(1 + n);
  lp.b = Eigen::VectorXd::Constant(k + 1, oracle.mass_coefficient());
  lp.b[k] = 0;
  lp.row_types.assign(std::size_t(k + 1), optim::RowType::Equal);
  lp.A.col(0).head(k).setConstant(oracle.mass_coefficient());
  lp.A(k, 0) = -1;
  std::vector<Index> col_output{-1};  // output of each master column (-1: the mass variable)
  for (Index j = 0; j < n; ++j) {
    oracle.column(
        j, [](Index) { return false; }, lp.A.col(1 + j), lp.c[1 + j]);
    col_output.push_back(j);
  }
  const auto append = [&](Index j, const auto& in_t) {
    const Index t = lp.A.cols();
    lp.A.conservativeResize(Eigen::NoChange, t + 1);
    lp.c.conservativeResize(t + 1);
    oracle.column(j, in_t, lp.A.col(t), lp.c[t]);
    col_output.push_back(j);
  };
  double barrier_bound = -std::numeric_limits<double>::infinity();
  Eigen::VectorXd barrier_duals;  // master-space duals (rho, sigma) of the barrier's bound
  bool seed_intervals = !options.interior_point;
  if (options.interior_point) {
    // Interior point on the compact form, then its columns as the crossover's candidates and
    // its duals as a certificate, re-evaluated here by exact pricing at e^eps.
    detail::StaircaseBarrierProblem bp;
    bp.cost = oracle.loss();
    bp.rows = detail::StaircaseRows::Normalization;
    bp.low = detail::staircase_low(eps);
    detail::StaircaseBarrierOptions bo;
    bo.time_limit = cg.time_limit;
    const detail::StaircaseBarrierResult br = detail::solve_staircase_barrier(bp, bo);
    // A barrier that did not converge (it can stall at large eps) leaves the master to the
    // interval seed below and column generation.
    seed_intervals = br.status != optim::SolveStatus::Optimal;
    if (br.duals.size() == k && br.duals.allFinite() && br.mechanism.allFinite() && br.top.allFinite()) {
      barrier_duals = oracle.master_duals(br.duals);
      const optim::PricedColumns priced = oracle(barrier_duals);
      barrier_bound = barrier_duals[k] + oracle.gamma() * std::min(0.0, priced.min_reduced_cost);
      const Eigen::VectorXd index = Eigen::VectorXd::LinSpaced(n, 0.0, double(n - 1));
      const auto candidates = detail::staircase_barrier_columns(br, index, bp.low);
      for (const auto& c : candidates) append(c.grid_index, [&](Index y) { return c.pattern[std::size_t(y)] != 0; });
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
    const Index base = lp.A.cols(), count = k * (k + 1) / 2;
    lp.A.conservativeResize(Eigen::NoChange, base + count);
    lp.c.conservativeResize(base + count);
    Index t = base;
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
            best_j, [&](Index y) { return y >= a && y <= b; }, lp.A.col(t), lp.c[t]);
        ++t;
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

  // Crossover: when the master over the barrier's columns meets the barrier's certified bound,
  // that is the certificate; otherwise column generation continues from this master (warm).
  optim::ColumnGenerationResult cgr;
  bool certified_by_barrier = false;
  const bool bound_is_floor = cg.known_lower_bound > barrier_bound;  // then no duals certify it
  barrier_bound = std::max(barrier_bound, cg.known_lower_bound);
  if (barrier_bound > -std::numeric_limits<double>::infinity()) {
    const optim::SimplexResult first = master.solve();
    if (first.status == optim::SolveStatus::Optimal &&
        first.objective - barrier_bound <= cg.gap_tolerance * std::abs(first.objective)) {
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
      cgr.gap = z != 0 ? (z - cgr.lower_bound) / std::abs(z) : 0.0;
      if (cgr.status != optim::SolveStatus::Optimal && z - cgr.lower_bound <= cg.gap_tolerance * std::abs(z))
        cgr.status = optim::SolveStatus::Optimal;
    }
  }
  if (certified_by_barrier) {
    const double z = cgr.master.objective;
    cgr.gap = z != 0 ? (z - cgr.lower_bound) / std::abs(z) : 0.0;
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
  result.dual_bound = oracle.cost_scale() * cgr.lower_bound;
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
  std::vector<Index> used;
  for (Index j = 0; j < n; ++j)
    if (M.col(j).maxCoeff() > 0) used.push_back(j);
  Vector<Scalar> out(Index(used.size()));
  Eigen::MatrixXd kept(k, Index(used.size()));
  for (std::size_t u = 0; u < used.size(); ++u) {
    out[Index(u)] = sorted[std::size_t(used[u])];
    kept.col(Index(u)) = M.col(used[u]);
  }
  // The columns are eps-DP in exact arithmetic; roundoff (the row normalization, the simplex's
  // tolerances) can push a ratio past e^eps by a few ulps: the stored matrix is made eps-DP
  // exactly (the mass moved is roundoff).
  result.mechanism = detail::mechanism_from_lp_columns(prior.values(), std::move(out), kept, eps);
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  return result;
}

}  // namespace labeldp
