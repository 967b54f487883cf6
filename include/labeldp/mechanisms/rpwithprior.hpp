/// \file
/// RPWithPrior ("Response Privacy with Prior", ICLR submission):
/// the optimal interval (Lemma 3.5, Algorithm 1 and an exact O(m) solver), the mechanism
/// (3.4) with (3.6) clamping or (3.7) uniform outside the interval (Algorithm 2), its exact
/// density, CDF and privacy audit, an exact sampler on a public output grid, the closed-form
/// expected noisy-label MSE and the choice of \f$\zeta\f$ minimizing it. The two-stage
/// Algorithm 3 (Hist_eps prior, then RPWithPrior) is make_two_stage() with BuildRPWithPrior
/// (labeldp/mechanisms/two_stage.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/concepts.hpp"
#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/rpwithprior_interval.hpp"
#include "labeldp/mechanisms/detail/rpwithprior_reference.hpp"
#include "labeldp/prior/hist_eps.hpp"

namespace labeldp {

/// What RPWithPrior does with a label outside \f$[A_1, A_2]\f$ (Remark 3.4).
enum class OutsideRule {
  Clamp,   ///< (3.6): treat y as its projection \f$P_I(y)\f$ onto \f$[A_1, A_2]\f$.
  Uniform  ///< (3.7): uniform on \f$[A_1-\zeta, A_2+\zeta]\f$.
};

namespace detail {

/// \f$\lfloor a / b \rfloor\f$ for b > 0.
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// \f$\int_a^b (h - y)^3\,dy = \frac{(h-a)^4 - (h-b)^4}{4}\f$, written as
/// \f$(b-a)(u+v)(u^2+v^2)/4\f$ (u = h-a, v = h-b) to avoid cancellation.
template <typename Scalar>
Scalar integral_cube(Scalar h, Scalar a, Scalar b) {
  const Scalar u = h - a, v = h - b;
  return (b - a) * (u + v) * (u * u + v * v) / 4;
}

/// Closed-form expected MSE of the continuous mechanism (see RPWithPrior::expected_mse()).
template <typename Scalar>
Scalar rpwithprior_expected_mse(const HistogramPrior<Scalar>& prior, Scalar a1, Scalar a2, Scalar zeta, double eps,
                                OutsideRule rule) {
  const Scalar c = Scalar(std::exp(-eps));
  const Scalar gamma = 2 * zeta + c * (a2 - a1);
  const Vector<Scalar>& n = prior.edges();
  const Vector<Scalar>& alpha = prior.densities();
  // Work relative to the interval's midpoint to keep the quartics small.
  const Scalar mid = a1 + (a2 - a1) / 2;
  const Scalar lo = (a1 - zeta) - mid, hi = (a2 + zeta) - mid, A1 = a1 - mid, A2 = a2 - mid;
  Scalar total = 0;
  for (Index i = 0; i < prior.num_cells(); ++i) {
    if (!(alpha[i] > 0)) continue;
    const Scalar a = n[i] - mid, b = n[i + 1] - mid;
    // Segments: below A1, inside [A1, A2], above A2.
    const Scalar cuts[4] = {a, std::clamp(A1, a, b), std::clamp(A2, a, b), b};
    for (int s = 0; s < 3; ++s) {
      const Scalar u = cuts[s], v = cuts[s + 1];
      if (!(v > u)) continue;
      const Scalar whole = detail::integral_cube(hi, u, v) - detail::integral_cube(lo, u, v);
      Scalar seg;
      if (s != 1 && rule == OutsideRule::Uniform) {
        seg = whole / (3 * (hi - lo));
      } else if (s == 1) {
        seg = (c * whole + (1 - c) * (2 * zeta * zeta * zeta) * (v - u)) / (3 * gamma);
      } else {
        const Scalar x = s == 0 ? A1 : A2;
        const Scalar near = detail::integral_cube(x + zeta, u, v) - detail::integral_cube(x - zeta, u, v);
        seg = (c * whole + (1 - c) * near) / (3 * gamma);
      }
      total += alpha[i] * seg;
    }
  }
  return total;
}

}  // namespace detail

/// The RPWithPrior mechanism for a fixed interval \f$I = [A_1, A_2]\f$ (Algorithm 2).
///
/// **Continuous mechanism (the paper's).** For y in I, with \f$c = e^{-\varepsilon}\f$ and
/// \f$\gamma = 2\zeta + c(A_2 - A_1)\f$, the noisy label has density (3.4): \f$1/\gamma\f$ on
/// \f$[y-\zeta, y+\zeta]\f$, \f$c/\gamma\f$ on the rest of \f$N_I = [A_1-\zeta, A_2+\zeta]\f$. For y
/// outside I: (3.6) the density of \f$P_I(y)\f$, or (3.7) uniform \f$1/(2\zeta + A_2 - A_1)\f$
/// on \f$N_I\f$. density(), cdf(), conditional_mse() and expected_mse() are exact for it, and
/// continuous_epsilon() audits it exactly (it is \f$\varepsilon\f$ when \f$A_1 < A_2\f$).
///
/// **Sampled mechanism (what sample() outputs).** Outputs are on the public grid
/// \f$\{k g : k \in \mathbb{Z}\}\f$ (g = granularity). A floating-point sampler of a continuous
/// density would leak through rounding (Mironov 2012), so the sampler works on an integer
/// lattice of step \f$u = g / 2^b\f$ (b = lattice_bits): \f$A_1, A_2, \zeta\f$ and the clamped
/// label are rounded to lattice points \f$a_1, a_2, Z \ge 1, Y\f$ (a deterministic function of
/// the label, so privacy is unaffected). Since (3.4) is \f$c/\gamma\f$ on all of \f$N_I\f$ plus
/// \f$(1-c)/\gamma\f$ on \f$N_y\f$, it is the mixture "with probability q uniform on
/// \f$[a_1 - Z, a_2 + Z)\f$ (W points), else uniform on \f$[Y - Z, Y + Z)\f$ (2Z points)" with
/// \f$q = cW/(cW + (1-c)2Z)\f$; a lattice point p is output as the grid point nearest to it. Each
/// step is exact: core bernoulli() for q (q is a double, so realized exactly) and
/// uniform_below() for the points. The probability of grid output k is therefore exactly
/// \f$r_k(Y) = q\,n_k/W + (1-q)\,m_k(Y)/(2Z)\f$ (\f$n_k\f$, \f$m_k(Y)\f$ the lattice points of
/// the two uniforms in cell k), and for (3.7) outside I exactly \f$n_k/W\f$.
///
/// **Guarantee of the sampled mechanism.** Since \f$0 \le m_k \le n_k\f$, every ratio
/// \f$r_k(Y)/r_k(Y')\f$ is at most \f$1 + (1-q)W/(2Zq)\f$; q is rounded up until that bound,
/// evaluated in long double, is at most \f$\varepsilon\f$ (realized_epsilon_bound()); under
/// (3.7) the uniform rows \f$n_k/W\f$ are within the same factor of every other row, because
/// \f$2Z \le W\f$ gives \f$1/q \le 1 + (1-q)W/(2Zq)\f$ and \f$q + (1-q)W/(2Z) \le 1 + (1-q)W/(2Zq)\f$. The exact
/// privacy loss of the sampled mechanism, \f$\max_k \max_{y,y'} \ln(r_k(y)/r_k(y'))\f$, is
/// discretized_epsilon(): \f$m_k(Y)\f$ is the overlap of a sliding window with a fixed cell, a
/// piecewise-linear function of the integer Y whose kinks are where \f$Y \pm Z\f$ crosses the
/// cell's ends; its extremes over \f$[a_1, a_2]\f$ are therefore at those kinks or at
/// \f$a_1, a_2\f$, a finite candidate set checked per output (O(outputs)).
///
/// \tparam Scalar floating-point type.
///
/// \code{.cpp}
/// auto prior = labeldp::HistogramPrior<>::from_masses({0, 1, 2, 3}, {1, 8, 1});
/// auto mech = labeldp::RPWithPrior<>::optimal(prior, 1.0, 0.25, 1e-3);
/// labeldp::SecureRandom gen;
/// double noisy = mech.sample(1.4, gen);   // a multiple of 1e-3 in [A1 - zeta, A2 + zeta]
/// \endcode
template <typename Scalar = double>
class RPWithPrior {
 public:
  /// Default lattice refinement: \f$2^{20}\f$ lattice points per grid cell.
  static constexpr int kDefaultLatticeBits = 20;

