// End-to-end tests of the labeldp program's `audit` and `privatize` commands and the common rules
// of the CLI contract (the labeldp CLI contract), run as a separate process. The program is looked
// up next to this test executable (all binaries go to build/bin/); when it was not built (e.g.
// LABELDP_BUILD_EXAMPLES=OFF) the tests warn and do nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/mechanism.hpp>
#include <labeldp/io/json.hpp>
#include <labeldp/mechanisms/rr_on_bins.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_harness.hpp"
#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;
using namespace labeldp::test::cli;

namespace {

// Independent brute-force audit: max over columns and ordered row pairs of ln(p/q).
double brute_epsilon(const labeldp::Matrix<double>& p) {
  double worst = 0;
  for (labeldp::Index j = 0; j < p.cols(); ++j)
    for (labeldp::Index a = 0; a < p.rows(); ++a)
      for (labeldp::Index b = 0; b < p.rows(); ++b) {
        if (p(a, j) == 0) continue;
        if (p(b, j) == 0) return INFINITY;
        worst = std::max(worst, std::log(p(a, j) / p(b, j)));
      }
  return worst;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Common rules

TEST_CASE("cli: --help exits 0 and lists audit and privatize", "[cli]") {
  REQUIRE_CLI();
  const auto r = run("--help");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("audit") && Contains("privatize"));
  CHECK(run("audit --help").status == 0);
  const auto p = run("privatize --help");
  CHECK(p.status == 0);
  CHECK_THAT(p.out, Contains("--eps") && Contains("--seed") && Contains("--prior"));
}

TEST_CASE("cli: an unknown command is bad input", "[cli]") {
  REQUIRE_CLI();
  const auto r = run("no-such-command");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, StartsWith("labeldp: error: "));
}

// ---------------------------------------------------------------------------------------------
// audit

TEST_CASE("cli audit: binary randomized response has epsilon ln 3", "[cli][audit]") {
  REQUIRE_CLI();
  const auto path = write("rr.json", R"({"mechanism":"rr","inputs":[0,1],"outputs":[0,1],
  "probabilities":[[0.75,0.25],[0.25,0.75]]})");
  const auto r = run("audit --mechanism '" + path + "' --json");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.is_object());
  REQUIRE(j.size() == 1);
  // Rounded up: never below ln 3, at most a few ulps above it.
  const double eps = j["epsilon"].get<double>();
  CHECK(eps >= std::log(3.0));
  CHECK(eps <= std::nextafter(std::nextafter(std::nextafter(std::log(3.0), 9.0), 9.0), 9.0));
  // Without --json: the number alone.
  CHECK(run("audit --mechanism '" + path + "'").out == labeldp::io::json_number(eps) + "\n");
  // Against a budget: within_eps is decided exactly on the stored numbers.
  const auto in = nlohmann::json::parse(run("audit --mechanism '" + path + "' --eps 1.09861228866811 --json").out);
  CHECK(in["within_eps"] == true);  // ln 3 + 2e-16: 0.75 <= e^eps * 0.25 exactly
  const auto out = nlohmann::json::parse(run("audit --mechanism '" + path + "' --eps 1.09 --json").out);
  CHECK(out["within_eps"] == false);
  CHECK(out["epsilon"].get<double>() == eps);
  require_bad_input(run("audit --mechanism '" + path + "' --eps 0 --json"), "'--eps' must be a finite number > 0");
}

TEST_CASE("cli audit: a tiny eps is printed to full relative accuracy, rounded up", "[cli][audit]") {
  REQUIRE_CLI();
  // P = [[a, 1-a], [1-a, a]] with a = 0.5 + 5e-13: level ln(a/(1-a)) ~ 2e-12, which a difference
  // of logarithms gets wrong in the 4th digit.
  const double a = 0.5 + 5e-13;
  const auto path =
      write("tiny.json", "{\"probabilities\":[[" + labeldp::io::json_number(a) + "," + labeldp::io::json_number(1 - a) +
                             "],[" + labeldp::io::json_number(1 - a) + "," + labeldp::io::json_number(a) + "]]}");
  const double eps = nlohmann::json::parse(run("audit --mechanism '" + path + "' --json").out)["epsilon"].get<double>();
  const long double exact =
      std::log1p((static_cast<long double>(a) - static_cast<long double>(1 - a)) / static_cast<long double>(1 - a));
  CHECK(static_cast<long double>(eps) >= exact);
  CHECK(static_cast<long double>(eps) <= exact * (1 + 1e-15L));
}

