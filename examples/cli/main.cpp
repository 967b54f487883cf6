// labeldp: command-line front end of the library (the labeldp CLI contract).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>

#include "command.hpp"
#include "labeldp/version.hpp"

namespace {

// One error line: newlines and other control bytes in echoed values (a file name, a field)
// escaped as \n, \r, \t or \xHH, so an error is always exactly one line of plain text.
std::string one_line(std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace labeldp::cli;
  // An interrupted run leaves no temporary output file behind (contract, "Common rules").
  labeldp::io::remove_temporaries_on_signals();
  CLI::App app{"labeldp: label differential privacy mechanisms for regression", "labeldp"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "labeldp " LABELDP_VERSION_STRING, "Print \"labeldp VERSION\" and exit");
  auto commands = command_registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  for (auto& c : commands) c.configure(*app.add_subcommand(c.name, c.description));
  // An unknown command is an error even when help is asked for after it ("labeldp nosuch --help").
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const Command& c) { return c.name == argv[1]; })) {
    std::string known;
    for (const auto& c : commands) known += (known.empty() ? "" : ", ") + c.name;
    std::cerr << "labeldp: error: unknown command '" << one_line(argv[1]) << "' (commands: " << known << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "labeldp: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "labeldp: error: out of memory (the input is beyond what this machine can hold)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "labeldp: error: " << one_line(e.what()) << "\n";
    return 2;
  }
  // A failed write to standard output (disk full, I/O error) is an error, never a silent success
  // (contract, "Common rules", writing): every command's output is flushed and checked here.
  errno = 0;
  std::cout.flush();
  const bool stream_failed = !std::cout;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || stream_failed) {
    const int err = errno;
    std::cerr << "labeldp: error: <stdout>: write error" << (err ? std::string(": ") + std::strerror(err) : "") << "\n";
    return 2;
  }
  return 0;
}
