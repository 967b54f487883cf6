/// \file
/// Internals of the production RR-on-Bins solver (Ghazi et al., ICLR 2023, Algorithm 2 made
/// fast): bin-cost models for the built-in losses and for user losses, the 1-D segmentation DP
/// without bin count, and Dinkelbach's method on the ratio N(Phi) / (d - 1 + e^eps).
///
/// Scaling. A bin S costs \f$L(S) = \min_o \sum_y p_y (1 + W [y \in S]) \ell(o, y)\f$ with
/// \f$W = e^\varepsilon - 1\f$, and the expected loss of the partition is
/// \f$\sum_S L(S) / (d + W)\f$ (the paper's \f$A[k][d] / (d - 1 + e^\varepsilon)\f$). We use the
/// weights \f$\alpha p_y + \beta p_y [y \in S]\f$ with \f$(\alpha, \beta) = (1, W)\f$ when
/// \f$W \le 1\f$ and \f$(1/W, 1)\f$ otherwise, and the denominator \f$\alpha d + \beta\f$: the
/// same ratio (numerator and denominator are both multiplied by \f$\alpha\f$), but no weight
/// exceeds 1, so large eps neither overflows nor swamps the in-bin terms.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "labeldp/core/loss.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"

namespace labeldp::detail {

/// Weights (alpha, beta) of the scaled bin cost, see the file comment.
struct RROnBinsScale {
  double alpha;
  double beta;
  static RROnBinsScale from_eps(double eps) {
    const double w = std::expm1(eps);
    if (w <= 1) return {1.0, w};
    return {1.0 / w, 1.0};  // 1/inf = 0 for eps beyond the double range of e^eps
  }
};

/// Prefix sums \f$\sum_{j < m} p_j f(y_j)\f$ accumulated in long double and stored in Scalar,
/// so every stored prefix carries one rounding only (the differences taken by the cost models
/// then lose at most a few ulps of the prefix magnitude).
template <typename Scalar, typename F>
Eigen::Array<Scalar, Eigen::Dynamic, 1> prefix_sums(const FinitePrior<Scalar>& prior, F f) {
  const Index k = prior.size();
  Eigen::Array<Scalar, Eigen::Dynamic, 1> s(k + 1);
  long double acc = 0;
  s[0] = 0;
  for (Index j = 0; j < k; ++j) {
    acc += static_cast<long double>(prior.probability(j)) * static_cast<long double>(f(prior.value(j)));
    s[j + 1] = static_cast<Scalar>(acc);
  }
  return s;
}

/// Squared loss: the bin's output is the weighted mean, its cost
/// \f$w_2 - w_1^2 / w_0\f$ from prefix sums of \f$p, p\,y, p\,y^2\f$ (values centered at the prior
/// mean to keep \f$w_2\f$ and \f$w_1^2/w_0\f$ small). O(1) per bin.
template <typename Scalar>
class SquaredBinCost {
 public:
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  SquaredBinCost(const FinitePrior<Scalar>& prior, RROnBinsScale s) : m_k(prior.size()) {
    long double mean = 0;
    for (Index j = 0; j < m_k; ++j)
      mean += static_cast<long double>(prior.probability(j)) * static_cast<long double>(prior.value(j));
    m_center = static_cast<Scalar>(mean);
    const Scalar c = m_center;
    const Scalar beta = Scalar(s.beta), alpha = Scalar(s.alpha);
    const Array p0 = prefix_sums(prior, [](Scalar) { return Scalar(1); });
    const Array p1 = prefix_sums(prior, [c](Scalar y) { return y - c; });
    const Array p2 = prefix_sums(prior, [c](Scalar y) { return (y - c) * (y - c); });
    m_t0 = beta * p0;
    m_t1 = beta * p1;
    m_t2 = beta * p2;
    m_a0 = alpha * p0[m_k];
    m_a1 = alpha * p1[m_k];
    m_a2 = alpha * p2[m_k];
    m_alpha = alpha;
    m_beta = beta;
    m_p = prior.probabilities().array();
    m_yc = prior.values().array() - c;
  }

  Index size() const { return m_k; }

  /// The bin's cost summed directly over its values (O(bin size)): the in-bin part
  /// \f$\beta \sum_S p (y - o)^2\f$ vanishes for a single value and large eps makes it dominate
  /// the comparison, where the prefix-sum difference would leave only rounding noise.
  Scalar accurate_cost(Index a, Index b) const {
    const Scalar oc = output(a, b) - m_center;
    Scalar in_bin = 0;
    for (Index j = a; j < b; ++j) in_bin += m_p[j] * (m_yc[j] - oc) * (m_yc[j] - oc);
    return m_a2 - 2 * oc * m_a1 + oc * oc * m_a0 + m_beta * in_bin;
  }

  /// Cost of the bin [a, b) (0-based, half-open).
  Scalar cost(Index a, Index b) const {
    const Scalar w0 = m_a0 + (m_t0[b] - m_t0[a]);
    const Scalar w1 = m_a1 + (m_t1[b] - m_t1[a]);
    const Scalar w2 = m_a2 + (m_t2[b] - m_t2[a]);
    return w2 - w1 * w1 / w0;
  }

  /// Optimal output of the bin [a, b): the weighted mean.
  Scalar output(Index a, Index b) const {
    const Scalar w0 = m_a0 + (m_t0[b] - m_t0[a]);
    const Scalar w1 = m_a1 + (m_t1[b] - m_t1[a]);
    return m_center + w1 / w0;
  }

