/// \file
/// Mechanism files: the JSON every construction command prints (`bins`, `optimal`, `unbiased`,
/// `interval`, `baseline`; the labeldp CLI contract, "Mechanism files"), read back into an
/// AnyMechanism that applies it. Loading revalidates everything construction validates: the
/// format and version, every field's presence and type, unknown fields, and
/// - finite mechanisms: inputs and outputs finite and strictly increasing, probabilities
///   finite, >= 0, rows summing to 1 within 1e-9, and eps-DP for the file's own eps exactly as
///   stored (satisfies_epsilon()); for `unbiased`, the stated `max_bias` recomputed;
/// - RPWithPrior and the baselines: the mechanism is rebuilt from its defining parameters
///   (eps, delta, range, grid, ...) and every derived field of the file (scale, sigma, gamma,
///   grid step, ...) must equal the rebuilt one exactly, so an edited number is caught.
/// A file holds no generator state.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "labeldp/io/json_reader.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"

namespace labeldp::io {

namespace detail {

inline void check_header(const JsonValue& doc) {
  if (!doc.is_object()) doc.fail("a mechanism file is a JSON object");
  const JsonValue format = doc.at("format");
  if (format.as_string() != "labeldp-mechanism") format.fail("must be \"labeldp-mechanism\"");
  const JsonValue version = doc.at("version");
  if (version.as_integer() != 1) version.fail("must be 1 (the only version this library reads)");
}

inline Vector<double> read_vector(const JsonValue& v) {
  const std::vector<double> x = v.as_numbers();
  return Eigen::Map<const Vector<double>>(x.data(), Index(x.size()));
}

/// The finite kinds and the extra fields each may carry (informational; type-checked).
inline bool finite_kind(const std::string& kind) {
  return kind == "rr-on-bins" || kind == "optimal-lp" || kind == "unbiased" || kind == "rr" ||
         kind == "rr-with-prior" || kind == "finite";
}

inline AnyMechanism load_finite(const JsonValue& doc, const std::string& kind) {
  doc.require_only({"format",      "version",       "mechanism", "eps",           "delta", "inputs",
                    "outputs",     "probabilities", "loss",      "expected_loss", "bins",  "status",
                    "lower_bound", "gap",           "max_bias",  "sensitivity",   "lo",    "hi",
                    "clip",        "top_k"});
  for (const char* key : {"expected_loss", "lower_bound", "gap", "max_bias", "sensitivity", "lo", "hi"})
    (void)doc.optional_number(key);
  for (const char* key : {"loss", "status"}) (void)doc.optional_string(key);
  (void)doc.optional_boolean("clip");
  (void)doc.optional_integer("top_k");
  if (doc.contains("bins")) (void)doc.array("bins");
  const JsonValue eps_v = doc.at("eps");
  const double eps = eps_v.as_number();
  if (!(eps > 0)) eps_v.fail("must be > 0");
  if (const auto d = doc.find("delta"); d && d->as_number() != 0)
    d->fail("must be 0 (finite mechanisms are pure eps-DP)");
  const JsonValue in_v = doc.array("inputs"), out_v = doc.array("outputs"), p_v = doc.array("probabilities");
  const Vector<double> inputs = read_vector(in_v), outputs = read_vector(out_v);
  if (p_v.size() != std::size_t(inputs.size()))
    p_v.fail("must have one row per input (" + std::to_string(inputs.size()) + "), has " + std::to_string(p_v.size()));
  Matrix<double> P(inputs.size(), outputs.size());
  for (std::size_t i = 0; i < p_v.size(); ++i) {
    const JsonValue row = p_v.at(i);
    const std::vector<double> r = row.as_numbers();
    if (r.size() != std::size_t(outputs.size()))
      row.fail("must have one entry per output (" + std::to_string(outputs.size()) + "), has " +
               std::to_string(r.size()));
    for (std::size_t j = 0; j < r.size(); ++j) P(Index(i), Index(j)) = r[j];
  }
  std::optional<FiniteMechanism<double>> m;
  try {
    m.emplace(inputs, outputs, std::move(P));
  } catch (const std::invalid_argument& e) {
    p_v.fail(e.what());
  }
  if (kind == "unbiased" && doc.contains("max_bias")) {
    const JsonValue b = doc.at("max_bias");
    double worst = 0, scale = 1;
    for (Index i = 0; i < m->num_inputs(); ++i) {
      worst = std::max(worst, std::abs(m->conditional_mean(i) - inputs[i]));
      scale = std::max(scale, std::abs(inputs[i]));
    }
    if (!(std::abs(worst - b.as_number()) <= 1e-9 * scale))
      b.fail("is " + labeldp::detail::format_number(b.as_number()) + " but the probabilities' largest bias is " +
             labeldp::detail::format_number(worst));
  }
  // Informational fields are not written back, except RRWithPrior's k' (part of its definition).
  std::string extra;
  if (kind == "rr-with-prior" && doc.contains("top_k")) extra = "\"top_k\":" + std::to_string(doc.integer("top_k"));
  try {
    return AnyMechanism::from_finite(kind, eps, std::move(*m), std::move(extra));
  } catch (const std::invalid_argument& e) {
    p_v.fail(e.what());
  }
}

/// Every field of `rebuilt` (the JSON of the mechanism rebuilt from the file's parameters) must
/// be in the file with the same value; the file may add only `informational` fields.
inline void compare_rebuilt(const JsonValue& doc, const std::string& rebuilt_json,
                            std::initializer_list<std::string_view> informational) {
  const JsonValue rebuilt = parse_json(rebuilt_json, "<rebuilt>");
  for (const std::string& key : doc.keys()) {
    const bool known =
        rebuilt.contains(key) || std::find(informational.begin(), informational.end(), key) != informational.end();
    if (!known) doc.at(key).fail("unknown field for mechanism '" + doc.string("mechanism") + "'");
  }
  for (const std::string& key : rebuilt.keys()) {
    const JsonValue want = rebuilt.at(key);
    const JsonValue got = doc.at(key);  // missing -> "missing (required)"
    if (want.is_number()) {
      if (got.as_number() != want.as_number())
        got.fail("is " + labeldp::detail::format_number(got.as_number()) +
                 " but the mechanism rebuilt from the file's parameters has " +
                 labeldp::detail::format_number(want.as_number()));
    } else if (want.is_string()) {
      if (got.as_string() != want.as_string()) got.fail("must be \"" + want.as_string() + "\"");
    } else if (want.is_boolean()) {
      if (got.as_bool() != want.as_bool()) got.fail(want.as_bool() ? "must be true" : "must be false");
    }
  }
}

inline AnyMechanism load_rpwithprior(const JsonValue& doc) {
  const std::string outside = doc.string("outside");
  if (outside != "clamp" && outside != "uniform") doc.at("outside").fail("must be \"clamp\" or \"uniform\"");
  const std::int64_t bits = doc.integer("lattice_bits");
  if (bits < 1 || bits > 30) doc.at("lattice_bits").fail("must be in [1, 30]");
  const double eps = doc.number("eps"), zeta = doc.number("zeta"), a1 = doc.number("A1"), a2 = doc.number("A2"),
               g = doc.number("granularity");
  const OutsideRule rule = outside == "clamp" ? OutsideRule::Clamp : OutsideRule::Uniform;
  std::optional<RPWithPrior<double>> m;
  try {
    m.emplace(a1, a2, zeta, eps, g, rule, int(bits));
  } catch (const std::invalid_argument& e) {
    doc.fail(e.what());
  }
  compare_rebuilt(doc, m->to_json(), {"objective", "expected_mse"});
  return AnyMechanism("rpwithprior", std::move(*m));
}

inline AnyMechanism load_baseline(const JsonValue& doc, const std::string& kind) {
  BaselineSpec s;
  s.kind = kind;
  s.eps = doc.number("eps");
  s.delta = doc.number("delta");
  s.lo = doc.number("lo");
  s.hi = doc.number("hi");
  s.clip = doc.boolean("clip");
  s.resolution = doc.optional_number("resolution");
  if (kind == "gaussian" || kind == "discrete-gaussian") {
    // "noise": "table" (the audited table); absent in files written before it: the exact sampler
    // those files describe, whose realized_delta they state.
    if (doc.contains("noise") && doc.string("noise") != "table") doc.at("noise").fail("must be \"table\" or absent");
    s.gaussian_noise = doc.contains("noise") ? GaussianNoise::table : GaussianNoise::exact;
  }
  AnyMechanism m = [&] {
    try {
      return make_baseline(s);
    } catch (const std::invalid_argument& e) {
      doc.fail(e.what());
    }
  }();
  compare_rebuilt(doc, m.to_json(), {"expected_loss"});
  return m;
}

}  // namespace detail

/// The mechanism of a parsed mechanism file (see load_mechanism()).
inline AnyMechanism load_mechanism(const JsonValue& doc) {
  detail::check_header(doc);
  const std::string kind = doc.string("mechanism");
  if (detail::finite_kind(kind)) return detail::load_finite(doc, kind);
  if (kind == "rpwithprior") return detail::load_rpwithprior(doc);
  if (std::find(baseline_kinds().begin(), baseline_kinds().end(), kind) != baseline_kinds().end())
    return detail::load_baseline(doc, kind);
  doc.at("mechanism").fail("unknown mechanism '" + kind + "'");
}

/// Reads a mechanism file's text (`source` names it in errors).
/// \throws std::invalid_argument with one line naming the source, line:column, the field and
///         the rule (JSON syntax, missing/duplicated/unknown field, wrong type or version, values
///         that construction rejects, probabilities not eps-DP exactly, tampered derived fields).
inline AnyMechanism load_mechanism(std::string_view text, std::string_view source) {
  return load_mechanism(parse_json(text, source));
}

/// load_mechanism() of a file (or FIFO, read once).
/// \throws std::invalid_argument naming the path when it cannot be read, else as load_mechanism().
inline AnyMechanism read_mechanism_file(const std::string& path) { return load_mechanism(read_json_file(path)); }

}  // namespace labeldp::io
