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
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"

namespace labeldp::detail {

/// Outcome of interval_barrier_solve().
struct IntervalBarrierResult {
  bool converged = false;                ///< crossover and polish succeeded: columns/weights are exact
  Eigen::VectorXd duals;                 ///< (pi, sigma), 2k entries: the polished or the last interior ones
  std::vector<StaircaseColumn> columns;  ///< active patterns at their optimal outputs
  Eigen::VectorXd weights;               ///< primal weight of each column (>= 0 when converged)
  /// When not converged: the intervals with m_T > r_T at the last interior point that met a
  /// gap target, at their outputs there (a starting set for column generation).
  std::vector<StaircaseColumn> candidates;
  double primal_objective = 0;  ///< sum of weight * cost (scaled units)
  Index newton_steps = 0;       ///< barrier Newton steps
  Index polish_steps = 0;       ///< active-set Newton steps
  /// Of those, the steps on a square active set (as many columns as rows: one LU); the others
  /// had fewer columns than rows (a degenerate optimum: one QR and a small system).
  Index square_polish_steps = 0;
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

/// The labels of an unbiased problem that the interior point solves on: those of positive
/// probability and the two extreme ones (see restrict_to_supported_labels()).
struct SupportedLabels {
  UnbiasedProblem problem;  ///< the problem on the kept labels (same shift, scale, staircase entry)
  std::vector<Index> kept;  ///< indices of the kept labels in the full problem, increasing
  /// True when every label is kept.
  bool all(const UnbiasedProblem& full) const { return Index(kept.size()) == full.num_labels(); }
};

/// Drops the labels of zero probability strictly between the extreme labels.
///
/// Such a label costs nothing, and its row can be the convex combination of the rows of its
/// kept neighbours $y_- < y < y_+$ with weights $(y_+ - y, y - y_-) / (y_+ - y_-)$: the
/// row sums to 1, has mean y, and each of its entries lies between the neighbours' entries, so
/// every ratio to another row stays within $e^{arepsilon}$ (interpolate_dropped_rows()). So
/// the optimum on the kept labels is the optimum on all of them, and the kept problem's optimal
/// duals extended by $\pi_y = \sigma_y = 0$ are optimal duals of the full problem: each
/// reduced cost is then the kept problem's reduced cost of the pattern restricted to the kept
/// labels (continuous_lower_bound() certifies this on the full problem). Solving on the kept
/// labels removes the degeneracy such labels bring (an optimal face of primal solutions, since
/// the label may be in or out of a pattern at no cost) that keeps the active set from being
/// clear-cut. An extreme label of zero probability is kept: its row cannot be interpolated.
inline SupportedLabels restrict_to_supported_labels(const UnbiasedProblem& P) {
  SupportedLabels out;
  const Index k = P.num_labels();
  for (Index i = 0; i < k; ++i)
    if (P.probs[i] > 0 || i == 0 || i == k - 1) out.kept.push_back(i);
  const Index kk = Index(out.kept.size());
  out.problem = P;
  out.problem.labels.resize(kk);
  out.problem.probs.resize(kk);
  for (Index t = 0; t < kk; ++t) {
    out.problem.labels[t] = P.labels[out.kept[std::size_t(t)]];
    out.problem.probs[t] = P.probs[out.kept[std::size_t(t)]];
  }
  return out;
}

/// Duals (pi, sigma) of the kept problem extended to the full one by zeros on the dropped labels.
inline Eigen::VectorXd expand_duals(const SupportedLabels& L, Index k, const Eigen::VectorXd& duals) {
  const Index kk = Index(L.kept.size());
  Eigen::VectorXd full = Eigen::VectorXd::Zero(2 * k);
  for (Index t = 0; t < kk; ++t) {
    full[L.kept[std::size_t(t)]] = duals[t];
    full[k + L.kept[std::size_t(t)]] = duals[kk + t];
  }
  return full;
}

/// A kept problem's pattern as a full one: a dropped label is in the pattern when both its kept
/// neighbours are (a starting column for column generation; any pattern is valid there).
inline std::vector<std::uint8_t> expand_pattern(const SupportedLabels& L, Index k,
                                                const std::vector<std::uint8_t>& pattern) {
  std::vector<std::uint8_t> full(std::size_t(k), 0);
  for (std::size_t t = 0; t < L.kept.size(); ++t) {
    full[std::size_t(L.kept[t])] = pattern[t];
    if (t + 1 < L.kept.size() && pattern[t] && pattern[t + 1])
      for (Index i = L.kept[t] + 1; i < L.kept[t + 1]; ++i) full[std::size_t(i)] = 1;
  }
  return full;
}

/// The rows of a mechanism on the kept labels (`rows`, one per kept label, in their order)
/// extended to every label of `values` (increasing): a kept label's row is its own, a dropped
/// label's the convex combination of its kept neighbours' rows with mean y (see
/// restrict_to_supported_labels()).
template <typename Scalar, typename RowMatrix>
RowMatrix interpolate_dropped_rows(const SupportedLabels& L, const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& values,
                                   const RowMatrix& rows) {
  RowMatrix full(values.size(), rows.cols());
  for (std::size_t t = 0; t < L.kept.size(); ++t) {
    full.row(L.kept[t]) = rows.row(Index(t));
    if (t + 1 == L.kept.size()) break;
    const Index lo = L.kept[t], hi = L.kept[t + 1];
    for (Index i = lo + 1; i < hi; ++i) {
      const Scalar w_hi = (values[i] - values[lo]) / (values[hi] - values[lo]);
      full.row(i) = (1 - w_hi) * rows.row(Index(t)) + w_hi * rows.row(Index(t + 1));
    }
  }
  return full;
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
    if (square())
      lu.compute(G);
    else
      qr.compute(G);
  }
  /// The least-squares solution of G x = v (exact when square).
  Eigen::VectorXd solve(const Eigen::VectorXd& v) const {
    return square() ? Eigen::VectorXd(lu.solve(v)) : Eigen::VectorXd(qr.solve(v));
  }
};

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
class IntervalBarrier {
 public:
  explicit IntervalBarrier(const UnbiasedProblem& P)
      : m_P(P),
        m_k(P.num_labels()),
        m_A(P.probs, P.low),
        m_B(P.probs.cwiseProduct(P.labels), P.low),
        m_C(P.probs.cwiseProduct(P.labels).cwiseProduct(P.labels), P.low),
        m_quarter_inv_A(num_patterns()),
        m_r(num_patterns()),
        m_o(num_patterns()),
        m_r_inv(num_patterns()) {
    for_each_interval([&](Index a, Index b, Index j) { m_quarter_inv_A[j] = 0.25 / m_A(a, b); });
  }

