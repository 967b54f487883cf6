// End-to-end tests of `labeldp privatize` as the labeldp CLI contract specifies it ("Commands
// added after the first release"): CSV in, CSV out (other fields and the header byte for byte,
// quoting kept valid), standard input with a header, --labels-only, --drop-missing, --summary,
// every --method on the CPS wage column with the right output support, a statistical check of
// the unbiased method, labels never echoed in an error, every error path (exit status 2, nothing
// on stdout, one stderr line) and an atomic --output. The program is run as a separate process,
// looked up next to this test executable; when it was not built the tests warn and do nothing.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <labeldp/io/csv.hpp>
#include <labeldp/io/json.hpp>
#include <nlohmann/json.hpp>
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

// Every record of a CSV text, read with the library's reader (which checks the quoting).
std::vector<std::vector<std::string>> csv_records(const std::string& text) {
  std::istringstream in(text);
  labeldp::io::CsvReader reader(in, "<output>");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> fields;
  while (reader.next(fields)) rows.push_back(fields);
  return rows;
}

// The wage column of the CPS data as printed by privatize (CSV output): header check, then the
// noisy labels.
std::vector<double> wage_column(const std::string& out) {
  const auto rows = csv_records(out);
  REQUIRE(rows.size() == 28156);
  REQUIRE(rows[0][0] == "wage");
  std::vector<double> v;
  for (std::size_t i = 1; i < rows.size(); ++i) v.push_back(std::stod(rows[i][0]));
  return v;
}

// The last line of stderr, parsed as the --summary JSON.
nlohmann::json summary_of(const Run& r) {
  const auto l = lines(r.err);
  REQUIRE(!l.empty());
  return nlohmann::json::parse(l.back());
}

const std::string kGrid = " --lo 0 --hi 1000 --resolution 50";

}  // namespace

// ---------------------------------------------------------------------------------------------
// CSV in, CSV out

TEST_CASE("cli privatize: CSV round trip keeps the header and every other field byte for byte", "[cli][privatize]") {
  REQUIRE_CLI();
  // Label in the middle column; quoted fields with commas, doubled quotes, line breaks (CRLF
  // inside quotes), blanks, CRLF line ends, an empty field.
  const std::vector<std::string> before = {"1,", "2,", "\"3,x\",", "4,", "  5 ,", "6,"};
  const std::vector<std::string> labels = {"300", " 450 ", "\"500\"", "0", "1000", "12.5"};
  const std::vector<std::string> after = {",\"a, \"\"b\"\"\"", ",x", ",\"multi\r\nline\"", ",", ",\"\"", ",plain"};
  std::string input = "id,wage,\"na,me\"\r\n";
  for (std::size_t i = 0; i < labels.size(); ++i) input += before[i] + labels[i] + after[i] + "\r\n";
  const auto file = write("roundtrip.csv", input);
  const auto r = run("privatize --eps 2 --input '" + file + "' --column wage --seed 9" + kGrid);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  // The header, then each row: its text before the label, a number, its text after (CRs before
  // line breaks are not kept: the output's line ends are LF).
  auto no_cr = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), '\r'), s.end());
    return s;
  };
  std::size_t pos = 0;
  const std::string header = "id,wage,\"na,me\"\n";
  REQUIRE(r.out.compare(0, header.size(), header) == 0);
  pos = header.size();
  for (std::size_t i = 0; i < labels.size(); ++i) {
    INFO("row " << i << " at " << r.out.substr(pos));
    REQUIRE(r.out.compare(pos, before[i].size(), before[i]) == 0);
    pos += before[i].size();
    char* end = nullptr;
    const double v = std::strtod(r.out.c_str() + pos, &end);
    REQUIRE(end != r.out.c_str() + pos);
    CHECK(v >= 0);
    CHECK(v <= 1000);
    pos = std::size_t(end - r.out.c_str());
    const std::string tail = no_cr(after[i]) + "\n";
    REQUIRE(r.out.compare(pos, tail.size(), tail) == 0);
    pos += tail.size();
  }
  CHECK(pos == r.out.size());
  // Valid CSV: the library's reader gives the same fields as the input's but the label.
  const auto in_rows = csv_records(input), out_rows = csv_records(r.out);
  REQUIRE(in_rows.size() == out_rows.size());
  for (std::size_t i = 0; i < in_rows.size(); ++i) {
    REQUIRE(in_rows[i].size() == out_rows[i].size());
    CHECK(in_rows[i][0] == out_rows[i][0]);
    CHECK(no_cr(in_rows[i][2]) == out_rows[i][2]);
  }
}

