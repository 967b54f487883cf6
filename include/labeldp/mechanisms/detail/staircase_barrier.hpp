/// \file
/// A primal-dual interior-point method for the staircase LPs on a finite output set: the
/// optimal unbiased randomizer (Badanidiyuru et al. 2023, Alg. 1, on the grid of Alg. 2), its
/// bias-bounded variant, and the optimal mechanism LP (2) of Ghazi et al. 2023, all in the
/// compact form (one privacy cone per output instead of pairwise rows).
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
///
/// Linear algebra. Mehrotra's predictor-corrector on the inequality form: the barrier Hessian
/// of output o's block \f$(T_o, u_{\cdot,o})\f$ is an arrow matrix (diagonal plus one dense row
/// and column), inverted in O(k) (block elimination of \f$T_o\f$). The normal matrix of the m
/// coupling rows (m = k, or 2k with unbiasedness rows) is then
/// \f$S = \sum_o (e_o e_o^T) \otimes (\mathrm{diag}(1/D_o) + f_o f_o^T / \gamma_o)\f$ with
/// \f$e_o = (1, x_o)\f$: a part that is diagonal per label (2 x 2 blocks) plus
/// \f$F F^T\f$ with one column per output. It is factorized either densely (one rank-n update of
/// order m at BLAS-3 speed, then a Cholesky factorization of order m) or, when n < m, by the
/// Woodbury identity through a Cholesky factorization of order n, with iterative refinement
/// against S itself (and the dense path as fallback when refinement does not converge).
/// Work per iteration: O(n k) for the blocks plus \f$O(\min(m^2 n + m^3, m n^2 + n^3))\f$.
///
/// Scaling. Costs are divided by their largest magnitude and the output row by the largest
/// |output| or |target| inside; results are reported in the caller's units.
///
/// What it gives. A near-optimal interior point (primal \f$v\f$, duals \f$(\pi, \sigma)\f$ of the
/// coupling rows): staircase_barrier_columns() turns it into candidate staircase columns for an
/// exact simplex crossover, and staircase_lagrangian_bound() turns any duals into a certified
/// lower bound on the LP's optimum.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"

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

/// Options of solve_staircase_barrier().
struct StaircaseBarrierOptions {
  /// Stop when the relative primal and dual residuals and the relative duality gap are below it.
  double tolerance = 1e-9;
  Index max_iterations = 150;  ///< interior-point iterations before giving up
  Index max_correctors = 2;    ///< Gondzio's extra centrality correctors per iteration (0 = pure Mehrotra)
  /// At the end, outputs whose top \f$T_o\f$ is below this times the largest are set to zero
  /// (their mass moved to the others while the rows are restored to roundoff): the interior
  /// point then uses only the outputs that matter.
  double drop_threshold = 1e-9;
  /// Wall-clock limit in seconds (>= 0; infinity = none), checked before every iteration: when
  /// it has passed, the solve ends with StaircaseBarrierStatus::TimeLimit and the best iterate.
  double time_limit = std::numeric_limits<double>::infinity();
};

/// How solve_staircase_barrier() ended.
enum class StaircaseBarrierStatus {
  Converged,       ///< residuals and gap below the tolerance
  IterationLimit,  ///< max_iterations reached (the last iterate is returned)
  /// The iterates stopped progressing with the primal rows still violated: typically an
  /// infeasible LP (outputs that do not bracket the targets) or a numerical breakdown.
  Stalled,
  TimeLimit  ///< StaircaseBarrierOptions::time_limit passed (the best iterate is returned)
};

/// Outcome of solve_staircase_barrier(), in the caller's units.
struct StaircaseBarrierResult {
  StaircaseBarrierStatus status = StaircaseBarrierStatus::Stalled;
  Eigen::MatrixXd mechanism;    ///< k x n: \f$v_{y,o} = \ell T_o + u_{y,o}\f$ (rows sum to ~1)
  Eigen::VectorXd top;          ///< n: \f$T_o\f$, the cone's top of each output's column
  Eigen::VectorXd top_dual;     ///< n: multiplier of \f$T_o \ge 0\f$ (large: output unused)
  Eigen::VectorXd duals;        ///< num_rows(): \f$\pi\f$ (normalization) then \f$\sigma\f$ (bias rows)
  double primal_objective = 0;  ///< \f$\sum c v\f$ at the last iterate
  double dual_objective = 0;    ///< staircase_lagrangian_bound() at `duals`: a certified lower bound on the optimum
  double primal_residual = 0;   ///< relative max violation of the coupling rows
  double dual_residual = 0;     ///< relative max dual residual
  Index iterations = 0;
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

/// The interior-point solver (see the file comment). Construct, then solve().
class StaircaseBarrier {
 public:
  /// \param P the problem; cost k x n with k, n >= 1; outputs n values and targets k values
  ///        when P.rows is not Normalization; 0 < P.low <= 1; max_bias > 0 for BiasBounded.
  explicit StaircaseBarrier(const StaircaseBarrierProblem& P) {
    m_k = P.num_labels();
    m_n = P.num_outputs();
    m_bias = P.has_bias_rows();
    m_bounded = P.rows == StaircaseRows::BiasBounded;
    m_m = m_bias ? 2 * m_k : m_k;
    m_low = P.low;
    m_w = 1 - P.low;
    m_cost_scale = std::max(P.cost.cwiseAbs().maxCoeff(), 1e-300);
    m_c = P.cost / m_cost_scale;
    m_cT = m_low * m_c.colwise().sum().transpose();
    m_x = Eigen::VectorXd::Zero(m_n);
    m_target = Eigen::VectorXd::Zero(m_k);
    m_row_scale = 1;
    if (m_bias) {
      m_row_scale = std::max({P.outputs.cwiseAbs().maxCoeff(), P.targets.cwiseAbs().maxCoeff(), 1e-300});
      m_x = P.outputs / m_row_scale;
      m_target = P.targets / m_row_scale;
      m_B = m_bounded ? P.max_bias / m_row_scale : 0.0;
    }
  }

