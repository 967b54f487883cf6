/// \file
/// The labels party's randomizer for an unknown prior: Algorithm 3 ("Label Randomizer") of
/// Ghazi et al., "Regression with Label Differential Privacy" (ICLR 2023).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "labeldp/core/loss.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "labeldp/prior/budget.hpp"
#include "labeldp/prior/discretize.hpp"
#include "labeldp/prior/private_histogram.hpp"

namespace labeldp {

/// Algorithm 3 of Ghazi et al. (2023): spend \f$\varepsilon_1\f$ on a private prior
/// \f$\hat P = M^{Lap}_{\varepsilon_1}(y_1, \dots, y_n)\f$ over a public finite support
/// (Algorithm 4, here with exact discrete Laplace noise: private_histogram()), compute the optimal
/// RR-on-Bins\f$^{\hat\Phi}_{\varepsilon_2}\f$ for \f$\hat P\f$ (Algorithm 2:
/// optimal_rr_on_bins()), and randomize every label with it (Algorithm 1).
///
/// Privacy (Theorem 6): the noisy counts are \f$\varepsilon_1\f$-DP; \f$\hat P\f$, the bins and
/// the outputs are computed from them alone (post-processing); each label is then randomized
/// once by an \f$\varepsilon_2\f$-DP mechanism (parallel composition over the labels). By basic
/// composition, the noisy labels — together with the released histogram and bins — are
/// \f$(\varepsilon_1 + \varepsilon_2)\f$-label-DP. The support must be public (chosen without
/// looking at the labels; see discretize.hpp), and the randomizer must be used to randomize each
/// label of the data set it was fitted on exactly once.
///
/// Utility (Theorem 7): with \f$\varepsilon_1 = \sqrt{k/n}\f$ (theorem7_split()) the expected loss
/// is within \f$O(B\,(k/n)^{1/4})\f$ of the best \f$\varepsilon\f$-DP mechanism for the true prior.
///
/// \tparam Scalar floating-point type of labels.
/// \tparam Loss the noisy-label loss the bins are optimized for.
///
/// \code{.cpp}
/// labeldp::SecureRandom gen;
/// auto disc = labeldp::Discretizer<>::grid(0.0, 5000.0, 50.0);     // public
/// std::vector<double> wages = ...;                                  // sensitive labels
/// auto result = labeldp::two_stage_privatize(disc, std::span<const double>(wages), 1.0, gen);
/// // result.noisy_labels[i] is the 1.0-label-DP version of wages[i]
/// \endcode
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar>
class TwoStageRandomizer {
 public:
  /// Runs both stages on the counts \f$h_y\f$ of the labels over `support`.
  /// \param support public support values, strictly increasing.
  /// \param counts number of labels at each support value.
  /// \param budget \f$(\varepsilon_1, \varepsilon_2)\f$.
  /// \param gen random bit generator for the histogram noise (SecureRandom for real releases).
  /// \param loss loss the bins minimize.
  /// \throws std::invalid_argument for an invalid budget, counts or support, or support values
  ///         the loss rejects.
  template <std::uniform_random_bit_generator G>
  static TwoStageRandomizer fit(const Vector<Scalar>& support, std::span<const std::int64_t> counts,
                                const BudgetSplit& budget, G& gen, const Loss& loss = Loss{}) {
    budget.validate();
    return from_histogram(private_histogram(support, counts, budget.eps_prior, gen), budget.eps_mechanism, loss);
  }

  /// Stage 2 alone, from an already released private histogram (a deterministic function of
  /// it; the guarantee is hist.eps + eps_mechanism).
  /// \throws std::invalid_argument naming 'eps_mechanism' unless finite and positive, or for
  ///         support values the loss rejects.
  static TwoStageRandomizer from_histogram(PrivateHistogram<Scalar> hist, double eps_mechanism,
                                           const Loss& loss = Loss{}) {
    const BudgetSplit budget = BudgetSplit::of(hist.eps, eps_mechanism);
    auto rr = optimal_rr_on_bins<Scalar, Loss>(hist.prior, eps_mechanism, loss);
    return TwoStageRandomizer(std::move(hist), std::move(rr), budget);
  }

