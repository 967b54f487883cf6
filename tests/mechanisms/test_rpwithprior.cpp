// Tests of labeldp/mechanisms/rpwithprior.hpp (RPWithPrior, ICLR submission).
// Oracles: brute force over all node pairs and a dense (A1, A2) grid for the interval; the
// paper's Algorithm 1 (fixed) as reference; exact audits (core audit_epsilon on the complete
// output matrix over every lattice input); an independent CDF / cell-probability computation;
// chi-square and Kolmogorov-Smirnov at fixed seeds; Monte Carlo and quadrature for the MSE.
#include <glpk.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/mechanisms/rpwithprior.hpp>
#include <labeldp/mechanisms/two_stage.hpp>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "oracles/counting_random.hpp"

using labeldp::HistogramPrior;
using labeldp::Index;
using labeldp::OutsideRule;
using labeldp::RPWithPrior;

namespace {

struct Brute {
  double a1 = 0, a2 = 0, objective = -1, runner_up = -1;
};

// Every pair of nodes i <= j, masses summed directly from the cell masses (no prefix array):
// the maximum, and the best objective among pairs that are a different interval.
Brute brute_force_interval(const HistogramPrior<>& prior, double eps, double zeta) {
  const auto& n = prior.edges();
  const auto& w = prior.masses();
  const Index m = prior.num_cells();
  const double c = std::exp(-eps);
  std::vector<std::pair<double, std::pair<Index, Index>>> all;
  for (Index i = 0; i <= m; ++i) {
    double mass = 0;
    for (Index j = i; j <= m; ++j) {
      if (j > i) mass += w[j - 1];
      all.push_back({2 * zeta * mass / (2 * zeta + c * (n[j] - n[i])), {i, j}});
    }
  }
  Brute b;
  std::pair<Index, Index> arg{0, 0};
  for (auto& [f, ij] : all)
    if (f > b.objective) {
      b.objective = f;
      arg = ij;
    }
  b.a1 = n[arg.first];
  b.a2 = n[arg.second];
  for (auto& [f, ij] : all)
    if (n[ij.first] != b.a1 || n[ij.second] != b.a2) b.runner_up = std::max(b.runner_up, f);
  return b;
}

HistogramPrior<> random_histogram(std::mt19937_64& rng, Index m) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> edges{std::uniform_real_distribution<double>(-50, 50)(rng)};
  for (Index i = 0; i < m; ++i) edges.push_back(edges.back() + 0.05 + 3 * unit(rng) * unit(rng));
  std::vector<double> masses(static_cast<std::size_t>(m));
  for (auto& x : masses) x = unit(rng) < 0.15 ? 0.0 : unit(rng) * unit(rng);
  masses[std::size_t(std::uniform_int_distribution<Index>(0, m - 1)(rng))] += 0.1;
  return HistogramPrior<>::from_masses(edges, masses);
}

// Independent continuous CDF of (3.4)/(3.6)/(3.7), from the paper's formulas.
double paper_cdf(double x, double y, double A1, double A2, double zeta, double eps, OutsideRule rule) {
  const double lo = A1 - zeta, hi = A2 + zeta;
  auto len = [](double a, double b, double x) { return std::clamp(x, a, b) - a; };
  if (rule == OutsideRule::Uniform && (y < A1 || y > A2)) return len(lo, hi, x) / (hi - lo);
  const double c = std::exp(-eps), gamma = 2 * zeta + c * (A2 - A1);
  const double center = std::clamp(y, A1, A2);
  const double near = len(center - zeta, center + zeta, x);
  return (c * (len(lo, hi, x) - near) + near) / gamma;
}

}  // namespace

TEST_CASE("RPWithPrior interval: hand-computed example", "[rpwithprior]") {
  // Masses 0.1, 0.8, 0.1 on [0,1), [1,2), [2,3]; eps = 1, zeta = 0.25:
  // F([1,2]) = 0.5*0.8/(0.5+e^-1) = 0.4609 beats [0,3] (0.3098), [1,3] (0.3605), [0,2] (0.3605).
  const auto prior = HistogramPrior<>::from_masses({0, 1, 2, 3}, {1, 8, 1});
  const double expected = 0.4 / (0.5 + std::exp(-1.0));
  const auto fast = labeldp::optimal_interval(prior, 1.0, 0.25);
  const auto ref = labeldp::optimal_interval_reference(prior, 1.0, 0.25);
  CHECK(fast.status == labeldp::optim::SolveStatus::Optimal);
  CHECK(fast.a1 == 1.0);
  CHECK(fast.a2 == 2.0);
  CHECK(fast.first_node == 1);
  CHECK(fast.last_node == 2);
  CHECK(fast.objective == Approx(expected).epsilon(1e-14));
  CHECK(ref.a1 == 1.0);
  CHECK(ref.a2 == 2.0);
  CHECK(ref.objective == Approx(expected).epsilon(1e-14));
}