  /// Runs the interior-point method.
  StaircaseBarrierResult solve(const StaircaseBarrierOptions& options = {}) {
    const auto start = std::chrono::steady_clock::now();
    initialize();
    StaircaseBarrierResult out;
    Index stalled = 0;
    double best_rp = std::numeric_limits<double>::infinity(), best_mu = best_rp, best_gap = best_rp;
    Snapshot best;
    // The directions' storage is reused from one iteration to the next.
    Direction aff, d, g;
    for (Index it = 0;; ++it) {
      residuals();
      const double mu = complementarity() / double(num_inequalities());
      const double pobj = primal_objective();
      // The certified bound of the current duals (no dual residual needed) against the primal
      // objective: the stopping test is a certificate for the primal up to its row residual.
      const double bound = lagrangian_bound();
      const double scale = std::max({std::abs(pobj), std::abs(bound), 1e-300});
      const double gap = (pobj - bound) / scale;
      const double rp = m_rp.cwiseAbs().maxCoeff() / m_bnorm;
      out.iterations = it;
      if (rp <= 1e-8 && gap < best.gap) {
        best.gap = gap;
        best.rp = rp;
        best.T = m_T;
        best.U = m_U;
        best.G = m_G;
        best.z = m_z;
        best.lT = m_lT;
        best.pi = m_pi;
        best.sigma = m_sigma;
        best.iteration = it;
      }
      if (rp <= options.tolerance && gap <= options.tolerance) {
        out.status = StaircaseBarrierStatus::Converged;
        break;
      }
      if (it >= options.max_iterations) {
        out.status = StaircaseBarrierStatus::IterationLimit;
        break;
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.time_limit) {
        out.status = StaircaseBarrierStatus::TimeLimit;
        break;
      }
      // Progress: any of the row residual, the complementarity and the certified gap (absolute,
      // scaled units: costs are at most 1) down by 10% from its best. One merit summing them
      // does not do: the Lagrangian bound first falls far below zero while the residual and mu
      // shrink steadily (near-uniform k = 214, eps 12: 15 iterations "without progress").
      const double abs_gap = std::max(pobj - bound, 0.0);
      bool progress = false;
      for (auto [value, best_value] : {std::pair<double, double*>{rp, &best_rp}, {mu, &best_mu}, {abs_gap, &best_gap}})
        if (value < 0.9 * *best_value) {
          *best_value = value;
          progress = true;
        }
      if (progress) {
        stalled = 0;
      } else if (++stalled >= 15) {
        out.status = StaircaseBarrierStatus::Stalled;
        break;
      }
      if (!factorize()) {
        out.status = StaircaseBarrierStatus::Stalled;
        break;
      }
      m_factorized = true;
      // Predictor (affine scaling).
      complementarity_rhs(0.0, nullptr, aff);
      direction(aff);
      const double ap_aff = primal_step(aff), ad_aff = dual_step(aff);
      const double mu_aff = complementarity_after(aff, ap_aff, ad_aff) / double(num_inequalities());
      const double sigma = std::pow(std::clamp(mu_aff / mu, 0.0, 1.0), 3);
      // Corrector (Mehrotra).
      complementarity_rhs(sigma * mu, &aff, d);
      direction(d);
      double ap = primal_step(d), ad = dual_step(d);
      // Gondzio's centrality correctors: push the products s_i lambda_i that a longer step
      // would leave far outside [0.1, 10] x target back into that box.
      for (Index corr = 0; corr < options.max_correctors; ++corr) {
        const double ap_t = std::min(1.0, 1.5 * ap + 0.1), ad_t = std::min(1.0, 1.5 * ad + 0.1);
        if (!gondzio_rhs(d, ap_t, ad_t, sigma * mu, g)) break;
        direction(g);
        const double ap_g = primal_step(g), ad_g = dual_step(g);
        if (ap_g + ad_g < 1.01 * (ap + ad)) break;
        std::swap(d, g);
        ap = ap_g;
        ad = ad_g;
      }
      const double eta = std::max(0.9, 1 - 10 * mu);
      take_step(d, std::min(1.0, eta * ap), std::min(1.0, eta * ad));
    }
    // The best certified iterate if the last one is worse (roundoff near the end).
    if (best.T.size() && !(out.status == StaircaseBarrierStatus::Converged && best.iteration == out.iterations)) {
      if (out.status != StaircaseBarrierStatus::Converged && best.gap <= options.tolerance)
        out.status = StaircaseBarrierStatus::Converged;
      m_T = best.T;
      m_U = best.U;
      m_G = best.G;
      m_z = best.z;
      m_zb = (2 * m_B) - m_z.array();
      m_lT = best.lT;
      m_pi = best.pi;
      m_sigma = best.sigma;
    }
    if (m_factorized) finalize(options.drop_threshold);
    // Results in the caller's units.
    out.top = m_T;
    out.top_dual = m_lT * m_cost_scale;
    out.mechanism = m_U;
    out.mechanism.rowwise() += m_low * m_T.transpose();
    out.duals.resize(m_m);
    out.duals.head(m_k) = m_pi * m_cost_scale;
    if (m_bias) out.duals.tail(m_k) = m_sigma * (m_cost_scale / m_row_scale);
    residuals();
    out.primal_residual = m_rp.cwiseAbs().maxCoeff() / m_bnorm;
    out.dual_residual = dual_residual_norm();
    out.primal_objective = primal_objective() * m_cost_scale;
    out.dual_objective = lagrangian_bound() * m_cost_scale;
    return out;
  }

