// Tests of labeldp/prior/hist_eps.hpp (Hist_eps, Algorithm 4 of the RPWithPrior submission).
// Oracles: the exact output matrix of the noisy label over every input grid point, audited
// with core audit_epsilon; chi-square of the noise against the exact two-sided geometric pmf
// (fixed seed); the expected noisy histogram computed exactly by convolution; Algorithm 4's
// defining inequalities for its nodes; direct counting of the returned noisy labels.
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/prior/hist_eps.hpp>
#include <limits>
#include <random>
#include <vector>

using labeldp::HistEpsOptions;
using labeldp::Index;

TEST_CASE("Hist_eps: the noisy label's exact output matrix audits to at most eps", "[hist_eps]") {
  for (double eps : {0.1, 1.0, 3.0}) {
    const HistEpsOptions opt{-1.0, 1.0, eps, 0.25};  // N = 8 grid steps
    labeldp::SeededRandom gen(1);
    const auto probe = labeldp::hist_eps(std::vector<double>{0.0}, std::vector<double>{-1, 1}, opt, gen);
    REQUIRE(probe.steps == 8);
    const double alpha = probe.alpha;
    // P[noisy index o | input index j] = (1-a)/(1+a) a^|o-j|, outputs truncated to a window
    // (the audit ratio of every column is alpha^-(max |o-j| - min |o-j|) <= alpha^-N anyway).
    const Index T = 60;
    labeldp::Matrix<double> P(9, 9 + 2 * T);
    for (Index j = 0; j <= 8; ++j)
      for (Index o = -T; o <= 8 + T; ++o)
        P(j, o + T) = (1 - alpha) / (1 + alpha) * std::pow(alpha, double(std::abs(o - j)));
    INFO("eps " << eps << " alpha " << alpha);
    CHECK(labeldp::audit_epsilon(P) <= eps + 1e-12);
    CHECK(labeldp::audit_epsilon(P) == Approx(probe.epsilon).epsilon(1e-9));
    CHECK(probe.epsilon <= eps);
    CHECK(probe.epsilon == Approx(eps).epsilon(1e-12));
  }
}

TEST_CASE("Hist_eps: noise is discrete Laplace of scale (hi-lo)/eps on the grid (chi-square)", "[hist_eps]") {
  const HistEpsOptions opt{0.0, 2.0, 4.0, 0.5};  // N = 4, alpha = e^-1
  labeldp::SeededRandom gen(7);
  const std::vector<double> labels(100000, 1.0);  // grid index 2
  const auto noisy = labeldp::hist_eps_noisy_labels(labels, opt, gen);
  const double alpha = std::nextafter(std::exp(-1.0), 1.0);
  std::vector<double> counts(21, 0);  // noise -10..10, outside pooled into the ends
  for (double v : noisy) {
    const double z = (v - 1.0) / 0.5;
    REQUIRE(std::abs(z - std::round(z)) < 1e-9);  // on the grid
    counts[std::size_t(std::clamp<long>(std::lround(z), -10, 10) + 10)] += 1;
  }
  double chi2 = 0;
  for (int z = -10; z <= 10; ++z) {
    double p = (1 - alpha) / (1 + alpha) * std::pow(alpha, std::abs(z));
    if (std::abs(z) == 10) p = std::pow(alpha, 10) / (1 + alpha);  // tail mass P[Z >= 10]
    const double e = p * double(labels.size());
    chi2 += (counts[std::size_t(z + 10)] - e) * (counts[std::size_t(z + 10)] - e) / e;
  }
  INFO("chi2 " << chi2);
  CHECK(chi2 < 45.3);  // 20 degrees of freedom, 0.999 quantile
}

TEST_CASE("Hist_eps: labels outside the clipping bounds are clipped, not rejected", "[hist_eps]") {
  const HistEpsOptions opt{0.0, 1.0, 1.0, 0.1};
  const double inf = std::numeric_limits<double>::infinity();
  for (auto [outside, bound] : {std::pair{1e9, 1.0}, std::pair{inf, 1.0}, std::pair{-3.0, 0.0}, std::pair{-inf, 0.0}}) {
    labeldp::SeededRandom g1(5), g2(5);
    const auto a = labeldp::hist_eps_noisy_labels(std::vector<double>{outside, 0.5}, opt, g1);
    const auto b = labeldp::hist_eps_noisy_labels(std::vector<double>{bound, 0.5}, opt, g2);
    INFO("label " << outside);
    CHECK(a == b);  // same noise, same clipped input: identical output
  }
}

