#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/concepts.hpp>
#include <labeldp/mechanisms/additive_noise.hpp>
#include <map>
#include <vector>

#include "oracles/counting_random.hpp"
#include "oracles/scripted_random.hpp"
#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using labeldp::DiscreteLaplace;
using labeldp::DiscreteLaplaceMechanism;
using labeldp::ExponentialMechanism;
using labeldp::LabelGrid;
using labeldp::LaplaceMechanism;

static_assert(labeldp::Mechanism<LaplaceMechanism<>>);
static_assert(labeldp::Mechanism<DiscreteLaplaceMechanism<>>);
static_assert(labeldp::Mechanism<ExponentialMechanism<>>);

TEST_CASE("Discrete Laplace (clipped): exact matrix audits to eps and matches the sampler", "[additive_noise]") {
  for (double eps : {0.1, 1.0, 5.0}) {
    DiscreteLaplaceMechanism<> lap(LabelGrid<>(10.0, 20.0, 1.0), eps, true);
    const auto m = lap.mechanism();
    INFO("eps = " << eps);
    const double audited = labeldp::audit_epsilon(m);
    CHECK(audited <= eps);
    CHECK(labeldp::audit_epsilon(m.realized_probabilities()) <= eps);
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
  REQUIRE_THROWS_WITH(DiscreteLaplaceMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), INFINITY, true),
                      "'eps' must be finite and positive, got inf");
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
  REQUIRE_THROWS_WITH(labeldp::exponential_mechanism(LabelGrid<>(0.0, 10000.0, 1.0), 1.0),
                      Contains("too large for a matrix"));
}

namespace {

using u128 = labeldp::detail::u128;
using labeldp::test::chi_square_z;
using labeldp::test::ChiSquare;
using labeldp::test::MonteCarlo;

// Exact: delta * s / t <= eps  <=>  delta * s <= floor(eps * t) (t a power of two, eps * t exact).
bool realized_within(const DiscreteLaplace& d, double eps, std::uint64_t delta) {
  REQUIRE(std::has_single_bit(d.t()));
  const double et = std::floor(std::ldexp(eps, std::countr_zero(d.t())));
  return u128(delta) * d.s() <= static_cast<u128>(et);
}

// Fit of `n` draws of `sampler` against the exact distribution of `model`.
ChiSquare noise_fit(const DiscreteLaplace& sampler, const DiscreteLaplace& model, int n, std::uint64_t seed) {
  labeldp::SeededRandom g(seed);
  std::vector<std::int64_t> z(static_cast<std::size_t>(n));
  for (auto& v : z) v = sampler(g);
  return labeldp::test::binned_chi_square(z, labeldp::test::two_sided_noise_edges(model.scale()),
                                          [&](std::int64_t x) { return model.cdf(x); });
}

// Labels below, on, between and above the grid points of [0, 8].
labeldp::FinitePrior<> test_prior() {
  return labeldp::FinitePrior<>::from_weights({-3.0, 0.0, 0.2, 3.7, 4.0, 8.0, 11.0},
                                              {0.1, 0.2, 0.1, 0.25, 0.15, 0.1, 0.1});
}

template <typename M>
void check_batch_matches_single(const M& m) {
  const std::vector<double> in = {-5.0, 0.0, 0.3, 2.0, 3.99, 8.0, 100.0, 4.0, 4.0, 1.5};
  CHECK(labeldp::test::batch_matches_single(m, in, labeldp::SeededRandom(2024)));
  // Several of the batch sampler's blocks of labels, the last one partial.
  std::vector<double> many;
  for (int i = 0; i < 1000; ++i) many.push_back(in[std::size_t(i) % in.size()] + 0.01 * i);
  CHECK(labeldp::test::batch_matches_single(m, many, labeldp::SeededRandom(7)));
  labeldp::SeededRandom g(2024);
  std::vector<double> short_out(3);
  REQUIRE_THROWS_WITH(m.sample(std::span<const double>(in), std::span<double>(short_out), g),
                      "batch sample: 'out' has 3 entries but 'in' has 10");
}

}  // namespace

