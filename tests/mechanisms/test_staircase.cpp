#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/concepts.hpp>
#include <labeldp/mechanisms/staircase.hpp>
#include <vector>

#include "oracles/scripted_random.hpp"
#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using labeldp::DiscreteStaircaseMechanism;
using labeldp::FinitePrior;
using labeldp::SeededRandom;
using labeldp::StaircaseMechanism;
using labeldp::detail::StaircaseNoise;

static_assert(labeldp::Mechanism<StaircaseMechanism>);
static_assert(labeldp::Mechanism<DiscreteStaircaseMechanism>);

namespace {

// E[X^2] of the continuous staircase by composite Simpson on every constant piece of the density
// (staircase_pdf), periods summed until their weight is below 1e-20.
double numeric_variance(double eps, double gamma, double D, double* mass) {
  double v = 0, m = 0;
  auto piece = [&](double x0, double x1) {
    const int n = 64;
    const double h = (x1 - x0) / n;
    double s = 0, s0 = 0;
    for (int i = 0; i <= n; ++i) {
      const double x = x0 + i * h, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
      const double f = labeldp::staircase_pdf(std::nextafter(x, x0 + (x1 - x0) / 2), eps, gamma, D);
      s += w * x * x * f;
      s0 += w * f;
    }
    v += 2 * s * h / 3;
    m += 2 * s0 * h / 3;
  };
  for (int k = 0; std::exp(-eps * k) > 1e-20; ++k) {
    piece(k * D, k * D + gamma * D);
    piece(k * D + gamma * D, (k + 1) * D);
  }
  *mass = m;
  return v;
}

// Brute-force variance of the ideal discrete staircase (Ghazi et al. 2023, Def. 24).
double brute_discrete_variance(double eps, std::int64_t D, std::int64_t r) {
  const double b = std::exp(-eps), a = (1 - b) / (2 * double(r) + 2 * b * double(D - r) - (1 - b));
  double v = 0, mass = a;
  for (std::int64_t i = 1; std::pow(b, double(i / D)) > 1e-22; ++i) {
    const double p = a * std::pow(b, double(i / D)) * (i % D < r ? 1 : b);
    v += 2 * double(i) * double(i) * p;
    mass += 2 * p;
  }
  CHECK(mass == Approx(1).epsilon(1e-12));
  return v;
}

// P(Z <= x) of the realized staircase noise, x in grid steps (closed form from its tails).
auto noise_cdf(const StaircaseNoise& n) {
  const double norm = 2 - n.q(0);
  return [&n, norm](double x) {
    const std::int64_t z = std::int64_t(std::floor(x));
    return z >= 0 ? 1 - n.tail(z + 1) / norm : n.tail(-z) / norm;
  };
}

}  // namespace

TEST_CASE("staircase: Geng-Viswanath's gamma minimizes the numerically integrated variance", "[staircase]") {
  for (double eps : {0.1, 0.5, 1.0, 2.0, 5.0, 10.0}) {
    INFO("eps " << eps);
    const double gstar = labeldp::staircase_optimal_gamma(eps);
    double mass = 0;
    const double at = numeric_variance(eps, gstar, 1.0, &mass);
    CHECK(mass == Approx(1).epsilon(1e-12));
    CHECK(labeldp::staircase_variance(eps, gstar, 1.0) == Approx(at).epsilon(1e-10));
    CHECK(labeldp::staircase_variance(eps, 0.3, 2.5) == Approx(numeric_variance(eps, 0.3, 2.5, &mass)).epsilon(1e-10));
    // Golden-section minimization of the numerically integrated variance.
    double lo = 1e-9, hi = 1 - 1e-9;
    const double phi = (std::sqrt(5.0) - 1) / 2;
    while (hi - lo > 1e-9) {
      const double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
      if (numeric_variance(eps, x1, 1.0, &mass) < numeric_variance(eps, x2, 1.0, &mass))
        hi = x2;
      else
        lo = x1;
    }
    INFO("numeric argmin " << (lo + hi) / 2 << " closed form " << gstar);
    CHECK(std::abs((lo + hi) / 2 - gstar) < 1e-5);
    CHECK(at <= numeric_variance(eps, (lo + hi) / 2, 1.0, &mass) * (1 + 1e-12));
  }
}

