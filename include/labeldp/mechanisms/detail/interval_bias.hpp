/// \file
/// The bias rows of the bias-bounded problem (\f$|E[M(y)] - y| \le B\f$) in the interval-pattern
/// interior point (detail/unbiased_barrier.hpp).
///
/// With a bias bound the unbiasedness rows \f$\sum_T m_T o_T s_T = y\f$ become
/// \f$y - B \le \sum_T m_T o_T s_T \le y + B\f$, and in the dual the free \f$\sigma\f$ of the
/// unbiased problem is split, \f$\sigma = \sigma^+ - \sigma^-\f$ with \f$\sigma^\pm \ge 0\f$: the
/// dual objective is \f$1^T \pi + (y - B)^T \sigma^+ - (y + B)^T \sigma^-\f$, and the slacks
/// \f$w^\pm \ge 0\f$ of the two bounds (mean \f$= y - B + w^+ = y + B - w^-\f$) pair with
/// \f$\sigma^\pm\f$ on the central path, \f$w^\pm \sigma^\pm = \mu\f$. Eliminating
/// \f$(\delta\sigma^\pm, \delta w^\pm)\f$ from the Newton system leaves the unbiased system in
/// \f$(\delta\pi, \delta\sigma)\f$ plus the diagonal
/// \f$E = (1 / D^+ + 1 / D^-)^{-1}\f$, \f$D^\pm = w^\pm / \sigma^\pm\f$, on its sigma block and a
/// changed sigma part of the right-hand side; so the method keeps its O(k^2) passes and one
/// Cholesky factorization of order 2k per step.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "labeldp/core/types.hpp"

namespace labeldp::detail {

/// The bias slacks and split sigma duals of one interior iterate, and their part of each
/// Newton step (see the file comment). Entries are per label.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
struct BasicBiasSlacks {
  Eigen::VectorXd y;       ///< labels (scaled)
  double B = 0;            ///< the bias bound (scaled), > 0
  Eigen::VectorXd sp, sn;  ///< sigma = sp - sn, both > 0
  Eigen::VectorXd wp, wn;  ///< slacks: mean = y - B + wp = y + B - wn, both > 0

  /// The right-hand-side pieces of one Newton direction (kept to recover the slack steps).
  struct Target {
    Eigen::VectorXd ep, en, Ts, cp, cn;
  };
  /// The slack part of a Newton direction.
  struct Direction {
    Eigen::VectorXd dsp, dsn, dwp, dwn;
  };

  /// The start: sigma = 0 (sp = sn), the means in the middle of their range (wp = wn = B), the
  /// products w sigma at `mu`.
  void start(const Eigen::VectorXd& labels, double bound, double mu) {
    y = labels;
    B = bound;
    const Index k = y.size();
    wp = wn = Eigen::VectorXd::Constant(k, B);
    sp = sn = Eigen::VectorXd::Constant(k, std::max(mu, 1e-300) / B);
  }

  Eigen::VectorXd sigma() const { return sp - sn; }
  /// The complementarity gap of the bias pairs.
  double gap() const { return wp.dot(sp) + wn.dot(sn); }
  /// The dual objective's bias term, \f$-B \sum (\sigma^+ + \sigma^-)\f$.
  double objective_shift() const { return -B * (sp.sum() + sn.sum()); }
  /// Largest violation of the mean rows given the means `Smo`.
  double residual(const Eigen::VectorXd& Smo) const {
    return std::max((Smo - wp - (y.array() - B).matrix()).cwiseAbs().maxCoeff(),
                    (Smo + wn - (y.array() + B).matrix()).cwiseAbs().maxCoeff());
  }
  /// \f$E = D^+ D^- / (D^+ + D^-)\f$.
  Eigen::VectorXd E() const {
    const Eigen::ArrayXd dp = wp.array() / sp.array(), dn = wn.array() / sn.array();
    return (dp * dn / (dp + dn)).matrix();
  }
  /// Adds E to the diagonal of the sigma block of the Newton matrix H (order 2k).
  void add_to_newton(Eigen::MatrixXd& H) const {
    const Index k = y.size();
    const Eigen::VectorXd e = E();
    for (Index i = 0; i < k; ++i) H(k + i, k + i) += e[i];
  }

