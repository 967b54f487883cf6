#include <catch2/catch.hpp>
#include <cmath>
#include <deque>
#include <labeldp/core/sampling.hpp>
#include <map>
#include <vector>

#include "oracles/statistics.hpp"

using labeldp::SeededRandom;
using labeldp::test::chi_square;

namespace {
// A generator that replays a scripted sequence of 64-bit words (for exact boundary tests).
struct Scripted {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  std::deque<std::uint64_t> words;
  result_type operator()() {
    REQUIRE(!words.empty());
    const auto w = words.front();
    words.pop_front();
    return w;
  }
};
}  // namespace

TEST_CASE("bernoulli compares random bits with the exact binary expansion of p", "[sampling]") {
  // p = 0.75: true exactly for the first 0.75 * 2^64 words.
  const std::uint64_t q = std::uint64_t(3) << 62;
  Scripted g{{q - 1, q}};
  CHECK(labeldp::bernoulli(0.75, g));
  CHECK_FALSE(labeldp::bernoulli(0.75, g));
  // p = 2^-64 + 2^-65: 2^64 p = 1.5, so the first word is compared with Q = 1, and on a tie the
  // next word decides against the remaining fraction 0.5 (i.e. against 2^63).
  const double p = std::ldexp(1.0, -64) + std::ldexp(1.0, -65);
  Scripted h{{0, 2, 1, (std::uint64_t(1) << 63) - 1, 1, std::uint64_t(1) << 63}};
  CHECK(labeldp::bernoulli(p, h));        // 0 < Q = 1
  CHECK_FALSE(labeldp::bernoulli(p, h));  // 2 > Q
  CHECK(labeldp::bernoulli(p, h));        // tie, then 2^63 - 1 < 2^63
  CHECK_FALSE(labeldp::bernoulli(p, h));  // tie, then 2^63 == 2^63, fraction exhausted -> false
  CHECK(h.words.empty());
  // Degenerate probabilities consume no randomness.
  Scripted none{};
  CHECK(labeldp::bernoulli(1.0, none));
  CHECK_FALSE(labeldp::bernoulli(0.0, none));
}

TEST_CASE("bernoulli rejects probabilities outside [0, 1]", "[sampling]") {
  SeededRandom g(1);
  REQUIRE_THROWS_WITH(labeldp::bernoulli(-0.5, g), "'p' must be a probability in [0, 1], got -0.5");
  REQUIRE_THROWS_WITH(labeldp::bernoulli(1.5, g), "'p' must be a probability in [0, 1], got 1.5");
  REQUIRE_THROWS_WITH(labeldp::bernoulli(std::nan(""), g), Catch::Matchers::Contains("'p' must be a probability"));
}

TEST_CASE("uniform_below is uniform (chi-square) and in range", "[sampling]") {
  SeededRandom g(7);
  for (std::uint64_t n : {1ull, 2ull, 3ull, 7ull, 10ull, 1000ull}) {
    std::vector<long long> counts(n, 0);
    const int draws = int(200 * n);
    for (int i = 0; i < draws; ++i) {
      const auto v = labeldp::uniform_below(n, g);
      REQUIRE(v < n);
      ++counts[v];
    }
    if (n > 1) {
      const auto r = chi_square(counts, std::vector<double>(n, 1.0 / double(n)));
      INFO("n = " << n << " chi2 = " << r.statistic);
      CHECK(r.p_value > 1e-4);
    }
  }
  // A range near 2^64 where the rejection zone is large: values stay below n.
  const std::uint64_t big = (std::uint64_t(1) << 63) + 12345;
  int upper = 0;
  for (int i = 0; i < 4000; ++i) {
    const auto v = labeldp::uniform_below(big, g);
    REQUIRE(v < big);
    upper += (v >= big / 2) ? 1 : 0;
  }
  CHECK(std::abs(upper - 2000) < 200);
}

TEST_CASE("two_sided_geometric matches the exact pmf (chi-square)", "[sampling]") {
  SeededRandom g(99);
  for (double alpha : {0.0, 0.3, 0.8}) {
    std::map<long long, long long> seen;
    const int n = 40000;
    for (int i = 0; i < n; ++i) ++seen[labeldp::two_sided_geometric(alpha, g)];
    std::vector<long long> obs;
    std::vector<double> probs;
    const long long reach = 60;
    for (long long z = -reach; z <= reach; ++z) {
      obs.push_back(seen.count(z) ? seen[z] : 0);
      probs.push_back((1 - alpha) / (1 + alpha) * std::pow(alpha, double(std::llabs(z))));
    }
    const auto r = chi_square(obs, probs);
    INFO("alpha = " << alpha << " chi2 = " << r.statistic << " dof " << r.dof);
    CHECK(r.p_value > 1e-4);
  }
  REQUIRE_THROWS_WITH(labeldp::two_sided_geometric(1.0, g), "'alpha' must be in [0, 1), got 1");
  REQUIRE_THROWS_WITH(labeldp::two_sided_geometric(-0.1, g), Catch::Matchers::Contains("'alpha' must be in [0, 1)"));
}

