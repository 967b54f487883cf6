// Tests of labeldp/prior/discretize.hpp: grid construction, clipping and the three rounding
// rules against a brute-force scan of the support, and validation.
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/io/csv.hpp>
#include <labeldp/prior/discretize.hpp>
#include <limits>
#include <random>

using Catch::Matchers::Contains;
using labeldp::Discretizer;
using labeldp::Index;
using labeldp::Rounding;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Brute force: clip, then scan every support point.
Index brute_index(const labeldp::Vector<double>& s, double y, Rounding r) {
  y = std::clamp(y, s[0], s[s.size() - 1]);
  Index best = -1;
  for (Index i = 0; i < s.size(); ++i) {
    switch (r) {
      case Rounding::Floor:
        if (s[i] <= y) best = i;
        break;
      case Rounding::Ceil:
        if (s[i] >= y && best < 0) best = i;
        break;
      case Rounding::Nearest:
        // <= prefers the later (larger) point on exact ties.
        if (best < 0 || std::abs(s[i] - y) <= std::abs(s[best] - y)) best = i;
        break;
    }
  }
  return best;
}
}  // namespace

TEST_CASE("grid: wages clipped to [0, 5000] and rounded to 50", "[discretize]") {
  const auto d = Discretizer<>::grid(0.0, 5000.0, 50.0);
  REQUIRE(d.size() == 101);
  for (Index i = 0; i < d.size(); ++i) CHECK(d.support()[i] == 50.0 * double(i));
  CHECK(d.lo() == 0.0);
  CHECK(d.hi() == 5000.0);
  CHECK(d(354.94) == 350.0);
  CHECK(d(375.0) == 400.0);  // tie rounds up
  CHECK(d(374.99) == 350.0);
  CHECK(d(50.05) == 50.0);
  CHECK(d(18777.2) == 5000.0);  // clipped
  CHECK(d(-3.0) == 0.0);        // clipped
  CHECK(d.index(354.94) == 7);
}

TEST_CASE("grid: the last point is hi when hi - lo is not a multiple of the resolution", "[discretize]") {
  const auto d = Discretizer<>::grid(1.0, 2.05, 0.25);
  REQUIRE(d.size() == 6);
  const double expected[] = {1.0, 1.25, 1.5, 1.75, 2.0, 2.05};
  for (Index i = 0; i < 6; ++i) CHECK(d.support()[i] == expected[i]);
}

TEST_CASE("grid: decimal steps do not accumulate error or duplicate hi", "[discretize]") {
  const auto d = Discretizer<>::grid(0.0, 0.3, 0.1);
  REQUIRE(d.size() == 4);
  CHECK(d.support()[3] == 0.3);
  CHECK(d.support()[2] == 0.2);
  const auto e = Discretizer<>::grid(0.0, 1.0, 0.01);
  REQUIRE(e.size() == 101);
  for (Index i = 1; i < e.size(); ++i) CHECK(e.support()[i] > e.support()[i - 1]);
  CHECK(e.support()[100] == 1.0);
}

TEST_CASE("rounding rules match a brute-force scan", "[discretize]") {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> u(-20, 120);
  const std::vector<double> pts = {3.0, -10.0, 0.0, 7.5, 100.0, 42.0, 42.5};
  for (Rounding r : {Rounding::Nearest, Rounding::Floor, Rounding::Ceil}) {
    const auto d = Discretizer<>::points(pts, r);
    CHECK(d.rounding() == r);
    REQUIRE(d.size() == 7);
    for (Index i = 1; i < d.size(); ++i) REQUIRE(d.support()[i] > d.support()[i - 1]);
    std::vector<double> ys = {-10.0, 100.0, 42.25, 42.0, 1.5, 5.25, -1e300, 1e300};
    for (int t = 0; t < 20000; ++t) ys.push_back(u(gen));
    for (int t = 0; t < 2000; ++t) ys.push_back(std::round(u(gen) * 4) / 4);  // hits and ties
    for (double y : ys) {
      INFO("rule " << int(r) << " y = " << y);
      REQUIRE(d.index(y) == brute_index(d.support(), y, r));
      REQUIRE(d(y) == d.support()[d.index(y)]);
    }
  }
}

