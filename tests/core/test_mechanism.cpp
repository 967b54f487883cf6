#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/mechanism.hpp>
#include <limits>
#include <random>

#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using labeldp::FiniteMechanism;

namespace {
labeldp::Vector<> vec(std::initializer_list<double> v) {
  labeldp::Vector<> r(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) r[i++] = x;
  return r;
}

// k-ary randomized response on {0..k-1}: its exact privacy level is eps.
FiniteMechanism<> randomized_response(int k, double eps) {
  labeldp::Matrix<> P(k, k);
  const double e = std::exp(eps);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) P(i, j) = (i == j ? e : 1.0) / (e + k - 1);
  labeldp::Vector<> v(k);
  for (int i = 0; i < k; ++i) v[i] = i;
  return FiniteMechanism<>(v, v, P);
}

// Audit oracle: every pair of rows, every column, log-ratio directly.
double brute_force_audit(const labeldp::Matrix<>& P) {
  double eps = 0;
  for (Eigen::Index j = 0; j < P.cols(); ++j)
    for (Eigen::Index a = 0; a < P.rows(); ++a)
      for (Eigen::Index b = 0; b < P.rows(); ++b) {
        if (P(a, j) == 0 && P(b, j) == 0) continue;
        if (P(b, j) == 0) return std::numeric_limits<double>::infinity();
        eps = std::max(eps, std::log(P(a, j) / P(b, j)));
      }
  return eps;
}
}  // namespace

TEST_CASE("FiniteMechanism: expected loss, conditional mean, lookup", "[mechanism]") {
  labeldp::Matrix<> P(2, 3);
  P << 0.5, 0.25, 0.25, 0.0, 0.5, 0.5;
  FiniteMechanism<> m(vec({0.0, 1.0}), vec({-1.0, 0.5, 2.0}), P);
  auto prior = labeldp::FinitePrior<>::from_probabilities({0.0, 1.0}, {0.25, 0.75});
  // Hand-computed: row 0: 0.5*1 + 0.25*0.25 + 0.25*4 = 1.5625; row 1: 0.5*0.25 + 0.5*1 = 0.625.
  CHECK(m.conditional_loss(0) == Approx(1.5625));
  CHECK(m.expected_loss(prior) == Approx(0.25 * 1.5625 + 0.75 * 0.625));
  CHECK(m.expected_loss(prior, labeldp::AbsoluteLoss<>{}) == Approx(0.25 * (0.5 + 0.125 + 0.5) + 0.75 * (0.25 + 0.5)));
  CHECK(m.conditional_mean(1) == Approx(1.25));
  CHECK(m.input_index(1.0) == 1);
  REQUIRE_THROWS_WITH(m.input_index(0.5), "label 0.5 is not an input of the mechanism");
  auto other = labeldp::FinitePrior<>::from_probabilities({0.0, 2.0}, {0.5, 0.5});
  REQUIRE_THROWS_WITH(m.expected_loss(other), "prior values differ from the mechanism's inputs");
}

