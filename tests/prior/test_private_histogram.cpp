// Tests of labeldp/prior/private_histogram.hpp (Algorithm 4 of Ghazi et al. 2023 with discrete
// Laplace noise): the noise against the exact two-sided geometric distribution (chi-square at
// fixed seeds; the test is shown to reject the textbook scale 1/eps), exact privacy of the noisy
// and of the clipped counts at neighbouring count vectors, the all-clipped fallback, and
// validation.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/random.hpp>
#include <labeldp/prior/private_histogram.hpp>
#include <limits>
#include <map>
#include <span>
#include <vector>

#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using labeldp::Index;
using labeldp::SeededRandom;
using labeldp::Vector;
using Counts = std::vector<std::int64_t>;

namespace {

Vector<double> support_of(std::initializer_list<double> v) {
  Vector<double> s(Index(v.size()));
  Index i = 0;
  for (double x : v) s[i++] = x;
  return s;
}

// Independent oracle: P[Z = z] for the two-sided geometric with ratio a.
double pmf(std::int64_t z, double a) { return (1 - a) / (1 + a) * std::pow(a, double(z < 0 ? -z : z)); }
// P[Z <= -m] for m >= 0 (closed form of the geometric tail).
double tail_le_neg(std::int64_t m, double a) { return std::pow(a, double(m)) / (1 + a); }

// Collects noise samples Z = noisy - count from `reps` private histograms and returns the
// chi-square test against the exact pmf with ratio `alpha_model` (cells |z| <= zmax, the two
// tails pooled into one cell each).
labeldp::test::ChiSquare noise_fit(double eps, int reps, std::uint64_t seed, double alpha_model) {
  const auto support = support_of({0, 1, 2, 3, 4});
  const Counts counts = {10, 0, 3, 100, 7};
  SeededRandom gen(seed);
  // Cover about four noise scales (2/eps) on each side, at least 40 cells.
  const std::int64_t zmax = std::clamp<std::int64_t>(std::int64_t(std::ceil(8 / eps)), 40, 2000);
  std::vector<long long> observed(std::size_t(2 * zmax + 3), 0);
  for (int r = 0; r < reps; ++r) {
    const auto h = labeldp::private_histogram(support, std::span<const std::int64_t>(counts), eps, gen);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      const std::int64_t z = h.noisy_counts[i] - counts[i];
      const std::size_t cell = z < -zmax ? 0 : z > zmax ? observed.size() - 1 : std::size_t(z + zmax + 1);
      ++observed[cell];
    }
  }
  std::vector<double> probs(observed.size());
  probs.front() = tail_le_neg(zmax + 1, alpha_model);
  probs.back() = tail_le_neg(zmax + 1, alpha_model);
  for (std::int64_t z = -zmax; z <= zmax; ++z) probs[std::size_t(z + zmax + 1)] = pmf(z, alpha_model);
  return labeldp::test::chi_square(observed, probs);
}

}  // namespace

TEST_CASE("private histogram: noise alpha is exp(-gamma), 2 gamma <= eps exactly and close below it",
          "[private_histogram]") {
  for (double eps : {4.6e-13, 1e-9, 0.017, 0.1, 1.0, 4.0, 700.0, 1e300}) {
    INFO("eps = " << eps);
    const labeldp::DiscreteLaplace noise = labeldp::private_histogram_noise(eps);
    // gamma = s / t exactly: 2 s / t <= eps  <=>  2 s <= eps t (t a power of two, so eps t is exact).
    const double t = double(noise.t()), s = double(noise.s());
    CHECK(2 * s <= std::min(eps, std::ldexp(1.0, 62)) * t);
    CHECK(noise.realized_epsilon(2) <= eps);
    // DiscreteLaplace::for_privacy() aims max(2^-40 eps, 2^-48) below eps, then rounds gamma down to 20+ bits.
    const double e = std::min(eps, std::ldexp(1.0, 62));
    CHECK(2 * static_cast<double>(noise.gamma()) >=
          (e - std::max(std::ldexp(e, -40), std::ldexp(1.0, -48))) * (1 - std::ldexp(1.0, -20)));
    const double a = labeldp::private_histogram_alpha(eps);
    CHECK(a >= std::exp(-eps / 2));
    if (eps <= 4) CHECK(a == Approx(std::exp(-eps / 2)).epsilon(1e-11));
  }
  REQUIRE_THROWS_WITH(labeldp::private_histogram_noise(4.5e-13),
                      Catch::Matchers::Contains("'eps' must be at least 2^-41 (4.5e-13)"));
}

