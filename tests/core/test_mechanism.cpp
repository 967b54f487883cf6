#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/mechanism.hpp>
#include <limits>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "oracles/prior_shapes.hpp"
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
  auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0}, {0.25, 0.75});
  // Hand-computed: row 0: 0.5*1 + 0.25*0.25 + 0.25*4 = 1.5625; row 1: 0.5*0.25 + 0.5*1 = 0.625.
  CHECK(m.conditional_loss(0) == Approx(1.5625));
  CHECK(m.expected_loss(prior) == Approx(0.25 * 1.5625 + 0.75 * 0.625));
  CHECK(m.expected_loss(prior, labeldp::AbsoluteLoss<>{}) == Approx(0.25 * (0.5 + 0.125 + 0.5) + 0.75 * (0.25 + 0.5)));
  CHECK(m.conditional_mean(1) == Approx(1.25));
  CHECK(m.input_index(1.0) == 1);
  REQUIRE_THROWS_WITH(m.input_index(0.5), "label 0.5 is not an input of the mechanism");
  auto other = labeldp::FinitePrior<>::from_weights({0.0, 2.0}, {0.5, 0.5});
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

namespace {
// Counts the words drawn from the wrapped generator.
template <typename G>
struct Counting {
  using result_type = typename G::result_type;
  static constexpr result_type min() { return G::min(); }
  static constexpr result_type max() { return G::max(); }
  G& gen;
  long long calls = 0;
  result_type operator()() {
    ++calls;
    return gen();
  }
};

// A prior of one of the shared shapes on k values (some zeros for WithZeros).
std::vector<double> shaped_prior(labeldp::test::Shape shape, int k, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> p(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) {
    double v = 0;
    switch (shape) {
      case labeldp::test::Shape::NearUniform:
        v = 1.0 + 0.1 * u(rng);
        break;
      case labeldp::test::Shape::Spiky:
        v = (i % 5 == 2) ? 50.0 * (1 + u(rng)) : 0.01 * (1 + u(rng));
        break;
      case labeldp::test::Shape::HeavyTailed:
        v = 1.0 / std::pow(1.0 + i, 2.5) * (1 + 0.1 * u(rng));
        break;
      case labeldp::test::Shape::WithZeros:
        v = (i % 3 == 1) ? 0.0 : u(rng);
        break;
    }
    p[std::size_t(i)] = v;
  }
  return p;
}

// An eps-DP finite mechanism of a given prior: the exponential mechanism weighted by the prior,
// P[i][j] proportional to p_j exp(-eps |y_i - y_j| / (2 range)) (labels y_i = i), capped to eps
// exactly as stored and as realized. Zero-probability values give all-zero columns.
FiniteMechanism<> prior_mechanism(const std::vector<double>& prior, double eps) {
  const int k = int(prior.size());
  labeldp::Matrix<> P(k, k);
  const double range = std::max(1, k - 1);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) P(i, j) = prior[std::size_t(j)] * std::exp(-eps * std::abs(i - j) / (2 * range));
    P.row(i) /= P.row(i).sum();
  }
  labeldp::cap_to_epsilon(P, eps);
  labeldp::Vector<> v(k);
  for (int i = 0; i < k; ++i) v[i] = i;
  return FiniteMechanism<>(v, v, P);
}

// k-ary randomized response, capped to eps exactly.
FiniteMechanism<> capped_rr(int k, double eps) {
  auto rr = randomized_response(k, eps);
  labeldp::Matrix<> P = rr.probabilities();
  labeldp::cap_to_epsilon(P, eps);
  return FiniteMechanism<>(rr.inputs(), rr.outputs(), P);
}

// A random eps-DP matrix: column weights c_j of the shape times a random factor in
// [1, e^(eps/2)] per entry, rows normalized (their sums differ by at most e^(eps/2), so every
// ratio stays within e^eps), then capped to eps exactly as stored and as realized.
FiniteMechanism<> random_capped(labeldp::test::Shape shape, int k, int d, double eps, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto c = shaped_prior(shape, d, rng);
  if (*std::max_element(c.begin(), c.end()) == 0) c[0] = 1;
  labeldp::Matrix<> P(k, d);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < d; ++j) P(i, j) = c[std::size_t(j)] * std::exp(0.5 * eps * u(rng));
    P.row(i) /= P.row(i).sum();
  }
  labeldp::cap_to_epsilon(P, eps);
  labeldp::Vector<> in(k), out(d);
  for (int i = 0; i < k; ++i) in[i] = i;
  for (int j = 0; j < d; ++j) out[j] = j;
  return FiniteMechanism<>(in, out, P);
}