TEST_CASE("discrete staircase: closed-form variance and optimal r match brute force", "[staircase]") {
  for (double eps : {0.1, 1.0, 4.0})
    for (std::int64_t D : {1, 2, 7, 50, 333}) {
      std::int64_t best = 1;
      for (std::int64_t r = 1; r <= D; ++r) {
        const double v = labeldp::detail::discrete_staircase_variance(eps, D, r);
        if (r <= 8 || r % 37 == 0) {
          INFO("eps " << eps << " D " << D << " r " << r);
          CHECK(v == Approx(brute_discrete_variance(eps, D, r)).epsilon(1e-10));
        }
        if (v < labeldp::detail::discrete_staircase_variance(eps, D, best)) best = r;
      }
      INFO("eps " << eps << " D " << D);
      CHECK(labeldp::detail::optimal_staircase_r(eps, D) == best);
    }
  // The ternary search for large D against an exhaustive scan.
  for (double eps : {0.3, 2.0}) {
    const std::int64_t D = 100000;
    std::int64_t best = 1;
    for (std::int64_t r = 1; r <= D; ++r)
      if (labeldp::detail::discrete_staircase_variance(eps, D, r) <
          labeldp::detail::discrete_staircase_variance(eps, D, best))
        best = r;
    CHECK(labeldp::detail::optimal_staircase_r(eps, D) == best);
  }
}

TEST_CASE("realized staircase noise: normalized, monotone, eps-DP by brute-force ratio audit", "[staircase]") {
  for (double eps : {0.01, 0.05, 0.7, 3.0, 30.0})
    for (auto [D, r] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {5, 2}, {5, 5}, {40, 17}, {40, 1}}) {
      const StaircaseNoise n(eps, D, r);
      INFO("eps " << eps << " D " << D << " r " << r);
      CHECK(n.realized_eps() <= eps);
      double mass = n.pmf(0), v = 0;
      const std::int64_t K = std::int64_t(std::ceil(60 / eps)) * D + D;
      for (std::int64_t z = 1; z <= K; ++z) {
        mass += 2 * n.pmf(z);
        v += 2 * double(z) * double(z) * n.pmf(z);
        CHECK(n.pmf(z) <= n.pmf(z - 1));
        CHECK(n.pmf(z) == n.pmf(-z));
      }
      CHECK(mass == Approx(1).epsilon(1e-12));
      CHECK(n.second_moment() == Approx(v).epsilon(1e-10));
      double worst = 0;
      for (std::int64_t z = -3 * D; z <= 3 * D; ++z)
        for (std::int64_t d = 1; d <= D; ++d)
          if (n.pmf(z + d) > 0) worst = std::max({worst, n.pmf(z) / n.pmf(z + d), n.pmf(z + d) / n.pmf(z)});
      CHECK(std::log(worst) <= eps * (1 + 1e-12));
    }
}

