// The shared harness of the CLI tests (tests/cli/test_cli*.cpp): runs the labeldp program as a
// separate process in a scratch directory and checks the CLI contract's rule for bad input. The
// program is looked up next to the test executable (all binaries go to build/bin/); when it was
// not built, REQUIRE_CLI() warns and returns from the test case. The scratch directory is unique
// per test program and process and is removed when the program exits. Include it once per test
// program (it defines a global cleanup object).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace labeldp::test::cli {

// The test executable, read from /proc/self/exe.
inline std::filesystem::path self_exe() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec);
}

inline std::filesystem::path cli_path() { return self_exe().parent_path() / "labeldp"; }

inline bool have_cli() { return std::filesystem::exists(cli_path()); }

#define REQUIRE_CLI()                                                                                \
  do {                                                                                               \
    if (!::labeldp::test::cli::have_cli()) {                                                         \
      WARN("labeldp program not found at " << ::labeldp::test::cli::cli_path().string()              \
                                           << ": CLI tests skipped (build the labeldp_cli target)"); \
      return;                                                                                        \
    }                                                                                                \
  } while (0)

// "labeldp_test_<executable's file name>_<pid>" in the temporary directory (not created here).
inline std::filesystem::path scratch_location() {
  return std::filesystem::temp_directory_path() /
         ("labeldp_test_" + self_exe().filename().string() + "_" + std::to_string(::getpid()));
}

// The scratch directory, created on first use.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path d = scratch_location();
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Removes the scratch directory at exit (recomputes the path: scratch()'s static may be gone).
struct Cleanup {
  ~Cleanup() {
    std::error_code ec;
    std::filesystem::remove_all(scratch_location(), ec);
  }
};
inline Cleanup cleanup;

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Writes `text` to scratch()/name and returns its path.
inline std::string write(const std::string& name, const std::string& text) {
  const std::filesystem::path p = scratch() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

struct Run {
  int status = -1;
  std::string out, err;
};

// Runs `labeldp <args>` with `input` on standard input (in the scratch directory).
inline Run run(const std::string& args, const std::string& input = "") {
  const std::filesystem::path in = scratch() / "stdin.txt", out = scratch() / "stdout.txt",
                              err = scratch() / "stderr.txt";
  std::ofstream(in, std::ios::binary) << input;
  const std::string cmd = "cd '" + scratch().string() + "' && '" + cli_path().string() + "' " + args + " < '" +
                          in.string() + "' > '" + out.string() + "' 2> '" + err.string() + "'";
  const int raw = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// The contract's rule for bad input: exit 2, nothing on stdout, one stderr line.
inline void require_bad_input(const Run& r, const std::string& expected_fragment) {
  INFO("stderr: " << r.err << "stdout: " << r.out);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Matchers::StartsWith("labeldp: error: "));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Matchers::Contains(expected_fragment));
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// A file of examples/data/ in the source tree.
inline std::string data_file(const std::string& name) {
  return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "examples/data" / name).string();
}

}  // namespace labeldp::test::cli
