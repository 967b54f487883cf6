#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/concepts.hpp>
#include <labeldp/mechanisms/gaussian.hpp>
#include <vector>

#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using labeldp::AnalyticGaussianMechanism;
using labeldp::DiscreteGaussianMechanism;
using labeldp::FinitePrior;
using labeldp::SeededRandom;

static_assert(labeldp::Mechanism<DiscreteGaussianMechanism>);
static_assert(labeldp::Mechanism<AnalyticGaussianMechanism>);

namespace {

// Balle and Wang's delta by composite Simpson in long double on the privacy-loss integral
// delta = int_0^inf phi(a + s) (1 - e^{-2us}) ds (positive integrand: no cancellation); an
// implementation independent of the library's Gauss-Legendre panels.
long double simpson_delta(long double sigma, long double eps, long double sens) {
  const long double u = sens / (2 * sigma), a = eps * sigma / sens - u;
  const long double S = a > 1 ? 80 / a : 40 + std::max<long double>(0, -a);
  const int n = 100000;
  const long double h = S / n;
  auto f = [&](long double s) {
    const long double z = a + s;
    return std::exp(-z * z / 2) / std::sqrt(2 * 3.14159265358979323846264338327950288L) * -std::expm1(-2 * u * s);
  };
  long double sum = f(0) + f(S);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4 : 2) * f(i * h);
  return sum * h / 3;
}

// The same delta from erfc in long double (Balle and Wang 2018, Theorem 8), with the size of its
// larger term so callers can tell when cancellation makes it unreliable.
long double erfc_delta(long double sigma, long double eps, long double sens, long double* larger) {
  const long double u = sens / (2 * sigma), v = eps * sigma / sens;
  const long double t1 = std::erfc((v - u) / std::sqrt(2.0L)) / 2;
  *larger = t1;
  return t1 - std::exp(eps) * std::erfc((v + u) / std::sqrt(2.0L)) / 2;
}

// Brute force: max over shifts d = 1..D of sum_y max(0, p(y) - e^eps p(y + d)), p normalized directly.
double brute_discrete_delta(double s2, double eps, int D) {
  const int R = int(60 * std::sqrt(s2)) + D + 20;
  std::vector<double> p(std::size_t(2 * R + 1));
  double z = 0;
  for (int y = -R; y <= R; ++y) z += p[std::size_t(y + R)] = std::exp(-double(y) * y / (2 * s2));
  for (auto& x : p) x /= z;
  auto P = [&](int y) { return y < -R || y > R ? 0.0 : p[std::size_t(y + R)]; };
  double best = 0;
  for (int d = 1; d <= D; ++d) {
    double s = 0;
    for (int y = -R; y <= R; ++y) s += std::max(0.0, P(y) - std::exp(eps) * P(y + d));
    best = std::max(best, s);
  }
  return best;
}

// The exact CDF of a discrete Gaussian mechanism's noise (in grid steps), by prefix sums of its pmf.
auto noise_cdf(const DiscreteGaussianMechanism& m, std::int64_t reach) {
  return labeldp::test::cdf_from_pmf([&](std::int64_t z) { return m.noise_pmf(z); }, reach);
}
auto noise_cdf(const AnalyticGaussianMechanism& m, std::int64_t reach) {
  const double s2 = std::pow(m.sigma() / m.grid_step(), 2), zn = labeldp::detail::discrete_gaussian_normalizer(s2);
  return labeldp::test::cdf_from_pmf([&](std::int64_t z) { return std::exp(-double(z) * double(z) / (2 * s2)) / zn; },
                                     reach);
}

// Edges of `bins` cells of `width` steps centred on 0, plus the two tails.
std::vector<std::int64_t> centred_edges(std::int64_t width, int bins) {
  const std::int64_t half = width * bins / 2;
  std::vector<std::int64_t> e;
  for (int k = 0; k <= bins; ++k) e.push_back(-half - 1 + k * width);
  return e;
}

}  // namespace

TEST_CASE("analytic_gaussian_sigma: satisfies Balle-Wang's condition to 1e-12 and is the smallest", "[gaussian]") {
  int erfc_checked = 0;
  for (double sens : {1.0, 37.5})
    for (double eps : {0.01, 0.1, 0.5, 1.0, 5.0, 20.0, 50.0})
      for (double delta : {1e-2, 1e-6, 1e-15, 1e-100, 1e-300}) {
        const double sigma = labeldp::analytic_gaussian_sigma(eps, delta, sens);
        INFO("sens " << sens << " eps " << eps << " delta " << delta << " sigma " << sigma);
        const long double at = simpson_delta(sigma, eps, sens);
        const long double below = simpson_delta(sigma * (1 - 1e-9), eps, sens);
        CHECK(at <= delta * (1 + 1e-12L));
        CHECK(below > delta);
        CHECK(double(at / delta) == Approx(1).margin(1e-6));
        long double larger = 0;
        const long double viaerfc = erfc_delta(sigma, eps, sens, &larger);
        if (larger / viaerfc < 1e4L) {  // erfc difference trustworthy to ~1e-15
          ++erfc_checked;
          CHECK(double(viaerfc / at) == Approx(1).margin(1e-12));
        }
        // The library's own evaluation agrees with the oracle.
        CHECK(double(labeldp::analytic_gaussian_delta(sigma, eps, sens) / at) == Approx(1).margin(1e-12));
      }
  CHECK(erfc_checked > 30);
}

