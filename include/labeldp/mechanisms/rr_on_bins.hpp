/// \file
/// RR-on-Bins (Ghazi, Kamath, Kumar, Leeman, Manurangsi, Varadarajan, Zhang: "Regression with
/// Label Differential Privacy", ICLR 2023): randomized response on the bin of the label
/// (Algorithm 1) and the optimal bins for a known prior (Algorithm 2, computed exactly by
/// Dinkelbach's method).
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "labeldp/core/alias_table.hpp"
#include "labeldp/core/audit.hpp"
#include "labeldp/core/concepts.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/detail/rr_on_bins_dp.hpp"
#include "labeldp/optim/simplex_types.hpp"

namespace labeldp {

/// RR-on-Bins\f$^\Phi_\varepsilon\f$ (Ghazi et al. 2023, Algorithm 1): a non-decreasing map
/// \f$\Phi\f$ sends the k label values to d distinct outputs \f$\hat y_1 < \dots < \hat y_d\f$; the
/// mechanism reports \f$\Phi(y)\f$ with probability \f$e^\varepsilon/(e^\varepsilon + d - 1)\f$
/// and every other output with probability \f$1/(e^\varepsilon + d - 1)\f$. It is eps-DP
/// (randomized response on d values), and by Theorem 5 of the paper the best \f$\Phi\f$ for a
/// prior (optimal_rr_on_bins()) is optimal among ALL eps-DP mechanisms for losses satisfying
/// Assumption 4.
///
/// Above eps = 700 the probabilities and the sampler use 700 (table_epsilon(): beyond, the
/// probability of another bin is no longer a normal double); eps() stays the eps asked for.
///
/// Sampling is exact and takes the same work for every label: one 64-bit word drawn from a
/// CyclicRandomizedResponse (core/sampling.hpp), an integer alias table over the offset of the
/// output from \f$\Phi(y)\f$'s bin, whose weights \f$W_0\f$ (own bin) and \f$W_1\f$ (each other
/// bin) sum to \f$2^{64}\f$ and are rounded so that \f$W_0 / W_1 \le e^\varepsilon\f$ exactly.
/// The realized mechanism is never less private than requested (more private by at most
/// \f$2^{-64}\f$ relative in the small weight; at eps above about 44 the other bins keep
/// probability \f$2^{-64}\f$). realized_probabilities() returns that matrix
/// for audits; mechanism() returns the exact matrix of Algorithm 1.
///
/// \tparam Scalar floating-point type of labels and outputs.
///
/// \code{.cpp}
/// auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
/// auto rr = labeldp::optimal_rr_on_bins(prior, 0.5);      // squared loss
/// labeldp::SecureRandom gen;
/// double noisy = rr.sample(2.0, gen);                      // 0.396... or 0.720...
/// double loss = rr.expected_loss(prior);
/// \endcode
template <typename Scalar = double>
class RROnBins {
 public:
  /// \param inputs strictly increasing finite label values \f$y_1 < \dots < y_k\f$ (k >= 1).
  /// \param phi    \f$\Phi(y_i)\f$ for each input: finite and non-decreasing. Its distinct values
  ///               become outputs().
  /// \param eps    privacy parameter, finite and > 0.
  /// \throws std::invalid_argument naming the parameter, the rule and the value, for a bad eps,
  ///         an empty `inputs`, a size mismatch, a non-finite or non-increasing input, or a
  ///         non-finite or decreasing phi.
  RROnBins(Vector<Scalar> inputs, Vector<Scalar> phi, double eps) : m_eps(eps), m_inputs(std::move(inputs)) {
    validate_epsilon(eps);
    const Index k = m_inputs.size();
    if (k == 0) throw std::invalid_argument("'inputs' must not be empty, got 0 values");
    if (phi.size() != k)
      throw std::invalid_argument("'phi' must have one entry per input (" + std::to_string(k) + "), got " +
                                  std::to_string(phi.size()));
    for (Index i = 0; i < k; ++i) {
      if (!std::isfinite(double(m_inputs[i]))) detail::fail_parameter("inputs", "must be finite", double(m_inputs[i]));
      if (i > 0 && !(m_inputs[i] > m_inputs[i - 1]))
        detail::fail_parameter("inputs",
                               "must be strictly increasing (entry " + std::to_string(i) + " follows " +
                                   detail::format_number(double(m_inputs[i - 1])) + ")",
                               double(m_inputs[i]));
      if (!std::isfinite(double(phi[i]))) detail::fail_parameter("phi", "must be finite", double(phi[i]));
      if (i > 0 && phi[i] < phi[i - 1])
        detail::fail_parameter("phi",
                               "must be non-decreasing (entry " + std::to_string(i) + " follows " +
                                   detail::format_number(double(phi[i - 1])) + ")",
                               double(phi[i]));
    }
    m_bin.resize(std::size_t(k));
    std::vector<Scalar> outs;
    for (Index i = 0; i < k; ++i) {
      if (outs.empty() || phi[i] != outs.back()) outs.push_back(phi[i]);
      m_bin[std::size_t(i)] = Index(outs.size()) - 1;
    }
    m_outputs = Eigen::Map<const Vector<Scalar>>(outs.data(), Index(outs.size()));
    m_rr = CyclicRandomizedResponse(num_outputs(), table_epsilon(eps));
    m_index = detail::InputIndex<Scalar>(m_inputs);
  }

