/// \file
/// The compact staircase LPs solved by the interior point of staircase_barrier.hpp: the optimal
/// unbiased randomizer (Badanidiyuru et al. 2023, Alg. 1, on the grid of Alg. 2), its
/// bias-bounded variant, and the optimal mechanism LP (2) of Ghazi et al. 2023, in compact form
/// (one privacy cone per output instead of pairwise rows); the problem, options and result
/// types, the certified Lagrangian bound from any duals, and the interior point written as
/// staircase columns (crossover candidates, exact decomposition).
///
/// The LP. Labels \f$y = 1..k\f$, outputs \f$o = 1..n\f$ with values \f$x_o\f$, costs
/// \f$c_{y,o}\f$ (any loss, already weighted by the prior). The mechanism's column at output o
/// lies in the eps-DP cone \f$\{v \ge 0: v_y \le e^\varepsilon v_{y'}\}\f$, which is
/// \f$\{v = \ell T 1 + u: T \ge 0, 0 \le u \le (1 - \ell) T\}\f$ with \f$\ell = e^{-\varepsilon}\f$
/// (T is the column's largest entry, \f$\ell T\f$ its smallest allowed one). So the variables are
/// \f$T_o \ge 0\f$ and \f$u_{y,o}\f$ with \f$0 \le u_{y,o} \le (1 - \ell) T_o\f$, and
/// \f$v_{y,o} = \ell T_o + u_{y,o}\f$; the coupling rows are
/// - normalization: \f$\sum_o v_{y,o} = 1\f$ (k rows; always);
/// - unbiasedness: \f$\sum_o x_o v_{y,o} = \text{target}_y\f$ (k rows), or with a bias bound B
///   \f$|\sum_o x_o v_{y,o} - \text{target}_y| \le B\f$, written as one row per label with a
///   slack \f$z_y \in [0, 2B]\f$: \f$\sum_o x_o v_{y,o} + z_y = \text{target}_y + B\f$;
///
/// and the objective is \f$\sum_{y,o} c_{y,o} v_{y,o}\f$. Parametrizing the cone by its top T
/// (rather than its bottom t and \f$W = e^\varepsilon - 1\f$) keeps every coefficient in
/// [0, 1] for every eps (at eps = 12, W is 1.6e5).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"
#include "labeldp/optim/simplex_types.hpp"

