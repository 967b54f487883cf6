/// \file
/// Applying an unbiased randomizer to real labels (Badanidiyuru et al. 2023): UnbiasedRandomizer,
/// unbiased randomized rounding (URR, proof of their Lemma 8) to the mechanism's support points,
/// then the finite mechanism's row. It models labeldp::Mechanism. Their Algorithm 3 (a private
/// prior, then the optimal unbiased randomizer for it) is make_two_stage() with
/// BuildOptimalUnbiased (mechanisms/two_stage.hpp).
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/concepts.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_outputs.hpp"
#include "labeldp/optim/simplex_types.hpp"

namespace labeldp {

/// What the solver reported about an unbiased randomizer's mechanism: UnbiasedResult without
/// the mechanism (see there for each field). Written to the mechanism file as the `unbiased`
/// command writes it.
template <typename Scalar = double>
struct UnbiasedSolveReport {
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;  ///< solver outcome
  Scalar expected_loss = 0;                                        ///< expected loss under the solver's prior
  Scalar max_bias = 0;                                             ///< achieved \f$\max_y |E[M(y)] - y|\f$
  Scalar lower_bound = std::numeric_limits<Scalar>::quiet_NaN();   ///< certified bound; NaN when not computed
  Scalar gap = std::numeric_limits<Scalar>::infinity();            ///< relative gap; infinity when no bound
  /// True when the solve ended optimal.
  bool optimal() const { return status == optim::SolveStatus::Optimal; }
};

/// A randomizer for real-valued labels built on a finite mechanism over support points
/// \f$y_1 < \dots < y_k\f$ (e.g. an optimal unbiased one): a label y in \f$[y_1, y_k]\f$ is first
/// rounded to a support point by URR (exact Bernoulli), then the mechanism's row of that point
/// is sampled (exact alias table). Unbiasedness is preserved: \f$E[M(URR(y))] = y\f$ when the
/// mechanism is unbiased. Privacy: the output distribution for any label is a mixture of the
/// mechanism's rows, and every row is within \f$e^\varepsilon\f$ of every other entrywise, so the
/// composite is eps-DP whenever the mechanism is; the constructors check that the mechanism's
/// stored and realized probabilities are eps-DP exactly (satisfies_epsilon()).
///
/// Models labeldp::Mechanism: eps(), delta() = 0, single and batch sample(), and to_json(), the
/// `"mechanism":"unbiased"` file the `labeldp unbiased` command writes (read back by
/// io::load_mechanism(), which applies the finite mechanism to the nearest support point: the
/// file format has no field for URR).
///
/// \tparam Scalar floating-point type of labels.
///
/// \code{.cpp}
/// auto r = labeldp::optimal_unbiased_continuous(prior, 1.0);
/// labeldp::UnbiasedRandomizer<> randomizer(r, 1.0);
/// labeldp::SecureRandom gen;
/// double noisy = randomizer.sample(3.25, gen);   // E[noisy] = 3.25
/// \endcode
template <typename Scalar = double>
class UnbiasedRandomizer {
 public:
  /// The randomizer of a solver's mechanism, keeping the solver's report for to_json().
  /// \param result a solve with a mechanism (optimal or the best feasible one found).
  /// \param eps the guarantee the mechanism was solved for, finite and > 0.
  /// \throws std::invalid_argument naming 'eps', or when the result has no mechanism (naming its
  ///         status) or its probabilities are not eps-DP exactly.
  UnbiasedRandomizer(UnbiasedResult<Scalar> result, double eps)
      : UnbiasedRandomizer(checked_mechanism(std::move(result.mechanism), result.status), eps) {
    m_report = UnbiasedSolveReport<Scalar>{result.status, result.expected_loss, result.max_bias, result.lower_bound,
                                           result.gap};
  }

  /// \param mechanism the finite mechanism (its inputs are the rounding points).
  /// \param eps its guarantee, finite and > 0.
  /// \throws std::invalid_argument naming 'eps', or when the probabilities are not eps-DP
  ///         exactly (as stored or as the sampler realizes them).
  UnbiasedRandomizer(FiniteMechanism<Scalar> mechanism, double eps)
      : m_mechanism(std::move(mechanism)), m_rounding(m_mechanism.inputs()), m_eps(eps) {
    validate_epsilon(eps);
    require_epsilon(m_mechanism, eps);
  }