TEST_CASE("Hist_eps: the expected noisy histogram equals the exact convolution", "[hist_eps]") {
  const HistEpsOptions opt{0.0, 1.0, 2.0, 0.25};  // N = 4, alpha = e^-0.5
  const std::vector<double> edges{-1, 0, 0.5, 1, 2};
  const std::vector<double> labels{0.0, 0.25, 0.25, 1.0, 0.75};
  // Exact expected mass of each cell: average over labels of P[noisy label in cell], noisy
  // labels beyond the end edges counted in the end cells.
  const double alpha = std::nextafter(std::exp(-0.5), 1.0);
  std::vector<double> expected(4, 0);
  for (double y : labels) {
    const long j = std::lround(y / 0.25);
    for (long o = -400; o <= 400; ++o) {
      const double v = 0.25 * double(o), p = (1 - alpha) / (1 + alpha) * std::pow(alpha, double(std::abs(o - j)));
      const std::size_t cell = v < 0 ? 0 : v < 0.5 ? 1 : v < 1 ? 2 : 3;
      expected[cell] += p / double(labels.size());
    }
  }
  labeldp::SeededRandom gen(3);
  std::vector<double> mean(4, 0);
  const int reps = 20000;
  for (int r = 0; r < reps; ++r) {
    const auto h = labeldp::hist_eps(labels, edges, opt, gen);
    for (std::size_t c = 0; c < 4; ++c) mean[c] += h.prior.masses()[Index(c)] / reps;
  }
  for (std::size_t c = 0; c < 4; ++c) {
    // Each mass is a mean of 5 Bernoulli indicators / 5: sd <= sqrt(0.25/5), over 20000 reps.
    const double se = std::sqrt(0.25 / 5 / reps);
    INFO("cell " << c << " expected " << expected[c] << " mean " << mean[c]);
    CHECK(std::abs(mean[c] - expected[c]) < 5 * se);
  }
}

TEST_CASE("Hist_eps with the paper's nodes: Algorithm 4's inequalities and counts", "[hist_eps]") {
  std::mt19937_64 rng(4);
  std::normal_distribution<double> normal(0.5, 0.2);
  std::vector<double> labels;
  for (int i = 0; i < 3000; ++i) labels.push_back(normal(rng));
  for (double sigma : {0.05, 0.3, 2.0}) {
    labeldp::SeededRandom gen(11);
    const auto res = labeldp::hist_eps_paper_nodes(labels, sigma, HistEpsOptions{0.0, 1.0, 1.0, 0.01}, gen);
    const auto& noisy = res.noisy_labels;
    const double mn = *std::min_element(noisy.begin(), noisy.end()), mx = *std::max_element(noisy.begin(), noisy.end());
    double mu = 0;
    for (double v : noisy) mu += v;
    mu /= double(noisy.size());
    const auto& n = res.prior.edges();
    const Index K = n.size() - 1;
    INFO("sigma " << sigma << " cells " << K);
    CHECK(n[0] == mn);
    CHECK(n[K] == mx);
    if (K >= 2) {
      // n_1 = mu + (1 + k0) sigma with mu + k0 sigma <= min < mu + (k0+1) sigma.
      const double k0 = std::round((n[1] - mu) / sigma) - 1;
      CHECK(mu + k0 * sigma <= mn * (1 + 1e-12) + 1e-12);
      CHECK(mn < n[1]);
      for (Index i = 1; i < K; ++i) CHECK(n[i] == Approx(mu + (double(i) + k0) * sigma).epsilon(1e-12));
      CHECK(n[K - 1] < mx);
      CHECK(mx <= n[K - 1] + sigma * (1 + 1e-12));
    }
    // Masses are the fractions of noisy labels per cell (half-open, the last closed).
    for (Index c = 0; c < K; ++c) {
      double count = 0;
      for (double v : noisy) count += (v >= n[c] && (v < n[c + 1] || (c == K - 1 && v <= n[c + 1]))) ? 1 : 0;
      CHECK(res.prior.masses()[c] == Approx(count / double(noisy.size())).margin(1e-12));
    }
  }
}

// --- bad input: one test per rejected value -------------------------------------------------

namespace {
void run(const HistEpsOptions& opt) {
  labeldp::SeededRandom gen(1);
  (void)labeldp::hist_eps(std::vector<double>{0.5}, std::vector<double>{0, 1}, opt, gen);
}
}  // namespace