namespace labeldp::detail {

/// Which coupling rows the staircase LP has besides normalization.
enum class StaircaseRows {
  /// Only \f$\sum_o v_{y,o} = 1\f$: the optimal mechanism LP (2) of Ghazi et al. 2023.
  Normalization,
  /// Also \f$\sum_o x_o v_{y,o} = \text{target}_y\f$: Badanidiyuru et al. 2023, Alg. 1.
  Unbiased,
  /// Also \f$|\sum_o x_o v_{y,o} - \text{target}_y| \le B\f$ (B = max_bias > 0).
  BiasBounded
};

/// The data of a staircase LP (see the file comment). Units are the caller's; the solver
/// rescales internally.
struct StaircaseBarrierProblem {
  Eigen::MatrixXd cost;     ///< k x n: \f$c_{y,o}\f$ (prior-weighted loss), finite
  Eigen::VectorXd outputs;  ///< n output values \f$x_o\f$ (used by the unbiasedness rows only)
  Eigen::VectorXd targets;  ///< k targets of the unbiasedness rows (the labels); unused for Normalization
  StaircaseRows rows = StaircaseRows::Unbiased;  ///< row family
  double max_bias = 0;                           ///< B > 0 for StaircaseRows::BiasBounded
  /// Staircase low entry \f$\ell\f$: the cone is \f$v_y \le v_{y'} / \ell\f$. Use
  /// staircase_low(eps) (\f$e^{-\varepsilon}\f$ rounded up, as UnbiasedProblem::low), so that the
  /// LP is exactly the staircase master's.
  double low = 0;
  Index num_labels() const { return cost.rows(); }
  Index num_outputs() const { return cost.cols(); }
  bool has_bias_rows() const { return rows != StaircaseRows::Normalization; }
  /// Number of coupling rows (= length of the dual vector): k or 2k.
  Index num_rows() const { return has_bias_rows() ? 2 * num_labels() : num_labels(); }
};

/// \f$e^{-\varepsilon}\f$ rounded up (the staircase ratio is then never above \f$e^\varepsilon\f$).
inline double staircase_low(double eps) { return std::nextafter(std::exp(-eps), 1.0); }

/// Options of solve_staircase_barrier(). Every field has a documented default; check() (called
/// first by StaircaseBarrier::solve()) throws std::invalid_argument naming the first bad field.
///
/// \code{.cpp}
/// labeldp::detail::StaircaseBarrierOptions bo;
/// bo.time_limit = 1.0;   // seconds; +infinity (the default) = none
/// auto r = labeldp::detail::solve_staircase_barrier(problem, bo);
/// \endcode
struct StaircaseBarrierOptions {
  /// Default 1e-9 (relative, finite, > 0). Stop with optim::SolveStatus::Optimal when the
  /// relative primal and dual residuals and the relative duality gap are below it.
  double tolerance = 1e-9;
  /// Default 150 iterations (>= 0; optim::kUnlimited = no limit). Interior-point iterations
  /// before the solve ends with optim::SolveStatus::IterationLimit (0: the starting point).
  Index max_iterations = 150;
  /// Default 2 (>= 0; 0 = pure Mehrotra). Gondzio's extra centrality correctors per iteration.
  Index max_correctors = 2;
  /// Default 1 (in (0, 1]). Gondzio's correctors are tried only while the shorter of the two
  /// Mehrotra steps (primal, dual) is below this. At 1 a corrector is tried whenever it can be
  /// accepted (both steps 1: no corrector can lengthen them); lower values spend correctors
  /// only on short steps (kStaircaseUnbiasedCorrectorBelow).
  double corrector_below = 1;
  /// Default 1e-9 (relative, finite, in [0, 1); 0 = drop none). At the end, outputs whose top
  /// \f$T_o\f$ is below this times the largest are set to zero (their mass moved to the others
  /// while the rows are restored to roundoff): the interior point then uses only the outputs
  /// that matter.
  double drop_threshold = 1e-9;
  /// Default +infinity = no limit (seconds, >= 0). Wall-clock limit, checked before every
  /// iteration: when it has passed, the solve ends with optim::SolveStatus::TimeLimit and the
  /// best iterate (0: the starting point).
  double time_limit = std::numeric_limits<double>::infinity();

