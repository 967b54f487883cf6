// End-to-end tests of hostile input (issue 13, "Hostile input: bounded, clear, nothing lost"; the
// contract's "Common rules"): one test per hostile input. A failed write to standard output is an
// error for every command; sizes the machine cannot hold are refused quickly, naming the limit,
// under a 2 GB address-space limit; /dev/zero as any input is refused by the readers' limits; a
// FIFO is read once; extreme eps and huge values give valid output or a reason, never an
// internal message; --output replaces only a regular file (symbolic link followed, mode kept);
// an error is one line with control bytes escaped and never echoes a label.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "cli/cli_harness.hpp"

using namespace labeldp::test::cli;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Runs `script` with /bin/sh in the scratch directory, where "$L" is the labeldp program, under a
// 2 GB address-space limit; records the wall time.
struct Timed {
  Run run;
  double seconds = 0;
};

Timed sh(const std::string& script) {
  const fs::path out = scratch() / "sh_stdout.txt", err = scratch() / "sh_stderr.txt";
  const std::string cmd = "cd '" + scratch().string() + "' && L='" + cli_path().string() +
                          "' && ( ulimit -v 2000000; " + script + " ) > '" + out.string() + "' 2> '" + err.string() +
                          "'";
  const auto start = std::chrono::steady_clock::now();
  const int raw = std::system(cmd.c_str());
  Timed t;
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  t.run.out = slurp(out);
  t.run.err = slurp(err);
  return t;
}

// Messages that are the library's internals, not reasons a user understands.
void require_no_internal_message(const std::string& err) {
  for (const char* internal : {"'alpha'", "must be strictly increasing", "JSON cannot represent", "not finite on some",
                               "bad_alloc", "nan", "internal error"})
    CHECK_THAT(err, !Contains(internal));
}

void write_mechanism_files() {
  write("p.csv", "value,prob\n0,0.25\n1,0.25\n2,0.5\n");
  write("o.csv", "output\n0\n1\n2\n");
  write("h.csv", "lo,hi,mass\n0,1,0.5\n1,2,0.5\n");
  write("l.csv", "y\n0\n1\n2\n");
  const Run bins = run("bins --prior p.csv --eps 1 --json");
  REQUIRE(bins.status == 0);
  write("m.json", bins.out);
}

}  // namespace

TEST_CASE("cli hostile: a failed write to standard output is an error for every command", "[cli][hostile]") {
  REQUIRE_CLI();
  if (!fs::exists("/dev/full")) return;
  write_mechanism_files();
  for (const std::string args :
       {"bins --prior p.csv --eps 1 --json", "bins --prior p.csv --eps 1",
        "optimal --prior p.csv --outputs o.csv --eps 1 --json", "unbiased --prior p.csv --eps 1 --grid 10 --json",
        "unbiased --prior p.csv --eps 1 --continuous", "interval --hist h.csv --eps 1 --zeta 0.5 --json",
        "interval --hist h.csv --eps 1 --zeta 0.5", "audit --mechanism m.json", "audit --mechanism m.json --json",
        "baseline --kind laplace --eps 1 --lo 0 --hi 2 --json",
        "baseline --kind rr --prior p.csv --eps 1 --lo 0 --hi 2",
        "prior --input l.csv --column y --eps 1 --lo 0 --hi 2 --resolution 1 --seed 1",
        "prior --input l.csv --column y --eps 1 --lo 0 --hi 2 --resolution 1 --seed 1 --json",
        "privatize --prior p.csv --input l.csv --column y --eps 1 --seed 1",
        "privatize --mechanism m.json --input l.csv --column y --seed 1"}) {
    INFO(args);
    const Timed t = sh("\"$L\" " + args + " > /dev/full");
    INFO(t.run.err);
    CHECK(t.run.status == 2);
    CHECK_THAT(t.run.err, Catch::Matchers::StartsWith("labeldp: error: <stdout>: write error"));
    CHECK(std::count(t.run.err.begin(), t.run.err.end(), '\n') == 1);
  }
}