  /// Number of interval patterns, k(k+1)/2: the length of an interval array.
  Index num_patterns() const { return m_k * (m_k + 1) / 2; }

  /// Reduced costs r and best outputs o of every interval at the duals (pi, sigma); returns the
  /// smallest r.
  double evaluate(const Eigen::VectorXd& duals) {
    const IntervalDot U(duals.head(m_k), m_P.low), V(duals.tail(m_k), m_P.low);
    double min_r = std::numeric_limits<double>::infinity();
    for_each_interval([&](Index a, Index b, Index j) { min_r = std::min(min_r, evaluate_interval(U, V, a, b, j)); });
    return min_r;
  }

  /// The interior-point phase then the active-set polish. `gap_target`: the interior-point
  /// phase stops when the complementarity gap \f$\sum_T m_T r_T\f$ is below it times the dual
  /// objective and the primal rows hold to 1e-9.
  IntervalBarrierResult solve(double gap_target, Index max_iterations = 200, Index max_polish = 30) {
    IntervalBarrierResult out;
    const Index k = m_k, n = 2 * k, J = num_patterns();
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
    // Only the lower triangle of the Newton matrices is written (all that LLT/LDLT read); zeroed
    // once so the rest is defined.
    Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n);
    // Primal start (Mehrotra's): the least-norm solution of the primal rows G m = rhs at the
    // starting outputs, shifted positive, then shifted again to balance the products m_T r_T.
    Eigen::VectorXd m(J);
    {
      NewtonBlocks blocks(k, H);
      Eigen::VectorXd ones = Eigen::VectorXd::Ones(k), o(k), o2(k);
      for_each_row([&](Index a, Index j0) {
        for (Index b = a, j = j0; b < k; ++b, ++j) {
          o[b] = m_o[j];
          o2[b] = m_o[j] * m_o[j];
        }
        blocks.add_row(a, ones, o, o2);
      });
      blocks.finish(m_P.low);
      const Eigen::VectorXd y = H.ldlt().solve(rhs);  // m_T = g_T^T (G G^T)^{-1} rhs
      const StepSums dy(y, m_P.low);
      for_each_interval([&](Index a, Index b, Index j) { m[j] = terms(dy, a, b, j).q1; });
      const double lowest = std::min(0.0, m.minCoeff());
      m.array() -= 1.5 * lowest;
      const double second = 0.5 * m.dot(m_r) / m_r.sum() + 1e-300;
      m.array() += second;
    }
    // A bias bound: its slacks and split sigma duals (detail/interval_bias.hpp), started with
    // the same products as the intervals' on average.
    const bool bounded = m_P.bounded();
    BiasSlacks bias, bias_prev;
    BiasSlacks::Target bias_target, bias_target_try;
    BiasSlacks::Direction bias_aff, bias_dir, bias_try;
    Eigen::VectorXd no_centring = Eigen::VectorXd::Zero(k), cp(k), cn(k);
    if (bounded) bias.start(m_P.labels, m_P.max_bias, m.dot(m_r) / double(J));
    Eigen::VectorXd step_aff(n), step(n), step_try(n);
    Eigen::VectorXd m_prev(J), dm_aff(J), dm = Eigen::VectorXd::Zero(J), dm_try(J), c(J), c_try(J);
    Eigen::LLT<Eigen::MatrixXd> llt(n);
    // Crossover and polish from the current iterate; on success `out` holds the exact solution.
    // Otherwise `out` keeps the iterate's duals and its active intervals (the caller's fallback).
    auto finish_here = [&]() {
      out.duals = lambda;
      out.candidates.clear();
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a)
          if (m[slot(a, b)] > m_r[slot(a, b)]) out.candidates.push_back(column_of(a, b, m_o[slot(a, b)]));
      if (bounded) return false;  // the caller's LP crossover finishes (polish has equality rows)
      IntervalBarrierResult attempt = out;
      polish(rhs, lambda, m, max_polish, attempt);
      if (attempt.converged) {
        out = std::move(attempt);
        return true;
      }
      out.polish_steps = attempt.polish_steps;
      out.square_polish_steps = attempt.square_polish_steps;
      evaluate(lambda);
      return false;
    };
    // The previous duals, to finish from when roundoff breaks a step (NaN); the previous weights
    // are in m_prev.
    Eigen::VectorXd lambda_prev;
    bool tried_here = false;  // finish_here() already ran at the current iterate
    double alpha = 0;         // the first sweep takes no step (dm = 0)
    int step_cuts_left = 4;   // step halvings against roundoff (below)
    for (;;) {
      // m_prev <- m + alpha dm, evaluated at lambda, with the gap, the primal rows and the next
      // Newton matrix; after the swap m_prev holds the previous weights.
      SweepResult sweep = step_and_sweep(lambda, m, alpha, dm, m_prev, H);
      // The step keeps every r_T positive in exact arithmetic, but r_T = C_T - u_T - h_T^2 / (4 A_T)
      // cancels when it is tiny, and roundoff can land on r_T <= 0 (then 1 / r_T breaks the
      // Newton matrix). A few such breaks are repaired by halving the step (an ill-conditioned
      // but regular problem then converges); repeated ones mean the iterate is at roundoff level
      // of a degenerate optimum (zero-probability labels), where the broken step ends the
      // interior phase as before and the caller's fallback finishes.
      for (; !(sweep.min_r > 0) && lambda_prev.size() == n && step_cuts_left > 0; --step_cuts_left) {
        alpha *= 0.5;
        lambda = lambda_prev + alpha * step;
        if (bounded) {
          bias = bias_prev;
          bias.move(alpha, bias_dir);
          lambda.tail(k) = bias.sigma();
        }
        sweep = step_and_sweep(lambda, m, alpha, dm, m_prev, H);
      }
      m.swap(m_prev);
      const double gap = sweep.gap + (bounded ? bias.gap() : 0.0);
      const double residual =
          std::max((sweep.Sm - rhs.head(k)).cwiseAbs().maxCoeff(),
                   bounded ? bias.residual(sweep.Smo) : (sweep.Smo - rhs.tail(k)).cwiseAbs().maxCoeff());
      if (!std::isfinite(gap) || !std::isfinite(residual)) {
        if (lambda_prev.size() == n) {
          lambda = lambda_prev;
          m.swap(m_prev);
          evaluate(lambda);
          finish_here();
        }
        return out;
      }
      tried_here = false;
      const double dual_objective = rhs.dot(lambda) + (bounded ? bias.objective_shift() : 0.0);
      const double target_gap = gap_target * std::abs(dual_objective);
      // The primal rows must hold to 1e-9 too, unless roundoff keeps them just above that
      // (tiny staircase low entries, eps near 8) while the gap is far below its target.
      if (gap <= target_gap && (residual <= std::max(1e-9, 1e-2 * gap_target) || gap <= 1e-3 * target_gap)) {
        // Try the crossover and polish; if the active set is not clear yet, go on with a
        // hundredfold smaller gap.
        if (finish_here() || bounded) return out;
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
      // The sweep built the Newton matrix at this iterate.
      if (bounded) bias.add_to_newton(H);
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
      // Predictor (affine scaling): the Newton step for m_T r_T = 0. Its gap after a step t,
      // sum_T (m_T + t dm_T)(r_T - t q1_T - t^2 q2_T), is a cubic in t whose coefficients the
      // direction's pass sums, so no pass over the intervals is needed once t is known.
      Eigen::VectorXd target_aff = rhs;
      if (bounded) bias.adjust(target_aff, no_centring, no_centring, bias_target);
      step_aff = llt.solve(target_aff);
      double g1 = 0, g2 = 0, g3 = 0;
      double alpha_aff =
          std::min(1.0, newton_direction(step_aff, nullptr, m, dm_aff, [&](Index j, const Terms& t, double dmj) {
                     g1 += dmj * m_r[j] - m[j] * t.q1;
                     g2 += m[j] * t.q2 + dmj * t.q1;
                     g3 += dmj * t.q2;
                   }));
      if (bounded) {
        alpha_aff = std::min(alpha_aff, bias.direction(step_aff, bias_target, bias_aff));
        double b1 = 0, b2 = 0;
        bias.gap_terms(bias_aff, b1, b2);
        g1 += b1;
        g2 -= b2;
      }
      const double gap_aff = gap + alpha_aff * (g1 - alpha_aff * (g2 + alpha_aff * g3));
      // Mehrotra's corrector: centring weight (gap_aff / gap)^3 and the second-order term
      // dm_aff * dr_aff (dr_aff = -q1 of the predictor).
      const double ratio = std::clamp(gap_aff / gap, 0.0, 1.0);
      const double mu = ratio * ratio * ratio * gap / double(J + (bounded ? 2 * k : 0));
      const StepSums aff(step_aff, m_P.low);
      Eigen::VectorXd target = centred_target(
          rhs, [&](Index a, Index b, Index j) { return mu + dm_aff[j] * terms(aff, a, b, j).q1; }, c);
      if (bounded) {
        bias.centring(mu, bias_aff, cp, cn);
        bias.adjust(target, cp, cn, bias_target);
      }
      step = llt.solve(target);
      double alpha_max = newton_direction(step, &c, m, dm);
      if (bounded) alpha_max = std::min(alpha_max, bias.direction(step, bias_target, bias_dir));
      // Gondzio's centrality correctors: aim at a longer step, push the products m_T r_T there
      // back into [0.1 mu, 10 mu]; each costs two triangular solves with the same factor.
      for (int corrector = 0; corrector < 2 && alpha_max < 1; ++corrector) {
        const double aim = std::min(1.0, 1.5 * alpha_max + 0.1);
        const StepSums current(step, m_P.low);
        Eigen::VectorXd target_try = centred_target(
            rhs,
            [&](Index a, Index b, Index j) {
              const Terms t = terms(current, a, b, j);
              const double v = (m[j] + aim * dm[j]) * (m_r[j] - aim * t.q1 - aim * aim * t.q2);
              double shift = 0;
              if (v < 0.1 * mu)
                shift = 0.1 * mu - v;
              else if (v > 10 * mu)
                shift = std::max(10 * mu - v, -10 * mu);
              return c[j] + shift;
            },
            c_try);
        if (bounded) bias.adjust(target_try, bias_target.cp, bias_target.cn, bias_target_try);
        step_try = llt.solve(target_try);
        double alpha_try = newton_direction(step_try, &c_try, m, dm_try);
        if (bounded) alpha_try = std::min(alpha_try, bias.direction(step_try, bias_target_try, bias_try));
        if (!(alpha_try >= 1.01 * alpha_max)) break;
        if (bounded) {
          std::swap(bias_target, bias_target_try);
          std::swap(bias_dir, bias_try);
        }
        std::swap(c, c_try);
        std::swap(step, step_try);
        std::swap(dm, dm_try);
        alpha_max = alpha_try;
      }
      alpha = std::min(1.0, 0.99 * alpha_max);
      if (!(alpha > 0)) return give_up();
      lambda_prev = lambda;
      lambda += alpha * step;
      if (bounded) {
        bias_prev = bias;
        bias.move(alpha, bias_dir);
        lambda.tail(k) = bias.sigma();
      }
    }
  }

