#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <labeldp/core/label_grid.hpp>
#include <labeldp/core/random.hpp>
#include <limits>
#include <span>
#include <vector>

using Catch::Matchers::Contains;
using labeldp::LabelGrid;

namespace {

// Brute force: the index of the point nearest to y clipped to [lo, hi], ties to the larger point.
// Exact for the dyadic grids and labels used here.
std::int64_t nearest_point(double lo, double hi, double step, std::int64_t steps, double y) {
  const double c = std::clamp(y, lo, hi);
  std::int64_t best = 0;
  for (std::int64_t j = 1; j <= steps; ++j)
    if (std::abs(c - (lo + step * double(j))) <= std::abs(c - (lo + step * double(best)))) best = j;
  return best;
}

}  // namespace

TEST_CASE("LabelGrid: index clips to [lo, hi] and rounds to the nearest point, ties up", "[label_grid]") {
  SECTION("boundaries") {
    const LabelGrid<> g(0.0, 100.0, 2.5);
    CHECK(g.steps() == 40);
    CHECK(g.index(0.0) == 0);
    CHECK(g.index(-7.0) == 0);
    CHECK(g.index(-1e300) == 0);
    CHECK(g.index(100.0) == 40);
    CHECK(g.index(1e300) == 40);
    CHECK(g.index(1.25) == 1);  // a tie goes up
    CHECK(g.index(std::nextafter(1.25, 0.0)) == 0);
    CHECK(g.index(98.75) == 40);
    CHECK(g.index(std::nextafter(98.75, 0.0)) == 39);
    CHECK(g.index(std::nextafter(100.0, 0.0)) == 40);
    CHECK(g.index(std::nextafter(0.0, 1.0)) == 0);
  }
  SECTION("every label of a fine dyadic sweep, against brute force") {
    for (const auto& g : {LabelGrid<>(-3.0, 5.0, 0.5), LabelGrid<>::power_of_two(-3.0, 5.0, 0.5),
                          LabelGrid<>::power_of_two(-3.0, 4.9, 0.5)}) {
      for (int k = 0; k <= 12 * 1024; ++k) {
        const double y = -5.0 + k / 1024.0;
        INFO("grid [" << g.lo() << ", " << g.hi() << "] y " << y);
        REQUIRE(g.index(y) == nearest_point(g.lo(), g.hi(), g.step(), g.steps(), y));
      }
    }
  }
}

TEST_CASE("LabelGrid: the top point is hi exactly; outputs clip to [lo, hi]", "[label_grid]") {
  const LabelGrid<> g(0.1, 0.7, 0.2);
  REQUIRE(0.1 + 3 * 0.2 != 0.7);  // lo + N g misses hi by a rounding
  CHECK(g.steps() == 3);
  CHECK(g.value(3) == 0.7);
  CHECK(g.values()[3] == 0.7);
  CHECK(g.values().size() == 4);
  CHECK(g.value(0) == 0.1);
  CHECK(g.value(2) == 0.1 + 2 * 0.2);
  CHECK(g.value(5) == 0.1 + 5 * 0.2);   // noisy indices beyond N: lo + g j
  CHECK(g.value(-2) == 0.1 - 2 * 0.2);  // and below 0
  CHECK(g.top() == 0.7);
  CHECK(g.index(0.7) == 3);
  for (std::int64_t j : {-1000000000000LL, -1LL, 0LL}) CHECK(g.output(j, true) == 0.1);
  for (std::int64_t j : {3LL, 4LL, 1000000000000LL}) CHECK(g.output(j, true) == 0.7);
  CHECK(g.output(1, true) == g.value(1));
  for (std::int64_t j = -4; j <= 8; ++j) CHECK(g.output(j, false) == g.value(j));
}

