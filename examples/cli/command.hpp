// Subcommand registry of the labeldp program. Each cmd_*.cpp defines one subcommand and
// registers it with a static CommandRegistration, so commands are added without touching main.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/loss.hpp"
#include "labeldp/core/validate.hpp"

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

}  // namespace labeldp::cli
