/// \file
/// Additive-noise baselines on a public grid, each a model of the Mechanism concept: the
/// continuous Laplace mechanism sampled on a power-of-two grid (LaplaceMechanism), the discrete
/// Laplace mechanism (Ghazi et al. 2023, Definition 22), optionally clipped to the label range
/// (their Appendix F), and the exponential mechanism restricted to the label range (their
/// Definition 26 and Appendix F).
///
/// Labels are clipped to the public range [lo, hi] and rounded to a public grid
/// \f$lo + g j\f$, \f$j = 0..N\f$. Replacing one label moves its index by at most N, so noise on
/// the index with \f$\Pr[Z = z] \propto e^{-\gamma |z|}\f$, \f$N\gamma \le \varepsilon\f$, is eps-DP.
/// Working on the grid is what keeps sampling exact: textbook floating-point Laplace noise leaks
/// through the gaps of the floating-point numbers (Mironov 2012); here every noisy label is a
/// deterministic function of an exactly sampled integer (DiscreteLaplace, Canonne, Kamath and
/// Steinke 2020, Algorithm 2).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/alias_table.hpp"
#include "labeldp/core/clipped_discrete_laplace.hpp"
#include "labeldp/core/concepts.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/label_grid.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/tabled_discrete_laplace.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/lattice.hpp"

namespace labeldp {

namespace detail {

/// \f$E[(v(M) - y)^2]\f$ for the index \f$M = j(y) + Z\f$ on `grid` (clipped to [0, N] when
/// `clip`), Z discrete Laplace, output values \f$v(m) = lo + m g\f$ except \f$v(N) = top\f$ (the
/// grid's output at N) and, clipped, \f$v(m) = lo\f$ for m <= 0, top for m >= N. Closed form
/// from the series \f$\sum_{k\ge1} k\alpha^k = \alpha/(1-\alpha)^2\f$ and
/// \f$\sum_{k\ge1} k^2\alpha^k = \alpha(1+\alpha)/(1-\alpha)^3\f$: the unclipped second moment
/// minus the tails' corrections, in long double.
template <typename Scalar>
long double grid_laplace_loss(const LabelGrid<Scalar>& grid, const DiscreteLaplace& noise, Scalar label, bool clip) {
  const long double lo = grid.lo(), g = grid.step(), y = label, top = grid.output(grid.steps(), clip);
  const std::int64_t n = grid.steps(), j = grid.index(label);
  const long double gamma = noise.gamma(), a = noise.alpha(), om = -std::expm1(-gamma);  // 1 - alpha
  const long double c = om / (1 + a);
  const long double a1 = a / (om * om), a2 = a * (1 + a) / (om * om * om);
  const long double delta = lo + static_cast<long double>(j) * g - y;
  long double e = delta * delta + g * g * noise.second_moment();
  const long double w = lo + static_cast<long double>(n) * g - y;             // v(N) before replacing it by top
  const long double up = std::exp(-gamma * static_cast<long double>(n - j));  // alpha^(N-j)
  if (!clip) return e + c * up * ((top - y) * (top - y) - w * w);
  const long double down = std::exp(-gamma * static_cast<long double>(j));  // alpha^j
  e += c * down * (2 * g * (lo - y) * a1 - g * g * a2);
  e += up / (1 + a) * ((top - y) * (top - y) - w * w) - c * up * (2 * w * g * a1 + g * g * a2);
  return e;
}

/// The audited noise table for `noise` at sensitivity `steps` (certifying the noise's own
/// realized_epsilon()), or null when none passes (the exact sampler is then used).
inline std::shared_ptr<const TabledDiscreteLaplace> make_tabled(const DiscreteLaplace& noise, std::int64_t steps) {
  try {
    return std::make_shared<const TabledDiscreteLaplace>(noise, steps, noise.realized_epsilon(double(steps)));
  } catch (const std::invalid_argument&) {
    return nullptr;
  }
}

}  // namespace detail

/// The discrete Laplace mechanism on a LabelGrid: \f$M(y) = lo + g\,(j(y) + Z)\f$ with
/// \f$\Pr[Z = z] = \frac{1-\alpha}{1+\alpha}\alpha^{|z|}\f$, \f$\alpha = e^{-\gamma}\f$ and
/// \f$\gamma = s/t\f$ rational with \f$N\gamma < \varepsilon\f$ (DiscreteLaplace::for_privacy(), so
/// the realized guarantee is at most eps exactly). With `clip`, the output is clipped back to
/// [lo, hi] (post-processing: same guarantee; biased, lower error). Sampling is exact and takes
/// O(1) expected time whatever the scale (Canonne, Kamath and Steinke 2020, Algorithm 2).
///
/// Work per label: clipped on a grid of at most kTableSteps steps, the offset comes from a
/// ClippedDiscreteLaplace table built for the same \f$\gamma\f$ (one 64-bit word, one table entry,
/// whatever the label or the noise: constant work, and 3-4x faster); its realized matrix is
/// audited exactly against eps when it is built (realized_probability()). Unclipped, the noise
/// comes from a TabledDiscreteLaplace when one passes its exact audit against realized_epsilon()
/// (about two words per label; work still varies with the noise, rarely): its realized pmf
/// (realized_probability()) matches the stated one to about 2^-32 relative in scale, within
/// 1e-6 relative out to 20 scales (tests). Otherwise (a clipped grid larger than kTableSteps, or
/// no table: eps over N too small or eps above about 22) the exact sampler's work varies with the
/// noise drawn (see DiscreteLaplace).
///
/// \code{.cpp}
/// labeldp::DiscreteLaplaceMechanism<> lap(labeldp::LabelGrid<>(0, 5000, 50), 1.0, true);
/// labeldp::SecureRandom gen;
/// double noisy = lap.sample(1234.5, gen);
/// \endcode
template <typename Scalar = double>
class DiscreteLaplaceMechanism : public detail::LatticeBaseline<DiscreteLaplaceMechanism<Scalar>, Scalar> {
 public:
  /// The largest grid (in steps) sampled through a constant-work table when clipped: 2N + 1
  /// table entries, about 4 MB at this size.
  static constexpr std::int64_t kTableSteps = std::int64_t(1) << 16;