TEST_CASE("DiscreteLaplace::for_privacy: realized eps <= eps exactly, and close to it", "[additive_noise]") {
  for (double eps : {1e-6, 0.017, 0.5, 1.0, 7.0, 30.0, 1000.0})
    for (double delta : {1.0, 2.0, 10.0, 4096.0, 2147483648.0, 1099511627776.0}) {
      INFO("eps " << eps << " sensitivity " << delta);
      if (eps / delta < std::ldexp(1.0, -42)) {
        REQUIRE_THROWS_WITH(DiscreteLaplace::for_privacy(eps, delta), Contains("must be in [2^-42, 2^62]"));
        continue;
      }
      const auto d = DiscreteLaplace::for_privacy(eps, delta);
      CHECK(realized_within(d, eps, std::uint64_t(delta)));
      CHECK(d.realized_epsilon(delta) <= eps);
      CHECK(double(d.gamma()) * delta >= eps * (1 - std::ldexp(1.0, -19)));
    }
  // eps / sensitivity up to 2^62 with a large sensitivity: eps 2^62 scaled by 2^62 overflowed the
  // 128-bit numerator (UBSan, found by fuzz_mechanisms at eps 4.2e25).
  for (const auto& [eps, delta] : std::vector<std::pair<double, double>>{
           {1e25, 1e7}, {std::ldexp(1.0, 114), 9007199254740992.0}, {4e18, 1.0}, {4.19e25, 1e7}}) {
    INFO("eps " << eps << " sensitivity " << delta);
    const auto d = DiscreteLaplace::for_privacy(eps, delta);
    CHECK(d.realized_epsilon(delta) <= eps);
    CHECK(double(d.gamma()) * delta >= eps * (1 - std::ldexp(1.0, -19)));
  }
  REQUIRE_THROWS_WITH(DiscreteLaplace::for_privacy(0.0, 1.0), "'eps' must be finite and positive, got 0");
  REQUIRE_THROWS_WITH(DiscreteLaplace::for_privacy(std::nan(""), 1.0), "'eps' must be finite and positive, got nan");
  REQUIRE_THROWS_WITH(DiscreteLaplace::for_privacy(1.0, 0.0), "'sensitivity' must be an integer in [1, 2^53], got 0");
  REQUIRE_THROWS_WITH(DiscreteLaplace::for_privacy(1.0, 1.5), "'sensitivity' must be an integer in [1, 2^53], got 1.5");
  REQUIRE_THROWS_WITH(DiscreteLaplace(0, 1), "'s' must be in [1, 2^63), got 0");
  REQUIRE_THROWS_WITH(DiscreteLaplace(1, 0), "'t' must be in [1, 2^63], got 0");
}

TEST_CASE("DiscreteLaplace: exact Bernoulli building blocks", "[additive_noise]") {
  labeldp::SeededRandom g(8);
  const int n = 200000;
  // e^{-n/d} for gamma <= 1 and > 1, and a rational num/den: counts within 6 standard errors.
  for (auto [num, den] : {std::pair<std::uint64_t, std::uint64_t>{1, 1}, {3, 7}, {0, 5}, {17, 4}, {5, 5}}) {
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += labeldp::bernoulli_exp_neg(num, den, g);
    const double p = std::exp(-double(num) / double(den));
    INFO("exp(-" << num << "/" << den << ")");
    CHECK(std::abs(hits - n * p) <= 6 * std::sqrt(n * p * (1 - p)) + 1e-9);
  }
  for (auto [num, den] : {std::pair<std::uint64_t, std::uint64_t>{1, 3}, {2, 3}, {0, 3}, {3, 3}, {1, 1000}}) {
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += labeldp::bernoulli_rational(num, den, g);
    const double p = double(num) / double(den);
    INFO(num << "/" << den);
    CHECK(std::abs(hits - n * p) <= 6 * std::sqrt(n * p * (1 - p)) + 1e-9);
  }
  REQUIRE_THROWS_WITH(labeldp::bernoulli_exp_neg(1, 0, g), "'d' must be at least 1, got 0");
}

TEST_CASE("DiscreteLaplace sampler fits its exact pmf at every scale; an under-noised mutant does not",
          "[additive_noise]") {
  // gamma = eps for sensitivity 1: scales 1/eps from 0.25 to 1e9, O(1) expected work each.
  for (double eps : {4.0, 1.0, 1.0 / 37.5, 1e-3, 1e-6, 1e-9}) {
    const auto d = DiscreteLaplace::for_privacy(eps, 1);
    const auto mutant = DiscreteLaplace::for_privacy(2 * eps, 1);
    const ChiSquare fit = noise_fit(d, d, 40000, 11);
    const ChiSquare bad = noise_fit(mutant, d, 40000, 11);
    INFO("scale " << double(d.scale()) << ": chi2 " << fit.statistic << " dof " << fit.dof << ", mutant chi2 "
                  << bad.statistic);
    CHECK(chi_square_z(fit) < 6);
    CHECK(chi_square_z(bad) > 6);
  }
}