TEST_CASE("tabled staircase periods: realized pmf eps-DP by brute force; the table audit rejects less noise",
          "[staircase]") {
  for (double eps : {0.01, 0.7, 3.0, 20.0})
    for (auto [D, r] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {5, 2}, {40, 17}, {40, 1}}) {
      const StaircaseNoise n(eps, D, r);
      INFO("eps " << eps << " D " << D << " r " << r);
      REQUIRE(n.period_table() != nullptr);
      // Over the table's body and three periods past its tail (the ratios repeat beyond).
      const std::int64_t K = (n.period_table()->body() + 3) * D;
      long double mass = n.realized_pmf(0), worst = 0;
      for (std::int64_t z = 1; z <= K; ++z) {
        mass += 2 * n.realized_pmf(z);
        // Non-increasing but at a period's start, where b' / b (1 + eps delta) may lift it.
        CHECK(n.realized_pmf(z) <= n.realized_pmf(z - 1) * (1 + 1e-8L));
        CHECK(std::fabs(n.realized_pmf(z) / static_cast<long double>(n.pmf(z)) - 1) < 1e-6);
      }
      CHECK(std::fabs(mass - 1) < 3e-6);  // what is left: the tail's 2^-20 on each side
      for (std::int64_t z = -K; z <= K; ++z)
        for (std::int64_t d = 1; d <= D; ++d)
          worst =
              std::max({worst, n.realized_pmf(z) / n.realized_pmf(z + d), n.realized_pmf(z + d) / n.realized_pmf(z)});
      CHECK(std::log(worst) <= eps * (1 + 1e-12));
      CHECK(std::log(worst) >= eps * (1 - 1e-6));  // and not over-noised
    }
  // The audit itself (TabledGeometric::ratio_within against e^-eps): passes for the table built
  // with a ratio 2^-24 wider (2^-32 is within the weights' rounding at eps 0.01: the staircase
  // then takes the next delta), fails for one 2^-20 narrower than e^-eps.
  for (double eps : {0.01, 1.0, 8.0}) {
    const auto bound = labeldp::detail::exp_upper_bound(false, 0, 0, eps);
    labeldp::detail::TabledGeometric wide, narrow;
    REQUIRE(wide.build(eps * (1 - std::ldexp(1.0L, -24)), 2, 1 << 14));
    REQUIRE(narrow.build(eps * (1 + std::ldexp(1.0L, -20)), 2, 1 << 14));
    INFO("eps " << eps);
    CHECK(wide.non_increasing());
    CHECK(wide.ratio_within(bound, 1));
    CHECK_FALSE(narrow.ratio_within(bound, 1));
  }
  // Outside the table's range the exact sampler stays.
  CHECK(StaircaseNoise(1e-4, 5, 2).period_table() == nullptr);
  CHECK(StaircaseNoise(30, 5, 2).period_table() == nullptr);  // e^-30 2^64 < 2^32: too coarse a table
}

TEST_CASE("staircase plateau and offset from one word: exact coin, tie and rejection paths word by word",
          "[staircase]") {
  using labeldp::detail::PlateauOffsets;
  using labeldp::test::ScriptedRandom;
  SECTION("offsets: Lemire's 32-bit multiply, a fresh 64-bit draw on rejection or above 2^32") {
    const PlateauOffsets three(3);  // 2^32 mod 3 = 1: products whose low half is 0 are rejected
    ScriptedRandom none;
    CHECK(three(1, none) == 0);
    CHECK(three(0xffffffffu, none) == 2);
    CHECK(none.next == 0);
    ScriptedRandom one{{~std::uint64_t(0)}}, same{{~std::uint64_t(0)}};
    CHECK(three(0, one) == labeldp::uniform_below(3, same));
    CHECK(one.exhausted());
    const std::int64_t wide = (std::int64_t(1) << 32) + 2;
    const std::uint64_t word = (std::uint64_t(1) << 63) + 12345;  // accepted: 2^64 mod n = 4
    ScriptedRandom w1{{word}}, w2{{word}};
    CHECK(PlateauOffsets(wide)(7, w1) == labeldp::uniform_below(std::uint64_t(wide), w2));
    CHECK(w1.exhausted());
  }
  SECTION("offsets are uniform where a quarter of the words is rejected; without rejection they are not") {
    // n = 3 2^30: 2^32 mod n = 2^30, so a quarter of the 32-bit inputs is rejected; kept
    // unconditionally, the outputs divisible by 3 would get two inputs each (probability 1/2).
    const std::uint64_t n = std::uint64_t(3) << 30;
    const PlateauOffsets offsets{std::int64_t(n)};
    SeededRandom g(17);
    std::vector<long long> fair(3, 0), mutant(3, 0);
    for (int i = 0; i < 60000; ++i) {
      const auto bits = std::uint32_t(g());
      const std::uint64_t v = offsets(bits, g);
      REQUIRE(v < n);
      ++fair[v % 3];
      ++mutant[((std::uint64_t(bits) * n) >> 32) % 3];
    }
    const std::vector<double> thirds(3, 1.0 / 3);
    CHECK(labeldp::test::chi_square(fair, thirds).p_value > 1e-4);
    CHECK(labeldp::test::chi_square(mutant, thirds).p_value < 1e-12);
  }
  SECTION("the plateau coin: high 32 bits against pB 2^32, a tie settled by one more word") {
    const StaircaseNoise noise(1.0, 5, 2);
    REQUIRE(noise.period_table() != nullptr);
    const double scaled = std::ldexp(noise.plateau2_probability(), 32);
    const std::uint64_t high = std::uint64_t(scaled);
    REQUIRE(scaled - double(high) > 0);  // a tie can go either way
    const std::uint64_t period_word = 0x0123456789abcdefull;
    ScriptedRandom p{{period_word}};
    const auto k = std::int64_t((*noise.period_table())(p));
    REQUIRE(p.exhausted());  // the period: one word
    // Offset bits 6: on the lower plateau (width 2) 6 * 4 / 2^32 -> 0: offset 0, sign +, so k 5;
    // on the upper plateau (width 3) also 0: k 5 + 2. The bits sit below the coin's.
    auto draw = [&](std::uint64_t coin_high, std::vector<std::uint64_t> more) {
      ScriptedRandom g{{period_word, (coin_high << 32) | 6}};
      g.words.insert(g.words.end(), more.begin(), more.end());
      const auto z = noise(g);
      CHECK(g.exhausted());
      return z;
    };
    CHECK(draw(high - 1, {}) == 5 * k + 2);           // below pB 2^32: upper plateau
    CHECK(draw(high + 1, {}) == 5 * k);               // above: lower plateau
    CHECK(draw(high, {0}) == 5 * k + 2);              // tie, then a coin word below the fraction: upper
    CHECK(draw(high, {~std::uint64_t(0)}) == 5 * k);  // tie, then one above it: lower
  }
}