TEST_CASE("cli privatize: standard input with a header works like the file (same seed, same output)",
          "[cli][privatize]") {
  REQUIRE_CLI();
  std::string input = "id,wage,city\n";
  for (int i = 0; i < 300; ++i)
    input += std::to_string(i) + "," + std::to_string((i * 37) % 1000) + ",\"c," + std::to_string(i % 7) + "\"\n";
  const auto file = write("stdin_like.csv", input);
  for (const char* method : {"bins", "unbiased", "rpwithprior"}) {
    INFO(method);
    const std::string flags = std::string(" --column wage --seed 4 --method ") + method + kGrid;
    const auto a = run("privatize --eps 2 --input '" + file + "'" + flags);
    const auto b = run("privatize --eps 2 --input -" + flags, input);
    const auto c = run("privatize --eps 2" + flags, input);
    INFO(a.err << b.err << c.err);
    REQUIRE(a.status == 0);
    CHECK(a.out == b.out);
    CHECK(a.out == c.out);
    CHECK(lines(a.out).size() == 301);
  }
}

TEST_CASE("cli privatize: --labels-only prints one noisy label per line", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto file = write("lo.csv", "a,wage\nx,10\ny,990\nz,500\n");
  const auto r = run("privatize --eps 1 --input lo.csv --column wage --labels-only --seed 2" + kGrid);
  REQUIRE(r.status == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == 3);
  for (const auto& l : out) {
    const double v = std::stod(l);  // a bin's output
    CHECK(v >= 0);
    CHECK(v <= 1000);
  }
  (void)file;
}

TEST_CASE("cli privatize: --drop-missing leaves rows out and counts them on one stderr line", "[cli][privatize]") {
  REQUIRE_CLI();
  write("missing.csv", "id,wage\n1,100\n2,\n3,n/a\n4,200\n5,inf\n6,300\n7,1e999\n");
  const auto r = run("privatize --eps 1 --input missing.csv --column wage --drop-missing --seed 3" + kGrid);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = csv_records(r.out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[1][0] == "1");
  CHECK(rows[2][0] == "4");
  CHECK(rows[3][0] == "6");
  REQUIRE(lines(r.err).size() == 1);
  CHECK_THAT(r.err, Contains("dropped 4 rows"));
  // Standard input, labels one per line: the same rule.
  const auto s = run("privatize --eps 1 --drop-missing --seed 3" + kGrid, "1\nx\n2\n");
  REQUIRE(s.status == 0);
  CHECK(lines(s.out).size() == 2);
  CHECK_THAT(s.err, Contains("dropped 1 row "));
  // Without --drop-missing: the first bad row's line.
  require_bad_input(run("privatize --eps 1 --input missing.csv --column wage" + kGrid),
                    "missing.csv:3: label in column 'wage' is missing");
  // Every label dropped: nothing to privatize.
  write("all_missing.csv", "id,wage\n1,\n");
  require_bad_input(run("privatize --eps 1 --input all_missing.csv --column wage --drop-missing" + kGrid),
                    "no labels to privatize");
}

TEST_CASE("cli privatize: --summary prints eps per stage, mechanism and rows as one JSON line", "[cli][privatize]") {
  REQUIRE_CLI();
  write("sum.csv", "id,wage\n1,100\n2,x\n3,300\n");
  const auto r =
      run("privatize --eps 2 --eps-prior 0.5 --input sum.csv --column wage --drop-missing --summary --seed 1" + kGrid);
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(lines(r.err).size() == 2);
  const auto j = summary_of(r);
  CHECK(j.at("method") == "bins");
  CHECK(j.at("mechanism") == "rr-on-bins");
  CHECK(j.at("eps_prior").get<double>() == 0.5);
  CHECK(j.at("eps_mechanism").get<double>() == 1.5);
  CHECK(j.at("eps_total").get<double>() == 2);
  CHECK(j.at("delta").get<double>() == 0);
  CHECK(j.at("rows_written") == 2);
  CHECK(j.at("rows_dropped") == 1);
  // A public prior costs nothing: all of eps on the mechanism.
  write("pub.csv", "value,prob\n0,0.5\n100,0.5\n");
  const auto p = run("privatize --eps 1 --prior pub.csv --summary --seed 1", "0\n100\n");
  REQUIRE(p.status == 0);
  const auto jp = summary_of(p);
  CHECK(jp.at("eps_prior").get<double>() == 0);
  CHECK(jp.at("eps_mechanism").get<double>() == 1);
}