TEST_CASE("DiscreteLaplace sampler fits its exact pmf (1e6 draws per scale)", "[.][statistical][additive_noise]") {
  for (double eps : {2.0, 1.0, 0.3, 1e-3, 1e-6}) {
    const auto d = DiscreteLaplace::for_privacy(eps, 1);
    const ChiSquare fit = noise_fit(d, d, 1000000, 12);
    const ChiSquare bad = noise_fit(DiscreteLaplace::for_privacy(2 * eps, 1), d, 1000000, 12);
    INFO("scale " << double(d.scale()) << ": chi2 " << fit.statistic << " dof " << fit.dof);
    CHECK(chi_square_z(fit) < 6);
    CHECK(chi_square_z(bad) > 6);
  }
}

TEST_CASE("DiscreteLaplace: pmf, cdf and second moment against their series", "[additive_noise]") {
  for (double eps : {0.05, 1.0, 3.0}) {
    const auto d = DiscreteLaplace::for_privacy(eps, 1);
    long double total = 0, m2 = 0, below = 0;
    for (int z = -4000; z <= 4000; ++z) {
      const long double p = labeldp::test::discrete_laplace_pmf(d, z);
      CHECK(double(d.pmf(z)) == Approx(double(p)).epsilon(1e-12));
      total += p;
      m2 += p * z * z;
      if (z <= 3) below += p;
    }
    INFO("eps " << eps);
    CHECK(double(total) == Approx(1.0).epsilon(1e-12));
    CHECK(double(d.second_moment()) == Approx(double(m2)).epsilon(1e-10));
    CHECK(double(d.cdf(3)) == Approx(double(below)).epsilon(1e-12));
  }
}

TEST_CASE("Discrete Laplace mechanism: exact expected loss vs brute force and Monte Carlo", "[additive_noise]") {
  const auto prior = test_prior();
  for (bool clip : {false, true})
    for (double eps : {0.5, 2.0, 8.0}) {
      const LabelGrid<> grid(0.0, 8.0, 0.5);
      const DiscreteLaplaceMechanism<> m(grid, eps, clip);
      // Brute force: sum over the noise, outputs clipped or not, measured from the raw label.
      long double brute = 0;
      for (labeldp::Index i = 0; i < prior.size(); ++i) {
        const double y = prior.value(i);
        const std::int64_t j = grid.index(y);
        long double s = 0;
        for (std::int64_t z = -6000; z <= 6000; ++z) {
          std::int64_t o = j + z;
          if (clip) o = std::clamp<std::int64_t>(o, 0, 16);
          const long double v = o == 16 ? 8.0L : 0.5L * o, e = v - y;
          s += labeldp::test::discrete_laplace_pmf(m.noise(), z) * e * e;
        }
        brute += prior.probability(i) * s;
        CHECK(m.conditional_loss(y) == Approx(double(s)).epsilon(1e-9));
      }
      INFO("eps " << eps << " clip " << clip);
      CHECK(m.expected_loss(prior) == Approx(double(brute)).epsilon(1e-9));
      const MonteCarlo mc = labeldp::test::monte_carlo_loss(m, prior, 20000, labeldp::SeededRandom(5));
      INFO("Monte Carlo " << mc.mean << " +- " << mc.se << ", exact " << m.expected_loss(prior));
      CHECK(std::abs(mc.mean - m.expected_loss(prior)) < 6 * mc.se);
      if (clip) {
        // The clipped mechanism's exact matrix gives the same loss on grid labels.
        const auto fin = m.finite();
        for (std::int64_t j = 0; j <= 16; ++j)
          CHECK(fin.conditional_loss(labeldp::Index(j)) == Approx(m.conditional_loss(grid.value(j))).epsilon(1e-9));
      }
    }
}

