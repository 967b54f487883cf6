/// \file
/// The two-stage pipeline for an unknown prior, one API for the three papers' Algorithm 3:
/// spend \f$\varepsilon_1\f$ on a private prior (stage 1), build an \f$\varepsilon_2\f$-DP
/// mechanism from that release alone (stage 2), randomize every label once with it.
/// - Ghazi et al., "Regression with Label Differential Privacy" (ICLR 2023), Algorithm 3:
///   private_histogram() (their Algorithm 4), then RR-on-Bins (BuildRROnBins);
/// - Badanidiyuru et al., "Optimal Unbiased Randomizers for Regression with Label Differential
///   Privacy" (NeurIPS 2023), Algorithm 3: the same private histogram, then the optimal unbiased
///   randomizer (BuildOptimalUnbiased);
/// - RPWithPrior ("Response Privacy with Prior", ICLR submission), Algorithm 3: Hist_eps (their
///   Algorithm 4, hist_eps()), then RPWithPrior on its optimal interval (BuildRPWithPrior).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "labeldp/core/concepts.hpp"
#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/rpwithprior.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "labeldp/mechanisms/unbiased_continuous.hpp"
#include "labeldp/mechanisms/unbiased_grid.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_randomizer.hpp"
#include "labeldp/prior/budget.hpp"
#include "labeldp/prior/discretize.hpp"
#include "labeldp/prior/hist_eps.hpp"
#include "labeldp/prior/private_histogram.hpp"

namespace labeldp {

// ---------------------------------------------------------------------------------------------
// Stage 1: what a private prior release is.

/// The guarantee of a private_histogram() release (Ghazi et al. 2023, Algorithm 4): its eps
/// (the noise ratio is rounded so that the realized guarantee is at most this).
template <typename Scalar>
double release_eps(const PrivateHistogram<Scalar>& release) {
  return release.eps;
}

/// The guarantee of a hist_eps() release (RPWithPrior's Algorithm 4): its realized guarantee
/// \f$N\gamma\f$ rounded up, at most the eps it was asked for.
template <typename Scalar>
double release_eps(const HistEpsResult<Scalar>& release) {
  return release.epsilon;
}

/// A stage-1 output: a public member `prior` (the private prior estimate, computed from the
/// release alone) and a `release_eps(r)` overload (found by argument-dependent lookup) giving
/// the label-DP guarantee of the whole release. Modelled by PrivateHistogram and HistEpsResult.
template <typename R>
concept PriorRelease = requires(const R& r) {
  r.prior;
  { release_eps(r) } -> std::convertible_to<double>;
};

/// The prior type of a release (FinitePrior for PrivateHistogram, HistogramPrior for Hist_eps).
template <PriorRelease R>
using ReleasePrior = std::remove_cvref_t<decltype(std::declval<const R&>().prior)>;

/// A stage-2 builder for releases of type R: callable as `build(prior, eps2)` with the release's
/// prior, returning a labeldp::Mechanism that is eps2-DP.
template <typename B, typename R>
concept MechanismBuilder = PriorRelease<R> && requires(const B& build, const ReleasePrior<R>& prior, double eps) {
  { std::invoke(build, prior, eps) } -> Mechanism;
};

/// The mechanism type a builder returns for releases of type R.
template <typename B, PriorRelease R>
using BuiltMechanism = std::invoke_result_t<const B&, const ReleasePrior<R>&, double>;

// ---------------------------------------------------------------------------------------------
// The two stages together.

/// Both stages as released: the private prior release (\f$\varepsilon_1\f$-label-DP), the
/// mechanism built from it alone (\f$\varepsilon_2\f$-DP for each label), and the split.
///
/// Privacy (Ghazi et al. 2023, Theorem 6; RPWithPrior, Appendix E; the same argument for
/// Badanidiyuru et al. 2023, Algorithm 3): the release is \f$\varepsilon_1\f$-label-DP, the
/// mechanism is a function of the release and public parameters only (post-processing), and it
/// randomizes each label once (parallel composition over the labels). By basic composition the
/// release together with the noisy labels is \f$(\varepsilon_1 + \varepsilon_2)\f$-label-DP, which
/// eps() reports, provided the mechanism randomizes each label of the data set the release was
/// computed from exactly once. Discretization and clipping bounds must be public.
///
/// \tparam Release the stage-1 output (PriorRelease: PrivateHistogram or HistEpsResult).
/// \tparam Mech the stage-2 mechanism (labeldp::Mechanism).
///
/// \code{.cpp}
/// labeldp::SecureRandom gen;
/// auto hist = labeldp::private_histogram(support, counts, 0.1, gen);            // stage 1
/// auto two = labeldp::make_two_stage(std::move(hist), 0.9, labeldp::BuildRROnBins<>{});
/// // two.eps() == 1.0; two.mechanism.sample(y, gen) for each label y
/// \endcode
template <typename Release, typename Mech>
requires PriorRelease<Release> && Mechanism<Mech>
struct TwoStage {
  /// Stage 1 as released (its prior is `prior_release.prior`).
  Release prior_release;
  /// Stage 2: the mechanism built from the release's prior with budget.eps_mechanism.
  Mech mechanism;
  /// \f$(\varepsilon_1, \varepsilon_2)\f$: release_eps(prior_release) and the mechanism's budget.
  BudgetSplit budget;

