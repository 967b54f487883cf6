#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/alias_table.hpp>
#include <labeldp/core/clipped_discrete_laplace.hpp>
#include <labeldp/core/sampling.hpp>
#include <map>
#include <random>
#include <vector>

#include "oracles/scripted_random.hpp"
#include "oracles/statistics.hpp"

using labeldp::SeededRandom;
using labeldp::test::chi_square;

using Scripted = labeldp::test::ScriptedRandom;

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
  CHECK(h.exhausted());
  // Degenerate probabilities draw one word too (constant work whatever p).
  Scripted two{{0, ~std::uint64_t(0)}};
  CHECK(labeldp::bernoulli(1.0, two));
  CHECK_FALSE(labeldp::bernoulli(0.0, two));
  CHECK(two.exhausted());
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

TEST_CASE("DyadicAliasTable: one word per draw, column from the top bits, exact cuts", "[sampling]") {
  using u128 = labeldp::detail::u128;
  labeldp::Matrix<> P(2, 2);
  P << 0.75, 0.25, 0.25, 0.75;
  labeldp::DyadicAliasTable t(P);
  CHECK(t.rows() == 2);
  CHECK(t.cols() == 2);
  const auto w0 = t.row_weights(0);
  CHECK(w0[0] == u128(3) << 62);
  CHECK(w0[1] == u128(1) << 62);
  // Row 0: column 0 (top bit 0) is all outcome 0; column 1 keeps outcome 1 below 2^63 + 2^62.
  const std::uint64_t half = std::uint64_t(1) << 63, quarter = std::uint64_t(1) << 62;
  Scripted g{{0, half - 1, half, half + quarter - 1, half + quarter, ~std::uint64_t(0)}};
  CHECK(t(0, g) == 0);
  CHECK(t(0, g) == 0);
  CHECK(t(0, g) == 1);
  CHECK(t(0, g) == 1);
  CHECK(t(0, g) == 0);
  CHECK(t(0, g) == 0);
  CHECK(g.exhausted());
}

TEST_CASE("DyadicAliasTable: padding columns, single outcomes, deterministic and identical rows", "[sampling]") {
  using u128 = labeldp::detail::u128;
  const u128 total = u128(1) << 64;
  SECTION("one outcome: every word gives it") {
    labeldp::Matrix<> P = labeldp::Matrix<>::Constant(3, 1, 1.0);
    labeldp::DyadicAliasTable t(P);
    Scripted g{{0, ~std::uint64_t(0), std::uint64_t(1) << 63}};
    for (int i = 0; i < 3; ++i) CHECK(t(i, g) == 0);
    CHECK(t.row_weights(1)[0] == total);
  }
  SECTION("three outcomes in four columns: the padding column is all alias") {
    labeldp::Matrix<> P(1, 3);
    P << 0.5, 0.25, 0.25;
    labeldp::DyadicAliasTable t(P);
    const auto w = t.row_weights(0);
    CHECK(w[0] == total / 2);
    CHECK(w[1] == total / 4);
    CHECK(w[2] == total / 4);
    SeededRandom g(3);
    std::vector<long long> counts(3, 0);
    for (int s = 0; s < 40000; ++s) ++counts[std::size_t(t(0, g))];
    const auto r = chi_square(counts, {0.5, 0.25, 0.25});
    CHECK(labeldp::test::chi_square_z(r) < 6);
  }
  SECTION("a deterministic row next to a mixed one keeps its zero and the column ratio 2") {
    labeldp::Matrix<> P(2, 2);
    P << 1.0, 0.0, 0.5, 0.5;
    labeldp::DyadicAliasTable t(P);
    CHECK(t.row_weights(0)[0] == total);
    CHECK(t.row_weights(0)[1] == 0);
    CHECK(t.row_weights(1)[0] == total / 2);
  }
  SECTION("identical rows get identical weights summing to 2^64 (thirds)") {
    labeldp::Matrix<> P = labeldp::Matrix<>::Constant(4, 3, 1.0 / 3);
    labeldp::DyadicAliasTable t(P);
    const auto w0 = t.row_weights(0);
    CHECK(w0[0] + w0[1] + w0[2] == total);
    for (int i = 1; i < 4; ++i) CHECK(t.row_weights(i) == w0);
    for (auto w : w0) CHECK((w == total / 3 || w == total / 3 + 1));
  }
  SECTION("a column far below 2^-64 stays positive and keeps its ratio") {
    labeldp::Matrix<> P(2, 3);
    P << 1e-30, 0.5, 0.5 - 1e-30, 2e-30, 0.25, 0.75 - 2e-30;
    labeldp::DyadicAliasTable t(P);
    const auto w0 = t.row_weights(0), w1 = t.row_weights(1);
    CHECK(w0[0] >= 1);
    CHECK(w1[0] >= 1);
    CHECK(w1[0] <= 2 * w0[0]);
    CHECK(w0[0] + w0[1] + w0[2] == total);
    CHECK(w1[0] + w1[1] + w1[2] == total);
  }
  SECTION("bad input") {
    REQUIRE_THROWS_WITH(labeldp::DyadicAliasTable(labeldp::Matrix<>(0, 2)), "'rows' must not be empty");
    labeldp::Matrix<> P(1, 2);
    P << 0.5, -0.5;
    REQUIRE_THROWS_WITH(labeldp::DyadicAliasTable(P), "'weight' must be finite and non-negative, got -0.5");
    P << 0, 0;
    REQUIRE_THROWS_WITH(labeldp::DyadicAliasTable(P), "row 0 has no positive probability");
  }
}

