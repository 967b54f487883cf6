// `labeldp audit --mechanism FILE [--eps E] [--json]`: the exact privacy level of a finite
// mechanism read from JSON (as printed by `bins`, `optimal` or `unbiased`): max over outputs o and
// input pairs (y, y') of ln(P[y -> o] / P[y' -> o]) (the labeldp CLI contract), rounded up, so the
// printed value is never below the true level (audit_epsilon()). Against a budget (--eps E, or
// the file's own "eps") it also says whether the mechanism is E-DP, decided exactly on the stored
// numbers (find_epsilon_violation(): no logarithm involved). A mechanism file (with "format") of
// any kind is first loaded and revalidated by io::load_mechanism().
//
// The file is read by the library's one JSON reader (io::parse_json(): duplicate keys, trailing
// data and non-finite numbers are errors naming line and column).
//
// JSON has no infinity. A mechanism in which some output has probability 0 for one input and
// > 0 for another is not eps-DP for any finite eps; audit then prints {"epsilon":"inf"} (a JSON
// string, which e.g. Python's float() reads as infinity) and exits 0: it is a valid answer about
// a valid mechanism, not bad input.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "command.hpp"
#include "labeldp/core/audit.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/io/json_reader.hpp"
#include "labeldp/io/mechanism_file.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_audit {
namespace {

using labeldp::Index;
using labeldp::io::JsonValue;

// "file:line: " of a value (the contract names file and line).
std::string where(const JsonValue& v) { return v.source() + ":" + std::to_string(v.line()) + ": "; }

// The value as written, for error messages: a number in shortest round-trip form, a string quoted.
std::string shown(const JsonValue& v) {
  if (v.is_number()) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, v.as_number()).ptr;  // shortest round trip
    return std::string(buf, end);
  }
  if (v.is_string()) return labeldp::io::json_string(v.as_string());
  return labeldp::io::detail::json_kind_name(v.kind());
}

// The "probabilities" matrix of `doc`: non-empty rows of equal length, entries finite numbers >= 0,
// each row summing to 1 within 1e-9; "inputs"/"outputs", when present, of matching sizes.
labeldp::Matrix<double> read_probabilities(const JsonValue& doc) {
  const std::string path = doc.source();
  if (!doc.contains("probabilities"))
    throw labeldp::cli::InputError(where(doc) + "no \"probabilities\" field (expected a mechanism as printed by bins)");
  const JsonValue probs = doc.at("probabilities");
  if (!probs.is_array() || probs.size() == 0)
    throw labeldp::cli::InputError(where(probs) + "\"probabilities\" must be a non-empty array of rows");
  const std::size_t k = probs.size();
  if (doc.contains("inputs") && (!doc.at("inputs").is_array() || doc.at("inputs").size() != k))
    throw labeldp::cli::InputError(where(doc.at("inputs")) + "\"inputs\" has " +
                                   std::to_string(doc.at("inputs").is_array() ? doc.at("inputs").size() : 0) +
                                   " values but \"probabilities\" has " + std::to_string(k) + " rows");
  std::size_t d = 0;
  for (std::size_t r = 0; r < k; ++r) {
    const JsonValue row = probs.at(r);
    if (!row.is_array() || row.size() == 0)
      throw labeldp::cli::InputError(where(row) + "probabilities row " + std::to_string(r) +
                                     " is not a non-empty array of numbers");
    if (r == 0) d = row.size();
    if (row.size() != d)
      throw labeldp::cli::InputError(where(row) + "probabilities row " + std::to_string(r) + " has " +
                                     std::to_string(row.size()) + " entries, row 0 has " + std::to_string(d));
  }
  if (doc.contains("outputs") && (!doc.at("outputs").is_array() || doc.at("outputs").size() != d))
    throw labeldp::cli::InputError(where(doc.at("outputs")) + "\"outputs\" has " +
                                   std::to_string(doc.at("outputs").is_array() ? doc.at("outputs").size() : 0) +
                                   " values but the probability rows have " + std::to_string(d) + " entries");
  labeldp::Matrix<double> p(static_cast<Index>(k), static_cast<Index>(d));
  for (std::size_t r = 0; r < k; ++r) {
    const JsonValue row = probs.at(r);
    double sum = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const JsonValue v = row.at(c);
      const std::string at = " at row " + std::to_string(r) + ", column " + std::to_string(c);
      if (!v.is_number())
        throw labeldp::cli::InputError(where(v) + "probability " + shown(v) + at + " is not a number");
      const double x = v.as_number();  // the reader accepts finite numbers only
      if (x < 0) throw labeldp::cli::InputError(where(v) + "probability " + shown(v) + at + " is negative");
      p(Index(r), Index(c)) = x;
      sum += x;
    }
    if (std::abs(sum - 1) > 1e-9)
      throw labeldp::cli::InputError(where(row) + "probabilities row " + std::to_string(r) + " sums to " +
                                     labeldp::detail::format_number(sum) + ", not 1 (tolerance 1e-9)");
  }
  return p;
}