TEST_CASE("analytic_gaussian_sigma rejects each bad parameter", "[gaussian]") {
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(1, 0, 1), "'delta' must be in (0, 1), got 0");
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(1, 1, 1), "'delta' must be in (0, 1), got 1");
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(1, -0.5, 1), "'delta' must be in (0, 1), got -0.5");
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(1, std::nan(""), 1), Contains("'delta' must be in (0, 1)"));
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(1, 1e-310, 1),
                    "'delta' must be at least 1e-300, got 9.9999999999999694e-311");
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(0, 1e-6, 1), "'eps' must be finite and positive, got 0");
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(INFINITY, 1e-6, 1), "'eps' must be finite and positive, got inf");
  CHECK_THROWS_WITH(labeldp::analytic_gaussian_sigma(1, 1e-6, 0), "'sensitivity' must be finite and positive, got 0");
}

TEST_CASE("discrete Gaussian: exact delta matches a brute-force sum over the lattice", "[gaussian]") {
  for (double s2 : {0.3, 2.5, 17.3, 160.0})
    for (int D : {1, 2, 5})
      for (double eps : {0.1, 1.0, 3.0}) {
        const double lib = labeldp::discrete_gaussian_delta(s2, eps, D);
        const double brute = brute_discrete_delta(s2, eps, D);
        INFO("s2 " << s2 << " D " << D << " eps " << eps << " lib " << lib << " brute " << brute);
        if (brute < 1e-280) {
          CHECK(lib < 1e-270);
        } else {
          CHECK(lib == Approx(brute).epsilon(1e-10));
        }
      }
}

TEST_CASE("discrete Gaussian mechanism: realized delta <= requested, sigma the smallest", "[gaussian]") {
  for (double eps : {0.2, 1.0, 4.0})
    for (double delta : {1e-3, 1e-9})
      for (double R : {1.0, 2.5}) {
        DiscreteGaussianMechanism m(0, 25, eps, delta, R, false);
        const std::int64_t D = m.grid().steps();
        const double s2 = std::ldexp(double(m.sigma2_numerator()), -m.sigma2_log2_denominator());
        INFO("eps " << eps << " delta " << delta << " R " << R << " sigma^2 " << s2);
        CHECK(m.sigma() == Approx(std::sqrt(s2) * R).epsilon(1e-15));
        const double realized = brute_discrete_delta(s2, eps, int(D));
        CHECK(realized <= delta);
        CHECK(realized == Approx(m.realized_delta()).epsilon(1e-9));
        const double smaller = s2 * (1 - 2.5e-7);  // below the search's answer before rounding
        CHECK(brute_discrete_delta(smaller, eps, int(D)) > delta / (1 + 1e-9));
      }
}

TEST_CASE("analytic Gaussian mechanism: lattice, realized delta and sigma", "[gaussian]") {
  for (double eps : {0.05, 1.0, 8.0}) {
    AnalyticGaussianMechanism m(-2, 3, eps, 1e-6, false);
    INFO("eps " << eps);
    const double g = m.grid_step();
    CHECK(std::exp2(std::round(std::log2(g))) == g);
    CHECK(m.analytic_sigma() == labeldp::analytic_gaussian_sigma(eps, 1e-6, 5.0));
    CHECK(m.realized_delta() <= 1e-6);
    CHECK(m.realized_delta() ==
          Approx(labeldp::discrete_gaussian_delta(std::pow(m.sigma() / g, 2), eps, m.grid().steps())).epsilon(1e-9));
    // Snapped labels are at most D steps apart, and D g exceeds the range by at most half a step.
    CHECK(m.grid().index(3.0) - m.grid().index(-2.0) == m.grid().steps());
    CHECK(std::abs(double(m.grid().steps()) * g - 5.0) <= g / 2);
    CHECK(m.sigma() >= m.analytic_sigma() * (1 - 1e-6));
    CHECK(m.sigma() <= m.analytic_sigma() * (1 + 1e-3));
  }
}