TEST_CASE("RPWithPrior interval: fast == Algorithm 1 (fixed) == brute force on random histograms", "[rpwithprior]") {
  std::mt19937_64 rng(20260522);
  std::uniform_real_distribution<double> unit(0, 1);
  int unique_checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Index m = std::uniform_int_distribution<Index>(1, 60)(rng);
    const auto prior = random_histogram(rng, m);
    const double eps = 0.01 * std::pow(1200.0, unit(rng));  // 0.01 .. 12
    const double width = prior.upper() - prior.lower();
    const double zeta = width * std::pow(10.0, -2 + 3 * unit(rng));  // 0.01 w .. 10 w
    const Brute brute = brute_force_interval(prior, eps, zeta);
    const auto fast = labeldp::optimal_interval(prior, eps, zeta);
    const auto ref = labeldp::optimal_interval_reference(prior, eps, zeta);
    INFO("trial " << trial << " m " << m << " eps " << eps << " zeta " << zeta);
    REQUIRE(fast.status == labeldp::optim::SolveStatus::Optimal);
    CHECK(fast.iterations <= 20);
    REQUIRE(fast.objective == Approx(brute.objective).epsilon(1e-12));
    REQUIRE(ref.objective == Approx(brute.objective).epsilon(1e-12));
    // The reported objective is F of the reported interval (evaluated independently).
    CHECK(labeldp::interval_objective(prior, fast.a1, fast.a2, eps, zeta) == Approx(fast.objective).epsilon(1e-12));
    CHECK(fast.a1 == prior.edges()[fast.first_node]);
    CHECK(fast.a2 == prior.edges()[fast.last_node]);
    // When the maximizer is unique by a clear margin, all three return the same interval.
    if (brute.runner_up < brute.objective * (1 - 1e-9)) {
      ++unique_checked;
      CHECK(fast.a1 == brute.a1);
      CHECK(fast.a2 == brute.a2);
      CHECK(ref.a1 == Approx(brute.a1).margin(1e-9));
      CHECK(ref.a2 == Approx(brute.a2).margin(1e-9));
    }
  }
  CHECK(unique_checked > 300);
}

TEST_CASE("RPWithPrior interval: a dense (A1, A2) grid never beats the solvers", "[rpwithprior]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 25; ++trial) {
    const auto prior = random_histogram(rng, std::uniform_int_distribution<Index>(1, 12)(rng));
    const double eps = 0.01 * std::pow(1200.0, unit(rng));
    const double width = prior.upper() - prior.lower();
    const double zeta = width * std::pow(10.0, -2 + 3 * unit(rng));
    const auto fast = labeldp::optimal_interval(prior, eps, zeta);
    const double lo = prior.lower() - 0.2 * width, hi = prior.upper() + 0.2 * width;
    const int N = 240;
    double best_grid = 0;
    for (int a = 0; a <= N; ++a)
      for (int b = a; b <= N; ++b) {
        const double A1 = lo + (hi - lo) * a / N, A2 = lo + (hi - lo) * b / N;
        best_grid = std::max(best_grid, labeldp::interval_objective(prior, A1, A2, eps, zeta));
      }
    INFO("trial " << trial);
    CHECK(best_grid <= fast.objective * (1 + 1e-12));
    // ... and the grid comes close (the objective is continuous): a sanity check of the grid.
    CHECK(best_grid >= 0.5 * fast.objective);
  }
}

TEST_CASE("RPWithPrior interval: ties resolve to the smallest A2, then the shortest interval", "[rpwithprior]") {
  // Two identical bumps far apart: [0,1] and [1000,1001] tie (F = 0.1/(0.2+e^-5) each, while
  // [0,1001] only gets 0.2/(0.2+1001e^-5)); the left one is returned.
  const auto prior = HistogramPrior<>::from_masses({0, 1, 1000, 1001}, {0.5, 0, 0.5});
  const auto fast = labeldp::optimal_interval(prior, 5.0, 0.1);
  CHECK(fast.a1 == 0.0);
  CHECK(fast.a2 == 1.0);
  const Brute brute = brute_force_interval(prior, 5.0, 0.1);
  CHECK(fast.objective == Approx(brute.objective).epsilon(1e-14));
  CHECK(fast.objective == Approx(0.1 / (0.2 + std::exp(-5.0))).epsilon(1e-14));
  CHECK(brute.runner_up == Approx(brute.objective).epsilon(1e-14));  // it is a tie
}

TEST_CASE("RPWithPrior: continuous density, CDF and exact audit", "[rpwithprior]") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const double A1 = -5 + 10 * unit(rng);
    const double A2 = trial % 10 == 0 ? A1 : A1 + 4 * unit(rng);
    const double zeta = 0.01 + 2 * unit(rng);
    const double eps = 0.01 * std::pow(1200.0, unit(rng));
    const OutsideRule rule = trial % 2 ? OutsideRule::Clamp : OutsideRule::Uniform;
    const RPWithPrior<> mech(A1, A2, zeta, eps, 1e-3, rule);
    INFO("trial " << trial << " A1 " << A1 << " A2 " << A2 << " zeta " << zeta << " eps " << eps);
    const double audited = mech.continuous_epsilon();
    CHECK(audited <= eps * (1 + 1e-12));
    if (A2 > A1)
      CHECK(audited == Approx(eps).epsilon(1e-9));
    else
      CHECK(audited == Approx(0).margin(1e-12));
    for (double y : {A1 - 3.0, A1, A1 + 0.3 * (A2 - A1), A2, A2 + 1.0}) {
      // CDF against the paper's formulas, and the density integrates to the CDF.
      double integral = 0;
      const int pieces = 4000;
      const double lo = A1 - zeta - 0.5, hi = A2 + zeta + 0.5, h = (hi - lo) / pieces;
      for (int s = 0; s < pieces; ++s) {
        const double x = lo + h * (s + 1);
        integral += h * mech.density(lo + h * (s + 0.5), y);
        if (s % 97 == 0) {
          CHECK(mech.cdf(x, y) == Approx(paper_cdf(x, y, A1, A2, zeta, eps, rule)).margin(1e-12));
          CHECK(integral == Approx(mech.cdf(x, y)).margin(2 * h / mech.gamma() + 1e-9));
        }
      }
      CHECK(mech.cdf(hi, y) == Approx(1).epsilon(1e-12));
      CHECK(mech.cdf(lo, y) == 0);
      // Pointwise, the density never exceeds e^eps times another input's density.
      for (int s = 0; s < 50; ++s) {
        const double t = A1 - zeta + (A2 - A1 + 2 * zeta) * unit(rng);
        const double d1 = mech.density(t, y), d2 = mech.density(t, A1 + (A2 - A1) * unit(rng));
        CHECK(d1 <= std::exp(eps) * d2 * (1 + 1e-12));
      }
    }
  }
}

