/// \file
/// AnyMechanism: one value type for every mechanism of the library (finite ones built from a
/// prior, RPWithPrior, the additive and randomized-response baselines), so that a mechanism can
/// be built by name, saved as a mechanism file, loaded (io/mechanism_file.hpp) and applied to
/// labels by the same code whatever its kind. It models labeldp::Mechanism (core/concepts.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/concepts.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/mechanisms/additive_noise.hpp"
#include "labeldp/mechanisms/gaussian.hpp"
#include "labeldp/mechanisms/randomized_response.hpp"
#include "labeldp/mechanisms/rpwithprior.hpp"
#include "labeldp/mechanisms/staircase.hpp"
#include "labeldp/mechanisms/unbiased_outputs.hpp"
#include "labeldp/prior/discretize.hpp"

namespace labeldp {

namespace detail {
/// A uniform_random_bit_generator that returns one given word (the batch samplers hand a
/// pre-drawn word to a table draw that takes a generator).
struct GivenWord {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type(0); }
  result_type word;
  result_type operator()() const { return word; }
};
}  // namespace detail

/// A finite mechanism with its kind and its guarantee: the probabilities are eps-DP exactly as
/// stored (satisfies_epsilon()), and a label is mapped to an input before its row is sampled:
/// clipped to the inputs' range, then rounded to the nearest input (ties up), except for the
/// "unbiased" kind, whose labels go through unbiased randomized rounding (UnbiasedRandomizedRounding:
/// exact Bernoulli between the two neighbouring inputs, Badanidiyuru et al. 2023, proof of
/// Lemma 8) so that \f$E[M(y)] = y\f$ holds for every label in the range, as for
/// UnbiasedRandomizer. Both maps are public and data-independent; a mixture of eps-DP rows is
/// eps-DP.
class FiniteLabelMechanism {
 public:
  /// \param kind the mechanism's name in files ("rr-on-bins", "optimal-lp", "unbiased", "rr",
  ///        "rr-with-prior", "finite").
  /// \param eps the guarantee; the probabilities must meet it exactly.
  /// \param m the mechanism's inputs, outputs and probabilities.
  /// \param extra_json extra fields written by to_json() (without braces, e.g. `"bins":[...]`);
  ///        informational, not read back.
  /// \throws std::invalid_argument for a bad eps, or probabilities that are not eps-DP exactly
  ///         (naming the output and the two inputs).
  FiniteLabelMechanism(std::string kind, double eps, FiniteMechanism<double> m, std::string extra_json = {})
      : m_kind(std::move(kind)),
        m_eps(eps),
        m_mech(std::move(m)),
        m_map(Discretizer<double>::points(
            std::vector<double>(m_mech.inputs().data(), m_mech.inputs().data() + m_mech.num_inputs()))),
        m_extra(std::move(extra_json)) {
    validate_epsilon(eps);
    require_epsilon(m_mech, eps);
    if (m_kind == "unbiased") m_rounding.emplace(m_mech.inputs());
  }
  const std::string& kind() const { return m_kind; }
  double eps() const { return m_eps; }
  double delta() const { return 0; }
  const FiniteMechanism<double>& finite() const { return m_mech; }
  /// A noisy label for `y` (any finite real: clipped to the inputs' range and rounded to an input
  /// first, see the class comment).
  /// \throws std::invalid_argument for a non-finite label.
  template <std::uniform_random_bit_generator G>
  double sample(double y, G& gen) const {
    return m_mech.outputs()[m_mech.sample_index(input_index(y, gen), gen)];
  }
  /// The input a label is mapped to (drawn, for the "unbiased" kind).
  template <std::uniform_random_bit_generator G>
  Index input_index(double y, G& gen) const {
    if (!std::isfinite(y)) detail::fail_parameter("label", "must be finite", y);
    if (!m_rounding) return m_nearest.find(y);  // the nearest input, exactly m_map.index(y), label-independent work
    const auto& in = m_mech.inputs();
    const double c = std::clamp(y, in[0], in[in.size() - 1]);
    if (in.size() < 2) return m_rounding->sample_index(c, gen);
    return rounded_index(c, gen, nullptr);
  }
  /// Batch form: `out[t] = sample(in[t], gen)`, the same generator words in the same order (two
  /// per label for the "unbiased" kind: its rounding coin, then its row's alias draw; one
  /// otherwise), except after a rounding word that ties with its threshold (probability
  /// \f$2^{-64}\f$), whose exact continuation draws after the block's words. Blocks of labels go
  /// through three short loops (words, inputs, outputs) instead of one long one per label, which
  /// lets the processor overlap labels (issue 15: about 1.4x the per-label loop); the work per
  /// label still does not depend on the label.
  /// \throws std::invalid_argument when the sizes differ, or for a non-finite label (`out` is
  ///         then written up to the block that holds it).
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const double> in, std::span<double> out, G& gen) const {
    check_batch_sizes(in.size(), out.size());
    const unsigned per_label = words_per_label();
    std::uint64_t words[2 * kBlock];
    for (std::size_t t0 = 0; t0 < in.size(); t0 += kBlock) {
      const std::size_t k = std::min(kBlock, in.size() - t0);
      validate_finite_labels(in.subspan(t0, k));
      random_words(gen, words, per_label * k);
      sample_words(in.subspan(t0, k), words, out.subspan(t0, k), gen);
    }
  }
  /// Words the batch sampler draws per label: 2 for the "unbiased" kind (its rounding coin, then
  /// its row's alias draw), 1 otherwise (the alias draw).
  unsigned words_per_label() const { return m_rounding ? 2 : 1; }
  /// The batch sampler on pre-drawn words (sample_keyed()'s path): `out[t]` is the noisy label of
  /// `in[t]` drawn with words `words[p t] .. words[p t + p - 1]`, p = words_per_label(), exactly as
  /// sample() would draw it from a generator returning those words; only after a rounding word
  /// that ties with its threshold (probability \f$2^{-64}\f$) does the exact continuation draw from
  /// `gen`. At most 128 labels per call, all finite (checked by the caller: validate_finite_labels()).
  template <std::uniform_random_bit_generator G>
  void sample_words(std::span<const double> in, const std::uint64_t* words, std::span<double> out, G& gen) const {
    const auto& inputs = m_mech.inputs();
    const std::size_t k = in.size();
    Index index[kBlock];
    const double* y = in.data();
    if (m_rounding && inputs.size() >= 2) {
      const double first = inputs[0], last = inputs[inputs.size() - 1];
      for (std::size_t t = 0; t < k; ++t) index[t] = rounded_index(std::clamp(y[t], first, last), gen, &words[2 * t]);
    } else if (m_rounding) {  // one input: every label maps to it (its coin, of probability 0, is words[2 t])
      for (std::size_t t = 0; t < k; ++t) index[t] = 0;
    } else {
      for (std::size_t t = 0; t < k; ++t) index[t] = m_nearest.find(y[t]);
    }
    const unsigned p = words_per_label();
    const auto& outputs = m_mech.outputs();
    for (std::size_t t = 0; t < k; ++t) {
      detail::GivenWord word{words[p * t + p - 1]};
      out[t] = outputs[m_mech.sample_index(index[t], word)];
    }
  }
  /// Labels per call of sample_words().
  static constexpr std::size_t kBlock = 128;

  std::string to_json() const {
    std::string s = "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":" + json_string(m_kind) +
                    ",\"eps\":" + json_number(m_eps) + ",\"delta\":0,";
    if (!m_extra.empty()) s += m_extra + ",";
    return s + json_fields(m_mech) + "}";
  }

  /// \throws std::invalid_argument naming an output and two inputs whose probability ratio
  ///         exceeds e^eps (or is infinite) in exact arithmetic (satisfies_epsilon()), in the
  ///         stored probabilities or in those the sampler realizes: the sampler draws each row's
  ///         integer weights over their own total, i.e. a row summing to 1 - d as if divided by
  ///         1 - d, which can push a ratio that is exact as stored past e^eps. The realized table
  ///         is checked on its integer weights (realized_satisfies_epsilon()): its doubles are
  ///         rounded from 64-bit weights and can hide a ratio a few ulps above e^eps.
  static void require_epsilon(const FiniteMechanism<double>& m, double eps) {
    require_epsilon(m, m.probabilities(), eps, "probabilities");
    const char* realized = "realized probabilities (each row over its own sum)";
    const Matrix<double> R = m.realized_probabilities();
    require_epsilon(m, R, eps, realized);
    if (realized_satisfies_epsilon(m, eps)) return;
    // Name the column whose realized max/min ratio is largest (the integer check failed there).
    Index worst = 0;
    long double worst_ratio = -1;
    for (Index j = 0; j < R.cols(); ++j) {
      const long double ratio = static_cast<long double>(R.col(j).maxCoeff()) / R.col(j).minCoeff();
      if (ratio > worst_ratio) worst = j, worst_ratio = ratio;
    }
    Index hi = 0, lo = 0;
    R.col(worst).maxCoeff(&hi);
    R.col(worst).minCoeff(&lo);
    throw std::invalid_argument(std::string(realized) + " are not " + detail::format_number(eps) +
                                "-DP in the sampler's integer weights: output " +
                                detail::format_number(m.outputs()[worst]) + " has probability " +
                                detail::format_number(R(hi, worst)) + " for input " +
                                detail::format_number(m.inputs()[hi]) + " and " + detail::format_number(R(lo, worst)) +
                                " for input " + detail::format_number(m.inputs()[lo]) + " (ratio above e^eps)");
  }

 private:
  // The "unbiased" kind's input for c in [first, last] input (at least two inputs), its coin drawn
  // from *given (a pre-drawn word) or, given nullptr, from gen: exactly
  // m_rounding->sample_index(c, gen) (the same words, the same index), with label-independent work: the bracket from
  // the bucket search, u compared with floor(up 2^64) without a branch; bernoulli()'s continuation (more words from
  // gen) only on a tie (2^-64).
  template <std::uniform_random_bit_generator G>
  Index rounded_index(double c, G& gen, const std::uint64_t* given) const {
    const auto& in = m_mech.inputs();
    const Index lo = m_nearest.lower(c);
    const double up = std::clamp((c - in[lo]) / (in[lo + 1] - in[lo]), 0.0, 1.0);
    if (!(up >= 0 && up <= 1)) [[unlikely]]  // NaN (overflowing gaps): the reference draw (*given unused)
      return m_rounding->sample_index(c, gen);
    const std::uint64_t u = given ? *given : random_u64(gen);
    // q = floor(up 2^64) as 2 floor(h) + [frac(h) >= 1/2] with h = up' 2^63 < 2^63 (exact;
    // a signed conversion, min and set-on-compare: no branch the compiler could mispredict on a
    // label); up = 1 (the last input) is the `one` flag, as in bernoulli().
    const bool one = up == 1;
    const double h = std::min(up, 0x1.fffffffffffffp-1) * 0x1p63;
    const std::int64_t fh = std::int64_t(h);
    const std::uint64_t q = (std::uint64_t(fh) << 1) | std::uint64_t(h - double(fh) >= 0.5);
    bool coin = one | (u < q);
    if (!one && u == q) [[unlikely]] {
      const double frac = up * 0x1p64 - double(q);  // bernoulli()'s continuation, exactly
      coin = frac != 0 && bernoulli(frac, gen);
    }
    return lo + Index(coin);
  }

  static void require_epsilon(const FiniteMechanism<double>& m, const Matrix<double>& P, double eps, const char* what) {
    const EpsilonViolation v = find_epsilon_violation(P, eps);
    if (v.column < 0) return;
    throw std::invalid_argument(std::string(what) + " are not " + detail::format_number(eps) + "-DP: output " +
                                detail::format_number(m.outputs()[v.column]) + " has probability " +
                                detail::format_number(P(v.high_row, v.column)) + " for input " +
                                detail::format_number(m.inputs()[v.high_row]) + " and " +
                                detail::format_number(P(v.low_row, v.column)) + " for input " +
                                detail::format_number(m.inputs()[v.low_row]) + " (ratio above e^eps)");
  }

  std::string m_kind;
  double m_eps;
  FiniteMechanism<double> m_mech;
  Discretizer<double> m_map;
  detail::NearestInputIndex m_nearest{m_mech.inputs()};
  std::optional<UnbiasedRandomizedRounding<double>> m_rounding;  // "unbiased" kind only
  std::string m_extra;
};