// ---------------------------------------------------------------------------------------------
// Methods on the CPS wage column

TEST_CASE("cli privatize --method bins/unbiased/rpwithprior on the CPS wages: right output support",
          "[cli][privatize]") {
  REQUIRE_CLI();
  const std::string in = " --input '" + data_file("cps1988.csv") + "' --column wage --seed 11";
  const std::string grid = " --lo 0 --hi 5000 --resolution 50";
  SECTION("bins: at most 101 outputs (one per bin), inside [0, 5000]") {
    const auto r = run("privatize --eps 1 --method bins --summary" + in + grid);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto v = wage_column(r.out);
    std::set<double> distinct(v.begin(), v.end());
    CHECK(distinct.size() <= 101);
    CHECK(distinct.size() >= 2);
    CHECK(*distinct.begin() >= 0);
    CHECK(*distinct.rbegin() <= 5000);
    const auto j = summary_of(r);
    CHECK(j.at("eps_prior").get<double>() + j.at("eps_mechanism").get<double>() == Approx(1).epsilon(1e-15));
    CHECK(j.at("eps_prior").get<double>() == Approx(std::sqrt(101.0 / 28155)));  // Theorem 7
  }
  SECTION("unbiased: at most 2k real outputs, mean close to the clipped labels' mean") {
    const auto r = run("privatize --eps 2 --method unbiased --summary" + in + grid);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto v = wage_column(r.out);
    std::set<double> distinct(v.begin(), v.end());
    CHECK(distinct.size() <= 202);
    CHECK(summary_of(r).at("mechanism") == "unbiased");
    for (double x : v) REQUIRE(std::isfinite(x));
  }
  SECTION("rpwithprior: outputs on the grid of step 50") {
    const auto r = run("privatize --eps 2 --method rpwithprior --summary" + in + grid);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto v = wage_column(r.out);
    for (double x : v) REQUIRE(std::fmod(x, 50) == 0);
    CHECK(summary_of(r).at("mechanism") == "rpwithprior");
  }
}

TEST_CASE("cli privatize --method unbiased: the noisy mean of a constant column is the label (z = 6)",
          "[cli][privatize][statistical]") {
  REQUIRE_CLI();
  // 1234 is not a support point: unbiased randomized rounding keeps the mean at 1234 exactly.
  const int n = 20000;
  std::string input = "wage\n";
  for (int i = 0; i < n; ++i) input += "1234\n";
  write("constant.csv", input);
  const auto r =
      run("privatize --eps 1 --method unbiased --input constant.csv --column wage --labels-only "
          "--seed 20231 --lo 0 --hi 5000 --resolution 50");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == std::size_t(n));
  double sum = 0, sum2 = 0;
  for (const auto& l : out) {
    const double v = std::stod(l);
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  const double z = (mean - 1234) / std::sqrt(var / n);
  INFO("mean " << mean << " sd " << std::sqrt(var) << " z " << z);
  CHECK(std::abs(z) < 6);
}

// ---------------------------------------------------------------------------------------------
// Privacy of error messages, error paths, atomic output