TEST_CASE("Discrete Laplace mechanism (clipped): a mutant with eps doubled fails the fit", "[additive_noise]") {
  const LabelGrid<> grid(10.0, 20.0, 1.0);
  const DiscreteLaplaceMechanism<> lap(grid, 1.0, true), mutant(grid, 2.0, true);
  const auto fin = lap.finite();
  for (int j : {0, 4, 10}) {
    labeldp::SeededRandom g(31);
    std::vector<long long> good(11, 0), bad(11, 0);
    for (int s = 0; s < 30000; ++s) {
      ++good[std::size_t(std::llround(lap.sample(10.0 + j, g) - 10.0))];
      ++bad[std::size_t(std::llround(mutant.sample(10.0 + j, g) - 10.0))];
    }
    std::vector<double> p(fin.probabilities().row(j).data(), fin.probabilities().row(j).data() + 11);
    INFO("input index " << j);
    CHECK(chi_square_z(labeldp::test::chi_square(good, p)) < 6);
    CHECK(chi_square_z(labeldp::test::chi_square(bad, p)) > 6);
  }
  for (double eps : {30.0, 700.0}) {
    const auto fin_big = DiscreteLaplaceMechanism<>(grid, eps, true).finite();
    INFO("eps " << eps);
    CHECK(labeldp::audit_epsilon(fin_big.probabilities()) <= eps);
    CHECK(labeldp::audit_epsilon(fin_big.realized_probabilities()) <= eps);
  }
  REQUIRE_THROWS_WITH(DiscreteLaplaceMechanism<>(grid, 701.0, true).finite(),
                      "'eps' must be at most 700 for the discrete Laplace matrix, got 701");
  // The sampler's own guarantee, exactly: N gamma <= eps.
  CHECK(realized_within(lap.noise(), 1.0, 10));
  CHECK(lap.realized_epsilon() <= 1.0);
}

TEST_CASE("Laplace mechanism: power-of-two grid, the grid's cost stated, realized eps <= eps", "[additive_noise]") {
  for (double eps : {1e-3, 0.1, 1.0, 20.0})
    for (auto [lo, hi] : {std::pair<double, double>{0, 4}, {-1e6, 3e6}, {0.1, 0.3}}) {
      const LaplaceMechanism<> m(lo, hi, eps, false);
      INFO("eps " << eps << " [" << lo << ", " << hi << "]");
      const double b = (hi - lo) / eps, g = m.granularity();
      int e;
      CHECK(std::frexp(g, &e) == 0.5);  // a power of two
      CHECK(g >= b / 4294967296.0);
      CHECK(g < 2 * std::max(b / 4294967296.0, (hi - lo) / 4398046511104.0));
      CHECK(double(m.steps()) * g >= (hi - lo) - g / 2);
      CHECK(double(m.steps()) * g <= (hi - lo) + g / 2);
      CHECK(realized_within(m.noise(), eps, std::uint64_t(m.steps())));
      CHECK(m.realized_epsilon() <= eps);
      // The noise covers the snapped sensitivity N g (which rounding may make a little more or
      // less than hi - lo); the scale loses at most 1e-8 to the rational gamma.
      CHECK(m.noise_scale() >= double(m.steps()) * g / eps);
      CHECK(m.noise_scale() <= double(m.steps()) * g / eps * (1 + 1e-8));
      CHECK(std::abs(m.noise_scale() / m.scale() - 1) <= g / (2 * (hi - lo)) + 1e-8);
      CHECK(m.realized_epsilon() >= eps * (1 - 1e-8));
      for (double y : {lo, hi, lo + 0.37 * (hi - lo), lo - 5.0, hi + 5.0}) {
        const double snapped = m.value(m.index(y));
        CHECK(std::abs(snapped - std::clamp(y, lo, hi)) <= g / 2 * (1 + 1e-12));
      }
    }
}

TEST_CASE("Laplace mechanism: Kolmogorov-Smirnov fit; an under-noised mutant fails", "[additive_noise]") {
  for (bool clip : {false, true}) {
    const LaplaceMechanism<> m(0.0, 4.0, 1.0, clip), mutant(0.0, 4.0, 2.0, clip);
    for (double y : {1.3, 0.0, 4.0}) {
      labeldp::SeededRandom g(77);
      std::vector<double> good, bad;
      for (int i = 0; i < 20000; ++i) {
        good.push_back(m.sample(y, g));
        bad.push_back(mutant.sample(y, g));
      }
      const auto cdf = [&](double x) { return double(m.cdf(y, x)); };
      INFO("y " << y << " clip " << clip);
      if (!clip) {
        CHECK(labeldp::test::kolmogorov_smirnov(good, cdf).p_value > 1e-6);
        CHECK(labeldp::test::kolmogorov_smirnov(bad, cdf).p_value < 1e-6);
      } else {
        // Atoms at lo and hi: chi-square on {0}, (0, 0.5], ..., (3, 3.5], (3.5, 4), {4}.
        auto counts = [&](const std::vector<double>& xs) {
          std::vector<long long> c(10, 0);
          for (double x : xs) {
            REQUIRE(x >= 0.0);
            REQUIRE(x <= 4.0);
            ++c[x == 4.0 ? 9 : std::min<std::size_t>(8, std::size_t(std::ceil(x / 0.5)))];
          }
          return c;
        };
        std::vector<double> p = {double(m.cdf(y, 0.0))};
        for (int k = 1; k <= 7; ++k) p.push_back(double(m.cdf(y, 0.5 * k) - m.cdf(y, 0.5 * (k - 1))));
        p.push_back(double(m.cdf(y, std::nextafter(4.0, 0.0)) - m.cdf(y, 3.5)));
        p.push_back(double(1 - m.cdf(y, std::nextafter(4.0, 0.0))));
        CHECK(chi_square_z(labeldp::test::chi_square(counts(good), p)) < 6);
        CHECK(chi_square_z(labeldp::test::chi_square(counts(bad), p)) > 6);
      }
    }
  }
}