/// What a baseline is built from (the `labeldp baseline` options): the public label range
/// [lo, hi] (sensitivity hi - lo), eps, delta (Gaussian kinds), the grid step (discrete kinds),
/// whether outputs are clipped to [lo, hi], and the prior (rr, rr-with-prior: their inputs).
struct BaselineSpec {
  std::string kind;
  double eps = 0;
  double delta = 0;
  double lo = 0, hi = 0;
  std::optional<double> resolution;
  bool clip = false;
  std::optional<FinitePrior<double>> prior;
  /// The Gaussian kinds' noise: the audited table when it fits (default), or always exact.
  GaussianNoise gaussian_noise = GaussianNoise::table;
};

/// The kinds make_baseline() builds, in the contract's order.
inline const std::vector<std::string>& baseline_kinds() {
  static const std::vector<std::string> kinds{"laplace",      "discrete-laplace",   "gaussian",    "discrete-gaussian",
                                              "staircase",    "discrete-staircase", "exponential", "rr",
                                              "rr-with-prior"};
  return kinds;
}

/// Any mechanism of the library, by value. Models labeldp::Mechanism.
class AnyMechanism {
 public:
  using Variant =
      std::variant<FiniteLabelMechanism, RPWithPrior<double>, LaplaceMechanism<double>,
                   DiscreteLaplaceMechanism<double>, ExponentialMechanism<double>, DiscreteGaussianMechanism,
                   AnalyticGaussianMechanism, StaircaseMechanism, DiscreteStaircaseMechanism>;