TEST_CASE("cli hostile: sizes beyond the limits are refused quickly, naming the limit", "[cli][hostile]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.25\n1,0.25\n2,0.5\n");
  std::string p3000 = "value,count\n", o3000 = "output\n", p300 = "value,count\n", p70000 = "value,count\n";
  for (int i = 0; i < 3000; ++i) p3000 += std::to_string(i) + ",1\n", o3000 += std::to_string(i) + ".5\n";
  for (int i = 0; i < 300; ++i) p300 += std::to_string(i) + ",1\n";
  for (int i = 0; i < 70000; ++i) p70000 += std::to_string(i) + ",1\n";
  write("p3000.csv", p3000);
  write("o3000.csv", o3000);
  write("p300.csv", p300);
  write("p70000.csv", p70000);
  std::string p1000 = "value,count\n";
  for (int i = 0; i < 1000; ++i) p1000 += std::to_string(i) + ",1\n";
  write("p1000.csv", p1000);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"unbiased --prior p.csv --eps 1 --grid 1e8 --json",
       "at most 262144 (prior value, output) pairs (UnbiasedOptions::max_cells), got 3 values x 100000000 outputs"},
      {"unbiased --prior p.csv --eps 1 --grid 99999999999999999999 --json", "'--grid' 99999999999999999999 is beyond"},
      {"unbiased --prior p.csv --eps 1 --grid 2.5 --json", "'--grid' must be an integer, got '2.5'"},
      {"unbiased --prior p300.csv --eps 1 --continuous --json",
       "the unbiased randomizer takes at most 256 prior values (UnbiasedOptions::max_labels), got 300"},
      {"optimal --prior p3000.csv --outputs o3000.csv --eps 1 --json",
       "the optimal-mechanism LP takes at most 1024 prior values (OptimalLPOptions::max_labels), got 3000"},
      {"optimal --prior p1000.csv --outputs o3000.csv --eps 1 --json",
       "at most 1048576 (prior value, output) pairs (OptimalLPOptions::max_cells), got 1000 values x 3000 outputs"},
      {"bins --prior p70000.csv --eps 1 --json", "p70000.csv: 70000 prior values is more than the limit of 65536"},
      {"privatize --input l.csv --column y --eps 1 --lo 0 --hi 1e6 --resolution 1 --method bins",
       "'--method bins' takes at most 65536 support points"},
      {"privatize --input l.csv --column y --eps 1 --lo 0 --hi 1000 --resolution 1 --method unbiased",
       "'--method unbiased' takes at most 256 support points"},
      {"privatize --input l.csv --column y --eps 1 --lo 0 --hi 4000 --resolution 1 --method rr",
       "'--method rr' takes at most 2048 values (its table is k x k), got 4001"},
      {"privatize --input l.csv --column y --eps 1 --lo 0 --hi 1e6 --resolution 1 --method rr-with-prior",
       "'--method rr-with-prior' takes at most 262144 values"},
      {"baseline --kind rr --prior p3000.csv --eps 1 --lo 0 --hi 3000 --json",
       "p3000.csv: '--kind rr' takes at most 2048 values (its table is k x k), got 3000"},
      {"privatize --input l.csv --column y --eps 1 --lo 0 --hi 1e9 --resolution 1 --method rr",
       "at most 10^7 grid points"},
  };
  write("l.csv", "y\n0\n1\n2\n");
  for (const auto& [args, fragment] : cases) {
    INFO(args);
    const Timed t = sh("\"$L\" " + args);
    require_bad_input(t.run, fragment);
    CHECK(t.seconds < 10);
  }
}

TEST_CASE("cli hostile: a histogram or prior beyond 2^22 rows is refused by the reader", "[cli][hostile]") {
  REQUIRE_CLI();
  {
    std::ofstream h(scratch() / "big_hist.csv", std::ios::binary);
    h << "lo,hi,mass\n";
    for (long i = 0; i <= (1L << 22); ++i) h << i << ',' << i + 1 << ",1\n";
  }
  const Timed t = sh("\"$L\" interval --hist big_hist.csv --eps 1 --zeta 1 --json");
  require_bad_input(t.run, "big_hist.csv:4194306: more than 4194304 histogram cells (the reader's limit)");
  CHECK(t.seconds < 20);
  fs::remove(scratch() / "big_hist.csv");
}

