/// \file
/// The one concept every mechanism of the library models.
#pragma once

#include <concepts>
#include <span>
#include <stdexcept>
#include <string>

#include "labeldp/core/random.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// A label-DP mechanism: a randomized map from a true label to a noisy label.
///
/// Every mechanism class of the library models it:
/// - `eps()` and `delta()`: the guarantee it is built to meet ((eps, 0) for pure eps-DP);
/// - `sample(y, gen)`: one noisy label for the true label `y` (how `y` is mapped to the
///   mechanism's inputs -- clipping, rounding to a public grid -- is part of the mechanism and
///   is data independent); sampling is exact, and its work does not depend on `y`;
/// - `sample(in, out, gen)`: the batch form, `out[i] = sample(in[i], gen)` with the same draws
///   in the same order (so a seeded generator gives the same values both ways);
/// - `to_json()`: the mechanism file (`"format":"labeldp-mechanism"`, `"version":1`, and
///   everything needed to apply it; never generator state).
///
/// Finite mechanisms also provide `finite()`, their exact FiniteMechanism (inputs, outputs,
/// probabilities), which audit_epsilon() certifies; see FiniteMechanismModel.
template <typename M>
concept Mechanism = requires(const M& m, double y, SeededRandom& gen, std::span<const double> in,
                             std::span<double> out) {
  { m.eps() } -> std::convertible_to<double>;
  { m.delta() } -> std::convertible_to<double>;
  { m.sample(y, gen) } -> std::convertible_to<double>;
  { m.sample(in, out, gen) } -> std::same_as<void>;
  { m.to_json() } -> std::convertible_to<std::string>;
};

/// The batch form of any mechanism's `sample`: `out[i] = m.sample(in[i], gen)` for every i, in
/// order (so the draws are those of repeated single calls).
/// \throws std::invalid_argument when `in` and `out` differ in length (before any draw).
template <typename M, typename Scalar, std::uniform_random_bit_generator G>
void sample_each(const M& m, std::span<const Scalar> in, std::span<Scalar> out, G& gen) {
  check_batch_sizes(in.size(), out.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = m.sample(in[i], gen);
}

}  // namespace labeldp
