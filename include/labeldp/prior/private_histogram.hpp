/// \file
/// Private estimation of a prior over a public finite support: Algorithm 4 (\f$M^{Lap}_\varepsilon\f$)
/// of Ghazi et al., "Regression with Label Differential Privacy" (ICLR 2023), with exact
/// discrete Laplace noise in place of floating-point Laplace noise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "labeldp/core/prior.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// L1 sensitivity of the count vector \f$(h_y)_{y \in Y}\f$ under label replacement (the
/// neighbouring relation of label DP, Ghazi et al. 2023, Definition 2): changing one label from
/// \f$a\f$ to \f$b\f$ lowers \f$h_a\f$ by 1 and raises \f$h_b\f$ by 1.
inline constexpr double kHistogramSensitivity = 2;

/// The smallest budget private_histogram() accepts, \f$2^{-41}\f$ (about 4.5e-13): below it the
/// noise of scale \f$2/\varepsilon > 2^{42}\f$ counts cannot be represented to 20 bits
/// (DiscreteLaplace::for_privacy()), and the prior would be noise alone.
inline constexpr double kMinHistogramEpsilon = 4.5474735088646411895751953125e-13;  // 2^-41

/// The exact noise that makes the count vector `eps`-DP: the discrete Laplace distribution
/// \f$\Pr[Z = z] \propto e^{-\gamma |z|}\f$ with a rational \f$\gamma \le \varepsilon/2\f$
/// (DiscreteLaplace::for_privacy() with sensitivity 2: rounded towards more noise, so the
/// realized guarantee \f$2\gamma\f$ never exceeds `eps`; relative loss below \f$2^{-20}\f$).
/// Budgets above \f$2^{62}\f$ use \f$2^{62}\f$ (noise 0 with probability \f$1 - e^{-2^{61}}\f$:
/// as eps-DP, and representable).
/// \throws std::invalid_argument naming 'eps' unless it is finite and at least
///         kMinHistogramEpsilon.
inline DiscreteLaplace private_histogram_noise(double eps) {
  validate_epsilon(eps);
  if (eps < kMinHistogramEpsilon)
    detail::fail_parameter("eps",
                           "must be at least 2^-41 (4.5e-13) for the prior's histogram: below, its noise would be "
                           "wider than 2^42 counts and the prior pure noise",
                           eps);
  return DiscreteLaplace::for_privacy(std::min(eps, std::ldexp(1.0, 62)), kHistogramSensitivity);
}

/// The ratio \f$\alpha = e^{-\gamma}\f$ of private_histogram_noise(eps) (for pmfs, audits and
/// tests; sampling never uses it).
/// \throws std::invalid_argument as private_histogram_noise().
inline double private_histogram_alpha(double eps) { return double(private_histogram_noise(eps).alpha()); }

/// Result of private_histogram(): the private prior and the released noisy counts.
/// \tparam Scalar floating-point type of the prior.
template <typename Scalar = double>
struct PrivateHistogram {
  /// \f$\hat P\f$: \f$\max(h_y + Z_y, 0)\f$ normalized, over the whole support (values whose
  /// noisy count clipped to 0 are kept with probability 0); the uniform prior over the support
  /// when every noisy count clipped to 0 (see uniform_fallback).
  FinitePrior<Scalar> prior;
  /// \f$h_y + Z_y\f$ before clipping, one per support value in increasing order. This vector is
  /// the private release; everything else here is computed from it alone.
  std::vector<std::int64_t> noisy_counts;
  /// True when every noisy count was <= 0, so Algorithm 4's normalization would divide by 0 and
  /// the prior is uniform over the support instead.
  bool uniform_fallback = false;
  /// The budget \f$\varepsilon_1\f$ spent.
  double eps = 0;
  /// The noise ratio \f$e^{-\gamma}\f$ actually used, private_histogram_alpha(eps).
  double alpha = 0;
};