  /// \f$F[i] = \min_{r < i} F[r] + L([r, i)) - c\f$ for i = 1..k, F[0] = 0; `arg[i]` = the best r
  /// (the smallest among exact ties). The candidates of one i are evaluated in blocks by Eigen's
  /// vectorized array expressions, with the rewrite \f$F[r] + w_2 - w_1^2/w_0 =
  /// (A_2 + T_2[i]) + (F[r] - T_2[r]) - w_1^2/w_0\f$. Division is the slow part, so a block is
  /// first screened without it: since \f$w_0 > 0\f$, a candidate beats the current best b only
  /// if \f$(v - b) w_0 \le w_1^2\f$ (v the part before the division). Seeded with the previous
  /// row's best start, few blocks pass the screen and get the divisions.
  void dp(Scalar c, std::vector<Scalar>& F, std::vector<Index>& arg) const {
    constexpr Index kBlock = 256;
    F.assign(std::size_t(m_k + 1), Scalar(0));
    arg.assign(std::size_t(m_k + 1), Index(0));
    Array u(m_k + 1);  // F[r] - T2[r]
    u[0] = 0;
    Array buf(kBlock);
    for (Index i = 1; i <= m_k; ++i) {
      const Scalar c0 = m_a0 + m_t0[i], c1 = m_a1 + m_t1[i], kk = m_a2 + m_t2[i] - c;
      auto exact = [&](Index r) {
        const Scalar w1 = c1 - m_t1[r];
        return (kk + u[r]) - w1 * w1 / (c0 - m_t0[r]);
      };
      Index best_r = i - 1;
      Scalar best = exact(best_r);
      if (i > 1) {
        const Index r = arg[std::size_t(i - 1)];
        const Scalar v = exact(r);
        if (v < best || (v == best && r < best_r)) best = v, best_r = r;
      }
      for (Index r0 = 0; r0 < i; r0 += kBlock) {
        const Index n = std::min(kBlock, i - r0);
        const Scalar screen =
            ((kk - best + u.segment(r0, n)) * (c0 - m_t0.segment(r0, n)) - (c1 - m_t1.segment(r0, n)).square())
                .minCoeff();
        if (!(screen <= 0)) continue;
        buf.head(n) = (kk + u.segment(r0, n)) - (c1 - m_t1.segment(r0, n)).square() / (c0 - m_t0.segment(r0, n));
        const Scalar m = buf.head(n).minCoeff();
        if (m <= best) {
          Index j = 0;
          while (buf[j] != m) ++j;
          if (m < best || r0 + j < best_r) best = m, best_r = r0 + j;
        }
      }
      F[std::size_t(i)] = best;
      arg[std::size_t(i)] = best_r;
      u[i] = best - m_t2[i];
    }
  }

 private:
  Index m_k;
  Scalar m_center = 0;
  Array m_t0, m_t1, m_t2;
  Scalar m_a0 = 0, m_a1 = 0, m_a2 = 0;
  Scalar m_alpha = 0, m_beta = 0;
  Array m_p, m_yc;
};

/// Poisson log loss \f$o - y \ln o\f$: the bin's output is the weighted mean \f$w_1/w_0\f$ (as for
/// squared loss) and its cost \f$w_0 o - w_1 \ln o = w_1 (1 - \ln(w_1/w_0))\f$. O(1) per bin.
/// Requires labels >= 0 and a positive prior mean (a prior concentrated on 0 is handled by the
/// caller), so that \f$w_1 > 0\f$ for every bin.
template <typename Scalar>
class PoissonBinCost {
 public:
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  PoissonBinCost(const FinitePrior<Scalar>& prior, RROnBinsScale s) : m_k(prior.size()) {
    const Scalar beta = Scalar(s.beta), alpha = Scalar(s.alpha);
    const Array p0 = prefix_sums(prior, [](Scalar) { return Scalar(1); });
    const Array p1 = prefix_sums(prior, [](Scalar y) { return y; });
    m_t0 = beta * p0;
    m_t1 = beta * p1;
    m_a0 = alpha * p0[m_k];
    m_a1 = alpha * p1[m_k];
  }

  Index size() const { return m_k; }

  Scalar cost(Index a, Index b) const {
    const Scalar w0 = m_a0 + (m_t0[b] - m_t0[a]);
    const Scalar w1 = m_a1 + (m_t1[b] - m_t1[a]);
    return w1 * (Scalar(1) - std::log(w1 / w0));
  }
  /// No cancellation to avoid: the Poisson cost does not vanish on a single value.
  Scalar accurate_cost(Index a, Index b) const { return cost(a, b); }

  Scalar output(Index a, Index b) const {
    const Scalar w0 = m_a0 + (m_t0[b] - m_t0[a]);
    const Scalar w1 = m_a1 + (m_t1[b] - m_t1[a]);
    return w1 / w0;
  }

  /// Same DP as SquaredBinCost::dp(), with Eigen's vectorized logarithm.
  void dp(Scalar c, std::vector<Scalar>& F, std::vector<Index>& arg) const {
    constexpr Index kBlock = 512;
    F.assign(std::size_t(m_k + 1), Scalar(0));
    arg.assign(std::size_t(m_k + 1), Index(0));
    Array f(m_k + 1);
    f[0] = 0;
    Array buf(kBlock), w1(kBlock);
    for (Index i = 1; i <= m_k; ++i) {
      const Scalar c0 = m_a0 + m_t0[i], c1 = m_a1 + m_t1[i];
      Scalar best = std::numeric_limits<Scalar>::infinity();
      Index best_r = 0;
      for (Index r0 = 0; r0 < i; r0 += kBlock) {
        const Index n = std::min(kBlock, i - r0);
        w1.head(n) = c1 - m_t1.segment(r0, n);
        buf.head(n) =
            (f.segment(r0, n) - c) + w1.head(n) * (Scalar(1) - (w1.head(n) / (c0 - m_t0.segment(r0, n))).log());
        const Scalar m = buf.head(n).minCoeff();
        if (m < best) {
          best = m;
          Index j = 0;
          while (buf[j] != m) ++j;
          best_r = r0 + j;
        }
      }
      F[std::size_t(i)] = best;
      arg[std::size_t(i)] = best_r;
      f[i] = best;
    }
  }