TEST_CASE("cli audit agrees with a brute-force audit on random mechanisms", "[cli][audit]") {
  REQUIRE_CLI();
  std::mt19937_64 gen(99);
  std::uniform_real_distribution<double> u(0.001, 1.0);
  for (int t = 0; t < 8; ++t) {
    const labeldp::Index k = 2 + t % 4, d = 1 + t % 5;
    labeldp::Vector<double> in(k), out(d);
    for (labeldp::Index i = 0; i < k; ++i) in[i] = double(i) * 1.5;
    for (labeldp::Index j = 0; j < d; ++j) out[j] = double(j) - 0.5;
    labeldp::Matrix<double> p(k, d);
    for (labeldp::Index i = 0; i < k; ++i) {
      for (labeldp::Index j = 0; j < d; ++j) p(i, j) = u(gen);
      p.row(i) /= p.row(i).sum();
    }
    const labeldp::FiniteMechanism<double> m(in, out, p);
    const auto path = write("rand.json", std::string("{") + labeldp::io::mechanism_json_fields(m) + "}");
    const auto r = run("audit --mechanism '" + path + "' --json");
    REQUIRE(r.status == 0);
    const double eps = nlohmann::json::parse(r.out)["epsilon"].get<double>();
    INFO("trial " << t);
    CHECK(eps == Approx(brute_epsilon(p)).epsilon(1e-12).margin(1e-15));
  }
}

TEST_CASE("cli audit: a column zero for some inputs only gives \"inf\"", "[cli][audit]") {
  REQUIRE_CLI();
  const auto path = write("inf.json", R"({"probabilities":[[1,0],[0.5,0.5]]})");
  const auto r = run("audit --mechanism '" + path + "' --json");
  CHECK(r.status == 0);
  CHECK(r.out == "{\"epsilon\":\"inf\"}\n");
  // An all-zero column is ignored: this mechanism is 0-DP.
  const auto z = run("audit --mechanism '" + write("zero.json", R"({"probabilities":[[1,0],[1,0]]})") + "' --json");
  CHECK(z.out == "{\"epsilon\":0}\n");
}

TEST_CASE("cli audit reads the output of `labeldp bins` (epsilon equals --eps)", "[cli][audit]") {
  REQUIRE_CLI();
  const auto prior = write("bins_prior.csv", "value,prob\n0,0.6\n1,0.25\n2,0.15\n");
  const auto b = run("bins --prior '" + prior + "' --eps 0.5 --json");
  if (b.status != 0) {
    WARN("labeldp bins unavailable (" << b.err << "): skipped");
    return;
  }
  const auto path = write("bins.json", b.out);
  const auto r = run("audit --mechanism '" + path + "' --json");
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.out)["epsilon"].get<double>() == Approx(0.5).epsilon(1e-12));
}

TEST_CASE("cli audit rejects a negative probability", "[cli][audit]") {
  REQUIRE_CLI();
  const auto path =
      write("neg.json", "{\"inputs\":[0,1],\"outputs\":[0,1],\n\"probabilities\":[[1.1,-0.1],\n[0.5,0.5]]}");
  require_bad_input(run("audit --mechanism neg.json --json"),
                    "neg.json:2: probability -0.1 at row 0, column 1 is negative");
}

TEST_CASE("cli audit rejects a row not summing to 1", "[cli][audit]") {
  REQUIRE_CLI();
  write("sum.json", "{\"probabilities\":[[0.5,0.5],\n[0.5,0.4999]]}");
  require_bad_input(run("audit --mechanism sum.json --json"), "sum.json:2: probabilities row 1 sums to 0.9999");
}

TEST_CASE("cli audit accepts a row off by less than 1e-9", "[cli][audit]") {
  REQUIRE_CLI();
  write("sum_ok.json", "{\"probabilities\":[[0.5,0.5000000005],[0.5,0.5]]}");
  CHECK(run("audit --mechanism sum_ok.json --json").status == 0);
}

TEST_CASE("cli audit rejects a non-numeric probability", "[cli][audit]") {
  REQUIRE_CLI();
  write("str.json", "{\"probabilities\":[[0.5,\"half\"],[0.5,0.5]]}");
  require_bad_input(run("audit --mechanism str.json --json"),
                    "str.json:1: probability \"half\" at row 0, column 1 is not a number");
}