  /// \param a1 \f$A_1\f$, \param a2 \f$A_2 \ge A_1\f$ (finite). \param zeta \f$\zeta > 0\f$.
  /// \param eps \f$\varepsilon > 0\f$. \param granularity output grid step g > 0.
  /// \param rule what to do outside \f$[A_1, A_2]\f$. \param lattice_bits b in [1, 30].
  /// \throws std::invalid_argument naming the parameter: non-finite or a1 > a2; zeta, eps or
  ///         granularity not finite and positive; lattice_bits out of range; zeta below one
  ///         lattice step \f$g/2^b\f$; a grid with more than \f$2^{30}\f$ outputs on \f$N_I\f$, or
  ///         \f$|A_1|, |A_2| > 2^{50} g\f$ (granularity too fine to index).
  RPWithPrior(Scalar a1, Scalar a2, Scalar zeta, double eps, Scalar granularity, OutsideRule rule = OutsideRule::Clamp,
              int lattice_bits = kDefaultLatticeBits)
      : m_a1(a1), m_a2(a2), m_zeta(zeta), m_eps(eps), m_g(granularity), m_rule(rule), m_bits(lattice_bits) {
    validate_finite("a1", double(a1));
    validate_finite("a2", double(a2));
    if (a1 > a2) detail::fail_parameter("a1", "must be <= 'a2' = " + detail::format_number(double(a2)), double(a1));
    validate_finite_positive("zeta", double(zeta));
    validate_epsilon(eps);
    validate_finite_positive("granularity", double(granularity));
    if (lattice_bits < 1 || lattice_bits > 30)
      detail::fail_parameter("lattice_bits", "must be in [1, 30]", lattice_bits);
    m_c = Scalar(std::exp(-eps));
    m_gamma = 2 * zeta + m_c * (a2 - a1);
    m_lo = a1 - zeta;
    m_hi = a2 + zeta;
    if (!std::isfinite(double(m_hi - m_lo)))
      detail::fail_parameter("zeta", "must keep A2 - A1 + 2 zeta finite", double(zeta));
    build_lattice();
  }

