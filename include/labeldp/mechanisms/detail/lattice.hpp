/// \file
/// Shared internals of the lattice baselines (the mechanisms of mechanisms/additive_noise.hpp,
/// mechanisms/gaussian.hpp and mechanisms/staircase.hpp, which add integer noise to a label's
/// index on a LabelGrid): their common sampling and expected-loss members (LatticeBaseline), the
/// mechanism-file head, the constructors' delta rule, and exact Bernoulli samplers for rational
/// probabilities and for \f$e^{-n/d}\f$ (Canonne, Kamath and Steinke 2020, Algorithm 1) in
/// 128-bit integer arithmetic.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>

#include "labeldp/core/concepts.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/label_grid.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp::detail {

/// Throws unless delta is in (0, 1) and at least 1e-300 (below, the deltas computed in double
/// precision would underflow and could no longer certify the guarantee).
inline void validate_delta(double delta) {
  if (!(delta > 0 && delta < 1)) fail_parameter("delta", "must be in (0, 1)", delta);
  if (delta < 1e-300) fail_parameter("delta", "must be at least 1e-300", delta);
}

/// The fields every baseline's mechanism file starts with (the labeldp CLI contract,
/// "baseline"): format, version, kind, eps, delta, sensitivity, lo, hi, clip.
inline std::string baseline_json_head(const char* kind, double eps, double lo, double hi, bool clip, double delta = 0) {
  return "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":" + json_string(kind) +
         ",\"eps\":" + json_number(eps) + ",\"delta\":" + json_number(delta) +
         ",\"sensitivity\":" + json_number(hi - lo) + ",\"lo\":" + json_number(lo) + ",\"hi\":" + json_number(hi) +
         ",\"clip\":" + (clip ? "true" : "false");
}

/// \f$\sum_y p(y)\,\ell(y)\f$ over the prior's support: the expected loss of a mechanism whose
/// conditional loss \f$\ell(y) = E[(M(y) - y)^2]\f$ is `per_label_loss(y)` (labels of probability 0
/// are skipped).
template <typename Scalar, typename PerLabelLoss>
Scalar prior_expectation(const FinitePrior<Scalar>& prior, PerLabelLoss&& per_label_loss) {
  Scalar s = 0;
  for (Index i = 0; i < prior.size(); ++i)
    if (prior.probability(i) > 0) s += prior.probability(i) * Scalar(per_label_loss(prior.value(i)));
  return s;
}

/// j + z without overflow (noise of magnitude near 2^63 has probability below e^-(2^20)).
inline std::int64_t add_saturating(std::int64_t j, std::int64_t z) {
  std::int64_t r;
  if (__builtin_add_overflow(j, z, &r))
    return z > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return r;
}

/// The members every lattice baseline has in common, written once (CRTP): the noisy label
/// \f$M(y) = v(j(y) + Z)\f$ of the grid index j(y) plus one exact draw Z of the integer noise
/// (its output clipped to [lo, hi] when the mechanism clips), the batch form, and the expected
/// loss under a prior. `Derived` provides grid() (a LabelGrid<Scalar>), clipped(), noise() (a
/// callable drawing Z from a generator) and conditional_loss(y) \f$= E[(M(y) - y)^2]\f$.
template <typename Derived, typename Scalar = double>
class LatticeBaseline {
 public:
  /// A noisy label for `y` (clipped and rounded to the grid first). Exact; the work does not
  /// depend on `y`. \throws std::invalid_argument for a non-finite label.
  template <std::uniform_random_bit_generator G>
  Scalar sample(Scalar y, G& gen) const {
    const Derived& m = derived();
    const std::int64_t j = m.grid().index(y);  // validates y before any random draw
    return m.grid().output(add_saturating(j, draw(m, gen)), m.clipped());
  }
  /// Batch form: `out[i] = sample(in[i], gen)`, same draws in the same order. Works in blocks of
  /// kBatchBlock labels: their indices (LabelGrid::indices()), then their noise, then their
  /// outputs (LabelGrid::outputs()), so that the grid's arithmetic runs without a call or a
  /// branch per label (a third of the time per label otherwise). The noise takes the words of
  /// `gen` 64 at a time (BufferedWords): afterwards `gen` has advanced by up to 63 words more
  /// than the draws used, and those words are discarded.
  /// \throws std::invalid_argument when the sizes differ, or for a non-finite label (the blocks
  ///         before its own are written and their noise drawn).
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const Scalar> in, std::span<Scalar> out, G& gen) const {
    check_batch_sizes(in.size(), out.size());
    const Derived& m = derived();
    std::int64_t index[kBatchBlock];
    BufferedWords<G> words(gen);
    for (std::size_t begin = 0; begin < in.size(); begin += kBatchBlock) {
      const std::size_t n = std::min(kBatchBlock, in.size() - begin);
      m.grid().indices(in.subspan(begin, n), index);  // validates the block before its draws
      for (std::size_t i = 0; i < n; ++i) index[i] = add_saturating(index[i], draw(m, words));
      m.grid().outputs(index, n, m.clipped(), out.data() + begin);
    }
  }
  /// The expected squared error \f$\sum_y p(y) E[(M(y) - y)^2]\f$ under `prior` (its values need
  /// not lie on the grid), exact for what is sampled.
  Scalar expected_loss(const FinitePrior<Scalar>& prior) const {
    return prior_expectation(prior, [this](Scalar y) { return derived().conditional_loss(y); });
  }

 private:
  static constexpr std::size_t kBatchBlock = 256;
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
  // One draw of the integer noise: from Derived::tabled_noise() when it has one and it is not
  // null (an audited table in front of the exact sampler), else Derived::noise()(gen).
  template <typename G>
  static std::int64_t draw(const Derived& m, G& gen) {
    if constexpr (requires { m.tabled_noise(); }) {
      if (const auto* table = m.tabled_noise()) return (*table)(gen);
    }
    return m.noise()(gen);
  }
};