TEST_CASE("cli audit rejects invalid JSON", "[cli][audit]") {
  REQUIRE_CLI();
  write("trunc.json", "{\"probabilities\":[[1,0],\n[0.5,0.5]");
  require_bad_input(run("audit --mechanism trunc.json --json"), "trunc.json:2:10: unexpected end of input");
}

TEST_CASE("cli audit rejects an overflowing number", "[cli][audit]") {
  REQUIRE_CLI();
  write("big.json", "{\"probabilities\":[[1e400]]}");
  require_bad_input(run("audit --mechanism big.json --json"),
                    "big.json:1:20: number '1e400' is out of range (it overflows to infinity)");
}

TEST_CASE("cli audit: the one JSON reader refuses duplicate keys and trailing data", "[cli][audit]") {
  REQUIRE_CLI();
  write("dup.json", "{\"probabilities\":[[1]],\n\"probabilities\":[[0.5,0.5]]}");
  require_bad_input(run("audit --mechanism dup.json --json"), "dup.json:2:");
  CHECK_THAT(run("audit --mechanism dup.json --json").err, Contains("probabilities"));
  write("trail.json", "{\"probabilities\":[[1]]} {}");
  require_bad_input(run("audit --mechanism trail.json --json"), "trail.json:1:");
}

TEST_CASE("cli audit rejects a missing file", "[cli][audit]") {
  REQUIRE_CLI();
  require_bad_input(run("audit --mechanism nope.json --json"), "nope.json: cannot open file");
}

TEST_CASE("cli audit rejects a file without probabilities", "[cli][audit]") {
  REQUIRE_CLI();
  write("noprob.json", "{\"inputs\":[0,1]}");
  require_bad_input(run("audit --mechanism noprob.json --json"), "noprob.json:1: no \"probabilities\" field");
}

TEST_CASE("cli audit rejects ragged rows", "[cli][audit]") {
  REQUIRE_CLI();
  write("ragged.json", "{\"probabilities\":[[0.5,0.5],\n\n[1]]}");
  require_bad_input(run("audit --mechanism ragged.json --json"),
                    "ragged.json:3: probabilities row 1 has 1 entries, row 0 has 2");
}

TEST_CASE("cli audit rejects inputs that do not match the rows", "[cli][audit]") {
  REQUIRE_CLI();
  write("inputs.json", "{\"inputs\":[0,1,2],\"probabilities\":[[1],[1]]}");
  require_bad_input(run("audit --mechanism inputs.json --json"),
                    "inputs.json:1: \"inputs\" has 3 values but \"probabilities\" has 2 rows");
}

TEST_CASE("cli audit rejects a missing --mechanism", "[cli][audit]") {
  REQUIRE_CLI();
  require_bad_input(run("audit --json"), "--mechanism is required");
}

// ---------------------------------------------------------------------------------------------
// privatize

TEST_CASE("cli privatize: --seed is deterministic; stdin and two-pass file input agree", "[cli][privatize]") {
  REQUIRE_CLI();
  std::string labels;
  for (int i = 0; i < 500; ++i) labels += std::to_string(i % 37) + "." + std::to_string(i % 10) + "\n";
  const auto file = write("labels.txt", labels);
  const std::string flags = " --eps 1 --lo 0 --hi 40 --resolution 5 --seed 12345";
  const auto a = run("privatize" + flags, labels);
  const auto b = run("privatize" + flags, labels);
  const auto c = run("privatize --input '" + file + "'" + flags);
  REQUIRE(a.status == 0);
  CHECK(a.err.empty());
  CHECK(lines(a.out).size() == 500);
  CHECK(a.out == b.out);
  CHECK(a.out == c.out);
  const auto other = run("privatize --eps 1 --lo 0 --hi 40 --resolution 5 --seed 54321", labels);
  CHECK(other.out != a.out);
  std::set<std::string> distinct;
  for (const auto& l : lines(a.out)) distinct.insert(l);
  CHECK(distinct.size() <= 9);  // outputs of RR-on-Bins over 9 support points
}