  /// The released private histogram (stage 1).
  const PrivateHistogram<Scalar>& histogram() const { return m_hist; }
  /// The private prior \f$\hat P\f$ over the support.
  const FinitePrior<Scalar>& private_prior() const { return m_hist.prior; }
  /// The optimal RR-on-Bins for \f$\hat P\f$ at \f$\varepsilon_2\f$ (stage 2).
  const RROnBins<Scalar>& rr_on_bins() const { return m_rr; }
  /// The budget split \f$(\varepsilon_1, \varepsilon_2)\f$.
  const BudgetSplit& budget() const { return m_budget; }
  /// The total guarantee \f$\varepsilon_1 + \varepsilon_2\f$.
  double eps() const { return m_budget.total(); }
  /// The support (the mechanism's inputs).
  const Vector<Scalar>& support() const { return m_rr.inputs(); }

  /// Index into rr_on_bins().outputs() of the noisy label of the label at support index i.
  /// \throws std::invalid_argument when i is not in [0, k).
  template <std::uniform_random_bit_generator G>
  Index sample_index(Index support_index, G& gen) const {
    return m_rr.sample_index(support_index, gen);
  }

  /// The noisy label of `y`, which must be a support value.
  /// \throws std::invalid_argument when `y` is not a support value.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    return m_rr.sample(y, gen);
  }

  /// Noisy labels for `labels` (support values), one each, in order.
  /// \throws std::invalid_argument naming the first label that is not a support value.
  template <std::uniform_random_bit_generator G>
  std::vector<Scalar> privatize(std::type_identity_t<std::span<const Scalar>> labels, G& gen) const {
    std::vector<Scalar> out;
    out.reserve(labels.size());
    for (Scalar y : labels) out.push_back(m_rr.sample(y, gen));
    return out;
  }

 private:
  TwoStageRandomizer(PrivateHistogram<Scalar> hist, RROnBins<Scalar> rr, BudgetSplit budget)
      : m_hist(std::move(hist)), m_rr(std::move(rr)), m_budget(budget) {}

  PrivateHistogram<Scalar> m_hist;
  RROnBins<Scalar> m_rr;
  BudgetSplit m_budget;
};

/// Result of two_stage_privatize(): the fitted randomizer and the noisy labels.
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
struct TwoStageResult {
  /// Both stages (histogram, bins) as released.
  TwoStageRandomizer<Scalar, Loss> randomizer;
  /// One noisy label per input label, in order.
  std::vector<Scalar> noisy_labels;
};

/// Algorithm 3 end to end on raw real labels: discretize each label publicly (`disc`), count,
/// split `eps` by Theorem 7 (theorem7_split(): \f$\varepsilon_1 = \sqrt{k/n}\f$, clamped to half
/// of eps) unless `budget` is given, fit both stages and randomize every label once. The result
/// is eps-label-DP (see TwoStageRandomizer).
/// \param disc public discretization; its support is the randomizer's support.
/// \param labels raw labels (finite), n >= 1 of them.
/// \param eps total budget, finite and > 0 (ignored when `budget` is given: its total counts).
/// \throws std::invalid_argument for a bad eps, no labels, a non-finite label, or support values
///         the loss rejects.
template <typename Scalar, std::uniform_random_bit_generator G, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> TwoStageResult<Scalar, Loss> two_stage_privatize(
    const Discretizer<Scalar>& disc, std::type_identity_t<std::span<const Scalar>> labels, double eps, G& gen,
    const Loss& loss = Loss{}, const BudgetSplit* budget = nullptr) {
  if (labels.empty()) throw std::invalid_argument("'labels' must not be empty");
  std::vector<Index> index(labels.size());
  std::vector<std::int64_t> counts(std::size_t(disc.size()), 0);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    index[i] = disc.index(labels[i]);
    ++counts[std::size_t(index[i])];
  }
  const BudgetSplit split = budget ? *budget : theorem7_split(eps, disc.size(), Index(labels.size()));
  auto randomizer = TwoStageRandomizer<Scalar, Loss>::fit(disc.support(), counts, split, gen, loss);
  std::vector<Scalar> noisy(labels.size());
  const auto& outputs = randomizer.rr_on_bins().outputs();
  for (std::size_t i = 0; i < labels.size(); ++i) noisy[i] = outputs[randomizer.sample_index(index[i], gen)];
  return TwoStageResult<Scalar, Loss>{std::move(randomizer), std::move(noisy)};
}

}  // namespace labeldp
