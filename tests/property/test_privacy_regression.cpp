// Privacy regression suite (issue 13): for every mechanism type, the real mechanism passes and
// under-noised mutants are caught.
// - Finite mechanisms, by the exact audit (find_epsilon_violation / satisfies_epsilon on the
//   stored numbers, realized_satisfies_epsilon on the sampler's integer table): the mechanism
//   built with eps doubled; its matrix with one entry moved the smallest double past
//   e^eps times its column's minimum (stored numbers) or 2^-40 relative past it (sampler table).
// - Samplers of infinitely many outputs and every sampler's draws, by goodness of fit against
//   the exact distribution of the real mechanism (chi-square z >= 6 for discrete outcomes, KS
//   p < 1e-6 for the lattice-continuous ones; the real one z < 6 and p > 1e-6): the mechanism
//   built with eps doubled (its noise scale about halved). Tagged [statistical].
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <labeldp/core/alias_table.hpp>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/histogram_prior.hpp>
#include <labeldp/core/label_grid.hpp>
#include <labeldp/mechanisms/additive_noise.hpp>
#include <labeldp/mechanisms/gaussian.hpp>
#include <labeldp/mechanisms/optimal_lp.hpp>
#include <labeldp/mechanisms/randomized_response.hpp>
#include <labeldp/mechanisms/rpwithprior.hpp>
#include <labeldp/mechanisms/rr_on_bins.hpp>
#include <labeldp/mechanisms/staircase.hpp>
#include <labeldp/mechanisms/unbiased.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "oracles/statistics.hpp"

using namespace labeldp;