  /// The privacy parameter eps.
  double eps() const { return m_eps; }
  /// Input label values, strictly increasing (k of them).
  const Vector<Scalar>& inputs() const { return m_inputs; }
  /// Distinct values of \f$\Phi\f$, strictly increasing (d of them).
  const Vector<Scalar>& outputs() const { return m_outputs; }
  /// Number of inputs k.
  Index num_inputs() const { return m_inputs.size(); }
  /// Number of outputs d.
  Index num_outputs() const { return m_outputs.size(); }
  /// Index into outputs() of \f$\Phi(y_i)\f$ for input index i (no range check).
  Index bin_of(Index input_index) const { return m_bin[std::size_t(input_index)]; }
  /// \f$\Phi(y_i)\f$ for input index i (no range check).
  Scalar phi(Index input_index) const { return m_outputs[bin_of(input_index)]; }

  /// Index of input value `y`: O(1) by an open-addressing hash table on the value's bits (built
  /// at construction; a binary search with its unpredictable branches costs more than the whole
  /// sampler), or binary search for Scalar types other than float and double.
  /// \throws std::invalid_argument when `y` is not an input value.
  Index input_index(Scalar y) const {
    const Index i = m_index.find(y);
    if (i < 0) detail::fail_parameter("y", "must be one of the mechanism's input values", double(y));
    return i;
  }

  /// Probability \f$e^\varepsilon/(e^\varepsilon + d - 1)\f$ of reporting the label's own bin
  /// (Algorithm 1), computed as \f$1/(1 + (d-1)e^{-\varepsilon})\f$ so large eps does not overflow.
  double own_bin_probability() const {
    const double d = double(num_outputs());
    return 1.0 / (1.0 + (d - 1) * std::exp(-table_epsilon(m_eps)));
  }
  /// Probability \f$1/(e^\varepsilon + d - 1)\f$ of each other output (0 when d = 1).
  double other_bin_probability() const {
    const double d = double(num_outputs());
    if (d == 1) return 0.0;
    const double e = std::exp(-table_epsilon(m_eps));
    return e / (1.0 + (d - 1) * e);
  }

