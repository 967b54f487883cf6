/// \file
/// Parameter validation shared by every layer: one rule per function, each throwing
/// `std::invalid_argument` with a message that names the parameter, the rule and the value
/// (after Google differential-privacy's `ValidateIsFiniteAndPositive`).
#pragma once

#include <cmath>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace labeldp {
namespace detail {

/// Formats a real number with 17 significant digits so that messages round-trip.
inline std::string format_number(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

[[noreturn]] inline void fail_parameter(std::string_view name, std::string_view rule, double value) {
  throw std::invalid_argument("'" + std::string(name) + "' " + std::string(rule) + ", got " + format_number(value));
}

}  // namespace detail

/// Throws unless a batch's `in` and `out` have the same length ("batch sample: 'out' has 3
/// entries but 'in' has 10"), before any draw.
inline void check_batch_sizes(std::size_t in, std::size_t out) {
  if (in != out)
    throw std::invalid_argument("batch sample: 'out' has " + std::to_string(out) + " entries but 'in' has " +
                                std::to_string(in));
}

/// Throws for the first non-finite label of `labels` ("'label' must be finite, got nan"), after
/// one branch-free pass over them all.
template <typename Scalar>
void validate_finite_labels(std::span<const Scalar> labels) {
  bool finite = true;
  for (const Scalar y : labels) finite &= std::isfinite(double(y));
  if (!finite)
    for (const Scalar y : labels)
      if (!std::isfinite(double(y))) detail::fail_parameter("label", "must be finite", double(y));
}

/// Throws unless `value` is finite and strictly positive.
/// \throws std::invalid_argument "'eps' must be finite and positive, got -1"
inline void validate_finite_positive(std::string_view name, double value) {
  if (!std::isfinite(value) || !(value > 0)) detail::fail_parameter(name, "must be finite and positive", value);
}

/// Throws unless `value` is finite and >= 0.
inline void validate_finite_nonnegative(std::string_view name, double value) {
  if (!std::isfinite(value) || !(value >= 0)) detail::fail_parameter(name, "must be finite and non-negative", value);
}

/// Throws unless `value` is finite.
inline void validate_finite(std::string_view name, double value) {
  if (!std::isfinite(value)) detail::fail_parameter(name, "must be finite", value);
}

/// Throws unless `value` is finite and lies in the closed interval [lo, hi].
inline void validate_in_range(std::string_view name, double value, double lo, double hi) {
  if (!std::isfinite(value) || value < lo || value > hi)
    detail::fail_parameter(
        name, "must be finite and in [" + detail::format_number(lo) + ", " + detail::format_number(hi) + "]", value);
}

/// Privacy parameters: epsilon must be finite and positive.
inline void validate_epsilon(double eps, std::string_view name = "eps") { validate_finite_positive(name, eps); }

/// The largest eps at which finite (table) mechanisms are computed: 700. Beyond about 708 the
/// probability \f$e^{-\varepsilon}\f$ of an unlikely output is no longer a normal double, and a
/// table with an exact 0 next to a positive entry in the same column is not eps-DP for any
/// finite eps. A 700-DP mechanism is eps-DP for every eps >= 700, and its probabilities differ
/// from those of the eps one by less than \f$e^{-700} \approx 10^{-304}\f$: the same table in doubles.
inline constexpr double kMaxTableEpsilon = 700;

/// The eps a finite mechanism is computed at: \f$\min(\varepsilon, 700)\f$ (kMaxTableEpsilon). The
/// mechanism still reports the eps it was asked for, which it satisfies.
inline double table_epsilon(double eps) { return eps < kMaxTableEpsilon ? eps : kMaxTableEpsilon; }

}  // namespace labeldp
