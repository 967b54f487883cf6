/// \file
/// The exact optimal unbiased randomizer with real outputs (mechanisms/unbiased_continuous.hpp,
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
///
/// The interior-point loop is in unbiased_barrier_solve.hpp, the crossover and polish in
/// unbiased_barrier_polish.hpp, the result type in unbiased_barrier_parts.hpp, the
/// zero-probability labels in unbiased_supported_labels.hpp.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/interval_bias.hpp"
#include "labeldp/mechanisms/detail/pattern_gram.hpp"
#include "labeldp/mechanisms/detail/unbiased_barrier_parts.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"
#include "labeldp/mechanisms/detail/unbiased_supported_labels.hpp"

namespace labeldp::detail {

/// The first steps of a warm-started solve (IntervalBarrier::warm_start()) that aim at the
/// recorded iterate's gap instead of Mehrotra's: they re-centre it with the added patterns.
/// Measured with bias_bounded_barrier() over the bench_continuous cases with a bias bound: 4
/// took 4,855 Newton steps in all, 6 took 5,049, 8 took 5,947 (each with the record at 1e-3).
inline constexpr Index kWarmCentringSteps = 4;

/// From this many extra (non-interval) patterns on, the interior point builds their Newton
/// blocks from their runs (PatternGram) instead of dense products (step_and_sweep()).
inline constexpr Index kRunsGramPatterns = 64;

/// Interval-pattern dual barrier and active-set Newton polish for the unbiased problem (outputs
/// on the whole real line). With a bias bound B > 0 the barrier carries the bias rows' slacks
/// (BiasSlacks) and stops at its gap target without the polish (whose rows are equalities): the
/// caller's LP crossover finishes from the candidates.
///
/// Per-interval values live in packed *interval arrays* (Eigen::VectorXd of k(k+1)/2 entries):
/// row a (the intervals starting at label a) holds b = a..k-1 contiguously (slot()). Every step's
/// O(k^2) work is a few streaming passes over such arrays (one sweep for the step, the new point
/// and the Newton matrix; two per Newton direction), each fusing everything that is computed from
/// the same data: per interval the work is a few flops, so the cost is the number of passes and
/// of arrays each reads and writes (at k = 401 an array is 0.6 MB, a k x k matrix 1.3 MB).
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicIntervalBarrier {
 public:
  explicit BasicIntervalBarrier(const UnbiasedProblem& P)
      : m_P(P),
        m_k(P.num_labels()),
        m_A(P.probs, P.low),
        m_B(P.probs.cwiseProduct(P.labels), P.low),
        m_C(P.probs.cwiseProduct(P.labels).cwiseProduct(P.labels), P.low),
        m_quarter_inv_A(num_patterns()),
        m_r(num_patterns()),
        m_o(num_patterns()),
        m_r_inv(num_patterns()),
        m_xS(P.num_labels(), 0),
        m_xGram(P.num_labels()) {
    for_each_interval([&](Index a, Index b, Index j) { m_quarter_inv_A[j] = 0.25 / m_A(a, b); });
  }

  /// Number of interval patterns, k(k+1)/2: the length of an interval array.
  Index num_patterns() const { return m_k * (m_k + 1) / 2; }
  /// The interval patterns and the extra ones (add_patterns()): the length of the state arrays,
  /// whose slots from num_patterns() on hold the extra patterns in the order they were added.
  Index num_columns() const { return num_patterns() + m_xS.cols(); }

  /// Adds patterns that are not intervals (one 0/1 entry per label) to the barrier's columns,
  /// each with a free output like the intervals'. With a bias bound the optimum may need them
  /// (Claim 14 of Badanidiyuru et al. 2023 orders the rows by their means, which a bias bound
  /// lets cross): bias_bounded_barrier() prices every pattern at the barrier's duals and solves
  /// again with those that price out. Each costs O(k) per pass and O(k^2) in the Newton matrix.
  void add_patterns(const std::vector<std::vector<std::uint8_t>>& patterns) {
    const Index q0 = m_xS.cols(), q = q0 + Index(patterns.size()), J = num_patterns();
    m_xS.conservativeResize(m_k, q);
    for (Index i = q0; i < q; ++i)
      for (Index y = 0; y < m_k; ++y) m_xS(y, i) = patterns[std::size_t(i - q0)][std::size_t(y)] ? 1.0 : m_P.low;
    for (const auto& pattern : patterns) m_xGram.add(pattern);
    const Eigen::VectorXd py = m_P.probs.cwiseProduct(m_P.labels);
    m_xB = m_xS.transpose() * py;
    m_xC = m_xS.transpose() * py.cwiseProduct(m_P.labels);
    m_quarter_inv_A.conservativeResize(J + q);
    m_quarter_inv_A.tail(q) = (4 * (m_xS.transpose() * m_P.probs).array()).inverse().matrix();
    m_r.conservativeResize(J + q);
    m_o.conservativeResize(J + q);
    m_r_inv.conservativeResize(J + q);
    m_shift.conservativeResize(q);
    m_shift.tail(q - q0).setZero();
  }

  /// Each solve() records its first iterate whose complementarity gap is at most `gap` times
  /// its dual objective (0: none), once past the warm start's centring steps.
  void record_at(double gap) { m_record_at = gap; }
  /// Whether solve() starts from the last solve's recorded iterate (when there is one) instead
  /// of its usual start. The patterns added since enter with shifted slacks: the pattern's
  /// constraint \f$r_T \ge 0\f$ becomes \f$r_T + \tau_T \ge 0\f$ with \f$\tau_T\f$ just large
  /// enough to hold there, and every step of length \f$\alpha\f$ scales \f$\tau\f$ by
  /// \f$1 - \alpha\f$ (an infeasible start for those constraints only; the Newton system keeps
  /// its form, the shift entering the linear term of each such pattern's reduced cost along a
  /// step). The first kWarmCentringSteps steps aim at the recorded gap (pure centring), the
  /// others are Mehrotra's; the solve ends only once the shifts are negligible.
  void warm_start(bool on) { m_use_warm = on; }
  /// The largest shift \f$\tau_T\f$ left after the last solve (0: every constraint holds as
  /// written).
  double max_shift() const { return m_shift.size() > 0 ? m_shift.maxCoeff() : 0.0; }

  /// Reduced costs r and best outputs o of every interval at the duals (pi, sigma); returns the
  /// smallest r.
  double evaluate(const Eigen::VectorXd& duals) {
    const IntervalDot U(duals.head(m_k), m_P.low), V(duals.tail(m_k), m_P.low);
    double min_r = std::numeric_limits<double>::infinity();
    for_each_interval([&](Index a, Index b, Index j) { min_r = std::min(min_r, evaluate_interval(U, V, a, b, j)); });
    if (m_xS.cols() > 0) {
      const Eigen::VectorXd u = m_xS.transpose() * duals.head(m_k), v = m_xS.transpose() * duals.tail(m_k);
      for (Index i = 0; i < m_xS.cols(); ++i) min_r = std::min(min_r, evaluate_extra(u[i], v[i], i));
    }
    return min_r;
  }

  /// The interior-point phase then the active-set polish. `gap_target`: the interior-point
  /// phase stops when the complementarity gap \f$\sum_T m_T r_T\f$ is below it times the dual
  /// objective and the primal rows hold to 1e-9. Defined in unbiased_barrier_solve.hpp.
  IntervalBarrierResult solve(double gap_target, Index max_iterations = 200, Index max_polish = 30);

 private:
  /// Expected squared loss (scaled units) of debiased randomized response on the labels: truth
  /// with probability q = 1 / (1 + (k - 1) e^-eps), each other label with c = q e^-eps, each
  /// output j reported as \f$\phi_j = (y_j - c \sum_y y) / (q - c)\f$ (unbiased). An upper bound
  /// on the optimum that scales with the labels and eps: the interior point's dual start.
  double debiased_rr_scaled_loss() const {
    const double q = 1 / (1 + double(m_k - 1) * m_P.low), c = m_P.low * q;
    const Eigen::ArrayXd phi = (m_P.labels.array() - c * m_P.labels.sum()) / (q - c);
    const Eigen::ArrayXd second_moment = (q - c) * phi.square() + c * phi.square().sum();
    return m_P.probs.dot((second_moment - m_P.labels.array().square()).matrix());
  }

  /// Slot of interval [a, b] in an interval array: rows 0..a-1 hold k + (k-1) + ... + (k-a+1)
  /// entries.
  Index slot(Index a, Index b) const { return a * m_k - a * (a - 1) / 2 + (b - a); }

  /// Calls f(a, b, slot(a, b)) for every interval, in storage order.
  template <typename F>
  void for_each_interval(F&& f) const {
    for (Index a = 0, j = 0; a < m_k; ++a)
      for (Index b = a; b < m_k; ++b, ++j) f(a, b, j);
  }

  /// Reduced cost r, best output o and 1 / r of the pattern in slot j with sums B_T, C_T at the
  /// duals whose pattern sums are u (pi) and v (sigma); returns r.
  double evaluate_at(double u, double v, double B, double C, Index j) {
    const double h = 2 * B + v;
    const double scaled = h * m_quarter_inv_A[j];
    m_o[j] = 2 * scaled;
    m_r[j] = C - u - h * scaled;
    m_r_inv[j] = 1 / m_r[j];
    return m_r[j];
  }
  /// evaluate_at() for interval [a, b] (slot j) with the duals' interval sums U (pi), V (sigma).
  double evaluate_interval(const IntervalDot& U, const IntervalDot& V, Index a, Index b, Index j) {
    return evaluate_at(U(a, b), V(a, b), m_B(a, b), m_C(a, b), j);
  }
  /// evaluate_at() for extra pattern i.
  /// evaluate_extra(): the reduced cost plus the pattern's shift (warm_start()).
  double evaluate_extra(double u, double v, Index i) {
    const Index j = num_patterns() + i;
    evaluate_at(u, v, m_xB[i], m_xC[i], j);
    if (m_shift[i] != 0) {
      m_r[j] += m_shift[i];
      m_r_inv[j] = 1 / m_r[j];
    }
    return m_r[j];
  }

  /// Pattern sums of the two halves (pi, sigma parts) of a dual step: interval sums, and the
  /// extra patterns' sums (xS: their staircase vectors).
  struct StepSums {
    StepSums(const Eigen::VectorXd& step, double low, const Eigen::MatrixXd& xS)
        : du(step.head(step.size() / 2), low),
          dv(step.tail(step.size() / 2), low),
          xdu(xS.transpose() * step.head(step.size() / 2)),
          xdv(xS.transpose() * step.tail(step.size() / 2)) {}
    IntervalDot du, dv;
    Eigen::VectorXd xdu, xdv;
  };
  StepSums sums_of(const Eigen::VectorXd& step) const { return StepSums(step, m_P.low, m_xS); }

  /// Calls f(a, b, slot) for every interval (for_each_interval()), then f(-1, i, slot) for
  /// every extra pattern i.
  template <typename F>
  void for_each_pattern(F&& f) const {
    for_each_interval(f);
    for (Index i = 0, J = num_patterns(); i < m_xS.cols(); ++i) f(Index(-1), i, J + i);
  }

  /// Along lambda + t * step, r_T(t) = r_T - t q1_T - t^2 q2_T exactly, with
  /// q1 = du + o dv (the linear change) and q2 = dv^2 / (4 A) >= 0. An extra pattern's shift
  /// tau shrinks to (1 - t) tau along the step, so its q1 has tau added.
  struct Terms {
    double q1, q2;
  };
  /// (a = -1: extra pattern b.)
  Terms terms(const StepSums& s, Index a, Index b, Index j) const {
    const double du = a < 0 ? s.xdu[b] : s.du(a, b), dv = a < 0 ? s.xdv[b] : s.dv(a, b);
    return {du + m_o[j] * dv + (a < 0 ? m_shift[b] : 0.0), dv * dv * m_quarter_inv_A[j]};
  }

  /// Calls row(a, j) for every row a of the interval arrays (intervals [a, b], b = a..k-1, at
  /// slots j..j+k-1-a), in storage order.
  template <typename Row>
  void for_each_row(Row&& row) const {
    for (Index a = 0, j = 0; a < m_k; j += m_k - a, ++a) row(a, j);
  }

  /// Accumulates \f$S x\f$ for interval weights x fed row by row:
  /// \f$(S x)_y = \ell \sum x + (1 - \ell) \sum_{a \le y \le b} x(a, b)\f$, from the sums of x by
  /// first and by one-past-last label.
  class PatternSum {
   public:
    explicit PatternSum(Index k) : m_starts(Eigen::VectorXd::Zero(k)), m_ends(Eigen::VectorXd::Zero(k + 1)) {}
    /// Adds x(a, b) = row[b] for b = a..k-1 (a short loop over an L1-resident row buffer, so the
    /// passes over the interval arrays keep their own loops simple).
    void add_row(Index a, const Eigen::VectorXd& row) {
      const Index k = m_starts.size();
      double sum = 0;
      for (Index b = a; b < k; ++b) {
        sum += row[b];
        m_ends[b + 1] += row[b];
      }
      m_starts[a] = sum;
    }
    Eigen::VectorXd result(double low) const {
      const Index k = m_starts.size();
      const double total = m_starts.sum();
      Eigen::VectorXd out(k);
      double run = 0;
      for (Index y = 0; y < k; ++y) {
        run += m_starts[y] - m_ends[y];
        out[y] = low * total + (1 - low) * run;
      }
      return out;
    }

   private:
    Eigen::VectorXd m_starts, m_ends;
  };

  /// Builds the lower triangle of the 2k x 2k matrix with blocks \f$\sum_T d_i(T) s_T s_T^T\f$
  /// (i = 1: top left, 2: off-diagonal, 3: bottom right) from the weights d_i fed row by row.
  ///
  /// \f$s_T s_T^T\f$ for T = [a, b] is \f$\ell^2\f$ plus \f$\ell (1 - \ell)\f$ times the
  /// indicators of \f$y \in T\f$ and \f$y' \in T\f$ plus \f$(1 - \ell)^2\f$ times that of
  /// \f$a \le \min(y, y'), b \ge \max(y, y')\f$, so block i is
  /// \f$\ell^2 D + \ell (1 - \ell) (Q(u, u) + Q(v, v)) + (1 - \ell)^2 Q(u, v)\f$ with D the total
  /// weight and \f$Q(u, v) = \sum_{a \le u, b \ge v} d(a, b)\f$ (u <= v), a two-dimensional
  /// cumulative sum. Row a adds d(a, .) to the column sums t(b) (then over a' <= a), whose
  /// suffix sums over b >= v are Q(a, v): column a of the lower triangle, written as it comes.
  /// finish() adds the diagonal terms (known only at the end) and mirrors the off-diagonal
  /// block, which the lower triangle holds whole.
  class NewtonBlocks {
   public:
    NewtonBlocks(Index k, Eigen::MatrixXd& H) : m_t(Eigen::MatrixXd::Zero(k, 3)), m_H(H) {}
    /// Adds row a (rows in ascending order): d_i(a, b) = d[i][b] for b = a..k-1.
    void add_row(Index a, const Eigen::VectorXd& d1, const Eigen::VectorXd& d2, const Eigen::VectorXd& d3) {
      const Index k = m_t.rows();
      double* t1 = m_t.col(0).data();
      double* t2 = m_t.col(1).data();
      double* t3 = m_t.col(2).data();
      double s1 = 0, s2 = 0, s3 = 0;
      for (Index b = k - 1; b >= a; --b) {
        s1 += (t1[b] += d1[b]);
        s2 += (t2[b] += d2[b]);
        s3 += (t3[b] += d3[b]);
        m_H(b, a) = s1;
        m_H(k + b, a) = s2;
        m_H(k + b, k + a) = s3;
      }
    }
    void finish(double low) {
      const Index k = m_t.rows();
      const double lh = low * (1 - low), h2 = (1 - low) * (1 - low);
      auto finish_block = [&](Eigen::Ref<Eigen::MatrixXd> block, double total) {
        const Eigen::VectorXd diagonal = block.diagonal();
        const double l2 = low * low * total;
        for (Index u = 0; u < k; ++u)
          for (Index v = u; v < k; ++v) block(v, u) = l2 + lh * (diagonal[u] + diagonal[v]) + h2 * block(v, u);
      };
      finish_block(m_H.topLeftCorner(k, k), m_t.col(0).sum());
      finish_block(m_H.bottomLeftCorner(k, k), m_t.col(1).sum());
      finish_block(m_H.bottomRightCorner(k, k), m_t.col(2).sum());
      auto off = m_H.bottomLeftCorner(k, k);
      off.template triangularView<Eigen::StrictlyUpper>() = off.transpose();
    }

   private:
    Eigen::MatrixXd m_t;  ///< column sums of d_1, d_2, d_3 over the rows so far
    Eigen::MatrixXd& m_H;
  };

  /// What the loop needs from the sweep: the gap \f$\sum_T m_T r_T\f$, the smallest r_T and
  /// the primal rows' left-hand sides \f$S m\f$, \f$S (m o)\f$.
  struct SweepResult {
    double gap, min_r;
    Eigen::VectorXd Sm, Smo;
  };

  /// Column j's terms at weight mj: its primal rows' weights (mj, mj o_j) and its Newton blocks
  /// (w, w o_j, w o_j^2 + 2 mj / (4 A_j)) with w = mj / r_j (interval and extra patterns alike).
  void column_terms(Index j, double mj, double& x, double& xo, double& e1, double& e2, double& e3) const {
    const double o = m_o[j], w = mj * m_r_inv[j];
    x = mj;
    xo = mj * o;
    e1 = w;
    e2 = w * o;
    e3 = w * o * o + 2 * mj * m_quarter_inv_A[j];
  }

  /// One pass for the step and everything at the new point: `next` = m + alpha dm, the reduced
  /// costs and outputs at `lambda` (evaluate()), the gap and primal rows, and the Newton matrix
  /// \f$\sum_T (m_T / r_T) g_T g_T^T + \mathrm{diag}(0, \sum_T m_T s_T s_T^T / (2 A_T))\f$ with
  /// \f$g_T = (s_T, o_T s_T)\f$ into H (lower triangle), built even if the loop then stops
  /// (one pass's work) because fusing it saves re-reading four arrays.
  SweepResult step_and_sweep(const Eigen::VectorXd& lambda, const Eigen::VectorXd& m, double alpha,
                             const Eigen::VectorXd& dm, Eigen::VectorXd& next, Eigen::MatrixXd& H) {
    const Index k = m_k;
    const IntervalDot U(lambda.head(k), m_P.low), V(lambda.tail(k), m_P.low);
    PatternSum Sm(k), Smo(k);
    NewtonBlocks blocks(k, H);
    Eigen::VectorXd x1(k), x2(k), d1(k), d2(k), d3(k);  // one row's values
    double gap = 0, min_r = std::numeric_limits<double>::infinity();
    for_each_row([&](Index a, Index j0) {
      double row_gap = 0, row_min = min_r;
      for (Index b = a, j = j0; b < k; ++b, ++j) {
        const double mj = m[j] + alpha * dm[j];
        next[j] = mj;
        const double r = evaluate_interval(U, V, a, b, j);
        row_gap += mj * r;
        row_min = std::min(row_min, r);
        column_terms(j, mj, x1[b], x2[b], d1[b], d2[b], d3[b]);
      }
      gap += row_gap;
      min_r = row_min;
      Sm.add_row(a, x1);
      Smo.add_row(a, x2);
      blocks.add_row(a, d1, d2, d3);
    });
    blocks.finish(m_P.low);
    SweepResult out{gap, min_r, Sm.result(m_P.low), Smo.result(m_P.low)};
    const Index q = m_xS.cols();
    if (q == 0) return out;
    // The extra patterns: dense sums, and their rank-one terms in the Newton matrix.
    const Eigen::VectorXd u = m_xS.transpose() * lambda.head(k), v = m_xS.transpose() * lambda.tail(k);
    Eigen::VectorXd xm(q), xmo(q), e1(q), e2(q), e3(q);
    for (Index i = 0, j = num_patterns(); i < q; ++i, ++j) {
      const double mj = m[j] + alpha * dm[j];
      next[j] = mj;
      const double r = evaluate_extra(u[i], v[i], i);
      out.gap += mj * r;
      out.min_r = std::min(out.min_r, r);
      column_terms(j, mj, xm[i], xmo[i], e1[i], e2[i], e3[i]);
    }
    out.Sm.noalias() += m_xS * xm;
    out.Smo.noalias() += m_xS * xmo;
    // Only the lower triangle of H is read (LLT). From kRunsGramPatterns extra patterns on, the
    // blocks S diag(e_i) S^T come from the patterns' runs (PatternGram), O(k^2) each: as dense
    // k x q x k products they were, at q ~ 500 and k = 401, as costly as the Cholesky
    // factorization. Below, the dense products (the diagonal blocks' on their lower triangles):
    // cheaper at a few patterns, and the iterates of the few-round solves stay bit for bit
    // (lognormal k = 200, B = 20, eps 1 took 913 Newton steps instead of 260 with the runs'
    // roundoff from the first round).
    if (q >= kRunsGramPatterns) {
      m_xGram.add_to(e1, m_P.low, H.topLeftCorner(k, k), false);
      m_xGram.add_to(e2, m_P.low, H.bottomLeftCorner(k, k), true);
      m_xGram.add_to(e3, m_P.low, H.bottomRightCorner(k, k), false);
      return out;
    }
    const Eigen::MatrixXd scaled1 = m_xS * e1.asDiagonal(), scaled3 = m_xS * e3.asDiagonal();
    H.topLeftCorner(k, k).template triangularView<Eigen::Lower>() += scaled1 * m_xS.transpose();
    H.bottomLeftCorner(k, k).noalias() += m_xS * e2.asDiagonal() * m_xS.transpose();
    H.bottomRightCorner(k, k).template triangularView<Eigen::Lower>() += scaled3 * m_xS.transpose();
    return out;
  }

  /// The right-hand side of the Newton system whose complementarity rows are
  /// r_T dm_T + m_T dr_T = c_T - m_T r_T (primal rows: the full residual), with the centring
  /// terms c_T = centring(a, b, j) (stored into `c` for newton_direction()): eliminating dm
  /// leaves rhs - (S (c / r), S (o c / r)), summed in the same pass.
  template <typename Centring>
  Eigen::VectorXd centred_target(const Eigen::VectorXd& rhs, Centring&& centring, Eigen::VectorXd& c) const {
    const Index k = m_k;
    PatternSum St(k), So(k);
    Eigen::VectorXd x1(k), x2(k);  // one row's values
    for_each_row([&](Index a, Index j0) {
      for (Index b = a, j = j0; b < k; ++b, ++j) {
        const double cj = centring(a, b, j);
        c[j] = cj;
        x1[b] = cj * m_r_inv[j];
        x2[b] = x1[b] * m_o[j];
      }
      St.add_row(a, x1);
      So.add_row(a, x2);
    });
    Eigen::VectorXd target(rhs.size());
    target.head(k) = rhs.head(k) - St.result(m_P.low);
    target.tail(k) = rhs.tail(k) - So.result(m_P.low);
    const Index q = m_xS.cols();
    if (q > 0) {
      Eigen::VectorXd y1(q), y2(q);
      for (Index i = 0, j = num_patterns(); i < q; ++i, ++j) {
        c[j] = centring(Index(-1), i, j);
        y1[i] = c[j] * m_r_inv[j];
        y2[i] = y1[i] * m_o[j];
      }
      target.head(k).noalias() -= m_xS * y1;
      target.tail(k).noalias() -= m_xS * y2;
    }
    return target;
  }

  /// The primal part of the Newton direction with dual part `dl` and centring terms `c`
  /// (nullptr: zero), \f$dm_T = (c_T + m_T q1_T) / r_T - m_T\f$, into `dm`; returns the largest
  /// feasible step: r_T - t q1_T - t^2 q2_T > 0 and m_T + t dm_T >= 0 for every T. One pass;
  /// `visit(j, terms, dm_j)` sees each interval's terms (the predictor sums its gap cubic).
  template <typename Visit = void (*)(Index, const Terms&, double)>
  double newton_direction(
      const Eigen::VectorXd& dl, const Eigen::VectorXd* c, const Eigen::VectorXd& m, Eigen::VectorXd& dm,
      Visit&& visit = [](Index, const Terms&, double) {}) const {
    const StepSums sums = sums_of(dl);
    double t_dual = std::numeric_limits<double>::infinity(), t_primal = t_dual;
    for_each_pattern([&](Index a, Index b, Index j) {
      const Terms t = terms(sums, a, b, j);
      const double r = m_r[j], mj = m[j];
      const double dmj = ((c ? (*c)[j] : 0.0) + mj * t.q1) * m_r_inv[j] - mj;
      dm[j] = dmj;
      visit(j, t, dmj);
      // Most intervals do not block the current step: r(t_dual) > 0 skips the root.
      if ((t.q2 > 0 || t.q1 > 0) && !(r - t_dual * (t.q1 + t_dual * t.q2) > 0)) {
        const double root = t.q2 > 0 ? 2 * r / (t.q1 + std::sqrt(t.q1 * t.q1 + 4 * t.q2 * r))  // cancellation-free
                                     : r / t.q1;
        t_dual = std::min(t_dual, root);
      }
      if (dmj < 0 && mj + t_primal * dmj < 0) t_primal = -mj / dmj;
    });
    return std::min(t_dual, t_primal);
  }

  StaircaseColumn column_of(Index a, Index b, double output) const {
    StaircaseColumn c;
    c.pattern.assign(std::size_t(m_k), 0);
    for (Index i = a; i <= b; ++i) c.pattern[std::size_t(i)] = 1;
    c.output = output;
    return c;
  }

  /// The staircase vectors s_T of the intervals `active`, one per column (k x q).
  Eigen::MatrixXd staircase_block(const std::vector<std::pair<Index, Index>>& active) const {
    Eigen::MatrixXd S(m_k, Index(active.size()));
    for (Index j = 0; j < S.cols(); ++j) {
      const auto [a, b] = active[std::size_t(j)];
      S.col(j).setConstant(m_P.low);
      S.col(j).segment(a, b - a + 1).setOnes();
    }
    return S;
  }

  /// G for the intervals `active` (column j = (s_T, o_T s_T)) at the outputs of the last evaluate().
  Eigen::MatrixXd active_matrix(const std::vector<std::pair<Index, Index>>& active) const {
    const Index k = m_k;
    const Eigen::MatrixXd S = staircase_block(active);
    Eigen::MatrixXd G(2 * k, S.cols());
    G.topRows(k) = S;
    for (Index j = 0; j < S.cols(); ++j)
      G.col(j).tail(k) = m_o[slot(active[std::size_t(j)].first, active[std::size_t(j)].second)] * S.col(j);
    return G;
  }

  // The crossover and the active-set Newton polish (defined in unbiased_barrier_polish.hpp).
  void polish(const Eigen::VectorXd& rhs, Eigen::VectorXd lambda, const Eigen::VectorXd& weights, Index max_polish,
              IntervalBarrierResult& out);
  bool newton_with_drops(const Eigen::VectorXd& rhs, std::vector<std::pair<Index, Index>>& basis, Eigen::VectorXd& m,
                         Eigen::VectorXd& lambda, Index max_polish, ActiveFactor& factor, IntervalBarrierResult& out);
  void write_solution(const std::vector<std::pair<Index, Index>>& basis, const Eigen::VectorXd& m,
                      const Eigen::VectorXd& lambda, IntervalBarrierResult& out);
  bool newton_on_active(const Eigen::VectorXd& rhs, const std::vector<std::pair<Index, Index>>& active,
                        Eigen::VectorXd& m, Eigen::VectorXd& lambda, Index max_steps, ActiveFactor& factor,
                        IntervalBarrierResult& out);

  const UnbiasedProblem& m_P;
  Index m_k;
  IntervalDot m_A, m_B, m_C;        ///< per interval (a, b): sums of s p, s p y, s p y^2
  Eigen::VectorXd m_quarter_inv_A;  ///< 1 / (4 A) per interval (interval array)
  Eigen::VectorXd m_r, m_o;         ///< reduced cost and best output at the last evaluate()
  Eigen::VectorXd m_r_inv;          ///< 1 / r at the last evaluate()
  // The extra patterns (add_patterns()): staircase vectors (k x q) and their sums of s p y, s p y^2.
  Eigen::MatrixXd m_xS;
  Eigen::VectorXd m_xB, m_xC;
  PatternGram m_xGram;      ///< the extra patterns' runs, for their Newton blocks
  Eigen::VectorXd m_shift;  ///< the extra patterns' slack shifts tau (warm_start())
  /// The iterate record_at() keeps: duals, weights, shifts, the bias pairs and the gap.
  struct Recorded {
    bool valid = false;
    Eigen::VectorXd lambda, m, shift;
    BiasSlacks bias;
    double gap = 0;
  } m_recorded;
  double m_record_at = 0;
  bool m_use_warm = false;
};

/// IntervalBarrier: BasicIntervalBarrier<> (see there).
using IntervalBarrier = BasicIntervalBarrier<>;

}  // namespace labeldp::detail

// The member functions defined out of the class.
#include "labeldp/mechanisms/detail/unbiased_barrier_polish.hpp"
#include "labeldp/mechanisms/detail/unbiased_barrier_solve.hpp"