TEST_CASE("analytic Gaussian mechanism: a grid step above twice the range snaps every label to lo", "[gaussian]") {
  // eps 1e-5: sigma is about 5e5 (hi - lo), the step 2^5.
  const AnalyticGaussianMechanism m(0, 1, 1e-5, 1e-6, true);
  INFO("grid step " << m.grid_step() << " sigma " << m.sigma());
  CHECK(m.grid_step() > 2.0);
  CHECK(m.grid().steps() == 1);
  CHECK(m.grid().index(1.0) == 0);
  CHECK(m.grid().top() == 1.0);
  CHECK(m.realized_delta() <= 1e-6);
  CHECK(m.realized_delta() ==
        Approx(labeldp::discrete_gaussian_delta(std::pow(m.sigma() / m.grid_step(), 2), 1e-5, 1)).epsilon(1e-9));
  CHECK(m.sigma() >= m.analytic_sigma());
  SeededRandom gen(3);
  for (int i = 0; i < 100; ++i) {
    const double o = m.sample(0.7, gen);
    CHECK((o == 0.0 || o == 1.0));
  }
}

TEST_CASE("Gaussian mechanisms reject each bad parameter", "[gaussian]") {
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 10, 1, 0, 1, false), "'delta' must be in (0, 1), got 0");
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 10, 0, 1e-6, 1, false), "'eps' must be finite and positive, got 0");
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 10, std::nan(""), 1e-6, 1, false), Contains("'eps' must be finite"));
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 10, 150, 1e-6, 1, false),
                    "'eps' must be at most 100 for the discrete Gaussian, got 150");
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(1, 1, 1, 1e-6, 1, false), "'lo' must be below 'hi', got lo = 1, hi = 1");
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, INFINITY, 1, 1e-6, 1, false), "'hi' must be finite, got inf");
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 1, 1, 1e-6, 0.3, false),
                    "'resolution' must divide hi - lo into 1 to 2^31 steps, got 0.29999999999999999 for [0, 1]");
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 1, 1, 1e-6, 0, false),
                    "'resolution' must be finite and positive, got 0");
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 1e6, 0.01, 1e-6, 1, false), Contains("use a coarser 'resolution'"));
  // Noise beyond the supported width is refused at once, naming the limit (each exact delta
  // evaluation sums ~10 sigma terms: a fuzzed eps of 1e-307 once took 30 s in construction).
  CHECK_THROWS_WITH(DiscreteGaussianMechanism(0, 2e4, 1, 1e-6, 1, false), Contains("more than the supported 65536"));
  CHECK_THROWS_WITH(AnalyticGaussianMechanism(0, 1, 1e-307, 1e-6, true), Contains("use a larger eps or delta"));
  CHECK_THROWS_WITH(AnalyticGaussianMechanism(0, 1, 1, 1.5, true), "'delta' must be in (0, 1), got 1.5");
  CHECK_THROWS_WITH(AnalyticGaussianMechanism(2, 1, 1, 1e-6, true), "'lo' must be below 'hi', got lo = 2, hi = 1");
  SeededRandom gen(1);
  CHECK_THROWS_WITH(AnalyticGaussianMechanism(0, 1, 1, 1e-6, true).sample(std::nan(""), gen),
                    Contains("'label' must be finite"));
}

TEST_CASE("exact e^-gamma Bernoulli matches its probability", "[.][statistical][gaussian]") {
  SeededRandom gen(11);
  const int n = 100000;
  for (auto [num, den] : std::vector<std::pair<int, int>>{{0, 1}, {3, 10}, {1, 1}, {27, 10}, {7, 3}}) {
    long long hits = 0;
    for (int i = 0; i < n; ++i) {
      labeldp::detail::NoiseBits<SeededRandom> bits(gen);
      hits += labeldp::detail::bernoulli_exp_minus(num, den, bits);
    }
    const double p = std::exp(-double(num) / den);
    INFO("gamma " << num << "/" << den << " hits " << hits);
    CHECK(std::abs(double(hits) - n * p) <= 6 * std::sqrt(n * p * (1 - p)) + 1e-9);
  }
}

TEST_CASE("discrete Gaussian sampler fits its exact pmf; an under-noised mutant does not",
          "[.][statistical][gaussian]") {
  for (double eps : {0.5, 2.0}) {
    const DiscreteGaussianMechanism m(0, 10, eps, 1e-6, 1, false);
    const DiscreteGaussianMechanism mutant(0, 10, 2 * eps, 1e-6, 1, false);
    const std::int64_t width = std::max<std::int64_t>(1, std::int64_t(m.sigma() / 8)), bins = 96;
    const auto F = noise_cdf(m, width * bins / 2 + 60 * width * bins);
    const auto [z, z_mutant] = labeldp::test::grid_noise_draws(m, mutant, 5.0, 200000, SeededRandom(2024));
    const double z_ok = labeldp::test::chi_square_z(labeldp::test::binned_chi_square(z, centred_edges(width, bins), F));
    const double z_mut =
        labeldp::test::chi_square_z(labeldp::test::binned_chi_square(z_mutant, centred_edges(width, bins), F));
    INFO("eps " << eps << " sigma " << m.sigma() << " z " << z_ok << " mutant z " << z_mut);
    CHECK(z_ok < 6);
    CHECK(z_mut >= 6);
  }
}

