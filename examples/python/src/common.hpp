// Shared pieces of the labeldp Python module (module.cpp: mechanisms; prior.cpp: the private
// prior): argument checks that raise ValueError naming the Python argument, the 32-byte key, and
// label arrays read without the GIL.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/keyed_random.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp::python {

namespace py = pybind11;

/// A float64 C-contiguous view of any numeric array (converted when it is not one already).
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// Raised as ValueError (pybind11 translates std::invalid_argument).
[[noreturn]] inline void fail(const std::string& message) { throw std::invalid_argument(message); }

/// The bytes of `key`: exactly 32 (a ChaCha20 key, labeldp::KeyedRandom).
inline KeyedRandom::Key parse_key(const py::bytes& key) {
  const std::string bytes = key;
  if (bytes.size() != 32)
    fail("'key' must be 32 bytes (a secret ChaCha20 key, e.g. secrets.token_bytes(32)), got " +
         std::to_string(bytes.size()));
  KeyedRandom::Key k{};
  for (std::size_t i = 0; i < 32; ++i) k[i] = static_cast<std::uint8_t>(bytes[i]);
  return k;
}

/// The index of the first non-finite label, or -1. Reads no Python object (runs without the GIL).
inline std::ptrdiff_t first_non_finite(std::span<const double> labels) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (!std::isfinite(labels[i])) return std::ptrdiff_t(i);
  return -1;
}

/// "'name'[i]" for messages (built by appending: GCC 12 misreports `"literal" + std::string`
/// temporaries under -Wrestrict).
inline std::string element(const char* name, std::size_t i) {
  std::string s = "'";
  s += name;
  s += "'[";
  s += std::to_string(i);
  s += ']';
  return s;
}

/// The ValueError for a non-finite label: names its index, never its value (labels are private).
[[noreturn]] inline void fail_label(std::ptrdiff_t i) {
  fail(element("labels", std::size_t(i)) +
       " is not finite: every label must be a finite number (the value is not shown: labels are private)");
}

/// A NumPy copy of a vector.
inline py::array_t<double> to_array(const Vector<double>& v) { return py::array_t<double>(v.size(), v.data()); }

/// Checks one prior given as two sequences, as the CLI's prior file rules: `values` finite and
/// distinct, `probs` finite, >= 0, summing to 1 within 1e-9, as many as the values.
/// `max_magnitude` (squared loss: 1e150) and `nonnegative` (Poisson loss) restrict the values.
inline void check_prior(const std::vector<double>& values, const std::vector<double>& probs, double max_magnitude,
                        bool nonnegative) {
  if (values.empty()) fail("'values' must hold at least one value, got 0");
  if (values.size() != probs.size())
    fail("'probs' must have one entry per value (" + std::to_string(values.size()) + "), has " +
         std::to_string(probs.size()));
  double total = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string at = element("values", i) + " = " + detail::format_number(values[i]);
    if (!std::isfinite(values[i])) fail(at + " is not finite");
    if (std::abs(values[i]) > max_magnitude)
      fail(at + " is beyond 1e150 in magnitude (the limit with squared loss: its square would overflow)");
    if (nonnegative && values[i] < 0) fail(at + " is negative: Poisson log loss needs labels >= 0");
    if (!std::isfinite(probs[i]) || probs[i] < 0)
      fail(element("probs", i) + " = " + detail::format_number(probs[i]) + " must be a finite number >= 0");
    total += probs[i];
  }
  if (std::abs(total - 1) > 1e-9) fail("'probs' sum to " + detail::format_number(total) + ", not 1 (tolerance 1e-9)");
}

}  // namespace labeldp::python
