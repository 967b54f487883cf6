/// \file
/// Bin-cost models of the production RR-on-Bins solver (Ghazi et al., ICLR 2023, Algorithm 2:
/// the cost of a bin is the weighted loss at its best output, with weights \f$p_y e^{\varepsilon
/// [y \in S]}\f$ up to a common factor): the scale of those weights, prefix sums, the O(1) models
/// for the squared and Poisson losses and the O(k) model for any NoisyLabelLoss, each with its
/// segmentation DP without bin count. The absolute loss's model is in rr_on_bins_absolute.hpp.
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

}  // namespace labeldp::detail