void run_audit(const std::string& path, const std::string& eps_text, bool json) {
  std::optional<double> budget;
  if (!eps_text.empty()) budget = labeldp::cli::parse_flag_positive("--eps", eps_text);
  const JsonValue doc = [&] {
    try {
      return labeldp::io::read_json_file(path);
    } catch (const std::invalid_argument& e) {
      throw labeldp::cli::InputError(e.what());
    }
  }();
  if (!doc.is_object()) throw labeldp::cli::InputError(where(doc) + "expected a JSON object with \"probabilities\"");
  // A mechanism file (with "format"): loaded and revalidated as a whole, including the exact
  // check of its probabilities against its own eps. A mechanism without finitely many outputs
  // (the additive baselines, RPWithPrior) has the guarantee its rebuilt parameters prove.
  if (doc.contains("format")) {
    try {
      const labeldp::AnyMechanism m = labeldp::io::load_mechanism(doc);
      if (!m.finite()) {
        std::string line = "{\"epsilon\":" + labeldp::io::json_number(m.eps()) +
                           ",\"delta\":" + labeldp::io::json_number(m.delta()) +
                           ",\"mechanism\":" + labeldp::io::json_string(m.kind());
        if (budget)
          line += ",\"eps\":" + labeldp::io::json_number(*budget) +
                  ",\"within_eps\":" + (m.eps() <= *budget ? "true" : "false");
        std::cout << (json ? line + "}" : labeldp::io::json_number(m.eps())) << "\n";
        return;
      }
    } catch (const std::invalid_argument& e) {
      throw labeldp::cli::InputError(e.what());
    }
  }
  const labeldp::Matrix<double> p = read_probabilities(doc);
  if (!budget && doc.contains("eps") && doc.at("eps").is_number() && doc.at("eps").as_number() > 0)
    budget = doc.at("eps").as_number();
  // An upper bound; when the matrix is exactly within the budget, so is min(bound, budget).
  const bool within = budget && labeldp::satisfies_epsilon(p, *budget);
  const double eps = within ? std::min(labeldp::audit_epsilon(p), *budget) : labeldp::audit_epsilon(p);
  const std::string value = std::isfinite(eps) ? labeldp::io::json_number(eps) : std::string("\"inf\"");
  if (!json) {
    std::cout << (std::isfinite(eps) ? value : std::string("inf")) << "\n";
    return;
  }
  std::string line = "{\"epsilon\":" + value;
  if (budget)
    line += ",\"eps\":" + labeldp::io::json_number(*budget) + ",\"within_eps\":" + (within ? "true" : "false");
  std::cout << line << "}\n";
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "audit", "Exact privacy level of a finite mechanism given as JSON (inputs, outputs, probabilities)",
    [](CLI::App& app) {
      auto path = std::make_shared<std::string>();
      auto eps = std::make_shared<std::string>();
      auto json = std::make_shared<bool>(false);
      app.add_option("--mechanism", *path,
                     "JSON file with \"probabilities\" (rows = inputs, summing to 1 within 1e-9, entries >= 0), "
                     "as printed by bins/optimal/unbiased, or any mechanism file")
          ->required();
      app.add_option("--eps", *eps,
                     "budget to check against (default: the file's \"eps\", if any): adds \"eps\" and "
                     "\"within_eps\" (true when every ratio P[y->o]/P[y'->o] <= e^eps, decided exactly on the "
                     "stored numbers) to the --json output");
      app.add_flag("--json", *json,
                   "print {\"epsilon\": max over outputs and input pairs of ln(P[y->o]/P[y'->o]), rounded up}, "
                   "17 digits; \"inf\" (a string) when some output is impossible for one input only");
      app.footer(
          "Without --json, prints the number alone. The printed epsilon is an upper bound within a few units "
          "in the last place of the exact level; within_eps is exact. A mechanism that is not eps-DP for any "
          "finite eps (an output with probability 0 for some inputs and > 0 for others) gives \"inf\" and exit "
          "status 0.");
      app.callback([path, eps, json] { run_audit(*path, *eps, *json); });
    }}};

}  // namespace
}  // namespace cmd_audit