  template <typename M>
  requires std::is_constructible_v<Variant, M&&> AnyMechanism(std::string kind, M&& m)
      : m_kind(std::move(kind)), m_v(std::forward<M>(m)) {}

  /// A finite mechanism of the given kind whose probabilities are eps-DP exactly.
  /// \throws std::invalid_argument as FiniteLabelMechanism's constructor.
  static AnyMechanism from_finite(std::string kind, double eps, FiniteMechanism<double> m, std::string extra = {}) {
    FiniteLabelMechanism f(kind, eps, std::move(m), std::move(extra));
    return AnyMechanism(std::move(kind), std::move(f));
  }

  /// The kind, as in mechanism files ("rr-on-bins", "unbiased", "laplace", ...).
  const std::string& kind() const { return m_kind; }
  double eps() const {
    return std::visit([](const auto& m) { return double(m.eps()); }, m_v);
  }
  double delta() const {
    return std::visit([](const auto& m) { return double(m.delta()); }, m_v);
  }
  template <std::uniform_random_bit_generator G>
  double sample(double y, G& gen) const {
    return std::visit([&](const auto& m) { return double(m.sample(y, gen)); }, m_v);
  }
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const double> in, std::span<double> out, G& gen) const {
    std::visit([&](const auto& m) { m.sample(in, out, gen); }, m_v);
  }
  std::string to_json() const {
    return std::visit([](const auto& m) { return m.to_json(); }, m_v);
  }
  /// The exact finite mechanism, or nullptr for mechanisms with infinitely many outputs.
  const FiniteMechanism<double>* finite() const {
    if (const auto* f = std::get_if<FiniteLabelMechanism>(&m_v)) return &f->finite();
    return nullptr;
  }
  /// Exact expected squared loss under `prior` where the mechanism defines it, else nullopt.
  std::optional<double> expected_loss(const FinitePrior<double>& prior) const {
    return std::visit(
        [&](const auto& m) -> std::optional<double> {
          using M = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<M, FiniteLabelMechanism>) {
            if (prior.values() != m.finite().inputs()) return std::nullopt;
            return m.finite().expected_loss(prior);
          } else if constexpr (requires { m.expected_loss(prior); }) {
            return double(m.expected_loss(prior));
          } else {
            return std::nullopt;
          }
        },
        m_v);
  }
  const Variant& variant() const { return m_v; }

 private:
  std::string m_kind;
  Variant m_v;
};