TEST_CASE("Laplace mechanism: expected loss vs the continuous Laplace integral and Monte Carlo", "[additive_noise]") {
  const auto prior = test_prior();
  for (bool clip : {false, true})
    for (double eps : {0.3, 1.0, 5.0}) {
      const LaplaceMechanism<> m(0.0, 8.0, eps, clip);
      const double b = m.noise_scale();
      double total = 0;
      for (labeldp::Index i = 0; i < prior.size(); ++i) {
        const double y = prior.value(i), c = std::clamp(y, 0.0, 8.0);
        double expect;
        if (!clip) {
          expect = (c - y) * (c - y) + 2 * b * b;
        } else {
          // E[(clip(c + X) - y)^2], X ~ Laplace(b): atoms at 0 and 8, Simpson's rule inside.
          const auto F = [&](double x) { return x < 0 ? 0.5 * std::exp(x / b) : 1 - 0.5 * std::exp(-x / b); };
          expect = F(-c) * y * y + (1 - F(8.0 - c)) * (8.0 - y) * (8.0 - y);
          const int n = 20000;
          const double h = 8.0 / n;
          double s = 0;
          for (int k = 0; k <= n; ++k) {
            const double o = k * h, w = (k == 0 || k == n) ? 1 : (k % 2 ? 4 : 2);
            s += w * std::exp(-std::abs(o - c) / b) / (2 * b) * (o - y) * (o - y);
          }
          expect += s * h / 3;
        }
        INFO("eps " << eps << " clip " << clip << " y " << y);
        CHECK(m.conditional_loss(y) == Approx(expect).epsilon(1e-7));
        total += prior.probability(i) * expect;
      }
      CHECK(m.expected_loss(prior) == Approx(total).epsilon(1e-7));
      const MonteCarlo mc = labeldp::test::monte_carlo_loss(m, prior, 20000, labeldp::SeededRandom(6));
      INFO("Monte Carlo " << mc.mean << " +- " << mc.se << ", exact " << m.expected_loss(prior));
      CHECK(std::abs(mc.mean - m.expected_loss(prior)) < 6 * mc.se);
    }
}

TEST_CASE("Exponential mechanism (class): realized audit, fit, mutant, losses", "[additive_noise]") {
  const auto prior = test_prior();
  const LabelGrid<> grid(0.0, 8.0, 0.5);
  for (double eps : {0.2, 1.0, 6.0}) {
    const ExponentialMechanism<> m(grid, eps), mutant(grid, 2 * eps);
    const auto& fin = m.finite();
    INFO("eps " << eps);
    CHECK(labeldp::audit_epsilon(fin.realized_probabilities()) <= eps);
    CHECK(labeldp::audit_epsilon(fin.probabilities()) <= eps);
    CHECK(m.scale() == Approx(16.0 / eps));
    for (int j : {0, 5, 16}) {
      labeldp::SeededRandom g(41);
      std::vector<long long> good(17, 0), bad(17, 0);
      for (int s = 0; s < 30000; ++s) {
        ++good[std::size_t(std::llround(m.sample(0.5 * j, g) / 0.5))];
        ++bad[std::size_t(std::llround(mutant.sample(0.5 * j, g) / 0.5))];
      }
      std::vector<double> p(17);
      double z = 0;
      for (int o = 0; o <= 16; ++o) z += std::exp(-eps * std::abs(o - j) / 32.0);
      for (int o = 0; o <= 16; ++o) p[std::size_t(o)] = std::exp(-eps * std::abs(o - j) / 32.0) / z;
      INFO("row " << j);
      CHECK(chi_square_z(labeldp::test::chi_square(good, p)) < 6);
      if (eps >= 1) CHECK(chi_square_z(labeldp::test::chi_square(bad, p)) > 6);  // at 0.2 both are near uniform
    }
    double brute = 0;
    for (labeldp::Index i = 0; i < prior.size(); ++i) {
      const double y = prior.value(i);
      const int j = int(grid.index(y));
      double z = 0, s = 0;
      for (int o = 0; o <= 16; ++o) z += std::exp(-eps * std::abs(o - j) / 32.0);
      for (int o = 0; o <= 16; ++o) s += std::exp(-eps * std::abs(o - j) / 32.0) / z * (0.5 * o - y) * (0.5 * o - y);
      brute += prior.probability(i) * s;
    }
    CHECK(m.expected_loss(prior) == Approx(brute).epsilon(1e-12));
    const MonteCarlo mc = labeldp::test::monte_carlo_loss(m, prior, 20000, labeldp::SeededRandom(7));
    CHECK(std::abs(mc.mean - m.expected_loss(prior)) < 6 * mc.se);
  }
  REQUIRE_THROWS_WITH(
      ExponentialMechanism<>(LabelGrid<>(0.0, 2000.0, 1.0), 1.0),
      "the exponential mechanism's grid has 2000 steps, more than the limit of 1024 (coarser 'resolution')");
  REQUIRE_THROWS_WITH(ExponentialMechanism<>(grid, -1.0), "'eps' must be finite and positive, got -1");
  REQUIRE_THROWS_WITH(ExponentialMechanism<>(grid, 1001.0),
                      "'eps' must be at most 1000 for the exponential mechanism, got 1001");
  // Large eps: the far weights are tiny but positive, and the realized matrix stays eps-DP.
  for (double eps : {50.0, 1000.0}) {
    const ExponentialMechanism<> big(grid, eps);
    INFO("eps " << eps);
    CHECK(labeldp::audit_epsilon(big.finite().realized_probabilities()) <= eps);
    CHECK(labeldp::audit_epsilon(big.finite().probabilities()) <= eps);
  }
}

