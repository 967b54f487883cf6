/// \file
/// A finite mechanism: a row-stochastic matrix from input label values to output values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "labeldp/core/alias_table.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

namespace detail {

/// The index of an input value among sorted distinct inputs, with work that does not depend on
/// the value looked up: for float and double a hash table (open addressing at load <= 1/4)
/// probed at a fixed number of slots (the longest probe sequence of any input, found at
/// construction; every slot is read and the match selected without a branch), otherwise a
/// binary search whose number of halvings depends only on the number of inputs. Shared by
/// FiniteMechanism and RROnBins.
template <typename Scalar>
class InputIndex {
 public:
  InputIndex() = default;
  /// \param inputs strictly increasing finite values.
  explicit InputIndex(const Vector<Scalar>& inputs) : m_inputs(inputs) {
    if constexpr (kHashed) {
      std::size_t size = 4;
      int bits = 2;
      while (size < 4 * std::size_t(m_inputs.size())) size *= 2, ++bits;
      m_shift = 64 - bits;
      m_mask = size - 1;
      m_slots.assign(size, Slot{});
      m_probes = 1;
      for (Index i = 0; i < m_inputs.size(); ++i) {
        const Key key = key_of(m_inputs[i]);
        std::size_t h = slot_of(key), probes = 1;
        while (m_slots[h].index >= 0) h = (h + 1) & m_mask, ++probes;
        m_slots[h] = Slot{key, i};
        m_probes = std::max(m_probes, probes);
      }
    }
  }

  /// The index of `y`, or -1 when it is not an input.
  Index find(Scalar y) const {
    Index found = -1;
    if (m_inputs.size() == 0) return found;
    if constexpr (kHashed) {
      const Key key = key_of(y);
      const std::size_t h = slot_of(key);
      for (std::size_t t = 0; t < m_probes; ++t) {
        const Slot& slot = m_slots[(h + t) & m_mask];
        found = slot.key == key && slot.index >= 0 ? slot.index : found;
      }
    } else {
      const Scalar* base = m_inputs.data();
      Index n = m_inputs.size();
      while (n > 1) {
        const Index half = n / 2;
        base = base[half] <= y ? base + half : base;
        n -= half;
      }
      if (*base == y) found = Index(base - m_inputs.data());
    }
    return found;
  }

 private:
  static constexpr bool kHashed = std::is_same_v<Scalar, double> || std::is_same_v<Scalar, float>;
  using Key = std::conditional_t<sizeof(Scalar) == 4, std::uint32_t, std::uint64_t>;
  struct Slot {
    Key key = 0;
    Index index = -1;
  };
  // The value's bits; + 0 maps -0 to +0, so y == y' implies equal keys (inputs are finite).
  static Key key_of(Scalar y) {
    const Scalar canonical = y + Scalar(0);
    Key key;
    std::memcpy(&key, &canonical, sizeof key);
    return key;
  }
  std::size_t slot_of(Key key) const {
    return std::size_t((std::uint64_t(key) * 0x9E3779B97F4A7C15ull) >> m_shift) & m_mask;
  }

  Vector<Scalar> m_inputs;
  std::vector<Slot> m_slots;
  std::size_t m_mask = 0, m_probes = 0;
  int m_shift = 63;
};

/// The index of the input nearest to a real label (ties to the larger input; labels clipped to
/// [first, last] input), exactly Discretizer::points(inputs).index(y) with Rounding::Nearest,
/// with work that does not depend on the label: a bucket table over [first, last] gives a
/// starting index, then a fixed number of branch-free steps (the most any bucket needs, found at
/// construction from the same bucket formula, so the result is exact even where roundoff moves
/// a label across a bucket edge), then one masked comparison. About 4 times faster than a
/// binary search on a 101-point grid.
class NearestInputIndex {
 public:
  NearestInputIndex() = default;
  /// \param inputs strictly increasing finite values (at least one).
  explicit NearestInputIndex(const Vector<double>& inputs) {
    const Index k = inputs.size();
    m_k = k;
    if (k < 2) return;
    m_first = inputs[0];
    m_last = inputs[k - 1];
    const std::size_t buckets = std::size_t(2 * k);
    m_max_bucket = Index(buckets) - 1;
    const double range = m_last - m_first;
    m_scale = std::isfinite(range) && range > 0 ? double(buckets) / range : 0.0;
    if (!std::isfinite(m_scale)) m_scale = 0.0;
    std::vector<Index> first(buckets, k), last(buckets, -1);
    // Point i (0 <= i <= k - 2) is the answer's lower neighbour for labels in [s_i, s_{i+1}).
    for (Index i = 0; i + 1 < k; ++i) {
      const double top = i + 2 == k ? m_last : std::nextafter(inputs[i + 1], -HUGE_VAL);
      for (Index b = bucket(inputs[i]); b <= bucket(top); ++b) {
        first[std::size_t(b)] = std::min(first[std::size_t(b)], i);
        last[std::size_t(b)] = std::max(last[std::size_t(b)], i);
      }
    }
    m_start.assign(buckets, 0);
    m_steps = 0;
    for (std::size_t b = 0; b < buckets; ++b)
      if (last[b] >= 0) {
        m_start[b] = std::uint32_t(first[b]);
        m_steps = std::max(m_steps, last[b] - first[b]);
      }
    // s_0 .. s_{k-1}, then +inf sentinels so that a step past s_{k-2} is never taken.
    m_points.assign(std::size_t(k + m_steps + 1), HUGE_VAL);
    for (Index i = 0; i + 1 < k; ++i) m_points[std::size_t(i)] = inputs[i];
    m_upper.assign(std::size_t(k), 0.0);
    for (Index i = 0; i < k; ++i) m_upper[std::size_t(i)] = inputs[i];
  }