TEST_CASE("DyadicAliasTable: random rows, chi-square against the realized weights", "[sampling]") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SeededRandom g(12);
  for (int d : {1, 2, 5, 8, 9, 33}) {
    labeldp::Matrix<> P(3, d);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < d; ++j) P(i, j) = u(rng) < 0.2 ? 0.0 : u(rng);
    for (int i = 0; i < 3; ++i) P(i, 0) += 0.01;
    labeldp::DyadicAliasTable t(P);
    for (int i = 0; i < 3; ++i) {
      const auto p = t.realized(i);
      std::vector<double> probs(p.begin(), p.end());
      std::vector<long long> counts(std::size_t(d), 0);
      for (int s = 0; s < 20000; ++s) ++counts[std::size_t(t(i, g))];
      const auto r = chi_square(counts, probs);
      INFO("d " << d << " row " << i << " chi2 " << r.statistic);
      CHECK(labeldp::test::chi_square_z(r) < 6);
      for (int j = 0; j < d; ++j)
        CHECK(double(p[std::size_t(j)]) == Approx(P(i, j) / P.row(i).sum()).epsilon(1e-15).margin(1e-18));
    }
  }
}

TEST_CASE("CyclicRandomizedResponse: exact integer RR, ratio below e^eps, one word per draw", "[sampling]") {
  using u128 = labeldp::detail::u128;
  for (labeldp::Index d : {1, 2, 3, 7, 40, 401}) {
    for (double eps : {0.1, 0.5, 1.0, 3.0, 8.0, 20.0}) {
      const labeldp::CyclicRandomizedResponse rr(d, eps);
      const auto [own, other] = rr.weights();
      INFO("d " << d << " eps " << eps);
      REQUIRE(own + u128(d - 1) * other == (u128(1) << 64));
      if (d == 1) continue;
      REQUIRE(other > 0);
      // W0 / W1 <= e^eps (long double: W's are exact there, the margin is 2 ulps of a double).
      REQUIRE((long double)own <= std::exp((long double)eps) * (long double)other);
      // ... and as close to it as one unit of W1 allows.
      REQUIRE((long double)(own + u128(d - 1)) > std::exp((long double)eps) * (1 - 1e-15L) * (long double)(other - 1));
      CHECK(double(rr.own_probability()) == Approx(std::exp(eps) / (std::exp(eps) + double(d - 1))).epsilon(1e-14));
    }
  }
  // One word per draw for every bin; chi-square of every bin against the exact weights; the
  // mutant at 2 eps fails it.
  const labeldp::CyclicRandomizedResponse rr(5, 1.0), mutant(5, 2.0);
  SeededRandom g(8);
  struct Counting {
    using result_type = std::uint64_t;
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return ~result_type{0}; }
    SeededRandom& gen;
    long long calls = 0;
    result_type operator()() { return ++calls, gen(); }
  } counting{g};
  for (labeldp::Index bin = 0; bin < 5; ++bin) {
    std::vector<long long> counts(5, 0), mutant_counts(5, 0);
    const long long before = counting.calls;
    for (int s = 0; s < 40000; ++s) ++counts[std::size_t(rr(bin, counting))];
    REQUIRE(counting.calls - before == 40000);
    for (int s = 0; s < 40000; ++s) ++mutant_counts[std::size_t(mutant(bin, g))];
    std::vector<double> probs(5, double(rr.other_probability()));
    probs[std::size_t(bin)] = double(rr.own_probability());
    INFO("bin " << bin);
    CHECK(labeldp::test::chi_square_z(chi_square(counts, probs)) < 6);
    CHECK(labeldp::test::chi_square_z(chi_square(mutant_counts, probs)) > 6);
  }
  REQUIRE_THROWS_WITH(labeldp::CyclicRandomizedResponse(0, 1.0), "'d' must be in [1, 2^32), got 0");
  REQUIRE_THROWS_WITH(labeldp::CyclicRandomizedResponse(3, -1.0), "'eps' must be finite and positive, got -1");
}