TEST_CASE("private histogram: noise matches the exact two-sided geometric (chi-square)", "[private_histogram]") {
  for (double eps : {0.5, 1.0, 3.0}) {
    const auto fit = noise_fit(eps, 4000, 20240601, std::exp(-eps / 2));
    INFO("eps = " << eps << " chi2 = " << fit.statistic << " dof = " << fit.dof << " p = " << fit.p_value);
    CHECK(fit.p_value > 1e-4);
  }
}

TEST_CASE("private histogram: the chi-square test rejects the wrong (sensitivity-1) scale", "[private_histogram]") {
  // Power check of the test above: the same samples against exp(-eps), i.e. noise scale 1/eps
  // as if the sensitivity were 1, must be rejected.
  const double eps = 1.0;
  const auto fit = noise_fit(eps, 4000, 20240601, std::exp(-eps));
  INFO("chi2 = " << fit.statistic << " p = " << fit.p_value);
  CHECK(fit.p_value < 1e-9);
}

TEST_CASE("private histogram: large noise sample (statistical)", "[.][statistical][private_histogram]") {
  for (double eps : {0.017, 0.2, 1.0, 5.0}) {
    const auto fit = noise_fit(eps, 400000, 7 + std::uint64_t(eps * 1000), std::exp(-eps / 2));
    INFO("eps = " << eps << " chi2 = " << fit.statistic << " dof = " << fit.dof << " p = " << fit.p_value);
    CHECK(fit.p_value > 1e-4);
  }
}

TEST_CASE("private histogram: noisy counts are eps-DP at every neighbouring pair (exact)", "[private_histogram]") {
  // Label replacement moves one unit of count from value a to value b. For every pair of
  // neighbouring count vectors of n = 3 labels on k = 3 values, and every noisy output in a
  // window, the ratio of the exact output probabilities must be at most e^eps, and the bound
  // must be attained (sensitivity 2 is tight: the noise is not larger than needed).
  const double eps = 0.7;
  const double a = labeldp::private_histogram_alpha(eps);
  std::vector<Counts> vectors;
  for (int x = 0; x <= 3; ++x)
    for (int y = 0; x + y <= 3; ++y) vectors.push_back({x, y, 3 - x - y});
  double worst = 0;
  int pairs = 0;
  for (const auto& h : vectors)
    for (const auto& g : vectors) {
      int l1 = 0;
      for (int i = 0; i < 3; ++i) l1 += int(std::abs(h[std::size_t(i)] - g[std::size_t(i)]));
      if (l1 != 2) continue;  // neighbours differ by one replaced label
      ++pairs;
      for (int o0 = -8; o0 <= 11; ++o0)
        for (int o1 = -8; o1 <= 11; ++o1)
          for (int o2 = -8; o2 <= 11; ++o2) {
            const Counts o = {o0, o1, o2};
            double lp = 0, lq = 0;
            for (std::size_t i = 0; i < 3; ++i) {
              lp += std::log(pmf(o[i] - h[i], a));
              lq += std::log(pmf(o[i] - g[i], a));
            }
            worst = std::max(worst, lp - lq);
          }
    }
  CHECK(pairs > 0);
  INFO("worst log ratio = " << worst);
  CHECK(worst <= eps + 1e-12);
  CHECK(worst >= eps - 1e-9);
}

