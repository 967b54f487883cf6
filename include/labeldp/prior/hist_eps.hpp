/// \file
/// Hist_eps: the private histogram prior of RPWithPrior (ICLR submission, Algorithm 4 in
/// Appendix G): Laplace-noised labels, histogrammed. The paper gives no noise scale; labels
/// are clipped to public bounds [lo, hi] and the noise has scale (hi - lo)/eps,
/// drawn exactly as discrete Laplace noise on a public grid.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// Public parameters of Hist_eps. Every field has a documented default; check() (called first
/// by hist_eps(), hist_eps_noisy_labels() and hist_eps_paper_nodes()) throws
/// std::invalid_argument naming the first bad field. An aggregate: HistEpsOptions{lo, hi, eps,
/// resolution}.
///
/// \code{.cpp}
/// const labeldp::HistEpsOptions opt{0.0, 100.0, 0.5, 1.0};   // labels in [0, 100], eps 0.5, grid 1
/// auto h = labeldp::hist_eps(labels, edges, opt, gen);
/// \endcode
struct HistEpsOptions {
  double lo = 0;  ///< Default 0 (label units, public, finite, < hi). Lower clipping bound.
  double hi = 1;  ///< Default 1 (label units, public, finite, > lo). Upper clipping bound.
  /// Default 1 (finite, > 0). Privacy budget of the noisy labels (each label's guarantee).
  double eps = 1;
  /// Default 0.01 (label units, public, finite, > 0, at least (hi - lo) / 2^32). Noise grid step
  /// r: labels and noise live on lo + r Z.
  double resolution = 0.01;

  /// Checks every field against the rule in its comment.
  /// \throws std::invalid_argument naming the first bad field, e.g.
  ///         "'lo' must be less than 'hi' = 1, got 2".
  void check() const {
    validate_finite("lo", lo);
    validate_finite("hi", hi);
    if (!(lo < hi)) detail::fail_parameter("lo", "must be less than 'hi' = " + detail::format_number(hi), lo);
    validate_epsilon(eps);
    validate_finite_positive("resolution", resolution);
    if (!(std::ceil((hi - lo) / resolution) <= 4294967296.0))
      detail::fail_parameter("resolution",
                             "must be at least (hi - lo) / 2^32 = " + detail::format_number((hi - lo) / 4294967296.0),
                             resolution);
  }
};

/// Output of Hist_eps.
template <typename Scalar = double>
struct HistEpsResult {
  HistogramPrior<Scalar> prior;      ///< Histogram of the noisy labels (the private prior).
  std::vector<Scalar> noisy_labels;  ///< The noisy labels \f$M_{\varepsilon,Lap}(y)\f$, in input order.
  double alpha;                      ///< Ratio \f$e^{-\gamma}\f$ of the two-sided geometric noise (rounded).
  std::int64_t steps;                ///< N: grid steps spanning [lo, hi] (the L1 sensitivity in steps).
  double epsilon;                    ///< Realized guarantee \f$N \gamma \le\f$ eps (rounded up).
};

namespace detail {

struct HistEpsNoise {
  std::int64_t steps;
  DiscreteLaplace laplace;  ///< \f$\Pr[Z = z] \propto e^{-\gamma |z|}\f$, \f$N\gamma < \varepsilon\f$ exactly
  double alpha;             ///< \f$e^{-\gamma}\f$ rounded (reporting only)
  double epsilon;           ///< \f$N\gamma\f$ rounded up
};

inline HistEpsNoise hist_eps_noise(const HistEpsOptions& o) {
  o.check();
  const double steps = std::ceil((o.hi - o.lo) / o.resolution);
  const std::int64_t n = std::max<std::int64_t>(1, std::int64_t(steps));
  const DiscreteLaplace laplace = DiscreteLaplace::for_privacy(o.eps, double(n));
  return HistEpsNoise{n, laplace, double(laplace.alpha()), laplace.realized_epsilon(double(n))};
}

}  // namespace detail

/// The noisy labels of Algorithm 4 (\f$M_{\varepsilon,Lap}(y)\f$), exactly: each label is clipped
/// to [lo, hi] (labels outside are clipped, not rejected; only NaN is rejected), rounded to the
/// nearest point \f$lo + j r\f$, \f$j \in \{0..N\}\f$, \f$N = \lceil (hi-lo)/r \rceil\f$, and moved by
/// \f$Z r\f$ with Z two-sided geometric, \f$\Pr[Z=z] \propto \alpha^{|z|}\f$,
/// \f$\alpha = e^{-\gamma}\f$ with a rational \f$\gamma \le \varepsilon/N\f$ (core
/// DiscreteLaplace::for_privacy(), exact).
///
/// Guarantee: replacing one label moves its j by at most N and leaves the other noisy labels
/// unchanged, so every output's probability changes by a factor at most \f$\alpha^{-N}\f$: the
/// vector of noisy labels is \f$N \gamma < \varepsilon\f$ label-DP, exactly (no floating-point
/// sampling). It is Laplace noise of scale \f$N r/\varepsilon \approx (hi-lo)/\varepsilon\f$ on
/// the grid r. Cost: O(1) expected per label whatever N (Canonne, Kamath and Steinke 2020,
/// Algorithm 2); eps / N must be at least \f$2^{-42}\f$.
/// \throws std::invalid_argument naming 'lo', 'hi', 'eps', 'resolution' or 'label' (NaN).
template <typename Scalar, std::uniform_random_bit_generator G>
std::vector<Scalar> hist_eps_noisy_labels(const std::vector<Scalar>& labels, const HistEpsOptions& options, G& gen) {
  const detail::HistEpsNoise noise = detail::hist_eps_noise(options);
  for (Scalar y : labels)
    if (std::isnan(y)) detail::fail_parameter("label", "must not be NaN", double(y));
  std::vector<Scalar> out;
  out.reserve(labels.size());
  for (Scalar y : labels) {
    const double clipped = std::clamp(double(y), options.lo, options.hi);
    const std::int64_t j =
        std::clamp<std::int64_t>(std::llround((clipped - options.lo) / options.resolution), 0, noise.steps);
    const std::int64_t z = noise.laplace(gen);
    out.push_back(Scalar(options.lo + double(j + z) * options.resolution));
  }
  return out;
}

