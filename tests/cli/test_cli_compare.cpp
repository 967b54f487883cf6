// End-to-end tests of `labeldp compare` as the labeldp CLI contract specifies it ("labeldp
// compare"): the JSON shape and its numbers' basic facts (ridge on clean labels beats the mean,
// noisy labels at large eps close to the clean ones), the text table, compare.csv's exact
// columns, plots when gnuplot is present and one clear line when it is not, determinism under
// --seed, and bad input (exit 2, one stderr line naming the file/line/value, never a label). The
// data are a small synthetic CSV made here, so the test runs in seconds.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_harness.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using namespace labeldp::test::cli;

namespace {

// y = 20 + 6 x + 15 [g = b] - 10 [g = c] + noise, x in [0, 10], labels clipped to [0, 100]; 400 rows.
struct Synthetic {
  std::string path;
  double variance = 0;
};

const Synthetic& synthetic() {
  static const Synthetic s = [] {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> ux(0, 10);
    std::normal_distribution<double> noise(0, 3);
    std::ostringstream csv;
    csv << "y,x,g,unused\n";
    std::vector<double> ys;
    for (int i = 0; i < 400; ++i) {
      const double x = ux(rng);
      const char g = "abc"[i % 3];
      double y = 20 + 6 * x + (g == 'b' ? 15 : g == 'c' ? -10 : 0) + noise(rng);
      y = std::clamp(std::round(y * 100) / 100, 0.0, 100.0);
      ys.push_back(y);
      csv << y << "," << x << "," << g << ",z\n";
    }
    double m = 0;
    for (double y : ys) m += y;
    m /= double(ys.size());
    double v = 0;
    for (double y : ys) v += (y - m) * (y - m);
    return Synthetic{write("compare.csv", csv.str()), v / double(ys.size())};
  }();
  return s;
}

const std::string kBase = " --column y --features x,g --lo 0 --hi 100 --resolution 5";

std::string base_args() { return "compare --input '" + synthetic().path + "'" + kBase; }

nlohmann::json parse_json(const Run& r) {
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

// The JSON without the run time (which differs between runs).
nlohmann::json without_time(nlohmann::json j) {
  j.erase("seconds");
  return j;
}

}  // namespace

TEST_CASE("compare: JSON shape and the basic facts of its numbers", "[cli][compare]") {
  REQUIRE_CLI();
  const Run r = run(base_args() + " --eps 1,8 --methods rr-on-bins,unbiased,laplace --seeds 2 --seed 7 --json");
  const auto j = parse_json(r);
  INFO(r.out);
  REQUIRE(j.contains("rows"));
  REQUIRE(j["rows"].size() == 6);
  std::set<std::string> methods;
  for (const auto& row : j["rows"]) {
    for (const char* key : {"method", "eps", "noisy_label_mse", "noisy_label_mse_sd", "test_mse", "test_mse_sd"})
      REQUIRE(row.contains(key));
    methods.insert(row["method"].get<std::string>());
    CHECK(row["noisy_label_mse"].get<double>() > 0);
    CHECK(row["test_mse"].get<double>() > 0);
    CHECK(row["noisy_label_mse_sd"].get<double>() >= 0);
  }
  CHECK(methods == std::set<std::string>{"rr-on-bins", "unbiased", "laplace"});
  const double np = j["non_private_test_mse"].get<double>(), mean = j["mean_test_mse"].get<double>();
  // The labels depend strongly on the features: ridge on clean labels explains most of the variance.
  CHECK(np < 0.2 * mean);
  CHECK(mean == Approx(synthetic().variance).epsilon(0.3));
  CHECK(j["seeds"] == 2);
  for (const auto& row : j["rows"]) {
    INFO(row.dump());
    // Every private model is at best as good as the non-private one (within the seeds' noise).
    CHECK(row["test_mse"].get<double>() > 0.95 * np);
    if (row["eps"].get<double>() == 8 && row["method"] != "laplace") {
      // At eps 8 the optimal mechanisms barely move the labels (grid step 5: rounding error <= 6.25).
      CHECK(row["noisy_label_mse"].get<double>() < 0.1 * synthetic().variance);
      CHECK(row["test_mse"].get<double>() < 2 * np);
    }
  }
}

TEST_CASE("compare: deterministic under --seed, different without", "[cli][compare]") {
  REQUIRE_CLI();
  const std::string args = base_args() + " --eps 2 --methods rr-on-bins,staircase --seeds 2 --json";
  const auto a = without_time(parse_json(run(args + " --seed 11")));
  const auto b = without_time(parse_json(run(args + " --seed 11 --threads 1")));
  const auto c = without_time(parse_json(run(args + " --seed 12")));
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a["rows"] != without_time(parse_json(run(args)))["rows"]);
}