  /// \throws std::invalid_argument for a bad eps (or eps / N below 2^-42).
  DiscreteLaplaceMechanism(LabelGrid<Scalar> grid, double eps, bool clip)
      : m_grid(grid), m_eps(eps), m_clip(clip), m_noise(make_noise(eps, grid.steps())) {
    if (clip && grid.steps() <= kTableSteps) {
      try {
        m_table = std::make_shared<const ClippedDiscreteLaplace>(Index(grid.steps()), eps, m_noise.gamma());
        // The outputs by index, so that a draw is a table lookup (no clipping branch).
        std::vector<Scalar> outputs(std::size_t(grid.steps()) + 1);
        for (std::int64_t o = 0; o <= grid.steps(); ++o) outputs[std::size_t(o)] = grid.output(o, true);
        m_outputs = std::make_shared<const std::vector<Scalar>>(std::move(outputs));
      } catch (const std::invalid_argument&) {
        // eps so large that the smallest weights round to 0: the exact sampler stays.
      }
    }
    if (!clip) m_tabled = detail::make_tabled(m_noise, grid.steps());
  }

  using Base = detail::LatticeBaseline<DiscreteLaplaceMechanism<Scalar>, Scalar>;
  using Base::sample;
  /// A noisy label for `y` (clipped and rounded to the grid first); exact. Clipped on a grid of
  /// at most kTableSteps steps: one 64-bit word per label.
  /// \throws std::invalid_argument for a non-finite label.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    if (!m_table) return Base::sample(y, gen);
    const std::int64_t j = m_grid.index(y);  // validates y before any random draw
    return (*m_outputs)[std::size_t((*m_table)(Index(j), gen))];
  }
  /// Batch form: `out[i] = sample(in[i], gen)`, same draws in the same order.
  /// \throws std::invalid_argument when the sizes differ, or for a non-finite label.
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const Scalar> in, std::span<Scalar> out, G& gen) const {
    if (m_table)
      sample_each(*this, in, out, gen);
    else
      Base::sample(in, out, gen);
  }
  /// True when samples come from the constant-work table (see the class comment).
  bool constant_work() const { return bool(m_table); }
  /// The audited noise table of unclipped samples (TabledDiscreteLaplace; sample() adds its draw
  /// to the label's index), or null when the exact sampler is used (clipped, or a noise too wide
  /// for a table).
  const TabledDiscreteLaplace* tabled_noise() const { return m_tabled.get(); }
  /// \f$\Pr[\text{output index} = o \mid \text{input index} = j]\f$ as sampled: the table's
  /// realized probability when constant_work() or tabled_noise(), else the exact distribution's
  /// (finite() entry).
  long double realized_probability(std::int64_t j, std::int64_t o) const {
    if (m_table) return m_table->probability(Index(j), Index(o));
    if (m_tabled) return m_tabled->pmf(o - j);
    return m_clip ? clipped_probability(j, o) : m_noise.pmf(o - j);
  }
  const LabelGrid<Scalar>& grid() const { return m_grid; }
  double eps() const { return m_eps; }
  /// 0: pure eps-DP.
  double delta() const { return 0; }
  bool clipped() const { return m_clip; }
  /// The noise distribution on grid steps.
  const DiscreteLaplace& noise() const { return m_noise; }
  /// The noise ratio \f$\alpha = e^{-\gamma}\f$ (rounded to double; sampling does not use it).
  double alpha() const { return double(m_noise.alpha()); }
  /// \f$N\gamma\f$ rounded up: the guarantee the sampler realizes, at most eps.
  double realized_epsilon() const { return m_noise.realized_epsilon(double(m_grid.steps())); }
  /// The nominal scale \f$N/\varepsilon\f$ in grid steps ((hi-lo)/(eps g)).
  double scale() const { return double(m_grid.steps()) / m_eps; }

  /// \f$E[(M(y) - y)^2]\f$ without clipping, for y on the grid: \f$g^2\,2\alpha/(1-\alpha)^2\f$.
  Scalar unclipped_mean_squared_error() const {
    return Scalar(m_grid.step() * m_grid.step() * m_noise.second_moment());
  }

  /// \f$E[(M(y) - y)^2]\f$ for any finite label y (clipped and rounded first, measured from y
  /// itself). Clipped on at most 4096 steps: the sum over the N + 1 outputs of the exact rows of
  /// finite() (the closed form subtracts terms of order \f$1/\gamma^3\f$ and loses digits at tiny
  /// eps); otherwise the closed form (with clipping when the mechanism clips).
  Scalar conditional_loss(Scalar y) const {
    const std::int64_t n = m_grid.steps();
    if (!m_clip || n > 4096) return Scalar(detail::grid_laplace_loss(m_grid, m_noise, y, m_clip));
    const std::int64_t j = m_grid.index(y);
    long double sum = 0;
    for (std::int64_t o = 0; o <= n; ++o) {
      const long double e = static_cast<long double>(m_grid.output(o, true)) - static_cast<long double>(y);
      sum += clipped_probability(j, o) * e * e;
    }
    return Scalar(sum);
  }

  /// The clipped mechanism as an exact (N+1) x (N+1) matrix on the grid:
  /// \f$P[j][m] = c\,\alpha^{|m-j|}\f$ inside, \f$\alpha^{j}/(1+\alpha)\f$ at m = 0 and
  /// \f$\alpha^{N-j}/(1+\alpha)\f$ at m = N (the clipped tails), \f$c = (1-\alpha)/(1+\alpha)\f$.
  /// \throws std::logic_error when the mechanism does not clip (its outputs are unbounded);
  ///         std::invalid_argument when N > 4096 (the matrix would be too large) or eps > 700.
  FiniteMechanism<Scalar> finite() const {
    if (!m_clip) throw std::logic_error("the unclipped discrete Laplace mechanism has infinitely many outputs");
    // Entries are at least e^{-eps}: beyond 700 they would underflow to 0 (not eps-DP as stored).
    if (m_eps > 700) detail::fail_parameter("eps", "must be at most 700 for the discrete Laplace matrix", m_eps);
    const std::int64_t n = m_grid.steps();
    if (n > 4096)
      throw std::invalid_argument("grid of " + std::to_string(n + 1) +
                                  " points is too large for a matrix (at most 4097)");
    Matrix<Scalar> P(n + 1, n + 1);
    for (std::int64_t j = 0; j <= n; ++j)
      for (std::int64_t m = 0; m <= n; ++m) P(Index(j), Index(m)) = Scalar(clipped_probability(j, m));
    const Vector<Scalar> v = m_grid.values();
    return FiniteMechanism<Scalar>(v, v, std::move(P));
  }
  /// finite() (former name).
  FiniteMechanism<Scalar> mechanism() const { return finite(); }

  /// The mechanism file: the contract's baseline fields with `"mechanism":"discrete-laplace"`,
  /// `"resolution"` (g), `"scale"` (N/eps, in grid steps), `"realized_eps"` and the noise's
  /// exact \f$\gamma\f$ as `"gamma_num"`/`"gamma_den"` (decimal strings: integers up to 2^63).
  std::string to_json() const {
    return detail::baseline_json_head("discrete-laplace", m_eps, double(m_grid.lo()), double(m_grid.hi()), m_clip) +
           ",\"resolution\":" + json_number(double(m_grid.step())) + ",\"scale\":" + json_number(scale()) +
           ",\"realized_eps\":" + json_number(realized_epsilon()) + ",\"gamma_num\":\"" + std::to_string(m_noise.s()) +
           "\",\"gamma_den\":\"" + std::to_string(m_noise.t()) + "\"}";
  }

 private:
  // Pr[clip(j + Z, 0, N) = o], exactly in long double: the interior pmf, or a tail's mass at the
  // boundary outputs 0 and N.
  long double clipped_probability(std::int64_t j, std::int64_t o) const {
    const std::int64_t n = m_grid.steps();
    const long double gamma = m_noise.gamma(), a = m_noise.alpha();
    if (o == 0) return std::exp(-gamma * static_cast<long double>(j)) / (1 + a);
    if (o == n) return std::exp(-gamma * static_cast<long double>(n - j)) / (1 + a);
    return -std::expm1(-gamma) / (1 + a) * std::exp(-gamma * static_cast<long double>(std::llabs(o - j)));
  }

  static DiscreteLaplace make_noise(double eps, std::int64_t steps) {
    validate_epsilon(eps);
    return DiscreteLaplace::for_privacy(eps, double(steps));
  }

  LabelGrid<Scalar> m_grid;
  double m_eps;
  bool m_clip;
  DiscreteLaplace m_noise;
  std::shared_ptr<const ClippedDiscreteLaplace> m_table;  // shared: copies stay cheap
  std::shared_ptr<const std::vector<Scalar>> m_outputs;   // grid.output(o, true), o = 0..N, with m_table
  std::shared_ptr<const TabledDiscreteLaplace> m_tabled;  // unclipped: the audited noise table, if any
};