/// Hist_eps (Algorithm 4) on public bin edges: the noisy labels of hist_eps_noisy_labels(),
/// counted in the cells of `edges` (noisy labels beyond the end edges counted in the end
/// cells), normalized. Post-processing of the noisy labels, so the same guarantee.
/// \throws std::invalid_argument for an empty `labels`, invalid `edges` (see HistogramPrior) or
///         options (see hist_eps_noisy_labels()).
template <typename Scalar, std::uniform_random_bit_generator G>
HistEpsResult<Scalar> hist_eps(const std::vector<Scalar>& labels, const std::vector<Scalar>& edges,
                               const HistEpsOptions& options, G& gen) {
  options.check();
  if (labels.empty()) throw std::invalid_argument("'labels' must not be empty, got 0 labels");
  const detail::HistEpsNoise noise = detail::hist_eps_noise(options);
  (void)HistogramPrior<Scalar>::from_masses(edges, std::vector<Scalar>(edges.size() > 1 ? edges.size() - 1 : 0, 1));
  std::vector<Scalar> noisy = hist_eps_noisy_labels(labels, options, gen);
  HistogramPrior<Scalar> prior = HistogramPrior<Scalar>::from_labels(noisy, edges);
  return HistEpsResult<Scalar>{std::move(prior), std::move(noisy), noise.alpha, noise.steps, noise.epsilon};
}

/// Hist_eps exactly as printed (Algorithm 4): nodes from the noisy labels themselves —
/// \f$\mu\f$ their mean, \f$n_0\f$ their minimum, \f$n_i = \mu + (i + k_0)\sigma\f$ for
/// \f$i = 1..k_1-k_0\f$, \f$n_{k_1-k_0+1}\f$ their maximum, with integers \f$k_0, k_1\f$ such that
/// \f$\mu + k_0\sigma \le \min < \mu + (k_0+1)\sigma\f$ and \f$\mu + k_1\sigma < \max \le
/// \mu + (k_1+1)\sigma\f$ — and cell masses \f$\#S_k/\#D\f$. The nodes are post-processing of the
/// noisy labels, so the guarantee is that of hist_eps_noisy_labels(). When all noisy labels are
/// equal the single cell \f$[\min - r/2, \min + r/2]\f$ is returned.
/// \throws std::invalid_argument as hist_eps(), and naming 'sigma' (finite, > 0, at most
///         \f$10^7\f$ cells).
template <typename Scalar, std::uniform_random_bit_generator G>
HistEpsResult<Scalar> hist_eps_paper_nodes(const std::vector<Scalar>& labels, Scalar sigma,
                                           const HistEpsOptions& options, G& gen) {
  options.check();
  if (labels.empty()) throw std::invalid_argument("'labels' must not be empty, got 0 labels");
  const detail::HistEpsNoise noise = detail::hist_eps_noise(options);
  validate_finite_positive("sigma", double(sigma));
  std::vector<Scalar> noisy = hist_eps_noisy_labels(labels, options, gen);
  const auto [mn_it, mx_it] = std::minmax_element(noisy.begin(), noisy.end());
  const Scalar mn = *mn_it, mx = *mx_it;
  std::vector<Scalar> edges;
  if (!(mx > mn)) {
    const Scalar half = Scalar(options.resolution / 2);
    edges = {mn - half, mn + half};
  } else {
    Scalar mu = 0;
    for (Scalar v : noisy) mu += v;
    mu /= Scalar(noisy.size());
    if (!(double((mx - mn) / sigma) <= 1e7))
      detail::fail_parameter("sigma",
                             "must be at least (max - min of the noisy labels) / 1e7 = " +
                                 detail::format_number(double((mx - mn) / Scalar(1e7))),
                             double(sigma));
    auto node = [&](std::int64_t k) { return mu + Scalar(k) * sigma; };
    std::int64_t k0 = std::int64_t(std::floor(double((mn - mu) / sigma)));
    while (node(k0) > mn) --k0;  // rounding guards for the defining inequalities
    while (!(mn < node(k0 + 1))) ++k0;
    std::int64_t k1 = std::int64_t(std::ceil(double((mx - mu) / sigma))) - 1;
    while (!(node(k1) < mx)) --k1;
    while (mx > node(k1 + 1)) ++k1;
    edges.push_back(mn);
    for (std::int64_t i = 1; i <= k1 - k0; ++i) edges.push_back(node(i + k0));
    edges.push_back(mx);
  }
  HistogramPrior<Scalar> prior = HistogramPrior<Scalar>::from_labels(noisy, edges);
  return HistEpsResult<Scalar>{std::move(prior), std::move(noisy), noise.alpha, noise.steps, noise.epsilon};
}

}  // namespace labeldp
