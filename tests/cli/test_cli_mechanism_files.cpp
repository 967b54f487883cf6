// End-to-end tests of mechanism files (the labeldp CLI contract, "Mechanism files" and
// "Exactness"): every construction command's --json output carries format/version, is accepted
// by `audit --mechanism` (which loads and revalidates it), and its printed probabilities are
// eps-DP exactly; a file whose eps or derived parameters were edited is bad input.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/types.hpp>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_harness.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;
using namespace labeldp::test::cli;

namespace {

// The probabilities of a finite mechanism file.
labeldp::Matrix<double> probabilities(const nlohmann::json& doc) {
  const auto& rows = doc.at("probabilities");
  labeldp::Matrix<double> P(labeldp::Index(rows.size()), labeldp::Index(rows.at(0).size()));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i].size(); ++j) P(labeldp::Index(i), labeldp::Index(j)) = rows[i][j].get<double>();
  return P;
}

// Replaces the first `"eps":<value>` of a file by `"eps":<eps>`.
std::string with_eps(const std::string& text, const std::string& eps) {
  const auto at = text.find("\"eps\":");
  REQUIRE(at != std::string::npos);
  const auto end = text.find(',', at);
  return text.substr(0, at) + "\"eps\":" + eps + text.substr(end);
}

}  // namespace

TEST_CASE("cli mechanism files: every construction command's file audits and loads back", "[cli][mechanism_file]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.3\n1,0.25\n2,0.2\n5,0.15\n10,0.1\n");
  write("o.csv", "output\n0\n2\n5\n10\n");
  write("h.csv", "lo,hi,mass\n0,1,1\n1,2,3\n2,4,1\n");
  const std::vector<std::string> commands{
      "bins --prior p.csv --eps 1 --json",
      "bins --prior p.csv --eps 0.1 --loss absolute --json",
      "optimal --prior p.csv --eps 2 --outputs o.csv --json",
      "unbiased --prior p.csv --eps 1 --grid 30 --json",
      "unbiased --prior p.csv --eps 3 --continuous --json",
      "unbiased --prior p.csv --eps 1 --continuous --max-bias 0.5 --json",
      "interval --hist h.csv --eps 1 --zeta 0.25 --json",
      "baseline --kind laplace --eps 1 --lo 0 --hi 10 --json",
      "baseline --kind discrete-laplace --eps 1 --lo 0 --hi 10 --resolution 0.5 --clip --json",
      "baseline --kind gaussian --eps 1 --delta 1e-6 --lo 0 --hi 10 --json",
      "baseline --kind discrete-gaussian --eps 1 --delta 1e-6 --lo 0 --hi 10 --resolution 0.5 --json",
      "baseline --kind staircase --eps 1 --lo 0 --hi 10 --json",
      "baseline --kind discrete-staircase --eps 1 --lo 0 --hi 10 --resolution 0.5 --json",
      "baseline --kind exponential --eps 1 --lo 0 --hi 10 --resolution 0.5 --json",
      "baseline --kind rr --eps 1 --lo 0 --hi 10 --prior p.csv --json",
      "baseline --kind rr-with-prior --eps 1 --lo 0 --hi 10 --prior p.csv --json",
  };
  for (const std::string& cmd : commands) {
    INFO(cmd);
    const Run made = run(cmd);
    REQUIRE(made.status == 0);
    const auto doc = nlohmann::json::parse(made.out);
    CHECK(doc.at("format") == "labeldp-mechanism");
    CHECK(doc.at("version") == 1);
    const double eps = doc.at("eps").get<double>();
    if (doc.contains("probabilities")) {
      // The contract's Exactness: the printed numbers are eps-DP in exact arithmetic.
      CHECK(labeldp::satisfies_epsilon(probabilities(doc), eps));
    }
    write("m.json", made.out);
    const Run audited = run("audit --mechanism m.json --json");
    INFO(audited.err);
    REQUIRE(audited.status == 0);
    const double realized = nlohmann::json::parse(audited.out).at("epsilon").get<double>();
    CHECK(realized <= eps);
    // A smaller eps than the mechanism meets: rejected (finite: not eps-DP; others: the
    // rebuilt mechanism's derived fields differ).
    write("bad.json", with_eps(made.out, "0.5"));
    const Run bad = run("audit --mechanism bad.json --json");
    if (doc.at("mechanism") == "rpwithprior" || (doc.contains("probabilities") && realized <= 0.5)) {
      // RPWithPrior: eps is a defining parameter (a different, valid mechanism); a finite one
      // whose probabilities are 0.5-DP (e.g. a single bin) stays valid.
      CHECK(bad.status == 0);
    } else {
      require_bad_input(bad, "bad.json:");
      CHECK_THAT(bad.err, Contains("field '"));
    }
  }
}

TEST_CASE("cli mechanism files: bins prints probabilities that are eps-DP exactly on random priors",
          "[cli][mechanism_file]") {
  REQUIRE_CLI();
  std::mt19937_64 rng(11);
  int checked = 0;
  for (int t = 0; t < 24; ++t) {
    const int k = 2 + int(rng() % 12);
    std::string csv = "value,count\n";
    for (int i = 0; i < k; ++i)
      csv += std::to_string(i * 3 + int(rng() % 3)) + "," + std::to_string(1 + rng() % 50) + "\n";
    write("rp.csv", csv);
    for (const char* eps : {"0.05", "0.7", "1", "2.5", "8"}) {
      const Run r = run(std::string("bins --prior rp.csv --json --eps ") + eps);
      REQUIRE(r.status == 0);
      const auto doc = nlohmann::json::parse(r.out);
      INFO(csv << " eps " << eps);
      CHECK(labeldp::satisfies_epsilon(probabilities(doc), std::stod(eps)));
      ++checked;
    }
  }
  CHECK(checked == 120);
}

TEST_CASE("cli mechanism files: audit rejects a file with a wrong version, unknown field or duplicate key",
          "[cli][mechanism_file]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.5\n1,0.5\n");
  const Run made = run("bins --prior p.csv --eps 1 --json");
  REQUIRE(made.status == 0);
  const std::string good = made.out;
  auto edit = [&](const std::string& from, const std::string& to) {
    const auto at = good.find(from);
    REQUIRE(at != std::string::npos);
    return good.substr(0, at) + to + good.substr(at + from.size());
  };
  write("v.json", edit("\"version\":1", "\"version\":7"));
  require_bad_input(run("audit --mechanism v.json"), "'version'");
  write("u.json", edit("\"version\":1", "\"version\":1,\"seed\":3"));
  require_bad_input(run("audit --mechanism u.json"), "'seed'");
  write("d.json", edit("\"version\":1", "\"version\":1,\"version\":1"));
  require_bad_input(run("audit --mechanism d.json"), "duplicate");
  write("t.json", good.substr(0, good.size() / 2));
  require_bad_input(run("audit --mechanism t.json"), "t.json:");
}
