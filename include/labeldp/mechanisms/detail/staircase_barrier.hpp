/// \file
/// A primal-dual interior-point method for the staircase LPs on a finite output set: the
/// optimal unbiased randomizer (Badanidiyuru et al. 2023, Alg. 1, on the grid of Alg. 2), its
/// bias-bounded variant, and the optimal mechanism LP (2) of Ghazi et al. 2023, all in the
/// compact form (one privacy cone per output instead of pairwise rows).
///
/// The LP, its options, result, bound and columns are in staircase_barrier_problem.hpp; the
/// Newton system's linear algebra in staircase_barrier_newton.hpp.
///
/// Linear algebra. Mehrotra's predictor-corrector on the inequality form: the barrier Hessian
/// of output o's block \f$(T_o, u_{\cdot,o})\f$ is an arrow matrix (diagonal plus one dense row
/// and column), inverted in O(k) (block elimination of \f$T_o\f$). The normal matrix of the m
/// coupling rows (m = k, or 2k with unbiasedness rows) is then
/// \f$S = \sum_o (e_o e_o^T) \otimes (\mathrm{diag}(1/D_o) + f_o f_o^T / \gamma_o)\f$ with
/// \f$e_o = (1, x_o)\f$: a part that is diagonal per label (2 x 2 blocks) plus
/// \f$F F^T\f$ with one column per output. It is factorized either densely (one rank-n update of
/// order m at BLAS-3 speed, then a Cholesky factorization of order m, with unbiasedness rows
/// after the exact factorization of their 2 x 2 blocks) or, when n < m, by the
/// Woodbury identity through a Cholesky factorization of order n, with iterative refinement
/// against S itself. When that refinement does not converge (Woodbury is not backward stable:
/// near the optimum the diagonal part spans many orders of magnitude), the LP (2) rows (m = k,
/// diagonal part) switch to the product-form Cholesky factorization of Goldfarb and Scheinberg
/// (2004), n stable rank-one updates of the diagonal (Gill, Golub, Murray and Saunders 1974,
/// method C1) in O(m n^2) and O(m n) per solve; so do the unbiasedness rows, through the exact
/// factorization of their 2 x 2 blocks, where a cost model says it beats the dense path
/// (StaircaseBarrier::product_pays()). The dense path is the last fallback.
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
#include <limits>
#include <utility>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/staircase_barrier_problem.hpp"