 private:
  /// A search direction (primal parts, duals, multipliers) and its complementarity right-hand
  /// sides \f$r_i\f$ (the target of \f$\lambda_i ds_i + s_i d\lambda_i\f$).
  struct Direction {
    Eigen::VectorXd rT, rz, rzb;  // complementarity rhs: T >= 0, z >= 0, 2B - z >= 0
    Eigen::MatrixXd rU, rG;       // u >= 0, (1 - low) T - u >= 0
    Eigen::VectorXd dT, dz, dy, dlT, dlz, dlzb;
    Eigen::MatrixXd dU, dlU, dlG;
    Eigen::MatrixXd dG;  ///< step of the slack G = (1 - low) T - u, set by direction()
  };

  /// A saved iterate (the best certified one).
  struct Snapshot {
    double gap = std::numeric_limits<double>::infinity(), rp = 0;
    Index iteration = -1;
    Eigen::VectorXd T, z, lT, pi, sigma;
    Eigen::MatrixXd U, G;
  };

  /// Sets the outputs with \f$T_o\f$ below `threshold` times the largest to exactly zero and
  /// moves their (tiny) mass to the others by project() in the metric with those outputs
  /// removed; if that is not possible (a slack would turn negative), only project().
  void finalize(double threshold) {
    std::vector<char> drop(std::size_t(m_n), 0);
    const double cut = threshold * m_T.maxCoeff();
    bool any = false;
    for (Index o = 0; o < m_n; ++o)
      if (m_T[o] < cut) drop[std::size_t(o)] = any = 1;
    if (any && factorize(&drop)) {
      const Eigen::VectorXd T = m_T;
      const Eigen::MatrixXd U = m_U, G = m_G;
      for (Index o = 0; o < m_n; ++o)
        if (drop[std::size_t(o)]) {
          m_T[o] = 0;
          m_U.col(o).setZero();
          m_G.col(o).setZero();
        }
      if (project(&drop)) {
        project(&drop);  // a second pass takes the first one's roundoff (ill-conditioned S)
        return;
      }
      m_T = T;
      m_U = U;
      m_G = G;
    }
    if (factorize() && project()) project();
  }

  /// Removes the coupling rows' residual to roundoff: the minimum-norm correction in the
  /// metric of the last barrier Hessian, \f$dx = H^{-1} A^T (A H^{-1} A^T)^{-1} r_p\f$ (the last
  /// factorization), taken only if it keeps every slack positive.
  bool project(const std::vector<char>* dropped = nullptr) {
    Eigen::VectorXd Ax;
    apply_A(m_T, m_U, m_z, Ax);
    Eigen::VectorXd rp(m_m);
    rp.head(m_k).setOnes();
    if (m_bias) rp.tail(m_k) = m_target.array() + m_B;
    rp -= Ax;
    const Eigen::VectorXd dy = solve_S(rp);
    Eigen::MatrixXd dU = dy.head(m_k).replicate(1, m_n);
    if (m_bias) dU.noalias() += dy.tail(m_k) * m_x.transpose();
    Eigen::VectorXd dT = m_low * dU.colwise().sum().transpose();
    arrow_solve(dT, dU);
    const Eigen::VectorXd T = m_T + dT;
    const Eigen::MatrixXd U = m_U + dU;
    const Eigen::MatrixXd G = m_G + (m_w * dT).transpose().replicate(m_k, 1) - dU;
    Eigen::VectorXd z = m_z;
    if (m_bounded) z += dy.tail(m_k).cwiseQuotient(m_Hz);
    for (Index o = 0; o < m_n; ++o) {
      if (dropped && (*dropped)[std::size_t(o)]) continue;
      if (!(T[o] > 0 && U.col(o).minCoeff() > 0 && G.col(o).minCoeff() > 0)) return false;
    }
    if (m_bounded && !(z.minCoeff() > 0 && (2 * m_B - z.array()).minCoeff() > 0)) return false;
    if (!T.allFinite() || !U.allFinite() || !G.allFinite()) return false;
    m_T = T;
    m_U = U;
    m_G = G;
    m_z = z;
    m_zb = (2 * m_B) - m_z.array();
    return true;
  }