TEST_CASE("RPWithPrior sampled mechanism: exact audit equals the audit over every lattice input", "[rpwithprior]") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 60; ++trial) {
    const double g = 0.25;
    const int bits = 1 + int(trial % 3);  // lattice step g/2, g/4, g/8: every input enumerable
    const double step = std::ldexp(g, -bits);
    const double A1 = -2 + 4 * unit(rng), A2 = A1 + 3 * unit(rng);
    const double zeta = step * std::uniform_int_distribution<int>(1, 12)(rng) + 0.3 * step * unit(rng);
    const double eps = 0.01 * std::pow(1200.0, unit(rng));
    const OutsideRule rule = trial % 2 ? OutsideRule::Clamp : OutsideRule::Uniform;
    const RPWithPrior<> mech(A1, A2, zeta, eps, g, rule, bits);
    // Inputs every half lattice step across [A1, A2] hit every lattice label; plus outside ones.
    std::vector<double> ys{A1 - 7.5, A2 + 7.5};
    for (double y = A1; y <= A2; y += step / 2) ys.push_back(y);
    ys.push_back(A2);
    labeldp::Matrix<double> P(Index(ys.size()), mech.num_outputs());
    for (std::size_t r = 0; r < ys.size(); ++r) {
      const auto row = mech.output_probabilities(ys[r]);
      REQUIRE(row.sum() == Approx(1).epsilon(1e-12));
      REQUIRE(row.minCoeff() > 0);
      P.row(Index(r)) = row.transpose();
    }
    INFO("trial " << trial << " bits " << bits << " A1 " << A1 << " A2 " << A2 << " zeta " << zeta << " eps " << eps);
    const double brute = labeldp::audit_epsilon(P);
    CHECK(mech.discretized_epsilon() == Approx(brute).epsilon(1e-9).margin(1e-12));
    // core audit_epsilon works on double-rounded probabilities: allow its own rounding.
    CHECK(brute <= eps + 1e-12);
    CHECK(mech.discretized_epsilon() <= eps);
    CHECK(mech.discretized_epsilon() <= mech.realized_epsilon_bound() + 1e-12);
    CHECK(mech.realized_epsilon_bound() <= eps);
  }
}

TEST_CASE("RPWithPrior sampled mechanism: audited eps <= eps for every mechanism built", "[rpwithprior]") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const Index m = std::uniform_int_distribution<Index>(1, 40)(rng);
    const auto prior = random_histogram(rng, m);
    const double eps = 0.01 * std::pow(1200.0, unit(rng));
    const double width = prior.upper() - prior.lower();
    const double zeta = width * std::pow(10.0, -2 + 3 * unit(rng));
    const double g = width * std::pow(10.0, -4 + 3 * unit(rng));
    const auto mech =
        RPWithPrior<>::optimal(prior, eps, zeta, g, trial % 2 ? OutsideRule::Clamp : OutsideRule::Uniform);
    INFO("trial " << trial << " eps " << eps << " zeta " << zeta << " g " << g);
    CHECK(mech.continuous_epsilon() <= eps * (1 + 1e-12));
    CHECK(mech.discretized_epsilon() <= eps);
    CHECK(mech.realized_epsilon_bound() <= eps);
    CHECK(mech.realized_epsilon_bound() >= eps * (1 - 1e-9));  // q was not rounded wastefully
  }
}

TEST_CASE("RPWithPrior sampled mechanism: grid-cell probabilities match the continuous CDF", "[rpwithprior]") {
  const double A1 = 0.3, A2 = 2.1, zeta = 0.37, eps = 1.3, g = 0.05;
  for (OutsideRule rule : {OutsideRule::Clamp, OutsideRule::Uniform}) {
    const RPWithPrior<> mech(A1, A2, zeta, eps, g, rule);
    const auto outs = mech.outputs();
    for (double y : {-4.0, 0.3, 0.77, 1.5, 2.1, 9.0}) {
      const auto p = mech.output_probabilities(y);
      for (Index i = 0; i < outs.size(); ++i) {
        const double expected = paper_cdf(outs[i] + g / 2, y, A1, A2, zeta, eps, rule) -
                                paper_cdf(outs[i] - g / 2, y, A1, A2, zeta, eps, rule);
        INFO("y " << y << " output " << outs[i]);
        // The lattice moves A1, A2, zeta and y by at most half a step g/2^20.
        CHECK(p[i] == Approx(expected).margin(8 * std::ldexp(g, -20) / mech.gamma() + 1e-13));
      }
    }
  }
}