TEST_CASE("cli privatize: a label is never echoed in an error", "[cli][privatize]") {
  REQUIRE_CLI();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"id,wage\n1,SECRET\n", "secret1.csv:2: label in column 'wage' is not a number"},
      {"id,wage\n1,SEC\"RET\n", "secret2.csv:2: stray quote"},
      {"id,wage\n1,\"SECRET\"x\n", "secret3.csv:2: unexpected text after a closing quote"},
      {"id,wage\n1,5,SECRET\n", "secret4.csv:2: expected 2 fields, got 3"},
      {"id,wage\n1,\"SECRET\n", "secret5.csv:2: quoted field is not closed"},
  };
  int i = 0;
  for (const auto& [text, fragment] : cases) {
    const std::string name = "secret" + std::to_string(++i) + ".csv";
    write(name, text);
    for (const char* method : {"bins", "unbiased"}) {
      const auto r = run("privatize --eps 1 --input " + name + " --column wage --method " + method + kGrid);
      INFO(name << " " << method);
      require_bad_input(r, fragment);
      CHECK_THAT(r.err, !Contains("SECRET") && !Contains("SEC"));
    }
  }
  const auto s = run("privatize --eps 1" + kGrid, "1\nSECRET\n");
  require_bad_input(s, "<stdin>:2: label is not a number");
  CHECK_THAT(s.err, !Contains("SECRET"));
  const auto t = run("privatize --eps 1" + kGrid, "1\nSECRET,1\n");
  require_bad_input(t, "<stdin>:2: expected 1 label per line, got 2 fields");
  CHECK_THAT(t.err, !Contains("SECRET"));
}

TEST_CASE("cli privatize: error paths exit 2 with one line naming the option or file", "[cli][privatize]") {
  REQUIRE_CLI();
  write("ok.csv", "id,wage\n1,5\n");
  write("sup.csv", "value\n0\n1\n");
  require_bad_input(run("privatize --eps 1 --method magic" + kGrid, "1\n"), "'--method' must be");
  require_bad_input(run("privatize --eps 1 --method unbiased --loss absolute" + kGrid, "1\n"),
                    "'--loss' applies to '--method bins' only");
  require_bad_input(run("privatize --eps 1 --method rpwithprior --support sup.csv", "1\n"),
                    "'--method rpwithprior' needs the public grid");
  require_bad_input(run("privatize" + kGrid, "1\n"), "--eps is required");
  require_bad_input(run("privatize --eps 1 --column wage" + kGrid, ""), "<stdin>:1: file is empty");
  require_bad_input(run("privatize --eps 1 --column salary --input ok.csv" + kGrid), "ok.csv:1: no column 'salary'");
  require_bad_input(run("privatize --eps 1 --column wage --input ok.csv --output ." + kGrid), ".: cannot write file");
  require_bad_input(run("privatize --eps 1 --column wage --input no_such.csv" + kGrid),
                    "no_such.csv: cannot open file");
  require_bad_input(run("privatize --eps 1 --column wage" + kGrid, "id,wage\n1,5\n\n2,6\n"),
                    "<stdin>:3: blank line inside the data");
}