  /// Checks every field against the rule in its comment.
  /// \param path prefix of the field names in the message (for an enclosing struct); empty by
  ///        default.
  /// \throws std::invalid_argument naming the first bad field, the rule and the value, e.g.
  ///         "'tolerance' must be finite and positive, got 0".
  void check(std::string_view path = {}) const {
    const auto name = [&](const char* field) { return std::string(path) + field; };
    validate_finite_positive(name("tolerance"), tolerance);
    optim::validate_count_limit(name("max_iterations"), max_iterations);
    if (max_correctors < 0) fail_parameter(name("max_correctors"), "must be >= 0", double(max_correctors));
    if (!(corrector_below > 0 && corrector_below <= 1))
      fail_parameter(name("corrector_below"), "must be in (0, 1]", corrector_below);
    if (!std::isfinite(drop_threshold) || !(drop_threshold >= 0 && drop_threshold < 1))
      fail_parameter(name("drop_threshold"), "must be finite and in [0, 1)", drop_threshold);
    optim::validate_time_limit(name("time_limit"), time_limit);
  }
};

// How solve_staircase_barrier() ends (StaircaseBarrierResult::status), in the library's one
// status vocabulary:
// Optimal (residuals and gap below the tolerance), IterationLimit (max_iterations reached; the
// last iterate is returned), NumericalIssue (the iterates stopped progressing with the primal
// rows still violated: typically an infeasible LP -- outputs that do not bracket the targets --
// or a numerical breakdown), TimeLimit (StaircaseBarrierOptions::time_limit passed; the best
// iterate is returned).

/// Outcome of solve_staircase_barrier(), in the caller's units.
struct StaircaseBarrierResult {
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;
  Eigen::MatrixXd mechanism;    ///< k x n: \f$v_{y,o} = \ell T_o + u_{y,o}\f$ (rows sum to ~1)
  Eigen::VectorXd top;          ///< n: \f$T_o\f$, the cone's top of each output's column
  Eigen::VectorXd top_dual;     ///< n: multiplier of \f$T_o \ge 0\f$ (large: output unused)
  Eigen::VectorXd duals;        ///< num_rows(): \f$\pi\f$ (normalization) then \f$\sigma\f$ (bias rows)
  double primal_objective = 0;  ///< \f$\sum c v\f$ at the last iterate
  double dual_objective = 0;    ///< staircase_lagrangian_bound() at `duals`: a certified lower bound on the optimum
  double primal_residual = 0;   ///< relative max violation of the coupling rows
  double dual_residual = 0;     ///< relative max dual residual
  Index iterations = 0;
  Index correctors = 0;  ///< Gondzio corrector directions computed (accepted or not)
};

/// Upper bound on the total weight of staircase columns in a feasible mechanism: the empty
/// pattern's column is \f$\ell\f$ times the full one's, so WLOG every pattern holds a label and
/// every column's entries sum to at least \f$1 + (k - 1)\ell\f$, while all entries sum to k (the
/// normalization rows). So \f$\sum_j w_j \le k / (1 + (k - 1)\ell)\f$: at most k, where the
/// cruder \f$1/\ell\f$ is \f$e^\varepsilon\f$ (1.6e5 at eps = 12, which would multiply the
/// roundoff of the least reduced cost by as much).
inline double staircase_weight_bound(Index k, double low) { return double(k) / (1 + double(k - 1) * low); }

/// Certified lower bound on the staircase LP's optimum from any duals (\f$\pi, \sigma\f$) of its
/// coupling rows (weak duality, as in the staircase master's bound): every feasible mechanism
/// is a combination of staircase columns (pattern, output) with weights summing to at most
/// \f$\omega = k / (1 + (k - 1)\ell)\f$ (staircase_weight_bound()), so
/// \f$\text{opt} \ge 1^T\pi + \text{target}^T\sigma - B\|\sigma\|_1 + \omega \min(0, r^*)\f$ where
/// \f$r^* = \min_o \sum_y \min(a_y, \ell a_y)\f$, \f$a_y = c_{y,o} - \pi_y - \sigma_y x_o\f$, is the
/// least reduced cost of any staircase column. O(n k). `min_reduced_cost` (optional) receives r*.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline double staircase_lagrangian_bound(const StaircaseBarrierProblem& P, const Eigen::VectorXd& duals,
                                         double* min_reduced_cost = nullptr) {
  const Index k = P.num_labels(), n = P.num_outputs();
  const Eigen::VectorXd pi = duals.head(k);
  Eigen::VectorXd sigma = Eigen::VectorXd::Zero(k);
  if (P.has_bias_rows()) sigma = duals.segment(k, k);
  double best = std::numeric_limits<double>::infinity();
  for (Index o = 0; o < n; ++o) {
    double rc = 0;
    const double x = P.outputs.size() ? P.outputs[o] : 0.0;
    for (Index y = 0; y < k; ++y) {
      const double a = P.cost(y, o) - pi[y] - sigma[y] * x;
      rc += a < 0 ? a : P.low * a;
    }
    best = std::min(best, rc);
  }
  if (min_reduced_cost) *min_reduced_cost = best;
  double value = pi.sum();
  if (P.has_bias_rows()) value += P.targets.dot(sigma);
  if (P.rows == StaircaseRows::BiasBounded) value -= P.max_bias * sigma.cwiseAbs().sum();
  return value + std::min(0.0, best) * staircase_weight_bound(k, P.low);
}

