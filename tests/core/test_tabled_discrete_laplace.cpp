// TabledDiscreteLaplace (core/tabled_discrete_laplace.hpp): the audited table for unclipped
// discrete Laplace noise. Oracles: a brute-force privacy check of the realized pmf over every
// pair of magnitudes at most N apart, the exact audit rejecting under-noised tables, the realized
// pmf against the ideal discrete Laplace written out independently, and goodness-of-fit of the
// sampler (with an under-noised mutant that must fail).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <labeldp/core/tabled_discrete_laplace.hpp>
#include <labeldp/mechanisms/additive_noise.hpp>
#include <vector>

#include "oracles/statistics.hpp"

using labeldp::DiscreteLaplace;
using labeldp::TabledDiscreteLaplace;
using labeldp::test::chi_square_z;

namespace {

TabledDiscreteLaplace tabled(double eps, std::int64_t n) {
  const auto d = DiscreteLaplace::for_privacy(eps, double(n));
  return TabledDiscreteLaplace(d, n, d.realized_epsilon(double(n)));
}

}  // namespace

TEST_CASE("TabledDiscreteLaplace: brute-force privacy of the realized pmf over all shifts up to N",
          "[tabled_discrete_laplace]") {
  // (N, eps): K = 0 (table only) and K = 1..2 (exact low bits), small and large eps.
  const std::vector<std::pair<std::int64_t, double>> cases = {{1, 1.0},   {3, 0.1},   {10, 8.0}, {100, 1.0},
                                                              {300, 1.0}, {300, 8.0}, {200, 0.5}};
  for (const auto& [n, eps] : cases) {
    const auto d = DiscreteLaplace::for_privacy(eps, double(n));
    const TabledDiscreteLaplace t(d, n, d.realized_epsilon(double(n)));
    INFO("N " << n << " eps " << eps << " K " << t.low_bits() << " T " << t.body());
    CHECK(t.epsilon() <= eps);
    // Over three table periods (the ratios repeat past them) plus N.
    const std::int64_t reach = 3 * (t.body() << t.low_bits()) + n;
    std::vector<long double> p(std::size_t(2 * reach + 1));
    long double total = 0;
    for (std::int64_t z = -reach; z <= reach; ++z) total += p[std::size_t(z + reach)] = t.pmf(z);
    CHECK(std::fabs(total - 1) < 1e-5);  // the mass beyond three periods is about 2^-60
    const long double bound = std::exp(static_cast<long double>(t.epsilon())) * (1 + 1e-15L);
    long double worst = 0;
    for (std::int64_t i = 0; i < std::int64_t(p.size()); ++i)
      for (std::int64_t j = i + 1; j <= std::min<std::int64_t>(i + n, std::int64_t(p.size()) - 1); ++j)
        worst = std::max({worst, p[std::size_t(i)] / p[std::size_t(j)], p[std::size_t(j)] / p[std::size_t(i)]});
    INFO("worst ratio " << double(worst) << ", e^eps " << std::exp(eps));
    CHECK(worst <= bound);
    CHECK(worst > std::exp(static_cast<long double>(eps)) * (1 - 1e-6L));  // and close to it: not over-noised
  }
}

TEST_CASE("TabledDiscreteLaplace: the exact audit rejects under-noised tables", "[tabled_discrete_laplace]") {
  for (const auto& [n, eps] : std::vector<std::pair<std::int64_t, double>>{{1, 1.0}, {300, 1.0}, {10000, 8.0}}) {
    const auto d = DiscreteLaplace::for_privacy(eps, double(n));
    const double er = d.realized_epsilon(double(n));
    INFO("N " << n << " eps " << eps);
    CHECK(TabledDiscreteLaplace::audit_passes(d, n, er, std::ldexp(1.0L, -32)));
    // A table built for a gamma 2^-20 too large, or certified against an eps 2^-20 too small, fails.
    CHECK_FALSE(TabledDiscreteLaplace::audit_passes(d, n, er, -std::ldexp(1.0L, -20)));
    CHECK_FALSE(TabledDiscreteLaplace::audit_passes(d, n, er * (1 - std::ldexp(1.0, -20)), std::ldexp(1.0L, -32)));
    // For the sensitivity N + 1 the same noise is not eps-DP: the audit sees it.
    CHECK_FALSE(TabledDiscreteLaplace::audit_passes(d, n + 1, er, std::ldexp(1.0L, -32)));
  }
}

TEST_CASE("TabledDiscreteLaplace: realized pmf within 1e-6 relative of the ideal discrete Laplace",
          "[tabled_discrete_laplace]") {
  for (const auto& [n, eps] : std::vector<std::pair<std::int64_t, double>>{{1, 1.0}, {300, 1.0}, {10000, 8.0}}) {
    const auto d = DiscreteLaplace::for_privacy(eps, double(n));
    const TabledDiscreteLaplace t(d, n, d.realized_epsilon(double(n)));
    INFO("N " << n << " eps " << eps << " delta " << t.delta());
    // Out to 20 scales (where the table's rounding is still far below the tolerance).
    const std::int64_t reach = std::int64_t(20 * d.scale());
    long double worst = 0;
    for (std::int64_t z = -reach; z <= reach; z += std::max<std::int64_t>(1, reach / 5000))
      worst = std::max(worst,
                       std::fabs(t.pmf(z) / labeldp::test::discrete_laplace_pmf(d, static_cast<long double>(z)) - 1));
    CHECK(worst < 1e-6);
  }
}

