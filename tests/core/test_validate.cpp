#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/validate.hpp>
#include <limits>

using Catch::Matchers::Contains;

TEST_CASE("validate_epsilon rejects each non-positive or non-finite value", "[validate]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SECTION("zero") { REQUIRE_THROWS_WITH(labeldp::validate_epsilon(0.0), "'eps' must be finite and positive, got 0"); }
  SECTION("negative") {
    REQUIRE_THROWS_WITH(labeldp::validate_epsilon(-1.0), "'eps' must be finite and positive, got -1");
  }
  SECTION("NaN") {
    REQUIRE_THROWS_WITH(labeldp::validate_epsilon(nan),
                        Contains("'eps' must be finite and positive, got") && Contains("nan"));
  }
  SECTION("+inf") { REQUIRE_THROWS_WITH(labeldp::validate_epsilon(inf), Contains("got inf")); }
  SECTION("-inf") { REQUIRE_THROWS_AS(labeldp::validate_epsilon(-inf), std::invalid_argument); }
  SECTION("accepted") {
    REQUIRE_NOTHROW(labeldp::validate_epsilon(1e-300));
    REQUIRE_NOTHROW(labeldp::validate_epsilon(20.0));
  }
}

TEST_CASE("validate_* name the parameter and print 17 significant digits", "[validate]") {
  REQUIRE_THROWS_WITH(labeldp::validate_finite_nonnegative("B", -0.1),
                      "'B' must be finite and non-negative, got -0.10000000000000001");
  REQUIRE_THROWS_WITH(labeldp::validate_in_range("p", 1.5, 0, 1), "'p' must be finite and in [0, 1], got 1.5");
  REQUIRE_THROWS_WITH(labeldp::validate_finite("value", std::numeric_limits<double>::infinity()),
                      "'value' must be finite, got inf");
  REQUIRE_NOTHROW(labeldp::validate_finite_nonnegative("B", 0.0));
  REQUIRE_NOTHROW(labeldp::validate_in_range("p", 1.0, 0, 1));
}