  /// Algorithm 2 with line 1 done by optimal_interval(): the mechanism on the interval that
  /// maximizes F for `prior` (same parameters and errors as the constructor).
  static RPWithPrior optimal(const HistogramPrior<Scalar>& prior, double eps, Scalar zeta, Scalar granularity,
                             OutsideRule rule = OutsideRule::Clamp, int lattice_bits = kDefaultLatticeBits) {
    const OptimalInterval<Scalar> best = optimal_interval(prior, eps, zeta);
    return RPWithPrior(best.a1, best.a2, zeta, eps, granularity, rule, lattice_bits);
  }

  /// \f$A_1\f$.
  Scalar a1() const { return m_a1; }
  /// \f$A_2\f$.
  Scalar a2() const { return m_a2; }
  /// \f$\zeta\f$.
  Scalar zeta() const { return m_zeta; }
  /// \f$\varepsilon\f$ (pure eps-DP: delta() is 0).
  double eps() const { return m_eps; }
  double delta() const { return 0; }
  /// \f$\gamma = 2\zeta + e^{-\varepsilon}(A_2 - A_1)\f$.
  Scalar gamma() const { return m_gamma; }
  /// Output grid step g.
  Scalar granularity() const { return m_g; }
  /// Rule outside the interval.
  OutsideRule rule() const { return m_rule; }
  /// Lattice refinement b: \f$2^b\f$ lattice points per grid cell.
  int lattice_bits() const { return m_bits; }

  // --- continuous mechanism (3.4), (3.6), (3.7) -------------------------------------------