/// The Laplace mechanism \f$y + \mathrm{Lap}(b)\f$, \f$b = (hi - lo)/\varepsilon\f$, sampled
/// exactly on a public power-of-two grid (the approach of Google's differential-privacy library,
/// "Secure Noise Generation", here with an exact sampler): the label is clipped to [lo, hi] and
/// snapped to the nearest point \f$lo + g j\f$ with \f$g = 2^k\f$ the smallest power of two
/// \f$\ge b/2^{32}\f$ (and \f$\ge (hi-lo)/2^{42}\f$), and \f$g Z\f$ is added, Z discrete Laplace
/// on the integers. Every output is a function of the integer \f$j + Z\f$ alone, so the
/// floating-point attack of Mironov 2012 does not apply. (Google uses \f$b/2^{40}\f$; \f$2^{32}\f$
/// leaves 30 bits for \f$\gamma = s/t\f$ with \f$t \le 2^{62}\f$, so the rounding of the noise
/// scale costs about \f$10^{-9}\f$ relative instead of \f$10^{-7}\f$.)
///
/// The guarantee's loss from the grid: snapping turns the sensitivity \f$hi - lo\f$ into
/// \f$N g\f$ with \f$N = j(hi)\f$ grid steps, \f$|N g - (hi - lo)| \le g/2\f$ (up to one step wider
/// than the range, as labels snap up or down), and the noise is scaled to cover it exactly: \f$\gamma = s/t\f$ with
/// \f$N\gamma < \varepsilon\f$ exactly, so the realized guarantee (realized_epsilon()) is below eps and the noise scale
/// noise_scale() \f$= g/\gamma\f$ is b times \f$\frac{Ng}{hi-lo}\cdot\frac{\varepsilon}{N\gamma}\f$, within
/// \f$\max(2^{-33}/\varepsilon, 2^{-43}) + 2^{-29}\f$ of 1 (DiscreteLaplace::for_privacy() rounds \f$\gamma\f$ down);
/// the snapping moves a label by at most g/2 (at most \f$2^{-32} b\f$). Both are in the mechanism file
/// (`"noise_scale"`, `"realized_eps"`, `"granularity"`) and in expected_loss(), which is exact for the stated
/// discrete Laplace. With `clip`, outputs are clipped to [lo, hi] (post-processing).
///
/// Sampling: Z comes from a TabledDiscreteLaplace (tabled_noise()) for eps from about 1e-3 to 22,
/// about two 64-bit words per label, twice the throughput of the exact sampler of Canonne, Kamath
/// and Steinke 2020 (Algorithm 2), which is used otherwise. The table's realized privacy loss is
/// audited exactly against realized_epsilon() when it is built; its distribution is the stated
/// one's up to a scale \f$2^{-32}\f$ (\f$2^{-28}\f$ below eps 1/8) relative wider in its block
/// part and the \f$2^{-64}\f$ rounding of its weights (pmf within 1e-6 relative out to 20 scales),
/// far below the grid's own rounding above, so cdf() and expected_loss() state the ideal noise.
///
/// \code{.cpp}
/// labeldp::LaplaceMechanism<> lap(0.0, 5000.0, 1.0, false);
/// labeldp::SecureRandom gen;
/// double noisy = lap.sample(1234.5, gen);   // 1234.5 + Lap(5000), on a grid of step 2^-19
/// \endcode
template <typename Scalar = double>
class LaplaceMechanism : public detail::LatticeBaseline<LaplaceMechanism<Scalar>, Scalar> {
 public:
  /// \throws std::invalid_argument naming 'lo', 'hi' or 'eps' (finite, lo < hi, eps > 0 and at
  ///         least 2^-40), or hi - lo overflowing.
  LaplaceMechanism(Scalar lo, Scalar hi, double eps, bool clip)
      : m_grid(LabelGrid<Scalar>::power_of_two(lo, hi, Scalar(grid_step(lo, hi, eps)))),
        m_eps(eps),
        m_clip(clip),
        m_noise(DiscreteLaplace::for_privacy(eps, double(m_grid.steps()))),
        m_tabled(detail::make_tabled(m_noise, m_grid.steps())) {}