TEST_CASE("compare: text table and --output-dir files", "[cli][compare]") {
  REQUIRE_CLI();
  const fs::path dir = scratch() / "out";
  const Run r = run(base_args() + " --eps 1,4 --methods bins,discrete-laplace-clip --seeds 2 --seed 3 --output-dir '" +
                    dir.string() + "' --density bins:4");
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const auto out = lines(r.out);
  CHECK_THAT(r.out, Contains("noisy_label_mse"));
  CHECK_THAT(r.out, Contains("non-private"));
  int table_rows = 0;
  for (const auto& l : out)
    if (l.rfind("rr-on-bins ", 0) == 0 || l.rfind("discrete-laplace-clip ", 0) == 0) ++table_rows;
  CHECK(table_rows == 4);
  const auto csv = lines(slurp(dir / "compare.csv"));
  REQUIRE(!csv.empty());
  CHECK(csv[0] == "method,eps,seeds,noisy_label_mse,noisy_label_mse_sd,test_mse,test_mse_sd");
  CHECK(csv.size() == 1 + 4 + 2 * 2);  // 2 methods x 2 eps, and non-private and mean per eps
  for (std::size_t i = 1; i < csv.size(); ++i) {
    INFO(csv[i]);
    CHECK(std::count(csv[i].begin(), csv[i].end(), ',') == 6);
  }
  const bool have_gnuplot = std::system("command -v gnuplot >/dev/null 2>&1") == 0;
  for (const char* name : {"test_mse", "noisy_label_mse", "density"}) {
    if (!have_gnuplot) break;
    const std::string png = slurp(dir / (std::string(name) + ".png"));
    const std::string svg = slurp(dir / (std::string(name) + ".svg"));
    INFO(name);
    CHECK(png.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
    CHECK_THAT(svg, Contains("<svg"));
    CHECK_THAT(svg, Contains("</svg>"));
  }
  if (!have_gnuplot) WARN("gnuplot not installed: plot files not checked");
  // No temporary file is left in the directory.
  for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().filename().string().front() != '.');
}