  /// Density of the noisy label at `out` for the label y ((3.4) with (3.6) or (3.7)); the
  /// neighbourhood \f$[x-\zeta, x+\zeta]\f$ is closed (densities are defined almost everywhere).
  /// \throws std::invalid_argument when y or out is NaN.
  Scalar density(Scalar out, Scalar y) const {
    check_label(y);
    if (std::isnan(out)) detail::fail_parameter("out", "must not be NaN", double(out));
    if (out < m_lo || out > m_hi) return Scalar(0);
    if (uniform_outside(y)) return Scalar(1) / (m_hi - m_lo);
    const Scalar x = project(y);
    return std::abs(out - x) <= m_zeta ? Scalar(1) / m_gamma : m_c / m_gamma;
  }

  /// \f$\Pr[\tilde Y \le x \mid Y = y]\f$ of the continuous mechanism (piecewise linear in x).
  /// \throws std::invalid_argument when y or x is NaN.
  Scalar cdf(Scalar x, Scalar y) const {
    check_label(y);
    if (std::isnan(x)) detail::fail_parameter("x", "must not be NaN", double(x));
    const Scalar base = std::clamp(x, m_lo, m_hi) - m_lo;
    if (uniform_outside(y)) return base / (m_hi - m_lo);
    const Scalar center = project(y);
    const Scalar near = std::clamp(x, center - m_zeta, center + m_zeta) - (center - m_zeta);
    return std::min(Scalar(1), (m_c * base + (1 - m_c) * near) / m_gamma);
  }

  /// Exact privacy audit of the continuous densities: the supremum over noisy labels \f$\tilde y\f$
  /// and label pairs of \f$\ln(f(\tilde y|y)/f(\tilde y|y'))\f$, ignoring null sets.
  ///
  /// Exactness: for fixed \f$\tilde y \in N_I\f$ the density over inputs takes its largest value
  /// at \f$y = P_I(\tilde y)\f$ (always within \f$\zeta\f$) and its smallest, when some input in I
  /// is farther than \f$\zeta\f$, at \f$A_1\f$ or \f$A_2\f$ (I minus an interval contains an end of
  /// I); inputs outside I behave as \f$A_1\f$/\f$A_2\f$ (3.6) or all alike (3.7). For these inputs
  /// the density is constant in \f$\tilde y\f$ between the breakpoints \f$A_1 \pm \zeta, A_2 \pm
  /// \zeta\f$, so one \f$\tilde y\f$ per piece (its midpoint) suffices; density() is evaluated there.
  double continuous_epsilon() const {
    std::vector<Scalar> cuts{m_lo, m_a1 + m_zeta, m_a2 - m_zeta, m_hi};
    std::sort(cuts.begin(), cuts.end());
    const Scalar below = m_a1 - (1 + std::abs(m_a1)), above = m_a2 + (1 + std::abs(m_a2));
    double worst = 0;
    for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
      const Scalar a = std::max(cuts[s], m_lo), b = std::min(cuts[s + 1], m_hi);
      if (!(b > a)) continue;
      const Scalar t = a + (b - a) / 2;
      const Scalar inputs[5] = {m_a1, m_a2, project(t), below, above};
      Scalar hi = 0, lo = std::numeric_limits<Scalar>::infinity();
      for (Scalar y : inputs) {
        const Scalar d = density(t, y);
        hi = std::max(hi, d);
        lo = std::min(lo, d);
      }
      worst = std::max(worst, double(std::log(hi) - std::log(lo)));
    }
    return worst;
  }

  /// \f$E[(\tilde Y - y)^2 \mid Y = y]\f$ of the continuous mechanism, in closed form:
  /// \f$\frac{c}{3\gamma}[(h-y)^3 - (l-y)^3] + \frac{1-c}{3\gamma}[(x+\zeta-y)^3 - (x-\zeta-y)^3]\f$
  /// with \f$[l, h] = N_I\f$, \f$x = P_I(y)\f$ (3.4/3.6), or \f$\frac{(h-y)^3 - (l-y)^3}{3(h-l)}\f$
  /// outside I under (3.7).
  Scalar conditional_mse(Scalar y) const {
    check_label(y);
    auto cube_diff = [](Scalar hi, Scalar lo) { return hi * hi * hi - lo * lo * lo; };
    const Scalar whole = cube_diff(m_hi - y, m_lo - y);
    if (uniform_outside(y)) return whole / (3 * (m_hi - m_lo));
    const Scalar x = project(y);
    return (m_c * whole + (1 - m_c) * cube_diff(x + m_zeta - y, x - m_zeta - y)) / (3 * m_gamma);
  }

