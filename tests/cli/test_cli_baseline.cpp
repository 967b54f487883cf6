// End-to-end tests of `labeldp baseline` (the labeldp CLI contract, "baseline", "Common rules"
// and "Mechanism files"), run as a separate process. The program is looked up next to this test
// executable (all binaries go to build/bin/); when it was not built the tests warn and do nothing.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <labeldp/mechanisms/additive_noise.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_harness.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;
using namespace labeldp::test::cli;
using nlohmann::json;

namespace {

// The contract's rule for bad input, for `labeldp <args>` run with empty standard input.
void require_bad_input(const std::string& args, const std::string& expected_fragment) {
  const Run r = run(args);
  INFO("labeldp " << args);
  labeldp::test::cli::require_bad_input(r, expected_fragment);
}

// Runs a command that must succeed with exactly one JSON object on one line.
json run_json(const std::string& args) {
  const Run r = run(args);
  INFO("labeldp " << args << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  return json::parse(r.out);
}

std::string prior_file() { return write("prior.csv", "value,prob\n0,0.5\n1,0.3\n4,0.2\n"); }

// The contract's common baseline fields.
void check_common(const json& j, const std::string& kind, double eps, double delta, double lo, double hi, bool clip) {
  INFO(j.dump());
  CHECK(j.at("format") == "labeldp-mechanism");
  CHECK(j.at("version") == 1);
  CHECK(j.at("mechanism") == kind);
  CHECK(j.at("eps").get<double>() == eps);
  CHECK(j.at("delta").get<double>() == delta);
  CHECK(j.at("sensitivity").get<double>() == hi - lo);
  CHECK(j.at("lo").get<double>() == lo);
  CHECK(j.at("hi").get<double>() == hi);
  CHECK(j.at("clip").get<bool>() == clip);
}

}  // namespace

TEST_CASE("cli baseline: --help lists the options", "[cli][baseline]") {
  REQUIRE_CLI();
  const Run r = run("baseline --help");
  CHECK(r.status == 0);
  for (const char* opt : {"--kind", "--eps", "--lo", "--hi", "--delta", "--resolution", "--prior", "--clip", "--json"})
    CHECK_THAT(r.out, Contains(opt));
  CHECK_THAT(run("--help").out, Contains("baseline"));
}

TEST_CASE("cli baseline laplace: mechanism file with the grid's cost, expected loss as the library's",
          "[cli][baseline]") {
  REQUIRE_CLI();
  const std::string prior = prior_file();
  for (bool clip : {false, true}) {
    const json j = run_json("baseline --kind laplace --eps 0.5 --lo 0 --hi 4 --prior " + prior +
                            (clip ? " --clip" : "") + " --json");
    check_common(j, "laplace", 0.5, 0, 0, 4, clip);
    CHECK(j.at("scale").get<double>() == 8.0);
    const labeldp::LaplaceMechanism<> m(0.0, 4.0, 0.5, clip);
    CHECK(j.at("granularity").get<double>() == m.granularity());
    CHECK(j.at("noise_scale").get<double>() == m.noise_scale());
    CHECK(j.at("noise_scale").get<double>() >= 8.0);
    CHECK(j.at("realized_eps").get<double>() <= 0.5);
    const auto p = labeldp::FinitePrior<>::from_weights({0, 1, 4}, {0.5, 0.3, 0.2});
    CHECK(j.at("expected_loss").get<double>() == m.expected_loss(p));
  }
  // Without --prior there is no expected_loss.
  CHECK_FALSE(run_json("baseline --kind laplace --eps 1 --lo 0 --hi 4 --json").contains("expected_loss"));
}

TEST_CASE("cli baseline discrete-laplace and exponential: parameters and expected loss", "[cli][baseline]") {
  REQUIRE_CLI();
  const std::string prior = prior_file();
  const auto p = labeldp::FinitePrior<>::from_weights({0, 1, 4}, {0.5, 0.3, 0.2});
  const json dl = run_json("baseline --kind discrete-laplace --eps 2 --lo 0 --hi 4 --resolution 0.5 --clip --prior " +
                           prior + " --json");
  check_common(dl, "discrete-laplace", 2, 0, 0, 4, true);
  CHECK(dl.at("scale").get<double>() == 4.0);  // (H-L)/(E R) in units of R
  CHECK(dl.at("resolution").get<double>() == 0.5);
  CHECK(dl.at("realized_eps").get<double>() <= 2.0);
  const labeldp::DiscreteLaplaceMechanism<> m(labeldp::LabelGrid<>(0.0, 4.0, 0.5), 2.0, true);
  CHECK(dl.at("expected_loss").get<double>() == m.expected_loss(p));
  // Clipping lowers the error.
  const json unclipped =
      run_json("baseline --kind discrete-laplace --eps 2 --lo 0 --hi 4 --resolution 0.5 --prior " + prior + " --json");
  CHECK(unclipped.at("clip") == false);
  CHECK(unclipped.at("expected_loss").get<double>() > dl.at("expected_loss").get<double>());

  const json em =
      run_json("baseline --kind exponential --eps 1 --lo 0 --hi 4 --resolution 0.5 --prior " + prior + " --json");
  check_common(em, "exponential", 1, 0, 0, 4, true);
  CHECK(em.at("scale").get<double>() == 8.0);  // 2(H-L)/E
  CHECK(em.at("expected_loss").get<double>() ==
        labeldp::ExponentialMechanism<>(labeldp::LabelGrid<>(0.0, 4.0, 0.5), 1.0).expected_loss(p));
  // Default grid: 1024 steps.
  CHECK(run_json("baseline --kind exponential --eps 1 --lo 0 --hi 4 --json").at("resolution").get<double>() ==
        4.0 / 1024);
}

TEST_CASE("cli baseline rr and rr-with-prior: finite mechanisms, exactly eps-DP as printed", "[cli][baseline]") {
  REQUIRE_CLI();
  const std::string prior = prior_file();
  const std::vector<double> values = {0, 1, 4}, probs = {0.5, 0.3, 0.2};
  for (const std::string kind : {"rr", "rr-with-prior"})
    for (double eps : {0.1, 1.0, 5.0}) {
      const json j = run_json("baseline --kind " + kind + " --eps " + labeldp::detail::format_number(eps) +
                              " --lo 0 --hi 4 --prior " + prior + " --json");
      check_common(j, kind, eps, 0, 0, 4, true);
      const auto inputs = j.at("inputs").get<std::vector<double>>();
      const auto outputs = j.at("outputs").get<std::vector<double>>();
      const auto P = j.at("probabilities").get<std::vector<std::vector<double>>>();
      CHECK(inputs == values);
      REQUIRE(P.size() == 3);
      if (kind == "rr-with-prior") CHECK(j.at("top_k").get<std::size_t>() == outputs.size());
      // Rows sum to 1; every column ratio <= e^eps (in long double, far below the printed digits).
      long double loss = 0;
      for (std::size_t i = 0; i < 3; ++i) {
        long double sum = 0;
        for (std::size_t o = 0; o < outputs.size(); ++o) {
          sum += P[i][o];
          loss += probs[i] * P[i][o] * (outputs[o] - values[i]) * (outputs[o] - values[i]);
        }
        CHECK(std::abs(double(sum) - 1) <= 1e-9);
      }
      for (std::size_t o = 0; o < outputs.size(); ++o)
        for (std::size_t a = 0; a < 3; ++a)
          for (std::size_t b = 0; b < 3; ++b) {
            INFO(kind << " eps " << eps << " column " << o);
            CHECK(std::log(static_cast<long double>(P[a][o])) - std::log(static_cast<long double>(P[b][o])) <=
                  static_cast<long double>(eps));
          }
      CHECK(j.at("expected_loss").get<double>() == Approx(double(loss)).epsilon(1e-12));
    }
}

TEST_CASE("cli baseline: Gaussian and staircase kinds print their parameters", "[cli][baseline]") {
  REQUIRE_CLI();
  const json g = run_json("baseline --kind gaussian --eps 1 --delta 1e-5 --lo 0 --hi 4 --json");
  check_common(g, "gaussian", 1, 1e-5, 0, 4, false);
  CHECK(g.contains("sigma"));
  const json dg =
      run_json("baseline --kind discrete-gaussian --eps 1 --delta 1e-5 --lo 0 --hi 4 --resolution 0.5 --json");
  check_common(dg, "discrete-gaussian", 1, 1e-5, 0, 4, false);
  CHECK(dg.contains("sigma"));
  const json s = run_json("baseline --kind staircase --eps 1 --lo 0 --hi 4 --clip --json");
  check_common(s, "staircase", 1, 0, 0, 4, true);
  CHECK(s.contains("gamma"));
  const json ds = run_json("baseline --kind discrete-staircase --eps 1 --lo 0 --hi 4 --resolution 0.5 --json");
  check_common(ds, "discrete-staircase", 1, 0, 0, 4, false);
  CHECK(ds.contains("gamma"));
  CHECK(ds.contains("r"));
}

TEST_CASE("cli baseline: every bad input exits 2 with one line naming the option", "[cli][baseline]") {
  REQUIRE_CLI();
  const std::string prior = prior_file();
  const std::string base = "baseline --lo 0 --hi 4 --json ";
  SECTION("kind") {
    require_bad_input(base + "--kind laplacian --eps 1", "'--kind' must be one of laplace, discrete-laplace");
    require_bad_input("baseline --eps 1 --lo 0 --hi 4 --json", "--kind");
    // A newline in the echoed value is escaped: still one line.
    require_bad_input(base + "--kind \"$(printf 'lap\\nlace')\" --eps 1", "got \"lap\\nlace\"");
  }
  SECTION("eps") {
    require_bad_input(base + "--kind laplace --eps 0", "'--eps' must be finite and positive, got 0");
    require_bad_input(base + "--kind laplace --eps -1", "'--eps' must be finite and positive, got -1");
    require_bad_input(base + "--kind laplace --eps nan", "'--eps' must be finite and positive");
    require_bad_input(base + "--kind laplace --eps inf", "'--eps' must be finite and positive");
    require_bad_input(base + "--kind laplace --eps abc", "--eps");
    require_bad_input("baseline --kind laplace --lo 0 --hi 4 --json", "--eps");
    require_bad_input(base + "--kind laplace --eps 1e-13", "'eps' must be at least 2^-40 for the Laplace mechanism");
    require_bad_input(base + "--kind laplace --eps 1e300", "'eps' / sensitivity must be in [2^-42, 2^62]");
    require_bad_input(base + "--kind exponential --eps 2000",
                      "'eps' must be at most 1000 for the exponential mechanism");
    require_bad_input("baseline --kind discrete-laplace --lo 0 --hi 2147483648 --resolution 1 --eps 1e-6 --json",
                      "'eps' / sensitivity must be in [2^-42, 2^62]");
  }
  SECTION("lo and hi") {
    require_bad_input("baseline --kind laplace --eps 1 --lo 4 --hi 4 --json",
                      "'--lo' must be below '--hi', got --lo 4, --hi 4");
    require_bad_input("baseline --kind laplace --eps 1 --lo 5 --hi 4 --json", "'--lo' must be below '--hi'");
    require_bad_input("baseline --kind laplace --eps 1 --lo nan --hi 4 --json", "'--lo' must be finite, got nan");
    require_bad_input("baseline --kind laplace --eps 1 --lo 0 --hi inf --json", "'--hi' must be finite, got inf");
    require_bad_input("baseline --kind laplace --eps 1 --lo -1e308 --hi 1e308 --json",
                      "'--hi' - '--lo' must be finite");
    require_bad_input("baseline --kind laplace --eps 1 --hi 4 --json", "--lo");
    require_bad_input("baseline --kind laplace --eps 1 --lo 0 --json", "--hi");
  }
  SECTION("delta") {
    require_bad_input(base + "--kind gaussian --eps 1", "'--kind gaussian' needs '--delta D'");
    require_bad_input(base + "--kind discrete-gaussian --eps 1 --resolution 0.5",
                      "'--kind discrete-gaussian' needs '--delta D'");
    for (const char* d : {"0", "1", "-0.1", "2", "nan"})
      require_bad_input(base + "--kind gaussian --eps 1 --delta " + d, "'--delta' must be in (0, 1)");
    require_bad_input(base + "--kind laplace --eps 1 --delta 1e-5",
                      "'--delta' must be 0 or absent for '--kind laplace' (pure eps-DP), got 1.0000000000000001e-05");
  }
  SECTION("resolution") {
    require_bad_input(base + "--kind discrete-laplace --eps 1", "'--kind discrete-laplace' needs '--resolution R'");
    require_bad_input(base + "--kind discrete-staircase --eps 1", "'--kind discrete-staircase' needs '--resolution R'");
    require_bad_input(base + "--kind laplace --eps 1 --resolution 0.5",
                      "'--resolution' does not apply to '--kind laplace'");
    require_bad_input(base + "--kind rr --eps 1 --resolution 0.5 --prior " + prior, "'--resolution' does not apply");
    require_bad_input(
        base + "--kind discrete-laplace --eps 1 --resolution 0.3",
        "'--resolution' must divide --hi - --lo into 1 to 2^31 steps, got 0.29999999999999999 for [0, 4]");
    require_bad_input(base + "--kind discrete-laplace --eps 1 --resolution 0",
                      "'--resolution' must be finite and > 0, got 0");
    require_bad_input(base + "--kind discrete-laplace --eps 1 --resolution -1",
                      "'--resolution' must be finite and > 0, got -1");
    require_bad_input(base + "--kind discrete-laplace --eps 1 --resolution 1e-12",
                      "must divide --hi - --lo into 1 to 2^31 steps");
    require_bad_input(base + "--kind exponential --eps 1 --resolution 0.001",
                      "'--resolution' gives 4000 grid steps; the exponential mechanism allows at most 1024");
  }
  SECTION("prior") {
    require_bad_input(base + "--kind rr --eps 1", "'--kind rr' needs '--prior FILE'");
    require_bad_input(base + "--kind rr-with-prior --eps 1", "'--kind rr-with-prior' needs '--prior FILE'");
    require_bad_input(base + "--kind rr --eps 1 --prior no-such-file.csv", "no-such-file.csv");
    const std::string outside = write("outside.csv", "value,prob\n0,0.5\n7,0.5\n");
    require_bad_input(base + "--kind rr --eps 1 --prior " + outside,
                      "outside.csv: value 7 is outside [--lo, --hi] = [0, 4]");
    const std::string negative = write("negative.csv", "value,prob\n0,1.1\n1,-0.1\n");
    require_bad_input(base + "--kind laplace --eps 1 --prior " + negative, "negative.csv:3:");
  }
}

TEST_CASE("cli baseline: a failed write to standard output is an error", "[cli][baseline]") {
  REQUIRE_CLI();
  if (!fs::exists("/dev/full")) return;
  const fs::path err = scratch() / "stderr_full.txt";
  const std::string cmd = "'" + cli_path().string() +
                          "' baseline --kind laplace --eps 1 --lo 0 --hi 4 --json > /dev/full 2> '" + err.string() +
                          "'";
  const int raw = std::system(cmd.c_str());
  CHECK(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 2);
  CHECK_THAT(slurp(err), StartsWith("labeldp: error: <stdout>: write error"));
}