  /// The audited noise table samples are drawn from (TabledDiscreteLaplace; sample() adds its
  /// draw to the label's index), or null when eps is too small for one (below about 1e-3) and
  /// the exact DiscreteLaplace sampler is used.
  const TabledDiscreteLaplace* tabled_noise() const { return m_tabled.get(); }

  double eps() const { return m_eps; }
  /// 0: pure eps-DP.
  double delta() const { return 0; }
  Scalar lo() const { return m_grid.lo(); }
  Scalar hi() const { return m_grid.hi(); }
  bool clipped() const { return m_clip; }
  /// The power-of-two grid the labels are snapped to.
  const LabelGrid<Scalar>& grid() const { return m_grid; }
  /// b = (hi - lo)/eps, the nominal scale.
  double scale() const { return double(hi() - lo()) / m_eps; }
  /// g, the grid step (a power of two).
  double granularity() const { return double(m_grid.step()); }
  /// N, the sensitivity in grid steps after snapping.
  std::int64_t steps() const { return m_grid.steps(); }
  /// The scale of the noise actually added, \f$g/\gamma \ge b\f$ (label units).
  double noise_scale() const { return double(static_cast<long double>(m_grid.step()) * m_noise.scale()); }
  /// \f$N\gamma\f$ rounded up: the guarantee the sampler realizes, below eps.
  double realized_epsilon() const { return m_noise.realized_epsilon(double(m_grid.steps())); }
  /// The noise distribution on grid steps.
  const DiscreteLaplace& noise() const { return m_noise; }