TEST_CASE(
    "discrete Gaussian sampler (power-of-two Laplace proposal) fits the exact pmf at small and large sigma; "
    "an under-noised mutant does not",
    "[gaussian]") {
  // sigma^2 from 1/4 (t = 1) through non-powers of two (t well above sigma) to 5000: each value's
  // exact probability e^{-y^2 / 2 sigma^2} / normalizer, the tails beyond 6 sigma as two cells.
  for (double s2 : {0.25, 3.0, 40.0, 5000.0}) {
    const auto sampler = labeldp::detail::dyadic_sampler(s2), mutant = labeldp::detail::dyadic_sampler(s2 / 1.3);
    REQUIRE(std::has_single_bit(sampler.t));
    CHECK(double(sampler.t) >= std::sqrt(sampler.sigma2()));
    CHECK(double(sampler.t) < 2 * std::sqrt(sampler.sigma2()) + 1);
    const double sig2 = sampler.sigma2(), norm = labeldp::detail::discrete_gaussian_normalizer(sig2);
    const std::int64_t reach = std::max<std::int64_t>(2, std::int64_t(6 * std::sqrt(sig2)));
    const std::int64_t step = std::max<std::int64_t>(1, reach / 60);  // cells of `step` values
    std::vector<std::int64_t> edges;
    for (std::int64_t e = -reach - 1; e <= reach; e += step) edges.push_back(e);
    const auto cdf = [&](std::int64_t x) {
      long double c = 0;
      for (std::int64_t y = -40 * reach; y <= x; ++y) c += std::exp(-double(y) * double(y) / (2 * sig2)) / norm;
      return c;
    };
    SeededRandom g(99), gm(99);
    std::vector<std::int64_t> z(200000), zm(z.size());
    for (auto& v : z) v = sampler(g);
    for (auto& v : zm) v = mutant(gm);
    const double ok = labeldp::test::chi_square_z(labeldp::test::binned_chi_square(z, edges, cdf));
    const double bad = labeldp::test::chi_square_z(labeldp::test::binned_chi_square(zm, edges, cdf));
    INFO("sigma^2 " << sig2 << " t " << sampler.t << ": z " << ok << ", mutant z " << bad);
    CHECK(ok < 6);
    CHECK(bad >= 6);
  }
}

namespace {
// Returns `first` once, then the words of a SeededRandom: a uniform U whose first 64 bits are chosen.
struct FirstWord {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type(0); }
  std::uint64_t first;
  bool used = false;
  SeededRandom rest{4};
  result_type operator()() {
    if (used) return rest();
    used = true;
    return first;
  }
};
}  // namespace

TEST_CASE("discrete Gaussian acceptance: ratio_word compares U with n/d exactly, also inside the estimate's margin",
          "[gaussian]") {
  using labeldp::detail::DiscreteGaussianSampler;
  using u128 = labeldp::detail::u128;
  // n/d with d < 2^64, so w = floor(2^64 n / d) and the remainder are exact in 128 bits.
  for (auto [n, d] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {1, 3}, {2, 7}, {123456789, 1000000007}, {(std::uint64_t(1) << 62) + 5, (std::uint64_t(1) << 63) + 11}}) {
    const u128 scaled = (u128(n) << 64), w128 = scaled / d, rem = scaled % d;
    const std::uint64_t w = std::uint64_t(w128);
    INFO("n " << n << " d " << d);
    for (std::int64_t off : {-20000, -100, -1, 1, 100, 20000}) {
      FirstWord g{w + std::uint64_t(off)};
      labeldp::detail::NoiseBits<FirstWord> bits(g);
      CHECK(DiscreteGaussianSampler::ratio_word(n, d, g, bits) == (off < 0));  // U < n/d iff its first word is below w
    }
    // u == w: true exactly when the remaining bits are below rem / d.
    long long hits = 0;
    const int trials = 20000;
    for (int i = 0; i < trials; ++i) {
      FirstWord g{w};
      g.rest = SeededRandom(std::uint64_t(1000 + i));
      labeldp::detail::NoiseBits<FirstWord> bits(g);
      hits += DiscreteGaussianSampler::ratio_word(n, d, g, bits);
    }
    const double p = double(rem) / double(d);
    CHECK(std::abs(double(hits) - trials * p) <= 6 * std::sqrt(trials * p * (1 - p)) + 1);
  }
  // exp_minus_words against e^{-n/d}, and a mutant (e^{-1.2 n/d}) that the same check rejects.
  SeededRandom gen(12);
  labeldp::detail::NoiseBits<SeededRandom> nb(gen);
  for (auto [n, d] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 3}, {5, 4}, {7, 2}, {10, 10}}) {
    const int trials = 100000;
    long long hits = 0, mutant = 0;
    for (int i = 0; i < trials; ++i) {
      hits += DiscreteGaussianSampler::exp_minus_words(n, d, gen, nb);
      mutant += DiscreteGaussianSampler::exp_minus_words(u128(n) * 6, u128(d) * 5, gen, nb);
    }
    const double p = std::exp(-double(n) / double(d)), sd = std::sqrt(trials * p * (1 - p));
    INFO("n " << n << " d " << d << " hits " << hits << " expected " << trials * p << " mutant " << mutant);
    CHECK(std::abs(double(hits) - trials * p) <= 6 * sd);
    CHECK(std::abs(double(mutant) - trials * p) > 6 * sd);
  }
}

