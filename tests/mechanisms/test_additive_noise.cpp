#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include <labeldp/core/audit.hpp>
#include <labeldp/mechanisms/additive_noise.hpp>

#include "oracles/statistics.hpp"

using labeldp::DiscreteLaplaceMechanism;
using labeldp::LabelGrid;
using Catch::Matchers::Contains;

TEST_CASE("LabelGrid clips and rounds labels to the public grid", "[additive_noise]") {
  LabelGrid<> g(0.0, 100.0, 2.5);
  CHECK(g.steps() == 40);
  CHECK(g.index(-7.0) == 0);
  CHECK(g.index(1.2) == 0);
  CHECK(g.index(1.3) == 1);
  CHECK(g.index(99.0) == 40);
  CHECK(g.index(1e300) == 40);
  CHECK(g.value(40) == 100.0);
  CHECK(g.values().size() == 41);
}

TEST_CASE("LabelGrid rejects each bad parameter", "[additive_noise]") {
  SECTION("lo >= hi") { REQUIRE_THROWS_WITH(LabelGrid<>(1.0, 1.0, 0.5), "'lo' must be below 'hi', got lo = 1, hi = 1"); }
  SECTION("granularity 0") { REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 0.0), "'granularity' must be finite and positive, got 0"); }
  SECTION("granularity not dividing") {
    REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 0.3), "'granularity' must divide hi - lo into 1 to 2^31 steps, got 0.29999999999999999 for [0, 1]");
  }
  SECTION("granularity too small") { REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 1e-12), Contains("must divide hi - lo into 1 to 2^31 steps")); }
  SECTION("NaN lo") { REQUIRE_THROWS_WITH(LabelGrid<>(std::nan(""), 1.0, 0.5), Contains("'lo' must be finite")); }
  SECTION("infinite hi") { REQUIRE_THROWS_WITH(LabelGrid<>(0.0, INFINITY, 0.5), "'hi' must be finite, got inf"); }
  SECTION("NaN label") { REQUIRE_THROWS_WITH(LabelGrid<>(0.0, 1.0, 0.5).index(std::nan("")), Contains("'label' must be finite")); }
}

TEST_CASE("Discrete Laplace (clipped): exact matrix audits to eps and matches the sampler", "[additive_noise]") {
  for (double eps : {0.1, 1.0, 5.0}) {
    DiscreteLaplaceMechanism<> lap(LabelGrid<>(10.0, 20.0, 1.0), eps, true);
    const auto m = lap.mechanism();
    INFO("eps = " << eps);
    const double audited = labeldp::audit_epsilon(m);
    CHECK(audited <= eps * (1 + 1e-12));
    CHECK(audited >= eps * (1 - 1e-9));  // the clipped end columns are tight
    labeldp::SeededRandom g(77);
    for (int j : {0, 4, 10}) {
      std::vector<long long> counts(11, 0);
      for (int s = 0; s < 30000; ++s) ++counts[std::size_t(std::llround(lap.sample(10.0 + j, g) - 10.0))];
      std::vector<double> p(m.probabilities().row(j).data(), m.probabilities().row(j).data() + 11);
      const auto r = labeldp::test::chi_square(counts, p);
      INFO("input index " << j << " chi2 " << r.statistic);
      CHECK(r.p_value > 1e-4);
    }
  }
}

TEST_CASE("Discrete Laplace (unclipped): noise pmf and mean squared error", "[additive_noise]") {
  DiscreteLaplaceMechanism<> lap(LabelGrid<>(0.0, 8.0, 0.5), 2.0, false);
  const double a = lap.alpha();
  CHECK(16 * -std::log(a) <= 2.0 * (1 + 1e-12));
  // Series oracle for E[Z^2] g^2.
  double series = 0;
  for (int z = -2000; z <= 2000; ++z) series += (1 - a) / (1 + a) * std::pow(a, std::abs(z)) * z * z * 0.25;
  CHECK(lap.unclipped_mean_squared_error() == Approx(series).epsilon(1e-10));
  labeldp::SeededRandom g(3);
  double sum_sq = 0;
  const int n = 200000;
  std::map<long long, long long> seen;
  for (int s = 0; s < n; ++s) {
    const double o = lap.sample(4.0, g);
    sum_sq += (o - 4.0) * (o - 4.0);
    ++seen[std::llround((o - 4.0) / 0.5)];
  }
  const double mse = sum_sq / n;
  CHECK(std::abs(mse - series) < 5 * std::sqrt(series * series * 10 / n) + 1e-9);  // loose CLT band
  std::vector<long long> obs;
  std::vector<double> p;
  for (long long z = -200; z <= 200; ++z) {
    obs.push_back(seen.count(z) ? seen[z] : 0);
    p.push_back((1 - a) / (1 + a) * std::pow(a, double(std::llabs(z))));
  }
  CHECK(labeldp::test::chi_square(obs, p).p_value > 1e-4);
  REQUIRE_THROWS_AS(lap.mechanism(), std::logic_error);
  REQUIRE_THROWS_WITH(DiscreteLaplaceMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), INFINITY, true), "'eps' must be finite and positive, got inf");
}

TEST_CASE("Exponential mechanism on the grid: definition and privacy", "[additive_noise]") {
  LabelGrid<> grid(0.0, 6.0, 1.0);
  for (double eps : {0.05, 1.0, 12.0}) {
    const auto m = labeldp::exponential_mechanism(grid, eps);
    INFO("eps = " << eps);
    CHECK(labeldp::audit_epsilon(m) <= eps * (1 + 1e-12));
    for (int j = 0; j <= 6; ++j) {
      double z = 0;
      for (int o = 0; o <= 6; ++o) z += std::exp(-eps * std::abs(o - j) / 12.0);
      for (int o = 0; o <= 6; ++o)
        CHECK(m.probabilities()(j, o) == Approx(std::exp(-eps * std::abs(o - j) / 12.0) / z).epsilon(1e-12));
    }
  }
  REQUIRE_THROWS_WITH(labeldp::exponential_mechanism(grid, 0.0), "'eps' must be finite and positive, got 0");
  REQUIRE_THROWS_WITH(labeldp::exponential_mechanism(LabelGrid<>(0.0, 10000.0, 1.0), 1.0), Contains("too large for a matrix"));
}