  /// Grid index of `y` after clipping to [lo, hi]: in [0, steps()].
  /// \throws std::invalid_argument for a non-finite label.
  std::int64_t index(Scalar y) const { return m_grid.index(y); }
  /// The output for noisy index m: \f$lo + g m\f$ (clipped to [lo, hi] when the mechanism clips).
  Scalar value(std::int64_t m) const { return m_grid.output(m, m_clip); }

  /// \f$\Pr[M(y) \le x]\f$ for the stated discrete Laplace noise, exactly (what the exact sampler
  /// draws; the tabled one within about 1e-6 relative, see the class comment). Unclipped; clipped
  /// outputs add atoms at lo, hi.
  long double cdf(Scalar y, Scalar x) const {
    const long double k = std::floor((static_cast<long double>(x) - m_grid.lo()) / m_grid.step());
    const long double z = k - static_cast<long double>(index(y));
    if (m_clip) {
      if (x < m_grid.lo()) return 0;
      if (x >= m_grid.hi()) return 1;
    }
    if (z > 9e18L) return 1;
    if (z < -9e18L) return 0;
    return m_noise.cdf(std::int64_t(z));
  }

  /// \f$E[(M(y) - y)^2]\f$ for any finite label y (measured from y itself), exactly in closed
  /// form, with clipping when the mechanism clips.
  Scalar conditional_loss(Scalar y) const { return Scalar(detail::grid_laplace_loss(m_grid, m_noise, y, m_clip)); }