TEST_CASE("Additive baselines: batch sampling equals one call per label for a fixed seed", "[additive_noise]") {
  check_batch_matches_single(LaplaceMechanism<>(0.0, 8.0, 1.0, false));
  check_batch_matches_single(LaplaceMechanism<>(0.0, 8.0, 1.0, true));
  check_batch_matches_single(DiscreteLaplaceMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), 1.0, false));
  check_batch_matches_single(DiscreteLaplaceMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), 1.0, true));
  check_batch_matches_single(ExponentialMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), 1.0));
}

TEST_CASE("Additive baselines: mechanism files carry the contract's fields", "[additive_noise]") {
  const std::string lap = LaplaceMechanism<>(0.0, 4.0, 2.0, true).to_json();
  for (const char* f :
       {"{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"laplace\",\"eps\":2,\"delta\":0,"
        "\"sensitivity\":4,\"lo\":0,\"hi\":4,\"clip\":true,\"scale\":2,\"granularity\":",
        "\"noise_scale\":", "\"realized_eps\":", "\"grid_steps\":"})
    CHECK_THAT(lap, Contains(f));
  const std::string dl = DiscreteLaplaceMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), 1.0, false).to_json();
  CHECK_THAT(
      dl, Contains("{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"discrete-laplace\",\"eps\":1,"
                   "\"delta\":0,\"sensitivity\":8,\"lo\":0,\"hi\":8,\"clip\":false,\"resolution\":0.5,\"scale\":16,"));
  const std::string em = ExponentialMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), 1.0).to_json();
  CHECK(em ==
        "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"exponential\",\"eps\":1,\"delta\":0,"
        "\"sensitivity\":8,\"lo\":0,\"hi\":8,\"clip\":true,\"scale\":16,\"resolution\":0.5}");
}

TEST_CASE("Laplace mechanism rejects each bad parameter", "[additive_noise]") {
  REQUIRE_THROWS_WITH(LaplaceMechanism<>(1.0, 1.0, 1.0, false), "'lo' must be below 'hi', got lo = 1, hi = 1");
  REQUIRE_THROWS_WITH(LaplaceMechanism<>(0.0, std::nan(""), 1.0, false), "'hi' must be finite, got nan");
  REQUIRE_THROWS_WITH(LaplaceMechanism<>(-INFINITY, 1.0, 1.0, false), "'lo' must be finite, got -inf");
  REQUIRE_THROWS_WITH(LaplaceMechanism<>(-1e308, 1e308, 1.0, false), "'hi' - 'lo' must be finite");
  for (double eps : {0.0, -1.0, std::numeric_limits<double>::infinity()})
    REQUIRE_THROWS_WITH(LaplaceMechanism<>(0.0, 1.0, eps, false),
                        "'eps' must be finite and positive, got " + labeldp::detail::format_number(eps));
  REQUIRE_THROWS_WITH(LaplaceMechanism<>(0.0, 1.0, std::nan(""), false), "'eps' must be finite and positive, got nan");
  REQUIRE_THROWS_WITH(LaplaceMechanism<>(0.0, 1.0, 1e-13, false),
                      "'eps' must be at least 2^-40 for the Laplace mechanism, got 1e-13");
  labeldp::SeededRandom g(1);
  REQUIRE_THROWS_WITH(LaplaceMechanism<>(0.0, 1.0, 1.0, false).sample(std::nan(""), g),
                      "'label' must be finite, got nan");
}