/// The unclipped outputs of a grid are \f$lo + g m\f$ except value(N), the grid's top point (hi
/// on a resolution grid, which \f$lo + gN\f$ may miss by a rounding): what replacing that one
/// point adds to \f$E[(v(c + Z) - y)^2]\f$ when \f$\Pr[c + Z = N] = p_N\f$.
template <typename Scalar>
double top_point_correction(const LabelGrid<Scalar>& grid, double y, double p_top) {
  const double n = double(grid.lo() + Scalar(grid.steps()) * grid.step()) - y, t = double(grid.value(grid.steps())) - y;
  return p_top * (t * t - n * n);
}

/// Random bits drawn from a generator 64 at a time and handed out as needed, so that the small
/// exact draws of the samplers (a sign, Bernoulli(1/K), a Bernoulli of a double's binary
/// expansion) cost a few bits instead of a 64-bit word each. Mechanisms create one per label and
/// drop its unused bits afterwards, so a batch call draws exactly what repeated single calls draw.
template <std::uniform_random_bit_generator G>
class NoiseBits {
 public:
  explicit NoiseBits(G& gen) : m_gen(gen) {}

  /// k uniformly random bits, 1 <= k <= 64.
  std::uint64_t bits(int k) {
    if (k == 64) return random_u64(m_gen);
    if (m_left < k) {
      m_buf = random_u64(m_gen);
      m_left = 64;
    }
    const std::uint64_t r = m_buf & ((std::uint64_t(1) << k) - 1);
    m_buf >>= k;
    m_left -= k;
    return r;
  }
  bool bit() { return bits(1) != 0; }

  /// Exactly uniform on [0, m), m >= 1, by rejection on ceil(log2 m) bits (fewer than 2 tries).
  u128 below(u128 m) {
    if (m <= 1) return 0;
    const u128 top = m - 1;
    const std::uint64_t hi = std::uint64_t(top >> 64);
    const int k = hi ? 64 + std::bit_width(hi) : std::bit_width(std::uint64_t(top));
    for (;;) {
      const u128 v = k <= 64 ? u128(bits(k)) : (u128(bits(k - 64)) << 64) | u128(bits(64));
      if (v < m) return v;
    }
  }

  /// True with probability exactly n/d (0 <= n <= d, 1 <= d < 2^127): a uniform real U is
  /// compared digit by digit with the binary expansion of n/d (long division), two bits on average.
  bool ratio(u128 n, u128 d) {
    if (n >= d) return true;
    u128 r = n;
    while (r != 0) {
      r <<= 1;
      const bool digit = r >= d;
      if (digit) r -= d;
      if (bit() != digit) return digit;
    }
    return false;
  }

  /// True with probability exactly p (the double's exact dyadic value): the random real U is
  /// compared with p bit by bit, drawing two bits on average.
  bool bernoulli(double p) {
    if (!(p >= 0 && p <= 1)) fail_parameter("p", "must be a probability in [0, 1]", p);
    if (p == 1) return true;
    while (p > 0) {
      p *= 2;  // exact: the next binary digit of p moves before the point
      const bool digit = p >= 1;
      if (digit) p -= 1;  // exact (p in [1, 2))
      const bool u = bit();
      if (u != digit) return digit;  // U's digit 0 where p's is 1: U < p
    }
    return false;
  }

 private:
  G& m_gen;
  std::uint64_t m_buf = 0;
  int m_left = 0;
};

/// True with probability exactly n/d (0 <= n <= d, d >= 1).
template <typename G>
bool bernoulli_ratio(u128 n, u128 d, NoiseBits<G>& bits) {
  return bits.ratio(n, d);
}

/// True with probability exactly \f$e^{-n/d}\f$ (Canonne, Kamath and Steinke 2020, Algorithm 1):
/// for \f$\gamma = n/d \le 1\f$ the parity of the first K with Bernoulli(gamma/K) = 0; for larger
/// gamma, floor(gamma) independent Bernoulli(e^-1) and one Bernoulli(e^-(gamma - floor gamma)).
/// \pre d < 2^113 (so d K fits in 128 bits for every K that can occur: K > 2^14 has probability
/// below 1/(2^14)!, and then std::logic_error is thrown rather than an inexact answer).
template <typename G>
bool bernoulli_exp_minus(u128 n, u128 d, NoiseBits<G>& bits) {
  auto unit = [&](u128 num, u128 den) {  // e^{-num/den}, num <= den
    std::uint64_t k = 1;
    while (bernoulli_ratio(num, den * k, bits)) {
      if (++k > (std::uint64_t(1) << 14)) throw std::logic_error("bernoulli_exp_minus: impossible trial count");
    }
    return (k & 1) == 1;
  };
  if (n <= d) return unit(n, d);
  for (u128 q = n / d; q > 0; --q)
    if (!unit(1, 1)) return false;
  return unit(n % d, d);
}

/// Power sum \f$\sum_{i=0}^{n-1} i^m\f$ for m = 0, 1, 2 (in double; n < 2^53).
inline double power_sum(int m, double n) {
  if (n <= 0) return 0;
  if (m == 0) return n;
  if (m == 1) return n * (n - 1) / 2;
  return (n - 1) * n * (2 * n - 1) / 6;
}

}  // namespace labeldp::detail