  /// The total guarantee \f$\varepsilon_1 + \varepsilon_2\f$ of the release and the noisy labels.
  double eps() const { return budget.total(); }
  /// The mechanism's delta (0 for the three papers' mechanisms).
  double delta() const { return double(mechanism.delta()); }
};

/// Stage 2 from an already released prior: `build(release.prior, eps_mechanism)`, a function of
/// the release alone, so the pair is (release_eps(release) + eps_mechanism)-label-DP once each
/// label is randomized once.
/// \param release the stage-1 output.
/// \param eps_mechanism \f$\varepsilon_2\f$, finite and > 0.
/// \param build the stage-2 builder (BuildRROnBins, BuildOptimalUnbiased, BuildRPWithPrior, or
///        any callable `(const Prior&, double eps2) -> Mechanism`).
/// \throws std::invalid_argument naming 'eps_prior' (a release with a bad eps) or
///         'eps_mechanism' unless finite and positive (before the builder runs), what the
///         builder throws, or when the built mechanism's eps() exceeds eps_mechanism.
template <typename Release, typename Builder>
requires MechanismBuilder<Builder, Release> TwoStage<Release, BuiltMechanism<Builder, Release>> make_two_stage(
    Release release, double eps_mechanism, const Builder& build) {
  const BudgetSplit budget = BudgetSplit::of(release_eps(release), eps_mechanism);
  BuiltMechanism<Builder, Release> mech = std::invoke(build, std::as_const(release).prior, eps_mechanism);
  if (!(double(mech.eps()) <= eps_mechanism))
    throw std::invalid_argument("the builder returned a mechanism with eps " + detail::format_number(mech.eps()) +
                                " above 'eps_mechanism' = " + detail::format_number(eps_mechanism));
  return TwoStage<Release, BuiltMechanism<Builder, Release>>{std::move(release), std::move(mech), budget};
}

// ---------------------------------------------------------------------------------------------
// Builders for the three papers' mechanisms.

/// Stage 2 of Ghazi et al. (2023), Algorithm 3: the optimal RR-on-Bins for the private prior
/// (their Algorithm 2, optimal_rr_on_bins()).
/// \tparam Loss the noisy-label loss the bins minimize.
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar>
struct BuildRROnBins {
  /// Default Loss{}. The loss the bins minimize.
  Loss loss{};

  /// \throws std::invalid_argument for a bad eps or support values the loss rejects.
  RROnBins<Scalar> operator()(const FinitePrior<Scalar>& prior, double eps) const {
    return optimal_rr_on_bins<Scalar, Loss>(prior, eps, loss);
  }
};

/// Stage 2 of Badanidiyuru et al. (2023), Algorithm 3: the optimal unbiased (or, with
/// options.max_bias > 0, bias-bounded) randomizer for the private prior, applied to real labels
/// by unbiased randomized rounding to the prior's support (UnbiasedRandomizer).
///
/// With grid_size = 0 the outputs range over the real line (optimal_unbiased_continuous(), the
/// exact optimum, which is never worse than any grid: their Lemma 8); with grid_size = n the
/// outputs are the n-point FeasibleOutputSet grid of their Algorithm 2 (optimal_unbiased_grid()),
/// as Algorithm 3 is printed. The printed Algorithm 3 builds that grid with eps1; Proposition 7
/// needs the mechanism's own budget, so eps2 is used.
///
/// A solve that stops at a limit with a feasible mechanism still returns it (eps-DP and
/// unbiased, not certified optimal): see UnbiasedRandomizer::report().
struct BuildOptimalUnbiased {
  /// Default UnbiasedOptions{} (checked by its own check()). Bias bound and solver options.
  UnbiasedOptions options{};
  /// Default 0 (0, or an integer >= 2). 0: outputs anywhere on the real line; n >= 2: the
  /// n-point FeasibleOutputSet grid.
  Index grid_size = 0;