namespace {

// Priors of the four shapes the solver tests sweep (oracles/prior_shapes.hpp), k = 9.
std::vector<std::pair<std::string, FinitePrior<double>>> regression_priors() {
  const std::vector<double> v{0, 1, 2, 3.5, 4, 6, 7.25, 9, 10};
  return {
      {"near-uniform", FinitePrior<double>::from_weights(v, {1, 1.02, 0.99, 1.01, 1, 0.98, 1.03, 1, 0.97})},
      {"spiky", FinitePrior<double>::from_weights(v, {0.1, 0.2, 50, 0.3, 0.1, 0.2, 0.1, 0.4, 0.2})},
      {"heavy-tailed", FinitePrior<double>::from_weights(v, {1, 0.5, 0.33, 0.25, 0.2, 0.17, 0.14, 0.12, 0.11})},
      {"with-zeros", FinitePrior<double>::from_weights(v, {0, 1, 0, 2, 1, 0, 3, 1, 0})},
  };
}

/// A finite mechanism type: its name and how it is built at a given eps for a prior.
struct FiniteFamily {
  std::string name;
  std::function<FiniteMechanism<double>(const FinitePrior<double>&, double)> build;
  /// The under-noised mutant is built at this multiple of eps (2, except where the mechanism's
  /// analysis is loose by a factor 2: the exponential mechanism at 2 eps is still eps-DP).
  double mutant_factor = 2;
};

template <typename R>
FiniteMechanism<double> solved(const R& r) {
  if (r.mechanism.num_inputs() == 0) throw std::runtime_error("the solve returned no mechanism");
  return r.mechanism;
}

std::vector<FiniteFamily> finite_families() {
  const Vector<double> lp_outputs = Vector<double>::LinSpaced(41, -1.0, 11.0);
  return {
      {"rr-on-bins", [](const FinitePrior<double>& p, double eps) { return optimal_rr_on_bins(p, eps).mechanism(); }},
      {"optimal-lp", [lp_outputs](const FinitePrior<double>& p,
                                  double eps) { return solved(optimal_mechanism_lp(p, eps, lp_outputs)); }},
      {"unbiased-grid",
       [](const FinitePrior<double>& p, double eps) { return solved(optimal_unbiased_grid(p, eps, 64)); }},
      {"bias-bounded-grid",
       [](const FinitePrior<double>& p, double eps) {
         UnbiasedOptions o;
         o.max_bias = 0.5;
         return solved(optimal_unbiased_grid(p, eps, 64, o));
       }},
      {"continuous-unbiased",
       [](const FinitePrior<double>& p, double eps) { return solved(optimal_unbiased_continuous(p, eps)); }},
      {"continuous-bias-bounded",
       [](const FinitePrior<double>& p, double eps) {
         UnbiasedOptions o;
         o.max_bias = 0.5;
         return solved(optimal_unbiased_continuous(p, eps, o));
       }},
      {"randomized-response",
       [](const FinitePrior<double>& p, double eps) { return randomized_response(p.values(), eps); }},
      {"rr-with-prior", [](const FinitePrior<double>& p, double eps) { return rr_with_prior(p, eps); }},
      {"dbrr", [](const FinitePrior<double>& p, double eps) { return debiased_randomized_response(p.values(), eps); }},
      {"discrete-laplace",
       [](const FinitePrior<double>&, double eps) {
         return DiscreteLaplaceMechanism<double>(LabelGrid<double>(0, 10, 0.5), eps, true).finite();
       }},
      {"exponential",
       [](const FinitePrior<double>&, double eps) {
         return ExponentialMechanism<double>(LabelGrid<double>(0, 10, 0.5), eps).finite();
       },
       4},
  };
}

/// The matrix with one entry of column j raised to the smallest double above e^eps times the
/// column's minimum (so the ratio exceeds e^eps by at most one ulp of that entry).
Matrix<double> one_ulp_past(const Matrix<double>& P, double eps, Index& column) {
  Matrix<double> Q = P;
  for (Index j = 0; j < P.cols(); ++j) {
    Index lo_i = 0, hi_i = 0;
    for (Index i = 1; i < P.rows(); ++i) {
      if (P(i, j) < P(lo_i, j)) lo_i = i;
      if (P(i, j) > P(hi_i, j)) hi_i = i;
    }
    if (!(P(lo_i, j) > 0)) continue;
    if (lo_i == hi_i) hi_i = lo_i == 0 ? 1 : 0;  // a constant column: raise another row's entry
    const long double bound = (long double)P(lo_i, j) * std::exp((long double)eps);
    double x = double(bound);
    while ((long double)x <= bound * (1 + std::ldexp(1.0L, -63))) x = std::nextafter(x, INFINITY);
    Q(hi_i, j) = x;  // one ulp or so above the bound: still a valid probability row (sum within 1e-9)
    column = j;
    return Q;
  }
  throw std::runtime_error("no column with a positive minimum");
}

/// The matrix with one column's smallest entry lowered to 2^-40 relative below its largest over
/// e^eps, the row kept summing to 1 by giving the difference to the row's largest entry
/// elsewhere. The column is the one with the largest positive minimum: the sampler's table
/// holds each entry in units of 2^-64, so a 2^-40 relative step is only there to be caught in an
/// entry above about 2^-24 (a bias-bounded mechanism's first column can hold entries of 1e-12,
/// whose step is below one unit).
Matrix<double> relative_step_past(const Matrix<double>& P, double eps) {
  Matrix<double> Q = P;
  std::vector<Index> order(std::size_t(P.cols()));
  std::iota(order.begin(), order.end(), Index(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](Index a, Index b) { return P.col(a).minCoeff() > P.col(b).minCoeff(); });
  for (const Index j : order) {
    Index lo_i = 0, hi_i = 0;
    for (Index i = 1; i < P.rows(); ++i) {
      if (P(i, j) < P(lo_i, j)) lo_i = i;
      if (P(i, j) > P(hi_i, j)) hi_i = i;
    }
    if (!(P(lo_i, j) > 0)) continue;
    if (lo_i == hi_i) lo_i = hi_i == 0 ? 1 : 0;
    const double lowered = double((long double)P(hi_i, j) / std::exp((long double)eps) * (1 - std::ldexp(1.0L, -40)));
    Index other = -1;
    for (Index c = 0; c < P.cols(); ++c)
      if (c != j && (other < 0 || P(lo_i, c) > P(lo_i, other))) other = c;
    if (other < 0 || !(lowered > 0)) continue;
    Q(lo_i, other) += P(lo_i, j) - lowered;
    Q(lo_i, j) = lowered;
    return Q;
  }
  throw std::runtime_error("no column to perturb");
}

}  // namespace