TEST_CASE("RPWithPrior sampler: the same generator words for every label (constant work)", "[rpwithprior]") {
  // The coin first, then one uniform offset: two words per label inside or outside the interval,
  // under either outside rule (a tie or a rejection, probability below 2^-40, would add one).
  for (const OutsideRule rule : {OutsideRule::Clamp, OutsideRule::Uniform})
    for (double eps : {0.1, 1.0, 8.0}) {
      const RPWithPrior<> mech(0.0, 1.0, 0.2, eps, 0.1, rule);
      for (double y : {-5.0, 0.0, 0.1, 0.43, 0.99, 1.0, 7.5}) {
        labeldp::test::CountingRandom gen;
        for (int s = 0; s < 500; ++s) (void)mech.sample(y, gen);
        INFO("rule " << int(rule) << " eps " << eps << " y " << y);
        CHECK(gen.words == 1000);
      }
    }
}

TEST_CASE("RPWithPrior sampler: chi-square against the exact output distribution (fixed seed)", "[rpwithprior]") {
  const RPWithPrior<> mech(0.0, 1.0, 0.2, 1.0, 0.1);
  labeldp::SeededRandom gen(42);
  for (double y : {-1.0, 0.0, 0.43, 1.0}) {
    const auto p = mech.output_probabilities(y);
    std::vector<double> counts(std::size_t(p.size()), 0);
    const int n = 200000;
    for (int s = 0; s < n; ++s) counts[std::size_t(mech.sample_index(y, gen))] += 1;
    double chi2 = 0;
    for (Index i = 0; i < p.size(); ++i) chi2 += std::pow(counts[std::size_t(i)] - n * p[i], 2) / (n * p[i]);
    // 15 outputs, 14 degrees of freedom: the 0.999 quantile is 36.12.
    INFO("y " << y << " chi2 " << chi2 << " outputs " << p.size());
    CHECK(p.size() == 15);
    CHECK(chi2 < 36.12);
  }
}

namespace {
// Two-sided KS distance of samples on the grid against the continuous CDF at grid boundaries.
double ks_distance(const RPWithPrior<>& mech, double y, int n, std::uint64_t seed, double A1, double A2, double zeta,
                   double eps, OutsideRule rule) {
  labeldp::SeededRandom gen(seed);
  std::vector<double> counts(std::size_t(mech.num_outputs()), 0);
  for (int s = 0; s < n; ++s) counts[std::size_t(mech.sample_index(y, gen))] += 1;
  double cum = 0, d = 0;
  for (Index i = 0; i < mech.num_outputs(); ++i) {
    cum += counts[std::size_t(i)] / n;
    const double exact = paper_cdf(mech.output(i) + mech.granularity() / 2, y, A1, A2, zeta, eps, rule);
    d = std::max(d, std::abs(cum - exact));
  }
  return d;
}
}  // namespace

TEST_CASE("RPWithPrior sampler: Kolmogorov-Smirnov against the exact CDF (fixed seeds)", "[rpwithprior]") {
  const double A1 = -1.2, A2 = 3.4, zeta = 0.6, eps = 0.8;
  for (OutsideRule rule : {OutsideRule::Clamp, OutsideRule::Uniform}) {
    const RPWithPrior<> mech(A1, A2, zeta, eps, 1e-3, rule);
    for (double y : {-3.0, -1.2, 0.1, 3.4, 8.0}) {
      const int n = 100000;
      const double d = ks_distance(mech, y, n, 1000 + std::uint64_t(y * 10 + 50), A1, A2, zeta, eps, rule);
      INFO("y " << y << " D " << d);
      CHECK(d < 1.95 / std::sqrt(double(n)));  // 0.1% level
    }
  }
}

TEST_CASE("RPWithPrior sampler: Kolmogorov-Smirnov, many mechanisms", "[.][statistical][rpwithprior]") {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 40; ++trial) {
    const double A1 = -3 + 6 * unit(rng), A2 = A1 + 5 * unit(rng), zeta = 0.05 + unit(rng);
    const double eps = 0.01 * std::pow(1200.0, unit(rng));
    const OutsideRule rule = trial % 2 ? OutsideRule::Clamp : OutsideRule::Uniform;
    const RPWithPrior<> mech(A1, A2, zeta, eps, 1e-4, rule);
    const double y = A1 - 1 + (A2 - A1 + 2) * unit(rng);
    const int n = 400000;
    const double d = ks_distance(mech, y, n, std::uint64_t(trial) + 77, A1, A2, zeta, eps, rule);
    INFO("trial " << trial << " D " << d);
    CHECK(d < 1.95 / std::sqrt(double(n)));
  }
}