  /// A randomizer whose eps() is the exact audit of `mechanism`: the smallest double eps for
  /// which its stored and realized probabilities are eps-DP exactly (audit_epsilon(), rounded
  /// up until satisfies_epsilon() holds).
  /// \throws std::invalid_argument when the mechanism is not eps-DP for any finite eps (an
  ///         output with probability 0 for some inputs and positive for others).
  explicit UnbiasedRandomizer(FiniteMechanism<Scalar> mechanism)
      : m_mechanism(std::move(mechanism)), m_rounding(m_mechanism.inputs()), m_eps(audited_epsilon(m_mechanism)) {}

  /// The underlying finite mechanism.
  const FiniteMechanism<Scalar>& mechanism() const { return m_mechanism; }
  /// The solver's report when built from an UnbiasedResult, else empty.
  const std::optional<UnbiasedSolveReport<Scalar>>& report() const { return m_report; }
  /// The guarantee \f$\varepsilon\f$ (pure: delta() is 0).
  double eps() const { return m_eps; }
  double delta() const { return 0; }

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

  /// Batch form: `out[i] = sample(in[i], gen)` in order (sample_each()).
  /// \throws std::invalid_argument for a length mismatch or a label sample() rejects.
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const Scalar> in, std::span<Scalar> out, G& gen) const {
    sample_each(*this, in, out, gen);
  }

  /// The mechanism file: `"mechanism":"unbiased"`, eps, delta 0, the solver's status,
  /// expected_loss, lower_bound and gap (when finite) and max_bias when built from an
  /// UnbiasedResult, then inputs, outputs and probabilities; written by FiniteLabelMechanism,
  /// the writer of every finite kind.
  std::string to_json() const {
    std::string extra;
    if (m_report) {
      const UnbiasedSolveReport<Scalar>& r = *m_report;
      extra = "\"status\":" + json_string(optim::to_string(r.status)) +
              ",\"expected_loss\":" + json_number(double(r.expected_loss));
      if (std::isfinite(double(r.lower_bound))) extra += ",\"lower_bound\":" + json_number(double(r.lower_bound));
      if (std::isfinite(double(r.gap))) extra += ",\"gap\":" + json_number(double(r.gap));
      extra += ",\"max_bias\":" + json_number(double(r.max_bias));
    }
    return FiniteLabelMechanism("unbiased", m_eps, as_double(m_mechanism), std::move(extra)).to_json();
  }

 private:
  static FiniteMechanism<Scalar> checked_mechanism(FiniteMechanism<Scalar> m, optim::SolveStatus status) {
    if (m.num_outputs() == 0)
      throw std::invalid_argument("the unbiased randomizer LP ended " + optim::to_string(status) +
                                  " without a mechanism");
    return m;
  }

  static FiniteMechanism<double> as_double(const FiniteMechanism<Scalar>& m) {
    if constexpr (std::is_same_v<Scalar, double>) {
      return m;
    } else {
      return FiniteMechanism<double>(m.inputs().template cast<double>(), m.outputs().template cast<double>(),
                                     m.probabilities().template cast<double>());
    }
  }

  static void require_epsilon(const FiniteMechanism<Scalar>& m, double eps) {
    if constexpr (std::is_same_v<Scalar, double>) {
      FiniteLabelMechanism::require_epsilon(m, eps);  // names the output and the two inputs
    } else {
      if (!satisfies_epsilon(m.probabilities(), eps) || !satisfies_epsilon(m.realized_probabilities(), eps))
        throw std::invalid_argument("the mechanism's probabilities are not " + detail::format_number(eps) +
                                    "-DP exactly");
    }
  }

  static double audited_epsilon(const FiniteMechanism<Scalar>& m) {
    const Matrix<Scalar> realized = m.realized_probabilities();
    double eps = std::max(audit_epsilon(m.probabilities()), audit_epsilon(realized));
    if (!std::isfinite(eps))
      throw std::invalid_argument(
          "the mechanism is not eps-DP for any finite eps (an output has probability 0 for some inputs only)");
    eps = std::max(eps, std::numeric_limits<double>::min());
    // audit_epsilon() rounds; step up (doubling the step) until the exact check passes.
    double step = std::nextafter(eps, 2 * eps) - eps;
    while (!satisfies_epsilon(m.probabilities(), eps) || !satisfies_epsilon(realized, eps)) {
      eps += step;
      step *= 2;
    }
    return eps;
  }

  FiniteMechanism<Scalar> m_mechanism;
  UnbiasedRandomizedRounding<Scalar> m_rounding;
  double m_eps;
  std::optional<UnbiasedSolveReport<Scalar>> m_report;
};

}  // namespace labeldp
