#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/audit.hpp>
#include <labeldp/mechanisms/randomized_response.hpp>
#include <random>

#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;

TEST_CASE("randomized_response: exact privacy level and probabilities", "[randomized_response]") {
  for (int k : {1, 2, 5, 40})
    for (double eps : {0.01, 1.0, 9.0}) {
      labeldp::Vector<> v = labeldp::Vector<>::LinSpaced(k, 0.0, double(k - 1));
      const auto m = labeldp::randomized_response(v, eps);
      INFO("k = " << k << " eps = " << eps);
      CHECK(labeldp::audit_epsilon(m) == Approx(k == 1 ? 0.0 : eps).epsilon(1e-12).margin(1e-15));
      CHECK(m.probabilities()(0, 0) == Approx(std::exp(eps) / (std::exp(eps) + k - 1)));
    }
  REQUIRE_THROWS_WITH(labeldp::randomized_response(labeldp::Vector<>(labeldp::Vector<>::LinSpaced(2, 0.0, 1.0)), 0.0),
                      "'eps' must be finite and positive, got 0");
  REQUIRE_THROWS_WITH(labeldp::randomized_response(labeldp::Vector<>(), 1.0),
                      "randomized response needs at least one value");
}

TEST_CASE("rr_with_prior: the kept set is optimal among all subsets (brute force)", "[randomized_response]") {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int k = 1 + int(gen() % 8);
    std::vector<double> values(static_cast<std::size_t>(k)), probs(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) {
      values[std::size_t(i)] = i * 1.5;
      probs[std::size_t(i)] = std::pow(u(gen), 3);
    }
    const double eps = std::exp(std::log(0.01) + u(gen) * std::log(2000.0));
    const auto prior = labeldp::FinitePrior<>::from_weights(values, probs);
    // Oracle: randomized response restricted to any non-empty subset S; P[output == input].
    double best = 0;
    for (unsigned mask = 1; mask < (1u << k); ++mask) {
      double mass = 0;
      int size = 0;
      for (int i = 0; i < k; ++i)
        if (mask & (1u << i)) {
          mass += prior.probability(i);
          ++size;
        }
      best = std::max(best, std::exp(eps) / (std::exp(eps) + size - 1) * mass);
    }
    const auto m = labeldp::rr_with_prior(prior, eps);
    double correct = 0;
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < m.num_outputs(); ++j)
        if (m.outputs()[j] == prior.value(i)) correct += prior.probability(i) * m.probabilities()(i, j);
    INFO("trial " << trial << " k = " << k << " eps = " << eps);
    CHECK(correct == Approx(best).epsilon(1e-12));
    CHECK(labeldp::audit_epsilon(m) <= eps * (1 + 1e-12));
    CHECK(m.num_outputs() == labeldp::rr_with_prior_top_k(prior, eps));
  }
}

TEST_CASE("rr_with_prior: sampling matches the exact rows (chi-square)", "[randomized_response]") {
  const auto prior = labeldp::FinitePrior<>::from_weights({0, 1, 2, 3, 4}, {0.4, 0.3, 0.2, 0.06, 0.04});
  const auto m = labeldp::rr_with_prior(prior, 1.0);
  REQUIRE(m.num_outputs() < 5);  // the rare labels are dropped at eps = 1
  labeldp::SeededRandom g(8);
  for (int i = 0; i < 5; ++i) {
    std::vector<long long> counts(std::size_t(m.num_outputs()), 0);
    for (int s = 0; s < 20000; ++s) ++counts[std::size_t(m.sample_index(i, g))];
    std::vector<double> p(m.probabilities().row(i).data(), m.probabilities().row(i).data() + m.num_outputs());
    const auto r = labeldp::test::chi_square(counts, p);
    INFO("row " << i);
    CHECK(r.p_value > 1e-4);
  }
  REQUIRE_THROWS_WITH(labeldp::rr_with_prior(prior, -1.0), "'eps' must be finite and positive, got -1");
}

TEST_CASE("randomized response and RRWithPrior at eps beyond doubles are built at 700 and eps-DP exactly",
          "[randomized_response]") {
  labeldp::Vector<double> values(3);
  values << 0, 1, 2;
  const auto prior = labeldp::FinitePrior<>::from_weights({0, 1, 2}, {0.5, 0.3, 0.2});
  for (const double eps : {700.0, 710.0, 800.0, 1e308}) {
    INFO("eps = " << eps);
    for (const auto& m : {labeldp::randomized_response(values, eps), labeldp::rr_with_prior(prior, eps)}) {
      CHECK(std::isfinite(m.probabilities().sum()));
      CHECK(m.probabilities().minCoeff() > 0);
      CHECK(labeldp::satisfies_epsilon(m.probabilities(), 700.0));
      for (labeldp::Index i = 0; i < m.probabilities().rows(); ++i)
        CHECK(m.probabilities().row(i).sum() == Approx(1.0).epsilon(1e-12));
    }
  }
}