TEST_CASE("private histogram: clipped counts (what the prior is built from) are eps-DP (exact)",
          "[private_histogram]") {
  // max(h + Z, 0): P[0] = P[Z <= -h] and P[c] = pmf(c - h) for c > 0. Enumerating every clipped
  // vector in a window checks that clipping does not break the guarantee (post-processing).
  const double eps = 1.3;
  const double a = labeldp::private_histogram_alpha(eps);
  auto clipped_prob = [&](std::int64_t c, std::int64_t h) { return c == 0 ? tail_le_neg(h, a) : pmf(c - h, a); };
  const std::vector<Counts> vectors = {{2, 0}, {1, 1}, {0, 2}};
  double worst = 0;
  for (const auto& h : vectors)
    for (const auto& g : vectors) {
      if (std::abs(h[0] - g[0]) != 1) continue;
      for (std::int64_t c0 = 0; c0 <= 30; ++c0)
        for (std::int64_t c1 = 0; c1 <= 30; ++c1) {
          const double p = clipped_prob(c0, h[0]) * clipped_prob(c1, h[1]);
          const double q = clipped_prob(c0, g[0]) * clipped_prob(c1, g[1]);
          worst = std::max(worst, std::log(p / q));
        }
    }
  CHECK(worst <= eps + 1e-12);
}

TEST_CASE("private histogram: the prior is the clipped noisy counts, normalized", "[private_histogram]") {
  const auto support = support_of({-1, 0.5, 2, 10});
  const Counts counts = {5, 0, 40, 12};
  SeededRandom gen(5);
  for (int r = 0; r < 200; ++r) {
    const auto h = labeldp::private_histogram(support, std::span<const std::int64_t>(counts), 0.8, gen);
    REQUIRE(h.prior.size() == 4);
    REQUIRE(h.noisy_counts.size() == 4);
    CHECK(h.eps == 0.8);
    CHECK(h.alpha == labeldp::private_histogram_alpha(0.8));
    double total = 0;
    for (auto c : h.noisy_counts) total += double(std::max<std::int64_t>(c, 0));
    if (total == 0) continue;
    CHECK_FALSE(h.uniform_fallback);
    for (Index i = 0; i < 4; ++i) {
      CHECK(h.prior.value(i) == support[i]);  // zero-probability values kept
      CHECK(h.prior.probability(i) ==
            Approx(double(std::max<std::int64_t>(h.noisy_counts[std::size_t(i)], 0)) / total).epsilon(1e-14));
    }
  }
}

TEST_CASE("private histogram: with a huge eps the noise vanishes and the prior is empirical", "[private_histogram]") {
  const auto support = support_of({0, 1, 2});
  const Counts counts = {600, 250, 150};
  SeededRandom gen(9);
  const auto h = labeldp::private_histogram(support, std::span<const std::int64_t>(counts), 200.0, gen);
  CHECK(h.noisy_counts == counts);  // P[Z != 0] < 2 e^-100
  CHECK(h.prior.probability(0) == Approx(0.6).epsilon(1e-15));
  CHECK(h.prior.probability(1) == Approx(0.25).epsilon(1e-15));
  CHECK(h.prior.probability(2) == Approx(0.15).epsilon(1e-15));
}

TEST_CASE("private histogram: when every noisy count clips to 0 the prior is uniform", "[private_histogram]") {
  const auto support = support_of({1, 2, 3});
  const Counts counts = {0, 0, 0};
  SeededRandom gen(1);
  int fallbacks = 0, trials = 0;
  for (; trials < 200 && fallbacks < 5; ++trials) {
    const auto h = labeldp::private_histogram(support, std::span<const std::int64_t>(counts), 4.0, gen);
    const bool all_clipped =
        std::all_of(h.noisy_counts.begin(), h.noisy_counts.end(), [](std::int64_t c) { return c <= 0; });
    REQUIRE(h.uniform_fallback == all_clipped);
    if (!all_clipped) continue;
    ++fallbacks;
    for (Index i = 0; i < 3; ++i) CHECK(h.prior.probability(i) == Approx(1.0 / 3).epsilon(1e-15));
  }
  // With eps = 4 each count stays <= 0 with probability 1/(1+e^-2) ~ 0.88, all three ~ 0.68.
  CHECK(fallbacks == 5);
}