  /// Expected noisy-label MSE \f$E_{Y \sim f_Y} E[(\tilde Y - Y)^2 \mid Y]\f$ of the continuous
  /// mechanism under a histogram prior, in closed form, O(m): on each cell (split at
  /// \f$A_1, A_2\f$) the density is constant and conditional_mse() is a cubic in y, integrated
  /// exactly with \f$\int_a^b (h-y)^3 dy = ((h-a)^4 - (h-b)^4)/4\f$. (The sampled mechanism
  /// rounds outputs to the grid: its root-MSE differs from this one's by at most g/2.)
  Scalar expected_mse(const HistogramPrior<Scalar>& prior) const {
    return detail::rpwithprior_expected_mse(prior, m_a1, m_a2, m_zeta, m_eps, m_rule);
  }

  // --- sampled mechanism on the output grid -----------------------------------------------

  /// Number of grid outputs with positive probability (those meeting \f$N_I\f$).
  Index num_outputs() const { return Index(m_k_hi - m_k_lo + 1); }

  /// Grid output i (i = 0..num_outputs()-1), increasing: \f$(k_{lo} + i) g\f$.
  Scalar output(Index i) const { return Scalar(m_k_lo + i) * m_g; }

  /// All grid outputs, increasing.
  Vector<Scalar> outputs() const {
    Vector<Scalar> o(num_outputs());
    for (Index i = 0; i < o.size(); ++i) o[i] = output(i);
    return o;
  }

  /// The probability q of the "uniform on \f$N_I\f$" component of the sampler (a double,
  /// realized exactly by bernoulli()).
  double base_probability() const { return m_q; }

  /// Upper bound on the sampled mechanism's privacy loss, \f$\ln(1 + (1-q)W/(2Zq)) \le
  /// \varepsilon\f$, evaluated in long double after q was rounded up to satisfy it.
  double realized_epsilon_bound() const { return m_bound; }

  /// The exact output distribution of sample() for label y: entry i is
  /// \f$\Pr[\text{sample}(y) = \text{output}(i)]\f$ (an exact rational, rounded to Scalar).
  /// \throws std::invalid_argument when y is NaN.
  Vector<Scalar> output_probabilities(Scalar y) const {
    check_label(y);
    Vector<Scalar> r(num_outputs());
    const bool uniform = uniform_outside(y);
    const std::int64_t Y = lattice_label(y);
    for (Index i = 0; i < r.size(); ++i) {
      const std::int64_t s = cell_start(m_k_lo + i), e = cell_start(m_k_lo + i + 1);
      const long double n = (long double)overlap(s, e, m_lat_lo, m_lat_hi);
      if (uniform) {
        r[i] = Scalar(n / (long double)m_w);
      } else {
        const long double mk = (long double)overlap(s, e, Y - m_z, Y + m_z);
        r[i] = Scalar((long double)m_q * n / (long double)m_w + (1 - (long double)m_q) * mk / (long double)(2 * m_z));
      }
    }
    return r;
  }

  /// The sampled mechanism restricted to the given labels, as a core FiniteMechanism (rows
  /// output_probabilities(), columns outputs()), e.g. for core audit_epsilon() or expected_loss().
  /// \throws std::invalid_argument unless `inputs` are finite and strictly increasing.
  FiniteMechanism<Scalar> finite_mechanism(const std::vector<Scalar>& inputs) const {
    Matrix<Scalar> P(Index(inputs.size()), num_outputs());
    for (std::size_t r = 0; r < inputs.size(); ++r) {
      validate_finite("input", double(inputs[r]));
      P.row(Index(r)) = output_probabilities(inputs[r]).transpose();
    }
    // The exact rows meet the ratio bound with equality when the sampled mechanism is exactly
    // eps-DP; rounded to doubles a ratio can exceed e^eps by an ulp. Lower such entries (by ~1e-16)
    // so the table is eps-DP exactly as stored, as every printed mechanism must be.
    cap_to_epsilon(P, table_epsilon(m_eps));
    return FiniteMechanism<Scalar>(Eigen::Map<const Vector<Scalar>>(inputs.data(), Index(inputs.size())), outputs(),
                                   std::move(P));
  }