TEST_CASE("privacy regression: finite mechanisms pass the exact audit, their under-noised mutants do not",
          "[property][privacy_regression]") {
  for (const auto& family : finite_families()) {
    int doubled_caught = 0, ulp_caught = 0, step_caught = 0, same = 0;
    for (const auto& [shape, prior] : regression_priors())
      for (double eps : {0.1, 1.0, 4.0}) {
        INFO(family.name << ", " << shape << " prior, eps " << eps);
        const FiniteMechanism<double> real = family.build(prior, eps);
        CHECK(satisfies_epsilon(real.probabilities(), eps));
        CHECK(realized_satisfies_epsilon(real, eps));
        // Mutant 1: built with eps doubled (unless that builds the same mechanism: e.g. one
        // output, a constant column, is optimal at both).
        const FiniteMechanism<double> doubled = family.build(prior, family.mutant_factor * eps);
        if (doubled.outputs() == real.outputs() && doubled.probabilities() == real.probabilities()) {
          ++same;
        } else {
          CHECK_FALSE(satisfies_epsilon(doubled.probabilities(), eps));
          CHECK_FALSE(realized_satisfies_epsilon(doubled, eps));
          doubled_caught +=
              !satisfies_epsilon(doubled.probabilities(), eps) && !realized_satisfies_epsilon(doubled, eps);
        }
        if (real.num_outputs() < 2) continue;  // one output: every column constant, nothing to push
        // Mutant 2: one entry the smallest step past e^eps in the stored numbers.
        Index column = -1;
        const Matrix<double> ulp = one_ulp_past(real.probabilities(), eps, column);
        const EpsilonViolation v = find_epsilon_violation(ulp, eps);
        CHECK(v.column == column);
        ulp_caught += v.column == column;
        // Mutant 3: one entry 2^-40 relative past e^eps, sampled: the sampler's table is caught.
        const FiniteMechanism<double> stepped(real.inputs(), real.outputs(),
                                              relative_step_past(real.probabilities(), eps));
        CHECK_FALSE(satisfies_epsilon(stepped.probabilities(), eps));
        CHECK_FALSE(realized_satisfies_epsilon(stepped, eps));
        step_caught += !realized_satisfies_epsilon(stepped, eps);
      }
    // Every family has mutants of each kind, and all of them are caught (asserted above).
    INFO(family.name);
    CHECK(doubled_caught > 0);
    CHECK(ulp_caught > 0);
    CHECK(step_caught > 0);
    std::printf(
        "[privacy regression] %-24s mutants caught: eps multiplied %2d (%d identical to the real one), one ulp %2d, "
        "2^-40 step %2d\n",
        family.name.c_str(), doubled_caught, same, ulp_caught, step_caught);
  }
}

TEST_CASE("privacy regression: RR-on-Bins' sampler weights, real and with eps doubled",
          "[property][privacy_regression]") {
  for (Index d : {2, 3, 17, 1000})
    for (double eps : {1e-3, 0.1, 1.0, 8.0, 40.0}) {
      INFO("d " << d << " eps " << eps);
      const long double e = std::exp((long double)eps);
      const auto [w0, w1] = CyclicRandomizedResponse(d, eps).weights();
      CHECK((long double)w0 <= (long double)w1 * e);
      const auto [m0, m1] = CyclicRandomizedResponse(d, 2 * eps).weights();
      CHECK_FALSE((long double)m0 <= (long double)m1 * e);
    }
}

TEST_CASE("privacy regression: RPWithPrior's sampled guarantee, real and with eps doubled",
          "[property][privacy_regression]") {
  const auto hist = HistogramPrior<double>::from_masses({0, 1, 2, 3, 4, 5}, {1, 3, 8, 3, 1});
  for (double eps : {0.1, 1.0, 4.0})
    for (OutsideRule rule : {OutsideRule::Clamp, OutsideRule::Uniform}) {
      INFO("eps " << eps << " rule " << int(rule));
      const auto real = RPWithPrior<double>::optimal(hist, eps, 0.4, 0.05, rule);
      const RPWithPrior<double> mutant(real.a1(), real.a2(), real.zeta(), 2 * eps, real.granularity(), rule);
      CHECK(real.discretized_epsilon() <= eps);
      CHECK(real.realized_epsilon_bound() <= eps);
      CHECK(mutant.discretized_epsilon() > eps);
      // The exact audit of the sampled rows at the labels 0..5: the mutant's exceed e^eps.
      const std::vector<double> labels{0, 1, 2, 3, 4, 5};
      CHECK_FALSE(satisfies_epsilon(mutant.finite_mechanism(labels).probabilities(), eps));
    }
}