 private:
  /// Slot of interval [a, b] in an interval array: rows 0..a-1 hold k + (k-1) + ... + (k-a+1)
  /// entries.
  Index slot(Index a, Index b) const { return a * m_k - a * (a - 1) / 2 + (b - a); }

  /// Calls f(a, b, slot(a, b)) for every interval, in storage order.
  template <typename F>
  void for_each_interval(F&& f) const {
    for (Index a = 0, j = 0; a < m_k; ++a)
      for (Index b = a; b < m_k; ++b, ++j) f(a, b, j);
  }

  /// Reduced cost r, best output o and 1 / r of interval [a, b] (slot j) at the duals whose
  /// interval sums are U (pi) and V (sigma); returns r.
  double evaluate_interval(const IntervalDot& U, const IntervalDot& V, Index a, Index b, Index j) {
    const double u = U(a, b), v = V(a, b);
    const double h = 2 * m_B(a, b) + v;
    const double scaled = h * m_quarter_inv_A[j];
    m_o[j] = 2 * scaled;
    m_r[j] = m_C(a, b) - u - h * scaled;
    m_r_inv[j] = 1 / m_r[j];
    return m_r[j];
  }

  /// Interval sums of the two halves (pi, sigma parts) of a dual step.
  struct StepSums {
    StepSums(const Eigen::VectorXd& step, double low)
        : du(step.head(step.size() / 2), low), dv(step.tail(step.size() / 2), low) {}
    IntervalDot du, dv;
  };