  /// staircase_lagrangian_bound() at the current duals, in scaled units (uses m_Q from
  /// residuals()).
  double lagrangian_bound() const {
    double best = std::numeric_limits<double>::infinity();
    for (Index o = 0; o < m_n; ++o) {
      double rc = 0;
      for (Index y = 0; y < m_k; ++y) {
        const double a = m_c(y, o) - m_Q(y, o);
        rc += a < 0 ? a : m_low * a;
      }
      best = std::min(best, rc);
    }
    double value = m_pi.sum();
    if (m_bias) value += m_target.dot(m_sigma);
    if (m_bounded) value -= m_B * m_sigma.cwiseAbs().sum();
    return value + std::min(0.0, best) * staircase_weight_bound(m_k, m_low);
  }

  Index num_inequalities() const { return m_n + 2 * m_k * m_n + (m_bounded ? 2 * m_k : 0); }

  void initialize() {
    const Index k = m_k, n = m_n;
    // Primal: every output's column at the middle of its cone, normalization rows exact.
    const double tau = 1 / (double(n) * (m_low + 0.5 * m_w));
    m_T = Eigen::VectorXd::Constant(n, tau);
    m_U = Eigen::MatrixXd::Constant(k, n, 0.5 * m_w * tau);
    m_z = Eigen::VectorXd::Constant(k, m_B);
    // Duals: pi_y = the smallest cost of label y (reduced costs >= 0), sigma = 0; multipliers
    // from the reduced costs, at least a floor that balances the products with the primal.
    m_pi = m_c.rowwise().minCoeff();
    m_sigma = Eigen::VectorXd::Zero(k);
    const double floor = std::max(1e-2, m_c.cwiseAbs().mean());
    m_lU = Eigen::MatrixXd::Constant(k, n, floor);
    m_lG = Eigen::MatrixXd::Constant(k, n, floor);
    m_lT = Eigen::VectorXd::Constant(n, floor);
    m_lz = Eigen::VectorXd::Constant(k, floor);
    m_lzb = Eigen::VectorXd::Constant(k, floor);
    m_bnorm = 1;
    if (m_bias) m_bnorm = std::max(1.0, m_target.cwiseAbs().maxCoeff() + m_B);
    slacks();
  }

  void slacks() {
    m_G = (m_w * m_T).transpose().replicate(m_k, 1) - m_U;
    m_zb = (2 * m_B) - m_z.array();
  }

  /// \f$\sum_o (\ell T_o + u_{y,o})\f$ and \f$\sum_o x_o (\ell T_o + u_{y,o})\f$ into rows.
  void apply_A(const Eigen::VectorXd& T, const Eigen::MatrixXd& U, const Eigen::VectorXd& z,
               Eigen::VectorXd& rows) const {
    rows.resize(m_m);
    rows.head(m_k) = U.rowwise().sum();
    rows.head(m_k).array() += m_low * T.sum();
    if (m_bias) {
      rows.tail(m_k) = U * m_x;
      rows.tail(m_k).array() += m_low * T.dot(m_x);
      if (m_bounded) rows.tail(m_k) += z;
    }
  }

  void residuals() {
    Eigen::VectorXd Ax;
    apply_A(m_T, m_U, m_z, Ax);
    m_rp.resize(m_m);
    m_rp.head(m_k).setOnes();
    if (m_bias) m_rp.tail(m_k) = m_target.array() + m_B;
    m_rp -= Ax;
    // Dual residuals: c - A^T y - G^T lambda.
    // q(y, o) = pi_y + x_o sigma_y
    m_Q = m_pi.replicate(1, m_n);
    if (m_bias) m_Q.noalias() += m_sigma * m_x.transpose();
    m_rdU = m_c - m_Q - m_lU + m_lG;
    m_rdT = m_cT - m_low * m_Q.colwise().sum().transpose() - m_lT - m_w * m_lG.colwise().sum().transpose();
    if (m_bounded) m_rdz = -m_sigma - m_lz + m_lzb;
  }

  double dual_residual_norm() const {
    double r = std::max(m_rdU.cwiseAbs().maxCoeff(), m_rdT.cwiseAbs().maxCoeff());
    if (m_bounded) r = std::max(r, m_rdz.cwiseAbs().maxCoeff());
    return r;
  }

  double complementarity() const {
    double s = m_T.dot(m_lT) + m_U.cwiseProduct(m_lU).sum() + m_G.cwiseProduct(m_lG).sum();
    if (m_bounded) s += m_z.dot(m_lz) + m_zb.dot(m_lzb);
    return s;
  }

  double primal_objective() const { return m_cT.dot(m_T) + m_c.cwiseProduct(m_U).sum(); }

  double dual_objective() const {
    double d = m_pi.sum();
    if (m_bias) d += m_sigma.dot(m_target.array().matrix() + Eigen::VectorXd::Constant(m_k, m_B));
    if (m_bounded) d -= 2 * m_B * m_lzb.sum();
    return d;
  }