static_assert(Mechanism<AnyMechanism>);
static_assert(Mechanism<FiniteLabelMechanism>);
static_assert(Mechanism<RPWithPrior<double>>);

namespace detail {
inline double require_resolution(const BaselineSpec& s) {
  if (!s.resolution) throw std::invalid_argument("baseline '" + s.kind + "' needs 'resolution' (the grid step)");
  return *s.resolution;
}
inline double require_delta(const BaselineSpec& s) {
  if (!(s.delta > 0 && s.delta < 1))
    throw std::invalid_argument("baseline '" + s.kind + "' needs 'delta' in (0, 1), got " + format_number(s.delta));
  return s.delta;
}
inline const FinitePrior<double>& require_prior(const BaselineSpec& s) {
  if (!s.prior) throw std::invalid_argument("baseline '" + s.kind + "' needs a prior (its values are the inputs)");
  return *s.prior;
}
}  // namespace detail

/// Builds the baseline named by `spec.kind` (baseline_kinds()).
/// \throws std::invalid_argument naming the kind, or the field that is missing or bad.
inline AnyMechanism make_baseline(const BaselineSpec& s) {
  const std::string& k = s.kind;
  if (k == "laplace") return AnyMechanism(k, LaplaceMechanism<double>(s.lo, s.hi, s.eps, s.clip));
  if (k == "discrete-laplace")
    return AnyMechanism(k, DiscreteLaplaceMechanism<double>(
                               LabelGrid<double>(s.lo, s.hi, detail::require_resolution(s)), s.eps, s.clip));
  if (k == "exponential")  // outputs always in [lo, hi]; default grid: 1024 steps
    return AnyMechanism(k, ExponentialMechanism<double>(
                               LabelGrid<double>(s.lo, s.hi, s.resolution.value_or((s.hi - s.lo) / 1024)), s.eps));
  if (k == "gaussian")
    return AnyMechanism(
        k, AnalyticGaussianMechanism(s.lo, s.hi, s.eps, detail::require_delta(s), s.clip, s.gaussian_noise));
  if (k == "discrete-gaussian")
    return AnyMechanism(k, DiscreteGaussianMechanism(s.lo, s.hi, s.eps, detail::require_delta(s),
                                                     detail::require_resolution(s), s.clip, s.gaussian_noise));
  if (k == "staircase") return AnyMechanism(k, StaircaseMechanism(s.lo, s.hi, s.eps, s.clip));
  if (k == "discrete-staircase")
    return AnyMechanism(k, DiscreteStaircaseMechanism(s.lo, s.hi, s.eps, detail::require_resolution(s), s.clip));
  if (k == "rr") {
    const auto& p = detail::require_prior(s);
    return AnyMechanism::from_finite(k, s.eps, randomized_response(p.values(), s.eps));
  }
  if (k == "rr-with-prior") {
    const auto& p = detail::require_prior(s);
    const Index top = rr_with_prior_top_k(p, s.eps);
    return AnyMechanism::from_finite(k, s.eps, rr_with_prior(p, s.eps), "\"top_k\":" + std::to_string(top));
  }
  std::string known;
  for (const auto& name : baseline_kinds()) known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown baseline kind '" + k + "' (known: " + known + ")");
}

}  // namespace labeldp