using labeldp::test::CountingRandom;  // counts 64-bit words: the sampler's work is proportional to them

TEST_CASE("DiscreteLaplace: O(1) expected random words whatever the scale", "[additive_noise]") {
  for (double eps : {8.0, 1.0, 1e-3, 1e-6, 1e-9, 1e-12}) {
    const auto d = DiscreteLaplace::for_privacy(eps, 1);
    CountingRandom g;
    const int n = 20000;
    for (int i = 0; i < n; ++i) (void)d(g);
    INFO("scale " << double(d.scale()) << ": " << double(g.words) / n << " words per draw");
    CHECK(double(g.words) / n < 4);
  }
}

TEST_CASE("Discrete Laplace mechanism (clipped): one word per label for every label; table = exact rows",
          "[additive_noise]") {
  for (double eps : {0.05, 1.0, 8.0, 30.0})
    for (double step : {1.0, 0.25, 0.01}) {
      const LabelGrid<> grid(-3.0, 7.0, step);
      const DiscreteLaplaceMechanism<> m(grid, eps, true);
      INFO("eps " << eps << " steps " << grid.steps());
      REQUIRE(m.constant_work());
      const std::int64_t n = grid.steps();
      for (std::int64_t j = 0; j <= n; j += std::max<std::int64_t>(1, n / 7)) {
        CountingRandom g;
        for (int t = 0; t < 200; ++t) (void)m.sample(grid.value(j), g);
        CHECK(g.words == 200);
        // The table realizes the exact distribution up to its 2^-64 rounding.
        long double row = 0;
        for (std::int64_t o = 0; o <= n; ++o) {
          const long double p = m.realized_probability(j, o), exact = m.noise().pmf(o - j);
          row += p;
          if (o > 0 && o < n) CHECK(std::abs(double(p - exact)) <= 1e-17 + 1e-15 * double(exact));
        }
        CHECK(std::abs(double(row - 1)) < 1e-15);
      }
    }
  // Unclipped, a grid beyond kTableSteps, or e^-eps below the table's 2^-64 resolution: the exact
  // sampler (its work varies with the noise), whose outputs stay on the clipped grid.
  const DiscreteLaplaceMechanism<> sharp(LabelGrid<>(0.0, 8.0, 0.5), 700.0, true);
  CHECK_FALSE(sharp.constant_work());
  labeldp::SeededRandom g(3);
  for (int t = 0; t < 100; ++t) CHECK(sharp.sample(2.5, g) == 2.5);
  CHECK_FALSE(DiscreteLaplaceMechanism<>(LabelGrid<>(0.0, 8.0, 0.5), 1.0, false).constant_work());
  const LabelGrid<> wide(0.0, 1.0, 1.0 / double(2 * DiscreteLaplaceMechanism<>::kTableSteps));
  CHECK_FALSE(DiscreteLaplaceMechanism<>(wide, 1.0, true).constant_work());
}

using labeldp::test::ScriptedRandom;