TEST_CASE("discrete_laplace_alpha never exceeds the privacy budget", "[sampling]") {
  for (double eps : {1e-6, 0.017, 0.5, 1.0, 7.0, 30.0}) {
    const double a = labeldp::discrete_laplace_alpha(eps, 2.0);
    INFO("eps = " << eps);
    CHECK(a > 0);
    CHECK(a < 1);
    CHECK(2.0 * -std::log(a) <= eps * (1 + 1e-12));
    CHECK(2.0 * -std::log(a) >= eps * (1 - 1e-9));
  }
  REQUIRE_THROWS_WITH(labeldp::discrete_laplace_alpha(0.0, 2.0), "'eps' must be finite and positive, got 0");
  REQUIRE_THROWS_WITH(labeldp::discrete_laplace_alpha(1.0, -2.0), "'sensitivity' must be finite and positive, got -2");
}

TEST_CASE("DiscreteDistribution realizes the stored probabilities", "[sampling]") {
  Eigen::VectorXd w(6);
  w << 0.5, 0.0, 0.25, 1e-9, 0.125, 0.125 - 1e-9;
  labeldp::DiscreteDistribution d(w);
  for (int i = 0; i < 6; ++i) {
    INFO("outcome " << i);
    CHECK(double(d.realized(i)) == Approx(w[i] / w.sum()).epsilon(1e-15).margin(0));
  }
  CHECK(d.realized(1) == 0);
  SeededRandom g(5);
  std::vector<long long> counts(6, 0);
  const int n = 200000;
  for (int i = 0; i < n; ++i) ++counts[std::size_t(d(g))];
  CHECK(counts[1] == 0);
  std::vector<double> probs(w.data(), w.data() + 6);
  for (auto& p : probs) p /= w.sum();
  const auto r = chi_square(counts, probs);
  INFO("chi2 = " << r.statistic);
  CHECK(r.p_value > 1e-4);
}

TEST_CASE("DiscreteDistribution keeps tiny positive weights positive and large tables exact", "[sampling]") {
  Eigen::VectorXd w = Eigen::VectorXd::Constant(5000, 1.0);
  w[17] = 1e-300;
  labeldp::DiscreteDistribution d(w);
  CHECK(d.realized(17) > 0);
  long double total = 0;
  for (int i = 0; i < 5000; ++i) total += d.realized(i);
  CHECK(double(total) == Approx(1.0).epsilon(1e-15));
}

TEST_CASE("DiscreteDistribution rejects bad weights", "[sampling]") {
  SECTION("empty") {
    REQUIRE_THROWS_WITH(labeldp::DiscreteDistribution(Eigen::VectorXd()), "'weights' must not be empty");
  }
  SECTION("negative") {
    Eigen::VectorXd w(2);
    w << 1, -1;
    REQUIRE_THROWS_WITH(labeldp::DiscreteDistribution(w), "'weight' must be finite and non-negative, got -1");
  }
  SECTION("NaN") {
    Eigen::VectorXd w(2);
    w << 1, std::nan("");
    REQUIRE_THROWS_WITH(labeldp::DiscreteDistribution(w),
                        Catch::Matchers::Contains("'weight' must be finite and non-negative"));
  }
  SECTION("all zero") {
    REQUIRE_THROWS_WITH(labeldp::DiscreteDistribution(Eigen::VectorXd::Zero(3)),
                        "'weights' are all 0: at least one must be positive");
  }
}

TEST_CASE("DiscreteDistribution: large chi-square", "[.][statistical]") {
  SeededRandom g(2024);
  Eigen::VectorXd w(50);
  for (int i = 0; i < 50; ++i) w[i] = 1.0 + (i % 7) * (i % 3) + 0.001 * i;
  labeldp::DiscreteDistribution d(w);
  std::vector<long long> counts(50, 0);
  for (int i = 0; i < 20000000; ++i) ++counts[std::size_t(d(g))];
  std::vector<double> probs(w.data(), w.data() + 50);
  for (auto& p : probs) p /= w.sum();
  const auto r = chi_square(counts, probs);
  INFO("chi2 = " << r.statistic);
  CHECK(r.p_value > 1e-4);
}