TEST_CASE("analytic Gaussian sampler fits its exact lattice distribution (KS); a mutant does not",
          "[.][statistical][gaussian]") {
  const AnalyticGaussianMechanism m(0, 1, 1.0, 1e-6, false);
  const AnalyticGaussianMechanism mutant(0, 1, 2.0, 1e-6, false);
  const auto F = noise_cdf(m, std::int64_t(40 * m.sigma() / m.grid_step()));
  const auto [a, b] = labeldp::test::grid_noise_draws(m, mutant, 0.5, 100000, SeededRandom(7));
  const auto ks = labeldp::test::kolmogorov_smirnov(a, F);
  const auto ks_mut = labeldp::test::kolmogorov_smirnov(b, F);
  INFO("KS " << ks.statistic << " p " << ks.p_value << "; mutant KS " << ks_mut.statistic << " p " << ks_mut.p_value);
  CHECK(ks.p_value > 1e-6);
  CHECK(ks_mut.p_value < 1e-6);
}

TEST_CASE("Gaussian expected losses are exact: brute force and Monte Carlo", "[.][statistical][gaussian]") {
  const auto prior = FinitePrior<>::from_weights({-3.0, 0.0, 2.4, 5.0, 9.7, 14.0}, {0.1, 0.2, 0.2, 0.2, 0.2, 0.1});
  for (bool clip : {false, true}) {
    const DiscreteGaussianMechanism dg(0, 10, 1.0, 1e-5, 0.5, clip);
    // Brute force over outputs with the pmf normalized directly.
    double brute = 0;
    const std::int64_t R = std::int64_t(80 * dg.sigma() / 0.5);
    for (labeldp::Index i = 0; i < prior.size(); ++i) {
      const double y = prior.value(i);
      const std::int64_t c = dg.grid().index(y);
      double s = 0, z_norm = 0;
      for (std::int64_t z = -R; z <= R; ++z) {
        const double p = dg.noise_pmf(z);
        z_norm += p;
        s += p * std::pow(dg.grid().output(c + z, clip) - y, 2);
      }
      brute += prior.probability(i) * s / z_norm;
    }
    INFO("clip " << clip);
    CHECK(dg.expected_loss(prior) == Approx(brute).epsilon(1e-10));
    const auto [mc, se] = labeldp::test::monte_carlo_loss(dg, prior, 40000, SeededRandom(5));
    CHECK(std::abs(mc - dg.expected_loss(prior)) <= 6 * se);
    const AnalyticGaussianMechanism ag(0, 10, 1.0, 1e-5, clip);
    const auto [mc2, se2] = labeldp::test::monte_carlo_loss(ag, prior, 40000, SeededRandom(6));
    INFO("analytic exact " << ag.expected_loss(prior) << " MC " << mc2 << " +- " << se2);
    CHECK(std::abs(mc2 - ag.expected_loss(prior)) <= 6 * se2);
  }
}

