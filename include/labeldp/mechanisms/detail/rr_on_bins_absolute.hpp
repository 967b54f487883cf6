/// \file
/// The absolute loss's bin-cost model of the production RR-on-Bins solver (Ghazi et al., ICLR
/// 2023, Algorithm 2): the bin's output is its weighted median, and the segmentation DP needs no
/// median at all, through the monotone convex-hull trick (MonotoneEnvelope).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/rr_on_bins_cost.hpp"

namespace labeldp::detail {

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

}  // namespace labeldp::detail