 private:
  Index m_k;
  Array m_t0, m_t1;
  Scalar m_a0 = 0, m_a1 = 0;
};

/// Lower envelope \f$\min_r a_r - s_r x\f$ of lines added in order of non-decreasing slope
/// \f$s_r\f$ and queried at non-decreasing x (the monotone convex-hull trick: O(1) amortized per
/// line and query), in long double so that the intersection tests see the lines' differences.
class MonotoneEnvelope {
 public:
  void clear() {
    m_lines.clear();
    m_front = 0;
  }
  void add(long double a, long double s) {
    if (!m_lines.empty() && m_lines.back().s == s) {
      if (m_lines.back().a <= a) return;
      m_lines.pop_back();
    }
    while (m_lines.size() >= 2) {
      const Line& l1 = m_lines[m_lines.size() - 2];
      const Line& l2 = m_lines.back();
      if ((a - l1.a) * (l2.s - l1.s) > (l2.a - l1.a) * (s - l1.s)) break;
      m_lines.pop_back();
    }
    m_lines.push_back(Line{a, s});
    m_front = std::min(m_front, m_lines.size() - 1);
  }
  /// The envelope at any x (binary search over the hull, O(log lines); no order required).
  long double value_at(long double x) const {
    std::size_t lo = 0, hi = m_lines.size() - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (m_lines[mid + 1].a - m_lines[mid + 1].s * x <= m_lines[mid].a - m_lines[mid].s * x)
        lo = mid + 1;
      else
        hi = mid;
    }
    return m_lines[lo].a - m_lines[lo].s * x;
  }
  /// The envelope at x, not smaller than the x of the previous call (O(1) amortized).
  long double query(long double x) {
    while (m_front + 1 < m_lines.size() &&
           m_lines[m_front + 1].a - m_lines[m_front + 1].s * x <= m_lines[m_front].a - m_lines[m_front].s * x)
      ++m_front;
    return m_lines[m_front].a - m_lines[m_front].s * x;
  }

 private:
  struct Line {
    long double a, s;
  };
  std::vector<Line> m_lines;
  std::size_t m_front = 0;
};

/// Absolute loss: the bin's output is the weighted median (the smallest value at which the
/// cumulative weight reaches half the total, the convention of AbsoluteLoss::minimize), its cost
/// from prefix sums of \f$p\f$ and \f$p\,y\f$ in O(1) once the median is known (binary search,
/// O(log k); used outside the DP only).
///
/// The DP needs no median at all (see dp()).
template <typename Scalar>
class AbsoluteBinCost {
 public:
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  AbsoluteBinCost(const FinitePrior<Scalar>& prior, RROnBinsScale s)
      : m_k(prior.size()), m_alpha(Scalar(s.alpha)), m_beta(Scalar(s.beta)) {
    long double mean = 0;
    for (Index j = 0; j < m_k; ++j)
      mean += static_cast<long double>(prior.probability(j)) * static_cast<long double>(prior.value(j));
    m_center = static_cast<Scalar>(mean);
    const Scalar c = m_center;
    m_p = prefix_sums(prior, [](Scalar) { return Scalar(1); });
    m_q = prefix_sums(prior, [c](Scalar y) { return y - c; });
    m_y = prior.values().array() - c;
    m_prob = prior.probabilities().array();
    // Global part g(y_m) = sum_b p_b |y_b - y_m| for every m, in long double.
    m_global.resize(m_k);
    long double pk = 0, qk = 0;
    for (Index j = 0; j < m_k; ++j) {
      pk += static_cast<long double>(m_prob[j]);
      qk += static_cast<long double>(m_prob[j]) * static_cast<long double>(m_y[j]);
    }
    long double pacc = 0, qacc = 0;
    for (Index j = 0; j < m_k; ++j) {
      const long double pj = m_prob[j], yj = m_y[j];
      pacc += pj;
      qacc += pj * yj;
      m_global[j] = static_cast<Scalar>(yj * (2 * pacc - pk) - 2 * qacc + qk);
    }
  }

  Index size() const { return m_k; }

  Scalar cost(Index a, Index b) const { return cost_at(a, b, median(a, b)); }
  /// The in-bin part summed directly over the bin's values (see SquaredBinCost::accurate_cost()).
  Scalar accurate_cost(Index a, Index b) const {
    const Index m = median(a, b);
    const Scalar o = m_y[m];
    Scalar in_bin = 0;
    for (Index j = a; j < b; ++j) in_bin += m_prob[j] * std::abs(m_y[j] - o);
    return m_alpha * m_global[m] + m_beta * in_bin;
  }
  Scalar output(Index a, Index b) const { return m_center + m_y[median(a, b)]; }