TEST_CASE("discrete Gaussian loss is exact when lo + N R misses hi by a rounding (the top point is hi)", "[gaussian]") {
  // R = 0.1 (1 + 9e-10) divides [0, 1] into 10 steps within the 1e-9 tolerance; lo + 10 R = 1 + 9e-10.
  const double R = 0.1 * (1 + 9e-10);
  const DiscreteGaussianMechanism m(0, 1, 2.0, 1e-3, R, false);
  REQUIRE(m.grid().steps() == 10);
  REQUIRE(m.grid().value(10) == 1.0);
  const std::int64_t K = std::int64_t(60 * m.sigma() / R) + 20;
  for (double y : {0.6, 1.3, 2.0}) {
    const std::int64_t c = m.grid().index(y);
    long double brute = 0, uniform = 0, mass = 0;  // outputs as sampled; outputs lo + R j at every j
    for (std::int64_t z = -K; z <= K; ++z) {
      const long double p = m.noise_pmf(z), e = m.grid().output(c + z, false) - y, u = R * double(c + z) - y;
      brute += p * e * e;
      uniform += p * u * u;
      mass += p;
    }
    brute /= mass;
    uniform /= mass;
    INFO("y " << y << " exact " << m.conditional_loss(y) << " brute " << double(brute));
    CHECK(m.conditional_loss(y) == Approx(double(brute)).epsilon(1e-13));
    // A loss without the top-point correction (uniform) would fail the check above.
    CHECK(std::abs(double(uniform - brute)) > 1e-12 * double(brute));
  }
}

TEST_CASE("Gaussian mechanisms: batch sampling equals single calls; mechanism files", "[gaussian]") {
  const DiscreteGaussianMechanism dg(0, 10, 1.0, 1e-6, 0.5, true);
  const AnalyticGaussianMechanism ag(-1, 4, 2.0, 1e-8, false);
  std::vector<double> in;
  for (int i = 0; i < 500; ++i) in.push_back(-2 + 0.031 * i);
  CHECK(labeldp::test::batch_matches_single(dg, in, SeededRandom(99)));
  CHECK(labeldp::test::batch_matches_single(ag, in, SeededRandom(99)));
  const std::string j1 = dg.to_json(), j2 = ag.to_json();
  for (const char* f : {"\"format\":\"labeldp-mechanism\"", "\"version\":1", "\"eps\":1",
                        "\"delta\":", "\"sensitivity\":10", "\"lo\":0", "\"hi\":10", "\"clip\":true",
                        "\"sigma\":", "\"mechanism\":\"discrete-gaussian\"", "\"resolution\":0.5"})
    CHECK_THAT(j1, Contains(f));
  for (const char* f :
       {"\"mechanism\":\"gaussian\"", "\"sensitivity\":5", "\"clip\":false", "\"sigma\":", "\"grid_step\":"})
    CHECK_THAT(j2, Contains(f));
  CHECK(j1.front() == '{');
  CHECK(j1.back() == '}');
}

namespace {
using labeldp::detail::TabledDiscreteGaussian;

// An independent oracle of a table's realized law: entry e's values (bins of 2^K values on each
// side, then the tails from S and from -(S + 1)), their exact mass Q_e summed here, so the
// realized Pr[Z = z] is W_e 2^-64 q(z) / Q_e and its ratio to the discrete Gaussian's is
// W_e Z / (2^64 Q_e) on the whole entry.
struct TableOracle {
  long double s2, Z = 0;
  std::vector<long double> ratio;  // per entry
  TableOracle(const TabledDiscreteGaussian& t, long double sigma2) : s2(sigma2) {
    const long double sigma = std::sqrt(s2);
    const std::int64_t T = t.bins(), w = std::int64_t(1) << t.low_bits(), S = T * w;
    const std::int64_t reach = std::int64_t(std::ceil(60 * sigma)) + S + 10;
    std::vector<long double> Q(std::size_t(2 * T + 2), 0);
    for (std::int64_t z = -reach; z <= reach; ++z) {
      const long double p = q(z);
      Z += p;
      Q[entry(z, T, w)] += p;
    }
    for (std::size_t e = 0; e < Q.size(); ++e)
      ratio.push_back(std::ldexp(static_cast<long double>(std::uint64_t(t.weights()[e])), -64) * Z / Q[e]);
  }
  long double q(std::int64_t z) const { return std::exp(-static_cast<long double>(z) * z / (2 * s2)); }
  static std::size_t entry(std::int64_t z, std::int64_t T, std::int64_t w) {
    const std::int64_t h = z >= 0 ? z / w : (-z - 1) / w;
    return std::size_t(h < T ? h + (z < 0 ? T : 0) : 2 * T + (z < 0 ? 1 : 0));
  }
  long double largest_error() const {
    long double r = 0;
    for (long double x : ratio) r = std::max(r, std::abs(x - 1));
    return r;
  }
};
}  // namespace

