// Subcommand registry of the labeldp program. Each cmd_*.cpp defines one subcommand and
// registers it with a static CommandRegistration, so commands are added without touching main.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

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

}  // namespace labeldp::cli