  /// The DP without medians. Since the optimal output of a bin is one of the values,
  /// \f$F[i] = \min_{r<i} \min_m F[r] + \alpha g(y_m) + \beta (C_m[i] - C_m[r]) - c\f$ with
  /// \f$C_m[j] = \sum_{t<j} p_t |y_m - y_t|\f$ (O(1) from prefix sums), and swapping the minima,
  /// \f$F[i] = \min_m (\alpha g(y_m) + \beta C_m[i] + M_m) - c\f$ with the running minima
  /// \f$M_m = \min_{r<i} F[r] - \beta C_m[r]\f$, updated once F[i] is known. Every candidate
  /// (r, m) is an upper bound of F[r] + L([r,i)) and the best m of each r is its exact cost, so
  /// this is the same DP: O(k) memory, at most O(i) per row as one fused pass of vectorized
  /// array arithmetic over m (no division, no search). Most of that pass is skipped: blocks of
  /// 64 outputs carry an O(1)-per-row lower bound on their values (the recurrence
  /// \f$V_{i+1}[m] = \min(V_i[m], F[i] + \alpha g(y_m)) + \beta p_i |y_m - y_i|\f$, see the
  /// body), are evaluated only when the bound does not exclude them from the row minimum, and
  /// catch up the rows they skipped then. A bound is a proof, not a heuristic (unlike split-point
  /// monotonicity, which fails here: the quadrangle inequality fails on about 10% of quadruples), so the DP stays
  /// exact; measured on the wage-like prior of bench/bench_rr_on_bins.cpp (eps = 1), 0.5% of the (r, m) candidates at k
  /// = 40,000 are evaluated and 2.7% folded in catch-ups (2% and 3.7% at k = 10,000).
  ///
  /// Only the best m of each row is stored; the bin start r of the rows on the optimal path is
  /// recovered afterwards as \f$\arg\min_{r<i} F[r] - \beta C_m[r]\f$ (O(k) per bin), so `arg` is
  /// filled along the path from k only — all a traceback needs.
  void dp(Scalar c, std::vector<Scalar>& F, std::vector<Index>& arg) const {
    constexpr Index kBlock = 512;
    F.assign(std::size_t(m_k + 1), Scalar(0));
    arg.assign(std::size_t(m_k + 1), Index(0));
    const Index k = m_k;
    // beta C_m[j] = beta (y_m P[j] - Q[j]) for j <= m + 1 (all values before j at or left of
    // y_m: the "linear" form), and beta (a_m - (y_m P[j] - Q[j])) with
    // a_m = 2 (y_m P[m+1] - Q[m+1]) for j >= m + 1 (split at y_m). The running minimum of an m
    // whose rows are all split (m < i) is stored with beta a_m added, S_m = M_m + beta a_m, so
    // that folding row r in and evaluating row i both need only beta y_m besides S_m and
    // alpha g(y_m):
    //   fold r (r >= m + 1):  S_m = min(S_m, F[r] + (beta y_m P[r] - beta Q[r])),
    //   value at row i > m:   alpha g(y_m) + S_m - (beta y_m P[i] - beta Q[i]);
    // for m >= i the linear form: fold min(S_m, F[r] - (beta y_m P[r] - beta Q[r])), value
    // alpha g(y_m) + S_m + (beta y_m P[i] - beta Q[i]). Each row is then one fused pass of
    // three loads and one store per output (the fold of row i - 1 and the evaluation of row i),
    // instead of separate fold, C_m and sum passes.
    const Array beta_y = m_beta * m_y;
    const Array beta_a = 2 * m_beta * (m_y * m_p.tail(k) - m_q.tail(k));
    const Array alpha_g = m_alpha * m_global;
    const Array beta_q = m_beta * m_q;
    Array running = Array::Constant(k, std::numeric_limits<Scalar>::infinity());  // S_m (see above)
    std::vector<Index> best_of_row(std::size_t(k + 1), 0);
    // The weighted median of a bin ending before i is at most max(i - 1, global median): past
    // both, the values below hold all of the bin's weight and half of the prior's. Outputs
    // beyond are never optimal, so row i needs m < max(i, global median + 1) only, and M_m of a
    // larger m is needed first at row m + 1. It is computed then, in O(1) amortized: for
    // r <= m, C_m[r] = y_m P[r] - Q[r], so M_m = min_r (F[r] + beta Q[r]) - beta P[r] y_m is the
    // lower envelope of lines with non-decreasing slopes, queried at increasing y_m (the
    // monotone convex-hull trick). Rows thus cost O(i) instead of O(k).
    Index global_median = 0;
    while (global_median + 1 < k && 2 * m_p[global_median + 1] < m_p[k]) ++global_median;
    MonotoneEnvelope hull;
    // Minimum of one block of row values; the position is searched only when it improves.
    Scalar best = 0;
    Index best_m = 0;
    // (Evaluated into a buffer first, so that the search compares the very values that were
    // minimized, whatever contraction the compiler applies to the vectorized expression.)
    Array buf(kBlock);
    auto take = [&](Index m0, Index n, const auto& values) {
      buf.head(n) = values;
      const Scalar v = buf.head(n).minCoeff();
      if (v <= best) {
        Index j = 0;
        while (buf[j] != v) ++j;
        if (v < best || m0 + j < best_m) best = v, best_m = m0 + j;
      }
    };
    // Screening (the same idea as SquaredBinCost::dp()): the row value of an output m is
    // V_i[m] = min_{r<i} F[r] + alpha g(y_m) + beta (C_m[i] - C_m[r]), and by its definition
    //   V_{i+1}[m] = min(V_i[m], F[i] + alpha g(y_m)) + beta p_i |y_m - y_i|.
    // For a block of outputs all on one side of y_i this gives, in O(1) per block and row, the
    // lower bound lb(i+1) = min(lb(i), F[i] + min_block alpha g) + beta p_i dist(y_i, block)
    // of the block's values. A block whose bound exceeds the row's best value so far cannot
    // hold the row minimum and is skipped; its running minima are not folded then but caught
    // up (rows last_fold..i-1) the next time it is evaluated. Screened are the whole blocks of
    // split outputs (all m < i - 1) and of linear outputs (all m >= i, below the global
    // median); the block holding i - 1 is evaluated every row. The relative margin kMargin
    // covers the rounding of the bound, accumulated over up to k rows.
    constexpr Index kScreen = 64;
    constexpr Scalar kMargin = Scalar(1e-9);
    const Index nblocks = k / kScreen + 1;
    std::vector<Scalar> lb(std::size_t(nblocks), -std::numeric_limits<Scalar>::infinity());
    std::vector<Scalar> ag_min(std::size_t(nblocks), Scalar(0));
    std::vector<Index> last_fold(std::size_t(nblocks), 0);
    for (Index b = 0; b * kScreen < k; ++b)
      ag_min[std::size_t(b)] = alpha_g.segment(b * kScreen, std::min(kScreen, k - b * kScreen)).minCoeff();
    const Scalar magnitude = alpha_g.abs().maxCoeff() + 4 * m_beta * m_y.abs().maxCoeff() * m_p[k];
    // Folds rows last_fold..end-1 into block b's running minima (split or linear form), row by
    // row. A linear block that missed more than a few rows reads the envelope `hull` of all
    // rows so far instead (rows before last_fold are already folded, so folding them again is
    // harmless): O(block log k) instead of O(rows * block) — the catch-up of the blocks left
    // of the bins when they stop being screened would otherwise cost O(rows) each. (Split
    // blocks rarely miss many rows and come back: 2.7% of the candidates at k = 40,000.)
    constexpr Index kEnvelopeRows = 16;
    auto catch_up = [&](Index b, Index end, bool split) {
      const Index from = last_fold[std::size_t(b)];
      auto s = running.segment(b * kScreen, kScreen);
      if (!split && end - from > kEnvelopeRows) {
        for (Index j = 0; j < kScreen; ++j)
          s[j] = std::min(s[j], static_cast<Scalar>(hull.value_at(m_y[b * kScreen + j])));
      } else {
        const auto by = beta_y.segment(b * kScreen, kScreen);
        for (Index r = from; r < end; ++r) {
          if (split)
            s = s.min(F[std::size_t(r)] + (by * m_p[r] - beta_q[r]));
          else
            s = s.min(F[std::size_t(r)] - (by * m_p[r] - beta_q[r]));
        }
      }
      last_fold[std::size_t(b)] = std::max(from, end);
    };
    auto evaluate_block = [&](Index b, Index i, bool split) {
      catch_up(b, i, split);
      const Index m0 = b * kScreen;
      const auto cm = beta_y.segment(m0, kScreen) * m_p[i] - beta_q[i];
      if (split)
        buf.head(kScreen) = alpha_g.segment(m0, kScreen) + running.segment(m0, kScreen) - cm;
      else
        buf.head(kScreen) = alpha_g.segment(m0, kScreen) + running.segment(m0, kScreen) + cm;
      const Scalar v = buf.head(kScreen).minCoeff();
      lb[std::size_t(b)] = v;
      if (v <= best) {
        Index j = 0;
        while (buf[j] != v) ++j;
        if (v < best || m0 + j < best_m) best = v, best_m = m0 + j;
      }
    };
    Index active = std::min(k, global_median + 1);  // running[m] is maintained for m < active
    Index screened = 0;                             // blocks [0, screened): split, screened
    Index linear_front = 0;  // blocks [max(linear_front, ceil(i / kScreen)), linear_end): linear, screened
    const Index linear_end = active / kScreen;
    for (Index i = 1; i <= k; ++i) {
      const Scalar pi = m_p[i], bqi = beta_q[i], pr = m_p[i - 1], bqr = beta_q[i - 1];
      const Scalar f_prev = F[std::size_t(i - 1)];
      const Index prev_best = best_m;
      best = std::numeric_limits<Scalar>::infinity();
      best_m = 0;
      hull.add(static_cast<long double>(f_prev) + static_cast<long double>(m_beta) * m_q[i - 1],
               static_cast<long double>(m_beta) * m_p[i - 1]);
      const Index query_end = std::max(i, global_median + 1);
      // Newly needed outputs start from the envelope (rows r < i, i.e. already folded; the
      // fold below repeats row i - 1, which changes nothing).
      for (; active < query_end; ++active) running[active] = static_cast<Scalar>(hull.query(m_y[active]));
      // A block enters split screening once all its outputs are split; it was folded through
      // row i - 2 (last_fold = i - 1) and gets evaluated exactly first (bound -inf).
      for (; (screened + 1) * kScreen <= i - 1; ++screened) {
        last_fold[std::size_t(screened)] = i - 1;
        lb[std::size_t(screened)] = -std::numeric_limits<Scalar>::infinity();
      }
      // A linear block that now holds i - 1 leaves screening: fold rows up to i - 2 (the
      // unscreened pass below folds row i - 1).
      const Index linear_begin = std::max(linear_front, (i + kScreen - 1) / kScreen);
      for (; linear_front < std::min(linear_begin, linear_end); ++linear_front) catch_up(linear_front, i - 1, false);
      const Index linear_stop = std::max(linear_begin, linear_end);
      // Split outputs m < i - 1 not screened.
      for (Index m0 = screened * kScreen; m0 < i - 1; m0 += kBlock) {
        const Index n = std::min(kBlock, i - 1 - m0);
        auto s = running.segment(m0, n);
        const auto by = beta_y.segment(m0, n);
        s = s.min(f_prev + (by * pr - bqr));
        take(m0, n, alpha_g.segment(m0, n) + s - (by * pi - bqi));
      }
      // m = i - 1: its last linear-form fold, then it becomes split.
      {
        const Index m = i - 1;
        Scalar& s = running[m];
        s = std::min(s, f_prev - (beta_y[m] * pr - bqr)) + beta_a[m];
        const Scalar v = alpha_g[m] + s - (beta_y[m] * pi - bqi);
        if (v < best || (v == best && m < best_m)) best = v, best_m = m;
      }
      // Linear outputs i <= m < query_end not screened: before and after the screened blocks.
      auto linear_pass = [&](Index from, Index to) {
        for (Index m0 = from; m0 < to; m0 += kBlock) {
          const Index n = std::min(kBlock, to - m0);
          auto s = running.segment(m0, n);
          const auto by = beta_y.segment(m0, n);
          s = s.min(f_prev - (by * pr - bqr));
          take(m0, n, alpha_g.segment(m0, n) + s + (by * pi - bqi));
        }
      };
      linear_pass(i, std::min(query_end, linear_begin * kScreen));
      linear_pass(std::max(i, linear_stop * kScreen), query_end);
      // Screened blocks: bounds first, then the block of the previous row's best output (a
      // good incumbent), then every block whose bound does not exclude it.
      const Scalar step = m_beta * m_prob[i - 1], y_prev = m_y[i - 1];
      for (Index b = 0; b < screened; ++b) {
        Scalar& l = lb[std::size_t(b)];
        l = std::min(l, f_prev + ag_min[std::size_t(b)]) + step * (y_prev - m_y[b * kScreen + kScreen - 1]);
      }
      for (Index b = linear_begin; b < linear_end; ++b) {
        Scalar& l = lb[std::size_t(b)];
        l = std::min(l, f_prev + ag_min[std::size_t(b)]) + step * (m_y[b * kScreen] - y_prev);
      }
      auto screen = [&](Index b, bool split) {
        const Scalar l = lb[std::size_t(b)];
        if (l - kMargin * (std::abs(l) + std::abs(best) + magnitude) > best) return;
        evaluate_block(b, i, split);
      };
      const Index first = prev_best / kScreen;
      const bool first_split = first < screened, first_linear = first >= linear_begin && first < linear_end;
      if (first_split || first_linear) evaluate_block(first, i, first_split);
      for (Index b = 0; b < screened; ++b)
        if (b != first) screen(b, true);
      for (Index b = linear_begin; b < linear_end; ++b)
        if (b != first) screen(b, false);
      F[std::size_t(i)] = best - c;
      best_of_row[std::size_t(i)] = best_m;
    }
    // Bin starts along the optimal path: r minimizing F[r] - beta C_m[r] over r < i, with
    // C_m[r] = y_m P[r] - Q[r] for r <= m and the split formula for r > m.
    const Eigen::Map<const Array> f(F.data(), k + 1);
    Array g(k + 1);
    for (Index i = k; i > 0;) {
      const Index m = best_of_row[std::size_t(i)];
      const Scalar ym = m_y[m], pm = m_p[m + 1], qm = m_q[m + 1];
      const Index lo = std::min(i, m + 1);
      g.head(lo) = f.head(lo) - m_beta * (ym * m_p.head(lo) - m_q.head(lo));
      g.segment(lo, i - lo) =
          f.segment(lo, i - lo) - m_beta * (ym * (2 * pm - m_p.segment(lo, i - lo)) - 2 * qm + m_q.segment(lo, i - lo));
      Index r = 0;
      g.head(i).minCoeff(&r);
      arg[std::size_t(i)] = r;
      i = r;
    }
  }