  /// Checks every field against the rule in its comment.
  /// \throws std::invalid_argument naming the first bad field, e.g. "'grid_size' must be 0
  ///         (continuous outputs) or at least 2, got 1".
  void check() const {
    options.check();
    if (grid_size != 0 && grid_size < 2)
      detail::fail_parameter("grid_size", "must be 0 (continuous outputs) or at least 2", double(grid_size));
  }

  /// \throws std::invalid_argument for bad options (check()) or eps, or when the solve found no
  ///         mechanism (naming its status).
  template <typename Scalar>
  UnbiasedRandomizer<Scalar> operator()(const FinitePrior<Scalar>& prior, double eps) const {
    check();
    return UnbiasedRandomizer<Scalar>(grid_size == 0 ? optimal_unbiased_continuous(prior, eps, options)
                                                     : optimal_unbiased_grid(prior, eps, grid_size, options),
                                      eps);
  }
};

/// Stage 2 of RPWithPrior's Algorithm 3 (lines 2-6): RPWithPrior with budget eps on the
/// interval that is optimal for the Hist_eps prior (RPWithPrior::optimal(), their Algorithm 2),
/// with \f$\zeta\f$ chosen by choose_zeta() on that prior unless given (post-processing of the
/// release either way).
template <typename Scalar = double>
struct BuildRPWithPrior {
  /// Default 0 (0, or finite and > 0). \f$\zeta\f$; 0 means chosen by choose_zeta().
  double zeta = 0;
  /// Default 1e-6 (label units, finite, > 0). The output grid step of RPWithPrior.
  double granularity = 1e-6;
  /// Default OutsideRule::Clamp. What RPWithPrior does with a label outside its interval.
  OutsideRule rule = OutsideRule::Clamp;

  /// Checks every field against the rule in its comment.
  /// \throws std::invalid_argument naming the first bad field, e.g. "'zeta' must be finite and
  ///         positive, got -1".
  void check() const {
    if (zeta != 0) validate_finite_positive("zeta", zeta);
    validate_finite_positive("granularity", granularity);
  }

