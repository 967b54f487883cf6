/// \file
/// The exact optimal unbiased randomizer with real outputs (mechanisms/unbiased.hpp,
/// optimal_unbiased_continuous()) by a dual barrier method over every interval pattern, then
/// Newton's method on the optimality conditions of the active patterns.
///
/// Why this works (scaled units of unbiased_pricing.hpp). A staircase column is a pattern
/// \f$T\f$ (entries \f$s_y = 1\f$ on T, \f$e^{-\varepsilon}\f$ elsewhere) placed on an output o;
/// columns with the same pattern merge into one at their weighted mean output (the cost is
/// convex in o), so the problem is one column per pattern with a free output, and by Claim 11
/// of Badanidiyuru et al. (NeurIPS 2023) the patterns can be taken to be intervals
/// \f$[a, b]\f$ of the sorted labels: \f$k(k+1)/2\f$ of them (the empty pattern is the full
/// one scaled by \f$e^{-\varepsilon}\f$). With \f$A_T = \sum_y s_y p_y\f$,
/// \f$B_T = \sum_y s_y p_y y\f$, \f$C_T = \sum_y s_y p_y y^2\f$, \f$u_T = \sum_y s_y \pi_y\f$ and
/// \f$v_T = \sum_y s_y \sigma_y\f$ for the duals \f$(\pi, \sigma)\f$ of the normalization and
/// unbiasedness rows, the best output of pattern T is \f$o_T = (2 B_T + v_T) / (2 A_T)\f$ and
/// its reduced cost there is
/// \f[ r_T(\pi, \sigma) = C_T - u_T - (2 B_T + v_T)^2 / (4 A_T), \f]
/// a concave function of the duals. The dual problem is
/// \f$\max\; 1^T \pi + y^T \sigma\f$ subject to \f$r_T \ge 0\f$ for every T: 2k variables.
///
/// A primal-dual interior-point method (Mehrotra's predictor-corrector) follows the central path
/// \f$m_T r_T = \mu \to 0\f$, with primal weights \f$m_T \ge 0\f$ and the primal rows
/// \f$\sum_T m_T (s_T, o_T s_T) = (1, y)\f$. Its Newton matrix is
/// \f$\sum_T ((m_T / r_T) g_T g_T^T + \ldots)\f$ with \f$g_T = (s_T, o_T s_T)\f$, and
/// \f$s_T s_T^T\f$ for an interval T is a constant plus rank-one terms plus the indicator of
/// \f$a \le \min(y, y'), b \ge \max(y, y')\f$, so every block is a two-dimensional cumulative
/// sum: O(k^2) per step for all \f$k(k+1)/2\f$ patterns, plus one Cholesky factorization of
/// order 2k. Near the optimum the active patterns (those with \f$m_T > r_T\f$) are known, and
/// Newton's method on their optimality conditions (\f$r_T = 0\f$ on the active set, primal rows
/// satisfied) converges quadratically to the exact solution; exact pricing over every pattern and
/// output (price_continuous()) then certifies it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"

namespace labeldp::detail {

/// Outcome of interval_barrier_solve().
struct IntervalBarrierResult {
  bool converged = false;           ///< crossover and polish succeeded: columns/weights are exact
  Eigen::VectorXd duals;            ///< (pi, sigma), 2k entries: the polished or the last interior ones
  std::vector<StaircaseColumn> columns;  ///< active patterns at their optimal outputs
  Eigen::VectorXd weights;          ///< primal weight of each column (>= 0 when converged)
  /// When not converged: the intervals with m_T > r_T at the last interior point that met a
  /// gap target, at their outputs there (a starting set for column generation).
  std::vector<StaircaseColumn> candidates;
  double primal_objective = 0;      ///< sum of weight * cost (scaled units)
  Index newton_steps = 0;           ///< barrier Newton steps
  Index polish_steps = 0;           ///< active-set Newton steps
};

/// \f$s_T^T x\f$ for every interval pattern T = [a, b] in O(1) from prefix sums of x:
/// \f$\ell \sum_y x_y + (1 - \ell) \sum_{a \le y \le b} x_y\f$, with \f$\ell\f$ the staircase's low entry.
class IntervalDot {
 public:
  IntervalDot(const Eigen::Ref<const Eigen::VectorXd>& x, double low) : m_prefix(x.size() + 1), m_low(low) {
    m_prefix[0] = 0;
    for (Index i = 0; i < x.size(); ++i) m_prefix[i + 1] = m_prefix[i] + x[i];
  }
  double operator()(Index a, Index b) const {
    return m_low * m_prefix[m_prefix.size() - 1] + (1 - m_low) * (m_prefix[b + 1] - m_prefix[a]);
  }

