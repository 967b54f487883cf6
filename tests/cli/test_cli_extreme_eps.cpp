// End-to-end: extreme but valid eps (contract, "Common rules", limits) give valid, exactly
// eps-DP output or a reason, never an internal message. Beyond eps = 700 the finite mechanisms
// are computed at 700 (core/validate.hpp, table_epsilon()); the files keep the eps asked for and
// audit at 700.
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/cli_harness.hpp"

using namespace labeldp::test::cli;
using Catch::Matchers::Contains;

TEST_CASE("cli: every construction command at eps 710, 800 and 1e308 writes a file that audits at 700",
          "[cli][extreme]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.2\n1,0.3\n5,0.5\n");
  write("o.csv", "output\n0\n1\n2\n5\n");
  for (const std::string eps : {"710", "800", "1e308"}) {
    for (const std::string command : {"bins", "optimal --outputs o.csv", "unbiased --grid 20", "unbiased --continuous",
                                      "unbiased --continuous --max-bias 0.1"}) {
      INFO(command << " --eps " << eps);
      const Run r = run(command + " --prior p.csv --eps " + eps + " --json");
      INFO(r.err);
      REQUIRE(r.status == 0);
      CHECK_THAT(r.out, Contains("\"eps\":" + std::string(eps == "1e308" ? "1e+308" : eps)));
      CHECK(r.out.find("nan") == std::string::npos);
      CHECK(r.out.find("inf") == std::string::npos);
      write("m.json", r.out);
      const Run audit = run("audit --mechanism m.json");
      INFO(audit.err);
      CHECK(audit.status == 0);
      CHECK(audit.out == "700\n");
    }
  }
}

TEST_CASE("cli privatize at eps 800, 1e308 and 1e-12 runs or refuses with a reason", "[cli][extreme]") {
  REQUIRE_CLI();
  const std::string labels = "y\n1\n2\n3\n4\n5\n";
  for (const std::string eps : {"800", "1e308", "1e-12"}) {
    for (const std::string method : {"bins", "unbiased", "rr-with-prior"}) {
      INFO(method << " --eps " << eps);
      const Run r = run(
          "privatize --column y --method " + method + " --lo 0 --hi 5 --resolution 1 --seed 1 --eps " + eps, labels);
      INFO(r.err);
      if (method == "unbiased" && eps == "1e-12") {
        // Unbiased outputs of magnitude range / eps = 5e12: their roundoff leaves a bias the
        // solver's final check refuses (a reason, not a biased mechanism).
        require_bad_input(r,
                          "'--method unbiased': the unbiased randomizer LP ended numerical-issue without a mechanism");
        continue;
      }
      REQUIRE(r.status == 0);
      CHECK(lines(r.out).size() == 6);
    }
  }
  // Below 2^-41 the prior's noise cannot be represented: a reason, not a hang.
  require_bad_input(run("privatize --column y --method bins --lo 0 --hi 5 --resolution 1 --eps 1e-300", labels),
                    "must be at least 2^-41");
}

TEST_CASE("cli: below eps ~1e-15 finite tables are label-independent (0-DP, exactly); unbiased refuses with a reason",
          "[cli][extreme]") {
  REQUIRE_CLI();
  write("p.csv", "value,prob\n0,0.2\n1,0.3\n5,0.5\n");
  // e^eps is 1 (or within a few ulps of it) as a double: the only tables eps-DP exactly as stored
  // are those with equal rows, and that is what comes out (not rows shaved below a sum of 1).
  for (const std::string command : {"bins --eps 1e-20", "baseline --kind rr --lo 0 --hi 5 --eps 1e-300",
                                    "baseline --kind rr-with-prior --lo 0 --hi 5 --eps 1e-17"}) {
    INFO(command);
    const Run r = run(command + " --prior p.csv --json");
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& P = j.at("probabilities");
    for (std::size_t i = 1; i < P.size(); ++i) CHECK(P[i] == P[0]);
    double sum = 0;
    for (const auto& x : P[0]) sum += x.get<double>();
    CHECK(std::abs(sum - 1) <= 1e-15);
    write("m.json", r.out);
    const Run audit = run("audit --mechanism m.json --json");
    INFO(audit.err);
    CHECK(audit.status == 0);
    CHECK_THAT(audit.out, Contains("\"epsilon\":0,") && Contains("\"within_eps\":true"));
  }
  // The unbiased randomizer's outputs grow as 1/eps: its LP refuses below ~1e-5 and says why.
  require_bad_input(run("unbiased --prior p.csv --grid 5 --eps 1e-7"), "use a larger eps");
}
