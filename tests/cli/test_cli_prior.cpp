// End-to-end tests of `labeldp prior` (the labeldp CLI contract): its prior file is accepted by
// `bins --prior`, its noise follows the exact discrete Laplace distribution of Algorithm 4
// (Ghazi et al. 2023) and an under-noised variant is rejected by the same test, every error path
// gives exit status 2, nothing on stdout and one stderr line that never quotes a label, and
// `--output` is written atomically. The program is run as a separate process, looked up next to
// this test executable; when it was not built the tests warn and do nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <labeldp/io/csv.hpp>
#include <labeldp/prior/private_histogram.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_harness.hpp"
#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;
using namespace labeldp::test::cli;

namespace {

const std::string kGrid = " --lo 0 --hi 40 --resolution 10";

std::string labels_file() { return write("labels.csv", "id,wage,city\n1,3,a\n2,12.5,b\n3,40,c\n4,-7,d\n5,1e9,e\n"); }

}  // namespace

TEST_CASE("cli prior: the prior file is accepted by bins --prior", "[cli][prior]") {
  REQUIRE_CLI();
  const std::string labels = labels_file();
  const auto r = run("prior --input '" + labels + "' --column wage --eps 2 --seed 5 --output p.csv" + kGrid);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  const std::string file = slurp(scratch() / "p.csv");
  CHECK_THAT(file, StartsWith("value,prob\n0,"));
  CHECK_NOTHROW(labeldp::io::read_prior_csv((scratch() / "p.csv").string()));
  const auto bins = run("bins --prior p.csv --eps 1 --json");
  INFO("bins stderr: " << bins.err);
  CHECK(bins.status == 0);
  CHECK(nlohmann::json::parse(bins.out).at("mechanism") == "rr-on-bins");
  // Without --output the same CSV goes to stdout.
  const auto to_stdout = run("prior --input '" + labels + "' --column wage --eps 2 --seed 5" + kGrid);
  CHECK(to_stdout.status == 0);
  CHECK(to_stdout.out == file);
  // The CPS wages on the README's grid, and standard input.
  const auto cps = run("prior --input '" + data_file("cps1988.csv") +
                       "' --column wage --eps 0.1 --lo 0 --hi 5000 --resolution 50 --output cps_prior.csv");
  INFO("cps stderr: " << cps.err);
  REQUIRE(cps.status == 0);
  CHECK(run("bins --prior cps_prior.csv --eps 1 --json").status == 0);
  const auto piped = run("prior --input - --column wage --eps 2 --seed 5" + kGrid, slurp(labels));
  CHECK(piped.status == 0);
  CHECK(piped.out == file);
}

TEST_CASE("cli prior --json: counts, clipping at 0 and normalization; --seed is deterministic", "[cli][prior]") {
  REQUIRE_CLI();
  const std::string labels = labels_file();
  const auto a = run("prior --input '" + labels + "' --column wage --eps 1 --seed 9 --json" + kGrid);
  INFO("stderr: " << a.err);
  REQUIRE(a.status == 0);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j.at("eps") == 1.0);
  CHECK(j.at("n") == 5);
  CHECK(j.at("values").get<std::vector<double>>() == std::vector<double>{0, 10, 20, 30, 40});
  const auto probs = j.at("probs").get<std::vector<double>>();
  const auto noisy = j.at("noisy_counts").get<std::vector<std::int64_t>>();
  REQUIRE(noisy.size() == 5);
  double total = 0;
  for (auto c : noisy) total += double(std::max<std::int64_t>(c, 0));
  if (j.at("uniform_fallback").get<bool>()) {
    for (double p : probs) CHECK(p == Approx(0.2).epsilon(1e-15));
  } else {
    for (std::size_t i = 0; i < 5; ++i) CHECK(probs[i] == Approx(double(std::max<std::int64_t>(noisy[i], 0)) / total));
  }
  CHECK(run("prior --input '" + labels + "' --column wage --eps 1 --seed 9 --json" + kGrid).out == a.out);
  CHECK(run("prior --input '" + labels + "' --column wage --eps 1 --seed 10 --json" + kGrid).out != a.out);
  // Clipped and rounded as privatize does: 3 -> 0, 12.5 -> 10, 40 -> 40, -7 -> 0, 1e9 -> 40.
  const auto exact =
      nlohmann::json::parse(run("prior --input '" + labels + "' --column wage --eps 1e6 --seed 1 --json" + kGrid).out);
  CHECK(exact.at("noisy_counts").get<std::vector<std::int64_t>>() == std::vector<std::int64_t>{2, 1, 0, 0, 2});
}