TEST_CASE("TabledDiscreteLaplace: construction limits fall back (no table)", "[tabled_discrete_laplace]") {
  // Too wide for kMaxBody entries (eps 1e-4 over one step: scale 1e4, K = 0) or too narrow for
  // 2^-64 weights across a + 2 blocks (eps 60).
  CHECK_THROWS_AS(tabled(1e-4, 1), std::invalid_argument);
  CHECK_THROWS_AS(tabled(60, 1000), std::invalid_argument);
  CHECK_NOTHROW(tabled(1.0, 1));
  // The Laplace mechanism's grid (about eps 2^32 steps) at eps 0.01 .. 8 is tabled.
  for (double eps : {0.01, 0.1, 1.0, 8.0}) {
    const labeldp::LaplaceMechanism<> m(0.0, 5000.0, eps, false);
    INFO("eps " << eps);
    REQUIRE(m.tabled_noise() != nullptr);
    CHECK(m.tabled_noise()->epsilon() <= eps);
    CHECK(m.tabled_noise()->epsilon() == m.realized_epsilon());
    CHECK(m.tabled_noise()->low_bits() > 20);
  }
}

TEST_CASE("TabledDiscreteLaplace sampler fits the discrete Laplace; an under-noised mutant does not",
          "[tabled_discrete_laplace]") {
  // Small scales (exact cells near 0), K = 2 and 7, and the Laplace mechanism's 2^32 scale.
  for (const auto& [n, eps] : std::vector<std::pair<std::int64_t, double>>{
           {1, 1.0}, {10, 8.0}, {300, 1.0}, {10000, 1.0}, {std::int64_t(2621440000), 1.0}}) {
    const auto d = DiscreteLaplace::for_privacy(eps, double(n));
    const TabledDiscreteLaplace t(d, n, d.realized_epsilon(double(n)));
    const auto md = DiscreteLaplace::for_privacy(1.1 * eps, double(n));
    const TabledDiscreteLaplace mutant(md, n, md.realized_epsilon(double(n)));
    labeldp::SeededRandom g(17), gm(17);
    std::vector<std::int64_t> z(200000), zm(z.size());
    for (auto& v : z) v = t(g);
    for (auto& v : zm) v = mutant(gm);
    const auto cdf = [&](std::int64_t x) { return d.cdf(x); };
    const auto fit = labeldp::test::binned_chi_square(z, labeldp::test::two_sided_noise_edges(d.scale()), cdf);
    const auto bad = labeldp::test::binned_chi_square(zm, labeldp::test::two_sided_noise_edges(d.scale()), cdf);
    INFO("N " << n << " eps " << eps << " K " << t.low_bits() << ": chi2 " << fit.statistic << " dof " << fit.dof
              << ", mutant chi2 " << bad.statistic);
    CHECK(chi_square_z(fit) < 6);
    CHECK(chi_square_z(bad) > 6);
  }
}

TEST_CASE("TabledDiscreteLaplace: low bits fit their truncated geometric (N = 10000, K = 9)",
          "[tabled_discrete_laplace]") {
  // |Z| mod 2^K: probability proportional to e^{-gamma l} -- checked at eps 1 over 10^4 steps
  // where gamma 2^K is near 2^-4, against the uniform (mutant: the low bits' rejection dropped).
  const auto d = DiscreteLaplace::for_privacy(1.0, 10000);
  const TabledDiscreteLaplace t(d, 10000, d.realized_epsilon(10000));
  REQUIRE(t.low_bits() == 9);
  constexpr int L = 512;
  const long double g = static_cast<long double>(d.s()) / static_cast<long double>(d.t());
  std::vector<double> p(L);
  long double sum = 0;
  for (int l = 0; l < L; ++l) sum += p[std::size_t(l)] = double(std::exp(-g * l));
  for (auto& v : p) v = double(v / sum);
  labeldp::SeededRandom gen(5);
  // Four cells of 128 low-bit values: enough power for the 5% slope across a block.
  std::vector<long long> cells(4, 0);
  const int n = 2000000;
  for (int i = 0; i < n; ++i) {
    const std::int64_t z = t(gen);
    ++cells[std::size_t(((z < 0 ? -z : z) & (L - 1)) >> 7)];
  }
  std::vector<double> pc(4, 0), uc(4, 0.25);
  for (int l = 0; l < L; ++l) pc[std::size_t(l >> 7)] += p[std::size_t(l)];
  INFO("cells " << cells[0] << " " << cells[1] << " " << cells[2] << " " << cells[3]);
  CHECK(chi_square_z(labeldp::test::chi_square(cells, pc)) < 6);
  CHECK(chi_square_z(labeldp::test::chi_square(cells, uc)) > 6);
}