  /// Exact privacy loss of the sampled mechanism: \f$\max_i \max_{y,y'} \ln(r_i(y)/r_i(y'))\f$
  /// over all real labels (see the class comment for why the finite candidate set is exact).
  double discretized_epsilon() const {
    long double worst = 0;
    for (Index i = 0; i < num_outputs(); ++i) {
      const std::int64_t s = cell_start(m_k_lo + i), e = cell_start(m_k_lo + i + 1);
      const long double n = (long double)overlap(s, e, m_lat_lo, m_lat_hi);
      const std::int64_t cand[6] = {m_a1l, m_a2l, s - m_z, s + m_z, e - m_z, e + m_z};
      std::int64_t mmax = 0, mmin = std::numeric_limits<std::int64_t>::max();
      for (std::int64_t Y : cand) {
        Y = std::clamp(Y, m_a1l, m_a2l);
        const std::int64_t mk = overlap(s, e, Y - m_z, Y + m_z);
        mmax = std::max(mmax, mk);
        mmin = std::min(mmin, mk);
      }
      const long double q = m_q, w = (long double)m_w, z2 = (long double)(2 * m_z);
      long double hi = q * n / w + (1 - q) * (long double)mmax / z2;
      long double lo = q * n / w + (1 - q) * (long double)mmin / z2;
      if (m_rule == OutsideRule::Uniform) {
        hi = std::max(hi, n / w);
        lo = std::min(lo, n / w);
      }
      worst = std::max(worst, std::log(hi) - std::log(lo));
    }
    return double(worst);
  }

  /// Index (into outputs()) of a noisy label for y, drawn exactly from output_probabilities(y).
  /// The same draws for every label: the coin of probability q first (also for a label outside
  /// the interval under the uniform rule, where it is not needed), then one uniform offset; so
  /// one word each, a second only on a tie or a rejection (probability below 2^-40).
  /// \throws std::invalid_argument when y is NaN.
  template <std::uniform_random_bit_generator G>
  Index sample_index(Scalar y, G& gen) const {
    check_label(y);
    std::int64_t p;
    const bool coin = bernoulli(m_q, gen);
    if (coin || uniform_outside(y)) {
      p = m_lat_lo + std::int64_t(uniform_below(std::uint64_t(m_w), gen));
    } else {
      p = lattice_label(y) - m_z + std::int64_t(uniform_below(std::uint64_t(2 * m_z), gen));
    }
    return Index(cell_of_point(p) - m_k_lo);
  }