 private:
  // Weight of the values 0..m (inclusive) for the bin [a, b).
  Scalar cum(Index a, Index b, Index m) const {
    const Index mc = std::clamp(m + 1, a, b);
    return m_alpha * m_p[m + 1] + m_beta * (m_p[mc] - m_p[a]);
  }

  Index median(Index a, Index b) const {
    const Scalar t = m_alpha * m_p[m_k] + m_beta * (m_p[b] - m_p[a]);
    Index lo = 0, hi = m_k - 1;  // answer in [lo, hi]
    while (lo < hi) {
      const Index mid = lo + (hi - lo) / 2;
      if (2 * cum(a, b, mid) >= t)
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  }

  // Sum of (alpha p + beta p [in bin]) |y_m - y|: the global part precomputed, the in-bin part
  // from prefix sums (M = number of values <= y_m, clamped to the bin).
  Scalar cost_at(Index a, Index b, Index m) const {
    const Index Mc = std::clamp(m + 1, a, b);
    const Scalar o = m_y[m];
    const Scalar in_bin = o * (2 * m_p[Mc] - m_p[a] - m_p[b]) - 2 * m_q[Mc] + m_q[a] + m_q[b];
    return m_alpha * m_global[m] + m_beta * in_bin;
  }

  Index m_k;
  Scalar m_alpha, m_beta;
  Scalar m_center = 0;
  Array m_p, m_q, m_y, m_prob, m_global;
};

/// Any NoisyLabelLoss: the bin's output is `loss.minimize(values, weights)` over ALL prior values
/// with weights \f$\alpha p_y + \beta p_y [y \in S]\f$ (the paper's \f$p_y e^{\varepsilon [y \in S]}\f$
/// up to the common factor), its cost the weighted loss at that output: O(k) per bin, O(k^3)
/// per DP. The k(k+1)/2 bin costs are cached when k <= kCacheLimit (about 16 MB), so the
/// Dinkelbach iterations after the first cost O(k^2).
template <typename Scalar, typename Loss>
class GenericBinCost {
 public:
  static constexpr Index kCacheLimit = 2000;