TEST_CASE("RPWithPrior MSE: closed form equals quadrature of the density", "[rpwithprior]") {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const auto prior = random_histogram(rng, std::uniform_int_distribution<Index>(1, 10)(rng));
    const double width = prior.upper() - prior.lower();
    const double A1 = prior.lower() + 0.3 * width * unit(rng), A2 = A1 + 0.6 * width * unit(rng);
    const double zeta = width * (0.01 + 0.5 * unit(rng)), eps = 0.05 + 5 * unit(rng);
    const OutsideRule rule = trial % 2 ? OutsideRule::Clamp : OutsideRule::Uniform;
    const RPWithPrior<> mech(A1, A2, zeta, eps, width * 1e-3, rule);
    // Conditional MSE: Simpson on each constant piece of the density (exact for quadratics).
    for (double y : {prior.lower(), A1, 0.5 * (A1 + A2), A2, prior.upper()}) {
      std::vector<double> cuts{A1 - zeta, A2 + zeta, std::clamp(y, A1, A2) - zeta, std::clamp(y, A1, A2) + zeta};
      std::sort(cuts.begin(), cuts.end());
      double s = 0;
      for (int k = 0; k < 3; ++k) {
        const double a = std::max(cuts[std::size_t(k)], A1 - zeta), b = std::min(cuts[std::size_t(k) + 1], A2 + zeta);
        if (!(b > a)) continue;
        const double d = mech.density(0.5 * (a + b), y), mid = 0.5 * (a + b);
        s += d * (b - a) / 6 * ((a - y) * (a - y) + 4 * (mid - y) * (mid - y) + (b - y) * (b - y));
      }
      CHECK(mech.conditional_mse(y) == Approx(s).epsilon(1e-10));
    }
    // Expected MSE: 2-point Gauss-Legendre over y on pieces split at the cell edges and A1, A2
    // (exact for the cubic; interior nodes, since (3.7) jumps at A1 and A2).
    std::vector<double> cuts(prior.edges().data(), prior.edges().data() + prior.edges().size());
    for (double x : {A1, A2})
      if (x > prior.lower() && x < prior.upper()) cuts.push_back(x);
    std::sort(cuts.begin(), cuts.end());
    double total = 0;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      const double a = cuts[k], b = cuts[k + 1], mid = 0.5 * (a + b);
      if (!(b > a)) continue;
      const double off = (b - a) / (2 * std::sqrt(3.0));
      total += prior.density(mid) * (b - a) / 2 * (mech.conditional_mse(mid - off) + mech.conditional_mse(mid + off));
    }
    INFO("trial " << trial);
    CHECK(mech.expected_mse(prior) == Approx(total).epsilon(1e-9));
  }
}

TEST_CASE("RPWithPrior MSE: closed form equals a Monte Carlo estimate within its error", "[rpwithprior]") {
  const auto prior = HistogramPrior<>::from_masses({-1, 0, 0.5, 2, 5}, {0.1, 0.5, 0.3, 0.1});
  labeldp::SeededRandom gen(2024);
  labeldp::DiscreteDistribution cells(prior.masses());
  for (OutsideRule rule : {OutsideRule::Clamp, OutsideRule::Uniform}) {
    const double eps = 1.0;
    const auto choice = labeldp::choose_zeta(prior, eps, rule);
    const auto mech = RPWithPrior<>::optimal(prior, eps, choice.zeta, 1e-6, rule);
    const int n = 400000;
    double sum = 0, sum2 = 0;
    for (int s = 0; s < n; ++s) {
      const Index c = cells(gen);
      const double u = double(labeldp::uniform_below(std::uint64_t(1) << 53, gen)) / std::ldexp(1.0, 53);
      const double y = prior.edges()[c] + u * (prior.edges()[c + 1] - prior.edges()[c]);
      const double e = mech.sample(y, gen) - y;
      sum += e * e;
      sum2 += e * e * e * e;
    }
    const double mean = sum / n, se = std::sqrt((sum2 / n - mean * mean) / n);
    INFO("closed form " << mech.expected_mse(prior) << " MC " << mean << " se " << se);
    CHECK(mech.expected_mse(prior) == Approx(choice.expected_mse).epsilon(1e-12));
    CHECK(std::abs(mean - mech.expected_mse(prior)) < 4 * se);
  }
}

TEST_CASE("RPWithPrior choose_zeta: no scanned zeta does better", "[rpwithprior]") {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 6; ++trial) {
    const auto prior = random_histogram(rng, std::uniform_int_distribution<Index>(2, 30)(rng));
    const double eps = 0.05 * std::pow(100.0, unit(rng));
    const OutsideRule rule = trial % 2 ? OutsideRule::Clamp : OutsideRule::Uniform;
    const auto choice = labeldp::choose_zeta(prior, eps, rule);
    const double width = prior.upper() - prior.lower();
    INFO("trial " << trial << " zeta " << choice.zeta);
    CHECK(choice.expected_mse == Approx(labeldp::rpwithprior_mse(prior, eps, choice.zeta, rule)).epsilon(1e-12));
    for (int s = 0; s <= 600; ++s) {
      const double zeta = width * std::pow(10.0, -6.0 + 7.0 * s / 600);
      CHECK(choice.expected_mse <= labeldp::rpwithprior_mse(prior, eps, zeta, rule) * (1 + 1e-9));
    }
  }
}