TEST_CASE("tabled discrete Gaussian: each entry within rho of the discrete Gaussian (independent sums); pmf() agrees",
          "[gaussian]") {
  // sigma from 1.4 (one-value bins, heavy rounding) to 6,300 (bins of 16 values).
  for (double s2 : {2.0, 40.0, 5000.0, 400000.0, 4.0e7}) {
    const auto exact = labeldp::detail::dyadic_sampler(s2);
    const auto t = TabledDiscreteGaussian::build(exact.m, exact.f);
    REQUIRE(t);
    labeldp::detail::u128 sum = 0;
    for (auto w : t->weights()) sum += w;
    CHECK(sum == labeldp::detail::u128(1) << 64);
    const TableOracle oracle(*t, exact.sigma2());
    INFO("sigma^2 " << exact.sigma2() << " K " << t->low_bits() << " T " << t->bins() << " rho "
                    << double(t->relative_error()) << " largest error " << double(oracle.largest_error()));
    CHECK(t->relative_error() <= std::ldexp(1.0L, -36));
    CHECK(oracle.largest_error() <= t->relative_error());
    // pmf() is the realized law: W_e q(z) / (2^64 Q_e), here from the oracle's sums.
    const std::int64_t T = t->bins(), w = std::int64_t(1) << t->low_bits();
    for (std::int64_t z : std::vector<std::int64_t>{0, 1, -1, w, -w - 1, T * w - 1, T * w, -T * w, -T * w - 1,
                                                    T * w + 5 * w, -T * w - 5 * w}) {
      const long double real = oracle.ratio[TableOracle::entry(z, T, w)] * oracle.q(z) / oracle.Z;
      CHECK(std::abs(t->pmf(z) / real - 1) < 1e-14);
    }
    // Mutant: the table of a sigma^2 larger by 1e-6 is off the discrete Gaussian by far more than its rho.
    const auto wider = labeldp::detail::dyadic_sampler(s2 * (1 + 1e-6));
    const auto tm = TabledDiscreteGaussian::build(wider.m, wider.f);
    REQUIRE(tm);
    CHECK(TableOracle(*tm, exact.sigma2()).largest_error() > 1000 * tm->relative_error());
  }
}

TEST_CASE("tabled discrete Gaussian: draws fit the discrete Gaussian, the tails too; an under-noised mutant does not",
          "[gaussian]") {
  for (double s2 : {40.0, 5000.0, 1.0e7}) {
    const auto exact = labeldp::detail::dyadic_sampler(s2), narrow = labeldp::detail::dyadic_sampler(s2 / 1.3);
    const auto t = TabledDiscreteGaussian::build(exact.m, exact.f),
               tm = TabledDiscreteGaussian::build(narrow.m, narrow.f);
    REQUIRE(t);
    REQUIRE(tm);
    const double sig2 = exact.sigma2(), sigma = std::sqrt(sig2),
                 norm = labeldp::detail::discrete_gaussian_normalizer(sig2);
    const auto pmf = [&](std::int64_t z) { return std::exp(-double(z) * double(z) / (2 * sig2)) / norm; };
    const std::int64_t width = std::max<std::int64_t>(1, std::int64_t(sigma / 8));
    const auto F = labeldp::test::cdf_from_pmf(pmf, std::int64_t(40 * sigma) + 10);
    SeededRandom g(11), gm(11);
    std::vector<std::int64_t> z(8000000), zm(z.size());
    for (auto& v : z) v = (*t)(g);
    for (auto& v : zm) v = (*tm)(gm);
    const auto edges = centred_edges(width, 96);
    const double ok = labeldp::test::chi_square_z(labeldp::test::binned_chi_square(z, edges, F));
    const double bad = labeldp::test::chi_square_z(labeldp::test::binned_chi_square(zm, edges, F));
    // The tails alone (|z| >= S of the table that drew them, about 2^-12 of the draws), against the
    // discrete Gaussian's exact conditional law there.
    auto tail_fit = [&](const std::vector<std::int64_t>& draws, const TabledDiscreteGaussian& table) {
      const std::int64_t S = table.bins() << table.low_bits();
      std::vector<std::int64_t> mags;
      for (std::int64_t v : draws)
        if (v >= S || v <= -S - 1) mags.push_back(v >= 0 ? v - S : -v - S - 1);  // offsets from each tail's start
      // Pr[offset <= x] for the two tails together, exactly.
      long double both = 0;
      for (std::int64_t x = 0; x <= std::int64_t(40 * sigma); ++x) both += pmf(S + x) + pmf(S + 1 + x);
      const auto G = [&](std::int64_t x) {
        long double c = 0;
        for (std::int64_t y = 0; y <= x; ++y) c += pmf(S + y) + pmf(S + 1 + y);
        return c / both;
      };
      std::vector<std::int64_t> e;
      for (std::int64_t k = 0; k < 12; ++k) e.push_back(std::int64_t(double(k) * sig2 / double(S) / 3));
      e.erase(std::unique(e.begin(), e.end()), e.end());
      return std::pair{mags.size(), labeldp::test::chi_square_z(labeldp::test::binned_chi_square(mags, e, G))};
    };
    const auto [n_tail, tail_ok] = tail_fit(z, *t);
    const auto [n_tail_m, tail_bad] = tail_fit(zm, *tm);
    INFO("sigma^2 " << sig2 << ": z " << ok << ", mutant z " << bad << "; tail draws " << n_tail << " z " << tail_ok
                    << ", mutant's " << n_tail_m << " z " << tail_bad);
    CHECK(ok < 6);
    CHECK(bad >= 6);
    CHECK(n_tail > 800);
    CHECK(tail_ok < 6);
    CHECK(tail_bad >= 6);
  }
}