TEST_CASE("cli prior: when every noisy count is <= 0 the prior is uniform, and a warning says so", "[cli][prior]") {
  REQUIRE_CLI();
  const std::string labels = write("one.csv", "y\n0\n");
  const std::string support = write("support01.csv", "value\n0\n1\n");
  bool found = false;
  for (int seed = 1; seed <= 60 && !found; ++seed) {
    const auto r = run("prior --input '" + labels + "' --column y --eps 0.01 --support '" + support +
                       "' --json --seed " + std::to_string(seed));
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    if (!j.at("uniform_fallback").get<bool>()) continue;
    found = true;
    for (auto c : j.at("noisy_counts").get<std::vector<std::int64_t>>()) CHECK(c <= 0);
    CHECK(j.at("probs").get<std::vector<double>>() == std::vector<double>{0.5, 0.5});
    CHECK_THAT(r.err, StartsWith("labeldp: warning: every noisy count is <= 0"));
  }
  CHECK(found);  // about 1 seed in 4 gives two non-positive counts at this eps
}

namespace {

// Chi-square of the noise samples Z = noisy - count against the two-sided geometric pmf with
// ratio alpha (cells |z| <= zmax, each tail one cell); returns z = (X^2 - dof) / sqrt(2 dof).
double noise_z(const std::vector<std::int64_t>& z_samples, double alpha) {
  const std::int64_t zmax = 30;
  std::vector<long long> observed(std::size_t(2 * zmax + 3), 0);
  for (auto z : z_samples) ++observed[z < -zmax ? 0 : z > zmax ? observed.size() - 1 : std::size_t(z + zmax + 1)];
  std::vector<double> probs(observed.size());
  // P(Z > zmax) = alpha^(zmax+1) / (1 + alpha), and the same below -zmax.
  probs.front() = probs.back() = std::pow(alpha, double(zmax + 1)) / (1 + alpha);
  for (std::int64_t z = -zmax; z <= zmax; ++z)
    probs[std::size_t(z + zmax + 1)] = labeldp::two_sided_geometric_pmf(z, alpha);
  const auto fit = labeldp::test::chi_square(observed, probs);
  return (fit.statistic - fit.dof) / std::sqrt(2.0 * fit.dof);
}

}  // namespace

TEST_CASE("cli prior: noisy counts follow the exact discrete Laplace of scale 2/eps (chi-square)", "[cli][prior]") {
  REQUIRE_CLI();
  // Tiny input on a 41-point support: counts 1 at 0, 2 at 3, 0 elsewhere.
  const std::string labels = write("tiny.csv", "y\n0\n3\n3\n");
  const std::vector<std::int64_t> counts = [] {
    std::vector<std::int64_t> c(41, 0);
    c[0] = 1;
    c[3] = 2;
    return c;
  }();
  const double eps = 1;
  std::vector<std::int64_t> z;
  for (int seed = 1; seed <= 200; ++seed) {
    const auto r = run("prior --input '" + labels +
                       "' --column y --eps 1 --lo 0 --hi 40 --resolution 1 --json --seed " + std::to_string(seed));
    REQUIRE(r.status == 0);
    const auto noisy = nlohmann::json::parse(r.out).at("noisy_counts").get<std::vector<std::int64_t>>();
    REQUIRE(noisy.size() == counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) z.push_back(noisy[i] - counts[i]);
  }
  const double fit = noise_z(z, labeldp::private_histogram_alpha(eps));
  INFO("samples " << z.size() << ", chi-square z = " << fit);
  CHECK(fit < 6);
  // The same samples against an under-noised mutant (eps doubled: scale 1/eps) must be rejected.
  const double mutant = noise_z(z, labeldp::private_histogram_alpha(2 * eps));
  INFO("mutant chi-square z = " << mutant);
  CHECK(mutant > 6);
}