  /// Along lambda + t * step, r_T(t) = r_T - t q1_T - t^2 q2_T exactly, with
  /// q1 = du + o dv (the linear change) and q2 = dv^2 / (4 A) >= 0.
  struct Terms {
    double q1, q2;
  };
  Terms terms(const StepSums& s, Index a, Index b, Index j) const {
    const double du = s.du(a, b), dv = s.dv(a, b);
    return {du + m_o[j] * dv, dv * dv * m_quarter_inv_A[j]};
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
        const double o = m_o[j], w = mj * m_r_inv[j];
        x1[b] = mj;
        x2[b] = mj * o;
        d1[b] = w;
        d2[b] = w * o;
        d3[b] = w * o * o + 2 * mj * m_quarter_inv_A[j];
      }
      gap += row_gap;
      min_r = row_min;
      Sm.add_row(a, x1);
      Smo.add_row(a, x2);
      blocks.add_row(a, d1, d2, d3);
    });
    blocks.finish(m_P.low);
    return {gap, min_r, Sm.result(m_P.low), Smo.result(m_P.low)};
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
    const StepSums sums(dl, m_P.low);
    double t_dual = std::numeric_limits<double>::infinity(), t_primal = t_dual;
    for_each_interval([&](Index a, Index b, Index j) {
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
  void polish(const Eigen::VectorXd& rhs, Eigen::VectorXd lambda, const Eigen::VectorXd& weights, Index max_polish,
              IntervalBarrierResult& out) {
    const Index k = m_k, n = 2 * k;
    evaluate(lambda);
    const double scale = 1 + rhs.cwiseAbs().maxCoeff();
    std::vector<std::pair<Index, Index>> basis, crossover_basis;
    Eigen::VectorXd m, crossover_m;
    ActiveFactor factor;
    bool found = false;
    Index tried = -1;
    for (const double threshold : {1e9, 1e6, 1e3, 1.0}) {
      std::vector<std::pair<Index, Index>> candidates;
      for (Index b = 0; b < k; ++b)
        for (Index a = 0; a <= b; ++a)
          if (weights[slot(a, b)] > threshold * m_r[slot(a, b)]) candidates.emplace_back(a, b);
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
          heavy[j] = weights[slot(candidates[std::size_t(j)].first, candidates[std::size_t(j)].second)];
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
      if (!m.allFinite()) continue;
      const double residual = (G * m - rhs).cwiseAbs().maxCoeff();
      // An exact crossover solution (the fallback if the polish fails).
      if (!found && m.minCoeff() >= -1e-9 && residual <= 1e-9 * scale) {
        found = true;
        crossover_basis = basis;
        crossover_m = m.cwiseMax(0.0);
      }
      // Newton's method needs only a start near the solution: it is tried from an interior
      // point that is still far from roundoff (see solve()), whose crossover is not exact yet.
      if (!(m.minCoeff() >= -1e-3 * m.cwiseAbs().maxCoeff() && residual <= 1e-3 * scale)) continue;
      Eigen::VectorXd m_polished = m, lambda_polished = lambda;
      if (newton_with_drops(rhs, basis, m_polished, lambda_polished, max_polish, factor, out)) {
        // Newton converges to the optimum of the active set it is given; that is the optimum
        // only if no interval prices out at its duals (a wrong active set, from an early
        // crossover, leaves some r_T clearly negative). Within 1e-9 / k of the dual objective,
        // or within the roundoff of evaluate() (1e-16 of C_T ~ 1), the caller's exact pricing
        // decides.
        const double tolerance = std::max(1e-9 * std::abs(rhs.dot(lambda_polished)) / double(k), 1e-14);
        if (evaluate(lambda_polished) >= -tolerance) {
          write_solution(basis, m_polished, lambda_polished, out);
          return;
        }
        evaluate(lambda);
      }
    }
    if (found) write_solution(crossover_basis, crossover_m, lambda, out);
  }

  /// Newton's method on the active set `basis` (newton_on_active()); if it converges with
  /// negative weights, those columns are not in the optimal active set: they are dropped and
  /// Newton runs again on the rest (at most three times). True on success: weights >= 0.
  bool newton_with_drops(const Eigen::VectorXd& rhs, std::vector<std::pair<Index, Index>>& basis, Eigen::VectorXd& m,
                         Eigen::VectorXd& lambda, Index max_polish, ActiveFactor& factor, IntervalBarrierResult& out) {
    const Eigen::VectorXd lambda0 = lambda;
    for (int drops = 0;; ++drops) {
      const bool converged = newton_on_active(rhs, basis, m, lambda, max_polish, factor, out);
      if (converged && m.minCoeff() >= 0) return true;
      if (!converged || drops == 3) return false;
      std::vector<std::pair<Index, Index>> kept;
      std::vector<double> kept_m;
      for (std::size_t j = 0; j < basis.size(); ++j)
        if (m[Index(j)] > 0) {
          kept.push_back(basis[j]);
          kept_m.push_back(m[Index(j)]);
        }
      basis = std::move(kept);
      m = Eigen::Map<const Eigen::VectorXd>(kept_m.data(), Index(kept_m.size()));
      lambda = lambda0;
      evaluate(lambda);
      factor.compute(active_matrix(basis));
    }
  }

  /// Stores the columns `basis` with weights m at the duals lambda (their outputs there) into `out`.
  void write_solution(const std::vector<std::pair<Index, Index>>& basis, const Eigen::VectorXd& m,
                      const Eigen::VectorXd& lambda, IntervalBarrierResult& out) {
    const Index k = m_k;
    evaluate(lambda);
    std::vector<double> outputs(basis.size());
    for (std::size_t j = 0; j < basis.size(); ++j) outputs[j] = m_o[slot(basis[j].first, basis[j].second)];
    out.converged = true;
    out.duals = lambda;
    out.weights = m;
    out.columns.clear();
    out.primal_objective = 0;
    for (std::size_t j = 0; j < basis.size(); ++j) {
      const auto [a, b] = basis[j];
      const double o = outputs[j];
      out.columns.push_back(column_of(a, b, o));
      // cost = sum_y s_y p_y (o - y)^2, term by term (A o^2 - 2 B o + C cancels to 1e-16
      // absolute, too coarse for the small losses of a large eps).
      double cost = 0;
      for (Index y = 0; y < k; ++y)
        cost += (y >= a && y <= b ? 1.0 : m_P.low) * m_P.probs[y] * (o - m_P.labels[y]) * (o - m_P.labels[y]);
      out.primal_objective += m[Index(j)] * cost;
    }
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
    const Eigen::MatrixXd S = staircase_block(active);
    Eigen::VectorXd A(q), B(q);
    for (Index j = 0; j < q; ++j) {
      const auto [a, b] = active[std::size_t(j)];
      A[j] = m_A(a, b);
      B[j] = m_B(a, b);
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
    // The reduced costs are evaluated term by term, r_T = sum_y s_y (p_y (o_T - y)^2 - pi_y -
    // sigma_y o_T), not as C_T - u_T - h_T^2 / (4 A_T): that form cancels terms of order
    // C_T ~ 1 down to r_T = 0 and leaves roundoff of 1e-16 absolute, far above the terms' own
    // size when the loss is small (eps = 12: duals ~ 1e-4), and the certificate prices it.
    // Converged: every r_T within a few ulps of its terms' magnitude and the primal rows to
    // roundoff; or no more progress (roundoff floor), with the best iterate kept.
    constexpr double ulp = std::numeric_limits<double>::epsilon();
    Eigen::VectorXd best_m = m, best_lambda = lambda, magnitude(q);
    double best = std::numeric_limits<double>::infinity(), previous = best;
    for (Index step = 0;; ++step) {
      const auto pi = lambda.head(k), sigma = lambda.tail(k);
      const Eigen::VectorXd v = S.transpose() * sigma;
      for (Index j = 0; j < q; ++j) {
        const double h = 2 * B[j] + v[j];
        o[j] = h / (2 * A[j]);
        double rj = 0, mag = 0;
        for (Index y = 0; y < k; ++y) {
          const double d = o[j] - m_P.labels[y], c = m_P.probs[y] * d * d, lin = pi[y] + sigma[y] * o[j];
          rj += S(y, j) * (c - lin);
          mag += S(y, j) * (c + std::abs(pi[y]) + std::abs(sigma[y] * o[j]));
        }
        r[j] = rj;
        magnitude[j] = mag;
        G.col(j).head(k) = S.col(j);
        G.col(j).tail(k) = o[j] * S.col(j);
      }
      F2 = G * m - rhs;
      const double residual =
          std::max((r.array().abs() / magnitude.array().max(1e-300)).maxCoeff(), F2.cwiseAbs().maxCoeff() / scale);
      if (!std::isfinite(residual)) break;
      if (residual < best) {
        best = residual;
        best_m = m;
        best_lambda = lambda;
      }
      if (residual <= 4 * ulp || step >= max_steps || (step >= 2 && residual > 0.25 * previous)) break;
      previous = residual;
      ++out.polish_steps;
      curvature = m.array() / (2 * A.array());
      if (step > 0) factor.compute(G);
      if (p == 0) {
        ++out.square_polish_steps;
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
        if (small_lu.rank() < p) break;  // the free directions of lambda are not fixed
        const Eigen::VectorXd free = small_lu.solve(Eigen::VectorXd(-Q2.transpose() * (F2 + apply_K(base))));
        dlambda = base + Q2 * free;
        const Eigen::VectorXd t = Q.transpose() * Eigen::VectorXd(-F2 - apply_K(dlambda));
        dm = R.solve(t.head(q));
      }
      if (!dm.allFinite() || !dlambda.allFinite()) break;
      m += dm;
      lambda += dlambda;
    }
    m = best_m;
    lambda = best_lambda;
    return best <= 1e-12;
  }

  const UnbiasedProblem& m_P;
  Index m_k;
  IntervalDot m_A, m_B, m_C;        ///< per interval (a, b): sums of s p, s p y, s p y^2
  Eigen::VectorXd m_quarter_inv_A;  ///< 1 / (4 A) per interval (interval array)
  Eigen::VectorXd m_r, m_o;         ///< reduced cost and best output at the last evaluate()
  Eigen::VectorXd m_r_inv;          ///< 1 / r at the last evaluate()
};

}  // namespace labeldp::detail
