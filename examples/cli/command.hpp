// Subcommand registry of the labeldp program. Each cmd_*.cpp defines one subcommand and
// registers it with a static CommandRegistration, so commands are added without touching main.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "labeldp/core/loss.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/atomic_file.hpp"
#include "labeldp/io/csv.hpp"

namespace labeldp::cli {

/// Bad input found by a command: printed as "labeldp: error: <message>", exit status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A subcommand: its name, one-line description, and a function that adds its options to the
/// CLI11 subcommand and sets its callback.
struct Command {
  std::string name;
  std::string description;
  std::function<void(CLI::App&)> configure;
};

inline std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

struct CommandRegistration {
  explicit CommandRegistration(Command c) { command_registry().push_back(std::move(c)); }
};

/// Throws InputError unless `name` is a loss the program knows (the `--loss` values).
inline void validate_loss_name(const std::string& name) {
  if (name != "squared" && name != "absolute" && name != "poisson")
    throw InputError("'--loss' must be squared, absolute or poisson, got '" + name + "'");
}

/// Calls `f` with the loss object named by `name` (see validate_loss_name()) and returns its result.
template <typename F>
decltype(auto) with_loss(const std::string& name, F&& f) {
  validate_loss_name(name);
  if (name == "squared") return f(SquaredLoss<double>{});
  if (name == "absolute") return f(AbsoluteLoss<double>{});
  return f(PoissonLogLoss<double>{});
}

/// The `--prior FILE` option shared by the commands that take a finite prior.
inline void add_prior_option(CLI::App& app, std::string& path) {
  app.add_option("--prior", path, "CSV with header value,prob or value,count; one row per distinct value, any order")
      ->required();
}

/// The `--eps E` option shared by the mechanism commands (validated when the command runs).
inline void add_eps_option(CLI::App& app, double& eps) {
  app.add_option("--eps", eps, "privacy budget eps, finite and > 0")->required();
}

/// The `--time-limit SECONDS` option of the LP commands (default: none). When it is reached the
/// command prints the best feasible mechanism found so far with `"status":"time-limit"`, its
/// certified `lower_bound` and relative `gap`, and says so on stderr.
inline void add_time_limit_option(CLI::App& app, double& seconds) {
  app.add_option("--time-limit", seconds,
                 "stop after this many seconds with the best mechanism found so far and its certified gap "
                 "(default: no limit)");
}

/// Validates `--time-limit`: a number >= 0 (infinity = no limit).
inline void validate_time_limit(double seconds) {
  if (std::isnan(seconds) || seconds < 0)
    throw InputError("--time-limit must be a number of seconds >= 0, got " + labeldp::detail::format_number(seconds));
}

/// Parses the value of option `flag` as a finite number.
/// \throws InputError "'--lo' must be a finite number, got 'abc'".
inline double parse_flag_number(const std::string& flag, const std::string& text) {
  const auto v = labeldp::io::parse_double(text);
  if (!v || !std::isfinite(*v)) throw InputError("'" + flag + "' must be a finite number, got '" + text + "'");
  return *v;
}

/// Parses the value of option `flag` as a finite number > 0.
/// \throws InputError "'--eps' must be a finite number > 0, got '0'" (or as parse_flag_number()).
inline double parse_flag_positive(const std::string& flag, const std::string& text) {
  const double v = parse_flag_number(flag, text);
  if (!(v > 0)) throw InputError("'" + flag + "' must be a finite number > 0, got '" + text + "'");
  return v;
}

/// Parses `--seed S`: an integer in [0, 2^64).
inline std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (text.empty() || ec != std::errc{} || ptr != last)
    throw InputError("'--seed' must be an integer in [0, 2^64), got '" + text + "'");
  return v;
}

/// Reads a public support file: CSV with header `value`, one finite value per row, no duplicates
/// (named with both lines; found by sorting, O(k log k)). Values are returned in file order.
inline std::vector<double> read_support(const std::string& path) {
  std::vector<std::pair<double, std::size_t>> rows;
  labeldp::io::for_each_column_value(path, "value", [&](double v, std::size_t line) { rows.emplace_back(v, line); });
  if (rows.empty()) throw InputError(path + ":2: no support values after the header 'value'");
  std::vector<std::pair<double, std::size_t>> sorted = rows;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i].first == sorted[i - 1].first)
      throw InputError(path + ":" + std::to_string(sorted[i].second) + ": duplicate value " +
                       labeldp::detail::format_number(sorted[i].first) + " (also on line " +
                       std::to_string(sorted[i - 1].second) + ")");
  std::vector<double> values;
  values.reserve(rows.size());
  for (const auto& r : rows) values.push_back(r.first);
  return values;
}

/// Rethrows a CSV reader error on a row of a private labels file without the quoted text the
/// reader puts in some messages ("stray quote in unquoted field '...'", "label 'abc' is not a
/// number"): the message is cut at its first quote, keeping the "file:line: rule" part. The
/// contract never lets a sensitive label reach an error line.
[[noreturn]] inline void rethrow_without_values(const std::invalid_argument& e) {
  std::string m = e.what();
  const auto quote = m.find('\'');
  if (quote != std::string::npos) {
    m.erase(quote);
    while (!m.empty() && (m.back() == ' ' || m.back() == ':' || m.back() == '(')) m.pop_back();
    m += " (the value is not shown: the labels file is private)";
  }
  throw InputError(m);
}

}  // namespace labeldp::cli
