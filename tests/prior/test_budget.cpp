// Tests of labeldp/prior/budget.hpp: Theorem 7's split sqrt(k/n), its clamping, and validation.
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/prior/budget.hpp>
#include <limits>
#include <random>

using Catch::Matchers::Contains;
using labeldp::BudgetSplit;
using labeldp::split_budget;
using labeldp::theorem7_split;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("theorem7_split: eps1 = sqrt(k/n) when n > k/eps^2", "[budget]") {
  // The CPS wages on a 50-dollar grid: k = 101, n = 28155.
  const auto s = theorem7_split(1.0, 101, 28155);
  CHECK(s.eps_prior == Approx(std::sqrt(101.0 / 28155.0)).epsilon(1e-15));
  CHECK(s.eps_prior == Approx(0.0598939).epsilon(1e-5));
  CHECK(s.eps_mechanism == Approx(1.0 - std::sqrt(101.0 / 28155.0)).epsilon(1e-15));
  CHECK(s.total() == Approx(1.0).epsilon(1e-15));
  // The paper's Criteo run (Appendix E.1): k = 401, n ~ 1.4M gives eps1 ~ 0.017.
  CHECK(theorem7_split(1.0, 401, 1'400'000).eps_prior == Approx(0.017).margin(0.0005));
}

TEST_CASE("theorem7_split clamps eps1 to a fraction of eps when sqrt(k/n) is too large", "[budget]") {
  SECTION("default: half the budget") {
    const auto s = theorem7_split(0.05, 101, 28155);  // sqrt(k/n) = 0.0599 > 0.05
    CHECK(s.eps_prior == Approx(0.025).epsilon(1e-15));
    CHECK(s.eps_mechanism == Approx(0.025).epsilon(1e-15));
  }
  SECTION("custom fraction") {
    const auto s = theorem7_split(0.1, 100, 100, 0.2);  // sqrt(k/n) = 1
    CHECK(s.eps_prior == Approx(0.02).epsilon(1e-15));
    CHECK(s.eps_mechanism == Approx(0.08).epsilon(1e-15));
  }
  SECTION("boundary: sqrt(k/n) exactly at the clamp is kept") {
    const auto s = theorem7_split(2.0, 1, 1);  // sqrt = 1 = 0.5 * 2
    CHECK(s.eps_prior == 1.0);
    CHECK(s.eps_mechanism == 1.0);
  }
  SECTION("the split always lies strictly inside (0, eps)") {
    for (double eps : {1e-6, 0.01, 0.5, 1.0, 8.0, 100.0})
      for (long k : {1L, 10L, 401L, 100000L})
        for (long n : {1L, 50L, 28155L, 10'000'000L}) {
          const auto s = theorem7_split(eps, k, n);
          INFO("eps=" << eps << " k=" << k << " n=" << n);
          CHECK(s.eps_prior > 0);
          CHECK(s.eps_mechanism > 0);
          CHECK(s.eps_prior <= 0.5 * eps);
          CHECK(s.total() == Approx(eps).epsilon(1e-14));
        }
  }
}

TEST_CASE("theorem7_split rejects eps = 0", "[budget]") {
  REQUIRE_THROWS_AS(theorem7_split(0.0, 10, 100), std::invalid_argument);
  REQUIRE_THROWS_WITH(theorem7_split(0.0, 10, 100), "'eps' must be finite and positive, got 0");
}
TEST_CASE("theorem7_split rejects a negative eps", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(-1.0, 10, 100), "'eps' must be finite and positive, got -1");
}
TEST_CASE("theorem7_split rejects a NaN eps", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(kNaN, 10, 100), "'eps' must be finite and positive, got nan");
}
TEST_CASE("theorem7_split rejects an infinite eps", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(kInf, 10, 100), "'eps' must be finite and positive, got inf");
}
TEST_CASE("theorem7_split rejects k = 0", "[budget]") {
  REQUIRE_THROWS_AS(theorem7_split(1.0, 0, 100), std::invalid_argument);
  REQUIRE_THROWS_WITH(theorem7_split(1.0, 0, 100), "'k' must be at least 1, got 0");
}
TEST_CASE("theorem7_split rejects n = 0", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(1.0, 10, 0), "'n' must be at least 1, got 0");
}
TEST_CASE("theorem7_split rejects a negative n", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(1.0, 10, -5), "'n' must be at least 1, got -5");
}
TEST_CASE("theorem7_split rejects max_prior_fraction = 0", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(1.0, 10, 100, 0.0), "'max_prior_fraction' must be in (0, 1), got 0");
}
TEST_CASE("theorem7_split rejects max_prior_fraction = 1", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(1.0, 10, 100, 1.0), "'max_prior_fraction' must be in (0, 1), got 1");
}
TEST_CASE("theorem7_split rejects a NaN max_prior_fraction", "[budget]") {
  REQUIRE_THROWS_WITH(theorem7_split(1.0, 10, 100, kNaN), "'max_prior_fraction' must be in (0, 1), got nan");
}