TEST_CASE("Hist_eps rejects eps = 0", "[hist_eps][validation]") {
  REQUIRE_THROWS_AS(run({0, 1, 0.0, 0.1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({0, 1, 0.0, 0.1}), Catch::Contains("'eps' must be finite and positive, got 0"));
}
TEST_CASE("Hist_eps rejects eps < 0", "[hist_eps][validation]") {
  REQUIRE_THROWS_AS(run({0, 1, -1.0, 0.1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({0, 1, -1.0, 0.1}), Catch::Contains("'eps' must be finite and positive, got -1"));
}
TEST_CASE("Hist_eps rejects eps = NaN", "[hist_eps][validation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(run({0, 1, nan, 0.1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({0, 1, nan, 0.1}), Catch::Contains("'eps' must be finite and positive, got nan"));
}
TEST_CASE("Hist_eps rejects lo == hi", "[hist_eps][validation]") {
  REQUIRE_THROWS_AS(run({1, 1, 1.0, 0.1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({1, 1, 1.0, 0.1}), Catch::Contains("'lo' must be less than 'hi' = 1, got 1"));
}
TEST_CASE("Hist_eps rejects lo > hi", "[hist_eps][validation]") {
  REQUIRE_THROWS_AS(run({2, 1, 1.0, 0.1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({2, 1, 1.0, 0.1}), Catch::Contains("'lo' must be less than 'hi' = 1, got 2"));
}
TEST_CASE("Hist_eps rejects an infinite bound", "[hist_eps][validation]") {
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(run({0, inf, 1.0, 0.1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({0, inf, 1.0, 0.1}), Catch::Contains("'hi' must be finite, got inf"));
}
TEST_CASE("Hist_eps rejects resolution = 0", "[hist_eps][validation]") {
  REQUIRE_THROWS_AS(run({0, 1, 1.0, 0.0}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({0, 1, 1.0, 0.0}), Catch::Contains("'resolution' must be finite and positive, got 0"));
}
TEST_CASE("Hist_eps rejects a resolution too fine", "[hist_eps][validation]") {
  REQUIRE_THROWS_AS(run({0, 1, 1.0, 1e-12}), std::invalid_argument);
  REQUIRE_THROWS_WITH(run({0, 1, 1.0, 1e-12}), Catch::Contains("'resolution' must be at least (hi - lo) / 2^32"));
}
TEST_CASE("Hist_eps rejects a NaN label", "[hist_eps][validation]") {
  labeldp::SeededRandom gen(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(labeldp::hist_eps(std::vector<double>{nan}, std::vector<double>{0, 1}, HistEpsOptions{}, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::hist_eps(std::vector<double>{nan}, std::vector<double>{0, 1}, HistEpsOptions{}, gen),
                      Catch::Contains("'label' must not be NaN, got nan"));
}
TEST_CASE("Hist_eps rejects no labels", "[hist_eps][validation]") {
  labeldp::SeededRandom gen(1);
  REQUIRE_THROWS_AS(labeldp::hist_eps(std::vector<double>{}, std::vector<double>{0, 1}, HistEpsOptions{}, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::hist_eps(std::vector<double>{}, std::vector<double>{0, 1}, HistEpsOptions{}, gen),
                      Catch::Contains("'labels' must not be empty, got 0 labels"));
}
TEST_CASE("Hist_eps rejects unsorted edges", "[hist_eps][validation]") {
  labeldp::SeededRandom gen(1);
  REQUIRE_THROWS_AS(labeldp::hist_eps(std::vector<double>{0.5}, std::vector<double>{0, 2, 1}, HistEpsOptions{}, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::hist_eps(std::vector<double>{0.5}, std::vector<double>{0, 2, 1}, HistEpsOptions{}, gen),
                      Catch::Contains("'edges' must be strictly increasing"));
}
TEST_CASE("Hist_eps (paper nodes) rejects sigma = 0", "[hist_eps][validation]") {
  labeldp::SeededRandom gen(1);
  REQUIRE_THROWS_AS(labeldp::hist_eps_paper_nodes(std::vector<double>{0.5}, 0.0, HistEpsOptions{}, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::hist_eps_paper_nodes(std::vector<double>{0.5}, 0.0, HistEpsOptions{}, gen),
                      Catch::Contains("'sigma' must be finite and positive, got 0"));
}
TEST_CASE("Hist_eps (paper nodes) rejects sigma < 0", "[hist_eps][validation]") {
  labeldp::SeededRandom gen(1);
  REQUIRE_THROWS_AS(labeldp::hist_eps_paper_nodes(std::vector<double>{0.5}, -1.0, HistEpsOptions{}, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::hist_eps_paper_nodes(std::vector<double>{0.5}, -1.0, HistEpsOptions{}, gen),
                      Catch::Contains("'sigma' must be finite and positive, got -1"));
}