TEST_CASE("staircase sampling is O(1) at the extremes of eps", "[staircase]") {
  SeededRandom gen(5);
  for (double eps : {1e-6, 1e-3, 700.0}) {
    const DiscreteStaircaseMechanism m(0, 10, eps, 1, false);
    const StaircaseMechanism c(0, 10, eps, true);
    double s = 0;
    for (int i = 0; i < 2000; ++i) s += m.sample(5, gen) + c.sample(5, gen);
    INFO("eps " << eps);
    CHECK(std::isfinite(s));
    CHECK(std::isfinite(m.noise().second_moment()));
    CHECK(m.noise().realized_eps() <= eps * (1 + 1e-15));
  }
}

TEST_CASE("staircase mechanisms: lattice and parameters", "[staircase]") {
  const StaircaseMechanism st(-3, 7, 1.0, false);
  CHECK(st.period() == st.grid().steps());
  CHECK(st.period() >= (1 << 20));
  CHECK(st.period() < (1 << 21));
  CHECK(std::exp2(std::round(std::log2(st.grid_step()))) == st.grid_step());
  CHECK(std::abs(double(st.r()) / double(st.period()) - st.gamma()) <= 1.0 / double(st.period()));
  CHECK(st.grid().index(7) - st.grid().index(-3) == st.period());
  const DiscreteStaircaseMechanism ds(0, 100, 0.5, 2, true);
  CHECK(ds.noise().period() == 50);
  CHECK(ds.r() == labeldp::detail::optimal_staircase_r(0.5, 50));
  CHECK(ds.gamma() == double(ds.r()) / 50);
}

TEST_CASE("staircase losses: closed forms match brute-force sums over the outputs", "[staircase]") {
  const auto prior = FinitePrior<>::from_weights({-4.0, 0.0, 0.3, 2.6, 5.0, 9.75, 10.0, 13.0},
                                                 {0.1, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1});
  for (double eps : {0.2, 1.0, 6.0})
    for (bool clip : {false, true}) {
      const DiscreteStaircaseMechanism m(0, 10, eps, 0.5, clip);
      const auto& grid = m.grid();
      const std::int64_t K = std::int64_t(std::ceil(80 / eps)) * grid.steps() + grid.steps();
      double brute = 0;
      for (labeldp::Index i = 0; i < prior.size(); ++i) {
        const double y = prior.value(i);
        const std::int64_t c = grid.index(y);
        double s = 0;
        for (std::int64_t z = -K; z <= K; ++z) s += m.noise().pmf(z) * std::pow(grid.output(c + z, clip) - y, 2);
        brute += prior.probability(i) * s;
      }
      INFO("eps " << eps << " clip " << clip);
      CHECK(m.expected_loss(prior) == Approx(brute).epsilon(1e-10));
    }
}