  /// The k x d probability matrix of Algorithm 1: own_bin_probability() on \f$\Phi(y)\f$'s
  /// column, other_bin_probability() elsewhere, lowered to \f$e^\varepsilon\f$ exactly as stored
  /// (cap_to_epsilon(): the two rounded quotients may be \f$e^\varepsilon\f$ apart plus an ulp).
  FiniteMechanism<Scalar> mechanism() const {
    const Index k = num_inputs(), d = num_outputs();
    Matrix<Scalar> p = Matrix<Scalar>::Constant(k, d, Scalar(other_bin_probability()));
    for (Index i = 0; i < k; ++i) p(i, bin_of(i)) = Scalar(own_bin_probability());
    cap_to_epsilon(p, table_epsilon(m_eps));
    return FiniteMechanism<Scalar>(m_inputs, m_outputs, std::move(p));
  }

  /// Pure eps-DP: 0.
  double delta() const { return 0; }

  /// The mechanism file (the labeldp CLI contract, `bins`): format, version, eps, the inputs,
  /// outputs, the bins as `{"first","last","output"}` and mechanism()'s matrix (eps-DP exactly
  /// as stored), which io::load_mechanism() checks exactly.
  std::string to_json() const {
    std::string bins = "\"bins\":[";
    for (Index b = 0, first = 0; b < num_outputs(); ++b) {
      Index last = first;
      while (last + 1 < num_inputs() && bin_of(last + 1) == b) ++last;
      if (b) bins += ',';
      bins += "{\"first\":" + json_number(double(m_inputs[first])) +
              ",\"last\":" + json_number(double(m_inputs[last])) + ",\"output\":" + json_number(double(m_outputs[b])) +
              "}";
      first = last + 1;
    }
    bins += "],";
    const Matrix<Scalar> P = mechanism().probabilities();
    std::string fields = json_fields(FiniteMechanism<double>(
        m_inputs.template cast<double>(), m_outputs.template cast<double>(), P.template cast<double>()));
    const std::size_t at = fields.find("\"probabilities\":");  // bins go before it (the contract's order)
    return "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"rr-on-bins\",\"eps\":" +
           json_number(m_eps) + ",\"delta\":0," + fields.substr(0, at) + bins + fields.substr(at) + "}";
  }

  /// The probability s of the equivalent two-step sampler (a uniform output among all d with
  /// probability s, \f$\Phi(y)\f$ otherwise), as the sampler realizes it: d times the probability
  /// of each other bin; 0 when d = 1.
  long double uniform_probability() const { return m_rr.other_probability() * static_cast<long double>(num_outputs()); }

  /// The k x d matrix the sampler realizes exactly: \f$W_0 / 2^{64}\f$ on \f$\Phi(y)\f$'s column,
  /// \f$W_1 / 2^{64}\f$ elsewhere (exact in long double, rounded to Scalar). Audit this one to
  /// certify the samples themselves.
  Matrix<Scalar> realized_probabilities() const {
    const Index k = num_inputs(), d = num_outputs();
    Matrix<Scalar> p = Matrix<Scalar>::Constant(k, d, static_cast<Scalar>(m_rr.other_probability()));
    for (Index i = 0; i < k; ++i) p(i, bin_of(i)) = static_cast<Scalar>(m_rr.own_probability());
    return p;
  }

  /// Index into outputs() of a noisy label for input index i, drawn exactly.
  /// \throws std::invalid_argument when `input_index` is not in [0, k).
  template <std::uniform_random_bit_generator G>
  Index sample_index(Index input_index, G& gen) const {
    if (input_index < 0 || input_index >= num_inputs())
      detail::fail_parameter("input_index", "must be in [0, " + std::to_string(num_inputs()) + ")",
                             double(input_index));
    return sample_bin(m_bin[std::size_t(input_index)], gen);
  }

  /// A noisy label for the true label `y`, which must be an input value.
  /// \throws std::invalid_argument when `y` is not an input value.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    return m_outputs[sample_bin(m_bin[std::size_t(input_index(y))], gen)];
  }