 private:
  Eigen::VectorXd m_prefix;
  double m_low;
};

/// Interval-pattern dual barrier and active-set Newton polish for the unbiased problem (B = 0,
/// outputs on the whole real line). All k x k matrices are indexed (a, b) with a <= b; entries
/// with a > b are unused.
class IntervalBarrier {
 public:
  explicit IntervalBarrier(const UnbiasedProblem& P) : m_P(P), m_k(P.num_labels()) {
    const Index k = m_k;
    const Eigen::VectorXd py = P.probs.cwiseProduct(P.labels);
    const IntervalDot A(P.probs, P.low), B(py, P.low), C(py.cwiseProduct(P.labels), P.low);
    m_A.setZero(k, k);
    m_B.setZero(k, k);
    m_C.setZero(k, k);
    m_quarter_inv_A.setZero(k, k);
    for (Index b = 0; b < k; ++b)
      for (Index a = 0; a <= b; ++a) {
        m_A(a, b) = A(a, b);
        m_B(a, b) = B(a, b);
        m_C(a, b) = C(a, b);
        m_quarter_inv_A(a, b) = 0.25 / m_A(a, b);
      }
    m_r.setZero(k, k);
    m_r_inv.setZero(k, k);
    m_o.setZero(k, k);
  }

  Index num_patterns() const { return m_k * (m_k + 1) / 2; }

  /// Reduced costs r and best outputs o of every interval at the duals (pi, sigma); returns the
  /// smallest r.
  double evaluate(const Eigen::VectorXd& duals) {
    const Index k = m_k;
    const IntervalDot U(duals.head(k), m_P.low), V(duals.tail(k), m_P.low);
    double min_r = std::numeric_limits<double>::infinity();
    for (Index b = 0; b < k; ++b)
      for (Index a = 0; a <= b; ++a) {
        const double u = U(a, b), v = V(a, b);
        const double h = 2 * m_B(a, b) + v;
        const double scaled = h * m_quarter_inv_A(a, b);
        m_o(a, b) = 2 * scaled;
        m_r(a, b) = m_C(a, b) - u - h * scaled;
        m_r_inv(a, b) = 1 / m_r(a, b);
        min_r = std::min(min_r, m_r(a, b));
      }
    return min_r;
  }