TEST_CASE("dbRR is eps-DP exactly as stored and sampled, at every eps (regression)", "[property][privacy_regression]") {
  // Found by the property tests (seeds in the dbrr family, e.g. k = 2, eps 0.5): the two rounded
  // quotients e^eps / (e^eps + k - 1) and 1 / (e^eps + k - 1) were stored uncapped, e^eps apart
  // plus roundoff (refused by the exact audit), and eps above 709 gave NaN probabilities.
  Vector<double> labels(4);
  labels << -3, 0, 0.5, 1000;
  for (double eps : {1e-6, 0.01, 0.5, 1.0, 2.0, 7.25, 30.0, 700.0, 710.0, 1e4}) {
    INFO("eps " << eps);
    for (Index k : {2, 3, 4}) {
      const FiniteMechanism<double> m = debiased_randomized_response(Vector<double>(labels.head(k)), eps);
      CHECK(satisfies_epsilon(m.probabilities(), eps));
      CHECK(realized_satisfies_epsilon(m, eps));
      CHECK(m.probabilities().allFinite());
      for (Index i = 0; i < k; ++i)
        CHECK(std::abs(m.conditional_mean(i) - labels[i]) <= 1e-9 * (1 + m.outputs().cwiseAbs().maxCoeff()));
    }
  }
}

// --- goodness of fit of every sampler against the exact distribution --------------------------

namespace {

/// A chi-square z of a finite mechanism's sampler (`sample(gen)` returns an output value) against
/// the exact row `probs` over `outputs`.
template <typename Sample>
double row_fit(const Vector<double>& outputs, const std::vector<double>& probs, long long n, std::uint64_t seed,
               Sample sample) {
  SeededRandom gen(seed);
  return test::chi_square_z(test::categorical_chi_square(probs, n, [&] {
    const double o = sample(gen);
    for (Index j = 0; j < outputs.size(); ++j)
      if (outputs[j] == o) return j;
    return Index(outputs.size());  // not an output: out of range, an error
  }));
}

std::vector<double> row_of(const FiniteMechanism<double>& m, Index i) {
  const auto r = m.sampler().realized(i);
  return std::vector<double>(r.begin(), r.end());
}

auto staircase_cdf(const detail::StaircaseNoise& n) {
  const double norm = 2 - n.q(0);
  return [&n, norm](double x) {
    const std::int64_t z = std::int64_t(std::floor(x));
    return z >= 0 ? 1 - n.tail(z + 1) / norm : n.tail(-z) / norm;
  };
}

}  // namespace

TEST_CASE("privacy regression: finite samplers fit their exact rows; samplers of eps doubled do not",
          "[.][statistical][property][privacy_regression]") {
  const auto prior = regression_priors()[0].second;
  const long long n = 200000;
  const double eps = 1.0;
  int caught = 0;
  // The alias-table sampler of every finite family (FiniteMechanism::sample) and RR-on-Bins' own.
  for (const auto& family : finite_families()) {
    const FiniteMechanism<double> real = family.build(prior, eps),
                                  mutant = family.build(prior, family.mutant_factor * eps);
    if (real.outputs() != mutant.outputs()) {
      std::printf("[privacy regression] %s: other outputs at eps doubled, left to the exact audit\n",
                  family.name.c_str());
      continue;
    }
    const Index i = real.num_inputs() / 2;
    const double y = real.inputs()[i];
    const double z = row_fit(real.outputs(), row_of(real, i), n, 5, [&](SeededRandom& g) { return real.sample(y, g); });
    const double zm =
        row_fit(real.outputs(), row_of(real, i), n, 5, [&](SeededRandom& g) { return mutant.sample(y, g); });
    INFO(family.name << ": z " << z << ", mutant z " << zm);
    CHECK(z < 6);
    CHECK(zm >= 6);
    caught += zm >= 6;
  }
  // RR-on-Bins' own sampler (CyclicRandomizedResponse): the same bins with eps doubled.
  const auto rr = optimal_rr_on_bins(prior, eps);
  Vector<double> phi(prior.size());
  for (Index i = 0; i < prior.size(); ++i) phi[i] = rr.phi(i);
  const RROnBins<double> rr_mutant(prior.values(), phi, 2 * eps);
  const Matrix<double> rows = rr.realized_probabilities();
  const std::vector<double> row0(rows.row(0).data(), rows.row(0).data() + rows.cols());
  const double y0 = prior.value(0);
  const double z = row_fit(rr.outputs(), row0, n, 6, [&](SeededRandom& g) { return rr.sample(y0, g); });
  const double zm = row_fit(rr.outputs(), row0, n, 6, [&](SeededRandom& g) { return rr_mutant.sample(y0, g); });
  INFO("rr-on-bins sampler: z " << z << ", mutant z " << zm);
  CHECK(z < 6);
  CHECK(zm >= 6);
  caught += zm >= 6;
  std::printf("[privacy regression] %d finite samplers' mutants caught by chi-square\n", caught);
}