TEST_CASE("RPWithPrior two-stage Algorithm 3", "[rpwithprior]") {
  std::vector<double> labels;
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal(2.0, 0.5);
  for (int i = 0; i < 20000; ++i) labels.push_back(normal(rng));
  labels.push_back(1e9);  // clipped by Hist_eps, clamped by RPWithPrior: never rejected
  std::vector<double> edges;
  for (int i = 0; i <= 20; ++i) edges.push_back(0.25 * i);
  // Stage 1: Hist_eps with eps1 = 2 on the public range [0, 5] (line 1); stage 2: RPWithPrior
  // with eps2 = 1 on the optimal interval of the private histogram, zeta by choose_zeta()
  // (lines 2-5); every label randomized once (line 6).
  const labeldp::HistEpsOptions hist_options{0, 5, 2, 0.05};
  labeldp::BuildRPWithPrior<> build;
  build.granularity = 1e-3;
  const auto run = [&](labeldp::SeededRandom& gen) {
    auto two = labeldp::make_two_stage(labeldp::hist_eps(labels, edges, hist_options, gen), 1.0, build);
    std::vector<double> noisy(labels.size());
    two.mechanism.sample(std::span<const double>(labels), std::span<double>(noisy), gen);
    return std::pair{std::move(two), std::move(noisy)};
  };
  labeldp::SeededRandom gen(1);
  const auto [result, noisy_labels] = run(gen);
  CHECK(result.eps() == result.prior_release.epsilon + 1.0);
  CHECK(result.eps() <= 3.0);
  CHECK(result.prior_release.epsilon <= 2.0);
  CHECK(result.budget.eps_mechanism == 1.0);
  REQUIRE(noisy_labels.size() == labels.size());
  const auto best = labeldp::optimal_interval(result.prior_release.prior, 1.0, result.mechanism.zeta());
  CHECK(result.mechanism.a1() == best.a1);
  CHECK(result.mechanism.a2() == best.a2);
  CHECK(result.mechanism.zeta() == Approx(labeldp::choose_zeta(result.prior_release.prior, 1.0).zeta).epsilon(1e-15));
  for (double v : noisy_labels) {
    CHECK(v >= result.mechanism.a1() - result.mechanism.zeta() - 1e-3);
    CHECK(v <= result.mechanism.a2() + result.mechanism.zeta() + 1e-3);
  }
  CHECK(result.mechanism.discretized_epsilon() <= 1.0);
  // Reproducible with the same seed (explicit opt-in to SeededRandom).
  labeldp::SeededRandom gen2(1);
  const auto again = run(gen2);
  CHECK(again.second == noisy_labels);
}

// --- bad input: one test per rejected value ------------------------------------------------