TEST_CASE("exp_neg_fraction: Algorithm 1 of Canonne, Kamath and Steinke 2020 trial by trial, ties included",
          "[additive_noise]") {
  // y = w 2^-64 with w = 0x8040...: y/1 has top byte 0x80 (then 0x40), y/2 has 0x40, y/3 0x2a.
  // The pool hands out a word's bytes from the lowest: trial 1's byte, then trial 2's, then the
  // bytes of tie continuations and of trials 3, 4, ...
  const std::uint64_t w = 0x8040000000000000ull;
  struct Case {
    std::uint64_t word;
    bool expect;
    std::size_t words;  // generator words read
    const char* what;
  };
  for (const Case& c : {Case{0x0000000000000090ull, true, 1, "trial 1's byte 0x90 > 0x80: fails, K = 0"},
                        Case{0x0000000000005010ull, false, 1, "trial 1 succeeds, trial 2's 0x50 > 0x40 fails: K = 1"},
                        Case{0x0000000000ff1010ull, true, 1, "trials 1, 2 succeed, trial 3's 0xff > 0x2a fails: K = 2"},
                        Case{0x00000000ff001010ull, false, 1, "trials 1-3 succeed, trial 4's 0xff > 0x20 fails: K = 3"},
                        Case{0x0000000000500080ull, true, 1, "trial 1 ties on 0x80, its next byte 0x50 > 0x40: fails"},
                        // Trial 1 ties, then 0x30 < 0x40 succeeds; trial 2 (0x00) and trials 3-7 (bytes 0 below
                        // 0x2a, 0x20, 0x19, 0x15, 0x12) succeed; trial 8 reads 0xff from the second word: K = 7.
                        Case{0x0000000000300080ull, false, 2, "trial 1 ties then succeeds, K = 7"},
                        // Both trials tie; trial 1 goes on with 0x30 < 0x40, trial 2 with 0x00 < 0x20 (y/2 =
                        // 0x4020...): both succeed; trials 3-6 succeed on zero bytes, trial 7 fails: K = 6.
                        Case{0x0000000000304080ull, true, 2, "trials 1 and 2 tie then succeed, K = 6"}}) {
    ScriptedRandom g{{c.word, ~0ull}};
    labeldp::detail::BitPool<ScriptedRandom> pool(g);
    INFO(c.what);
    CHECK(pool.exp_neg_fraction(w) == c.expect);
    CHECK(g.next == c.words);
  }
  // y = 0: always true (e^0); y just below 1: P = e^-1 up to 2^-64.
  labeldp::SeededRandom g(21);
  for (int i = 0; i < 1000; ++i) CHECK(labeldp::detail::BitPool<labeldp::SeededRandom>(g).exp_neg_fraction(0));
  // Frequencies against e^-y for y whose bytes tie often (0x01.., 0xff..) and ordinary ones.
  const int n = 400000;
  for (std::uint64_t word : {0x0101010101010101ull, 0xffffffffffffffffull, 0x4000000000000000ull, 0x0000000000000001ull,
                             0xb504f333f9de6484ull}) {
    const double y = std::ldexp(double(word), -64), p = std::exp(-y), mutant = std::exp(-2 * y);
    long long hits = 0;
    for (int i = 0; i < n; ++i) hits += labeldp::detail::BitPool<labeldp::SeededRandom>(g).exp_neg_fraction(word);
    const double se = std::sqrt(n * p * (1 - p)) + 1e-9;
    INFO("y = " << y << ": " << hits << " of " << n << ", expected " << n * p);
    CHECK(std::abs(double(hits) - n * p) <= 6 * se);
    if (y > 0.05) CHECK(std::abs(double(hits) - n * mutant) > 6 * se);  // e^-2y is told apart
  }
}

TEST_CASE("Exact Bernoulli draws resolve ties past the first 64 bits", "[additive_noise]") {
  // 1/3 = 0.0101...: its 64-bit words are all 0x5555...; a BitPool reads each word's low byte
  // first and compares it with the expansion's high byte, so a palindromic word ties.
  const std::uint64_t third = 0x5555555555555555ull;
  for (auto [tail, expect] : {std::pair<std::uint64_t, bool>{0, true}, {~0ull, false}}) {
    ScriptedRandom g{{third, third, tail}};
    labeldp::detail::BitPool<ScriptedRandom> pool(g);
    CHECK(pool.bernoulli_inverse(3) == expect);
    CHECK(g.next == 3);  // the third word decided
  }
  // (w + r/d) 2^-64 with r/d = 1/3: a tie on w goes on to the words of 1/3.
  for (auto [tail, expect] : {std::pair<std::uint64_t, bool>{0, true}, {~0ull, false}}) {
    ScriptedRandom g{{0x1111111111111111ull, third, tail}};
    labeldp::detail::BitPool<ScriptedRandom> pool(g);
    CHECK(pool.bernoulli_expansion(0x1111111111111111ull, 1, 3) == expect);
  }
}

TEST_CASE("Laplace mechanism: a range near the largest double never samples infinity", "[additive_noise]") {
  // Found by fuzz_mechanisms: unclipped, lo = -1.07e308 and noise of scale 1.07e308, lo + g (j + Z)
  // overflowed to -inf in about half the draws; outputs now saturate at the largest double.
  const labeldp::LaplaceMechanism<> m(-1.067270576343124e+308, 2.7158368596094357e-317, 1.0000581956187731, false);
  labeldp::SeededRandom g(1);
  int saturated = 0;
  for (int t = 0; t < 2000; ++t) {
    const double o = m.sample(0.0, g);
    REQUIRE(std::isfinite(o));
    saturated += std::abs(o) == std::numeric_limits<double>::max();
  }
  CHECK(saturated > 0);  // the overflow path was taken
}