TEST_CASE("cli privatize with a public prior samples the optimal RR-on-Bins exactly (chi-square)", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto prior_path = write("pub_prior.csv", "value,prob\n0,0.6\n1,0.25\n2,0.15\n");
  const auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  const auto rr = labeldp::optimal_rr_on_bins(prior, 0.5);
  REQUIRE(rr.num_outputs() == 2);
  const auto realized = rr.realized_probabilities();
  std::string labels;
  const int n = 20000;
  for (int i = 0; i < n; ++i) labels += "0\n";
  const auto r = run("privatize --eps 0.5 --prior '" + prior_path + "' --seed 7", labels);
  REQUIRE(r.status == 0);
  std::vector<long long> observed(2, 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == std::size_t(n));
  for (const auto& l : out) {
    if (l == labeldp::io::json_number(rr.outputs()[0]))
      ++observed[0];
    else if (l == labeldp::io::json_number(rr.outputs()[1]))
      ++observed[1];
    else
      FAIL("unexpected output " << l);
  }
  const auto fit = labeldp::test::chi_square(observed, {double(realized(0, 0)), double(realized(0, 1))});
  INFO("observed " << observed[0] << " / " << observed[1] << " p " << fit.p_value);
  CHECK(fit.p_value > 1e-4);
}

TEST_CASE("cli privatize: the CPS wage column to an output file, atomically", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto out_path = (scratch() / "wages_private.txt").string();
  const std::string flags = " --eps 2 --lo 0 --hi 5000 --resolution 50 --seed 3";
  const auto r = run("privatize --input '" + data_file("cps1988.csv") + "' --column wage --labels-only --output '" +
                     out_path + "'" + flags);
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  const auto written = lines(slurp(out_path));
  CHECK(written.size() == 28155);
  const auto to_stdout =
      run("privatize --input '" + data_file("cps1988.csv") + "' --column wage --labels-only" + flags);
  CHECK(to_stdout.out == slurp(out_path));
  for (const auto& l : written) {
    const double v = std::stod(l);
    REQUIRE(v >= 0);
    REQUIRE(v <= 5000);
  }
  // No temporary file is left next to the output.
  int files = 0;
  for (const auto& e : fs::directory_iterator(scratch()))
    if (e.path().filename().string().find("wages_private") != std::string::npos) ++files;
  CHECK(files == 1);
}

TEST_CASE("cli privatize: absolute and Poisson losses, support file, floor rounding", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto support = write("support.csv", "value\n0\n1\n2\n5\n10\n");
  const std::string labels = "0\n1\n1\n2\n3\n7\n12\n0.5\n";
  for (const char* loss : {"squared", "absolute", "poisson"}) {
    const auto r = run(std::string("privatize --eps 3 --eps-prior 0.5 --support '") + support +
                           "' --rounding floor --loss " + loss + " --seed 1",
                       labels);
    INFO(loss << ": " << r.err);
    REQUIRE(r.status == 0);
    CHECK(lines(r.out).size() == 8);
  }
}

TEST_CASE("cli privatize rejects a missing --eps", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --lo 0 --hi 1 --resolution 1", "1\n"), "--eps is required");
}

TEST_CASE("cli privatize rejects --eps 0", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 0 --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--eps' must be a finite number > 0, got '0'");
}

TEST_CASE("cli privatize rejects a negative --eps", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps=-1 --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--eps' must be a finite number > 0, got '-1'");
}

TEST_CASE("cli privatize rejects --eps nan", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps nan --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--eps' must be a finite number, got 'nan'");
}

TEST_CASE("cli privatize rejects --eps inf", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps inf --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--eps' must be a finite number, got 'inf'");
}

TEST_CASE("cli privatize rejects a non-numeric --eps", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps abc --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--eps' must be a finite number, got 'abc'");
}

TEST_CASE("cli privatize rejects --eps-prior >= --eps", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --eps-prior 1 --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--eps-prior' must be less than '--eps' (1), got '1'");
}

TEST_CASE("cli privatize rejects --eps-prior 0", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --eps-prior 0 --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--eps-prior' must be a finite number > 0, got '0'");
}

TEST_CASE("cli privatize rejects a non-integer --seed", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --seed 1.5 --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--seed' must be an integer in [0, 2^64), got '1.5'");
}

TEST_CASE("cli privatize rejects an unknown --loss", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --loss huber --lo 0 --hi 1 --resolution 1", "1\n"),
                    "'--loss' must be squared, absolute or poisson, got 'huber'");
}

TEST_CASE("cli privatize rejects an unknown --rounding", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --rounding up --lo 0 --hi 1 --resolution 1", "1\n"),
                    "--rounding: up not in");
}