TEST_CASE("FiniteMechanism rejects malformed matrices", "[mechanism]") {
  labeldp::Matrix<> ok(2, 2);
  ok << 0.5, 0.5, 0.5, 0.5;
  SECTION("no inputs") {
    REQUIRE_THROWS_WITH(FiniteMechanism<>(labeldp::Vector<>(), vec({0.0}), labeldp::Matrix<>(0, 1)),
                        "mechanism has no inputs");
  }
  SECTION("no outputs") {
    REQUIRE_THROWS_WITH(FiniteMechanism<>(vec({0.0}), labeldp::Vector<>(), labeldp::Matrix<>(1, 0)),
                        "mechanism has no outputs");
  }
  SECTION("dimension mismatch") {
    REQUIRE_THROWS_WITH(FiniteMechanism<>(vec({0.0, 1.0, 2.0}), vec({0.0, 1.0}), ok),
                        "probability matrix is 2 x 2, expected 3 x 2");
  }
  SECTION("inputs not increasing") {
    REQUIRE_THROWS_WITH(FiniteMechanism<>(vec({1.0, 0.0}), vec({0.0, 1.0}), ok),
                        "input values must be strictly increasing: 1 then 0");
  }
  SECTION("duplicate outputs") {
    REQUIRE_THROWS_WITH(FiniteMechanism<>(vec({0.0, 1.0}), vec({1.0, 1.0}), ok),
                        "output values must be strictly increasing: 1 then 1");
  }
  SECTION("non-finite value") {
    REQUIRE_THROWS_WITH(FiniteMechanism<>(vec({0.0, std::nan("")}), vec({0.0, 1.0}), ok),
                        Contains("input value nan is not finite"));
  }
  SECTION("negative entry") {
    labeldp::Matrix<> P = ok;
    P(1, 0) = -0.5;
    P(1, 1) = 1.5;
    REQUIRE_THROWS_WITH(FiniteMechanism<>(vec({0.0, 1.0}), vec({0.0, 1.0}), P),
                        "probability -0.5 at row 1, column 0 is not finite and non-negative");
  }
  SECTION("row does not sum to 1") {
    labeldp::Matrix<> P = ok;
    P(0, 0) = 0.6;
    REQUIRE_THROWS_WITH(FiniteMechanism<>(vec({0.0, 1.0}), vec({0.0, 1.0}), P), Contains("row 0 sums to 1.1"));
  }
}

TEST_CASE("audit_epsilon equals the brute-force pairwise audit", "[audit]") {
  for (int k : {2, 3, 7})
    for (double eps : {0.01, 0.5, 1.0, 8.0}) {
      auto rr = randomized_response(k, eps);
      INFO("k = " << k << " eps = " << eps);
      CHECK(labeldp::audit_epsilon(rr) == Approx(eps).epsilon(1e-12));
    }
  std::mt19937_64 gen(17);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int k = 1 + int(gen() % 6), d = 1 + int(gen() % 6);
    labeldp::Matrix<> P(k, d);
    for (int i = 0; i < k; ++i) {
      for (int j = 0; j < d; ++j) P(i, j) = (trial % 5 == 0 && u(gen) < 0.2) ? 0.0 : u(gen);
      if (P.row(i).sum() == 0) P(i, 0) = 1;
      P.row(i) /= P.row(i).sum();
    }
    const double expect = brute_force_audit(P);
    const double got = labeldp::audit_epsilon(P);
    INFO("trial " << trial);
    if (std::isinf(expect))
      CHECK(std::isinf(got));
    else
      CHECK(got == Approx(expect).epsilon(1e-12).margin(1e-15));
  }
}

TEST_CASE("audit_epsilon: one-sided zero columns are infinitely private-leaky, all-zero columns ignored", "[audit]") {
  labeldp::Matrix<> P(2, 3);
  P << 0.5, 0.5, 0.0, 0.5, 0.5, 0.0;
  CHECK(labeldp::audit_epsilon(P) == 0.0);
  P << 0.5, 0.5, 0.0, 0.5, 0.25, 0.25;
  CHECK(std::isinf(labeldp::audit_epsilon(P)));
}

TEST_CASE("FiniteMechanism sampling matches each row exactly (chi-square) and the realized matrix audits",
          "[mechanism]") {
  auto rr = randomized_response(4, 1.3);
  CHECK(labeldp::audit_epsilon(rr.realized_probabilities()) <= 1.3 * (1 + 1e-12));
  labeldp::SeededRandom g(31);
  for (int i = 0; i < 4; ++i) {
    std::vector<long long> counts(4, 0);
    for (int s = 0; s < 40000; ++s) {
      const double o = rr.sample(double(i), g);
      ++counts[std::size_t(o)];
    }
    std::vector<double> probs(4);
    for (int j = 0; j < 4; ++j) probs[std::size_t(j)] = rr.probabilities()(i, j);
    const auto r = labeldp::test::chi_square(counts, probs);
    INFO("row " << i << " chi2 " << r.statistic);
    CHECK(r.p_value > 1e-4);
  }
  REQUIRE_THROWS_WITH(rr.sample(0.5, g), "label 0.5 is not an input of the mechanism");
}