TEST_CASE("BudgetSplit::of keeps valid values", "[budget]") {
  const auto s = BudgetSplit::of(0.1, 0.9);
  CHECK(s.eps_prior == 0.1);
  CHECK(s.eps_mechanism == 0.9);
  CHECK(s.total() == Approx(1.0));
  CHECK_NOTHROW(s.validate());
}
TEST_CASE("BudgetSplit::of rejects eps_prior = 0", "[budget]") {
  REQUIRE_THROWS_AS(BudgetSplit::of(0.0, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(BudgetSplit::of(0.0, 1.0), "'eps_prior' must be finite and positive, got 0");
}
TEST_CASE("BudgetSplit::of rejects a negative eps_prior", "[budget]") {
  REQUIRE_THROWS_WITH(BudgetSplit::of(-0.5, 1.0), "'eps_prior' must be finite and positive, got -0.5");
}
TEST_CASE("BudgetSplit::of rejects a NaN eps_mechanism", "[budget]") {
  REQUIRE_THROWS_WITH(BudgetSplit::of(0.5, kNaN), "'eps_mechanism' must be finite and positive, got nan");
}
TEST_CASE("BudgetSplit::of rejects an infinite eps_mechanism", "[budget]") {
  REQUIRE_THROWS_WITH(BudgetSplit::of(0.5, kInf), "'eps_mechanism' must be finite and positive, got inf");
}
TEST_CASE("BudgetSplit::validate rejects a field set by hand", "[budget]") {
  BudgetSplit s;
  s.eps_prior = 0.5;
  s.eps_mechanism = -1;
  REQUIRE_THROWS_WITH(s.validate(), "'eps_mechanism' must be finite and positive, got -1");
}

TEST_CASE("split_budget gives the rest to the mechanism", "[budget]") {
  const auto s = split_budget(1.0, 0.25);
  CHECK(s.eps_prior == 0.25);
  CHECK(s.eps_mechanism == 0.75);
}
TEST_CASE("split_budget rejects eps_prior = eps", "[budget]") {
  REQUIRE_THROWS_AS(split_budget(1.0, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(split_budget(1.0, 1.0), "'eps_prior' must be less than the total eps 1, got 1");
}
TEST_CASE("split_budget rejects eps_prior > eps", "[budget]") {
  REQUIRE_THROWS_WITH(split_budget(1.0, 2.0), Contains("'eps_prior' must be less than the total eps 1, got 2"));
}
TEST_CASE("split_budget rejects a zero eps_prior", "[budget]") {
  REQUIRE_THROWS_WITH(split_budget(1.0, 0.0), "'eps_prior' must be finite and positive, got 0");
}
TEST_CASE("split_budget rejects a negative total eps", "[budget]") {
  REQUIRE_THROWS_WITH(split_budget(-1.0, 0.5), "'eps' must be finite and positive, got -1");
}

TEST_CASE("Budget splits never exceed eps in exact arithmetic", "[budget]") {
  // eps1 + eps2 <= eps checked exactly: in long double for split_budget (eps1 and eps2 within a
  // factor 99 of each other, so their sum is exact there), by an exact subtraction (Sterbenz) for
  // theorem7_split; over many pairs where fl(eps - eps1) rounds up.
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int rounded_up = 0;
  for (int t = 0; t < 20000; ++t) {
    const double eps = std::ldexp(1.0 + u(gen), int(t % 9) - 4), eps1 = eps * (0.01 + 0.98 * u(gen));
    const auto split = labeldp::split_budget(eps, eps1);
    const long double total = static_cast<long double>(split.eps_prior) + static_cast<long double>(split.eps_mechanism);
    REQUIRE(total <= static_cast<long double>(eps));
    // And it is the largest such double.
    const long double next = static_cast<long double>(split.eps_prior) +
                             static_cast<long double>(std::nextafter(split.eps_mechanism, INFINITY));
    CHECK(next > static_cast<long double>(eps));
    if (eps - eps1 != split.eps_mechanism) ++rounded_up;
    const auto t7 = labeldp::theorem7_split(eps, 1 + t % 300, 1 + t * 7);
    REQUIRE(t7.eps_mechanism >= eps / 2);  // so eps - eps_mechanism is exact (Sterbenz)
    REQUIRE(eps - t7.eps_mechanism >= t7.eps_prior);
  }
  INFO(rounded_up << " splits lowered by one ulp");
  CHECK(rounded_up > 100);  // the naive subtraction would have exceeded eps in these cases
}
