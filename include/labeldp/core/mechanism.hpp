/// \file
/// A finite mechanism: a row-stochastic matrix from input label values to output values.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// A mechanism \f$M\f$ with finitely many inputs \f$y_1 < \dots < y_k\f$ and outputs
/// \f$o_1 < \dots < o_d\f$, given by its probabilities \f$P[i][j] = \Pr[M(y_i) = o_j]\f$
/// (rows sum to 1). Every mechanism of the library can be returned in this form, which makes
/// its privacy auditable exactly (audit_epsilon() in audit.hpp) and its loss computable exactly.
///
/// \code{.cpp}
/// labeldp::FiniteMechanism<> rr({0.0, 1.0}, {0.0, 1.0}, P);   // P: 2x2 row-stochastic
/// labeldp::SecureRandom gen;
/// double noisy = rr.sample(1.0, gen);
/// \endcode
template <typename Scalar = double>
class FiniteMechanism {
 public:
  /// Tolerance on row sums.
  static constexpr double kRowSumTolerance = 1e-9;

  FiniteMechanism() = default;

  /// \param inputs strictly increasing finite input values (k of them).
  /// \param outputs strictly increasing finite output values (d of them).
  /// \param probabilities k x d matrix, entries finite and >= 0, rows summing to 1 within 1e-9.
  /// \throws std::invalid_argument naming the first violated rule.
  FiniteMechanism(Vector<Scalar> inputs, Vector<Scalar> outputs, Matrix<Scalar> probabilities)
      : m_inputs(std::move(inputs)), m_outputs(std::move(outputs)), m_probs(std::move(probabilities)) {
    validate();
    m_rows.reserve(std::size_t(m_inputs.size()));
    for (Index i = 0; i < m_inputs.size(); ++i) m_rows.emplace_back(m_probs.row(i));
  }

  /// Number of inputs k.
  Index num_inputs() const { return m_inputs.size(); }
  /// Number of outputs d.
  Index num_outputs() const { return m_outputs.size(); }
  /// Input values, increasing.
  const Vector<Scalar>& inputs() const { return m_inputs; }
  /// Output values, increasing.
  const Vector<Scalar>& outputs() const { return m_outputs; }
  /// The k x d matrix \f$P[i][j] = \Pr[M(y_i) = o_j]\f$.
  const Matrix<Scalar>& probabilities() const { return m_probs; }

  /// Index of input value `y`.
  /// \throws std::invalid_argument when `y` is not an input value.
  Index input_index(Scalar y) const {
    const Scalar* first = m_inputs.data();
    const Scalar* last = first + m_inputs.size();
    const Scalar* it = std::lower_bound(first, last, y);
    if (it == last || *it != y)
      throw std::invalid_argument("label " + detail::format_number(double(y)) + " is not an input of the mechanism");
    return Index(it - first);
  }

  /// \f$E[\ell(M(y_i), y_i)]\f$ for input index i.
  template <typename Loss = SquaredLoss<Scalar>>
  requires NoisyLabelLoss<Loss, Scalar> Scalar conditional_loss(Index i, const Loss& loss = Loss{})
  const {
    Scalar s = 0;
    for (Index j = 0; j < m_outputs.size(); ++j)
      if (m_probs(i, j) > 0) s += m_probs(i, j) * loss(m_outputs[j], m_inputs[i]);
    return s;
  }

  /// Expected noisy-label loss \f$\sum_i p_i \sum_j P[i][j]\,\ell(o_j, y_i)\f$ under `prior`,
  /// whose values must equal inputs().
  /// \throws std::invalid_argument when the prior's values differ from the inputs.
  template <typename Loss = SquaredLoss<Scalar>>
  requires NoisyLabelLoss<Loss, Scalar> Scalar expected_loss(const FinitePrior<Scalar>& prior,
                                                             const Loss& loss = Loss{})
  const {
    if (prior.size() != m_inputs.size() || prior.values() != m_inputs)
      throw std::invalid_argument("prior values differ from the mechanism's inputs");
    Scalar s = 0;
    for (Index i = 0; i < m_inputs.size(); ++i)
      if (prior.probability(i) > 0) s += prior.probability(i) * conditional_loss(i, loss);
    return s;
  }

