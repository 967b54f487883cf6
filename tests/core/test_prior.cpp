#include <catch2/catch.hpp>
#include <labeldp/core/prior.hpp>
#include <limits>
#include <random>

using Catch::Matchers::Contains;
using labeldp::FinitePrior;

TEST_CASE("FinitePrior sorts values and normalizes weights", "[prior]") {
  auto p = FinitePrior<>::from_weights({2.0, 0.0, 1.0}, {15, 60, 25});
  REQUIRE(p.size() == 3);
  CHECK(p.value(0) == 0.0);
  CHECK(p.value(2) == 2.0);
  CHECK(p.probability(0) == Approx(0.6).epsilon(1e-15));
  CHECK(p.probability(1) == Approx(0.25).epsilon(1e-15));
  CHECK(p.probability(2) == Approx(0.15).epsilon(1e-15));
  CHECK(p.probabilities().sum() == Approx(1.0).epsilon(1e-15));
  CHECK(p.find(1.0) == 1);
  CHECK(p.find(1.5) == -1);
  CHECK(p.index_of(2.0) == 2);
  REQUIRE_THROWS_WITH(p.index_of(1.5), "label 1.5 is not a value of the prior");
}

TEST_CASE("FinitePrior keeps zero-probability values", "[prior]") {
  auto p = FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.5, 0.0, 0.5});
  REQUIRE(p.size() == 3);
  CHECK(p.probability(1) == 0.0);
}

TEST_CASE("FinitePrior::from_labels is the empirical distribution", "[prior]") {
  std::mt19937_64 gen(3);
  std::vector<double> labels;
  std::vector<int> counts(5, 0);
  for (int i = 0; i < 1000; ++i) {
    const int v = int(gen() % 5);
    labels.push_back(double(v) * 1.5);
    ++counts[std::size_t(v)];
  }
  auto p = FinitePrior<>::from_labels(labels);
  REQUIRE(p.size() == 5);
  for (int v = 0; v < 5; ++v) {
    CHECK(p.value(v) == 1.5 * v);
    CHECK(p.probability(v) == Approx(counts[std::size_t(v)] / 1000.0).epsilon(1e-14));
  }
}

TEST_CASE("FinitePrior rejects each bad input with a message naming it", "[prior]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  SECTION("empty") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({}, {}), "prior is empty: at least one value is required");
  }
  SECTION("empty labels") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_labels({}), "prior is empty: at least one label is required");
  }
  SECTION("size mismatch") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({1.0, 2.0}, {1.0}), "prior has 2 values but 1 probabilities");
  }
  SECTION("negative probability") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({1.0, 2.0}, {1.1, -0.1}),
                        "probability -0.10000000000000001 is negative (value 2)");
  }
  SECTION("NaN probability") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({1.0, 2.0}, {nan, 1.0}), Contains("'probability' must not be NaN"));
  }
  SECTION("infinite probability") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({1.0, 2.0}, {inf, 1.0}), "'probability' must be finite, got inf");
  }
  SECTION("all-zero probabilities") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({1.0, 2.0}, {0.0, 0.0}),
                        "prior probabilities are all 0: at least one must be positive");
  }
  SECTION("duplicate value") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({1.0, 2.0, 1.0}, {0.2, 0.3, 0.5}), "duplicate value 1 in prior");
  }
  SECTION("NaN value") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({nan}, {1.0}), Contains("'value' must be finite"));
  }
  SECTION("infinite value") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({-inf}, {1.0}), "'value' must be finite, got -inf");
  }
  SECTION("infinite label") {
    REQUIRE_THROWS_WITH(FinitePrior<>::from_labels({1.0, inf}), "'label' must be finite, got inf");
  }
  SECTION("overflowing weights") {
    const double big = std::numeric_limits<double>::max();
    REQUIRE_THROWS_WITH(FinitePrior<>::from_weights({1.0, 2.0}, {big, big}), Contains("not finite"));
  }
}