TEST_CASE("RPWithPrior rejects zeta = 0", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.0, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.0, 1, 0.01), Catch::Contains("'zeta' must be finite and positive, got 0"));
}
TEST_CASE("RPWithPrior rejects zeta < 0", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, -0.5, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, -0.5, 1, 0.01),
                      Catch::Contains("'zeta' must be finite and positive, got -0.5"));
}
TEST_CASE("RPWithPrior rejects zeta = NaN", "[rpwithprior][validation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, nan, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, nan, 1, 0.01),
                      Catch::Contains("'zeta' must be finite and positive, got nan"));
}
TEST_CASE("RPWithPrior rejects zeta = inf", "[rpwithprior][validation]") {
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, inf, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, inf, 1, 0.01),
                      Catch::Contains("'zeta' must be finite and positive, got inf"));
}
TEST_CASE("RPWithPrior rejects zeta below one lattice step", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 1e-12, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 1e-12, 1, 0.01), Catch::Contains("'zeta' must be at least one lattice step"));
}
TEST_CASE("RPWithPrior rejects eps = 0", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, 0.0, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, 0.0, 0.01), Catch::Contains("'eps' must be finite and positive, got 0"));
}
TEST_CASE("RPWithPrior rejects eps < 0", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, -1.0, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, -1.0, 0.01),
                      Catch::Contains("'eps' must be finite and positive, got -1"));
}
TEST_CASE("RPWithPrior rejects eps = inf", "[rpwithprior][validation]") {
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, inf, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, inf, 0.01),
                      Catch::Contains("'eps' must be finite and positive, got inf"));
}
TEST_CASE("RPWithPrior rejects eps = NaN", "[rpwithprior][validation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, nan, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, nan, 0.01),
                      Catch::Contains("'eps' must be finite and positive, got nan"));
}
TEST_CASE("RPWithPrior rejects a1 > a2", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(2, 1, 0.1, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(2, 1, 0.1, 1, 0.01), Catch::Contains("'a1' must be <= 'a2' = 1, got 2"));
}
TEST_CASE("RPWithPrior rejects a1 = NaN", "[rpwithprior][validation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(RPWithPrior<>(nan, 1, 0.1, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(nan, 1, 0.1, 1, 0.01), Catch::Contains("'a1' must be finite, got nan"));
}
TEST_CASE("RPWithPrior rejects a2 = inf", "[rpwithprior][validation]") {
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(RPWithPrior<>(0, inf, 0.1, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, inf, 0.1, 1, 0.01), Catch::Contains("'a2' must be finite, got inf"));
}
TEST_CASE("RPWithPrior rejects granularity = 0", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, 1, 0.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, 1, 0.0),
                      Catch::Contains("'granularity' must be finite and positive, got 0"));
}
TEST_CASE("RPWithPrior rejects granularity < 0", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, 1, -0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, 1, -0.01),
                      Catch::Contains("'granularity' must be finite and positive, got -0.01"));
}
TEST_CASE("RPWithPrior rejects a granularity too fine for the output range", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, 1, 1e-12), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, 1, 1e-12),
                      Catch::Contains("'granularity' must be at least (A2 - A1 + 2 zeta) / 2^30"));
}
TEST_CASE("RPWithPrior rejects lattice_bits = 0", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, 1, 0.01, OutsideRule::Clamp, 0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, 1, 0.01, OutsideRule::Clamp, 0),
                      Catch::Contains("'lattice_bits' must be in [1, 30], got 0"));
}
TEST_CASE("RPWithPrior rejects lattice_bits = 31", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 0.1, 1, 0.01, OutsideRule::Clamp, 31), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 0.1, 1, 0.01, OutsideRule::Clamp, 31),
                      Catch::Contains("'lattice_bits' must be in [1, 30], got 31"));
}
TEST_CASE("RPWithPrior rejects a NaN label", "[rpwithprior][validation]") {
  const RPWithPrior<> mech(0, 1, 0.1, 1, 0.01);
  labeldp::SeededRandom gen(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(mech.sample(nan, gen), std::invalid_argument);
  REQUIRE_THROWS_WITH(mech.sample(nan, gen), Catch::Contains("'y' must not be NaN, got nan"));
}
TEST_CASE("RPWithPrior accepts infinite labels (outside the interval)", "[rpwithprior][validation]") {
  const RPWithPrior<> mech(0, 1, 0.1, 1, 0.01);
  labeldp::SeededRandom gen(1);
  const double inf = std::numeric_limits<double>::infinity();
  const double v = mech.sample(inf, gen);
  CHECK(v >= -0.1 - 0.01);
  CHECK(v <= 1.1 + 0.01);
  CHECK(mech.output_probabilities(inf) == mech.output_probabilities(1.0));
}
TEST_CASE("optimal_interval rejects zeta = 0", "[rpwithprior][validation]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_AS(labeldp::optimal_interval(prior, 1.0, 0.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_interval(prior, 1.0, 0.0),
                      Catch::Contains("'zeta' must be finite and positive, got 0"));
}
TEST_CASE("optimal_interval rejects zeta < 0", "[rpwithprior][validation]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_AS(labeldp::optimal_interval(prior, 1.0, -2.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_interval(prior, 1.0, -2.0),
                      Catch::Contains("'zeta' must be finite and positive, got -2"));
}
TEST_CASE("optimal_interval rejects eps = 0", "[rpwithprior][validation]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_AS(labeldp::optimal_interval(prior, 0.0, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_interval(prior, 0.0, 1.0),
                      Catch::Contains("'eps' must be finite and positive, got 0"));
}
TEST_CASE("optimal_interval rejects max_iterations = 0", "[rpwithprior][validation]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_AS(labeldp::optimal_interval(prior, 1.0, 1.0, 0), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_interval(prior, 1.0, 1.0, 0),
                      Catch::Contains("'max_iterations' must be >= 1, got 0"));
}
TEST_CASE("optimal_interval_reference rejects zeta = 0", "[rpwithprior][validation]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_AS(labeldp::optimal_interval_reference(prior, 1.0, 0.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_interval_reference(prior, 1.0, 0.0),
                      Catch::Contains("'zeta' must be finite and positive, got 0"));
}
TEST_CASE("interval_objective rejects a1 > a2", "[rpwithprior][validation]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_AS(labeldp::interval_objective(prior, 0.8, 0.2, 1.0, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::interval_objective(prior, 0.8, 0.2, 1.0, 1.0),
                      Catch::Contains("'a1' must be <= 'a2' = 0.20000000000000001, got 0.80000000000000004"));
}
TEST_CASE("choose_zeta rejects grid_points = 2", "[rpwithprior][validation]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_AS(labeldp::choose_zeta(prior, 1.0, OutsideRule::Clamp, 2), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::choose_zeta(prior, 1.0, OutsideRule::Clamp, 2),
                      Catch::Contains("'grid_points' must be >= 3, got 2"));
}
TEST_CASE("RPWithPrior two-stage rejects eps2 = 0", "[rpwithprior][validation]") {
  labeldp::SeededRandom gen(1);
  const std::vector<double> labels{0.5}, edges{0, 1};
  const auto hist = labeldp::hist_eps(labels, edges, labeldp::HistEpsOptions{0, 1, 0.5, 0.01}, gen);
  REQUIRE_THROWS_AS(labeldp::make_two_stage(hist, 0.0, labeldp::BuildRPWithPrior<>{}), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::make_two_stage(hist, 0.0, labeldp::BuildRPWithPrior<>{}),
                      Catch::Contains("'eps_mechanism' must be finite and positive, got 0"));
}
TEST_CASE("RPWithPrior rejects a zeta so large that N_I overflows", "[rpwithprior][validation]") {
  REQUIRE_THROWS_AS(RPWithPrior<>(0, 1, 1e308, 1, 0.01), std::invalid_argument);
  REQUIRE_THROWS_WITH(RPWithPrior<>(0, 1, 1e308, 1, 0.01),
                      Catch::Contains("'zeta' must keep A2 - A1 + 2 zeta finite, got 1e+308"));
}
TEST_CASE("optimal_interval: huge zeta (no overflow) takes the whole support", "[rpwithprior]") {
  const auto prior = HistogramPrior<>::from_masses({0, 1, 2, 3}, {1, 8, 1});
  const auto best = labeldp::optimal_interval(prior, 1.0, 1e308);
  CHECK(best.a1 == 0.0);
  CHECK(best.a2 == 3.0);
  CHECK(best.objective == Approx(1.0).epsilon(1e-15));
}