  /// The nearest input's index for a finite `y` (NaN and infinities are the caller's to refuse).
  Index find(double y) const {
    if (m_k < 2) return 0;
    const double c = std::min(std::max(y, m_first), m_last);
    const Index lo = lower(c);
    const double below = c - m_upper[std::size_t(lo)], above = m_upper[std::size_t(lo + 1)] - c;
    return lo + Index(!(below < above));
  }

  /// For c in [first, last] input (at least two inputs): the last input index i <= k - 2 with
  /// input i <= c (so inputs i and i + 1 bracket c), with the same label-independent work.
  Index lower(double c) const {
    Index lo = Index(m_start[std::size_t(bucket(c))]);
    for (Index t = 0; t < m_steps; ++t) lo += Index(m_points[std::size_t(lo + 1)] <= c);
    return lo;
  }

 private:
  Index bucket(double y) const {
    const double x = (y - m_first) * m_scale;
    const Index b = x < double(m_max_bucket) ? Index(x) : m_max_bucket;  // x >= 0; cmov, not a jump
    return b < 0 ? 0 : b;
  }

  Index m_k = 0, m_max_bucket = 0, m_steps = 0;
  double m_first = 0, m_last = 0, m_scale = 0;
  std::vector<std::uint32_t> m_start;
  std::vector<double> m_points, m_upper;
};

}  // namespace detail

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
    m_sampler = DyadicAliasTable(m_probs);
    m_index = detail::InputIndex<Scalar>(m_inputs);
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

  /// Index of input value `y`, with work that does not depend on `y`: for float and double
  /// inputs a hash table probed at a fixed number of slots (the longest probe sequence of any
  /// input, found at construction; every slot is read and the match selected without a
  /// branch), otherwise a binary search whose number of halvings depends only on the number of
  /// inputs.
  /// \throws std::invalid_argument when `y` is not an input value.
  Index input_index(Scalar y) const {
    const Index found = m_index.find(y);
    if (found < 0)
      throw std::invalid_argument("label " + detail::format_number(double(y)) + " is not an input of the mechanism");
    return found;
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
  Scalar conditional_mean(Index i) const {
    // A plain loop: Eigen's vectorized dot of a row-major row triggers a false
    // -Warray-bounds in g++ 12 once inlined.
    Scalar s = 0;
    for (Index j = 0; j < m_outputs.size(); ++j) s += m_probs(i, j) * m_outputs[j];
    return s;
  }

  /// Index of an output drawn exactly from row i (no range check) with constant work: one
  /// 64-bit word from `gen`, one alias-table entry, one comparison, for every row
  /// (DyadicAliasTable), so the number of generator calls never depends on the label.
  template <std::uniform_random_bit_generator G>
  Index sample_index(Index i, G& gen) const {
    return m_sampler(i, gen);
  }

  /// A noisy label for the true label `y` (an input value).
  /// \throws std::invalid_argument when `y` is not an input value.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    return m_outputs[sample_index(input_index(y), gen)];
  }

  /// Batch form: `out[i] = sample(in[i], gen)`, the same draws in the same order.
  /// \throws std::invalid_argument when the spans differ in length (before any draw) or a label
  ///         is not an input value (`out` is then written up to that label).
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const Scalar> in, std::span<Scalar> out, G& gen) const {
    check_batch_sizes(in.size(), out.size());
    for (std::size_t t = 0; t < in.size(); ++t) out[t] = m_outputs[m_sampler(input_index(in[t]), gen)];
  }

  /// The probabilities the sampler realizes exactly: row i's integer weights over their common
  /// total \f$2^{64}\f$ (DyadicAliasTable; each within about \f$2^{-64}\,e^\varepsilon\f$ of
  /// the stored entry over its row's sum, never with a larger max/min ratio in any column).
  /// Audit these to certify the samples themselves; exact in long double, rounded to Scalar.
  Matrix<Scalar> realized_probabilities() const {
    Matrix<Scalar> r(m_inputs.size(), m_outputs.size());
    for (Index i = 0; i < m_inputs.size(); ++i) {
      const auto row = m_sampler.realized(i);
      for (Index j = 0; j < m_outputs.size(); ++j) r(i, j) = Scalar(row[std::size_t(j)]);
    }
    return r;
  }

  /// The constant-work sampler of the rows (integer weights with the common total 2^64).
  const DyadicAliasTable& sampler() const { return m_sampler; }

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
  detail::InputIndex<Scalar> m_index;
  DyadicAliasTable m_sampler;
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