  /// A noisy label for y: a grid point \f$k g\f$ in \f$N_I\f$ (Algorithm 2, sampled exactly).
  /// \throws std::invalid_argument when y is NaN.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    return output(sample_index(y, gen));
  }

  /// Batch form: `out[i] = sample(in[i], gen)`, the same draws in the same order.
  /// \throws std::invalid_argument when the spans differ in length, or for a NaN label.
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const Scalar> in, std::span<Scalar> out, G& gen) const {
    sample_each(*this, in, out, gen);
  }

  /// The mechanism file (the labeldp CLI contract): its defining parameters, from which
  /// io::load_mechanism() rebuilds it.
  std::string to_json() const {
    return "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"rpwithprior\",\"eps\":" +
           json_number(m_eps) + ",\"delta\":0,\"zeta\":" + json_number(double(m_zeta)) +
           ",\"A1\":" + json_number(double(m_a1)) + ",\"A2\":" + json_number(double(m_a2)) +
           ",\"granularity\":" + json_number(double(m_g)) +
           ",\"outside\":" + json_string(m_rule == OutsideRule::Clamp ? "clamp" : "uniform") +
           ",\"lattice_bits\":" + std::to_string(m_bits) + "}";
  }

 private:
  static void check_label(Scalar y) {
    if (std::isnan(y)) detail::fail_parameter("y", "must not be NaN", double(y));
  }
  bool uniform_outside(Scalar y) const { return m_rule == OutsideRule::Uniform && (y < m_a1 || y > m_a2); }
  Scalar project(Scalar y) const { return std::clamp(y, m_a1, m_a2); }

  std::int64_t to_lattice(Scalar x) const { return std::int64_t(std::llround(double((x - m_origin) / m_step))); }
  std::int64_t lattice_label(Scalar y) const { return std::clamp(to_lattice(project(y)), m_a1l, m_a2l); }
  /// Grid index of lattice point p: nearest grid point, ties upward.
  std::int64_t cell_of_point(std::int64_t p) const {
    return m_k0 + detail::floor_div(p + (std::int64_t(1) << (m_bits - 1)), std::int64_t(1) << m_bits);
  }
  /// First lattice point of grid cell k.
  std::int64_t cell_start(std::int64_t k) const {
    return (k - m_k0) * (std::int64_t(1) << m_bits) - (std::int64_t(1) << (m_bits - 1));
  }
  static std::int64_t overlap(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return std::max<std::int64_t>(0, std::min(b, d) - std::max(a, c));
  }

  void build_lattice() {
    const double span_cells = double((m_hi - m_lo) / m_g);
    if (!(span_cells <= 1073741824.0))
      detail::fail_parameter("granularity",
                             "must be at least (A2 - A1 + 2 zeta) / 2^30 = " +
                                 detail::format_number(double((m_hi - m_lo) / Scalar(1073741824.0))),
                             double(m_g));
    const double limit = std::ldexp(1.0, 50);
    if (!(std::abs(double(m_a1 / m_g)) <= limit && std::abs(double(m_a2 / m_g)) <= limit))
      detail::fail_parameter(
          "granularity",
          "must be at least max(|A1|, |A2|) / 2^50 = " +
              detail::format_number(std::max(std::abs(double(m_a1)), std::abs(double(m_a2))) / limit),
          double(m_g));
    m_step = std::ldexp(m_g, -m_bits);
    m_k0 = std::int64_t(std::llround(double(m_a1 / m_g)));
    m_origin = Scalar(m_k0) * m_g;
    m_z = std::int64_t(std::llround(double(m_zeta / m_step)));
    if (m_z < 1)
      detail::fail_parameter(
          "zeta",
          "must be at least one lattice step granularity / 2^lattice_bits = " + detail::format_number(double(m_step)),
          double(m_zeta));
    m_a1l = to_lattice(m_a1);
    m_a2l = std::max(m_a1l, to_lattice(m_a2));
    m_lat_lo = m_a1l - m_z;
    m_lat_hi = m_a2l + m_z;
    m_w = m_lat_hi - m_lat_lo;
    m_k_lo = cell_of_point(m_lat_lo);
    m_k_hi = cell_of_point(m_lat_hi - 1);
    // q = cW / (cW + (1-c) 2Z), rounded up until the realized bound is at most eps.
    const long double c = std::exp(-(long double)m_eps);
    const long double W = (long double)m_w, Z2 = (long double)(2 * m_z);
    const long double q_ideal = c * W / (c * W + (1 - c) * Z2);
    double q = double(q_ideal);
    if ((long double)q < q_ideal) q = std::nextafter(q, 2.0);
    auto bound = [&](double qd) {
      const long double ql = qd;
      return std::log1p((1 - ql) / ql * W / Z2);
    };
    const long double slack = 8 * std::numeric_limits<long double>::epsilon() * std::max<long double>(1, m_eps);
    while (q < 1 && bound(q) > (long double)m_eps - slack) q = std::nextafter(q, 2.0);
    m_q = std::min(q, 1.0);
    m_bound = double(bound(m_q));
  }

  Scalar m_a1, m_a2, m_zeta;
  double m_eps;
  Scalar m_g;
  OutsideRule m_rule;
  int m_bits;
  Scalar m_c{}, m_gamma{}, m_lo{}, m_hi{};
  // Lattice of step m_step = g / 2^bits; lattice point p is the real m_origin + p * m_step.
  Scalar m_step{}, m_origin{};
  std::int64_t m_k0 = 0, m_z = 0, m_a1l = 0, m_a2l = 0, m_lat_lo = 0, m_lat_hi = 0, m_w = 0, m_k_lo = 0, m_k_hi = 0;
  double m_q = 1, m_bound = 0;
};