TEST_CASE("cli privatize rejects --resolution 0", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 1 --resolution 0", "1\n"),
                    "'--resolution' must be a finite number > 0, got '0'");
}

TEST_CASE("cli privatize rejects a resolution giving too many points", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 1 --resolution 1e-12", "1\n"), "'--resolution' 1e-12:");
}

TEST_CASE("cli privatize rejects --hi <= --lo", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo 5 --hi 5 --resolution 1", "1\n"),
                    "'--hi' must be greater than '--lo' (5), got '5'");
}

TEST_CASE("cli privatize rejects a grid without --resolution", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 5", "1\n"), "'--resolution' is missing");
}

TEST_CASE("cli privatize rejects no discretization at all", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1", "1\n"), "no public discretization");
}

TEST_CASE("cli privatize rejects --support together with a grid", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto support = write("sup2.csv", "value\n0\n1\n");
  require_bad_input(run("privatize --eps 1 --support '" + support + "' --lo 0", "1\n"),
                    "'--support' cannot be combined");
}

TEST_CASE("cli privatize rejects --prior together with --eps-prior", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto prior = write("p2.csv", "value,prob\n0,1\n");
  require_bad_input(run("privatize --eps 1 --prior '" + prior + "' --eps-prior 0.1", "0\n"),
                    "'--eps-prior' cannot be used with '--prior'");
}

TEST_CASE("cli privatize rejects --prior together with a grid", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto prior = write("p3.csv", "value,prob\n0,1\n");
  require_bad_input(run("privatize --eps 1 --prior '" + prior + "' --resolution 1", "0\n"),
                    "'--prior' sets the support");
}

TEST_CASE("cli privatize rejects a bad prior file with its line and value", "[cli][privatize]") {
  REQUIRE_CLI();
  write("prior.csv", "value,prob\n0,0.5\n1,0.3\n2,0.3\n3,0\n4,0\n5,-0.1\n");
  require_bad_input(run("privatize --eps 1 --prior prior.csv", "0\n"),
                    "labeldp: error: prior.csv:7: probability -0.1 is negative");
}

TEST_CASE("cli privatize rejects a duplicate support value", "[cli][privatize]") {
  REQUIRE_CLI();
  write("dup_support.csv", "value\n0\n1\n0\n");
  require_bad_input(run("privatize --eps 1 --support dup_support.csv", "0\n"),
                    "dup_support.csv:4: duplicate value 0 (also on line 2)");
}

TEST_CASE("cli privatize: --column without --input reads a CSV with a header from standard input", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto r = run("privatize --eps 1 --lo 0 --hi 1 --resolution 1 --column wage --seed 1", "wage\n1\n0\n");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == "wage");
}

TEST_CASE("cli privatize rejects a missing input file", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 1 --resolution 1 --input missing.txt"),
                    "missing.txt: cannot open file");
}

TEST_CASE("cli privatize rejects a missing column", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(
      run("privatize --eps 1 --lo 0 --hi 1 --resolution 1 --input '" + data_file("cps1988.csv") + "' --column salary"),
      "cps1988.csv:1: no column 'salary'");
}

TEST_CASE("cli privatize rejects a bad label: no output file, nothing on stdout", "[cli][privatize]") {
  REQUIRE_CLI();
  std::string labels;
  for (int i = 0; i < 100000; ++i) labels += "1\n";  // more than the output buffer
  labels += "oops\n";
  const auto out_path = (scratch() / "never.txt").string();
  write("bad_labels.txt", labels);
  require_bad_input(
      run("privatize --eps 1 --lo 0 --hi 1 --resolution 1 --input bad_labels.txt --output '" + out_path + "'"),
      "bad_labels.txt:100001: label is not a number");
  CHECK_FALSE(fs::exists(out_path));
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 1 --resolution 1 --prior-free-typo", labels), "");
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 1 --resolution 1", labels),
                    "<stdin>:100001: label is not a number");
  int leftovers = 0;
  for (const auto& e : fs::directory_iterator(scratch()))
    if (e.path().filename().string().find("never.txt") != std::string::npos) ++leftovers;
  CHECK(leftovers == 0);
}

TEST_CASE("cli privatize rejects empty input", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 1 --resolution 1", ""), "<stdin>: no labels to privatize");
}