/// Candidate staircase columns for an exact (simplex) crossover from an interior point: for
/// every output whose top \f$T_o\f$ is at least `relative_threshold` times the largest, the
/// nested chain of level sets of its column. With \f$r_y = (v_{y,o}/T_o - \ell)/(1 - \ell)\f$
/// (0 at the cone's bottom, 1 at its top), the labels sorted by decreasing \f$r_y\f$ and grouped
/// into clusters (consecutive ratios closer than `cluster_gap`), the column is a non-negative
/// combination of the staircase vectors of the top-j sets at every cluster boundary, of the
/// empty pattern (when the top cluster is below 1) and of the full pattern (when the bottom
/// cluster is above 0). `outputs` are the values stored in the columns (e.g. scaled outputs);
/// grid_index is the output's index.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline std::vector<StaircaseColumn> staircase_barrier_columns(const StaircaseBarrierResult& r,
                                                              const Eigen::VectorXd& outputs, double low,
                                                              double relative_threshold = 1e-6,
                                                              double cluster_gap = 1e-4) {
  std::vector<StaircaseColumn> cols;
  const Index k = r.mechanism.rows(), n = r.mechanism.cols();
  if (n == 0 || k == 0) return cols;
  const double top = r.top.maxCoeff();
  std::vector<Index> order(static_cast<std::size_t>(k));
  std::vector<double> ratio(static_cast<std::size_t>(k));
  for (Index o = 0; o < n; ++o) {
    if (!(r.top[o] > relative_threshold * top)) continue;
    for (Index y = 0; y < k; ++y)
      ratio[std::size_t(y)] = std::clamp((r.mechanism(y, o) / r.top[o] - low) / (1 - low), 0.0, 1.0);
    std::iota(order.begin(), order.end(), Index(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return ratio[std::size_t(a)] > ratio[std::size_t(b)]; });
    auto add = [&](Index j) {  // the top-j set
      StaircaseColumn c;
      c.pattern.assign(std::size_t(k), 0);
      for (Index t = 0; t < j; ++t) c.pattern[std::size_t(order[std::size_t(t)])] = 1;
      c.output = outputs[o];
      c.grid_index = o;
      cols.push_back(std::move(c));
    };
    if (ratio[std::size_t(order[0])] < 1 - cluster_gap) add(0);
    for (Index j = 1; j < k; ++j)
      if (ratio[std::size_t(order[std::size_t(j - 1)])] - ratio[std::size_t(order[std::size_t(j)])] > cluster_gap)
        add(j);
    if (ratio[std::size_t(order[std::size_t(k - 1)])] > cluster_gap) add(k);
  }
  return cols;
}

/// The interior point's mechanism written exactly as a non-negative combination of staircase
/// columns: for every output with \f$T_o > \f$ `relative_threshold` times the largest, with the
/// labels sorted by decreasing ratio \f$r_y = (v_{y,o}/T_o - \ell)/(1 - \ell)\f$ (clamped to
/// [0, 1]), \f$v_{\cdot,o} = \sum_{j=0}^{k} w_j s(\text{top}_j)\f$ with \f$w_0 = T_o(1 - r_{(1)})\f$,
/// \f$w_j = T_o(r_{(j)} - r_{(j+1)})\f$ (\f$r_{(k+1)} = 0\f$); only columns of positive weight are
/// returned. Every merged column lies in the cone exactly, so the mechanism is eps-DP whatever
/// the interior point's accuracy; its rows hold to the interior point's residual.
/// \return the columns (output = `outputs[o]`, grid_index = o) and their weights.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline std::pair<std::vector<StaircaseColumn>, Eigen::VectorXd> staircase_decomposition(const StaircaseBarrierResult& r,
                                                                                        const Eigen::VectorXd& outputs,
                                                                                        double low,
                                                                                        double relative_threshold = 0) {
  std::vector<StaircaseColumn> cols;
  std::vector<double> weights;
  const Index k = r.mechanism.rows(), n = r.mechanism.cols();
  if (n == 0 || k == 0) return {cols, Eigen::VectorXd()};
  const double top = r.top.maxCoeff();
  std::vector<Index> order(static_cast<std::size_t>(k));
  std::vector<double> ratio(static_cast<std::size_t>(k));
  for (Index o = 0; o < n; ++o) {
    const double T = r.top[o];
    if (!(T > relative_threshold * top) || !(T > 0)) continue;
    for (Index y = 0; y < k; ++y)
      ratio[std::size_t(y)] = std::clamp((r.mechanism(y, o) / T - low) / (1 - low), 0.0, 1.0);
    std::iota(order.begin(), order.end(), Index(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return ratio[std::size_t(a)] > ratio[std::size_t(b)]; });
    StaircaseColumn c;
    c.pattern.assign(std::size_t(k), 0);
    c.output = outputs[o];
    c.grid_index = o;
    for (Index j = 0; j <= k; ++j) {
      if (j > 0) c.pattern[std::size_t(order[std::size_t(j - 1)])] = 1;
      const double upper = j == 0 ? 1.0 : ratio[std::size_t(order[std::size_t(j - 1)])];
      const double lower = j == k ? 0.0 : ratio[std::size_t(order[std::size_t(j)])];
      const double w = T * (upper - lower);
      if (w > 0) {
        cols.push_back(c);
        weights.push_back(w);
      }
    }
  }
  return {cols, Eigen::Map<const Eigen::VectorXd>(weights.data(), Index(weights.size()))};
}

}  // namespace labeldp::detail
