// labeldp: command-line front end of the library (the labeldp CLI contract).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>

#include "command.hpp"

int main(int argc, char** argv) {
  using namespace labeldp::cli;
  // An interrupted run leaves no temporary output file behind (contract, "Common rules").
  labeldp::io::remove_temporaries_on_signals();
  CLI::App app{"labeldp: label differential privacy mechanisms for regression", "labeldp"};
  app.require_subcommand(1);
  auto commands = command_registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  for (auto& c : commands) c.configure(*app.add_subcommand(c.name, c.description));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "labeldp: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "labeldp: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