TEST_CASE("private histogram of labels equals the histogram of their counts (same seed)", "[private_histogram]") {
  const auto support = support_of({0, 0.5, 1});
  const std::vector<double> labels = {0, 1, 1, 0.5, 1, 0, 1};
  const auto counts = labeldp::histogram_counts(support, std::span<const double>(labels));
  CHECK(counts == Counts{2, 1, 4});
  SeededRandom g1(3), g2(3);
  const auto a = labeldp::private_histogram_of_labels(support, std::span<const double>(labels), 0.5, g1);
  const auto b = labeldp::private_histogram(support, std::span<const std::int64_t>(counts), 0.5, g2);
  CHECK(a.noisy_counts == b.noisy_counts);
}

TEST_CASE("two_sided_geometric_pmf sums to 1 and matches the closed form", "[private_histogram]") {
  const double a = 0.8;
  double s = 0;
  for (std::int64_t z = -400; z <= 400; ++z) s += labeldp::two_sided_geometric_pmf(z, a);
  CHECK(s == Approx(1.0).epsilon(1e-12));
  CHECK(labeldp::two_sided_geometric_pmf(-3, a) == Approx(pmf(3, a)).epsilon(1e-15));
}

TEST_CASE("private histogram rejects eps = 0", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1};
  REQUIRE_THROWS_AS(labeldp::private_histogram(support_of({0}), std::span<const std::int64_t>(c), 0.0, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({0}), std::span<const std::int64_t>(c), 0.0, gen),
                      "'eps' must be finite and positive, got 0");
}
TEST_CASE("private histogram rejects a negative eps", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1};
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({0}), std::span<const std::int64_t>(c), -2.0, gen),
                      "'eps' must be finite and positive, got -2");
}
TEST_CASE("private histogram rejects a NaN eps", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1};
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({0}), std::span<const std::int64_t>(c),
                                                 std::numeric_limits<double>::quiet_NaN(), gen),
                      "'eps' must be finite and positive, got nan");
}
TEST_CASE("private histogram rejects an infinite eps", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1};
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({0}), std::span<const std::int64_t>(c),
                                                 std::numeric_limits<double>::infinity(), gen),
                      "'eps' must be finite and positive, got inf");
}
TEST_CASE("private histogram rejects a negative count", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1, -1};
  REQUIRE_THROWS_AS(labeldp::private_histogram(support_of({0, 1}), std::span<const std::int64_t>(c), 1.0, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({0, 1}), std::span<const std::int64_t>(c), 1.0, gen),
                      "'counts' must be non-negative, got -1 for support value 1");
}
TEST_CASE("private histogram rejects a count/support size mismatch", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1, 2, 3};
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({0, 1}), std::span<const std::int64_t>(c), 1.0, gen),
                      "'counts' has 3 entries but the support has 2 values");
}
TEST_CASE("private histogram rejects an empty support", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c;
  REQUIRE_THROWS_WITH(labeldp::private_histogram(Vector<double>(0), std::span<const std::int64_t>(c), 1.0, gen),
                      "'support' must not be empty");
}
TEST_CASE("private histogram rejects an unsorted support", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1, 1};
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({1, 0}), std::span<const std::int64_t>(c), 1.0, gen),
                      "'support' must be strictly increasing: 1 then 0");
}
TEST_CASE("private histogram rejects a non-finite support value", "[private_histogram]") {
  SeededRandom gen(1);
  const Counts c = {1, 1};
  REQUIRE_THROWS_WITH(labeldp::private_histogram(support_of({0, std::numeric_limits<double>::infinity()}),
                                                 std::span<const std::int64_t>(c), 1.0, gen),
                      Contains("'value' must be finite, got inf"));
}
TEST_CASE("histogram_counts rejects a label outside the support", "[private_histogram]") {
  const std::vector<double> labels = {0, 0.25};
  REQUIRE_THROWS_AS(labeldp::histogram_counts(support_of({0, 0.5}), std::span<const double>(labels)),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::histogram_counts(support_of({0, 0.5}), std::span<const double>(labels)),
                      "label 0.25 is not a support value (discretize the labels first)");
}