TEST_CASE("privacy regression: RPWithPrior's sampler fits its exact distribution; eps doubled does not",
          "[.][statistical][property][privacy_regression]") {
  const auto hist = HistogramPrior<double>::from_masses({0, 1, 2, 3, 4, 5}, {1, 3, 8, 3, 1});
  const auto real = RPWithPrior<double>::optimal(hist, 1.0, 0.4, 0.05);
  const RPWithPrior<double> mutant(real.a1(), real.a2(), real.zeta(), 2.0, real.granularity());
  for (double y : {0.3, 2.5, 4.9}) {
    const Vector<double> p = real.output_probabilities(y);
    const std::vector<double> probs(p.data(), p.data() + p.size());
    auto index_fit = [&](const RPWithPrior<double>& m) {
      SeededRandom gen(9);
      return test::chi_square_z(test::categorical_chi_square(probs, 200000, [&] { return m.sample_index(y, gen); }));
    };
    const double z = index_fit(real), zm = index_fit(mutant);
    INFO("y " << y << ": z " << z << ", mutant z " << zm);
    CHECK(z < 6);
    CHECK(zm >= 6);
  }
}

TEST_CASE("privacy regression: lattice samplers fit their exact noise; samplers of eps doubled do not",
          "[.][statistical][property][privacy_regression]") {
  int caught = 0;
  SECTION("discrete Laplace (unclipped): chi-square on the noise in grid steps") {
    const DiscreteLaplaceMechanism<double> m(LabelGrid<double>(0, 10, 1), 1.0, false),
        mutant(LabelGrid<double>(0, 10, 1), 2.0, false);
    const auto [z, zm] = test::grid_noise_draws(m, mutant, 4.0, 200000, SeededRandom(12));
    const auto F = [&](std::int64_t e) { return m.noise().cdf(e); };
    const auto edges = test::centred_edges(2, 60);
    const double a = test::chi_square_z(test::binned_chi_square(z, edges, F));
    const double b = test::chi_square_z(test::binned_chi_square(zm, edges, F));
    INFO("z " << a << ", mutant z " << b);
    CHECK(a < 6);
    CHECK(b >= 6);
    caught += b >= 6;
  }
  SECTION("Laplace on its power-of-two grid: KS against the exact lattice CDF") {
    const LaplaceMechanism<double> m(0.0, 4.0, 1.0, false), mutant(0.0, 4.0, 2.0, false);
    SeededRandom g(77);
    std::vector<double> good, bad;
    for (int i = 0; i < 50000; ++i) good.push_back(m.sample(1.3, g)), bad.push_back(mutant.sample(1.3, g));
    const auto cdf = [&](double x) { return double(m.cdf(1.3, x)); };
    const double p = test::kolmogorov_smirnov(good, cdf).p_value, pm = test::kolmogorov_smirnov(bad, cdf).p_value;
    INFO("KS p " << p << ", mutant KS p " << pm);
    CHECK(p > 1e-6);
    CHECK(pm < 1e-6);
    caught += pm < 1e-6;
  }
  SECTION("discrete Gaussian: chi-square on the noise in grid steps") {
    const DiscreteGaussianMechanism m(0, 10, 1.0, 1e-6, 1, false), mutant(0, 10, 2.0, 1e-6, 1, false);
    const std::int64_t width = std::max<std::int64_t>(1, std::int64_t(m.sigma() / 8));
    const int bins = 96;
    const auto F =
        test::cdf_from_pmf([&](std::int64_t k) { return m.noise_pmf(k); }, width * bins / 2 + 60 * width * bins);
    const auto [z, zm] = test::grid_noise_draws(m, mutant, 5.0, 200000, SeededRandom(2024));
    const auto edges = test::centred_edges(width, bins);
    const double a = test::chi_square_z(test::binned_chi_square(z, edges, F));
    const double b = test::chi_square_z(test::binned_chi_square(zm, edges, F));
    INFO("sigma " << m.sigma() << ": z " << a << ", mutant z " << b);
    CHECK(a < 6);
    CHECK(b >= 6);
    caught += b >= 6;
  }
  SECTION("analytic Gaussian (exact discrete Gaussian on a fine lattice): KS") {
    const AnalyticGaussianMechanism m(0, 1, 1.0, 1e-6, false), mutant(0, 1, 2.0, 1e-6, false);
    const double s2 = std::pow(m.sigma() / m.grid_step(), 2), zn = detail::discrete_gaussian_normalizer(s2);
    const auto F = test::cdf_from_pmf([&](std::int64_t k) { return std::exp(-double(k) * double(k) / (2 * s2)) / zn; },
                                      std::int64_t(40 * m.sigma() / m.grid_step()));
    const auto [a, b] = test::grid_noise_draws(m, mutant, 0.5, 100000, SeededRandom(7));
    const double p = test::kolmogorov_smirnov(a, F).p_value, pm = test::kolmogorov_smirnov(b, F).p_value;
    INFO("KS p " << p << ", mutant KS p " << pm);
    CHECK(p > 1e-6);
    CHECK(pm < 1e-6);
    caught += pm < 1e-6;
  }
  SECTION("staircase (on its lattice): KS") {
    const StaircaseMechanism m(0, 1, 1.0, false), mutant(0, 1, 2.0, false);
    const auto F = staircase_cdf(m.noise());
    const auto [a, b] = test::grid_noise_draws(m, mutant, 0.25, 100000, SeededRandom(8));
    const double p = test::kolmogorov_smirnov(a, F).p_value, pm = test::kolmogorov_smirnov(b, F).p_value;
    INFO("KS p " << p << ", mutant KS p " << pm);
    CHECK(p > 1e-6);
    CHECK(pm < 1e-6);
    caught += pm < 1e-6;
  }
  SECTION("discrete staircase: chi-square on the noise in grid steps") {
    const DiscreteStaircaseMechanism m(0, 10, 0.5, 1, false), mutant(0, 10, 1.0, 1, false);
    std::vector<std::int64_t> edges;
    for (std::int64_t e = -800; e < 800; ++e) edges.push_back(e);
    const auto F = staircase_cdf(m.noise());
    const auto [a, b] = test::grid_noise_draws(m, mutant, 4.0, 200000, SeededRandom(31));
    const double za = test::chi_square_z(test::binned_chi_square(a, edges, F));
    const double zb = test::chi_square_z(test::binned_chi_square(b, edges, F));
    INFO("z " << za << ", mutant z " << zb);
    CHECK(za < 6);
    CHECK(zb >= 6);
    caught += zb >= 6;
  }
  SUCCEED("lattice mutants caught in this section: " << caught);
}