namespace labeldp::detail {

/// Below this staircase low entry \f$\ell = e^{-\varepsilon}\f$ (eps > 7.6) the interior point
/// starts its multipliers of \f$u \le (1 - \ell) T\f$ dual feasible
/// (StaircaseBarrier::initialize()). Measured on the table of bench_optimal_lp (LP (2),
/// Normalization rows; 5 priors): 6-28 iterations where the constant floor start took 26-46 at
/// eps 8-20, but more at eps 4-7 on the near-uniform priors (20 for 13 at eps 4, 27 for 24 at
/// eps 7), where the floor is within \f$1/\ell \le e^7\f$ of feasible. With unbiasedness rows
/// (the grid LP of bench_solvers): 16-19 iterations for 28-30 at eps 12 (near-uniform k = 214,
/// grid 51, with and without zero-probability labels; weeks-like k = 52, grid 52), 43 for 53 at
/// grid 214, 21-22 for 24 at eps 8.
inline constexpr double kStaircaseDualStartLow = 5e-4;

/// StaircaseBarrierOptions::corrector_below for the unbiasedness rows of the grid LP
/// (optimal_unbiased_on_outputs(), at eps up to 7.6: from the floor start of
/// kStaircaseDualStartLow): Gondzio's correctors only while a Mehrotra step is below
/// 0.7. A corrector costs a whole direction (the element-wise passes over the k x n blocks and
/// a solve with the normal matrix), while at m = 2k rows the factorization that it saves is
/// cheap (weeks-like k = 52, grid 52: 2-4 directions an iteration, callgrind's largest items);
/// after a longer step its trial step (1.5 alpha + 0.1) rarely pays for it. Measured
/// (callgrind instructions of the whole call, against correctors after every step): weeks-like
/// k = 52, grid 52, eps 2 / 4 / 8 / 12: -4% / -17% / -10% / +6.5%; near-uniform k = 214,
/// grid 51, eps 2 / 12: -4% / -17%, with zero-probability labels eps 12: -5%; grid 214, eps 2
/// / 12: -6% / -4%. At 0.5: -5% / -22% / -15% / +7% on the weeks-like grid but +13% on grid
/// 214 at eps 12 (43 to 50 iterations).
inline constexpr double kStaircaseUnbiasedCorrectorBelow = 0.7;

/// The interior-point solver (see the file comment). Construct, then solve().
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicStaircaseBarrier {
 public:
  /// \param P the problem; cost k x n with k, n >= 1; outputs n values and targets k values
  ///        when P.rows is not Normalization; 0 < P.low <= 1; max_bias > 0 for BiasBounded.
  explicit BasicStaircaseBarrier(const StaircaseBarrierProblem& P) {
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
  /// \throws std::invalid_argument on a bad option (StaircaseBarrierOptions::check(), first).
  StaircaseBarrierResult solve(const StaircaseBarrierOptions& options = {}) {
    options.check();
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
        out.status = optim::SolveStatus::Optimal;
        break;
      }
      if (it >= options.max_iterations) {
        out.status = optim::SolveStatus::IterationLimit;
        break;
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.time_limit) {
        out.status = optim::SolveStatus::TimeLimit;
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
        out.status = optim::SolveStatus::NumericalIssue;
        break;
      }
      if (!factorize()) {
        out.status = optim::SolveStatus::NumericalIssue;
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
      for (Index corr = 0; corr < options.max_correctors && std::min(ap, ad) < options.corrector_below; ++corr) {
        const double ap_t = std::min(1.0, 1.5 * ap + 0.1), ad_t = std::min(1.0, 1.5 * ad + 0.1);
        if (!gondzio_rhs(d, ap_t, ad_t, sigma * mu, g)) break;
        direction(g);
        ++out.correctors;
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
    if (best.T.size() && !(out.status == optim::SolveStatus::Optimal && best.iteration == out.iterations)) {
      if (out.status != optim::SolveStatus::Optimal && best.gap <= options.tolerance)
        out.status = optim::SolveStatus::Optimal;
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
    if (m_product) {
      // A roundoff correction moves the objective by about pi^T r_p. The product form solves S
      // exactly where S is nearly singular and can follow its near-null directions (where the
      // dense Cholesky's roundoff or shift damps them): r300 x 10 at eps 8, a correction that
      // kept the rows but moved the objective by 2e-4. Such a move is refused.
      const double before = primal_objective(), after = m_cT.dot(T) + m_c.cwiseProduct(U).sum();
      double moved = m_pi.dot(rp.head(m_k));
      if (m_bias) moved += m_sigma.dot(rp.tail(m_k));
      if (!(std::abs(after - before) <= 1e-9 * std::abs(before) + 2 * std::abs(moved))) return false;
    }
    m_T = T;
    m_U = U;
    m_G = G;
    m_z = z;
    m_zb = (2 * m_B) - m_z.array();
    return true;
  }

  /// staircase_lagrangian_bound() at the current duals, in scaled units (uses m_Q from
  /// residuals() with bias rows).
  double lagrangian_bound() const {
    double best = std::numeric_limits<double>::infinity();
    for (Index o = 0; o < m_n; ++o) {
      double rc = 0;
      for (Index y = 0; y < m_k; ++y) {
        const double a = m_c(y, o) - (m_bias ? m_Q(y, o) : m_pi[y]);
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

  /// The starting point. Tried and not kept (interior-point iterations; weeks-like k = 52,
  /// grid 52 / near-uniform k = 214, grid 51, and with zero-probability labels, eps 8 / 12;
  /// baseline 21 / 17, 23 / 17, 23 / 16): at eps 8 the dual-feasible start below leaves the
  /// products \f$u \lambda_U\f$ of costly cells at up to 170 mu and \f$G \lambda_G\f$ at
  /// 1e-4 mu, and the former stay above 100 mu for 10 iterations. (a) Each cone's split
  /// chosen so that \f$u \lambda_U = G \lambda_G\f$: weeks 15 / 17 (15 / 15 with
  /// \f$T \lambda_T\f$ balanced too), but near-uniform grid 51 stalls at steps of 1e-3 (over
  /// 60 s); the split's share clamped to [0.1, 0.9] ... [0.3, 0.7] or softened (power 0.15 to
  /// 0.5) was erratic (weeks eps 8: 15-42; near-uniform: 17-56 or stalled). (b) u capped at
  /// 1 to 30 mu / \f$\lambda_U\f$: weeks eps 12 17 -> 21-25. (c) \f$\lambda_T\f$ dual feasible
  /// (half of T's dual row): 17 -> 22 and 17 -> 23 at eps 12. (d) Multipliers clamped to
  /// [0.1, 10] mu / s: weeks 22 / 21. (e) A primal start meeting the rows (the least-norm
  /// correction in the barrier metric, as project(), 0.5 to 0.99 of the way to the boundary):
  /// 0-8 more iterations on every case, eps 2 to 12. Nor did a step fraction capped at 0.99 to
  /// 0.999 (0-2 more iterations) or up to 6 Gondzio correctors (weeks eps 8: 21 -> 19 iterations
  /// but 4-8% more CPU time, eps 12: 5-14% more; near-uniform grid 51 eps 8: 6% less).
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
    if (m_low < kStaircaseDualStartLow) {
      // At large eps the multipliers of u <= (1 - low) T start dual feasible instead. T_o's dual
      // row is low sum_y (c_{y,o} - pi_y - x_o sigma_y) = lambda_T + w sum_y lambda_G (sigma = 0
      // here, so with or without unbiasedness rows), so a feasible lambda_G is O(low), while the
      // floor above is 1/low times that: the iterations went to shrinking it (dual steps of
      // 0.2-0.4, 35-46 iterations at eps 12-20 on the near-uniform k = 214 and lognormal k = 401
      // priors, LP (2)). Here half of T_o's dual row goes to lambda_G (spread over the labels)
      // and lambda_U = c - pi + lambda_G makes u's dual rows exact.
      for (Index o = 0; o < n; ++o) {
        const double excess = (m_c.col(o) - m_pi).sum();
        const double lg = std::min(floor, 0.5 * m_low * excess / (m_w * double(k)));
        if (!(lg > 0)) continue;  // every cost at its label's minimum: keep the floor
        m_lG.col(o).setConstant(lg);
        m_lU.col(o) = (m_c.col(o) - m_pi).array() + lg;
      }
    }
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
    if (!m_bias) {
      // LP (2): q(y, o) = pi_y in every column; no k x n copy of it (a pass over memory that was
      // a few percent of the solve at k = 214, n = 107).
      m_Q.resize(0, 0);
      m_rdU = ((m_c.colwise() - m_pi) - m_lU) + m_lG;
      m_rdT = (m_cT.array() - m_low * m_pi.sum()).matrix() - m_lT - m_w * m_lG.colwise().sum().transpose();
    } else {
      m_Q = m_pi.replicate(1, m_n);
      m_Q.noalias() += m_sigma * m_x.transpose();
      m_rdU = m_c - m_Q - m_lU + m_lG;
      m_rdT = m_cT - m_low * m_Q.colwise().sum().transpose() - m_lT - m_w * m_lG.colwise().sum().transpose();
    }
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

  // The Newton system (defined in staircase_barrier_newton.hpp): the arrow matrices, the normal
  // matrix of the coupling rows (dense, or Woodbury with refinement), the correctors' right-hand
  // sides, and the direction.
  bool factorize(const std::vector<char>* dropped = nullptr);
  bool factorize_dense();
  bool factorize_product();
  Eigen::VectorXd dense_solve(const Eigen::VectorXd& r) const;
  bool product_pays() const;
  void block_schur();
  void solve_product(Eigen::VectorXd& v) const;
  void apply_Dg_inverse(const Eigen::MatrixXd& in, Eigen::MatrixXd& out) const;
  Eigen::VectorXd apply_S(const Eigen::VectorXd& v) const;
  Eigen::VectorXd solve_S(const Eigen::VectorXd& r);
  void complementarity_rhs(double target, const Direction* aff, Direction& d) const;
  bool gondzio_rhs(const Direction& d, double ap, double ad, double target, Direction& g) const;
  void arrow_solve(Eigen::VectorXd& rhoT, Eigen::MatrixXd& R) const;
  void direction(Direction& d);

  Eigen::MatrixXd aff_dG(const Direction& d) const { return (m_w * d.dT).transpose().replicate(m_k, 1) - d.dU; }

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
       m_factorized = false, m_product = false, m_product_ready = false;
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
  // Product-form Cholesky factors (factorize_product()): row y holds p_{y,o} and beta_{y,o}
  // of every factor o (row-major, so that a solve streams them row by row), and the diagonal.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m_pf_p, m_pf_beta;
  Eigen::VectorXd m_pf_d, m_pf_s;
  // With unbiasedness rows (block_schur()): E2 / E1 per label (the block factor L_0) and the
  // Schur complement V of every label's 2 x 2 block.
  Eigen::VectorXd m_pf_xbar, m_pf_V;
};

/// StaircaseBarrier: BasicStaircaseBarrier<> (see there).
using StaircaseBarrier = BasicStaircaseBarrier<>;

/// solve_staircase_barrier(P, options): StaircaseBarrier(P).solve(options), with the options
/// checked before the problem is set up.
/// \throws std::invalid_argument on a bad option (StaircaseBarrierOptions::check()).
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline StaircaseBarrierResult solve_staircase_barrier(const StaircaseBarrierProblem& P,
                                                      const StaircaseBarrierOptions& options = {}) {
  options.check();
  return BasicStaircaseBarrier<Deferred>(P).solve(options);
}

}  // namespace labeldp::detail

// The member functions defined out of the class.
#include "labeldp/mechanisms/detail/staircase_barrier_newton.hpp"
