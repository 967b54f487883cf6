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

/// The fields `"inputs":[...],"outputs":[...],"probabilities":[[...],...]` of a finite
/// mechanism, without surrounding braces, so commands can add their own fields (contract: the
/// JSON of `bins`, `optimal`, `unbiased`, read back by `audit`). Row i of `probabilities` is
/// the distribution of the output for input i.
inline std::string mechanism_json_fields(const FiniteMechanism<double>& m) {
  std::string s =
      "\"inputs\":" + json_array(m.inputs()) + ",\"outputs\":" + json_array(m.outputs()) + ",\"probabilities\":[";
  for (Index i = 0; i < m.num_inputs(); ++i) {
    if (i) s += ',';
    s += json_array(m.probabilities().row(i));
  }
  s += ']';
  return s;
}

}  // namespace labeldp::io
