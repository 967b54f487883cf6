// `labeldp audit --mechanism FILE [--json]`: the exact privacy level of a finite mechanism read
// from JSON (as printed by `bins`, `optimal` or `unbiased`): max over outputs o and input pairs
// (y, y') of ln(P[y -> o] / P[y' -> o]) (the labeldp CLI contract). A mechanism file (with
// "format") of any kind is first loaded and revalidated by io::load_mechanism().
//
// JSON has no infinity. A mechanism in which some output has probability 0 for one input and
// > 0 for another is not eps-DP for any finite eps; audit then prints {"epsilon":"inf"} (a JSON
// string, which e.g. Python's float() reads as infinity) and exits 0: it is a valid answer about
// a valid mechanism, not bad input.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "labeldp/core/audit.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/io/mechanism_file.hpp"

namespace {

using labeldp::Index;

// Source positions of the entries of the top-level "probabilities" array: nlohmann/json does not
// report where a value came from, so a small string-aware scan finds the line of each entry for
// error messages. Positions are byte offsets; rows[r][c] is entry (r, c).
struct EntryPositions {
  std::vector<std::vector<std::size_t>> rows;
  std::vector<std::size_t> row_starts;
};

EntryPositions scan_probability_positions(const std::string& text) {
  EntryPositions pos;
  int depth = 0;
  bool in_target = false;     // inside the "probabilities" array
  bool expect_array = false;  // just read the key "probabilities" and its ':'
  bool expect_entry = false;  // inside a row, after '[' or ','
  std::string last_key;
  auto mark_entry = [&](std::size_t i) {
    if (in_target && depth == 3 && expect_entry) {
      pos.rows.back().push_back(i);
      expect_entry = false;
    }
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '"') {
      mark_entry(i);
      std::string s;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else
          s += text[i];
      }
      if (depth == 1) last_key = s;
      continue;
    }
    switch (c) {
      case ':':
        expect_array = depth == 1 && last_key == "probabilities";
        break;
      case '[':
        mark_entry(i);
        ++depth;
        if (expect_array && depth == 2) in_target = true;
        expect_array = false;
        if (in_target && depth == 3) {
          pos.row_starts.push_back(i);
          pos.rows.emplace_back();
          expect_entry = true;
        }
        break;
      case ']':
        if (in_target && depth == 2) return pos;
        --depth;
        break;
      case '{':
        mark_entry(i);
        ++depth;
        expect_array = false;
        break;
      case '}':
        --depth;
        break;
      case ',':
        if (in_target && depth == 3) expect_entry = true;
        break;
      default:
        mark_entry(i);
    }
  }
  return pos;
}

std::size_t line_of(const std::string& text, std::size_t offset) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') ++line;
  return line;
}