// --- defects found by the property tests, minimized, kept as regression tests ----------------
// A new defect gets a test here marked [!shouldfail] until it is fixed (then the mark and the
// property tests' known-issue exemption in tests/property/ go).

TEST_CASE("fixed: cap_to_epsilon left the realized rows above e^eps when the capped entries dominated their row",
          "[property][privacy_regression]") {
  // The bias-bounded grid mechanism of property seed 6460361262279846446 (k = 2, eps 7.14,
  // absolute loss, grid 98, B 0.01397): row 1's entries in columns 1 and 2 are the columns'
  // maxima and hold 99.9% of the row, so lowering them lowers the row's sum almost as much and the
  // realized ratio P[1][j] / S_1 hardly moves: the fixed-point iteration converges at rate ~0.98
  // per round and stops after its 64 rounds about 9e-16 relative above e^eps. The sampler's
  // integer table then exceeds e^eps and UnbiasedRandomizer refuses the solver's optimal answer.
  // Fixed: cap_to_epsilon() now caps each row in closed form after its renormalization.
  const double eps = 7.1406877673812952;
  Matrix<double> P(2, 3);
  P << 0.99920842004034305, 1.5296718412378642e-05, 0.00077628324124453542, 0.00079157995965691583,
      0.019308990393412884, 0.97989942964684029;
  cap_to_epsilon(P, eps);
  const FiniteMechanism<double> m(Vector<double>::LinSpaced(2, 0, 1), Vector<double>::LinSpaced(3, 0, 2), P);
  CHECK(satisfies_epsilon(P, eps));
  CHECK(realized_satisfies_epsilon(m, eps));
}