  /// Arrow-matrix data and the normal matrix of the coupling rows; false on breakdown.
  /// `dropped` (optional, n flags): outputs whose variables are held at zero (their blocks
  /// leave the normal matrix).
  bool factorize(const std::vector<char>* dropped = nullptr) {
    const Index k = m_k, n = m_n, m = m_m;
    // Per output (one pass over each column): dU = lU / U, dG = lG / G, Dinv = 1 / (dU + dG),
    // q = dG Dinv, gamma = dT + w^2 sum dG dU / D (written through q).
    m_Dinv.resize(k, n);
    m_q.resize(k, n);
    m_gamma.resize(n);
    for (Index o = 0; o < n; ++o) {
      auto Dinv = m_Dinv.col(o);
      auto q = m_q.col(o);
      q = m_lG.col(o).cwiseQuotient(m_G.col(o));                          // dG
      Dinv = (m_lU.col(o).cwiseQuotient(m_U.col(o)) + q).cwiseInverse();  // 1 / (dU + dG)
      q = q.cwiseProduct(Dinv);
      m_gamma[o] = m_lT[o] / m_T[o] + m_w * m_w * q.dot(m_lU.col(o).cwiseQuotient(m_U.col(o)));
    }
    if (dropped)
      for (Index o = 0; o < n; ++o)
        if ((*dropped)[std::size_t(o)]) {
          m_Dinv.col(o).setZero();
          m_q.col(o).setZero();
          m_gamma[o] = std::numeric_limits<double>::infinity();
        }
    if (m_bounded) m_Hz = m_lz.cwiseQuotient(m_z) + m_lzb.cwiseQuotient(m_zb);
    // F: column o = [f_o; x_o f_o] / sqrt(gamma_o), f_o = low + w q_o.
    m_F.resize(m, n);
    for (Index o = 0; o < n; ++o) {
      const double g = 1 / std::sqrt(m_gamma[o]);
      m_F.col(o).head(k) = (m_low + m_w * m_q.col(o).array()) * g;
      if (m_bias) m_F.col(o).tail(k) = m_x[o] * m_F.col(o).head(k);
    }
    m_E1 = m_Dinv.rowwise().sum();
    if (m_bias) {
      m_E2 = m_Dinv * m_x;
      m_E3 = m_Dinv * m_x.cwiseProduct(m_x);
      if (m_bounded) m_E3 += m_Hz.cwiseInverse();
    }
    if (!m_F.allFinite() || !m_E1.allFinite()) return false;
    m_dense_ready = false;
    m_woodbury = n < m && !m_woodbury_failed;
    if (m_woodbury) {
      // Block-diagonal part's inverse (per label a 2 x 2 block [E1 E2; E2 E3]).
      m_Dg11.resize(k);
      m_Dg12.resize(k);
      m_Dg22.resize(k);
      bool ok = true;
      for (Index y = 0; y < k; ++y) {
        if (m_bias) {
          const double det = m_E1[y] * m_E3[y] - m_E2[y] * m_E2[y];
          if (!(det > 1e-15 * m_E1[y] * m_E3[y])) ok = false;
          m_Dg11[y] = m_E3[y] / det;
          m_Dg12[y] = -m_E2[y] / det;
          m_Dg22[y] = m_E1[y] / det;
        } else {
          m_Dg11[y] = 1 / m_E1[y];
        }
      }
      if (ok) {
        apply_Dg_inverse(m_F, m_GF);
        Eigen::MatrixXd C = Eigen::MatrixXd::Identity(n, n);
        C.noalias() += m_F.transpose() * m_GF;
        m_small.compute(C);
        if (m_small.info() == Eigen::Success) return true;
      }
      m_woodbury = false;
    }
    return factorize_dense();
  }

  /// Dense factorization of the normal matrix: S = F F^T (one rank-n update) plus the
  /// per-label blocks, then Cholesky.
  bool factorize_dense() {
    const Index k = m_k, m = m_m;
    m_dense_ready = true;
    Eigen::MatrixXd S = Eigen::MatrixXd::Zero(m, m);
    S.selfadjointView<Eigen::Lower>().rankUpdate(m_F);
    S.diagonal().head(k) += m_E1;
    if (m_bias) {
      S.diagonal().tail(k) += m_E3;
      for (Index y = 0; y < k; ++y) S(k + y, y) += m_E2[y];
    }
    // A relative diagonal shift if roundoff broke positivity (the iterate is then near the
    // end; the refinement in solve_S() works against the unshifted S).
    for (double shift = 0;; shift = shift == 0 ? 1e-14 : shift * 100) {
      if (shift > 0) S.diagonal().array() += shift * S.diagonal().cwiseAbs().maxCoeff();
      m_dense.compute(S);
      if (m_dense.info() == Eigen::Success) return true;
      if (shift > 1e-6) return false;
    }
  }

  /// out = Dg^{-1} in (columnwise; Dg the per-label 2 x 2 block part of the normal matrix).
  void apply_Dg_inverse(const Eigen::MatrixXd& in, Eigen::MatrixXd& out) const {
    const Index k = m_k;
    out.resize(in.rows(), in.cols());
    if (!m_bias) {
      out = m_Dg11.asDiagonal() * in;
      return;
    }
    out.topRows(k) = m_Dg11.asDiagonal() * in.topRows(k) + m_Dg12.asDiagonal() * in.bottomRows(k);
    out.bottomRows(k) = m_Dg12.asDiagonal() * in.topRows(k) + m_Dg22.asDiagonal() * in.bottomRows(k);
  }