void run_audit(const std::string& path, bool json) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw labeldp::cli::InputError(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based; the library's message already says what was read.
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    const auto colon = what.find("] ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw labeldp::cli::InputError(path + ":" + std::to_string(line_of(text, at)) + ": invalid JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // E.g. "number overflow parsing '1e400'": no offset is reported, so locate the quoted token.
    std::string what = e.what();
    const auto colon = what.find("] ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    std::size_t line = 1;
    const auto q1 = what.find('\''), q2 = what.rfind('\'');
    if (q1 != std::string::npos && q2 > q1) {
      const auto at = text.find(what.substr(q1 + 1, q2 - q1 - 1));
      if (at != std::string::npos) line = line_of(text, at);
    }
    throw labeldp::cli::InputError(path + ":" + std::to_string(line) + ": invalid JSON: " + what);
  }
  const EntryPositions positions = scan_probability_positions(text);
  auto where = [&](std::size_t r, std::size_t c) {
    std::size_t off = 0;
    if (r < positions.rows.size()) {
      off = positions.row_starts[r];
      if (c < positions.rows[r].size()) off = positions.rows[r][c];
    }
    return path + ":" + std::to_string(line_of(text, off)) + ": ";
  };
  // The entry as written in the file (so "-0.1" is quoted as -0.1, not as its 17-digit double).
  auto token = [&](std::size_t r, std::size_t c, const nlohmann::json& v) {
    if (r < positions.rows.size() && c < positions.rows[r].size()) {
      const std::size_t b = positions.rows[r][c];
      const std::size_t e = text.find_first_of(",]} \t\r\n", b);
      return text.substr(b, e == std::string::npos ? std::string::npos : e - b);
    }
    return v.dump();
  };
  if (!doc.is_object()) throw labeldp::cli::InputError(path + ":1: expected a JSON object with \"probabilities\"");
  // A mechanism file (with "format"): loaded and revalidated as a whole, including the exact
  // check of its probabilities against its own eps. A mechanism without finitely many outputs
  // (the additive baselines, RPWithPrior) has the guarantee its rebuilt parameters prove.
  if (doc.contains("format")) {
    try {
      const labeldp::AnyMechanism m = labeldp::io::load_mechanism(text, path);
      if (!m.finite()) {
        const std::string line = "{\"epsilon\":" + labeldp::io::json_number(m.eps()) +
                                 ",\"delta\":" + labeldp::io::json_number(m.delta()) +
                                 ",\"mechanism\":" + labeldp::io::json_string(m.kind()) + "}";
        std::cout << (json ? line : labeldp::io::json_number(m.eps())) << "\n";
        return;
      }
    } catch (const std::invalid_argument& e) {
      throw labeldp::cli::InputError(e.what());
    }
  }
  if (!doc.contains("probabilities"))
    throw labeldp::cli::InputError(path + ":1: no \"probabilities\" field (expected a mechanism as printed by bins)");
  const auto& probs = doc["probabilities"];
  if (!probs.is_array() || probs.empty())
    throw labeldp::cli::InputError(path + ":1: \"probabilities\" must be a non-empty array of rows");
  const std::size_t k = probs.size();
  std::size_t d = 0;
  if (doc.contains("inputs") && (!doc["inputs"].is_array() || doc["inputs"].size() != k))
    throw labeldp::cli::InputError(path + ":1: \"inputs\" has " +
                                   std::to_string(doc["inputs"].is_array() ? doc["inputs"].size() : 0) +
                                   " values but \"probabilities\" has " + std::to_string(k) + " rows");
  for (std::size_t r = 0; r < k; ++r) {
    if (!probs[r].is_array() || probs[r].empty())
      throw labeldp::cli::InputError(where(r, 0) + "probabilities row " + std::to_string(r) +
                                     " is not a non-empty array of numbers");
    if (r == 0) d = probs[r].size();
    if (probs[r].size() != d)
      throw labeldp::cli::InputError(where(r, 0) + "probabilities row " + std::to_string(r) + " has " +
                                     std::to_string(probs[r].size()) + " entries, row 0 has " + std::to_string(d));
  }
  if (doc.contains("outputs") && (!doc["outputs"].is_array() || doc["outputs"].size() != d))
    throw labeldp::cli::InputError(path + ":1: \"outputs\" has " +
                                   std::to_string(doc["outputs"].is_array() ? doc["outputs"].size() : 0) +
                                   " values but the probability rows have " + std::to_string(d) + " entries");
  labeldp::Matrix<double> p(static_cast<Index>(k), static_cast<Index>(d));
  for (std::size_t r = 0; r < k; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const auto& v = probs[r][c];
      if (!v.is_number())
        throw labeldp::cli::InputError(where(r, c) + "probability " + token(r, c, v) + " at row " + std::to_string(r) +
                                       ", column " + std::to_string(c) + " is not a number");
      const double x = v.get<double>();
      if (!std::isfinite(x))
        throw labeldp::cli::InputError(where(r, c) + "probability " + token(r, c, v) + " at row " + std::to_string(r) +
                                       ", column " + std::to_string(c) + " is not finite");
      if (x < 0)
        throw labeldp::cli::InputError(where(r, c) + "probability " + token(r, c, v) + " at row " + std::to_string(r) +
                                       ", column " + std::to_string(c) + " is negative");
      p(Index(r), Index(c)) = x;
      sum += x;
    }
    if (std::abs(sum - 1) > 1e-9)
      throw labeldp::cli::InputError(where(r, 0) + "probabilities row " + std::to_string(r) + " sums to " +
                                     labeldp::detail::format_number(sum) + ", not 1 (tolerance 1e-9)");
  }
  const double eps = labeldp::audit_epsilon(p);
  const std::string value = std::isfinite(eps) ? labeldp::io::json_number(eps) : std::string("\"inf\"");
  if (json)
    std::cout << "{\"epsilon\":" << value << "}\n";
  else
    std::cout << (std::isfinite(eps) ? value : std::string("inf")) << "\n";
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "audit", "Exact privacy level of a finite mechanism given as JSON (inputs, outputs, probabilities)",
    [](CLI::App& app) {
      auto path = std::make_shared<std::string>();
      auto json = std::make_shared<bool>(false);
      app.add_option("--mechanism", *path,
                     "JSON file with \"probabilities\" (rows = inputs, summing to 1 within 1e-9, entries >= 0), "
                     "as printed by bins/optimal/unbiased")
          ->required();
      app.add_flag("--json", *json,
                   "print {\"epsilon\": max over outputs and input pairs of ln(P[y->o]/P[y'->o])}, 17 digits; "
                   "\"inf\" (a string) when some output is impossible for one input only");
      app.footer(
          "Without --json, prints the number alone. A mechanism that is not eps-DP for any finite eps (an output "
          "with probability 0 for some inputs and > 0 for others) gives \"inf\" and exit status 0.");
      app.callback([path, json] { run_audit(*path, *json); });
    }}};

}  // namespace