TEST_CASE("Gaussian mechanisms: the tabled noise's delta bound covers its brute-force delta; narrow noise stays exact",
          "[gaussian]") {
  // D = 3 steps, sigma about 2-9 steps: the hockey-stick divergence of the realized law, by brute force
  // over every output and both directions of every shift 1..D.
  for (double eps : {0.5, 2.0, 6.0}) {
    const DiscreteGaussianMechanism m(0, 3, eps, 1e-3, 1, false);
    REQUIRE(m.noise().table);
    const auto& t = *m.noise().table;
    const TableOracle oracle(t, m.noise().sigma2());
    const std::int64_t T = t.bins(), w = std::int64_t(1) << t.low_bits();
    const std::int64_t R = std::int64_t(60 * std::sqrt(m.noise().sigma2())) + 10;
    auto realized = [&](const TableOracle& o, std::int64_t z) {
      return o.ratio[TableOracle::entry(z, T, w)] * o.q(z) / o.Z;
    };
    long double worst = 0;
    for (std::int64_t d : {-3, -2, -1, 1, 2, 3}) {
      long double s = 0;
      for (std::int64_t z = -R; z <= R; ++z)
        s += std::max(0.0L, realized(oracle, z) - std::exp(static_cast<long double>(eps)) * realized(oracle, z + d));
      worst = std::max(worst, s);
    }
    INFO("eps " << eps << " realized delta " << m.realized_delta() << " brute force " << double(worst));
    CHECK(double(worst) <= m.realized_delta());
    CHECK(m.realized_delta() <= 1e-3 / (1 + 1e-9));
    CHECK(m.realized_delta() >= labeldp::discrete_gaussian_delta(m.noise().sigma2(), eps, 3));
  }
  // A noise too narrow for a table (sigma 0.45 steps) keeps CKS 2020's sampler and its exact delta.
  const DiscreteGaussianMechanism narrow(0, 5000, 80, 1e-6, 1250, true);
  CHECK_FALSE(narrow.noise().table);
  CHECK(narrow.realized_delta() ==
        labeldp::discrete_gaussian_delta(narrow.noise().sigma2(), 80, narrow.grid().steps()));
}

TEST_CASE("tabled discrete Gaussian: ratio_prefix compares U' with n/d exactly, also inside the estimate's margin",
          "[gaussian]") {
  using u128 = labeldp::detail::u128;
  // n/d with d < 2^64, U' with its first nb bits v: true iff U' < n/d.
  for (int nb : {55, 63}) {
    for (auto [n, d] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
             {1, 3},
             {2, 7},
             {123456789, 1000000007},
             {1, 61},
             {(std::uint64_t(1) << 62) + 5, (std::uint64_t(1) << 63) + 11}}) {
      const u128 scaled = u128(n) << nb, w128 = scaled / d, rem = scaled % d;
      const std::uint64_t w = std::uint64_t(w128);
      const double estimate = std::ldexp(double(n) / double(d), nb);
      if (estimate >= std::ldexp(1.0, 62)) continue;  // ratio_prefix's range
      INFO("nb " << nb << " n " << n << " d " << d);
      SeededRandom g(5);
      labeldp::detail::NoiseBits<SeededRandom> bits(g);
      for (std::int64_t off : {-20000, -100, -1, 1, 100, 20000})
        CHECK(labeldp::detail::DiscreteGaussianSampler::ratio_prefix(w + std::uint64_t(off), nb, estimate, n, d,
                                                                     bits) == (off < 0));
      // v == w: true exactly when the later bits are below rem / d.
      long long hits = 0;
      const int trials = 20000;
      for (int i = 0; i < trials; ++i)
        hits += labeldp::detail::DiscreteGaussianSampler::ratio_prefix(w, nb, estimate, n, d, bits);
      const double p = double(rem) / double(d);
      CHECK(std::abs(double(hits) - trials * p) <= 6 * std::sqrt(trials * p * (1 - p)) + 1);
    }
  }
}