  /// S v exactly (block part plus F F^T).
  Eigen::VectorXd apply_S(const Eigen::VectorXd& v) const {
    const Index k = m_k;
    Eigen::VectorXd out = m_F * (m_F.transpose() * v);
    out.head(k) += m_E1.cwiseProduct(v.head(k));
    if (m_bias) {
      out.head(k) += m_E2.cwiseProduct(v.tail(k));
      out.tail(k) += m_E2.cwiseProduct(v.head(k)) + m_E3.cwiseProduct(v.tail(k));
    }
    return out;
  }

  /// Solves S x = r: Woodbury with iterative refinement against S itself; if that does not
  /// reach roundoff level (the per-label blocks are nearly singular near the optimum), the
  /// dense factorization is used from then on.
  Eigen::VectorXd solve_S(const Eigen::VectorXd& r) {
    const double rn = std::max(r.cwiseAbs().maxCoeff(), 1e-300);
    if (m_woodbury) {
      auto once = [&](const Eigen::VectorXd& b) {
        Eigen::MatrixXd Db;
        apply_Dg_inverse(b, Db);
        const Eigen::VectorXd t = m_small.solve(m_GF.transpose() * b);
        return Eigen::VectorXd(Db.col(0) - m_GF * t);
      };
      Eigen::VectorXd x = once(r);
      for (int pass = 0; pass < 3; ++pass) {
        const Eigen::VectorXd res = r - apply_S(x);
        const double e = res.cwiseAbs().maxCoeff();
        if (e <= 1e-12 * rn && x.allFinite()) return x;
        x += once(res);
      }
      if ((r - apply_S(x)).cwiseAbs().maxCoeff() <= 1e-10 * rn && x.allFinite()) return x;
      m_woodbury = false;
      m_woodbury_failed = true;
    }
    if (!m_dense_ready) factorize_dense();
    Eigen::VectorXd x = m_dense.solve(r);
    for (int pass = 0; pass < 2; ++pass) {
      const Eigen::VectorXd res = r - apply_S(x);
      if (res.cwiseAbs().maxCoeff() <= 1e-13 * rn) break;
      x += m_dense.solve(res);
    }
    return x;
  }

  /// Complementarity rhs: target - s lambda (- ds_aff dlambda_aff for Mehrotra's corrector).
  void complementarity_rhs(double target, const Direction* aff, Direction& d) const {
    d.rT = (target - m_T.array() * m_lT.array()).matrix();
    d.rU = (target - m_U.array() * m_lU.array()).matrix();
    d.rG = (target - m_G.array() * m_lG.array()).matrix();
    if (m_bounded) {
      d.rz = (target - m_z.array() * m_lz.array()).matrix();
      d.rzb = (target - m_zb.array() * m_lzb.array()).matrix();
    }
    if (aff) {
      d.rT -= aff->dT.cwiseProduct(aff->dlT);
      d.rU -= aff->dU.cwiseProduct(aff->dlU);
      const Eigen::MatrixXd& dG = aff->dG;
      d.rG -= dG.cwiseProduct(aff->dlG);
      if (m_bounded) {
        d.rz -= aff->dz.cwiseProduct(aff->dlz);
        d.rzb += aff->dz.cwiseProduct(aff->dlzb);  // d(zb) = -dz
      }
    }
  }

  Eigen::MatrixXd aff_dG(const Direction& d) const { return (m_w * d.dT).transpose().replicate(m_k, 1) - d.dU; }

  /// Gondzio's corrector rhs from direction d taken with trial steps; false if nothing to correct.
  bool gondzio_rhs(const Direction& d, double ap, double ad, double target, Direction& g) const {
    const double lo = 0.1 * target, hi = 10 * target;
    auto correction = [&](double v) { return v < lo ? lo - v : (v > hi ? std::max(hi - v, -hi) : 0.0); };
    g.rT = d.rT;
    g.rz = d.rz;
    g.rzb = d.rzb;
    g.rU = d.rU;
    g.rG = d.rG;
    bool any = false;
    auto fix = [&](const auto& s, const auto& ds, const auto& l, const auto& dl, auto& r) {
      for (Index j = 0; j < r.cols(); ++j)
        for (Index i = 0; i < r.rows(); ++i) {
          const double v = (s(i, j) + ap * ds(i, j)) * (l(i, j) + ad * dl(i, j));
          const double c = correction(v);
          if (c != 0) any = true;
          r(i, j) += c;
        }
    };
    fix(m_T, d.dT, m_lT, d.dlT, g.rT);
    fix(m_U, d.dU, m_lU, d.dlU, g.rU);
    fix(m_G, d.dG, m_lG, d.dlG, g.rG);
    if (m_bounded) {
      fix(m_z, d.dz, m_lz, d.dlz, g.rz);
      const Eigen::VectorXd mdz = -d.dz;
      fix(m_zb, mdz, m_lzb, d.dlzb, g.rzb);
    }
    return any;
  }

  /// Solves H [a; w] = [rho; r] for every output (arrow matrices), in place: rhoT -> dT, R -> dU.
  void arrow_solve(Eigen::VectorXd& rhoT, Eigen::MatrixXd& R) const {
    for (Index o = 0; o < m_n; ++o) {
      const double a = (rhoT[o] + m_w * m_q.col(o).dot(R.col(o))) / m_gamma[o];
      R.col(o) = R.col(o).cwiseProduct(m_Dinv.col(o)) + (m_w * a) * m_q.col(o);
      rhoT[o] = a;
    }
  }