/// The post-processing step of Algorithm 4 (Ghazi et al. 2023): clip the noisy counts at 0 and
/// normalize, over the whole support (values whose count clips to 0 keep probability 0). When
/// every noisy count is <= 0 the normalization is undefined and the uniform prior over the
/// support is returned instead (`*uniform_fallback` set to true when given). It reads nothing
/// but the noisy counts and the public support, so its result is as private as the counts.
/// \param support public support values, finite and strictly increasing.
/// \param noisy_counts one noisy count per support value.
/// \param uniform_fallback when not null, set to whether the uniform prior was returned.
/// \throws std::invalid_argument for a size mismatch or a bad support.
template <typename Scalar>
FinitePrior<Scalar> prior_from_noisy_counts(const Vector<Scalar>& support, std::span<const std::int64_t> noisy_counts,
                                            bool* uniform_fallback = nullptr) {
  if (std::size_t(support.size()) != noisy_counts.size())
    throw std::invalid_argument("'noisy_counts' has " + std::to_string(noisy_counts.size()) +
                                " entries but the support has " + std::to_string(support.size()) + " values");
  const std::vector<Scalar> values(support.data(), support.data() + support.size());
  std::vector<Scalar> weights(values.size(), Scalar(0));
  bool any_positive = false;
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (noisy_counts[i] > 0) {
      weights[i] = Scalar(noisy_counts[i]);
      any_positive = true;
    }
  if (!any_positive) std::fill(weights.begin(), weights.end(), Scalar(1));
  if (uniform_fallback) *uniform_fallback = !any_positive;
  return FinitePrior<Scalar>::from_weights(values, weights);
}

/// Algorithm 4 of Ghazi et al. (2023) on precomputed counts: adds independent two-sided
/// geometric (discrete Laplace) noise \f$Z_y\f$, \f$\Pr[Z_y = z] \propto \alpha^{|z|}\f$ with
/// \f$\alpha = e^{-\gamma} \ge e^{-\varepsilon/2}\f$ (private_histogram_noise()), to every count
/// \f$h_y\f$ (including zero counts), clips at 0 and normalizes. Sampling is exact and O(1)
/// expected per count at any eps (Canonne, Kamath and Steinke 2020, Algorithm 2), with the same
/// work whatever the count.
///
/// Why it is private: the counts have L1 sensitivity 2 under label replacement, and the
/// two-sided geometric (discrete Laplace) mechanism with scale \f$2/\varepsilon\f$ is
/// \f$\varepsilon\f$-DP for integer vectors of L1 sensitivity 2 (Ghazi et al., Definition 22) —
/// the same guarantee as the paper's Lap(2/eps), but sampled exactly with integer arithmetic, so
/// it has none of the floating-point leaks of textbook Laplace sampling (Mironov 2012).
/// Clipping, normalizing and the uniform fallback read only the noisy counts: post-processing,
/// which keeps the guarantee. The support must be public (fixed independently of the labels;
/// see discretize.hpp).
///
/// \param support public support values, finite and strictly increasing.
/// \param counts \f$h_y\f$: number of labels equal to each support value, >= 0.
/// \param eps \f$\varepsilon_1\f$, finite and > 0.
/// \param gen uniform random bit generator (SecureRandom for real releases).
/// \throws std::invalid_argument naming 'eps', a negative count, a size mismatch, an empty,
///         non-finite or not strictly increasing support.
///
/// \code{.cpp}
/// labeldp::SecureRandom gen;
/// labeldp::Vector<double> support(3); support << 0, 1, 2;
/// std::vector<std::int64_t> counts = {600, 250, 150};
/// auto hist = labeldp::private_histogram(support, counts, 0.1, gen);
/// const auto& prior = hist.prior;   // 0.1-DP estimate of {0: 0.6, 1: 0.25, 2: 0.15}
/// \endcode
template <typename Scalar, std::uniform_random_bit_generator G>
PrivateHistogram<Scalar> private_histogram(const Vector<Scalar>& support, std::span<const std::int64_t> counts,
                                           double eps, G& gen) {
  const DiscreteLaplace noise = private_histogram_noise(eps);
  if (support.size() == 0) throw std::invalid_argument("'support' must not be empty");
  if (std::size_t(support.size()) != counts.size())
    throw std::invalid_argument("'counts' has " + std::to_string(counts.size()) + " entries but the support has " +
                                std::to_string(support.size()) + " values");
  for (Index i = 1; i < support.size(); ++i)
    if (!(support[i] > support[i - 1]))
      throw std::invalid_argument(
          "'support' must be strictly increasing: " + detail::format_number(double(support[i - 1])) + " then " +
          detail::format_number(double(support[i])));
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] < 0)
      throw std::invalid_argument("'counts' must be non-negative, got " + std::to_string(counts[i]) +
                                  " for support value " + detail::format_number(double(support[Index(i)])));
  const std::vector<Scalar> values(support.data(), support.data() + support.size());
  // Start from the uniform prior (also the fallback); from_weights rejects bad supports.
  PrivateHistogram<Scalar> out{FinitePrior<Scalar>::from_weights(values, std::vector<Scalar>(values.size(), Scalar(1))),
                               {},
                               false,
                               eps,
                               double(noise.alpha())};
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 2;
  out.noisy_counts.resize(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const std::int64_t z = noise(gen);
    // Counts and noise are far below 2^62 in practice; saturate rather than overflow.
    const std::int64_t h = std::min(counts[i], kMax);
    out.noisy_counts[i] = (z > 0 ? std::min(z, kMax) : std::max(z, -kMax)) + h;
  }
  out.prior = prior_from_noisy_counts(support, std::span<const std::int64_t>(out.noisy_counts), &out.uniform_fallback);
  return out;
}