TEST_CASE("cli privatize rejects a negative support value with Poisson loss", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo=-1 --hi 1 --resolution 1 --loss poisson", "1\n"),
                    "support value -1 is not allowed with '--loss poisson'");
}

TEST_CASE("cli privatize rejects an output path in a missing directory", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo 0 --hi 1 --resolution 1 --output no/such/dir/out.txt", "1\n"),
                    "no/such/dir/out.txt: cannot write file");
}

TEST_CASE("cli privatize rejects a missing --prior file", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --prior no_prior.csv", "0\n"), "no_prior.csv: cannot open file");
}

TEST_CASE("cli privatize rejects a missing --support file", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --support no_support.csv", "0\n"), "no_support.csv: cannot open file");
}

TEST_CASE("cli privatize rejects a support file without the 'value' header", "[cli][privatize]") {
  REQUIRE_CLI();
  write("support_hdr.csv", "output\n1\n");
  require_bad_input(run("privatize --eps 1 --support support_hdr.csv", "0\n"),
                    "support_hdr.csv:1: no column 'value' in header 'output'");
}

TEST_CASE("cli privatize rejects a non-numeric --lo", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --lo abc --hi 1 --resolution 1", "0\n"),
                    "'--lo' must be a finite number, got 'abc'");
}

TEST_CASE("cli privatize rejects a non-numeric label in a CSV column", "[cli][privatize]") {
  REQUIRE_CLI();
  write("col_bad.csv", "id,wage\n1,300\n2,n/a\n");
  const auto r = run("privatize --eps 1 --lo 0 --hi 500 --resolution 50 --input col_bad.csv --column wage");
  require_bad_input(r, "col_bad.csv:3: label in column 'wage' is not a number");
  CHECK_THAT(r.err, !Contains("n/a"));  // a label is never echoed
}

TEST_CASE("cli audit rejects a JSON document that is not an object", "[cli][audit]") {
  REQUIRE_CLI();
  write("array.json", "[[1]]");
  require_bad_input(run("audit --mechanism array.json --json"), "array.json:1: expected a JSON object");
}

// ---------------------------------------------------------------------------------------------
// unbiased / optimal: the certificate fields and --time-limit

namespace {

// A 40-label near-uniform prior (probabilities 1..3 repeating) as a prior CSV.
std::string near_uniform_prior_file() {
  std::string text = "value,count\n";
  for (int i = 0; i < 40; ++i) text += std::to_string(10 + 3 * i + (i % 3)) + "," + std::to_string(1 + i % 3) + "\n";
  return write("near_uniform.csv", text);
}

// The mechanism fields of a construction command's JSON: checks rows sum to 1, the brute-force
// audit is within eps, and (unbiased) every conditional mean equals its input.
void check_mechanism_json(const nlohmann::json& j, double eps, bool unbiased) {
  const auto inputs = j.at("inputs").get<std::vector<double>>();
  const auto outputs = j.at("outputs").get<std::vector<double>>();
  const auto rows = j.at("probabilities").get<std::vector<std::vector<double>>>();
  REQUIRE(rows.size() == inputs.size());
  labeldp::Matrix<double> p(labeldp::Index(rows.size()), labeldp::Index(outputs.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == outputs.size());
    double sum = 0, mean = 0;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      CHECK(rows[i][o] >= 0);
      p(labeldp::Index(i), labeldp::Index(o)) = rows[i][o];
      sum += rows[i][o];
      mean += rows[i][o] * outputs[o];
    }
    CHECK(std::abs(sum - 1) <= 1e-9);
    if (unbiased) CHECK(std::abs(mean - inputs[i]) <= 1e-7 * std::max(1.0, std::abs(inputs[i])));
  }
  CHECK(brute_epsilon(p) <= eps * (1 + 1e-12));
}

// The certificate: a lower bound at most the loss, within `gap` of it.
void check_certificate(const nlohmann::json& j) {
  REQUIRE(j.contains("lower_bound"));
  REQUIRE(j.contains("gap"));
  const double loss = j.at("expected_loss").get<double>(), bound = j.at("lower_bound").get<double>();
  const double gap = j.at("gap").get<double>();
  CHECK(gap >= 0);
  CHECK(bound <= loss * (1 + 1e-12));
  CHECK(loss - bound <= gap * loss * (1 + 1e-9) + 1e-12 * loss);
  if (j.at("status") == "optimal") CHECK(gap <= 1e-9);
}

}  // namespace