  /// The mechanism file: the contract's baseline fields with `"mechanism":"laplace"`,
  /// `"scale"` (b), and the grid's cost stated: `"granularity"` (g), `"grid_steps"` (N),
  /// `"noise_scale"` (\f$g/\gamma\f$, the scale actually used), `"realized_eps"`.
  std::string to_json() const {
    return detail::baseline_json_head("laplace", m_eps, double(lo()), double(hi()), m_clip) +
           ",\"scale\":" + json_number(scale()) + ",\"granularity\":" + json_number(granularity()) +
           ",\"grid_steps\":" + std::to_string(steps()) + ",\"noise_scale\":" + json_number(noise_scale()) +
           ",\"realized_eps\":" + json_number(realized_epsilon()) + "}";
  }

 private:
  static double grid_step(Scalar lo, Scalar hi, double eps) {
    detail::validate_label_range(double(lo), double(hi));
    validate_epsilon(eps);
    if (eps < std::ldexp(1.0, -40))
      detail::fail_parameter("eps", "must be at least 2^-40 for the Laplace mechanism", eps);
    const double range = double(hi) - double(lo);
    if (!std::isfinite(range)) throw std::invalid_argument("'hi' - 'lo' must be finite");
    const double want = std::max(range / eps / 4294967296.0, range / 4398046511104.0);  // b/2^32, range/2^42
    int e;
    const double f = std::frexp(want, &e);                          // want = f 2^e, f in [0.5, 1)
    return f == 0.5 ? std::ldexp(1.0, e - 1) : std::ldexp(1.0, e);  // smallest 2^k >= want
  }

  LabelGrid<Scalar> m_grid;
  double m_eps;
  bool m_clip;
  DiscreteLaplace m_noise;
  std::shared_ptr<const TabledDiscreteLaplace> m_tabled;  // the audited noise table, if any (shared: cheap copies)
};

/// The exponential mechanism restricted to the label range (Ghazi et al. 2023, App. F, on the
/// grid): \f$\Pr[M(y) = lo + g m] \propto e^{-\varepsilon |m - j(y)| / (2N)}\f$ for m = 0..N.
/// The score \f$-|m - j|\f$ has sensitivity N, so this is eps-DP (Definition 26); it avoids the
/// boundary spikes of clipping but pays a factor 2 in the noise scale.
/// \throws std::invalid_argument for a bad eps or a grid of more than 4097 points.
template <typename Scalar = double>
FiniteMechanism<Scalar> exponential_mechanism(const LabelGrid<Scalar>& grid, double eps) {
  validate_epsilon(eps);
  const std::int64_t n = grid.steps();
  if (n > 4096)
    throw std::invalid_argument("grid of " + std::to_string(n + 1) +
                                " points is too large for a matrix (at most 4097)");
  Matrix<Scalar> P(n + 1, n + 1);
  for (std::int64_t j = 0; j <= n; ++j) {
    for (std::int64_t m = 0; m <= n; ++m)
      P(Index(j), Index(m)) = std::exp(-Scalar(eps) * Scalar(std::llabs(m - j)) / (2 * Scalar(n)));
    P.row(Index(j)) /= P.row(Index(j)).sum();
  }
  const Vector<Scalar> v = grid.values();
  return FiniteMechanism<Scalar>(v, v, std::move(P));
}