// Every column's max/min ratio of the integer weights is at most that of the stored rows over
// their sums (exact integer / long double comparison), every row sums to exactly 2^64, and
// zeros stayed zeros.
void require_ratio_preserving(const FiniteMechanism<>& m) {
  using u128 = labeldp::detail::u128;
  const Eigen::Index k = m.num_inputs(), d = m.num_outputs();
  std::vector<std::vector<u128>> W;
  for (Eigen::Index i = 0; i < k; ++i) W.push_back(m.sampler().row_weights(i));
  for (Eigen::Index i = 0; i < k; ++i) {
    u128 sum = 0;
    for (auto w : W[std::size_t(i)]) sum += w;
    REQUIRE(sum == (u128(1) << 64));
  }
  for (Eigen::Index j = 0; j < d; ++j) {
    long double qlo = INFINITY, qhi = 0;
    u128 wlo = ~u128(0), whi = 0;
    for (Eigen::Index i = 0; i < k; ++i) {
      long double row_sum = 0;  // as the sampler's rounding sums: in long double, in order
      for (Eigen::Index t = 0; t < d; ++t) row_sum += (long double)m.probabilities()(i, t);
      const long double q = (long double)m.probabilities()(i, j) / row_sum;
      qlo = std::min(qlo, q), qhi = std::max(qhi, q);
      const u128 w = W[std::size_t(i)][std::size_t(j)];
      wlo = std::min(wlo, w), whi = std::max(whi, w);
      if (m.probabilities()(i, j) == 0) REQUIRE(w == 0);
      if (m.probabilities()(i, j) > 0) REQUIRE(w > 0);
    }
    if (qlo > 0) {
      INFO("column " << j);
      // whi / wlo <= qhi / qlo, with a relative allowance for the long-double q's rounding.
      REQUIRE((long double)whi * qlo <= (long double)wlo * qhi * (1 + 1e-17L));
    }
  }
}
}  // namespace

TEST_CASE("FiniteMechanism: one generator word per draw for every label (constant work)", "[mechanism]") {
  using labeldp::test::Shape;
  std::mt19937_64 rng(2026);
  labeldp::SeededRandom seeded(77);
  labeldp::SecureRandom secure;
  Counting<labeldp::SeededRandom> counting{seeded};
  Counting<labeldp::SecureRandom> counting_secure{secure};
  int mechanisms = 0;
  for (double eps : {0.1, 0.5, 1.0, 3.0, 8.0, 20.0}) {
    std::vector<FiniteMechanism<>> ms;
    for (int k : {1, 2, 3, 7, 16, 40}) ms.push_back(capped_rr(k, eps));
    for (Shape shape : {Shape::NearUniform, Shape::Spiky, Shape::HeavyTailed, Shape::WithZeros}) {
      ms.push_back(prior_mechanism(shaped_prior(shape, 25, rng), eps));
      ms.push_back(random_capped(shape, 6, 9, eps, rng));
    }
    for (const auto& m : ms) {
      ++mechanisms;
      for (Eigen::Index i = 0; i < m.num_inputs(); ++i) {
        INFO("eps " << eps << " k " << m.num_inputs() << " d " << m.num_outputs() << " label " << i);
        const long long before = counting.calls;
        for (int t = 0; t < 64; ++t) (void)m.sample(m.inputs()[i], counting);
        REQUIRE(counting.calls - before == 64);
        const long long before_idx = counting_secure.calls;
        for (int t = 0; t < 16; ++t) (void)m.sample_index(i, counting_secure);
        REQUIRE(counting_secure.calls - before_idx == 16);
      }
      // The batch form draws the same words in the same order, one per label.
      std::vector<double> in;
      for (Eigen::Index i = 0; i < m.num_inputs(); ++i) in.push_back(m.inputs()[i]);
      std::vector<double> out(in.size()), ref(in.size());
      labeldp::SeededRandom a(5), b(5);
      Counting<labeldp::SeededRandom> ca{a};
      m.sample(std::span<const double>(in), std::span<double>(out), ca);
      REQUIRE(ca.calls == (long long)in.size());
      for (std::size_t t = 0; t < in.size(); ++t) ref[t] = m.sample(in[t], b);
      REQUIRE(out == ref);
    }
  }
  CHECK(mechanisms == 6 * 14);
}

