/// \file
/// Applying an unbiased randomizer to labels (Badanidiyuru et al. 2023): UnbiasedRandomizer
/// (URR to the support, proof of Lemma 8, then the finite mechanism) and LabelRandomizer (Alg. 3:
/// a private prior by Alg. 4, then the optimal unbiased randomizer on the FeasibleOutputSet grid).
#pragma once

#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/unbiased_grid.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_outputs.hpp"
#include "labeldp/optim/simplex.hpp"
#include "labeldp/prior/private_histogram.hpp"

namespace labeldp {

/// A randomizer for real-valued labels built on a finite mechanism over support points
/// \f$y_1 < \dots < y_k\f$ (e.g. an optimal unbiased one): a label y in \f$[y_1, y_k]\f$ is first
/// rounded to a support point by URR (exact Bernoulli), then the mechanism's row of that point
/// is sampled (exact alias table). Unbiasedness is preserved: \f$E[M(URR(y))] = y\f$ when the
/// mechanism is unbiased. Privacy: the output distribution for any label is a mixture of the
/// mechanism's rows, and every row is within \f$e^\varepsilon\f$ of every other entrywise, so the
/// composite is eps-DP whenever the mechanism is.
///
/// \code{.cpp}
/// labeldp::UnbiasedRandomizer<> randomizer(labeldp::optimal_unbiased_continuous(prior, 1.0).mechanism);
/// labeldp::SecureRandom gen;
/// double noisy = randomizer.sample(3.25, gen);
/// \endcode
template <typename Scalar = double>
class UnbiasedRandomizer {
 public:
  /// \param mechanism the finite mechanism (its inputs are the rounding points).
  explicit UnbiasedRandomizer(FiniteMechanism<Scalar> mechanism)
      : m_mechanism(std::move(mechanism)), m_rounding(m_mechanism.inputs()) {}

  /// The underlying finite mechanism.
  const FiniteMechanism<Scalar>& mechanism() const { return m_mechanism; }

  /// The exact output distribution for label y (over mechanism().outputs()).
  /// \throws std::invalid_argument when y is not finite or outside \f$[y_1, y_k]\f$.
  Vector<Scalar> output_probabilities(Scalar y) const {
    const Vector<Scalar> r = m_rounding.probabilities(y);
    return (r.transpose() * m_mechanism.probabilities()).transpose();
  }

  /// A noisy label for the real label y (URR to the support, then the mechanism), exactly.
  /// \throws std::invalid_argument when y is not finite or outside \f$[y_1, y_k]\f$.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    const Index i = m_rounding.sample_index(y, gen);
    return m_mechanism.outputs()[m_mechanism.sample_index(i, gen)];
  }

 private:
  FiniteMechanism<Scalar> m_mechanism;
  UnbiasedRandomizedRounding<Scalar> m_rounding;
};

/// Result of label_randomizer(): the noisy labels and what produced them.
template <typename Scalar = double>
struct LabelRandomizerResult {
  std::vector<Scalar> noisy_labels;   ///< one per input label, in input order
  FinitePrior<Scalar> private_prior;  ///< \f$P'\f$, the eps1-DP prior estimate (Alg. 4)
  UnbiasedResult<Scalar> randomizer;  ///< the optimal unbiased randomizer for \f$P'\f$ (eps2)
};

/// LabelRandomizer (Alg. 3): spends eps1 on a private prior (the library's Alg. 4,
/// private_histogram_of_labels(): exact two-sided geometric noise of scale 2/eps1 on the counts,
/// clipped and normalized), builds the optimal unbiased randomizer for that prior with eps2 on
/// the `grid_size`-point FeasibleOutputSet grid, and randomizes every label with it. The whole
/// is (eps1 + eps2)-DP (basic composition; the randomizer reads the labels only through the
/// private prior and its own eps2-DP rows).
///
/// The printed Alg. 3 builds the grid as FeasibleOutputSet with eps1; Proposition 7 needs the
/// mechanism's own budget (the eps2 grid is narrower, hence finer at equal n, and still
/// feasible), so eps2 is used.
///
/// \param labels the labels, each a value of `support`.
/// \param support public label set Y, strictly increasing.
/// \param eps1 budget of the prior estimate, finite and > 0.
/// \param eps2 budget of the randomizer, finite and > 0.
/// \param grid_size n >= 2.
/// \param gen random bit generator (SecureRandom for real releases).
/// \throws std::invalid_argument on bad parameters or a label outside the support; a solve that
///         does not end optimal (never expected: Prop. 7) is reported in the message.
///
/// \code{.cpp}
/// labeldp::SecureRandom gen;
/// auto out = labeldp::label_randomizer(labels, support, 0.05, 0.95, 416, gen);
/// \endcode
template <typename Scalar = double, std::uniform_random_bit_generator G>
LabelRandomizerResult<Scalar> label_randomizer(const std::vector<Scalar>& labels, const Vector<Scalar>& support,
                                               double eps1, double eps2, Index grid_size, G& gen) {
  validate_epsilon(eps1, "eps1");
  validate_epsilon(eps2, "eps2");
  if (grid_size < 2) detail::fail_parameter("grid_size", "must be at least 2", double(grid_size));
  PrivateHistogram<Scalar> hist =
      private_histogram_of_labels(support, std::span<const Scalar>(labels.data(), labels.size()), eps1, gen);
  UnbiasedResult<Scalar> r = optimal_unbiased_grid(hist.prior, eps2, grid_size);
  if (!r.optimal()) throw std::invalid_argument("the unbiased randomizer LP ended " + optim::to_string(r.status));
  LabelRandomizerResult<Scalar> out{{}, hist.prior, r};
  out.noisy_labels.reserve(labels.size());
  for (Scalar y : labels) out.noisy_labels.push_back(r.mechanism.sample(y, gen));
  return out;
}

}  // namespace labeldp