TEST_CASE("cli unbiased --continuous and --grid print a certified lower bound", "[cli][unbiased]") {
  REQUIRE_CLI();
  const std::string prior = near_uniform_prior_file();
  for (const std::string mode : {"--continuous", "--grid 60", "--continuous --max-bias 5", "--grid 60 --max-bias 5"}) {
    for (const double eps : {0.5, 2.0, 8.0}) {
      INFO(mode << " eps " << eps);
      std::ostringstream eps_text;
      eps_text << eps;
      const auto r = run("unbiased --prior " + prior + " --eps " + eps_text.str() + " " + mode + " --json");
      INFO("stderr: " << r.err);
      REQUIRE(r.status == 0);
      const auto j = nlohmann::json::parse(r.out);
      const bool bounded = mode.find("max-bias") != std::string::npos;
      if (bounded && mode.find("continuous") != std::string::npos && j.at("status") == "numerical-issue") {
        // Known limit (issue 11, open): the bias-bounded continuous certificate can stay above
        // 1e-9; the status and stderr say so and the gap is printed.
        CHECK_THAT(r.err, StartsWith("labeldp: warning: numerical-issue reached"));
        CHECK(j.at("gap").get<double>() <= 1e-3);
      } else {
        CHECK(j.at("status") == "optimal");
      }
      check_certificate(j);
      check_mechanism_json(j, eps, !bounded);
    }
  }
  // The grid optimum is never below the continuous one (the continuous problem has every output).
  const auto cont = nlohmann::json::parse(run("unbiased --prior " + prior + " --eps 1 --continuous --json").out);
  const auto grid = nlohmann::json::parse(run("unbiased --prior " + prior + " --eps 1 --grid 60 --json").out);
  CHECK(cont.at("lower_bound").get<double>() <= grid.at("expected_loss").get<double>() * (1 + 1e-12));
}

TEST_CASE("cli optimal prints status, lower bound and gap", "[cli][optimal]") {
  REQUIRE_CLI();
  const std::string prior = near_uniform_prior_file();
  std::string outputs = "output\n";
  for (int i = 0; i <= 80; ++i) outputs += std::to_string(10 + 1.5 * i) + "\n";
  write("outputs81.csv", outputs);
  for (const std::string eps : {"0.05", "1", "12"}) {
    INFO("eps " << eps);
    const auto r = run("optimal --prior " + prior + " --eps " + eps + " --outputs outputs81.csv --json");
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("status") == "optimal");
    check_certificate(j);
    check_mechanism_json(j, std::stod(eps), false);
  }
}

TEST_CASE("cli --time-limit 0 answers with a feasible mechanism and its gap, or optimal", "[cli][unbiased][optimal]") {
  REQUIRE_CLI();
  const std::string prior = near_uniform_prior_file();
  for (const std::string mode : {"--grid 400", "--continuous", "--grid 200 --max-bias 2"}) {
    INFO(mode);
    const auto r = run("unbiased --prior " + prior + " --eps 4 " + mode + " --time-limit 0 --json");
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    const std::string status = j.at("status");
    CHECK((status == "optimal" || status == "time-limit" || status == "numerical-issue"));
    if (status != "optimal") CHECK_THAT(r.err, StartsWith("labeldp: warning: " + status + " reached"));
    check_certificate(j);
    check_mechanism_json(j, 4, mode.find("max-bias") == std::string::npos);
  }
}

TEST_CASE("cli unbiased and optimal reject a bad --time-limit", "[cli][unbiased][optimal]") {
  REQUIRE_CLI();
  const std::string prior = near_uniform_prior_file();
  require_bad_input(run("unbiased --prior " + prior + " --eps 1 --grid 10 --time-limit -1"),
                    "--time-limit must be a number of seconds >= 0, got -1");
  require_bad_input(run("unbiased --prior " + prior + " --eps 1 --grid 10 --time-limit nan"), "--time-limit");
  write("outputs3.csv", "output\n0\n1\n2\n");
  require_bad_input(run("optimal --prior " + prior + " --eps 1 --outputs outputs3.csv --time-limit -0.5"),
                    "--time-limit must be a number of seconds >= 0, got -0.5");
  require_bad_input(run("optimal --prior " + prior + " --eps 1 --outputs outputs3.csv --time-limit abc"),
                    "--time-limit");
}