/// Counts how many of `labels` equal each support value (the \f$h_y\f$ of Algorithm 4).
/// \param support sorted increasing distinct values.
/// \param labels the labels, each a support value.
/// \throws std::invalid_argument naming the first label that is not a support value.
template <typename Scalar>
std::vector<std::int64_t> histogram_counts(const Vector<Scalar>& support,
                                           std::type_identity_t<std::span<const Scalar>> labels) {
  std::vector<std::int64_t> counts(std::size_t(support.size()), 0);
  const Scalar* first = support.data();
  const Scalar* last = first + support.size();
  for (Scalar y : labels) {
    const Scalar* it = std::lower_bound(first, last, y);
    if (it == last || *it != y)
      throw std::invalid_argument("label " + detail::format_number(double(y)) +
                                  " is not a support value (discretize the labels first)");
    ++counts[std::size_t(it - first)];
  }
  return counts;
}

/// Algorithm 4 of Ghazi et al. (2023) on raw labels, each of which must be a support value:
/// histogram_counts() followed by private_histogram() on the counts.
/// \param support public, sorted increasing distinct values.
/// \param labels the private labels, each a support value.
/// \param eps the budget \f$\varepsilon_1\f$ spent, finite and > 0.
/// \param gen the generator of the noise.
/// \throws std::invalid_argument as histogram_counts() and private_histogram().
template <typename Scalar, std::uniform_random_bit_generator G>
PrivateHistogram<Scalar> private_histogram_of_labels(const Vector<Scalar>& support,
                                                     std::type_identity_t<std::span<const Scalar>> labels, double eps,
                                                     G& gen) {
  validate_epsilon(eps);
  const auto counts = histogram_counts(support, labels);
  return private_histogram(support, counts, eps, gen);
}

/// Probability mass \f$\Pr[Z = z] = \frac{1-\alpha}{1+\alpha}\alpha^{|z|}\f$ of the
/// two-sided geometric noise of ratio alpha, in doubles (for audits and goodness-of-fit tests).
inline double two_sided_geometric_pmf(std::int64_t z, double alpha) {
  const double mag = z < 0 ? -double(z) : double(z);
  return (1 - alpha) / (1 + alpha) * std::pow(alpha, mag);
}

}  // namespace labeldp
