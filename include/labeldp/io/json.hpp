/// \file
/// JSON output of finite mechanisms and optimal-LP answers (the writing primitives are in
/// core/json_writer.hpp).
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
#include "labeldp/mechanisms/optimal_lp_result.hpp"

namespace labeldp::io {

using labeldp::json_array;
using labeldp::json_number;
using labeldp::json_string;

/// The finite mechanism's `"inputs"`, `"outputs"` and `"probabilities"` fields (core json_fields()).
inline std::string mechanism_json_fields(const FiniteMechanism<double>& m) { return json_fields(m); }

/// The mechanism file of an optimal-LP answer (the `optimal --json` output): status,
/// expected loss, the certified lower bound and gap when finite, and the mechanism.
/// \param r the answer of optimal_mechanism_lp().
/// \param eps the privacy level it was solved for.
/// \param loss the loss's name ("squared", "absolute", "poisson").
inline std::string optimal_lp_json(const OptimalLPResult<double>& r, double eps, const std::string& loss) {
  std::string s =
      "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"optimal-lp\",\"eps\":" + json_number(eps) +
      ",\"loss\":" + json_string(loss) + ",\"status\":\"" + to_string(r.status) +
      "\",\"expected_loss\":" + json_number(double(r.expected_loss));
  if (std::isfinite(r.dual_bound)) s += ",\"lower_bound\":" + json_number(r.dual_bound);
  if (const double gap = r.certified_gap(); std::isfinite(gap)) s += ",\"gap\":" + json_number(gap);
  return s + "," + mechanism_json_fields(r.mechanism) + "}";
}

}  // namespace labeldp::io
