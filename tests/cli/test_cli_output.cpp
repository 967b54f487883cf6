// End-to-end tests of the CLI's output and error rules (contract, "Common rules", writing): `--output`
// replaces only a regular file and keeps its mode; an interrupted run (SIGINT, SIGTERM) leaves
// neither a partial output nor a temporary file behind; an error is one line, control bytes
// escaped; an unknown command is an error.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli/cli_harness.hpp"

using namespace labeldp::test::cli;
namespace fs = std::filesystem;

namespace {

// Files in `dir` whose name starts with `prefix`.
int count_files(const fs::path& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("cli privatize: --output to a FIFO or a directory is refused, nothing written", "[cli][output]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.5\n1,0.5\n");
  const std::string fifo = (scratch() / "out.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Run r = run("privatize --prior p.csv --eps 1 --seed 1 --output out.fifo", "0\n1\n");
  require_bad_input(r, "out.fifo: cannot write file: ");
  CHECK_THAT(r.err, Catch::Matchers::Contains("not a regular file"));
  CHECK(fs::is_fifo(fifo));
  fs::create_directories(scratch() / "adir");
  require_bad_input(run("privatize --prior p.csv --eps 1 --seed 1 --output adir", "0\n1\n"),
                    "adir: cannot write file: it is a directory");
  CHECK(count_files(scratch(), ".out.fifo.tmp-") == 0);
}

TEST_CASE("cli privatize: --output keeps the mode of the file it replaces", "[cli][output]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.5\n1,0.5\n");
  const std::string out = write("kept.csv", "old\n");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);
  const Run r = run("privatize --prior p.csv --eps 1 --seed 1 --labels-only --output kept.csv", "0\n1\n1\n");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(lines(slurp(out)).size() == 3);
  CHECK((fs::status(out).permissions() & fs::perms::mask) == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("cli privatize --mechanism: SIGTERM or SIGINT mid-run leaves no output and no temporary file",
          "[cli][output]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.25\n1,0.25\n2,0.5\n");
  const Run made = run("bins --prior p.csv --eps 1 --json");
  REQUIRE(made.status == 0);
  write("mech.json", made.out);
  for (int sig : {SIGTERM, SIGINT}) {
    const fs::path dir = scratch() / ("interrupt" + std::to_string(sig));
    fs::create_directories(dir);
    const std::string fifo = (dir / "labels.fifo").string(), out = (dir / "noisy.csv").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string exe = cli_path().string(), mech = (scratch() / "mech.json").string();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // A shell would start the program with these signals at their defaults; Catch2 does not.
      for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
      ::execl(exe.c_str(), exe.c_str(), "privatize", "--mechanism", mech.c_str(), "--input", fifo.c_str(), "--column",
              "y", "--output", out.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Feed the header and some rows, keep the FIFO open: the program is mid-run, writing.
    const int w = ::open(fifo.c_str(), O_WRONLY);
    REQUIRE(w >= 0);
    std::string rows = "y\n";
    for (int i = 0; i < 1000; ++i) rows += std::to_string(i % 3) + "\n";
    REQUIRE(::write(w, rows.data(), rows.size()) == ssize_t(rows.size()));
    bool temporary_seen = false;
    for (int wait = 0; wait < 1000 && !temporary_seen; ++wait) {
      temporary_seen = count_files(dir, ".noisy.csv.tmp-") == 1;
      if (!temporary_seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(temporary_seen);
    ::kill(child, sig);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    ::close(w);
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == sig);
    CHECK(count_files(dir, ".noisy.csv.tmp-") == 0);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("cli: an unknown command is an error even with --help after it", "[cli][output]") {
  REQUIRE_CLI();
  for (const char* args : {"compare-nothing --help", "nosuch", "nosuch --eps 1"}) {
    INFO(args);
    require_bad_input(run(args), "unknown command '");
  }
  const Run help = run("audit --help");
  CHECK(help.status == 0);
  CHECK_THAT(help.out, Catch::Matchers::Contains("--mechanism"));
}

TEST_CASE("cli: an error echoing a file name with a newline and ESC is one line, escaped", "[cli][output]") {
  REQUIRE_CLI();
  const Run r = run("audit --mechanism \"$(printf 'a\\nb\\033[31m.json')\"");
  require_bad_input(r, "a\\nb\\x1b[31m.json: cannot open file");
  CHECK(r.err.find('\x1b') == std::string::npos);
}