TEST_CASE("cli prior: bad flags are refused before reading input", "[cli][prior]") {
  REQUIRE_CLI();
  const std::string in = " --input '" + labels_file() + "' --column wage";
  require_bad_input(run("prior" + in + kGrid), "--eps is required");
  require_bad_input(run("prior" + in + kGrid + " --eps 0"), "'--eps' must be a finite number > 0, got '0'");
  require_bad_input(run("prior" + in + kGrid + " --eps=-1"), "'--eps' must be a finite number > 0, got '-1'");
  require_bad_input(run("prior" + in + kGrid + " --eps nan"), "'--eps' must be a finite number, got 'nan'");
  require_bad_input(run("prior" + in + kGrid + " --eps inf"), "'--eps' must be a finite number, got 'inf'");
  require_bad_input(run("prior" + in + kGrid + " --eps abc"), "'--eps' must be a finite number, got 'abc'");
  require_bad_input(run("prior" + in + kGrid + " --eps 1 --seed 1.5"), "'--seed' must be an integer");
  // The exact sampler is O(1) per count at any scale: a tiny budget runs (the prior is then
  // mostly noise); below 2^-41 the noise cannot be represented and the budget is refused.
  CHECK(run("prior" + in + kGrid + " --eps 1e-9 --seed 1").status == 0);
  CHECK(run("prior" + in + kGrid + " --eps 4.6e-13 --seed 1").status == 0);
  require_bad_input(run("prior" + in + kGrid + " --eps 1e-300"),
                    "'--eps' 1e-300 is too small for the prior's histogram: it must be at least 2^-41");
  CHECK(run("prior" + in + kGrid + " --eps 1e300 --seed 1").status == 0);
  require_bad_input(run("prior" + in + " --eps 1 --lo 5 --hi 5 --resolution 1"),
                    "'--hi' must be greater than '--lo' (5), got '5'");
  require_bad_input(run("prior" + in + " --eps 1 --lo 9 --hi 1 --resolution 1"), "'--hi' must be greater than '--lo'");
  require_bad_input(run("prior" + in + " --eps 1 --lo 0 --hi 1"), "'--resolution' is missing");
  require_bad_input(run("prior" + in + " --eps 1 --lo 0 --hi 1 --resolution 0"),
                    "'--resolution' must be a finite number > 0");
  require_bad_input(run("prior" + in + " --eps 1 --lo 0 --hi 1 --resolution 1e-12"), "'--resolution' 1e-12:");
  require_bad_input(run("prior" + in + " --eps 1"), "no public support");
  require_bad_input(run("prior --column wage --eps 1" + kGrid), "--input is required");
  require_bad_input(run("prior --input x.csv --eps 1" + kGrid), "--column is required");
  require_bad_input(run("prior --input missing.csv --column wage --eps 1" + kGrid), "missing.csv: cannot open file");
}

TEST_CASE("cli prior: bad support files are refused naming file and line", "[cli][prior]") {
  REQUIRE_CLI();
  const std::string in = "prior --input '" + labels_file() + "' --column wage --eps 1 ";
  write("dup.csv", "value\n0\n1\n0\n");
  require_bad_input(run(in + "--support dup.csv"), "dup.csv:4: duplicate value 0 (also on line 2)");
  write("hdr.csv", "output\n1\n");
  require_bad_input(run(in + "--support hdr.csv"), "hdr.csv:1: no column 'value' in header 'output'");
  write("nan.csv", "value\n1\nabc\n");
  require_bad_input(run(in + "--support nan.csv"), "nan.csv:3: value 'abc' is not a number");
  write("empty_support.csv", "value\n");
  require_bad_input(run(in + "--support empty_support.csv"), "empty_support.csv:2: no support values");
  require_bad_input(run(in + "--support nosuch.csv"), "nosuch.csv: cannot open file");
  write("ok_support.csv", "value\n0\n1\n");
  require_bad_input(run(in + "--support ok_support.csv --lo 0"), "'--support' cannot be combined");
}