  GenericBinCost(const FinitePrior<Scalar>& prior, RROnBinsScale s, const Loss& loss)
      : m_prior(&prior), m_loss(&loss), m_alpha(Scalar(s.alpha)), m_beta(Scalar(s.beta)), m_k(prior.size()) {
    m_values.assign(prior.values().data(), prior.values().data() + m_k);
    m_weights.resize(std::size_t(m_k));
    if (m_k <= kCacheLimit) {
      m_cache.resize(std::size_t(m_k * (m_k + 1) / 2));
      for (Index b = 1; b <= m_k; ++b)
        for (Index a = 0; a < b; ++a) m_cache[slot(a, b)] = evaluate(a, b, nullptr);
    }
  }

  Index size() const { return m_k; }

  Scalar cost(Index a, Index b) const { return m_cache.empty() ? evaluate(a, b, nullptr) : m_cache[slot(a, b)]; }
  Scalar accurate_cost(Index a, Index b) const { return cost(a, b); }

  Scalar output(Index a, Index b) const {
    Scalar o = 0;
    evaluate(a, b, &o);
    return o;
  }

  void dp(Scalar c, std::vector<Scalar>& F, std::vector<Index>& arg) const {
    F.assign(std::size_t(m_k + 1), Scalar(0));
    arg.assign(std::size_t(m_k + 1), Index(0));
    for (Index i = 1; i <= m_k; ++i) {
      Scalar best = std::numeric_limits<Scalar>::infinity();
      Index best_r = 0;
      for (Index r = 0; r < i; ++r) {
        const Scalar cand = F[std::size_t(r)] + cost(r, i);
        if (cand < best) {
          best = cand;
          best_r = r;
        }
      }
      F[std::size_t(i)] = best - c;
      arg[std::size_t(i)] = best_r;
    }
  }