TEST_CASE("ClippedDiscreteLaplace: exact audit of the realized matrix, one word per draw", "[sampling]") {
  for (labeldp::Index N : {1, 2, 10, 100, 1000}) {
    for (double eps : {0.01, 0.1, 1.0, 5.0, 20.0}) {
      const labeldp::ClippedDiscreteLaplace noise(N, eps);
      INFO("N " << N << " eps " << eps);
      long double total = 0;
      for (labeldp::Index z = -N; z <= N; ++z) total += noise.offset_probability(z);
      REQUIRE(double(total) == 1.0);
      // Close to the clipped two-sided geometric with alpha = e^(-eps/N).
      const long double alpha = std::exp(-(long double)eps / (long double)N);
      const long double c = (1 - alpha) / (1 + alpha);
      for (labeldp::Index z = -N + 1; z < N; z += std::max<labeldp::Index>(1, N / 7)) {
        const long double exact = c * std::pow(alpha, (long double)std::llabs(z));
        REQUIRE(double(noise.offset_probability(z)) == Approx(double(exact)).epsilon(1e-9).margin(1e-18));
      }
      if (N > 100) continue;
      // Brute-force audit of the (N+1) x (N+1) realized matrix in long double: eps-DP, and tight.
      long double worst = 0;
      for (labeldp::Index o = 0; o <= N; ++o) {
        long double lo = INFINITY, hi = 0, row_sum = 0;
        for (labeldp::Index y = 0; y <= N; ++y) {
          const long double p = noise.probability(y, o);
          lo = std::min(lo, p), hi = std::max(hi, p);
        }
        REQUIRE(lo > 0);
        worst = std::max(worst, std::log(hi / lo));
        for (labeldp::Index t = 0; t <= N; ++t) row_sum += noise.probability(o, t);
        REQUIRE(double(row_sum) == 1.0);
      }
      CHECK(worst <= (long double)eps);
      CHECK(worst >= (long double)eps * (1 - 1e-9L));
    }
  }
  REQUIRE_THROWS_WITH(labeldp::ClippedDiscreteLaplace(0, 1.0), "'steps' must be in [1, 2^31 - 1), got 0");
  REQUIRE_THROWS_WITH(labeldp::ClippedDiscreteLaplace(1000, 200.0), Catch::Matchers::Contains("eps too large"));
}

TEST_CASE("ClippedDiscreteLaplace: samples fit the realized rows; an under-noised mutant does not", "[sampling]") {
  const labeldp::Index N = 12;
  const labeldp::ClippedDiscreteLaplace noise(N, 1.0), mutant(N, 2.0);
  SeededRandom g(21);
  long long words = 0;
  struct Counting {
    using result_type = std::uint64_t;
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return ~result_type{0}; }
    SeededRandom& gen;
    long long& calls;
    result_type operator()() { return ++calls, gen(); }
  } counting{g, words};
  for (labeldp::Index y = 0; y <= N; ++y) {
    std::vector<long long> counts(std::size_t(N + 1), 0), mutant_counts = counts;
    const long long before = words;
    for (int s = 0; s < 40000; ++s) ++counts[std::size_t(noise(y, counting))];
    REQUIRE(words - before == 40000);
    for (int s = 0; s < 40000; ++s) ++mutant_counts[std::size_t(mutant(y, g))];
    std::vector<double> probs(std::size_t(N + 1));
    for (labeldp::Index o = 0; o <= N; ++o) probs[std::size_t(o)] = double(noise.probability(y, o));
    INFO("y " << y);
    CHECK(labeldp::test::chi_square_z(chi_square(counts, probs)) < 6);
    CHECK(labeldp::test::chi_square_z(chi_square(mutant_counts, probs)) > 6);
  }
}

TEST_CASE("DiscreteLaplace matches its exact pmf (chi-square, z < 6); a mutant at 2 eps does not", "[sampling]") {
  SeededRandom g(31);
  for (double eps : {0.05, 0.5, 2.0}) {
    const auto noise = labeldp::DiscreteLaplace::for_privacy(eps, 1);
    const auto mutant = labeldp::DiscreteLaplace::for_privacy(2 * eps, 1);
    const long long reach = (long long)(40 / eps);
    std::map<long long, long long> seen, mutant_seen;
    const int n = 60000;
    for (int i = 0; i < n; ++i) {
      ++seen[noise(g)];
      ++mutant_seen[mutant(g)];
    }
    std::vector<long long> obs, mobs;
    std::vector<double> probs;
    for (long long z = -reach; z <= reach; ++z) {
      obs.push_back(seen.count(z) ? seen[z] : 0);
      mobs.push_back(mutant_seen.count(z) ? mutant_seen[z] : 0);
      probs.push_back(double(noise.pmf(z)));
    }
    INFO("eps " << eps);
    CHECK(labeldp::test::chi_square_z(chi_square(obs, probs)) < 6);
    CHECK(labeldp::test::chi_square_z(chi_square(mobs, probs)) > 6);
  }
}