TEST_CASE("points: a single support point maps everything to it", "[discretize]") {
  const auto d = Discretizer<>::points({5.0});
  CHECK(d(-100.0) == 5.0);
  CHECK(d(5.0) == 5.0);
  CHECK(d(1e9) == 5.0);
}

TEST_CASE("floor grid mirrors the paper's Criteo rounding (integers 0..400)", "[discretize]") {
  const auto d = Discretizer<>::grid(0.0, 400.0, 1.0, Rounding::Floor);
  REQUIRE(d.size() == 401);
  CHECK(d(12.99) == 12.0);
  CHECK(d(399.999) == 399.0);
  CHECK(d(1234.5) == 400.0);
}

TEST_CASE("grid rejects a NaN lo", "[discretize]") {
  REQUIRE_THROWS_AS(Discretizer<>::grid(kNaN, 1.0, 0.1), std::invalid_argument);
  REQUIRE_THROWS_WITH(Discretizer<>::grid(kNaN, 1.0, 0.1), "'lo' must be finite, got nan");
}
TEST_CASE("grid rejects an infinite hi", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::grid(0.0, kInf, 0.1), "'hi' must be finite, got inf");
}
TEST_CASE("grid rejects hi = lo", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::grid(1.0, 1.0, 0.1), "'hi' must be greater than 'lo' = 1, got 1");
}
TEST_CASE("grid rejects hi < lo", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::grid(1.0, -1.0, 0.1), "'hi' must be greater than 'lo' = 1, got -1");
}
TEST_CASE("grid rejects resolution = 0", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::grid(0.0, 1.0, 0.0), "'resolution' must be finite and positive, got 0");
}
TEST_CASE("grid rejects a negative resolution", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::grid(0.0, 1.0, -0.5), "'resolution' must be finite and positive, got -0.5");
}
TEST_CASE("grid rejects a NaN resolution", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::grid(0.0, 1.0, kNaN), "'resolution' must be finite and positive, got nan");
}
TEST_CASE("grid rejects a resolution giving more than 10^7 points", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::grid(0.0, 1.0, 1e-9), Contains("'resolution' must give at most 10^7 grid points"));
}
TEST_CASE("points rejects an empty support", "[discretize]") {
  REQUIRE_THROWS_AS(Discretizer<>::points({}), std::invalid_argument);
  REQUIRE_THROWS_WITH(Discretizer<>::points({}), "'support' must not be empty");
}
TEST_CASE("points rejects a NaN support value", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::points({1.0, kNaN}), "'support value' must be finite, got nan");
}
TEST_CASE("points rejects a duplicate support value", "[discretize]") {
  REQUIRE_THROWS_WITH(Discretizer<>::points({1.0, 2.0, 1.0}), "duplicate support value 1");
}
TEST_CASE("index rejects a NaN label", "[discretize]") {
  const auto d = Discretizer<>::grid(0.0, 1.0, 0.5);
  REQUIRE_THROWS_AS(d.index(kNaN), std::invalid_argument);
  REQUIRE_THROWS_WITH(d.index(kNaN), "'label' must be finite, got nan");
}
TEST_CASE("index rejects an infinite label", "[discretize]") {
  const auto d = Discretizer<>::grid(0.0, 1.0, 0.5);
  REQUIRE_THROWS_WITH(d(-kInf), "'label' must be finite, got -inf");
}

TEST_CASE("CPS wages: every discretized wage is a support point, clipping only the tail", "[discretize]") {
  namespace fs = std::filesystem;
  const auto wages = labeldp::io::read_column_csv(
      (fs::path(__FILE__).parent_path().parent_path().parent_path() / "examples/data/cps1988.csv").string(), "wage");
  const auto d = Discretizer<>::grid(0.0, 5000.0, 50.0);
  std::size_t clipped = 0;
  double max_err = 0;
  for (double w : wages) {
    const double q = d(w);
    REQUIRE(q == 50.0 * std::round(std::min(w, 5000.0) / 50.0));  // independent formula on this grid
    if (w > 5000)
      ++clipped;
    else
      max_err = std::max(max_err, std::abs(q - w));
  }
  CHECK(max_err <= 25.0);
  CHECK(clipped > 0);
  CHECK(clipped < wages.size() / 100);  // the heavy tail above $5000/week is under 1%
}