TEST_CASE("RPWithPrior: as a core FiniteMechanism (audit and expected loss by core)", "[rpwithprior]") {
  const RPWithPrior<> mech(0.0, 1.0, 0.3, 0.7, 0.1, OutsideRule::Uniform);
  std::vector<double> inputs{-2.0};
  for (int i = 0; i <= 40; ++i) inputs.push_back(0.025 * i);
  inputs.push_back(3.0);
  const auto fm = mech.finite_mechanism(inputs);
  CHECK(fm.num_inputs() == Index(inputs.size()));
  CHECK(fm.num_outputs() == mech.num_outputs());
  CHECK(labeldp::audit_epsilon(fm) <= 0.7 + 1e-12);
  CHECK(labeldp::audit_epsilon(fm) <= mech.discretized_epsilon() + 1e-12);
  // The sampler's realized probabilities (core alias tables) audit the same.
  CHECK(labeldp::audit_epsilon(fm.realized_probabilities()) <= 0.7 + 1e-9);
  // Conditional mean of the grid outputs vs the continuous one (within half a grid step).
  for (Index i = 0; i < fm.num_inputs(); ++i) {
    const double y = inputs[std::size_t(i)];
    double continuous_mean = 0;
    const int N = 20000;
    for (int s = 0; s < N; ++s) {
      const double t = -0.3 + 1.6 * (s + 0.5) / N;
      continuous_mean += t * mech.density(t, y) * 1.6 / N;
    }
    CHECK(fm.conditional_mean(i) == Approx(continuous_mean).margin(0.05 + 1e-6));
  }
}
TEST_CASE("RPWithPrior::finite_mechanism rejects unsorted inputs", "[rpwithprior][validation]") {
  const RPWithPrior<> mech(0.0, 1.0, 0.3, 0.7, 0.1);
  REQUIRE_THROWS_AS(mech.finite_mechanism({0.5, 0.2}), std::invalid_argument);
  REQUIRE_THROWS_WITH(mech.finite_mechanism({0.5, 0.2}), Catch::Contains("input values must be strictly increasing"));
}

namespace {
// LP (3.3) of the paper on a grid, solved by GLPK: inputs y_j = A1 + j h (j < J), output cells
// of width h tiling N_I = [A1 - zeta, A2 + zeta] with zeta = Zc h; variables v (the constant
// density on N_y, constraint 3) and the density f[j][k] on every cell k outside N_{y_j};
// rows: normalization per input, and f(j,k) <= e^eps f(j',k) for every cell and input pair;
// maximize sum_j p_j * 2 zeta v. Lemma 3.3: the optimum is 2 zeta / gamma * sum_j p_j.
double lemma33_lp_optimum(int J, int Zc, double h, double eps, const std::vector<double>& p) {
  const int K = (J - 1) + 2 * Zc;
  auto near = [&](int j, int k) { return k >= j && k < j + 2 * Zc; };
  std::vector<std::vector<int>> col(std::size_t(J), std::vector<int>(std::size_t(K), 1));  // 1 = v
  int ncols = 1;
  for (int j = 0; j < J; ++j)
    for (int k = 0; k < K; ++k)
      if (!near(j, k)) col[std::size_t(j)][std::size_t(k)] = ++ncols;
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, ncols);
  for (int c = 1; c <= ncols; ++c) glp_set_col_bnds(lp, c, GLP_LO, 0.0, 0.0);
  double psum = 0;
  for (double x : p) psum += x;
  glp_set_obj_coef(lp, 1, 2 * Zc * h * psum);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  int row = 0;
  for (int j = 0; j < J; ++j) {  // normalization: 2 zeta v + h * sum of far densities = 1
    glp_add_rows(lp, 1);
    ++row;
    glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
    ia.push_back(row);
    ja.push_back(1);
    ar.push_back(2 * Zc * h);
    for (int k = 0; k < K; ++k)
      if (!near(j, k)) {
        ia.push_back(row);
        ja.push_back(col[std::size_t(j)][std::size_t(k)]);
        ar.push_back(h);
      }
  }
  const double E = std::exp(eps);
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < J; ++j)
      for (int j2 = 0; j2 < J; ++j2) {
        const int a = col[std::size_t(j)][std::size_t(k)], b = col[std::size_t(j2)][std::size_t(k)];
        if (j == j2 || a == b) continue;  // v <= e^eps v always holds
        glp_add_rows(lp, 1);
        ++row;
        glp_set_row_bnds(lp, row, GLP_UP, 0.0, 0.0);  // d(j,k) - e^eps d(j2,k) <= 0
        ia.push_back(row);
        ja.push_back(a);
        ar.push_back(1.0);
        ia.push_back(row);
        ja.push_back(b);
        ar.push_back(-E);
      }
  glp_load_matrix(lp, int(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  const int ret = glp_simplex(lp, &parm);
  const double value = (ret == 0 && glp_get_status(lp) == GLP_OPT) ? glp_get_obj_val(lp) : -1.0;
  glp_delete_prob(lp);
  return value;
}
}  // namespace

TEST_CASE("RPWithPrior: Lemma 3.3's optimum of LP (3.3) on a grid (GLPK) is attained by (3.4)", "[rpwithprior][glpk]") {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 12; ++trial) {
    const int J = 2 + int(unit(rng) * 9), Zc = 1 + int(unit(rng) * 4);
    const double h = 0.25, A1 = -1.0, A2 = A1 + (J - 1) * h, zeta = Zc * h;
    const double eps = 0.05 * std::pow(100.0, unit(rng));
    std::vector<double> p(static_cast<std::size_t>(J));
    for (auto& x : p) x = 0.05 + unit(rng);
    const double lp = lemma33_lp_optimum(J, Zc, h, eps, p);
    // The mechanism's own probability of landing within zeta, from its CDF, weighted by p.
    const RPWithPrior<> mech(A1, A2, zeta, eps, h);
    double attained = 0, psum = 0;
    for (int j = 0; j < J; ++j) {
      const double y = A1 + j * h;
      attained += p[std::size_t(j)] * (mech.cdf(y + zeta, y) - mech.cdf(y - zeta, y));
      psum += p[std::size_t(j)];
    }
    INFO("trial " << trial << " J " << J << " Zc " << Zc << " eps " << eps);
    REQUIRE(lp > 0);
    CHECK(lp == Approx(2 * zeta / mech.gamma() * psum).epsilon(1e-9));
    CHECK(attained == Approx(lp).epsilon(1e-9));
  }
}