TEST_CASE("FiniteMechanism: the realized table keeps every column's ratio and is eps-DP exactly", "[mechanism]") {
  using labeldp::test::Shape;
  std::mt19937_64 rng(99);
  for (double eps : {0.1, 0.5, 1.0, 3.0, 8.0, 20.0}) {
    std::vector<FiniteMechanism<>> ms;
    for (int k : {1, 2, 5, 40}) ms.push_back(capped_rr(k, eps));
    for (Shape shape : {Shape::NearUniform, Shape::Spiky, Shape::HeavyTailed, Shape::WithZeros}) {
      ms.push_back(prior_mechanism(shaped_prior(shape, 30, rng), eps));
      ms.push_back(random_capped(shape, 8, 13, eps, rng));
    }
    for (const auto& m : ms) {
      INFO("eps " << eps << " k " << m.num_inputs() << " d " << m.num_outputs());
      require_ratio_preserving(m);
      const auto R = m.realized_probabilities();
      CHECK(labeldp::satisfies_epsilon(R, eps));
      // Close to the stored rows over their sums: a few units of 2^-64 per entry.
      for (Eigen::Index i = 0; i < m.num_inputs(); ++i)
        for (Eigen::Index j = 0; j < m.num_outputs(); ++j) {
          const double q = m.probabilities()(i, j) / m.probabilities().row(i).sum();
          REQUIRE(std::abs(R(i, j) - q) <= 1e-15 * q + 64 * double(m.num_outputs()) * std::ldexp(1.0, -64));
        }
    }
  }
}

TEST_CASE("FiniteMechanism: samples fit the realized table; an under-noised mutant does not", "[mechanism]") {
  // Pearson chi-square per label, z = (X^2 - dof) / sqrt(2 dof) < 6 at fixed seeds; the mutant
  // (the same mechanism built at 2 eps) is tested against the true realized table: z > 6.
  using labeldp::test::Shape;
  std::mt19937_64 rng(7);
  labeldp::SeededRandom gen(123);
  const int n = 40000;
  for (double eps : {0.5, 1.0, 3.0}) {
    std::vector<std::pair<FiniteMechanism<>, FiniteMechanism<>>> cases;
    cases.emplace_back(capped_rr(4, eps), capped_rr(4, 2 * eps));
    const auto prior = shaped_prior(Shape::HeavyTailed, 6, rng);
    cases.emplace_back(prior_mechanism(prior, eps), prior_mechanism(prior, 2 * eps));
    for (const auto& [m, mutant] : cases) {
      const auto R = m.realized_probabilities();
      double worst_mutant_z = 0;
      for (Eigen::Index i = 0; i < m.num_inputs(); ++i) {
        std::vector<long long> counts(std::size_t(m.num_outputs()), 0), mutant_counts = counts;
        for (int s = 0; s < n; ++s) {
          ++counts[std::size_t(m.sample_index(i, gen))];
          ++mutant_counts[std::size_t(mutant.sample_index(i, gen))];
        }
        std::vector<double> probs(std::size_t(m.num_outputs()));
        for (Eigen::Index j = 0; j < m.num_outputs(); ++j) probs[std::size_t(j)] = R(i, j);
        const double z = labeldp::test::chi_square_z(labeldp::test::chi_square(counts, probs));
        const double zm = labeldp::test::chi_square_z(labeldp::test::chi_square(mutant_counts, probs));
        INFO("eps " << eps << " k " << m.num_inputs() << " label " << i << " z " << z << " mutant z " << zm);
        CHECK(z < 6);
        worst_mutant_z = std::max(worst_mutant_z, zm);
      }
      INFO("eps " << eps << " k " << m.num_inputs());
      CHECK(worst_mutant_z > 6);
    }
  }
}