  /// The Newton direction for the complementarity rhs in d (rT, rU, rG, rz, rzb).
  ///
  /// Written as passes over the outputs, each touching one column of every k x n array once
  /// (the whole-matrix expressions this replaced made a dozen k x n temporaries per call, which
  /// cost more than the factorization on k = 52, n = 416).
  void direction(Direction& d) {
    const Index k = m_k, n = m_n;
    // Pass 1, per output: g = r_d - G^T rho (rho_i = r_i / s_i), x0 = -H^{-1} g by the arrow
    // solve, kept in d.dT and d.dU, and A x0.
    d.dU.resize(k, n);
    d.dT.resize(n);
    Eigen::VectorXd Ax0 = Eigen::VectorXd::Zero(m_m);
    double sum_T = 0, sum_xT = 0;
    for (Index o = 0; o < n; ++o) {
      auto x = d.dU.col(o);
      x = d.rG.col(o).cwiseQuotient(m_G.col(o));  // rho_G
      const double sum_rho_G = x.sum();
      x = (d.rU.col(o).cwiseQuotient(m_U.col(o)) - x) - m_rdU.col(o);  // -g_U
      const double minus_gT = d.rT[o] / m_T[o] + m_w * sum_rho_G - m_rdT[o];
      const double a = (minus_gT + m_w * m_q.col(o).dot(x)) / m_gamma[o];
      x = x.cwiseProduct(m_Dinv.col(o)) + (m_w * a) * m_q.col(o);
      d.dT[o] = a;
      Ax0.head(k) += x;
      sum_T += a;
      if (m_bias) {
        Ax0.tail(k) += m_x[o] * x;
        sum_xT += m_x[o] * a;
      }
    }
    Ax0.head(k).array() += m_low * sum_T;
    Eigen::VectorXd x0z;
    if (m_bias) Ax0.tail(k).array() += m_low * sum_xT;
    if (m_bounded) {
      x0z = (d.rz.cwiseQuotient(m_z) - d.rzb.cwiseQuotient(m_zb) - m_rdz).cwiseQuotient(m_Hz);
      Ax0.tail(k) += x0z;
    }
    d.dy = solve_S(m_rp - Ax0);
    // Pass 2: dx = H^{-1} A^T dy + x0 (A^T dy at output o is pi_dy + x_o sigma_dy), and A dx.
    Eigen::VectorXd r(k), Adx = Eigen::VectorXd::Zero(m_m);
    sum_T = sum_xT = 0;
    for (Index o = 0; o < n; ++o) {
      r = d.dy.head(k);
      if (m_bias) r += m_x[o] * d.dy.tail(k);
      const double a = (m_low * r.sum() + m_w * m_q.col(o).dot(r)) / m_gamma[o];
      auto x = d.dU.col(o);
      x += r.cwiseProduct(m_Dinv.col(o)) + (m_w * a) * m_q.col(o);
      d.dT[o] += a;
      Adx.head(k) += x;
      sum_T += d.dT[o];
      if (m_bias) {
        Adx.tail(k) += m_x[o] * x;
        sum_xT += m_x[o] * d.dT[o];
      }
    }
    Adx.head(k).array() += m_low * sum_T;
    if (m_bias) Adx.tail(k).array() += m_low * sum_xT;
    if (m_bounded) {
      d.dz = d.dy.tail(k).cwiseQuotient(m_Hz) + x0z;
      Adx.tail(k) += d.dz;
    }
    auto lift = [&](const Eigen::VectorXd& dy, Eigen::VectorXd& dT, Eigen::MatrixXd& dU) {
      dU = dy.head(k).replicate(1, m_n);
      if (m_bias) dU.noalias() += dy.tail(k) * m_x.transpose();
      dT = m_low * dU.colwise().sum().transpose();
      arrow_solve(dT, dU);
    };
    // Iterative refinement of the primal rows A dx = r_p: near the optimum the barrier
    // Hessian spans 30 orders of magnitude and the eliminations above lose digits, so that a
    // full step can leave the rows violated by 1e-7 where they were met to 1e-13 (near-uniform
    // prior with zero-probability labels, eps 3). One correction dy' = S^{-1} (r_p - A dx),
    // dx' = H^{-1} A^T dy' restores them (the dual and complementarity parts are changed only
    // at the level of that error).
    // Only an error that matters is corrected: above 1% of the current row residual (a full
    // step then leaves at least that much) and above roundoff.
    const double wanted = std::max(1e-14 * m_bnorm, 1e-2 * m_rp.cwiseAbs().maxCoeff());
    for (int pass = 0; pass < 2; ++pass) {
      if (pass > 0) apply_A(d.dT, d.dU, m_bounded ? d.dz : Eigen::VectorXd::Zero(k), Adx);
      const Eigen::VectorXd err = m_rp - Adx;
      if (err.cwiseAbs().maxCoeff() <= wanted || !err.allFinite()) break;
      const Eigen::VectorXd dy2 = solve_S(err);
      Eigen::VectorXd dT2;
      Eigen::MatrixXd dU2;
      lift(dy2, dT2, dU2);
      d.dy += dy2;
      d.dT += dT2;
      d.dU += dU2;
      if (m_bounded) d.dz += dy2.tail(k).cwiseQuotient(m_Hz);
    }
    // Pass 3: dlambda_i = (r_i - lambda_i ds_i) / s_i, and the slack's step dG = (1 - low) dT - dU.
    d.dG.resize(k, n);
    d.dlU.resize(k, n);
    d.dlG.resize(k, n);
    for (Index o = 0; o < n; ++o) {
      d.dG.col(o) = Eigen::VectorXd::Constant(k, m_w * d.dT[o]) - d.dU.col(o);
      d.dlU.col(o) = (d.rU.col(o) - m_lU.col(o).cwiseProduct(d.dU.col(o))).cwiseQuotient(m_U.col(o));
      d.dlG.col(o) = (d.rG.col(o) - m_lG.col(o).cwiseProduct(d.dG.col(o))).cwiseQuotient(m_G.col(o));
    }
    d.dlT = (d.rT - m_lT.cwiseProduct(d.dT)).cwiseQuotient(m_T);
    if (m_bounded) {
      d.dlz = (d.rz - m_lz.cwiseProduct(d.dz)).cwiseQuotient(m_z);
      d.dlzb = (d.rzb + m_lzb.cwiseProduct(d.dz)).cwiseQuotient(m_zb);
    }
  }