/// \f$\zeta\f$ chosen for the user, with its interval and expected MSE.
template <typename Scalar = double>
struct ZetaChoice {
  Scalar zeta;                       ///< The chosen \f$\zeta\f$.
  OptimalInterval<Scalar> interval;  ///< optimal_interval() for that \f$\zeta\f$.
  Scalar expected_mse;               ///< RPWithPrior::expected_mse() of the resulting mechanism.
  Index evaluations;                 ///< Number of \f$\zeta\f$ values evaluated.
};

/// The expected noisy-label MSE of the continuous RPWithPrior whose interval is optimal for
/// \f$\zeta\f$: optimal_interval() then RPWithPrior::expected_mse() (O(m)).
/// \throws std::invalid_argument naming 'eps' or 'zeta'.
template <typename Scalar>
Scalar rpwithprior_mse(const HistogramPrior<Scalar>& prior, double eps, Scalar zeta,
                       OutsideRule rule = OutsideRule::Clamp) {
  const OptimalInterval<Scalar> best = optimal_interval(prior, eps, zeta);
  return detail::rpwithprior_expected_mse(prior, best.a1, best.a2, zeta, eps, rule);
}

/// Chooses \f$\zeta\f$ minimizing rpwithprior_mse() (the paper tunes \f$\zeta\f$ by hand, its
/// table H.4). The MSE is not unimodal in \f$\zeta\f$ (the optimal interval jumps between
/// nodes), so it is scanned on `grid_points` log-spaced values in \f$[10^{-6} w, 10 w]\f$
/// (w = support width \f$n_m - n_0\f$) and refined by golden-section search between the
/// neighbours of the best grid value; the result is never worse than any scanned value.
/// For small eps the MSE can keep decreasing as \f$\zeta \to 0\f$ (the interval shrinks to the
/// densest cell and RPWithPrior degenerates into clamping, MSE near the prior's spread around
/// it); the lower end of the range is then returned. Cost: O(m) per evaluation, about
/// grid_points + 80 evaluations.
/// \throws std::invalid_argument naming 'eps' or 'grid_points' (>= 3).
template <typename Scalar>
ZetaChoice<Scalar> choose_zeta(const HistogramPrior<Scalar>& prior, double eps, OutsideRule rule = OutsideRule::Clamp,
                               Index grid_points = 161) {
  validate_epsilon(eps);
  if (grid_points < 3) detail::fail_parameter("grid_points", "must be >= 3", double(grid_points));
  const Scalar width = prior.upper() - prior.lower();
  const double lo = std::log(double(width) * 1e-6), hi = std::log(double(width) * 10);
  Index evals = 0;
  auto mse_at = [&](double log_zeta) {
    ++evals;
    return rpwithprior_mse(prior, eps, Scalar(std::exp(log_zeta)), rule);
  };
  std::vector<double> xs(static_cast<std::size_t>(grid_points));
  std::vector<Scalar> ys(static_cast<std::size_t>(grid_points));
  std::size_t best = 0;
  for (std::size_t s = 0; s < xs.size(); ++s) {
    xs[s] = lo + (hi - lo) * double(s) / double(xs.size() - 1);
    ys[s] = mse_at(xs[s]);
    if (ys[s] < ys[best]) best = s;
  }
  double a = xs[best > 0 ? best - 1 : 0], b = xs[std::min(best + 1, xs.size() - 1)];
  double best_x = xs[best];
  Scalar best_y = ys[best];
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
  Scalar f1 = mse_at(x1), f2 = mse_at(x2);
  for (int it = 0; it < 40; ++it) {
    if (f1 < f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - phi * (b - a);
      f1 = mse_at(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + phi * (b - a);
      f2 = mse_at(x2);
    }
    if (f1 < best_y) {
      best_y = f1;
      best_x = x1;
    }
    if (f2 < best_y) {
      best_y = f2;
      best_x = x2;
    }
  }
  const Scalar zeta = Scalar(std::exp(best_x));
  return ZetaChoice<Scalar>{zeta, optimal_interval(prior, eps, zeta), best_y, evals};
}

}  // namespace labeldp