TEST_CASE("LabelGrid::power_of_two: N = round((hi - lo)/g), top point lo + gN, clipped top", "[label_grid]") {
  SECTION("g divides the range: the same grid as from a resolution") {
    const auto p = LabelGrid<>::power_of_two(0.0, 5.0, 0.25);
    const LabelGrid<> r(0.0, 5.0, 0.25);
    CHECK(p.steps() == 20);
    CHECK(p.values() == r.values());
    CHECK(p.top() == 5.0);
    for (double y : {-1.0, 0.1, 0.125, 2.4, 4.9, 5.0, 6.0}) CHECK(p.index(y) == r.index(y));
  }
  SECTION("the top point above hi") {
    const auto p = LabelGrid<>::power_of_two(0.0, 0.9, 0.25);  // 3.6 steps -> 4
    CHECK(p.steps() == 4);
    CHECK(p.value(4) == 1.0);
    CHECK(p.top() == 0.9);
    CHECK(p.output(4, true) == 0.9);
    CHECK(p.output(9, true) == 0.9);
    CHECK(p.output(4, false) == 1.0);
    CHECK(p.output(9, false) == 2.25);
    CHECK(p.output(3, true) == 0.75);
    CHECK(p.index(0.9) == 4);
    CHECK(p.index(0.875) == 4);
    CHECK(p.index(std::nextafter(0.875, 0.0)) == 3);
  }
  SECTION("the top point below hi") {
    const auto p = LabelGrid<>::power_of_two(0.0, 0.8, 0.25);  // 3.2 steps -> 3
    CHECK(p.steps() == 3);
    CHECK(p.value(3) == 0.75);
    CHECK(p.top() == 0.75);
    CHECK(p.index(0.8) == 3);
    CHECK(p.output(7, false) == 1.75);
  }
  SECTION("a step above twice the range: one step, every label at lo") {
    const auto p = LabelGrid<>::power_of_two(0.0, 1.0, 4.0);
    CHECK(p.steps() == 1);
    for (double y : {-1.0, 0.0, 0.7, 1.0, 9.0}) CHECK(p.index(y) == 0);
    CHECK(p.value(1) == 4.0);
    CHECK(p.top() == 1.0);
    CHECK(p.output(1, true) == 1.0);
    CHECK(p.output(1, false) == 4.0);
  }
  SECTION("a step that rounds the range up to one step") {
    const auto p = LabelGrid<>::power_of_two(0.0, 1.0, 2.0);  // 0.5 steps -> 1 (ties up)
    CHECK(p.steps() == 1);
    CHECK(p.index(1.0) == 1);
    CHECK(p.index(0.9) == 0);
  }
}

TEST_CASE("LabelGrid rejects each bad parameter, naming it", "[label_grid]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  SECTION("lo >= hi") {
    REQUIRE_THROWS_WITH(LabelGrid<>(1.0, 1.0, 0.5), "'lo' must be below 'hi', got lo = 1, hi = 1");
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(1.0, 0.0, 0.5), "'lo' must be below 'hi', got lo = 1, hi = 0");
  }
  SECTION("NaN or infinite lo, hi") {
    REQUIRE_THROWS_WITH(LabelGrid<>(nan, 1.0, 0.5), "'lo' must be finite, got nan");
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, inf, 0.5), "'hi' must be finite, got inf");
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(-inf, 1.0, 0.5), "'lo' must be finite, got -inf");
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(-1e308, 1e308, 1.0), "'hi' - 'lo' must be finite");
  }
  SECTION("resolution 0, negative, NaN, infinite") {
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 0.0), "'resolution' must be finite and positive, got 0");
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, -1.0), "'resolution' must be finite and positive, got -1");
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, nan), "'resolution' must be finite and positive, got nan");
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, inf), "'resolution' must be finite and positive, got inf");
  }
  SECTION("resolution not dividing hi - lo, or too many or too few steps") {
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 0.3),
                        "'resolution' must divide hi - lo into 1 to 2^31 steps, got 0.29999999999999999 for [0, 1]");
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 1e-12),
                        Contains("'resolution' must divide hi - lo into 1 to 2^31 steps"));
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 2.0), Contains("'resolution' must divide hi - lo into 1 to 2^31 steps"));
    REQUIRE_NOTHROW(LabelGrid<>(0.0, 2147483648.0, 1.0));
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 2147483649.0, 1.0), Contains("into 1 to 2^31 steps"));
  }
  SECTION("power-of-two step") {
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(0.0, 1.0, 0.375), "'step' must be a power of two, got 0.375");
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(0.0, 1.0, 0.0), "'step' must be finite and positive, got 0");
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(0.0, 1.0, -0.5), "'step' must be finite and positive, got -0.5");
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(0.0, 1.0, std::numeric_limits<double>::denorm_min()),
                        "'step' must divide hi - lo = 1 into at most 2^62 steps, got 4.9406564584124654e-324");
  }
  SECTION("NaN or infinite label") {
    const LabelGrid<> g(0.0, 1.0, 0.5);
    REQUIRE_THROWS_WITH(g.index(nan), "'label' must be finite, got nan");
    REQUIRE_THROWS_WITH(g.index(-inf), "'label' must be finite, got -inf");
    REQUIRE_THROWS_WITH(LabelGrid<>::power_of_two(0.0, 1.0, 0.5).index(inf), "'label' must be finite, got inf");
  }
}