  template <typename A, typename B>
  static double max_step(const A& s, const B& ds, double alpha) {
    // s > 0, so s + alpha ds < 0 only where ds < 0; the division runs only where alpha shrinks.
    for (Index j = 0; j < s.cols(); ++j)
      for (Index i = 0; i < s.rows(); ++i)
        if (s(i, j) + alpha * ds(i, j) < 0) alpha = -s(i, j) / ds(i, j);
    return alpha;
  }

  double primal_step(const Direction& d) const {
    double a = max_step(m_T, d.dT, 1.0);
    a = max_step(m_U, d.dU, a);
    a = max_step(m_G, d.dG, a);
    if (m_bounded) {
      a = max_step(m_z, d.dz, a);
      a = max_step(m_zb, Eigen::VectorXd(-d.dz), a);
    }
    return a;
  }

  double dual_step(const Direction& d) const {
    double a = max_step(m_lT, d.dlT, 1.0);
    a = max_step(m_lU, d.dlU, a);
    a = max_step(m_lG, d.dlG, a);
    if (m_bounded) {
      a = max_step(m_lz, d.dlz, a);
      a = max_step(m_lzb, d.dlzb, a);
    }
    return a;
  }

  double complementarity_after(const Direction& d, double ap, double ad) const {
    double s = (m_T + ap * d.dT).dot(m_lT + ad * d.dlT);
    s += (m_U + ap * d.dU).cwiseProduct(m_lU + ad * d.dlU).sum();
    s += (m_G + ap * d.dG).cwiseProduct(m_lG + ad * d.dlG).sum();
    if (m_bounded) s += (m_z + ap * d.dz).dot(m_lz + ad * d.dlz) + (m_zb - ap * d.dz).dot(m_lzb + ad * d.dlzb);
    return s;
  }

  void take_step(const Direction& d, double ap, double ad) {
    m_T += ap * d.dT;
    m_U += ap * d.dU;
    m_lT += ad * d.dlT;
    m_lU += ad * d.dlU;
    m_lG += ad * d.dlG;
    m_pi += ad * d.dy.head(m_k);
    if (m_bias) m_sigma += ad * d.dy.tail(m_k);
    if (m_bounded) {
      m_z += ap * d.dz;
      m_lz += ad * d.dlz;
      m_lzb += ad * d.dlzb;
    }
    // The slack of u <= (1 - low) T is kept as its own iterate (stepped, not recomputed), so
    // that it stays positive exactly as the step-length rule guarantees.
    m_G += ap * d.dG;
    if (m_bounded) m_zb -= ap * d.dz;
  }

  Index m_k = 0, m_n = 0, m_m = 0;
  bool m_bias = false, m_bounded = false, m_woodbury = false, m_woodbury_failed = false, m_dense_ready = false,
       m_factorized = false;
  double m_low = 0, m_w = 0, m_cost_scale = 1, m_row_scale = 1, m_B = 0, m_bnorm = 1;
  Eigen::MatrixXd m_c;
  Eigen::VectorXd m_cT, m_x, m_target;
  // Iterate.
  Eigen::VectorXd m_T, m_z, m_zb, m_lT, m_lz, m_lzb, m_pi, m_sigma;
  Eigen::MatrixXd m_U, m_G, m_lU, m_lG;
  // Residuals.
  Eigen::VectorXd m_rp, m_rdT, m_rdz;
  Eigen::MatrixXd m_rdU, m_Q;
  // Factorization.
  Eigen::MatrixXd m_Dinv, m_q, m_F, m_GF;
  Eigen::VectorXd m_gamma, m_Hz, m_E1, m_E2, m_E3, m_Dg11, m_Dg12, m_Dg22;
  Eigen::LLT<Eigen::MatrixXd> m_dense, m_small;
};

/// solve_staircase_barrier(P, options): StaircaseBarrier(P).solve(options).
inline StaircaseBarrierResult solve_staircase_barrier(const StaircaseBarrierProblem& P,
                                                      const StaircaseBarrierOptions& options = {}) {
  return StaircaseBarrier(P).solve(options);
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