TEST_CASE("staircase loss is exact when lo + N R misses hi by a rounding (the top point is hi)", "[staircase]") {
  // R = 0.1 (1 + 9e-10) divides [0, 1] into 10 steps within the 1e-9 tolerance; lo + 10 R = 1 + 9e-10.
  const double R = 0.1 * (1 + 9e-10);
  const DiscreteStaircaseMechanism m(0, 1, 1.0, R, false);
  REQUIRE(m.grid().steps() == 10);
  REQUIRE(m.grid().value(10) == 1.0);
  const std::int64_t K = 200 * 10;
  for (double y : {0.6, 1.3, 2.0}) {
    const std::int64_t c = m.grid().index(y);
    long double brute = 0, uniform = 0;  // outputs as sampled; outputs lo + R j at every j
    for (std::int64_t z = -K; z <= K; ++z) {
      const long double p = m.noise().pmf(z), e = m.grid().output(c + z, false) - y, u = R * double(c + z) - y;
      brute += p * e * e;
      uniform += p * u * u;
    }
    INFO("y " << y << " exact " << m.conditional_loss(y) << " brute " << double(brute));
    CHECK(m.conditional_loss(y) == Approx(double(brute)).epsilon(1e-13));
    // A loss without the top-point correction (uniform) would fail the check above.
    CHECK(std::abs(double(uniform - brute)) > 1e-12 * double(brute));
  }
}

TEST_CASE("staircase mechanisms reject each bad parameter", "[staircase]") {
  CHECK_THROWS_WITH(StaircaseMechanism(0, 1, 0, true), "'eps' must be finite and positive, got 0");
  CHECK_THROWS_WITH(StaircaseMechanism(0, 1, -1, true), "'eps' must be finite and positive, got -1");
  CHECK_THROWS_WITH(StaircaseMechanism(0, 1, INFINITY, true), "'eps' must be finite and positive, got inf");
  CHECK_THROWS_WITH(StaircaseMechanism(0, 1, 800, true),
                    "'eps' must be in [1e-06, 700] for the staircase mechanism, got 800");
  CHECK_THROWS_WITH(DiscreteStaircaseMechanism(0, 1, 1e-7, 0.5, true),
                    "'eps' must be in [1e-06, 700] for the staircase mechanism, got 9.9999999999999995e-08");
  CHECK_THROWS_WITH(StaircaseMechanism(1, 0, 1, true), "'lo' must be below 'hi', got lo = 1, hi = 0");
  CHECK_THROWS_WITH(StaircaseMechanism(std::nan(""), 1, 1, true), Contains("'lo' must be finite"));
  CHECK_THROWS_WITH(DiscreteStaircaseMechanism(0, 1, 1, 0.3, true),
                    "'resolution' must divide hi - lo into 1 to 2^31 steps, got 0.29999999999999999 for [0, 1]");
  CHECK_THROWS_WITH(DiscreteStaircaseMechanism(0, 1, 1, -2, true), "'resolution' must be finite and positive, got -2");
  CHECK_THROWS_WITH(DiscreteStaircaseMechanism(0, 1, std::nan(""), 0.5, true), Contains("'eps' must be finite"));
  SeededRandom gen(1);
  CHECK_THROWS_WITH(DiscreteStaircaseMechanism(0, 1, 1, 0.5, true).sample(INFINITY, gen),
                    Contains("'label' must be finite"));
}

TEST_CASE("discrete staircase sampler fits its exact pmf; an under-noised mutant does not",
          "[.][statistical][staircase]") {
  for (double eps : {0.05, 0.5, 2.0}) {
    const DiscreteStaircaseMechanism m(0, 10, eps, 1, false), mutant(0, 10, 2 * eps, 1, false);
    // One cell per integer in (-K, K), and the two tails.
    const std::int64_t K = std::int64_t(std::ceil(40 / eps)) * 10;
    std::vector<std::int64_t> edges;
    for (std::int64_t e = -K; e < K; ++e) edges.push_back(e);
    const auto [a, b] = labeldp::test::grid_noise_draws(m, mutant, 4.0, 200000, SeededRandom(31));
    const double za = labeldp::test::chi_square_z(labeldp::test::binned_chi_square(a, edges, noise_cdf(m.noise())));
    const double zb = labeldp::test::chi_square_z(labeldp::test::binned_chi_square(b, edges, noise_cdf(m.noise())));
    INFO("eps " << eps << " z " << za << " mutant z " << zb);
    CHECK(za < 6);
    CHECK(zb >= 6);
  }
}