TEST_CASE("compare: without gnuplot the table is written and one line says how to get plots", "[cli][compare]") {
  REQUIRE_CLI();
  const fs::path dir = scratch() / "noplot";
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", "/nonexistent", 1);
  const Run r = run(base_args() + " --eps 1 --methods laplace --seeds 1 --seed 1 --output-dir '" + dir.string() + "'");
  ::setenv("PATH", saved.c_str(), 1);
  INFO("stderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(fs::exists(dir / "compare.csv"));
  CHECK_FALSE(fs::exists(dir / "test_mse.png"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Contains("gnuplot-nox"));
}

TEST_CASE("compare: bad input exits 2 with one line naming the problem", "[cli][compare]") {
  REQUIRE_CLI();
  const std::string in = " --input '" + synthetic().path + "'";
  const std::string grid = " --lo 0 --hi 100 --resolution 5";
  require_bad_input(run("compare" + in + " --column nope --features x --eps 1" + grid), "no column 'nope'");
  require_bad_input(run("compare" + in + " --column y --features x,h --eps 1" + grid), "no feature column 'h'");
  require_bad_input(run("compare" + in + " --column y --features x --eps 1,abc" + grid),
                    "'--eps' must be a finite number, got 'abc'");
  require_bad_input(run("compare" + in + " --column y --features x --eps 0" + grid), "got '0'");
  require_bad_input(run("compare" + in + " --column y --features x --eps 1 --methods bins,magic" + grid),
                    "got 'magic'");
  for (const char* t : {"0", "1", "1.5", "nan"})
    require_bad_input(run("compare" + in + " --column y --features x --eps 1 --test-fraction " + std::string(t) + grid),
                      "--test-fraction");
  require_bad_input(run("compare" + in + " --column y --features x --eps 1 --lo 0 --hi 100"),
                    "'--resolution' is missing");
  // A bad label names the file and line, never the value.
  const std::string bad = write("bad.csv", "y,x\n1,2\n3,4\nsecret-label,5\n");
  const Run r = run("compare --input '" + bad + "' --column y --features x --eps 1" + grid);
  require_bad_input(r, "bad.csv:4:");
  CHECK_THAT(r.err, !Contains("secret"));
  require_bad_input(
      run("compare --input '" + (scratch() / "missing.csv").string() + "' --column y --features x --eps 1"),
      "missing.csv");
}

// The papers' qualitative findings on the bundled CPS 1988 wages (Ghazi et al. 2023, Table 1;
// Badanidiyuru et al. 2023, Fig. 2), as the README states them: RR-on-Bins has the least
// noisy-label MSE of all methods at every eps, no private model is better than the non-private
// one (beyond 0.1%), the optimal mechanisms' test MSE decreases with eps, and the unbiased randomizer trains a
// better model than RR-on-Bins at eps <= 2. Every method, 3 seeds (seeded: the split and noise are
// fixed, so this is a check of the numbers, not of chance); a few seconds.
TEST_CASE("compare: the papers' findings hold on the CPS wages", "[.][statistical][cli][compare]") {
  REQUIRE_CLI();
  const Run r = run("compare --input '" + data_file("cps1988.csv") +
                    "' --column wage --features education,experience,ethnicity,smsa,region,parttime "
                    "--eps 0.5,1,2,4,8 --methods all --seeds 3 --lo 0 --hi 5000 --resolution 50 --seed 2023 --json");
  const auto j = parse_json(r);
  const double np = j["non_private_test_mse"].get<double>();
  std::map<std::string, std::map<double, nlohmann::json>> by;
  for (const auto& row : j["rows"]) by[row["method"].get<std::string>()][row["eps"].get<double>()] = row;
  REQUIRE(by.size() == 18);
  for (const auto& [eps, bins] : by["rr-on-bins"]) {
    for (const auto& [method, rows] : by) {
      INFO(method << " at eps " << eps);
      // At eps 8 the best private models are the non-private one within 0.05%, on either side
      // (seed 2023: rpwithprior 0.03% below), so "worse" is checked up to 0.1%.
      CHECK(rows.at(eps)["test_mse"].get<double>() > 0.999 * np);
      if (method != "rr-on-bins")
        CHECK(bins["noisy_label_mse"].get<double>() < rows.at(eps)["noisy_label_mse"].get<double>());
    }
  }
  for (const char* method : {"rr-on-bins", "unbiased"}) {
    double last = std::numeric_limits<double>::infinity();
    for (const auto& [eps, row] : by[method]) {
      INFO(method << " at eps " << eps);
      CHECK(row["test_mse"].get<double>() < last);
      last = row["test_mse"].get<double>();
    }
  }
  for (double eps : {0.5, 1.0, 2.0}) {
    INFO("eps " << eps);
    CHECK(by["unbiased"][eps]["test_mse"].get<double>() < by["rr-on-bins"][eps]["test_mse"].get<double>());
  }
}