  /// Batch form: `out[i] = sample(in[i], gen)`, the same draws in the same order.
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const Scalar> in, std::span<Scalar> out, G& gen) const {
    sample_each(*this, in, out, gen);
  }

  /// Exact expected noisy-label loss \f$\sum_i p_i E[\ell(M(y_i), y_i)]\f$ of Algorithm 1's
  /// probabilities, O(kd). Values of probability 0 are skipped (their loss may be infinite, e.g.
  /// Poisson log loss at a label > 0 and output 0).
  /// \throws std::invalid_argument when the prior's values differ from inputs().
  template <typename Loss = SquaredLoss<Scalar>>
  requires NoisyLabelLoss<Loss, Scalar> Scalar expected_loss(const FinitePrior<Scalar>& prior, const Loss& loss = {})
  const {
    if (prior.size() != num_inputs() || prior.values() != m_inputs)
      throw std::invalid_argument("'prior' must have exactly the mechanism's input values (" +
                                  std::to_string(num_inputs()) + " of them), got " + std::to_string(prior.size()) +
                                  " values that differ");
    const Scalar own = Scalar(own_bin_probability()), other = Scalar(other_bin_probability());
    Scalar total = 0;
    for (Index i = 0; i < num_inputs(); ++i) {
      if (!(prior.probability(i) > 0)) continue;
      const Scalar y = m_inputs[i];
      Scalar s = own * Scalar(loss(m_outputs[bin_of(i)], y));
      if (other > 0)
        for (Index j = 0; j < num_outputs(); ++j)
          if (j != bin_of(i)) s += other * Scalar(loss(m_outputs[j], y));
      total += prior.probability(i) * s;
    }
    return total;
  }

 private:
  // One word per label, whatever the bin (CyclicRandomizedResponse).
  template <std::uniform_random_bit_generator G>
  Index sample_bin(Index bin, G& gen) const {
    return m_rr(bin, gen);
  }

  double m_eps;
  Vector<Scalar> m_inputs;
  Vector<Scalar> m_outputs;
  std::vector<Index> m_bin;
  CyclicRandomizedResponse m_rr;       // the sampler (see the class comment)
  detail::InputIndex<Scalar> m_index;  // constant-work lookup of an input (core/mechanism.hpp)
};

/// Status of the optimal-bins solver (a value, not an exception).

/// Result of solve_rr_on_bins().
template <typename Scalar = double>
struct RROnBinsSolution {
  RROnBins<Scalar> mechanism;  ///< the optimal RR-on-Bins
  Scalar expected_loss;       ///< the optimum \f$\min_\Phi A[k][d]/(d - 1 + e^\varepsilon)\f$ as computed by the solver
  int iterations;             ///< segmentation DPs solved by Dinkelbach's method
  optim::SolveStatus status;  ///< Optimal (no partition has a smaller expected loss) or IterationLimit (the cap was
                              ///< hit; the best found)
};