TEST_CASE("cli hostile: a mechanism file beyond 32 MiB is refused before it is parsed", "[cli][hostile]") {
  REQUIRE_CLI();
  write("l.csv", "y\n0\n1\n2\n");
  {
    std::ofstream m(scratch() / "huge.json", std::ios::binary);
    m << "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"finite\",\"eps\":1,\"inputs\":[0";
    for (long i = 1; i < 9000000; ++i) m << "," << i;
    m << "],\"outputs\":[0],\"probabilities\":[]}";
  }
  const Timed t = sh("\"$L\" privatize --mechanism huge.json --input l.csv --column y");
  require_bad_input(t.run, "huge.json: input is more than the limit of 33554432 bytes");
  CHECK(t.seconds < 10);
  fs::remove(scratch() / "huge.json");
}

TEST_CASE("cli hostile: --support with 200,000 values finds a duplicate quickly", "[cli][hostile]") {
  REQUIRE_CLI();
  std::string support = "value\n";
  for (int i = 0; i < 200000; ++i) support += std::to_string(i) + "\n";
  support += "17\n";
  write("support.csv", support);
  write("l.csv", "y\n0\n1\n2\n");
  const Timed t = sh("\"$L\" prior --input l.csv --column y --eps 1 --support support.csv");
  require_bad_input(t.run, "support.csv:200002: duplicate value 17 (also on line 19)");
  CHECK(t.seconds < 10);
}

TEST_CASE("cli hostile: /dev/zero as any input is refused by the readers' limits", "[cli][hostile]") {
  REQUIRE_CLI();
  if (!fs::exists("/dev/zero")) return;
  write_mechanism_files();
  for (const std::string args :
       {"bins --prior /dev/zero --eps 1", "optimal --prior p.csv --outputs /dev/zero --eps 1",
        "unbiased --prior /dev/zero --eps 1 --continuous", "interval --hist /dev/zero --eps 1 --zeta 1",
        "baseline --kind rr --prior /dev/zero --eps 1 --lo 0 --hi 2",
        "prior --input /dev/zero --column y --eps 1 --lo 0 --hi 2 --resolution 1",
        "prior --input l.csv --column y --eps 1 --support /dev/zero",
        "privatize --prior /dev/zero --input l.csv --column y --eps 1",
        "privatize --prior p.csv --input /dev/zero --column y --eps 1"}) {
    INFO(args);
    const Timed t = sh("\"$L\" " + args);
    require_bad_input(t.run, "/dev/zero:1: line is longer than 16777216 bytes (the CSV reader's limit)");
    CHECK(t.seconds < 10);
  }
  const Timed t = sh("\"$L\" privatize --mechanism /dev/zero --input l.csv --column y");
  require_bad_input(t.run, "/dev/zero: input is more than the limit of 33554432 bytes");
  CHECK(t.seconds < 10);
}