TEST_CASE("round_nonnegative agrees with std::llround on [0, 2^63)", "[label_grid]") {
  std::vector<double> xs = {0.0,
                            0.49999999999999994,
                            0.5,
                            1.5,
                            2.5,
                            4503599627370495.5,
                            4503599627370497.0,
                            9007199254740993.0,
                            1e17,
                            9.2e18,
                            std::nextafter(0.5, 0.0),
                            std::nextafter(0.5, 1.0)};
  labeldp::SeededRandom g(4);
  for (int i = 0; i < 100000; ++i)
    xs.push_back(std::ldexp(double(g() >> 11), int(g() % 80) - 60));  // 53-bit mantissas, many exponents
  for (double x : xs) {
    if (!(x < 9.2e18)) continue;
    INFO("x = " << labeldp::detail::format_number(x));
    REQUIRE(labeldp::detail::round_nonnegative(x) == std::llround(x));
  }
}

TEST_CASE("LabelGrid: indices() and outputs() equal index() and output() label by label", "[label_grid]") {
  const double inf = std::numeric_limits<double>::infinity(), most = std::numeric_limits<double>::max();
  // Resolution grids (division by g), power-of-two grids (multiplication by 1/g), a grid coarser
  // than 2(hi - lo) (every label at index 0) and ranges near the largest double.
  const std::vector<LabelGrid<>> grids = {LabelGrid<>(0.0, 5000.0, 50.0),
                                          LabelGrid<>(-1.0, 1.0, 0.1),
                                          LabelGrid<>(3.0, 7.0, 0.5),
                                          LabelGrid<>::power_of_two(0.0, 5000.0, std::ldexp(1.0, -19)),
                                          LabelGrid<>::power_of_two(-2.5, 1e6, 1024.0),
                                          LabelGrid<>::power_of_two(0.0, 1.0, 4.0),
                                          LabelGrid<>::power_of_two(-most / 2, most / 2, std::ldexp(1.0, 964)),
                                          LabelGrid<>::power_of_two(0.0, 1e-300, std::ldexp(1.0, -1040))};
  labeldp::SeededRandom gen(11);
  for (const LabelGrid<>& g : grids) {
    const double lo = g.lo(), hi = g.hi(), w = hi - lo;
    std::vector<double> in = {lo, hi, std::nextafter(lo, -inf), std::nextafter(hi, inf), -most, most, 0.0, -0.0};
    for (std::int64_t j = 0; j <= std::min<std::int64_t>(g.steps(), 50); ++j) {
      const double v = lo + double(j) * double(g.step()), half = v + double(g.step()) / 2;
      in.insert(in.end(), {v, half, std::nextafter(half, -inf), std::nextafter(half, inf)});
    }
    for (int i = 0; i < 3000; ++i) {  // uniform on [lo - w/4, hi + w/4], without overflow near the largest double
      const double u = double(gen() >> 11) * 0x1p-53;
      in.push_back(lo - w / 4 + 0.75 * w * u + 0.75 * w * u);
    }
    std::vector<std::int64_t> idx(in.size());
    g.indices(std::span<const double>(in), idx.data());
    for (std::size_t i = 0; i < in.size(); ++i) {
      INFO("grid [" << lo << ", " << hi << "] step " << g.step() << ", label " << in[i]);
      REQUIRE(idx[i] == g.index(in[i]));
    }
    // Noisy indices: inside, at both ends, far outside, and the extremes of int64.
    std::vector<std::int64_t> noisy = {0,
                                       1,
                                       g.steps() - 1,
                                       g.steps(),
                                       g.steps() + 1,
                                       -1,
                                       -(std::int64_t(1) << 62),
                                       std::numeric_limits<std::int64_t>::max(),
                                       std::numeric_limits<std::int64_t>::min()};
    for (int i = 0; i < 3000; ++i) noisy.push_back(std::int64_t(gen() % std::uint64_t(3 * g.steps() + 3)) - g.steps());
    for (const bool clip : {false, true}) {
      std::vector<double> out(noisy.size());
      g.outputs(noisy.data(), noisy.size(), clip, out.data());
      for (std::size_t i = 0; i < noisy.size(); ++i) {
        INFO("grid [" << lo << ", " << hi << "], clip " << clip << ", noisy index " << noisy[i]);
        REQUIRE(std::isfinite(out[i]));
        REQUIRE(out[i] == g.output(noisy[i], clip));
      }
    }
  }
  SECTION("a non-finite label throws before anything is written") {
    const LabelGrid<> g(0.0, 1.0, 0.5);
    const std::vector<double> in = {0.2, 0.7, std::nan(""), 0.9};
    std::vector<std::int64_t> idx(in.size(), -7);
    REQUIRE_THROWS_WITH(g.indices(std::span<const double>(in), idx.data()), "'label' must be finite, got nan");
    CHECK(std::all_of(idx.begin(), idx.end(), [](std::int64_t j) { return j == -7; }));
  }
}