TEST_CASE("cli privatize: an error on a late row leaves no output file and no temporary file", "[cli][privatize]") {
  REQUIRE_CLI();
  std::string input = "id,wage\n";
  for (int i = 0; i < 100000; ++i) input += std::to_string(i) + ",7\n";  // more than the output buffer
  input += "x,SECRET\n";
  write("late.csv", input);
  for (const char* method : {"bins", "unbiased", "rpwithprior"}) {
    const auto out_path = (scratch() / "late_out.csv").string();
    INFO(method);
    require_bad_input(run(std::string("privatize --eps 1 --input late.csv --column wage --method ") + method +
                          " --output '" + out_path + "'" + kGrid),
                      "late.csv:100002: label in column 'wage' is not a number");
    require_bad_input(run(std::string("privatize --eps 1 --column wage --method ") + method + kGrid, input),
                      "<stdin>:100002:");
    int leftovers = 0;
    for (const auto& e : fs::directory_iterator(scratch()))
      if (e.path().filename().string().find("late_out") != std::string::npos) ++leftovers;
    CHECK(leftovers == 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Baselines (--method K: all of eps on the noise, no prior)

TEST_CASE("cli privatize --method <baseline> on the CPS wages: runs, spends eps on the noise, right support",
          "[cli][privatize]") {
  REQUIRE_CLI();
  const std::string in = " --input '" + data_file("cps1988.csv") + "' --column wage --seed 5 --summary";
  struct Case {
    std::string method, flags;
    double step;  // outputs are multiples of this (0: any real)
    bool in_range;
  };
  const std::vector<Case> cases = {
      {"laplace", " --lo 0 --hi 5000 --clip", 0, true},
      {"discrete-laplace", " --lo 0 --hi 5000 --resolution 50", 50, false},
      {"gaussian", " --lo 0 --hi 5000 --delta 1e-6", 0, false},
      {"discrete-gaussian", " --lo 0 --hi 5000 --delta 1e-6 --resolution 50", 50, false},
      {"staircase", " --lo 0 --hi 5000", 0, false},
      {"discrete-staircase", " --lo 0 --hi 5000 --resolution 50", 50, false},
      {"exponential", " --lo 0 --hi 5000 --resolution 50", 50, true},
      {"rr", " --lo 0 --hi 5000 --resolution 50", 50, true},
      {"rr-with-prior", " --lo 0 --hi 5000 --resolution 50", 50, true},
  };
  for (const auto& c : cases) {
    INFO(c.method);
    const auto r = run("privatize --eps 2 --method " + c.method + c.flags + in);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto v = wage_column(r.out);
    for (double x : v) {
      REQUIRE(std::isfinite(x));
      if (c.step > 0) REQUIRE(std::fmod(x, c.step) == 0);
      if (c.in_range) REQUIRE((x >= 0 && x <= 5000));
    }
    std::set<double> distinct(v.begin(), v.end());
    CHECK(distinct.size() >= 2);
    const auto j = summary_of(r);
    CHECK(j.at("method") == c.method);
    CHECK(j.at("mechanism") == c.method);
    CHECK(j.at("rows_written") == 28155);
    if (c.method == "rr-with-prior") {
      CHECK(j.at("eps_prior").get<double>() > 0);  // its private prior comes first
      CHECK(j.at("eps_total").get<double>() == Approx(2).epsilon(1e-15));
    } else {
      CHECK(j.at("eps_prior").get<double>() == 0);
      CHECK(j.at("eps_mechanism").get<double>() == 2);
    }
    CHECK(j.at("delta").get<double>() == (c.method.find("gaussian") != std::string::npos ? 1e-6 : 0));
  }
}

TEST_CASE("cli privatize --method <baseline>: flag errors name the option", "[cli][privatize]") {
  REQUIRE_CLI();
  require_bad_input(run("privatize --eps 1 --method laplace --hi 5", "1\n"), "'--lo' is missing");
  require_bad_input(run("privatize --eps 1 --method discrete-laplace --lo 0 --hi 5", "1\n"),
                    "'--resolution' is missing");
  require_bad_input(run("privatize --eps 1 --method gaussian --lo 0 --hi 5", "1\n"), "'--delta' is missing");
  require_bad_input(run("privatize --eps 1 --method gaussian --lo 0 --hi 5 --delta 1", "1\n"),
                    "'--delta' must be in (0, 1), got '1'");
  require_bad_input(run("privatize --eps 1 --method laplace --lo 0 --hi 5 --delta 0.1", "1\n"), "'--delta' applies to");
  require_bad_input(run("privatize --eps 1 --method laplace --lo 0 --hi 5 --resolution 1", "1\n"),
                    "'--resolution' is not used by '--method laplace'");
  require_bad_input(run("privatize --eps 1 --method laplace --lo 0 --hi 5 --eps-prior 0.5", "1\n"),
                    "'--eps-prior' cannot be used with '--method laplace'");
  require_bad_input(run("privatize --eps 1 --method bins --lo 0 --hi 5 --resolution 1 --clip", "1\n"),
                    "'--clip' applies to the additive baselines only");
  require_bad_input(run("privatize --eps 1 --method staircase --lo 5 --hi 5", "1\n"), "'--hi' must be greater");
}

// ---------------------------------------------------------------------------------------------
// --mechanism FILE

namespace {

// The outputs and the row of input `row` of a finite mechanism file.
struct FileRow {
  std::vector<double> outputs, probs;
};
FileRow file_row(const std::string& json_text, std::size_t row) {
  const auto j = nlohmann::json::parse(json_text);
  return {j.at("outputs").get<std::vector<double>>(), j.at("probabilities").at(row).get<std::vector<double>>()};
}

// Counts of each of `outputs` among the noisy labels (a label not among them fails).
std::vector<long long> output_counts(const std::vector<std::string>& noisy, const std::vector<double>& outputs) {
  std::vector<long long> counts(outputs.size(), 0);
  for (const auto& l : noisy) {
    const double v = std::stod(l);
    const auto it = std::find(outputs.begin(), outputs.end(), v);
    REQUIRE(it != outputs.end());
    ++counts[std::size_t(it - outputs.begin())];
  }
  return counts;
}

}  // namespace

TEST_CASE("cli privatize --mechanism reproduces a bins file's probabilities (chi-square); an eps-doubled row fails",
          "[cli][privatize][statistical]") {
  REQUIRE_CLI();
  write("mprior.csv", "value,prob\n0,0.3\n1,0.2\n2,0.2\n3,0.1\n5,0.2\n");
  const auto file = run("bins --prior mprior.csv --eps 1 --json");
  REQUIRE(file.status == 0);
  write("bins.json", file.out);
  // 40,000 rows of the constant label 2 (input row 2), with another column kept.
  const int n = 40000;
  std::string input = "id,y\n";
  for (int i = 0; i < n; ++i) input += std::to_string(i) + ",2\n";
  write("const2.csv", input);
  const auto r = run("privatize --mechanism bins.json --input const2.csv --column y --labels-only --seed 77 --summary");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = summary_of(r);
  CHECK(j.at("method") == "mechanism-file");
  CHECK(j.at("mechanism") == "rr-on-bins");
  CHECK(j.at("eps_mechanism").get<double>() == 1);
  CHECK(j.at("eps_prior").get<double>() == 0);
  const auto expected = file_row(file.out, 2);
  const auto counts = output_counts(lines(r.out), expected.outputs);
  const auto fit = labeldp::test::chi_square(counts, expected.probs);
  INFO("p " << fit.p_value);
  CHECK(fit.p_value > 1e-9);
  // The same counts against the eps-doubled mutant of the file's row (RR-on-Bins with the same
  // bins at eps 2: e^2 / (e^2 + d - 1) on the label's own bin, 1 / (e^2 + d - 1) elsewhere) are
  // rejected by the same test.
  const std::size_t d = expected.outputs.size();
  REQUIRE(d >= 2);
  const std::size_t own =
      std::size_t(std::max_element(expected.probs.begin(), expected.probs.end()) - expected.probs.begin());
  CHECK(expected.probs[own] == Approx(std::exp(1.0) / (std::exp(1.0) + double(d) - 1)).epsilon(1e-12));
  std::vector<double> mutant(d, 1 / (std::exp(2.0) + double(d) - 1));
  mutant[own] = std::exp(2.0) / (std::exp(2.0) + double(d) - 1);
  const auto bad = labeldp::test::chi_square(counts, mutant);
  INFO("mutant p " << bad.p_value);
  CHECK(bad.p_value < 1e-9);
  // Labels off the inputs are mapped as the file states (clipped and rounded to the nearest input).
  const auto clipped = run("privatize --mechanism bins.json --seed 1", "-100\n1e9\n2.2\n");
  REQUIRE(clipped.status == 0);
  for (const auto& l : lines(clipped.out))
    CHECK(std::find(expected.outputs.begin(), expected.outputs.end(), std::stod(l)) != expected.outputs.end());
}

TEST_CASE("cli privatize --mechanism applies a baseline file and keeps the CSV", "[cli][privatize]") {
  REQUIRE_CLI();
  const auto file = run("baseline --kind discrete-laplace --eps 1 --lo 0 --hi 1000 --resolution 50 --json");
  REQUIRE(file.status == 0);
  write("dlap.json", file.out);
  write("few.csv", "id,wage,city\n1,100,\"a,b\"\n2,SKIP,c\n3,900,d\n");
  const auto r = run("privatize --mechanism dlap.json --input few.csv --column wage --drop-missing --seed 2");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = csv_records(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::string>{"id", "wage", "city"});
  CHECK(rows[1][2] == "a,b");
  CHECK(std::fmod(std::stod(rows[1][1]), 50) == 0);
  CHECK(rows[2][0] == "3");
  CHECK_THAT(r.err, Contains("dropped 1 row "));
}

TEST_CASE("cli privatize --mechanism: conflicts and bad files are errors naming them", "[cli][privatize]") {
  REQUIRE_CLI();
  write("p1.csv", "value,prob\n0,0.5\n1,0.5\n");
  const auto file = run("bins --prior p1.csv --eps 1 --json");
  REQUIRE(file.status == 0);
  write("m.json", file.out);
  require_bad_input(run("privatize --mechanism m.json --eps 1", "0\n"),
                    "'--mechanism' cannot be combined with '--eps'");
  require_bad_input(run("privatize --mechanism m.json --method bins", "0\n"),
                    "'--mechanism' cannot be combined with '--method'");
  require_bad_input(run("privatize --mechanism m.json --prior p1.csv", "0\n"),
                    "'--mechanism' cannot be combined with '--prior'");
  require_bad_input(run("privatize --mechanism m.json --lo 0", "0\n"), "'--mechanism' cannot be combined with '--lo'");
  require_bad_input(run("privatize --mechanism missing.json", "0\n"), "missing.json");
  std::string tampered = file.out;
  const auto at = tampered.find("\"eps\":1");
  REQUIRE(at != std::string::npos);
  tampered.replace(at, 7, "\"eps\":0.5");  // the probabilities are not 0.5-DP
  write("tampered.json", tampered);
  const auto t = run("privatize --mechanism tampered.json", "0\n");
  require_bad_input(t, "tampered.json");
  require_bad_input(run("privatize --mechanism m.json --seed x", "0\n"), "'--seed' must be an integer");
  require_bad_input(run("privatize --mechanism m.json", ""), "<stdin>: no labels to privatize");
}

TEST_CASE("cli privatize: single-pass modes leave stdout empty and no file on a bad late row", "[cli][privatize]") {
  REQUIRE_CLI();
  write("p2.csv", "value,prob\n0,0.5\n7,0.5\n");
  const auto file = run("bins --prior p2.csv --eps 1 --json");
  REQUIRE(file.status == 0);
  write("late.json", file.out);
  std::string input = "id,wage\n";
  for (int i = 0; i < 100000; ++i) input += std::to_string(i) + ",7\n";
  input += "x,SECRET\n";
  write("late2.csv", input);
  const auto out_path = (scratch() / "late2_out.csv").string();
  for (const std::string how : {"--mechanism late.json", "--eps 1 --method laplace --lo 0 --hi 10",
                                "--eps 1 --method rr --lo 0 --hi 10 --resolution 1"}) {
    INFO(how);
    const auto a = run("privatize " + how + " --column wage", input);
    require_bad_input(a, "<stdin>:100002: label in column 'wage' is not a number");
    CHECK_THAT(a.err, !Contains("SECRET"));
    require_bad_input(run("privatize " + how + " --input late2.csv --column wage --output '" + out_path + "'"),
                      "late2.csv:100002:");
    int leftovers = 0;
    for (const auto& e : fs::directory_iterator(scratch()))
      if (e.path().filename().string().find("late2_out") != std::string::npos) ++leftovers;
    CHECK(leftovers == 0);
  }
}

TEST_CASE("cli privatize: a FIFO as --input is read once (buffered like standard input)", "[cli][privatize]") {
  REQUIRE_CLI();
  std::string input = "id,wage\n";
  for (int i = 0; i < 200; ++i) input += std::to_string(i) + "," + std::to_string(i * 5) + "\n";
  const auto file = write("fifo_src.csv", input);
  const auto fifo = (scratch() / "labels.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto out = (scratch() / "fifo_out.csv").string();
  const std::string flags = " --eps 1 --column wage --seed 6" + kGrid;
  const std::string cmd = "cd '" + scratch().string() + "' && (cat '" + file + "' > '" + fifo + "' &) && '" +
                          cli_path().string() + "' privatize --input '" + fifo + "'" + flags + " > '" + out +
                          "' 2> fifo_err.txt";
  const int raw = std::system(cmd.c_str());
  INFO(slurp(scratch() / "fifo_err.txt"));
  REQUIRE(WIFEXITED(raw));
  REQUIRE(WEXITSTATUS(raw) == 0);
  const auto from_file = run("privatize --input '" + file + "'" + flags);
  CHECK(slurp(out) == from_file.out);
}

TEST_CASE(
    "cli privatize --method unbiased with a public prior: zero-probability values are valid inputs and "
    "stay unbiased (z = 6)",
    "[cli][privatize][statistical]") {
  REQUIRE_CLI();
  write("zero_prior.csv", "value,prob\n0,0\n1,0.5\n2,0\n3,0.5\n4,0\n");
  for (const double label : {0.0, 2.0, 4.0}) {
    const int n = 20000;
    std::string input;
    for (int i = 0; i < n; ++i) input += labeldp::io::json_number(label) + "\n";
    const auto r = run("privatize --eps 1 --prior zero_prior.csv --method unbiased --seed 99", input);
    INFO("label " << label << ": " << r.err);
    REQUIRE(r.status == 0);
    const auto out = lines(r.out);
    REQUIRE(out.size() == std::size_t(n));
    double sum = 0, sum2 = 0;
    for (const auto& l : out) {
      const double v = std::stod(l);
      sum += v;
      sum2 += v * v;
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    const double z = (mean - label) / std::sqrt(var / n);
    INFO("mean " << mean << " z " << z);
    CHECK(std::abs(z) < 6);
  }
}

// The batched reader (simple rows cut from the read-ahead, every other row through the
// record-at-a-time reader) must give exactly what reading one record at a time gives. Oracle:
// the same labels written as a messy file (quoted and multi-line fields, CRLF ends, blanks and
// quotes around labels, missing labels, a BOM-free header, rows spanning many 256 KiB reads) and
// as a clean one (plain rows, missing ones left out) give the same noisy labels with the same
// seed, every other field is kept byte for byte, and an error names the right physical line.
TEST_CASE("cli privatize: batched reading equals record-at-a-time reading on messy files (same seed)",
          "[cli][privatize]") {
  REQUIRE_CLI();
  write("bprior.csv", "value,prob\n0,0.2\n250,0.2\n500,0.2\n750,0.2\n1000,0.2\n");
  const auto mech = run("bins --prior bprior.csv --eps 2 --json");
  REQUIRE(mech.status == 0);
  write("bbins.json", mech.out);
  const int n = 60000;
  std::string messy = "id,wage,note\n", clean = "id,wage,note\n", full = "id,wage,note\n";
  std::size_t physical = 1, bad_line = 0;
  for (int i = 0; i < n; ++i) {
    const std::string label = std::to_string((i * 7919) % 1001);
    const std::string id = std::to_string(i);  // (no "literal" + rvalue string: g++ 12 -Wrestrict)
    std::string l = label, note = "n";
    note += id;
    std::string end = "\n";
    if (i % 997 == 5) note = "\"multi\nline " + id + "\"";
    if (i % 1009 == 7) end = "\r\n";
    if (i % 1013 == 9) l = " " + label + " ";
    if (i % 1019 == 11) l = "\"" + label + "\"";
    full += id + "," + (i == 45000 ? "x" : "") + l + "," + note + end;
    const bool missing = i % 4001 == 13;
    if (missing) l = "";
    messy += id + "," + l + "," + note + end;
    if (i == 45000) bad_line = physical + 1;  // the row's first line
    physical += 1 + std::size_t(std::count(note.begin(), note.end(), '\n'));
    if (!missing) clean += id + "," + label + ",n" + id + "\n";
  }
  write("messy.csv", messy);
  write("clean.csv", clean);
  for (const std::string how : {"--mechanism bbins.json", "--eps 2 --method bins --lo 0 --hi 1000 --resolution 250"}) {
    INFO(how);
    const auto a = run("privatize " + how + " --input messy.csv --column wage --seed 31 --drop-missing");
    const auto b = run("privatize " + how + " --input clean.csv --column wage --seed 31");
    INFO(a.err << b.err);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    const auto ra = csv_records(a.out), rb = csv_records(b.out), in = csv_records(messy);
    REQUIRE(ra.size() == rb.size());
    REQUIRE(ra.size() == std::size_t(n) + 1 - std::size_t((n - 14) / 4001 + 1));
    std::size_t j = 0;  // index into the messy input's rows
    for (std::size_t i = 1; i < ra.size(); ++i) {
      do ++j;
      while (in[j][1].empty());
      REQUIRE(ra[i][1] == rb[i][1]);
      REQUIRE(ra[i][0] == in[j][0]);
      REQUIRE(ra[i][2] == in[j][2]);
    }
    // The file without missing labels but a bad one on row 45000: the error names its physical
    // line (multi-line fields before it counted).
    write("broken.csv", full);
    const auto e = run("privatize " + how + " --input broken.csv --column wage --seed 31");
    require_bad_input(e, "broken.csv:" + std::to_string(bad_line) + ": label in column 'wage' is not a number");
  }
}
