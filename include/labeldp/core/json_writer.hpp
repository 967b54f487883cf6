/// \file
/// Minimal JSON writing (no external JSON library in include/): numbers with 17 significant
/// digits so that they read back to the same double (the labeldp CLI contract, "Common rules"),
/// escaped strings and arrays. Every mechanism's `to_json()` writes its mechanism file with these;
/// reading is io's job.
#pragma once

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// A JSON number with 17 significant digits (`%.17g`), which reads back to the same double.
/// \throws std::invalid_argument for NaN and +-infinity, which JSON cannot represent.
inline std::string json_number(double v) {
  if (!std::isfinite(v))
    throw std::invalid_argument("JSON cannot represent the non-finite number " + labeldp::detail::format_number(v));
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string(buf, std::size_t(n));
}

/// A JSON array of numbers, e.g. `[0,0.5,1]`, each written by json_number().
/// \throws std::invalid_argument when an entry is not finite.
template <typename Derived>
std::string json_array(const Eigen::DenseBase<Derived>& v) {
  std::string s = "[";
  for (Index i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += json_number(double(v.derived().coeff(i)));
  }
  s += ']';
  return s;
}

/// A JSON array of numbers (overload for the library's vector type).
inline std::string json_array(const Vector<double>& v) { return json_array<Vector<double>>(v); }

/// A JSON string literal with the escapes RFC 8259 requires (quote, backslash, control
/// characters); other bytes are copied (UTF-8 passes through).
inline std::string json_string(std::string_view text) {
  std::string s = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        s += "\\\"";
        break;
      case '\\':
        s += "\\\\";
        break;
      case '\n':
        s += "\\n";
        break;
      case '\r':
        s += "\\r";
        break;
      case '\t':
        s += "\\t";
        break;
      case '\b':
        s += "\\b";
        break;
      case '\f':
        s += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
          s += buf;
        } else {
          s += c;
        }
    }
  }
  s += '"';
  return s;
}

}  // namespace labeldp
