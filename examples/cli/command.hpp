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

/// Largest label magnitude the squared-loss commands accept (1e150): beyond, a squared
/// difference of two labels overflows a double (contract, "Common rules", limits).
inline constexpr double kMaxSquaredLossMagnitude = 1e150;

/// The most prior values `bins` and `privatize --method bins` accept (2^16): the RR-on-Bins
/// solve takes time quadratic in the count (100,000 values: 5 s; 1,000,000: over a minute).
inline constexpr labeldp::Index kMaxBinsValues = 65536;

/// The most values k-ary randomized response (`--kind rr`, `--method rr`) takes (2^11): its
/// table is k x k (1,000 values: 1 s; 4,000: 18 s and 640 MB; 10,000 ran out of 2 GB).
inline constexpr labeldp::Index kMaxRRValues = 2048;

/// The most values RRWithPrior (`rr-with-prior`) takes (2^18): 10^6 took 9 s and 410 MB, 10^7
/// ran out of 2 GB.
inline constexpr labeldp::Index kMaxRRWithPriorValues = labeldp::Index(1) << 18;

/// Refuses a support of `k` values beyond the limit of the finite baseline `kind` (rr,
/// rr-with-prior); `what` names it in the message ("'--kind rr'").
inline void check_finite_baseline_size(const std::string& kind, labeldp::Index k, const std::string& what) {
  const labeldp::Index limit = kind == "rr" ? kMaxRRValues : kind == "rr-with-prior" ? kMaxRRWithPriorValues : k;
  if (k > limit)
    throw InputError(what + " takes at most " + std::to_string(limit) + " values (" +
                     (kind == "rr" ? "its table is k x k" : "its time and memory grow with them") + "), got " +
                     std::to_string(k));
}

/// Reads the prior file `path` once (a FIFO works), refusing on their line the values the loss
/// named `loss` cannot take: negative ones for poisson, beyond kMaxSquaredLossMagnitude for
/// squared.
inline labeldp::FinitePrior<double> read_prior_for_loss(const std::string& path, const std::string& loss) {
  labeldp::io::CsvReader reader(path);
  return labeldp::io::read_prior_csv(reader, [&](double v, const labeldp::io::CsvReader& r) {
    if (loss == "poisson" && v < 0)
      r.fail("value " + labeldp::detail::format_number(v) + " is negative: Poisson log loss needs labels >= 0");
    if (loss == "squared" && std::abs(v) > kMaxSquaredLossMagnitude)
      r.fail("value " + labeldp::detail::format_number(v) +
             " is beyond 1e150 in magnitude (the limit with squared loss: its square would overflow); rescale the "
             "labels");
  });
}

/// Throws InputError "<what> is not finite (overflow): <hint>" unless `v` is finite: a result
/// that overflowed is refused with a reason, never printed or passed to the JSON writer.
inline void require_finite_result(double v, const std::string& what) {
  if (!std::isfinite(v))
    throw InputError(what + " overflows (" + labeldp::detail::format_number(v) +
                     "): the labels are too large in magnitude for this eps; rescale them");
}

/// Parses a count option such as `--grid N`: an integer, also written in exponent form
/// ("1e6"), at least `min`. Values beyond 2^53 are refused here; the callee names its own limit.
inline long long parse_count(const std::string& flag, const std::string& text, long long min) {
  const auto v = labeldp::io::parse_double(text);
  if (!v || !std::isfinite(*v) || *v != std::floor(*v))
    throw InputError("'" + flag + "' must be an integer, got '" + text + "'");
  if (*v < double(min))
    throw InputError("'" + flag + "' must be at least " + std::to_string(min) + ", got '" + text + "'");
  if (*v > 9007199254740992.0) throw InputError("'" + flag + "' " + text + " is beyond any limit (at most 2^53)");
  return static_cast<long long>(*v);
}

/// Reads a public support file: CSV with header `value`, one finite value per row, no duplicates
/// (named with both lines; found by sorting, O(k log k)), at most io::kMaxCsvRows values. Values are returned in file
/// order.
inline std::vector<double> read_support(const std::string& path) {
  std::vector<std::pair<double, std::size_t>> rows;
  labeldp::io::for_each_column_value(path, "value", [&](double v, std::size_t line) {
    if (rows.size() >= labeldp::io::kMaxCsvRows)
      throw InputError(path + ":" + std::to_string(line) + ": more than " + std::to_string(labeldp::io::kMaxCsvRows) +
                       " support values (the reader's limit)");
    rows.emplace_back(v, line);
  });
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