 private:
  std::size_t slot(Index a, Index b) const { return std::size_t((b - 1) * b / 2 + a); }

  Scalar evaluate(Index a, Index b, Scalar* out) const {
    for (Index j = 0; j < m_k; ++j)
      m_weights[std::size_t(j)] = m_prior->probability(j) * (m_alpha + (j >= a && j < b ? m_beta : Scalar(0)));
    const std::span<const Scalar> v(m_values), w(m_weights);
    const Scalar o = static_cast<Scalar>(m_loss->minimize(v, w));
    if (out) *out = o;
    Scalar total = 0;
    for (Index j = 0; j < m_k; ++j)
      if (m_weights[std::size_t(j)] > 0)
        total += m_weights[std::size_t(j)] * static_cast<Scalar>((*m_loss)(o, m_values[std::size_t(j)]));
    return total;
  }

  const FinitePrior<Scalar>* m_prior;
  const Loss* m_loss;
  Scalar m_alpha, m_beta;
  Index m_k;
  std::vector<Scalar> m_values;
  mutable std::vector<Scalar> m_weights;
  std::vector<Scalar> m_cache;
};

/// Largest warm-start window (number of cut positions) worth a restricted DP before the full
/// DP: the restricted DP costs O(cuts^2) calls of model.cost(), the full DP about k^2/2 O(1)
/// candidates for the prefix-sum models.
template <typename Model>
Index warm_window_limit(const Model& model) {
  return model.size() / 4;
}

/// Absolute loss: model.cost() is a median search (O(log k), scalar), while the screened full
/// DP evaluates only a small fraction of its candidates, so windows pay off only when much
/// smaller (measured at k = 1,000 .. 40,000, eps = 0.1 .. 10: with k/4, eps = 6 spent 0.8 s of
/// 0.84 s at k = 10,000 in windows of ~2,000 cuts; with this limit the whole solve takes
/// ~0.05 s). Windows of a few bins (about sqrt(k) cuts per bin) still run: they save a full DP.
template <typename Scalar>
Index warm_window_limit(const AbsoluteBinCost<Scalar>& model) {
  const Index k = model.size();
  return std::max(k / 32, Index(4 * std::sqrt(double(k))));
}

/// Smallest k for which dinkelbach() warm-starts on restricted cut sets before the full DP.
template <typename Model>
Index warm_start_size(const Model&) {
  return 257;
}

/// Absolute loss: its full DP costs several times a squared-loss DP per candidate at small k
/// (before screening pays off), so replacing two of the typical three cold-start DPs by
/// restricted ones (O(k) median-cost bin costs each at these sizes) pays already at k ~ 100.
template <typename Scalar>
Index warm_start_size(const AbsoluteBinCost<Scalar>&) {
  return 33;
}

/// Outcome of Dinkelbach's method on a cost model.
template <typename Scalar>
struct DinkelbachOutcome {
  std::vector<Index> ends;  ///< bin j is [ends[j-1], ends[j]) with ends[-1] = 0; ends.back() = k
  Scalar ratio = 0;         ///< expected loss of the partition with per-bin optimal outputs
  int iterations = 0;       ///< segmentation DPs solved
  bool converged = false;   ///< false only when max_iterations was reached
};

/// N(x) / (alpha d + beta) of a partition, from the models' accurate bin costs (O(k) in all).
template <typename Scalar, typename Model>
Scalar partition_ratio(const Model& model, const std::vector<Index>& ends, RROnBinsScale s) {
  Scalar n = 0;
  Index a = 0;
  for (Index b : ends) {
    n += model.accurate_cost(a, b);
    a = b;
  }
  return n / (Scalar(s.alpha) * Scalar(ends.size()) + Scalar(s.beta));
}

/// Dinkelbach iterations from the partition `out.ends` (ratio `out.ratio`) with the exact
/// minimizer `solve(c, ends)` of \f$\sum_S (L(S) - c)\f$ over some family of partitions.
template <typename Scalar, typename Model, typename Solve>
void dinkelbach_iterate(const Model& model, RROnBinsScale s, Solve&& solve, DinkelbachOutcome<Scalar>& out,
                        int& iterations, int max_iterations) {
  std::vector<Index> ends;
  out.converged = false;
  while (iterations < max_iterations) {
    ++iterations;
    solve(out.ratio * Scalar(s.alpha), ends);
    const Scalar r = partition_ratio<Scalar>(model, ends, s);
    // Improvements below a few ulps of lambda are rounding noise, not a better partition.
    const Scalar tol = 8 * std::numeric_limits<Scalar>::epsilon() * std::abs(out.ratio);
    if (!(r < out.ratio - tol)) {
      out.converged = true;
      return;
    }
    out.ratio = r;
    out.ends = ends;
  }
}

/// Dinkelbach's method for \f$\min_x N(x)/D(x)\f$ over interval partitions x, D(x) = alpha d + beta
/// > 0: given the ratio lambda of the best partition so far, the DP minimizes
/// \f$N(x) - \lambda D(x) = \sum_{S} (L(S) - \lambda\alpha) - \lambda\beta\f$ exactly; a partition
/// with a smaller ratio exists iff that minimum is negative, and the DP's partition then has a
/// ratio below lambda. Finitely many partitions, strictly decreasing ratios: the loop ends at
/// the optimum.
///
/// Warm start: for k >= warm_start_size(model) the same method first runs on the partitions whose cuts lie
/// on a grid of about \f$2\sqrt{k}\f$ positions (O(k) bin costs per DP via model.cost()), then
/// on the partitions whose cuts lie within one grid spacing of the cuts found, until they stop
/// moving (windows of at most warm_window_limit(model) cuts). That is usually the optimum
/// already, and the single full DP then only confirms it (instead of 3-5 full DPs from a cold
/// start). The answer does not depend on the start: only the number of full DPs does.
template <typename Scalar, typename Model>
DinkelbachOutcome<Scalar> dinkelbach(const Model& model, RROnBinsScale s, int max_iterations = 100) {
  const Index k = model.size();
  DinkelbachOutcome<Scalar> out;
  std::vector<Index> one{k}, singletons(static_cast<std::size_t>(k));
  for (Index j = 0; j < k; ++j) singletons[std::size_t(j)] = j + 1;
  const Scalar r1 = partition_ratio<Scalar>(model, one, s);
  const Scalar rk = partition_ratio<Scalar>(model, singletons, s);
  out.ends = r1 <= rk ? one : singletons;
  out.ratio = std::min(r1, rk);

  if (k >= warm_start_size(model)) {
    // DP over partitions whose cuts are in `cuts` (sorted, first 0, last k), scalar costs.
    std::vector<Index> cuts;
    std::vector<Scalar> G;
    std::vector<std::size_t> back;
    // The bin costs of a cut set are kept (up to kCachedCuts cuts, 0.5 MB) for the further
    // Dinkelbach iterations on the same cuts, which differ only in c.
    constexpr std::size_t kCachedCuts = 360;
    std::vector<Index> cached_cuts;
    std::vector<Scalar> cached_costs;
    auto restricted = [&](Scalar c, std::vector<Index>& ends) {
      G.assign(cuts.size(), Scalar(0));
      back.assign(cuts.size(), 0);
      const bool cache = cuts.size() <= kCachedCuts;
      if (cache && cached_cuts != cuts) {
        cached_costs.resize(cuts.size() * (cuts.size() - 1) / 2);
        for (std::size_t i = 1; i < cuts.size(); ++i)
          for (std::size_t r = 0; r < i; ++r) cached_costs[i * (i - 1) / 2 + r] = model.cost(cuts[r], cuts[i]);
        cached_cuts = cuts;
      }
      for (std::size_t i = 1; i < cuts.size(); ++i) {
        Scalar best = std::numeric_limits<Scalar>::infinity();
        for (std::size_t r = 0; r < i; ++r) {
          const Scalar cand = G[r] + (cache ? cached_costs[i * (i - 1) / 2 + r] : model.cost(cuts[r], cuts[i]));
          if (cand < best) {
            best = cand;
            back[i] = r;
          }
        }
        G[i] = best - c;
      }
      ends.clear();
      for (std::size_t i = cuts.size() - 1; i > 0; i = back[i]) ends.push_back(cuts[i]);
      std::reverse(ends.begin(), ends.end());
    };
    int warm_iterations = 0;
    // 1. Cuts on a grid of about 2 sqrt(k) positions.
    const Index grid = std::min<Index>(k, Index(2 * std::sqrt(double(k))));
    const Index spacing = (k + grid - 1) / grid;
    for (Index g = 0; g <= grid; ++g) cuts.push_back(Index((long double)(k)*g / grid));
    dinkelbach_iterate<Scalar>(model, s, restricted, out, warm_iterations, max_iterations);
    // 2. Cuts within one grid spacing of the current cuts, until they stop moving: usually
    //    the exact optimum, so that the first full DP below only confirms it.
    for (int round = 0; round < 4; ++round) {
      std::vector<Index> window{0};
      for (std::size_t j = 0; j + 1 < out.ends.size(); ++j)
        for (Index t = std::max<Index>(1, out.ends[j] - spacing); t <= std::min<Index>(k - 1, out.ends[j] + spacing);
             ++t)
          if (t > window.back()) window.push_back(t);
      window.push_back(k);
      if (Index(window.size()) > warm_window_limit(model)) break;  // no cheaper than the full DP
      const std::vector<Index> before = out.ends;
      cuts = window;
      dinkelbach_iterate<Scalar>(model, s, restricted, out, warm_iterations, max_iterations);
      if (out.ends == before) break;
    }
  }

  std::vector<Scalar> F;
  std::vector<Index> arg;
  auto full = [&](Scalar c, std::vector<Index>& ends) {
    model.dp(c, F, arg);
    ends.clear();
    for (Index i = k; i > 0; i = arg[std::size_t(i)]) ends.push_back(i);
    std::reverse(ends.begin(), ends.end());
  };
  dinkelbach_iterate<Scalar>(model, s, full, out, out.iterations, max_iterations);
  return out;
}

/// Outputs of the bins of a partition, in bin order, made non-decreasing. Per-bin optimal
/// outputs of an optimal partition are already sorted except in ties that involve bins of zero
/// prior mass (whose output is the prior's unconditional optimum); for losses with
/// \f$\partial^2 \ell / \partial o \partial y \le 0\f$ (squared, absolute, Poisson) reassigning
/// the same outputs in sorted order never increases the loss, so sorting keeps the optimum.
template <typename Scalar, typename Model>
Vector<Scalar> monotone_phi(const Model& model, const std::vector<Index>& ends) {
  std::vector<Scalar> outs;
  outs.reserve(ends.size());
  Index a = 0;
  for (Index b : ends) {
    outs.push_back(model.output(a, b));
    a = b;
  }
  std::sort(outs.begin(), outs.end());
  Vector<Scalar> phi(model.size());
  a = 0;
  for (std::size_t j = 0; j < ends.size(); ++j) {
    for (Index i = a; i < ends[j]; ++i) phi[i] = outs[j];
    a = ends[j];
  }
  return phi;
}

}  // namespace labeldp::detail