  /// The interior-point phase then the active-set polish. `gap_target`: the interior-point
  /// phase stops when the complementarity gap \f$\sum_T m_T r_T\f$ is below it times the dual
  /// objective and the primal rows hold to 1e-9.
  IntervalBarrierResult solve(double gap_target, Index max_iterations = 200, Index max_polish = 30) {
    IntervalBarrierResult out;
    const Index k = m_k, n = 2 * k;
    const double J = double(num_patterns());
    Eigen::VectorXd rhs(n);
    rhs.head(k).setOnes();
    rhs.tail(k) = m_P.labels;
    // Dual start: sigma = 0 and pi = -t, where r_T = A_T Var_T + t sum_y s_y > 0 (Var_T the
    // variance of the labels under the weights s_y p_y); t is ten times the prior's variance
    // (plus a floor for a prior concentrated on one label).
    const double mean = m_P.probs.dot(m_P.labels);
    const double variance = m_P.probs.dot((m_P.labels.array() - mean).square().matrix());
    Eigen::VectorXd lambda = Eigen::VectorXd::Zero(n);
    lambda.head(k).setConstant(-10 * variance - 1e-12);
    evaluate(lambda);
    // Primal start (Mehrotra's): the least-norm solution of the primal rows G m = rhs at the
    // starting outputs, shifted positive, then shifted again to balance the products m_T r_T.
    Eigen::MatrixXd m = Eigen::MatrixXd::Zero(k, k), mo = m;
    {
      Eigen::MatrixXd ones = Eigen::MatrixXd::Zero(k, k), oo = ones, oo2 = ones, w(k, k), unused = ones;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) {
          ones(a, b) = 1;
          oo(a, b) = m_o(a, b);
          oo2(a, b) = m_o(a, b) * m_o(a, b);
        }
      Eigen::MatrixXd GG(n, n);
      outer_block(ones, w, GG.topLeftCorner(k, k));
      outer_block(oo, w, GG.topRightCorner(k, k));
      GG.bottomLeftCorner(k, k) = GG.topRightCorner(k, k).transpose();
      outer_block(oo2, w, GG.bottomRightCorner(k, k));
      direction_terms(GG.ldlt().solve(rhs), m, unused);  // m_T = g_T^T (G G^T)^{-1} rhs
      double lowest = 0, products = 0, r_sum = 0;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) lowest = std::min(lowest, m(a, b));
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) {
          m(a, b) -= 1.5 * lowest;
          products += m(a, b) * m_r(a, b);
          r_sum += m_r(a, b);
        }
      const double second = 0.5 * products / r_sum + 1e-300;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) m(a, b) += second;
    }
    // Entries below the diagonal (a > b) stay zero and are never read.
    Eigen::MatrixXd d1 = Eigen::MatrixXd::Zero(k, k), d2 = d1, d3 = d1, q1a = d1, q2a = d1, q1 = d1, q2 = d1,
                    dm_aff = d1, dm = d1, c = d1, c_try = d1, q1t = d1, q2t = d1, dm_try = d1;
    Eigen::VectorXd step_aff(n), step(n), step_try(n), target(n);
    Eigen::MatrixXd H(n, n), work(k, k), mu_t = Eigen::MatrixXd::Zero(k, k), mu_o = mu_t;
    Eigen::LLT<Eigen::MatrixXd> llt(n);
    // The Newton direction whose complementarity rows are r_T dm_T + m_T dr_T = c_T - m_T r_T
    // (primal rows: the full residual); returns the largest feasible step.
    auto direction = [&](const Eigen::MatrixXd& cc, Eigen::VectorXd& dl, Eigen::MatrixXd& dmm, Eigen::MatrixXd& Q1,
                         Eigen::MatrixXd& Q2) {
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) {
          mu_t(a, b) = cc(a, b) * m_r_inv(a, b);
          mu_o(a, b) = mu_t(a, b) * m_o(a, b);
        }
      target.head(k) = rhs.head(k) - apply_S(mu_t);
      target.tail(k) = rhs.tail(k) - apply_S(mu_o);
      dl = llt.solve(target);
      direction_terms(dl, Q1, Q2);
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) dmm(a, b) = (cc(a, b) + m(a, b) * Q1(a, b)) * m_r_inv(a, b) - m(a, b);
      return std::min(step_to_boundary(Q1, Q2), primal_step(m, dmm));
    };
    // Crossover and polish from the current iterate; on success `out` holds the exact solution.
    // Otherwise `out` keeps the iterate's duals and its active intervals (the caller's fallback).
    auto finish_here = [&]() {
      out.duals = lambda;
      out.candidates.clear();
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a)
          if (m(a, b) > m_r(a, b)) out.candidates.push_back(column_of(a, b, m_o(a, b)));
      IntervalBarrierResult attempt = out;
      polish(rhs, lambda, m, max_polish, attempt);
      if (attempt.converged) {
        out = std::move(attempt);
        return true;
      }
      out.polish_steps = attempt.polish_steps;
      evaluate(lambda);
      return false;
    };
    // The previous iterate, to finish from when roundoff breaks a step (NaN).
    Eigen::VectorXd lambda_prev;
    Eigen::MatrixXd m_prev;
    bool tried_here = false;  // finish_here() already ran at the current iterate
    for (;;) {
      double gap = 0;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) {
          mo(a, b) = m(a, b) * m_o(a, b);
          gap += m(a, b) * m_r(a, b);
        }
      const double residual = std::max((apply_S(m) - rhs.head(k)).cwiseAbs().maxCoeff(),
                                       (apply_S(mo) - rhs.tail(k)).cwiseAbs().maxCoeff());
      if (!std::isfinite(gap) || !std::isfinite(residual)) {
        if (lambda_prev.size() == n) {
          lambda = lambda_prev;
          m = m_prev;
          evaluate(lambda);
          finish_here();
        }
        return out;
      }
      tried_here = false;
      const double target_gap = gap_target * std::abs(rhs.dot(lambda));
      // The primal rows must hold to 1e-9 too, unless roundoff keeps them just above that
      // (tiny staircase low entries, eps near 8) while the gap is far below its target.
      if (gap <= target_gap && (residual <= 1e-9 || gap <= 1e-3 * target_gap)) {
        // Try the crossover and polish; if the active set is not clear yet, go on with a
        // hundredfold smaller gap.
        if (finish_here()) return out;
        tried_here = true;
        gap_target *= 1e-2;
        if (gap_target < 1e-15) return out;
      }
      // The end of the interior phase without success: finish from the current iterate.
      auto give_up = [&]() {
        if (!tried_here) finish_here();
        return out;
      };
      if (out.newton_steps >= max_iterations) return give_up();
      ++out.newton_steps;
      // Newton matrix [sum_T (m_T / r_T) g_T g_T^T + diag(0, sum_T m_T s_T s_T^T / (2 A_T))].
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) {
          const double w = m(a, b) * m_r_inv(a, b), o = m_o(a, b);
          d1(a, b) = w;
          d2(a, b) = w * o;
          d3(a, b) = w * o * o + 2 * m(a, b) * m_quarter_inv_A(a, b);
        }
      outer_block(d1, work, H.topLeftCorner(k, k));
      outer_block(d2, work, H.topRightCorner(k, k));
      H.bottomLeftCorner(k, k) = H.topRightCorner(k, k).transpose();
      outer_block(d3, work, H.bottomRightCorner(k, k));
      llt.compute(H);
      // Near the optimum the matrix spans many orders of magnitude (m_T / r_T -> 0 or
      // infinity); if roundoff makes a pivot non-positive, a relative diagonal shift (a
      // regularization of the Newton step only) restores it.
      for (double shift = 1e-12; llt.info() != Eigen::Success && shift <= 1e-6; shift *= 100) {
        Eigen::MatrixXd shifted = H;
        shifted.diagonal() *= 1 + shift;
        llt.compute(shifted);
      }
      if (llt.info() != Eigen::Success) return give_up();
      // Predictor (affine scaling): the Newton step for m_T r_T = 0.
      c.setZero();
      const double alpha_aff = std::min(1.0, direction(c, step_aff, dm_aff, q1a, q2a));
      double gap_aff = 0;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a)
          gap_aff += (m(a, b) + alpha_aff * dm_aff(a, b)) *
                     (m_r(a, b) - alpha_aff * q1a(a, b) - alpha_aff * alpha_aff * q2a(a, b));
      // Mehrotra's corrector: centring weight (gap_aff / gap)^3 and the second-order term
      // dm_aff * dr_aff (dr_aff = -q1a).
      const double ratio = std::clamp(gap_aff / gap, 0.0, 1.0);
      const double mu = ratio * ratio * ratio * gap / J;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a) c(a, b) = mu + dm_aff(a, b) * q1a(a, b);
      double alpha_max = direction(c, step, dm, q1, q2);
      // Gondzio's centrality correctors: aim at a longer step, push the products m_T r_T there
      // back into [0.1 mu, 10 mu]; each costs two triangular solves with the same factor.
      for (int corrector = 0; corrector < 2 && alpha_max < 1; ++corrector) {
        const double aim = std::min(1.0, 1.5 * alpha_max + 0.1);
        for (Index b = 0; b < k; ++b)
          for (Index a = 0; a <= b; ++a) {
            const double v = (m(a, b) + aim * dm(a, b)) * (m_r(a, b) - aim * q1(a, b) - aim * aim * q2(a, b));
            double shift = 0;
            if (v < 0.1 * mu) shift = 0.1 * mu - v;
            else if (v > 10 * mu) shift = std::max(10 * mu - v, -10 * mu);
            c_try(a, b) = c(a, b) + shift;
          }
        const double alpha_try = direction(c_try, step_try, dm_try, q1t, q2t);
        if (!(alpha_try >= 1.01 * alpha_max)) break;
        std::swap(c, c_try);
        std::swap(step, step_try);
        std::swap(dm, dm_try);
        std::swap(q1, q1t);
        std::swap(q2, q2t);
        alpha_max = alpha_try;
      }
      const double alpha = std::min(1.0, 0.99 * alpha_max);
      if (!(alpha > 0)) return give_up();
      lambda_prev = lambda;
      m_prev = m;
      lambda += alpha * step;
      m += alpha * dm;
      evaluate(lambda);
    }
  }

 private:
  /// Along lambda + t * step, r_T(t) = r_T - t q1_T - t^2 q2_T exactly, with
  /// q1 = du + o dv (the linear change) and q2 = dv^2 / (4 A) >= 0.
  void direction_terms(const Eigen::VectorXd& step, Eigen::MatrixXd& q1, Eigen::MatrixXd& q2) const {
    const Index k = m_k;
    const IntervalDot DU(step.head(k), m_P.low), DV(step.tail(k), m_P.low);
    for (Index b = 0; b < k; ++b)
      for (Index a = 0; a <= b; ++a) {
        const double du = DU(a, b), dv = DV(a, b);
        q1(a, b) = du + m_o(a, b) * dv;
        q2(a, b) = dv * dv * m_quarter_inv_A(a, b);
      }
  }

  /// Largest t with r_T - t q1_T - t^2 q2_T > 0 for every T (r_T > 0 now).
  double step_to_boundary(const Eigen::MatrixXd& q1, const Eigen::MatrixXd& q2) const {
    double t_max = std::numeric_limits<double>::infinity();
    for (Index b = 0; b < m_k; ++b)
      for (Index a = 0; a <= b; ++a) {
        const double c2 = q2(a, b), c1 = q1(a, b), r = m_r(a, b);
        // Most intervals do not block the current t_max: r(t_max) > 0 skips the root.
        if (!(c2 > 0 || c1 > 0) || r - t_max * (c1 + t_max * c2) > 0) continue;
        const double t = c2 > 0 ? 2 * r / (c1 + std::sqrt(c1 * c1 + 4 * c2 * r))  // cancellation-free root
                                : r / c1;
        t_max = std::min(t_max, t);
      }
    return t_max;
  }

  /// Largest t with m + t dm >= 0.
  double primal_step(const Eigen::MatrixXd& m, const Eigen::MatrixXd& dm) const {
    double t_max = std::numeric_limits<double>::infinity();
    for (Index b = 0; b < m_k; ++b)
      for (Index a = 0; a <= b; ++a)
        if (dm(a, b) < 0 && m(a, b) + t_max * dm(a, b) < 0) t_max = -m(a, b) / dm(a, b);
    return t_max;
  }

  /// Sum over intervals of d(a, b) s_T s_T^T, for the given weights d (k x k, a <= b; zero
  /// below the diagonal). `work` is scratch space (k x k).
  void outer_block(const Eigen::MatrixXd& d, Eigen::MatrixXd& work, Eigen::Ref<Eigen::MatrixXd> out) const {
    const Index k = m_k;
    const double low = m_P.low;
    // work(a, v) = sum_{b >= v} d(a, b) (suffix sums of columns), then in place
    // Q(u, v) = sum_{a <= u} work(a, v) for u <= v: the weight of the intervals holding u and v.
    work.col(k - 1) = d.col(k - 1);
    for (Index v = k - 2; v >= 0; --v) work.col(v) = d.col(v) + work.col(v + 1);
    double total = 0;
    for (Index v = 0; v < k; ++v) {
      total += d.col(v).head(v + 1).sum();
      double* col = work.col(v).data();
      for (Index u = 1; u <= v; ++u) col[u] += col[u - 1];
    }
    const double l2 = low * low * total, lh = low * (1 - low), h2 = (1 - low) * (1 - low);
    for (Index v = 0; v < k; ++v) {
      const double cv = work(v, v);
      for (Index u = 0; u <= v; ++u) out(u, v) = l2 + lh * (work(u, u) + cv) + h2 * work(u, v);
    }
    for (Index v = 0; v < k; ++v)
      for (Index u = v + 1; u < k; ++u) out(u, v) = out(v, u);
  }

  /// S x for interval weights x: (S x)_y = low * sum(x) + (1 - low) * sum_{a <= y <= b} x(a, b).
  Eigen::VectorXd apply_S(const Eigen::MatrixXd& x) const {
    const Index k = m_k;
    Eigen::VectorXd diff = Eigen::VectorXd::Zero(k + 1);
    double total = 0;
    for (Index b = 0; b < k; ++b)
      for (Index a = 0; a <= b; ++a) {
        diff[a] += x(a, b);
        diff[b + 1] -= x(a, b);
        total += x(a, b);
      }
    Eigen::VectorXd out(k);
    double run = 0;
    for (Index y = 0; y < k; ++y) {
      run += diff[y];
      out[y] = m_P.low * total + (1 - m_P.low) * run;
    }
    return out;
  }

  StaircaseColumn column_of(Index a, Index b, double output) const {
    StaircaseColumn c;
    c.pattern.assign(std::size_t(m_k), 0);
    for (Index i = a; i <= b; ++i) c.pattern[std::size_t(i)] = 1;
    c.output = output;
    return c;
  }

  /// Factorization of the active columns' matrix G (n x q, q <= n, full column rank): an LU
  /// when square, a Householder QR otherwise (a degenerate optimum with fewer than 2k active
  /// patterns). One factorization serves the crossover's solve and the first Newton step.
  struct ActiveFactor {
    Index rows = 0, cols = 0;
    Eigen::PartialPivLU<Eigen::MatrixXd> lu;
    Eigen::HouseholderQR<Eigen::MatrixXd> qr;
    bool square() const { return rows == cols; }
    void compute(const Eigen::MatrixXd& G) {
      rows = G.rows();
      cols = G.cols();
      if (square()) lu.compute(G);
      else qr.compute(G);
    }
    /// The least-squares solution of G x = v (exact when square).
    Eigen::VectorXd solve(const Eigen::VectorXd& v) const { return square() ? Eigen::VectorXd(lu.solve(v)) : Eigen::VectorXd(qr.solve(v)); }
  };

  /// G for the intervals `active` (column j = (s_T, o_T s_T)) at the outputs of the last evaluate().
  Eigen::MatrixXd active_matrix(const std::vector<std::pair<Index, Index>>& active) const {
    const Index k = m_k, q = Index(active.size());
    Eigen::MatrixXd G(2 * k, q);
    for (Index j = 0; j < q; ++j) {
      const auto [a, b] = active[std::size_t(j)];
      G.col(j).head(k).setConstant(m_P.low);
      G.col(j).head(k).segment(a, b - a + 1).setOnes();
      G.col(j).tail(k) = m_o(a, b) * G.col(j).head(k);
    }
    return G;
  }

  /// From the last interior point to an exact basic solution, then to the exact optimum.
  ///
  /// Crossover: the intervals with \f$m_T > \theta r_T\f$ (the active ones, near the optimum;
  /// on the central path \f$m_T / r_T = m_T^2 / \mu\f$, huge for an active interval and tiny for
  /// an inactive one), for thresholds \f$\theta\f$ from strict to loose, at the outputs of the
  /// interior duals; when there are more of them than rows (a degenerate optimum) a
  /// column-pivoted QR picks 2k (or rank-many) independent columns, heaviest first; their
  /// weights solve the 2k primal rows exactly (least squares when fewer: checked).
  /// Polish: Newton's method on the optimality conditions of that basis (r_T(lambda) = 0 on it,
  /// primal rows satisfied, outputs following sigma), quadratically convergent; if it fails or
  /// a weight turns negative, the crossover solution stands (its outputs are optimal to the
  /// interior point's accuracy, and the caller certifies the gap by exact pricing).
  IntervalBarrierResult polish(const Eigen::VectorXd& rhs, Eigen::VectorXd lambda, const Eigen::MatrixXd& weights,
                               Index max_polish, IntervalBarrierResult& out) {
    const Index k = m_k, n = 2 * k;
    evaluate(lambda);
    const double scale = 1 + rhs.cwiseAbs().maxCoeff();
    std::vector<std::pair<Index, Index>> basis;
    Eigen::VectorXd m;
    ActiveFactor factor;
    bool found = false;
    Index tried = -1;
    for (const double threshold : {1e9, 1e6, 1e3, 1.0}) {
      std::vector<std::pair<Index, Index>> candidates;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a)
          if (weights(a, b) > threshold * m_r(a, b)) candidates.emplace_back(a, b);
      const Index q = Index(candidates.size());
      if (q == 0 || q == tried) continue;  // empty, or the same set as the previous threshold
      tried = q;
      Eigen::MatrixXd G = active_matrix(candidates);
      basis.clear();
      if (q <= n) {
        basis = candidates;
      } else {
        // More active intervals than rows (a degenerate optimum): independent columns,
        // heaviest first, by column-pivoted QR.
        Eigen::VectorXd heavy(q);
        for (Index j = 0; j < q; ++j)
          heavy[j] = weights(candidates[std::size_t(j)].first, candidates[std::size_t(j)].second);
        Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(G * heavy.asDiagonal());
        const Index rank = std::min(qr.rank(), n);
        std::vector<Index> chosen;
        for (Index t = 0; t < rank; ++t) chosen.push_back(qr.colsPermutation().indices()[t]);
        std::sort(chosen.begin(), chosen.end());
        Eigen::MatrixXd GB(n, rank);
        for (Index t = 0; t < rank; ++t) {
          basis.push_back(candidates[std::size_t(chosen[std::size_t(t)])]);
          GB.col(t) = G.col(chosen[std::size_t(t)]);
        }
        G = std::move(GB);
      }
      factor.compute(G);
      m = factor.solve(rhs);
      if (m.allFinite() && m.minCoeff() >= -1e-9 && (G * m - rhs).cwiseAbs().maxCoeff() <= 1e-9 * scale) {
        found = true;
        break;
      }
    }
    if (!found) return out;
    m = m.cwiseMax(0.0);
    // Polish from the crossover point; keep the crossover solution if it does not succeed.
    Eigen::VectorXd m_polished = m, lambda_polished = lambda;
    const bool polished = newton_on_active(rhs, basis, m_polished, lambda_polished, max_polish, factor, out) &&
                          m_polished.minCoeff() >= 0;
    std::vector<double> outputs(basis.size());
    if (polished) {
      m = m_polished;
      lambda = lambda_polished;
      evaluate(lambda);
    }
    for (std::size_t j = 0; j < basis.size(); ++j) outputs[j] = m_o(basis[j].first, basis[j].second);
    out.converged = true;
    out.duals = lambda;
    out.weights = m;
    out.primal_objective = 0;
    for (std::size_t j = 0; j < basis.size(); ++j) {
      const auto [a, b] = basis[j];
      const double o = outputs[j];
      out.columns.push_back(column_of(a, b, o));
      // cost = sum_y s_y p_y (o - y)^2 = A o^2 - 2 B o + C.
      out.primal_objective += m[Index(j)] * (m_A(a, b) * o * o - 2 * m_B(a, b) * o + m_C(a, b));
    }
    return out;
  }

  /// Newton iterations for a fixed active set; true when the residual fell below roundoff level.
  /// `factor` holds the factorization of G at the starting duals (used by the first step).
  ///
  /// Each step solves \f$G^T \delta\lambda = r\f$, \f$G \delta m + K \delta\lambda = -F\f$ with
  /// \f$K = \mathrm{diag}(0, \sum_T m_T s_T s_T^T / (2 A_T))\f$ (the derivative of the outputs
  /// \f$o_T = (2 B_T + v_T) / (2 A_T)\f$ in sigma). Square G: one LU. Fewer columns than rows
  /// (q < n): with \f$G = [Q_1\, Q_2] [R; 0]\f$, \f$\delta\lambda = Q_1 R^{-T} r + Q_2 z\f$ where the
  /// (n - q)-square system \f$Q_2^T K Q_2 z = -Q_2^T (F + K Q_1 R^{-T} r)\f$ fixes z, then
  /// \f$\delta m = R^{-1} Q_1^T (-F - K \delta\lambda)\f$: one QR instead of an LU of order n + q.
  bool newton_on_active(const Eigen::VectorXd& rhs, const std::vector<std::pair<Index, Index>>& active,
                        Eigen::VectorXd& m, Eigen::VectorXd& lambda, Index max_steps, ActiveFactor& factor,
                        IntervalBarrierResult& out) {
    const Index k = m_k, n = 2 * k, q = Index(active.size()), p = n - q;
    if (q == 0 || p < 0) return false;
    const double low = m_P.low;
    Eigen::MatrixXd S(k, q);
    Eigen::VectorXd A(q), B(q), C(q);
    for (Index j = 0; j < q; ++j) {
      const auto [a, b] = active[std::size_t(j)];
      S.col(j).setConstant(low);
      S.col(j).segment(a, b - a + 1).setOnes();
      A[j] = m_A(a, b);
      B[j] = m_B(a, b);
      C[j] = m_C(a, b);
    }
    const double scale = 1 + rhs.cwiseAbs().maxCoeff();
    Eigen::VectorXd o(q), r(q), F2(n), dm(q), dlambda(n), curvature(q);
    Eigen::MatrixXd G(n, q);
    // K x (only the sigma block of x matters): S (curvature .* (S^T x_sigma)), O(kq).
    auto apply_K = [&](const Eigen::VectorXd& x) {
      Eigen::VectorXd out_k = Eigen::VectorXd::Zero(n);
      out_k.tail(k) = S * (curvature.array() * (S.transpose() * x.tail(k)).array()).matrix();
      return out_k;
    };
    for (Index step = 0;; ++step) {
      const Eigen::VectorXd u = S.transpose() * lambda.head(k);
      const Eigen::VectorXd v = S.transpose() * lambda.tail(k);
      for (Index j = 0; j < q; ++j) {
        const double h = 2 * B[j] + v[j];
        o[j] = h / (2 * A[j]);
        r[j] = C[j] - u[j] - h * h / (4 * A[j]);
        G.col(j).head(k) = S.col(j);
        G.col(j).tail(k) = o[j] * S.col(j);
      }
      F2 = G * m - rhs;
      const double residual = std::max(r.cwiseAbs().maxCoeff(), F2.cwiseAbs().maxCoeff());
      if (!std::isfinite(residual)) return false;
      if (residual <= 1e-14 * scale) return true;
      if (step >= max_steps) return false;
      ++out.polish_steps;
      curvature = m.array() / (2 * A.array());
      if (step > 0) factor.compute(G);
      if (p == 0) {
        // Square: G^T dlambda = r, then G dm = -F2 - K dlambda.
        dlambda = factor.lu.transpose().solve(r);
        dm = factor.lu.solve(Eigen::VectorXd(-F2 - apply_K(dlambda)));
      } else {
        const auto R = factor.qr.matrixQR().topLeftCorner(q, q).template triangularView<Eigen::Upper>();
        const auto Q = factor.qr.householderQ();
        Eigen::VectorXd z(n);
        z.head(q) = R.transpose().solve(r);
        z.tail(p).setZero();
        const Eigen::VectorXd base = Q * z;  // Q_1 R^{-T} r
        Eigen::MatrixXd Q2 = Eigen::MatrixXd::Zero(n, p);
        Q2.bottomRows(p).setIdentity();
        Q2.applyOnTheLeft(Q);
        Eigen::MatrixXd KQ2(n, p);
        for (Index t = 0; t < p; ++t) KQ2.col(t) = apply_K(Q2.col(t));
        const Eigen::MatrixXd small = Q2.transpose() * KQ2;
        const Eigen::FullPivLU<Eigen::MatrixXd> small_lu(small);
        if (small_lu.rank() < p) return false;  // the free directions of lambda are not fixed
        const Eigen::VectorXd free = small_lu.solve(Eigen::VectorXd(-Q2.transpose() * (F2 + apply_K(base))));
        dlambda = base + Q2 * free;
        const Eigen::VectorXd t = Q.transpose() * Eigen::VectorXd(-F2 - apply_K(dlambda));
        dm = R.solve(t.head(q));
      }
      if (!dm.allFinite() || !dlambda.allFinite()) return false;
      m += dm;
      lambda += dlambda;
    }
  }

  const UnbiasedProblem& m_P;
  Index m_k;
  Eigen::MatrixXd m_A, m_B, m_C;  ///< per interval (a, b): sums of s p, s p y, s p y^2
  Eigen::MatrixXd m_quarter_inv_A;  ///< 1 / (4 A) per interval
  Eigen::MatrixXd m_r, m_o;       ///< reduced cost and best output at the last evaluate()
  Eigen::MatrixXd m_r_inv;        ///< 1 / r at the last evaluate()
};

}  // namespace labeldp::detail