TEST_CASE("fixed: RPWithPrior::finite_mechanism() rounded its exact rows to nearest, an ulp above e^eps",
          "[property][privacy_regression]") {
  // Property seed in the rpwithprior family (k = 2, eps 11.76): the sampled rows are exact
  // rationals meeting the ratio bound with equality; rounded to doubles, 0.17197665172402005 /
  // 1.3441298327941546e-06 exceeds e^eps by an ulp.
  const RPWithPrior<double> m(0, 0.73150304437270908, 0.077901310094644738, 11.759367161574044, 0.10221189073069482,
                              OutsideRule::Clamp, 20);
  CHECK(m.discretized_epsilon() <= 11.759367161574044);  // the sampler itself
  CHECK(satisfies_epsilon(m.finite_mechanism({0, 0.73150304437270908}).probabilities(), 11.759367161574044));
}

TEST_CASE("fixed: the clipped discrete Laplace expected loss cancelled at eps 1e-6", "[property][privacy_regression]") {
  // Property seed 8731379647719065767 (discrete-laplace family): grid {998, 1000}, eps 1e-6. The
  // closed form (detail::grid_laplace_loss) subtracts terms of order 1/gamma^3 and gives
  // 1.9999988079 where the mechanism's own rows (and its sampler) give 1.999999000000003.
  const DiscreteLaplaceMechanism<double> m(LabelGrid<double>(998, 1000, 2), 1e-6, true);
  const FiniteMechanism<double> rows = m.finite();
  const double exact = rows.conditional_loss(0);
  CHECK(std::abs(double(m.conditional_loss(998)) - exact) <= 1e-9 * exact);
}

TEST_CASE("fixed: a bias-bounded grid solve threw when cap_to_epsilon emptied a row by more than 1e-9",
          "[property][privacy_regression]") {
  // Property seed 1780666627609036574 (bias-bounded-grid family): the same slow fixed point of
  // cap_to_epsilon() removes 2.3e-8 of row 10, and FiniteMechanism's constructor then rejects the
  // solver's own matrix ("row 10 sums to 0.99999997723012268, not 1").
  const auto prior = FinitePrior<double>::from_weights(
      {993.41375568852084, 993.41494436731432, 993.97419826836983, 993.97772828521227, 993.98487455183806,
       993.99842968439475, 994.13747796741541, 994.17927404940951, 994.19227041641921, 995.02267668964805,
       995.05464682274192, 995.18911893557197, 995.19867661881324, 995.21892147174935, 995.22898872029134,
       995.23469850613662},
      {8.0682075096722156e-07, 1.4423382886773567e-06, 0.0023734417767983943, 0.99761051209919904,
       7.5071236942163436e-08, 1.9814482821322369e-06, 1.089895316932395e-08, 1.0390567202102887e-06,
       2.1961629302568168e-06, 1.8612235550643544e-07, 2.0035616417431095e-06, 8.3543178826483331e-07,
       8.3915841323716686e-07, 2.3179901736592003e-06, 5.1134399281014149e-07, 1.8007184749953108e-06});
  UnbiasedOptions options;
  options.max_bias = 0.15815990833972046;
  CHECK_NOTHROW(optimal_unbiased_grid(prior, 9.4500324427248632, 62, options, AbsoluteLoss<double>{}));
}