TEST_CASE("staircase sampler fits its exact lattice CDF (KS); an under-noised mutant does not",
          "[.][statistical][staircase]") {
  for (double eps : {0.5, 3.0}) {
    const StaircaseMechanism m(0, 1, eps, false), mutant(0, 1, 2 * eps, false);
    const auto F = noise_cdf(m.noise());
    const auto [a, b] = labeldp::test::grid_noise_draws(m, mutant, 0.25, 100000, SeededRandom(8));
    const auto ks = labeldp::test::kolmogorov_smirnov(a, F), ks_mut = labeldp::test::kolmogorov_smirnov(b, F);
    INFO("eps " << eps << " KS p " << ks.p_value << " mutant KS p " << ks_mut.p_value);
    CHECK(ks.p_value > 1e-6);
    CHECK(ks_mut.p_value < 1e-6);
  }
}

TEST_CASE("staircase expected losses match Monte Carlo", "[.][statistical][staircase]") {
  const auto prior = FinitePrior<>::from_weights({-2.0, 0.0, 3.3, 7.0, 10.0, 12.5}, {0.1, 0.2, 0.2, 0.2, 0.2, 0.1});
  for (bool clip : {false, true})
    for (double eps : {0.5, 2.0}) {
      const StaircaseMechanism st(0, 10, eps, clip);
      const DiscreteStaircaseMechanism ds(0, 10, eps, 0.5, clip);
      const auto [mc1, se1] = labeldp::test::monte_carlo_loss(st, prior, 40000, SeededRandom(3));
      const auto [mc2, se2] = labeldp::test::monte_carlo_loss(ds, prior, 40000, SeededRandom(4));
      INFO("clip " << clip << " eps " << eps << " staircase " << st.expected_loss(prior) << " MC " << mc1 << " +- "
                   << se1 << "; discrete " << ds.expected_loss(prior) << " MC " << mc2 << " +- " << se2);
      CHECK(std::abs(mc1 - st.expected_loss(prior)) <= 6 * se1);
      CHECK(std::abs(mc2 - ds.expected_loss(prior)) <= 6 * se2);
      if (!clip)  // the lattice loss is the ideal staircase variance up to the lattice (2^-20 relative)
        CHECK(st.expected_loss(FinitePrior<>::from_weights({5.0}, {1.0})) ==
              Approx(labeldp::staircase_variance(eps, st.gamma(), 10.0)).epsilon(1e-5));
    }
}

TEST_CASE("staircase mechanisms: batch sampling equals single calls; mechanism files", "[staircase]") {
  const StaircaseMechanism st(-1, 4, 1.5, true);
  const DiscreteStaircaseMechanism ds(0, 10, 0.8, 0.25, false);
  std::vector<double> in;
  for (int i = 0; i < 500; ++i) in.push_back(-2 + 0.031 * i);
  CHECK(labeldp::test::batch_matches_single(st, in, SeededRandom(99)));
  CHECK(labeldp::test::batch_matches_single(ds, in, SeededRandom(99)));
  const std::string j1 = st.to_json(), j2 = ds.to_json();
  for (const char* f : {"\"format\":\"labeldp-mechanism\"", "\"version\":1", "\"mechanism\":\"staircase\"",
                        "\"eps\":1.5", "\"delta\":0", "\"sensitivity\":5", "\"lo\":-1", "\"hi\":4", "\"clip\":true",
                        "\"gamma\":", "\"r\":", "\"grid_step\":"})
    CHECK_THAT(j1, Contains(f));
  for (const char* f :
       {"\"mechanism\":\"discrete-staircase\"", "\"clip\":false", "\"gamma\":", "\"r\":", "\"resolution\":0.25"})
    CHECK_THAT(j2, Contains(f));
}
