/// \file
/// JSON output of finite mechanisms (the writing primitives are in core/json_writer.hpp).
#pragma once

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp::io {

using labeldp::json_array;
using labeldp::json_number;
using labeldp::json_string;

/// The finite mechanism's `"inputs"`, `"outputs"` and `"probabilities"` fields (core json_fields()).
inline std::string mechanism_json_fields(const FiniteMechanism<double>& m) { return json_fields(m); }

}  // namespace labeldp::io