TEST_CASE("cli prior: bad labels are named by file and line, never by value", "[cli][prior]") {
  REQUIRE_CLI();
  const std::string flags = " --eps 1" + kGrid;
  require_bad_input(run("prior --input '" + labels_file() + "' --column salary" + flags),
                    "labels.csv:1: no column 'salary' in header 'id,wage,city'");
  struct Case {
    std::string text, fragment;
  };
  const std::vector<Case> cases = {
      {"id,wage\n1,3\n2,\n", "bad.csv:3: label in column 'wage' is missing"},
      {"id,wage\n1,3\n2,3\n3,SECRET-77\n", "bad.csv:4: label in column 'wage' is not a number"},
      {"id,wage\n1,SECRETinf\n", "bad.csv:2: label in column 'wage' is not a number"},
      {"id,wage\n1,inf\n", "bad.csv:2: label in column 'wage' is not finite"},
      {"id,wage\n1,3,SECRET\n", "bad.csv:2: expected 2 fields, got 3"},
      {"id,wage\n1,x\"SECRET\n", "bad.csv:2: stray quote in unquoted field"},
      {"id,wage\n1,\"SECRET\"x\n", "bad.csv:2: unexpected text after a closing quote"},
      {"id,wage\n1,\"SECRET\n", "bad.csv:2: quoted field is not closed"},
      {"id,wage\n1,3\n\n2,4\n", "bad.csv:3: blank line inside the data"},
      {"id,wage\n", "bad.csv:2: no labels after the header"},
      {"", "bad.csv:1: file is empty"},
  };
  for (const auto& c : cases) {
    INFO("input: " << c.text);
    write("bad.csv", c.text);
    const auto r = run("prior --input bad.csv --column wage" + flags);
    require_bad_input(r, c.fragment);
    CHECK_THAT(r.err, !Contains("SECRET"));
  }
  write("bad.csv", "id,wage\n1,3\n2,SECRET\n");
  const auto piped = run("prior --input - --column wage" + flags, slurp(scratch() / "bad.csv"));
  require_bad_input(piped, "<stdin>:3: label in column 'wage' is not a number");
  CHECK_THAT(piped.err, !Contains("SECRET"));
}

TEST_CASE("cli prior: --output is atomic and never a directory", "[cli][prior]") {
  REQUIRE_CLI();
  const std::string flags = " --column wage --eps 1" + kGrid;
  const std::string out = write("prior_out.csv", "old content\n");
  write("bad_late.csv", "id,wage\n1,3\n2,4\n3,oops\n");
  require_bad_input(run("prior --input bad_late.csv --output prior_out.csv" + flags),
                    "bad_late.csv:4: label in column 'wage' is not a number");
  CHECK(slurp(out) == "old content\n");
  int leftovers = 0;
  for (const auto& e : fs::directory_iterator(scratch()))
    if (e.path().filename().string().find(".prior_out.csv.tmp") != std::string::npos) ++leftovers;
  CHECK(leftovers == 0);
  fs::create_directories(scratch() / "a_directory");
  require_bad_input(run("prior --input '" + labels_file() + "' --output a_directory" + flags),
                    "a_directory: cannot write file: it is a directory");
  require_bad_input(run("prior --input '" + labels_file() + "' --output no/such/dir/p.csv" + flags),
                    "no/such/dir/p.csv: cannot write file");
  require_bad_input(run("prior --input '" + labels_file() + "' --output /dev/null" + flags),
                    "/dev/null: cannot write file: it exists and is not a regular file");
  // A good run replaces the old file completely.
  const auto ok = run("prior --input '" + labels_file() + "' --output prior_out.csv --seed 3" + flags);
  INFO("stderr: " << ok.err);
  REQUIRE(ok.status == 0);
  CHECK_THAT(slurp(out), StartsWith("value,prob\n"));
  CHECK_NOTHROW(labeldp::io::read_prior_csv(out));
}