  /// \throws std::invalid_argument for bad fields (check()) or eps, or what RPWithPrior's
  ///         constructor rejects.
  RPWithPrior<Scalar> operator()(const HistogramPrior<Scalar>& prior, double eps) const {
    check();
    const Scalar z = zeta != 0 ? Scalar(zeta) : choose_zeta(prior, eps, rule).zeta;
    return RPWithPrior<Scalar>::optimal(prior, eps, z, Scalar(granularity), rule);
  }
};

/// make_two_stage() with stage 1 run here: private_histogram() of `counts` over the public
/// `support` with budget.eps_prior (Ghazi et al. 2023, Algorithm 4), then
/// `build(prior, budget.eps_mechanism)`. With the default builder this is their Algorithm 3;
/// with BuildOptimalUnbiased, Badanidiyuru et al.'s.
/// \param support public support values, strictly increasing.
/// \param counts number of labels at each support value.
/// \param budget \f$(\varepsilon_1, \varepsilon_2)\f$.
/// \param gen random bit generator for the histogram noise (SecureRandom for real releases).
/// \param build the stage-2 builder.
/// \throws std::invalid_argument for an invalid budget (naming 'eps_prior' or 'eps_mechanism'),
///         counts or support, or what the builder throws.
template <typename Scalar, std::uniform_random_bit_generator G, typename Builder = BuildRROnBins<Scalar>>
requires MechanismBuilder<Builder, PrivateHistogram<Scalar>>
auto make_two_stage(const Vector<Scalar>& support, std::span<const std::int64_t> counts, const BudgetSplit& budget,
                    G& gen, const Builder& build = Builder{}) {
  budget.validate();
  return make_two_stage(private_histogram(support, counts, budget.eps_prior, gen), budget.eps_mechanism, build);
}

// ---------------------------------------------------------------------------------------------
// Raw labels end to end.

/// Result of two_stage_privatize(): both stages as released and the noisy labels.
template <typename Scalar, typename Mech>
struct TwoStagePrivatized {
  /// The private histogram, the mechanism built from it and the split.
  TwoStage<PrivateHistogram<Scalar>, Mech> two_stage;
  /// One noisy label per input label, in order.
  std::vector<Scalar> noisy_labels;
};

/// Algorithm 3 end to end on raw real labels, for any builder taking a FinitePrior: discretize
/// each label publicly (`disc`), count, split `eps` by Theorem 7 of Ghazi et al. (2023)
/// (theorem7_split(): \f$\varepsilon_1 = \sqrt{k/n}\f$, at most half of eps) unless `budget` is
/// given, run both stages (make_two_stage()) and randomize every discretized label once
/// (sample_each()). The release and the noisy labels are together eps-label-DP.
///
/// Each mechanism receives the discretized label disc(y), a support value. (An
/// UnbiasedRandomizer also accepts real labels within the support's range; to keep the noisy
/// label unbiased for the clipped real label, apply result.two_stage.mechanism to those.)
/// \param disc public discretization; its support is stage 1's support.
/// \param labels raw labels (finite), n >= 1 of them.
/// \param eps total budget, finite and > 0.
/// \param gen random bit generator (SecureRandom for real releases).
/// \param build the stage-2 builder (default: RR-on-Bins for the squared loss).
/// \param budget the split to use instead of Theorem 7's; its total must be at most eps.
/// \throws std::invalid_argument for no labels, a non-finite label, a bad eps, a budget above
///         eps (naming 'budget'), or what make_two_stage() throws.
///
/// \code{.cpp}
/// labeldp::SecureRandom gen;
/// auto disc = labeldp::Discretizer<>::grid(0.0, 5000.0, 50.0);     // public
/// std::vector<double> wages = ...;                                  // sensitive labels
/// auto result = labeldp::two_stage_privatize(disc, std::span<const double>(wages), 1.0, gen);
/// // result.noisy_labels[i] is the noisy label of wages[i]; the whole is 1.0-label-DP
/// \endcode
template <typename Scalar, std::uniform_random_bit_generator G, typename Builder = BuildRROnBins<Scalar>>
requires MechanismBuilder<Builder, PrivateHistogram<Scalar>>
    TwoStagePrivatized<Scalar, BuiltMechanism<Builder, PrivateHistogram<Scalar>>> two_stage_privatize(
        const Discretizer<Scalar>& disc, std::type_identity_t<std::span<const Scalar>> labels, double eps, G& gen,
        const Builder& build = Builder{}, const std::optional<BudgetSplit>& budget = std::nullopt) {
  if (labels.empty()) throw std::invalid_argument("'labels' must not be empty");
  std::vector<Scalar> snapped(labels.size());
  std::vector<std::int64_t> counts(std::size_t(disc.size()), 0);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const Index j = disc.index(labels[i]);
    snapped[i] = disc.support()[j];
    ++counts[std::size_t(j)];
  }
  validate_epsilon(eps);
  BudgetSplit split;
  if (budget) {
    budget->validate();
    if (!(budget->total() <= eps))
      throw std::invalid_argument("'budget' spends " + detail::format_number(budget->total()) +
                                  ", more than 'eps' = " + detail::format_number(eps));
    split = *budget;
  } else {
    split = theorem7_split(eps, disc.size(), Index(labels.size()));
  }
  auto two = make_two_stage(disc.support(), std::span<const std::int64_t>(counts), split, gen, build);
  std::vector<Scalar> noisy(labels.size());
  sample_each(two.mechanism, std::span<const Scalar>(snapped), std::span<Scalar>(noisy), gen);
  return {std::move(two), std::move(noisy)};
}

}  // namespace labeldp