TEST_CASE("cli hostile: a FIFO input is read once", "[cli][hostile]") {
  REQUIRE_CLI();
  write_mechanism_files();
  write("o_pos.csv", "output\n0.5\n1\n2\n");
  const std::string fifo = (scratch() / "in.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // "timeout 10": a program that opens the FIFO a second time waits for a writer forever.
  for (const auto& [file, args] : std::vector<std::pair<std::string, std::string>>{
           {"p.csv", "bins --prior in.fifo --eps 1 --loss poisson --json"},
           {"p.csv", "optimal --prior in.fifo --outputs o_pos.csv --eps 1 --loss poisson --json"},
           {"o_pos.csv", "optimal --prior p.csv --outputs in.fifo --eps 1 --loss poisson --json"},
           {"p.csv", "unbiased --prior in.fifo --eps 1 --continuous --json"},
           {"h.csv", "interval --hist in.fifo --eps 1 --zeta 1 --json"},
           {"m.json", "privatize --mechanism in.fifo --input l.csv --column y --seed 1"},
           {"l.csv", "privatize --prior p.csv --input in.fifo --column y --seed 1 --eps 1"},
           {"l.csv", "privatize --input in.fifo --column y --seed 1 --eps 1 --lo 0 --hi 2 --resolution 1"},
           {"l.csv",
            "privatize --input in.fifo --column y --seed 1 --eps 1 --lo 0 --hi 2 --resolution 1 --method "
            "unbiased"},
           {"l.csv", "prior --input in.fifo --column y --seed 1 --eps 1 --lo 0 --hi 2 --resolution 1"}}) {
    INFO(args);
    const Timed t = sh("cat " + file + " > in.fifo & timeout 10 \"$L\" " + args + "; rc=$?; wait; exit $rc");
    INFO(t.run.err);
    CHECK(t.run.status == 0);
    CHECK_FALSE(t.run.out.empty());
  }
  // A negative label for Poisson loss in a FIFO prior: refused on its line, read once.
  write("pneg.csv", "value,prob\n0,0.5\n-1,0.5\n");
  const Timed t =
      sh("cat pneg.csv > in.fifo & timeout 10 \"$L\" bins --prior in.fifo --eps 1 --loss poisson; rc=$?; "
         "wait; exit $rc");
  require_bad_input(t.run, "in.fifo:3: value -1 is negative: Poisson log loss needs labels >= 0");
}

TEST_CASE("cli hostile: extreme eps gives valid output or a reason for every command", "[cli][hostile][extreme]") {
  REQUIRE_CLI();
  write_mechanism_files();
  write("l5.csv", "y\n1\n2\n3\n4\n5\n");
  for (const std::string eps : {"1e-12", "1e-300", "800", "1e308"}) {
    std::vector<std::string> commands = {"bins --prior p.csv",
                                         "bins --prior p.csv --loss absolute",
                                         "optimal --prior p.csv --outputs o.csv",
                                         "unbiased --prior p.csv --grid 10",
                                         "unbiased --prior p.csv --continuous",
                                         "interval --hist h.csv --zeta 0.5",
                                         "interval --hist h.csv --choose-zeta",
                                         "prior --input l.csv --column y --lo 0 --hi 2 --resolution 1 --seed 1",
                                         "baseline --kind laplace --lo 0 --hi 5",
                                         "baseline --kind discrete-laplace --lo 0 --hi 5 --resolution 1",
                                         "baseline --kind gaussian --delta 1e-5 --lo 0 --hi 5",
                                         "baseline --kind staircase --lo 0 --hi 5",
                                         "baseline --kind exponential --lo 0 --hi 5",
                                         "baseline --kind rr --prior p.csv --lo 0 --hi 5",
                                         "baseline --kind rr-with-prior --prior p.csv --lo 0 --hi 5"};
    for (const std::string method : {"bins", "unbiased", "rpwithprior", "rr-with-prior", "discrete-laplace",
                                     "discrete-gaussian --delta 1e-5", "discrete-staircase", "rr"})
      commands.push_back("privatize --input l5.csv --column y --lo 0 --hi 5 --resolution 1 --seed 1 --method " +
                         method);
    for (const std::string method : {"laplace", "gaussian --delta 1e-5", "staircase", "exponential"})
      commands.push_back("privatize --input l5.csv --column y --lo 0 --hi 5 --seed 1 --method " + method);
    commands.push_back("privatize --mechanism m.json --input l5.csv --column y --seed 1");
    for (const auto& command : commands) {
      INFO(command << " --eps " << eps);
      const Timed t = sh("timeout 20 \"$L\" " + command + " --eps " + eps);
      INFO(t.run.err);
      require_no_internal_message(t.run.err);
      CHECK(t.seconds < 20);
      if (t.run.status == 0) {
        CHECK(t.run.out.find("nan") == std::string::npos);
        CHECK(t.run.out.find("inf") == std::string::npos);
      } else {
        CHECK(t.run.status == 2);
        CHECK(t.run.out.empty());
        CHECK(std::count(t.run.err.begin(), t.run.err.end(), '\n') == 1);
      }
    }
  }
  // Tiny eps: the optimal mechanism is the best constant output, certified (not an LP failure).
  const Run optimal = run("optimal --prior p.csv --outputs o.csv --eps 1e-300 --json");
  INFO(optimal.err);
  CHECK(optimal.status == 0);
  CHECK_THAT(optimal.out, Contains("\"status\":\"optimal\""));
  CHECK_THAT(optimal.out, Contains("\"outputs\":[1]"));
  // Unbiased outputs of magnitude k range / eps overflow at 1e-300: a reason.
  require_bad_input(run("unbiased --prior p.csv --grid 10 --eps 1e-300 --json"),
                    "is too small (or the labels too large) for an unbiased randomizer");
}

TEST_CASE("cli hostile: values near 1e300 and subnormal values give output or a reason", "[cli][hostile][extreme]") {
  REQUIRE_CLI();
  write("big.csv", "value,prob\n-1e300,0.5\n1e300,0.5\n");
  write("sub.csv", "value,prob\n0,0.5\n5e-324,0.5\n");
  write("o.csv", "output\n0\n1\n2\n");
  write("bh.csv", "lo,hi,mass\n-1e300,0,0.5\n0,1e300,0.5\n");
  for (const std::string prior : {"big.csv", "sub.csv"}) {
    for (const std::string command :
         {"bins", "bins --loss absolute", "optimal --outputs o.csv", "unbiased --grid 10", "unbiased --continuous",
          "baseline --kind rr --lo -1e300 --hi 1e300", "baseline --kind rr-with-prior --lo -1e300 --hi 1e300"}) {
      INFO(command << " --prior " << prior);
      const Run r = run(command + " --prior " + prior + " --eps 1 --json");
      INFO(r.err);
      require_no_internal_message(r.err);
      if (r.status != 0) {
        require_bad_input(r, "");
        if (prior == "big.csv") CHECK_THAT(r.err, Contains("1e150") || Contains("overflows"));
      }
    }
  }
  require_bad_input(run("bins --prior big.csv --eps 1 --json"),
                    "big.csv:2: value -1.0000000000000001e+300 is beyond 1e150 in magnitude");
  // A subnormal FeasibleOutputSet holds fewer than 10 doubles: the grid keeps the distinct ones.
  const Run sub = run("unbiased --prior sub.csv --grid 10 --eps 1 --json");
  INFO(sub.err);
  CHECK(sub.status == 0);
  for (const std::string flag : {"--zeta 1", "--choose-zeta"}) {
    const Run r = run("interval --hist bh.csv --eps 1 --json " + flag);
    INFO(r.err);
    require_no_internal_message(r.err);
    if (r.status != 0) require_bad_input(r, "");
  }
}

TEST_CASE("cli hostile: --output follows a symbolic link, keeps mode 0640, refuses devices and FIFOs",
          "[cli][hostile][output]") {
  REQUIRE_CLI();
  write("l.csv", "y\n0\n1\n2\n");
  const std::string base = "prior --input l.csv --column y --eps 1 --lo 0 --hi 2 --resolution 1 --seed 1 --output ";
  // A regular file of mode 0640 is replaced, its mode kept.
  const std::string kept = write("kept.csv", "old\n");
  ::chmod(kept.c_str(), 0640);
  Run r = run(base + "kept.csv");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(slurp(kept), Catch::Matchers::StartsWith("value,prob\n"));
  struct stat st {};
  REQUIRE(::stat(kept.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  // A symbolic link: the file it names is replaced, the link stays a link.
  const std::string target = write("target.csv", "old\n");
  fs::remove(scratch() / "link.csv");
  fs::create_symlink(target, scratch() / "link.csv");
  r = run(base + "link.csv");
  REQUIRE(r.status == 0);
  CHECK(fs::is_symlink(fs::symlink_status(scratch() / "link.csv")));
  CHECK_THAT(slurp(target), Catch::Matchers::StartsWith("value,prob\n"));
  // A device (directly or through a link) and a FIFO are refused; nothing is written.
  fs::remove(scratch() / "null_link");
  fs::create_symlink("/dev/null", scratch() / "null_link");
  for (const std::string out : {"/dev/null", "null_link"}) {
    INFO(out);
    const Run bad = run("privatize --prior " + write("p.csv", "value,prob\n0,0.5\n1,0.5\n") +
                        " --input l.csv --column y --eps 1 --seed 1 --output " + out);
    require_bad_input(bad, out + ": cannot write file: it ");
    CHECK_THAT(bad.err, Contains("not a regular file"));
  }
  CHECK(fs::is_character_file("/dev/null"));
  const std::string fifo = (scratch() / "out.fifo").string();
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  require_bad_input(run(base + "out.fifo"), "out.fifo: cannot write file: ");
  CHECK(fs::is_fifo(fifo));
  for (const auto& e : fs::directory_iterator(scratch()))
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("cli hostile: errors are one line with control bytes escaped", "[cli][hostile]") {
  REQUIRE_CLI();
  for (const std::string args :
       {"bins --eps 1 --prior", "interval --eps 1 --zeta 1 --hist",
        "privatize --eps 1 --column y --lo 0 --hi 1 --resolution 1 --input", "privatize --column y --mechanism"}) {
    INFO(args);
    const Run r = run(args + " \"$(printf 'a\\nb\\033[31m.csv')\"");
    require_bad_input(r, "a\\nb\\x1b[31m.csv");
    CHECK(r.err.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("cli hostile: a bad label in the private labels file is never echoed, for every method", "[cli][hostile]") {
  REQUIRE_CLI();
  write_mechanism_files();
  write("secret.csv", "y\n1\nSECRET123\n2\n");
  std::vector<std::string> commands;
  for (const std::string method : {"bins", "unbiased", "rpwithprior", "rr-with-prior", "rr", "discrete-laplace",
                                   "discrete-gaussian --delta 1e-5", "discrete-staircase"})
    commands.push_back("privatize --input secret.csv --column y --eps 1 --lo 0 --hi 2 --resolution 1 --method " +
                       method);
  for (const std::string method : {"laplace", "gaussian --delta 1e-5", "staircase", "exponential"})
    commands.push_back("privatize --input secret.csv --column y --eps 1 --lo 0 --hi 2 --method " + method);
  commands.push_back("privatize --prior p.csv --input secret.csv --column y --eps 1");
  commands.push_back("privatize --mechanism m.json --input secret.csv --column y");
  commands.push_back("privatize --mechanism m.json --input secret.csv --column y --labels-only");
  commands.push_back("prior --input secret.csv --column y --eps 1 --lo 0 --hi 2 --resolution 1");
  for (const auto& command : commands) {
    INFO(command);
    const Run r = run(command);
    require_bad_input(r, "secret.csv:3");
    CHECK(r.err.find("SECRET123") == std::string::npos);
  }
  // Standard input too.
  const Run r = run("privatize --mechanism m.json --column y", "y\n1\nSECRET123\n");
  require_bad_input(r, ":3");
  CHECK(r.err.find("SECRET123") == std::string::npos);
}

// audit reads through io::read_json_file() (32 MiB limit); it used to read the whole input first
// (/dev/zero: 20 s and 2.1 GB before an error; a 380 MB file ended in std::terminate).
TEST_CASE("cli hostile: audit refuses /dev/zero and a file beyond 32 MiB quickly", "[cli][audit-limits]") {
  REQUIRE_CLI();
  const Timed zero = sh("\"$L\" audit --mechanism /dev/zero");
  require_bad_input(zero.run, "/dev/zero: input is more than the limit of 33554432 bytes");
  CHECK(zero.seconds < 10);
  {
    std::ofstream m(scratch() / "huge.json", std::ios::binary);
    m << "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"finite\",\"eps\":1,\"inputs\":[0";
    for (long i = 1; i < 9000000; ++i) m << "," << i;
    m << "],\"outputs\":[0],\"probabilities\":[]}";
  }
  const Timed huge = sh("\"$L\" audit --mechanism huge.json");
  require_bad_input(huge.run, "huge.json: input is more than the limit of 33554432 bytes");
  CHECK(huge.seconds < 10);
  fs::remove(scratch() / "huge.json");
}