  /// Rewrites the sigma part of an unbiased Newton target (its tail is y - S(o c / r)) for the
  /// bias pairs with centring terms cp, cn; keeps what direction() needs in `t`.
  void adjust(Eigen::VectorXd& target, const Eigen::VectorXd& cp, const Eigen::VectorXd& cn, Target& t) const {
    const Index k = y.size();
    const Eigen::ArrayXd so = y.array() - target.tail(k).array();  // S(o c / r)
    const Eigen::ArrayXd dp = wp.array() / sp.array(), dn = wn.array() / sn.array();
    t.ep = ((y.array() - B) + cp.array() / sp.array() - so).matrix();
    t.en = (-(y.array() + B) + cn.array() / sn.array() + so).matrix();
    t.Ts = (E().array() * (t.ep.array() / dp - t.en.array() / dn)).matrix();
    t.cp = cp;
    t.cn = cn;
    target.tail(k) = t.Ts;
  }

  /// The slack part of the direction whose (pi, sigma) part is `step` (solved for the target
  /// `t`), into `d`; returns the largest step keeping sp, sn, wp, wn positive.
  double direction(const Eigen::VectorXd& step, const Target& t, Direction& d) const {
    const Index k = y.size();
    const Eigen::ArrayXd dp = wp.array() / sp.array(), dn = wn.array() / sn.array(), sum = dp + dn;
    // dsp = (ep - phi) / dp and dsn = (en + phi) / dn with phi = Ts - E dsigma, in the form
    // that does not divide a cancelled difference by D: where a bound is active its D -> 0 and
    // ep - phi cancels terms of order 1 down to order D (measured: dsigma+ - dsigma- off from
    // dsigma by 1e-10 of the reduced costs near the optimum, and the barrier's steps then broke
    // r_T > 0 at gaps of 1e-7 of the objective). With ep + en = cp / sp + cn / sn - 2 B:
    // dsp = (ep + en + D- dsigma) / (D+ + D-), dsn = (ep + en - D+ dsigma) / (D+ + D-).
    const Eigen::ArrayXd e = t.cp.array() / sp.array() + t.cn.array() / sn.array() - 2 * B;
    const Eigen::ArrayXd ds = step.tail(k).array();
    d.dsp = ((e + dn * ds) / sum).matrix();
    d.dsn = ((e - dp * ds) / sum).matrix();
    d.dwp = ((t.cp.array() - wp.array() * d.dsp.array()) / sp.array() - wp.array()).matrix();
    d.dwn = ((t.cn.array() - wn.array() * d.dsn.array()) / sn.array() - wn.array()).matrix();
    double most = std::numeric_limits<double>::infinity();
    auto limit = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& dx) {
      for (Index i = 0; i < k; ++i)
        if (dx[i] < 0) most = std::min(most, -x[i] / dx[i]);
    };
    limit(sp, d.dsp);
    limit(sn, d.dsn);
    limit(wp, d.dwp);
    limit(wn, d.dwn);
    return most;
  }

  /// Mehrotra's second-order centring terms for the corrector: mu - dw * dsigma of the predictor.
  void centring(double mu, const Direction& aff, Eigen::VectorXd& cp, Eigen::VectorXd& cn) const {
    cp = (mu - aff.dwp.array() * aff.dsp.array()).matrix();
    cn = (mu - aff.dwn.array() * aff.dsn.array()).matrix();
  }

  /// The linear and quadratic coefficients of the pairs' gap along a direction:
  /// gap(t) = gap + t g1 + t^2 g2.
  void gap_terms(const Direction& d, double& g1, double& g2) const {
    g1 = wp.dot(d.dsp) + sp.dot(d.dwp) + wn.dot(d.dsn) + sn.dot(d.dwn);
    g2 = d.dwp.dot(d.dsp) + d.dwn.dot(d.dsn);
  }

  void move(double alpha, const Direction& d) {
    sp += alpha * d.dsp;
    sn += alpha * d.dsn;
    wp += alpha * d.dwp;
    wn += alpha * d.dwn;
  }
};

/// BiasSlacks: BasicBiasSlacks<> (see there).
using BiasSlacks = BasicBiasSlacks<>;

}  // namespace labeldp::detail