  /// \f$E[M(y_i)]\f$ for input index i.
  Scalar conditional_mean(Index i) const { return m_probs.row(i).dot(m_outputs.transpose()); }

  /// Index of an output drawn exactly from row i (alias method, O(1)).
  template <std::uniform_random_bit_generator G>
  Index sample_index(Index i, G& gen) const {
    return m_rows[std::size_t(i)](gen);
  }

  /// A noisy label for the true label `y` (an input value).
  /// \throws std::invalid_argument when `y` is not an input value.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    return m_outputs[sample_index(input_index(y), gen)];
  }

  /// The probabilities the sampler realizes exactly (the stored ones after the sampler's
  /// 128-bit integer conversion); audit these to certify the samples themselves.
  Matrix<Scalar> realized_probabilities() const {
    Matrix<Scalar> r(m_inputs.size(), m_outputs.size());
    for (Index i = 0; i < m_inputs.size(); ++i)
      for (Index j = 0; j < m_outputs.size(); ++j) r(i, j) = Scalar(m_rows[std::size_t(i)].realized(j));
    return r;
  }

 private:
  void validate() const {
    const Index k = m_inputs.size(), d = m_outputs.size();
    if (k == 0) throw std::invalid_argument("mechanism has no inputs");
    if (d == 0) throw std::invalid_argument("mechanism has no outputs");
    if (m_probs.rows() != k || m_probs.cols() != d)
      throw std::invalid_argument("probability matrix is " + std::to_string(m_probs.rows()) + " x " +
                                  std::to_string(m_probs.cols()) + ", expected " + std::to_string(k) + " x " +
                                  std::to_string(d));
    check_increasing(m_inputs, "input");
    check_increasing(m_outputs, "output");
    for (Index i = 0; i < k; ++i) {
      double sum = 0;
      for (Index j = 0; j < d; ++j) {
        const double p = double(m_probs(i, j));
        if (!std::isfinite(p) || p < 0)
          throw std::invalid_argument("probability " + detail::format_number(p) + " at row " + std::to_string(i) +
                                      ", column " + std::to_string(j) + " is not finite and non-negative");
        sum += p;
      }
      if (std::abs(sum - 1) > kRowSumTolerance)
        throw std::invalid_argument("row " + std::to_string(i) + " sums to " + detail::format_number(sum) +
                                    ", not 1 (tolerance 1e-9)");
    }
  }

  static void check_increasing(const Vector<Scalar>& v, const char* what) {
    for (Index i = 0; i < v.size(); ++i) {
      if (!std::isfinite(double(v[i])))
        throw std::invalid_argument(std::string(what) + " value " + detail::format_number(double(v[i])) +
                                    " is not finite");
      if (i > 0 && !(v[i] > v[i - 1]))
        throw std::invalid_argument(std::string(what) +
                                    " values must be strictly increasing: " + detail::format_number(double(v[i - 1])) +
                                    " then " + detail::format_number(double(v[i])));
    }
  }

  Vector<Scalar> m_inputs;
  Vector<Scalar> m_outputs;
  Matrix<Scalar> m_probs;
  std::vector<DiscreteDistribution> m_rows;
};

/// The fields `"inputs":[...],"outputs":[...],"probabilities":[[...],...]` of a finite
/// mechanism, without surrounding braces, so that a mechanism file can add its own fields (the
/// labeldp CLI contract: the JSON of `bins`, `optimal`, `unbiased`). Row i of `probabilities`
/// is the distribution of the output for input i; numbers have 17 significant digits.
inline std::string json_fields(const FiniteMechanism<double>& m) {
  std::string s =
      "\"inputs\":" + json_array(m.inputs()) + ",\"outputs\":" + json_array(m.outputs()) + ",\"probabilities\":[";
  for (Index i = 0; i < m.num_inputs(); ++i) {
    if (i) s += ',';
    s += json_array(m.probabilities().row(i));
  }
  s += ']';
  return s;
}

}  // namespace labeldp