/// The optimal RR-on-Bins for `prior` (Ghazi et al. 2023, Algorithm 2, same optimum), with the
/// solver's details. Exact up to floating-point rounding.
///
/// Method: the expected loss of a partition of the sorted values into d intervals with per-bin
/// optimal outputs is the ratio \f$N/(d + W)\f$, \f$N = \sum_S L(S)\f$,
/// \f$L(S) = \min_o \sum_y p_y (1 + W[y \in S]) \ell(o, y)\f$, \f$W = e^\varepsilon - 1\f$ (the
/// paper's \f$L[r][i]\f$ and \f$A[k][d]/(d - 1 + e^\varepsilon)\f$). Dinkelbach's method
/// minimizes it by solving \f$\min (N - \lambda(d + W))\f$, a 1-D segmentation DP without the
/// bin count (O(k) memory, O(k^2) time), and updating \f$\lambda\f$ to the ratio of the DP's
/// partition until it stops improving. A warm start on coarse cut grids (O(k) bin costs) makes
/// that typically one full DP that only confirms the optimum (2-5 from a cold start). Bin costs:
/// O(1) from prefix sums for squared and Poisson log loss, evaluated by vectorized array
/// arithmetic; absolute loss swaps the minimum over the bin start with the minimum over the
/// output (one of the k values), which needs no median search (at most O(i) per DP row i,
/// vectorized, and blocks of outputs excluded by a proven O(1) lower bound are skipped);
/// any other NoisyLabelLoss calls `loss.minimize` on all prior values with the bin's weights
/// \f$p_y e^{\varepsilon [y \in S]}\f$ (up to a common factor; O(k) per bin, bin costs cached
/// for k <= 2000). The cost is not Monge, so no SMAWK/Knuth-Yao speed-up is used (they are
/// not exact here). On the project's 2-core test machine (bench/bench_rr_on_bins.cpp, wage-like
/// prior, eps = 1): squared loss k = 10,000 in about 0.03 s and k = 40,000 in about 0.45 s;
/// absolute loss about 0.02 s and 0.15 s.
///
/// Precision: prefix sums are accumulated in long double over values centered at the prior
/// mean; the ratio of each candidate partition is recomputed with the in-bin sums taken
/// directly, so the reported loss is accurate even where the DP's comparisons are near ties.
///
/// \tparam Loss a NoisyLabelLoss satisfying Assumption 4 of the paper.
/// \throws std::invalid_argument for a bad eps, or a prior value the loss rejects
///         (`loss.validate_label`, e.g. a negative label with Poisson log loss).
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> RROnBinsSolution<Scalar> solve_rr_on_bins(const FinitePrior<Scalar>& prior,
                                                                                double eps, const Loss& loss = {}) {
  validate_epsilon(eps);
  for (Index i = 0; i < prior.size(); ++i) loss.validate_label(prior.value(i));
  const auto scale = detail::RROnBinsScale::from_eps(table_epsilon(eps));
  auto finish = [&](const auto& model) {
    const auto out = detail::dinkelbach<Scalar>(model, scale);
    return RROnBinsSolution<Scalar>{
        RROnBins<Scalar>(prior.values(), detail::monotone_phi<Scalar>(model, out.ends), eps), out.ratio, out.iterations,
        out.converged ? optim::SolveStatus::Optimal : optim::SolveStatus::IterationLimit};
  };
  if constexpr (std::is_same_v<Loss, SquaredLoss<Scalar>>) {
    return finish(detail::SquaredBinCost<Scalar>(prior, scale));
  } else if constexpr (std::is_same_v<Loss, AbsoluteLoss<Scalar>>) {
    return finish(detail::AbsoluteBinCost<Scalar>(prior, scale));
  } else if constexpr (std::is_same_v<Loss, PoissonLogLoss<Scalar>>) {
    // All mass on label 0: the constant output 0 has loss 0 (and w1 = 0 would break the O(1) cost).
    Scalar mean = 0;
    for (Index i = 0; i < prior.size(); ++i) mean += prior.probability(i) * prior.value(i);
    if (!(mean > 0))
      return RROnBinsSolution<Scalar>{RROnBins<Scalar>(prior.values(), Vector<Scalar>::Zero(prior.size()), eps),
                                      Scalar(0), 0, optim::SolveStatus::Optimal};
    return finish(detail::PoissonBinCost<Scalar>(prior, scale));
  } else {
    return finish(detail::GenericBinCost<Scalar, Loss>(prior, scale, loss));
  }
}

/// Optimal RR-on-Bins for the prior (Ghazi et al. 2023, Algorithm 2; see solve_rr_on_bins()
/// for the method).
/// \throws std::invalid_argument for a bad eps or a label the loss rejects.
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
requires NoisyLabelLoss<Loss, Scalar> RROnBins<Scalar> optimal_rr_on_bins(const FinitePrior<Scalar>& prior, double eps,
                                                                          const Loss& loss = {}) {
  return solve_rr_on_bins<Scalar, Loss>(prior, eps, loss).mechanism;
}

}  // namespace labeldp