/// The exponential mechanism of exponential_mechanism() as a Mechanism: labels clipped and
/// rounded to the grid, outputs drawn exactly from the row's realized probabilities (integer
/// alias table). Its outputs are always in [lo, hi] (`"clip":true`). The realized guarantee is
/// well below eps: a column's ratio is at most \f$e^{\varepsilon/2}\f$ times a ratio of
/// normalizers below \f$e^{\varepsilon/2}\f$, so the alias table's \f$2^{-60}\f$ relative rounding
/// cannot reach eps; the tests audit the realized matrix.
///
/// \code{.cpp}
/// labeldp::ExponentialMechanism<> em(labeldp::LabelGrid<>(0, 5000, 50), 1.0);
/// labeldp::SecureRandom gen;
/// double noisy = em.sample(1234.5, gen);
/// \endcode
template <typename Scalar = double>
class ExponentialMechanism {
 public:
  /// Largest number of grid steps (the mechanism keeps (N+1)^2 alias entries).
  static constexpr std::int64_t kMaxSteps = 1024;
  /// Largest eps (the weights \f$e^{-\varepsilon/2}\f$ must stay normal doubles).
  static constexpr double kMaxEps = 1000;

  /// \throws std::invalid_argument for a bad eps (or above kMaxEps) or a grid of more than
  ///         kMaxSteps steps.
  ExponentialMechanism(LabelGrid<Scalar> grid, double eps) : m_grid(grid), m_eps(eps), m_finite(build(grid, eps)) {}

  double eps() const { return m_eps; }
  /// 0: pure eps-DP.
  double delta() const { return 0; }
  const LabelGrid<Scalar>& grid() const { return m_grid; }
  /// The scale \f$2(hi - lo)/\varepsilon\f$ in label units.
  double scale() const { return 2 * double(m_grid.hi() - m_grid.lo()) / m_eps; }
  /// The exact (N+1) x (N+1) mechanism on the grid.
  const FiniteMechanism<Scalar>& finite() const { return m_finite; }

  /// A noisy label for `y` (clipped and rounded to the grid first). Exact.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    return m_finite.outputs()[m_finite.sample_index(Index(m_grid.index(y)), gen)];
  }
  /// Batch form: `out[i] = sample(in[i], gen)`, same draws in the same order.
  /// \throws std::invalid_argument when the sizes differ.
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const Scalar> in, std::span<Scalar> out, G& gen) const {
    sample_each(*this, in, out, gen);
  }

  /// \f$E[(M(y) - y)^2]\f$ for any finite label y (measured from y itself), O(N).
  Scalar conditional_loss(Scalar y) const {
    const Index j = Index(m_grid.index(y));
    long double s = 0;
    for (Index m = 0; m < m_finite.num_outputs(); ++m) {
      const long double d = static_cast<long double>(m_finite.outputs()[m]) - y;
      s += static_cast<long double>(m_finite.probabilities()(j, m)) * d * d;
    }
    return Scalar(s);
  }
  /// The expected squared error under `prior`.
  Scalar expected_loss(const FinitePrior<Scalar>& prior) const {
    return detail::prior_expectation(prior, [this](Scalar y) { return conditional_loss(y); });
  }

  /// The mechanism file: the contract's baseline fields with `"mechanism":"exponential"`,
  /// `"scale"` (2(hi-lo)/eps) and `"resolution"` (g).
  std::string to_json() const {
    return detail::baseline_json_head("exponential", m_eps, double(m_grid.lo()), double(m_grid.hi()), true) +
           ",\"scale\":" + json_number(scale()) + ",\"resolution\":" + json_number(double(m_grid.step())) + "}";
  }

 private:
  static FiniteMechanism<Scalar> build(const LabelGrid<Scalar>& grid, double eps) {
    validate_epsilon(eps);
    // Beyond this the far weights e^{-eps/2} underflow to 0 and the matrix would not be eps-DP.
    if (eps > kMaxEps) detail::fail_parameter("eps", "must be at most 1000 for the exponential mechanism", eps);
    if (grid.steps() > kMaxSteps)
      throw std::invalid_argument("the exponential mechanism's grid has " + std::to_string(grid.steps()) +
                                  " steps, more than the limit of " + std::to_string(kMaxSteps) +
                                  " (coarser 'resolution')");
    return exponential_mechanism(grid, eps);
  }

  LabelGrid<Scalar> m_grid;
  double m_eps;
  FiniteMechanism<Scalar> m_finite;
};

}  // namespace labeldp
