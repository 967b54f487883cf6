// Tests of labeldp/mechanisms/two_stage.hpp (Algorithm 3 of Ghazi et al. 2023, of Badanidiyuru
// et al. 2023 and of RPWithPrior through one API): an exact privacy audit of the whole algorithm
// (histogram and noisy label jointly) at neighbouring data sets, exact audits of stage 2, the
// utility inequalities of Theorem 7's proof checked on every draw, the sampler against its exact
// probabilities (chi-square), each builder's mechanism against the one built directly from the
// released prior with the budget accounted exactly, and validation.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/io/csv.hpp>
#include <labeldp/mechanisms/detail/rr_on_bins_reference.hpp>
#include <labeldp/mechanisms/two_stage.hpp>
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

#include "oracles/statistics.hpp"

using Catch::Matchers::Contains;
using labeldp::BudgetSplit;
using labeldp::BuildOptimalUnbiased;
using labeldp::BuildRPWithPrior;
using labeldp::BuildRROnBins;
using labeldp::Discretizer;
using labeldp::FinitePrior;
using labeldp::Index;
using labeldp::make_two_stage;
using labeldp::SeededRandom;
using labeldp::Vector;
using Counts = std::vector<std::int64_t>;

namespace {

Vector<double> vec(std::initializer_list<double> v) {
  Vector<double> s(Index(v.size()));
  Index i = 0;
  for (double x : v) s[i++] = x;
  return s;
}

double pmf(std::int64_t z, double a) { return (1 - a) / (1 + a) * std::pow(a, double(z < 0 ? -z : z)); }
// Probability that max(h + Z, 0) == c.
double clipped_prob(std::int64_t c, std::int64_t h, double a) {
  return c == 0 ? std::pow(a, double(h)) / (1 + a) : pmf(c - h, a);
}

std::vector<double> cps_wages() {
  namespace fs = std::filesystem;
  return labeldp::io::read_column_csv(
      (fs::path(__FILE__).parent_path().parent_path().parent_path() / "examples/data/cps1988.csv").string(), "wage");
}

}  // namespace

TEST_CASE("two-stage: the whole of Algorithm 3 is (eps1 + eps2)-DP (exact audit)", "[two_stage]") {
  // n = 3 labels on the public support {0, 1, 5}. Neighbouring data sets differ in one label
  // (value a in D, b in D'). The output is (clipped noisy counts c, noisy label of the changed
  // label); the other labels' noisy labels have the same distribution given c under D and D',
  // so they cancel. For every c in a window and every output o:
  //   P[c, o | D] / P[c, o | D'] = P[c | h] M_c(o | a) / (P[c | h'] M_c(o | b)) <= e^(eps1 + eps2),
  // where M_c is the mechanism the library builds from c (stage 2 is a function of c only).
  const auto support = vec({0, 1, 5});
  const double eps1 = 0.4, eps2 = 0.9;
  const double a = labeldp::private_histogram_alpha(eps1);
  const std::int64_t W = 9;
  std::vector<std::vector<double>> mech_cache;  // per c: 3 x d matrix flattened, and realized
  std::vector<std::vector<double>> realized_cache;
  std::vector<Index> bins;
  std::vector<Counts> cs;
  for (std::int64_t c0 = 0; c0 <= W; ++c0)
    for (std::int64_t c1 = 0; c1 <= W; ++c1)
      for (std::int64_t c2 = 0; c2 <= W; ++c2) {
        const Counts c = {c0, c1, c2};
        labeldp::PrivateHistogram<double> hist{
            labeldp::prior_from_noisy_counts(support, std::span<const std::int64_t>(c)), c, false, eps1, a};
        const auto r = make_two_stage(hist, eps2, BuildRROnBins<>{});
        const auto m = r.mechanism.mechanism();
        const auto realized = r.mechanism.realized_probabilities();
        REQUIRE(labeldp::audit_epsilon(m) <= eps2 + 1e-12);
        REQUIRE(labeldp::audit_epsilon(realized) <= eps2 + 1e-12);
        std::vector<double> p(m.probabilities().data(), m.probabilities().data() + m.probabilities().size());
        std::vector<double> q(realized.data(), realized.data() + realized.size());
        mech_cache.push_back(p);
        realized_cache.push_back(q);
        bins.push_back(m.num_outputs());
        cs.push_back(c);
      }
  CHECK(*std::max_element(bins.begin(), bins.end()) >= 2);  // the window reaches non-trivial bins
  std::vector<Counts> datasets;                             // counts of n = 3 labels
  for (int x = 0; x <= 3; ++x)
    for (int y = 0; x + y <= 3; ++y) datasets.push_back({x, y, 3 - x - y});
  double worst = 0, worst_realized = 0;
  for (const auto& h : datasets)
    for (const auto& g : datasets)
      for (Index from = 0; from < 3; ++from)
        for (Index to = 0; to < 3; ++to) {
          // g = h with one label moved from `from` to `to`.
          Counts moved = h;
          if (from == to || moved[std::size_t(from)] == 0) continue;
          --moved[std::size_t(from)];
          ++moved[std::size_t(to)];
          if (moved != g) continue;
          for (std::size_t t = 0; t < cs.size(); ++t) {
            double pc = 1, qc = 1;
            for (std::size_t i = 0; i < 3; ++i) {
              pc *= clipped_prob(cs[t][i], h[i], a);
              qc *= clipped_prob(cs[t][i], g[i], a);
            }
            const Index d = bins[t];
            for (Index o = 0; o < d; ++o) {
              const double po = mech_cache[t][std::size_t(from * d + o)], qo = mech_cache[t][std::size_t(to * d + o)];
              worst = std::max(worst, std::log(pc * po) - std::log(qc * qo));
              const double pr = realized_cache[t][std::size_t(from * d + o)];
              const double qr = realized_cache[t][std::size_t(to * d + o)];
              worst_realized = std::max(worst_realized, std::log(pc * pr) - std::log(qc * qr));
            }
          }
        }
  INFO("worst = " << worst << " realized = " << worst_realized << " bound = " << eps1 + eps2);
  CHECK(worst <= eps1 + eps2 + 1e-9);
  CHECK(worst_realized <= eps1 + eps2 + 1e-9);
  CHECK(worst >= eps1 + eps2 - 0.05);  // the composition bound is nearly attained: no slack hidden
}

TEST_CASE("two-stage: Theorem 7's inequalities hold on every draw", "[two_stage]") {
  // With P the empirical prior and P^ the private one, M^ optimal for P^ at eps2:
  //   L(M*_eps; P) <= L(M^; P) <= L(M*_eps2; P) + 2 B ||P - P^||_1,
  // (Theorem 5 for the left, optimality of M^ for P^ and |L(M; P) - L(M; P^)| <= B ||P - P^||_1
  // for the right), B = the largest loss on the support.
  const auto wages = cps_wages();
  const auto disc = Discretizer<>::grid(0.0, 5000.0, 100.0);
  Counts counts(std::size_t(disc.size()), 0);
  for (double w : wages) ++counts[std::size_t(disc.index(w))];
  std::vector<double> values(disc.support().data(), disc.support().data() + disc.size());
  std::vector<double> weights(counts.begin(), counts.end());
  const auto truth = FinitePrior<>::from_weights(values, weights);
  const double B = 5000.0 * 5000.0;
  SeededRandom gen(77);
  for (double eps : {0.1, 1.0, 4.0}) {
    const auto split = labeldp::theorem7_split(eps, disc.size(), Index(wages.size()));
    const double best_eps = labeldp::optimal_rr_on_bins(truth, eps).expected_loss(truth);
    const double best_eps2 = labeldp::optimal_rr_on_bins(truth, split.eps_mechanism).expected_loss(truth);
    for (int rep = 0; rep < 5; ++rep) {
      const auto r = make_two_stage(disc.support(), counts, split, gen);
      const double loss = r.mechanism.expected_loss(truth);
      const double l1 = (r.prior_release.prior.probabilities() - truth.probabilities()).cwiseAbs().sum();
      // The private prior is close: with c = max(h + Z, 0) and |c| its sum,
      //   ||P - P^||_1 <= (||c - h||_1 + ||c| - n|) / n <= 2 ||Z||_1 / n
      // on every draw (exact, from the released counts), and E|Z| = 2a / (1 - a^2) for the
      // two-sided geometric noise of ratio a: 2 k E|Z| / n is over four standard deviations
      // above l1's mean here (n = 28155, k = 51).
      double diff = 0, total = 0;
      for (std::size_t y = 0; y < counts.size(); ++y) {
        const double c = double(std::max<std::int64_t>(r.prior_release.noisy_counts[y], 0));
        diff += std::abs(c - double(counts[y]));
        total += c;
      }
      const double n = double(wages.size()), a = r.prior_release.alpha;
      const double exact_bound = (diff + std::abs(total - n)) / n;
      const double mean_bound = 2 * double(disc.size()) * (2 * a / (1 - a * a)) / n;
      INFO("eps " << eps << " loss " << loss << " best(eps) " << best_eps << " best(eps2) " << best_eps2 << " l1 " << l1
                  << " exact bound " << exact_bound << " noise bound " << mean_bound);
      CHECK(loss >= best_eps * (1 - 1e-12));
      CHECK(loss <= best_eps2 + 2 * B * l1 + 1e-6);
      CHECK(l1 <= exact_bound * (1 + 1e-12));
      CHECK(l1 < mean_bound);
    }
  }
}

TEST_CASE("two-stage: stage 2 is Algorithm 2 as printed, run on the private prior", "[two_stage]") {
  // Independent oracle: the paper's O(k^3) Algorithm 2 on the released private prior.
  const auto support = vec({0, 1, 2, 3, 5, 8, 13, 21, 34, 55});
  const Counts counts = {30, 25, 20, 10, 8, 3, 2, 1, 0, 1};
  SeededRandom gen(31);
  for (int rep = 0; rep < 10; ++rep) {
    const double eps2 = 0.25 * (rep + 1);
    const auto split = BudgetSplit::of(0.5, eps2);
    const auto sq = make_two_stage(support, counts, split, gen);
    const auto& sq_prior = sq.prior_release.prior;
    const auto ref = labeldp::detail::rr_on_bins_reference(sq_prior, eps2);
    INFO("rep " << rep << " eps2 " << eps2);
    CHECK(sq.mechanism.expected_loss(sq_prior) == Approx(ref.expected_loss).epsilon(1e-9));
    using Abs = labeldp::AbsoluteLoss<double>;
    const auto ab = make_two_stage(support, counts, split, gen, BuildRROnBins<double, Abs>{});
    const auto& ab_prior = ab.prior_release.prior;
    const auto ref_abs = labeldp::detail::rr_on_bins_reference(ab_prior, eps2, Abs{});
    CHECK(ab.mechanism.expected_loss(ab_prior, Abs{}) == Approx(ref_abs.expected_loss).epsilon(1e-9));
  }
}

TEST_CASE("two-stage: samples follow the realized probabilities (chi-square)", "[two_stage]") {
  const auto support = vec({0, 1, 2, 3, 10});
  const Counts counts = {400, 300, 200, 80, 20};
  SeededRandom gen(2023);
  const auto r = make_two_stage(support, counts, BudgetSplit::of(0.5, 2.0), gen);
  const auto realized = r.mechanism.realized_probabilities();
  REQUIRE(r.mechanism.num_outputs() >= 2);
  for (Index i : {Index(0), Index(4)}) {
    std::vector<long long> observed(std::size_t(r.mechanism.num_outputs()), 0);
    for (int t = 0; t < 50000; ++t) ++observed[std::size_t(r.mechanism.sample_index(i, gen))];
    std::vector<double> probs(observed.size());
    for (std::size_t j = 0; j < probs.size(); ++j) probs[j] = realized(i, Index(j));
    const auto fit = labeldp::test::chi_square(observed, probs);
    INFO("input " << i << " chi2 " << fit.statistic << " p " << fit.p_value);
    CHECK(fit.p_value > 1e-4);
  }
}

TEST_CASE("two-stage: two_stage_privatize on the CPS wages", "[two_stage]") {
  const auto wages = cps_wages();
  const auto disc = Discretizer<>::grid(0.0, 5000.0, 50.0);
  SeededRandom g1(5), g2(5);
  const auto res = labeldp::two_stage_privatize(disc, std::span<const double>(wages), 1.0, g1);
  REQUIRE(res.noisy_labels.size() == wages.size());
  const auto& r = res.two_stage;
  CHECK(r.eps() == Approx(1.0).epsilon(1e-15));
  CHECK(r.eps() <= 1.0);
  CHECK(r.budget.eps_prior == Approx(std::sqrt(101.0 / 28155.0)).epsilon(1e-15));
  CHECK(r.mechanism.inputs() == disc.support());
  const auto& outs = r.mechanism.outputs();
  for (double y : res.noisy_labels)
    REQUIRE(std::find(outs.data(), outs.data() + outs.size(), y) != outs.data() + outs.size());
  // Deterministic with the same seed; the histogram equals make_two_stage() on the counts.
  const auto again = labeldp::two_stage_privatize(disc, std::span<const double>(wages), 1.0, g2);
  CHECK(again.noisy_labels == res.noisy_labels);
  Counts counts(std::size_t(disc.size()), 0);
  for (double w : wages) ++counts[std::size_t(disc.index(w))];
  SeededRandom g3(5);
  const auto fitted = make_two_stage(disc.support(), counts, r.budget, g3);
  CHECK(fitted.prior_release.noisy_counts == r.prior_release.noisy_counts);
  // Empirical MSE of the noisy labels against the discretized labels is near its exact value.
  double mse = 0;
  for (std::size_t i = 0; i < wages.size(); ++i) mse += std::pow(res.noisy_labels[i] - disc(wages[i]), 2);
  mse /= double(wages.size());
  std::vector<double> values(disc.support().data(), disc.support().data() + disc.size());
  const auto truth = FinitePrior<>::from_weights(values, std::vector<double>(counts.begin(), counts.end()));
  const double exact = r.mechanism.expected_loss(truth);
  CHECK(mse == Approx(exact).epsilon(0.05));
}

TEST_CASE("two-stage: an explicit budget and the absolute loss", "[two_stage]") {
  const auto disc = Discretizer<>::grid(0.0, 10.0, 1.0);
  const std::vector<double> labels = {0.2, 3.7, 9.9, 4.4, 4.6, 5.0, 5.1, 7.0};
  SeededRandom gen(3);
  const BudgetSplit split = BudgetSplit::of(0.3, 1.7);
  const auto res = labeldp::two_stage_privatize(disc, std::span<const double>(labels), 2.0, gen,
                                                BuildRROnBins<double, labeldp::AbsoluteLoss<double>>{}, split);
  CHECK(res.two_stage.budget.eps_prior == 0.3);
  CHECK(res.two_stage.budget.eps_mechanism == 1.7);
  CHECK(res.two_stage.eps() <= 2.0);
  CHECK(res.noisy_labels.size() == labels.size());
  CHECK(labeldp::audit_epsilon(res.two_stage.mechanism.mechanism()) <= 1.7 + 1e-12);
  // The bins minimize the absolute loss: the mechanism is the one built for it directly.
  const auto direct =
      labeldp::optimal_rr_on_bins(res.two_stage.prior_release.prior, 1.7, labeldp::AbsoluteLoss<double>{});
  CHECK(res.two_stage.mechanism.to_json() == direct.to_json());
}

TEST_CASE("two-stage: the batch sample randomizes support values in order", "[two_stage]") {
  SeededRandom gen(8);
  const Counts counts = {10, 10};
  const auto r = make_two_stage(vec({0, 1}), counts, BudgetSplit::of(1.0, 50.0), gen);
  const std::vector<double> labels = {0, 1, 1, 0};
  // eps2 = 50: two bins kept with probability 1 - ~2e-22, so the output is Phi(y) in order.
  std::vector<double> out(labels.size());
  r.mechanism.sample(std::span<const double>(labels), std::span<double>(out), gen);
  REQUIRE(out.size() == 4);
  CHECK(out[0] < out[1]);
  CHECK(out[0] == out[3]);
  CHECK(out[1] == out[2]);
}

TEST_CASE("two-stage rejects a zero eps_prior", "[two_stage]") {
  SeededRandom gen(1);
  const Counts c = {1, 1};
  BudgetSplit bad;
  bad.eps_prior = 0;
  bad.eps_mechanism = 1;
  REQUIRE_THROWS_AS(make_two_stage(vec({0, 1}), c, bad, gen), std::invalid_argument);
  REQUIRE_THROWS_WITH(make_two_stage(vec({0, 1}), c, bad, gen), "'eps_prior' must be finite and positive, got 0");
}
TEST_CASE("two-stage rejects a NaN eps_mechanism", "[two_stage]") {
  SeededRandom gen(1);
  const Counts c = {1, 1};
  const auto hist = labeldp::private_histogram(vec({0, 1}), c, 1.0, gen);
  REQUIRE_THROWS_WITH(make_two_stage(hist, std::numeric_limits<double>::quiet_NaN(), BuildRROnBins<>{}),
                      "'eps_mechanism' must be finite and positive, got nan");
}
TEST_CASE("two-stage rejects a negative total eps", "[two_stage]") {
  SeededRandom gen(1);
  const std::vector<double> labels = {1.0};
  REQUIRE_THROWS_AS(labeldp::two_stage_privatize(Discretizer<>::grid(0.0, 1.0, 0.5), labels, -1.0, gen),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::two_stage_privatize(Discretizer<>::grid(0.0, 1.0, 0.5), labels, -1.0, gen),
                      "'eps' must be finite and positive, got -1");
}
TEST_CASE("two-stage rejects no labels", "[two_stage]") {
  SeededRandom gen(1);
  const std::vector<double> labels;
  REQUIRE_THROWS_WITH(labeldp::two_stage_privatize(Discretizer<>::grid(0.0, 1.0, 0.5), labels, 1.0, gen),
                      "'labels' must not be empty");
}
TEST_CASE("two-stage rejects a NaN label", "[two_stage]") {
  SeededRandom gen(1);
  const std::vector<double> labels = {0.5, std::numeric_limits<double>::quiet_NaN()};
  REQUIRE_THROWS_WITH(labeldp::two_stage_privatize(Discretizer<>::grid(0.0, 1.0, 0.5), labels, 1.0, gen),
                      "'label' must be finite, got nan");
}
TEST_CASE("two-stage sample rejects a value outside the support", "[two_stage]") {
  SeededRandom gen(1);
  const Counts c = {1, 1};
  const auto r = make_two_stage(vec({0, 1}), c, BudgetSplit::of(1, 1), gen);
  REQUIRE_THROWS_AS(r.mechanism.sample(0.5, gen), std::invalid_argument);
  REQUIRE_THROWS_WITH(r.mechanism.sample(0.5, gen), Contains("0.5"));
}
TEST_CASE("two-stage with Poisson loss rejects a negative support value", "[two_stage]") {
  SeededRandom gen(1);
  const Counts c = {1, 1};
  REQUIRE_THROWS_WITH(make_two_stage(vec({-1, 1}), c, BudgetSplit::of(1, 1), gen,
                                     BuildRROnBins<double, labeldp::PoissonLogLoss<double>>{}),
                      Contains("Poisson log loss needs labels >= 0, got -1"));
}

// ---- one API, three papers' mechanisms ----------------------------------------------------------

namespace {

// Labels in [0, 5] with a bump at 2 and a few at the ends (support points of a 0.25 grid).
std::vector<double> grid_labels() {
  std::vector<double> labels;
  for (int i = 0; i < 400; ++i) labels.push_back(0.25 * double((i * 7 + (i % 3) * 5) % 21));
  for (int i = 0; i < 200; ++i) labels.push_back(2.0);
  return labels;
}

}  // namespace

TEST_CASE("two-stage: each builder's mechanism is the one built directly from the released prior", "[two_stage]") {
  const double eps = 1.5, eps1 = 0.5;
  const BudgetSplit split = labeldp::split_budget(eps, eps1);
  const auto disc = Discretizer<>::grid(0.0, 5.0, 0.25);
  const auto labels = grid_labels();
  Counts counts(std::size_t(disc.size()), 0);
  for (double y : labels) ++counts[std::size_t(disc.index(y))];

  SECTION("RR-on-Bins (Ghazi et al. 2023, Alg. 3)") {
    SeededRandom g1(41), g2(41);
    const auto two = make_two_stage(disc.support(), counts, split, g1);
    // The release is private_histogram() with eps1 on the same draws.
    const auto hist = labeldp::private_histogram(disc.support(), std::span<const std::int64_t>(counts), eps1, g2);
    CHECK(two.prior_release.noisy_counts == hist.noisy_counts);
    const auto direct = labeldp::optimal_rr_on_bins(hist.prior, split.eps_mechanism);
    CHECK(two.mechanism.to_json() == direct.to_json());
    CHECK(two.mechanism.outputs() == direct.outputs());
    CHECK(two.mechanism.mechanism().probabilities() == direct.mechanism().probabilities());
    CHECK(two.budget.eps_prior == hist.eps);
    CHECK(two.eps() == two.budget.eps_prior + two.budget.eps_mechanism);
    CHECK(two.eps() <= eps);
    CHECK(two.delta() == 0);
    // The same draws give the same noisy labels through either mechanism.
    std::vector<double> snapped, a(labels.size()), b(labels.size());
    for (double y : labels) snapped.push_back(disc(y));
    SeededRandom s1(7), s2(7);
    two.mechanism.sample(std::span<const double>(snapped), std::span<double>(a), s1);
    direct.sample(std::span<const double>(snapped), std::span<double>(b), s2);
    CHECK(a == b);
  }
  SECTION("optimal unbiased randomizer (Badanidiyuru et al. 2023, Alg. 3), real outputs and grid") {
    for (Index grid : {Index(0), Index(64)}) {
      INFO("grid_size " << grid);
      SeededRandom g1(42), g2(42);
      BuildOptimalUnbiased build;
      build.grid_size = grid;
      const auto two = make_two_stage(disc.support(), counts, split, g1, build);
      const auto hist = labeldp::private_histogram(disc.support(), std::span<const std::int64_t>(counts), eps1, g2);
      CHECK(two.prior_release.noisy_counts == hist.noisy_counts);
      const auto solved = grid == 0 ? labeldp::optimal_unbiased_continuous(hist.prior, split.eps_mechanism)
                                    : labeldp::optimal_unbiased_grid(hist.prior, split.eps_mechanism, grid);
      REQUIRE(solved.optimal());
      const labeldp::UnbiasedRandomizer<> direct(solved, split.eps_mechanism);
      CHECK(two.mechanism.to_json() == direct.to_json());
      CHECK(two.mechanism.mechanism().probabilities() == solved.mechanism.probabilities());
      CHECK(two.mechanism.mechanism().outputs() == solved.mechanism.outputs());
      REQUIRE(two.mechanism.report());
      CHECK(two.mechanism.report()->optimal());
      CHECK(two.mechanism.eps() == split.eps_mechanism);
      CHECK(two.eps() == two.budget.eps_prior + two.budget.eps_mechanism);
      CHECK(two.eps() <= eps);
      CHECK(labeldp::audit_epsilon(two.mechanism.mechanism()) <= split.eps_mechanism * (1 + 1e-12));
    }
  }
  SECTION("RPWithPrior (Alg. 3 with Hist_eps), zeta chosen or given") {
    std::vector<double> edges;
    for (int i = 0; i <= 20; ++i) edges.push_back(0.25 * i);
    const labeldp::HistEpsOptions opt{0.0, 5.0, eps1, 0.05};
    for (double zeta : {0.0, 0.3}) {
      INFO("zeta " << zeta);
      SeededRandom g1(43), g2(43);
      const BuildRPWithPrior<> build{zeta, 1e-3, labeldp::OutsideRule::Clamp};
      const auto two = make_two_stage(labeldp::hist_eps(labels, edges, opt, g1), split.eps_mechanism, build);
      const auto hist = labeldp::hist_eps(labels, edges, opt, g2);
      CHECK(two.prior_release.noisy_labels == hist.noisy_labels);
      const double z = zeta != 0 ? zeta : labeldp::choose_zeta(hist.prior, split.eps_mechanism).zeta;
      const auto direct = labeldp::RPWithPrior<>::optimal(hist.prior, split.eps_mechanism, z, 1e-3);
      CHECK(two.mechanism.to_json() == direct.to_json());
      CHECK(two.mechanism.zeta() == z);
      // eps1 is Hist_eps's realized guarantee, at most the eps1 asked for.
      CHECK(two.budget.eps_prior == hist.epsilon);
      CHECK(two.budget.eps_prior <= eps1);
      CHECK(two.budget.eps_mechanism == split.eps_mechanism);
      CHECK(two.eps() == two.budget.eps_prior + two.budget.eps_mechanism);
      CHECK(two.eps() <= eps);
    }
  }
}

TEST_CASE("two-stage: two_stage_privatize with the unbiased builder is reproducible and unbiased in range",
          "[two_stage]") {
  const auto disc = Discretizer<>::grid(0.0, 5.0, 0.25);
  const auto labels = grid_labels();
  SeededRandom g1(9), g2(9);
  const auto a = labeldp::two_stage_privatize(disc, std::span<const double>(labels), 2.0, g1, BuildOptimalUnbiased{});
  const auto b = labeldp::two_stage_privatize(disc, std::span<const double>(labels), 2.0, g2, BuildOptimalUnbiased{});
  REQUIRE(a.noisy_labels.size() == labels.size());
  CHECK(a.noisy_labels == b.noisy_labels);
  CHECK(a.two_stage.eps() == Approx(2.0).epsilon(1e-15));
  CHECK(a.two_stage.eps() <= 2.0);
  const auto& m = a.two_stage.mechanism.mechanism();
  for (Index i = 0; i < m.num_inputs(); ++i) CHECK(m.conditional_mean(i) == Approx(m.inputs()[i]).margin(1e-9));
}

TEST_CASE("two-stage: the RPWithPrior two-stage is reproducible with a seeded generator", "[two_stage]") {
  const auto labels = grid_labels();
  const std::vector<double> edges = {0, 1, 2, 3, 4, 5};
  const labeldp::HistEpsOptions opt{0.0, 5.0, 1.0, 0.05};
  std::vector<double> noisy[2];
  for (auto& out : noisy) {
    SeededRandom gen(17);
    const auto two = make_two_stage(labeldp::hist_eps(labels, edges, opt, gen), 1.0, BuildRPWithPrior<>{});
    out.resize(labels.size());
    two.mechanism.sample(std::span<const double>(labels), std::span<double>(out), gen);
  }
  CHECK(noisy[0] == noisy[1]);
}

TEST_CASE("two-stage rejects a budget above eps", "[two_stage]") {
  SeededRandom gen(1);
  const std::vector<double> labels = {0.5, 1.0};
  REQUIRE_THROWS_AS(labeldp::two_stage_privatize(Discretizer<>::grid(0.0, 1.0, 0.5), labels, 2.0, gen,
                                                 BuildRROnBins<>{}, BudgetSplit::of(1.0, 1.5)),
                    std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::two_stage_privatize(Discretizer<>::grid(0.0, 1.0, 0.5), labels, 2.0, gen,
                                                   BuildRROnBins<>{}, BudgetSplit::of(1.0, 1.5)),
                      "'budget' spends 2.5, more than 'eps' = 2");
}
TEST_CASE("two-stage rejects eps_mechanism = 0 before building (RPWithPrior)", "[two_stage]") {
  SeededRandom gen(1);
  const std::vector<double> labels{0.5}, edges{0, 1};
  const auto hist = labeldp::hist_eps(labels, edges, labeldp::HistEpsOptions{0.0, 1.0, 0.5, 0.01}, gen);
  REQUIRE_THROWS_AS(make_two_stage(hist, 0.0, BuildRPWithPrior<>{}), std::invalid_argument);
  REQUIRE_THROWS_WITH(make_two_stage(hist, 0.0, BuildRPWithPrior<>{}),
                      "'eps_mechanism' must be finite and positive, got 0");
}
TEST_CASE("two-stage rejects a builder whose mechanism spends more than eps_mechanism", "[two_stage]") {
  SeededRandom gen(1);
  const Counts c = {3, 4};
  const auto hist = labeldp::private_histogram(vec({0, 1}), c, 1.0, gen);
  const auto greedy = [](const FinitePrior<>& p, double e) { return labeldp::optimal_rr_on_bins(p, 2 * e); };
  REQUIRE_THROWS_AS(make_two_stage(hist, 0.5, greedy), std::invalid_argument);
  REQUIRE_THROWS_WITH(make_two_stage(hist, 0.5, greedy),
                      "the builder returned a mechanism with eps 1 above 'eps_mechanism' = 0.5");
}
TEST_CASE("BuildOptimalUnbiased rejects grid_size = 1", "[two_stage][validation]") {
  BuildOptimalUnbiased build;
  build.grid_size = 1;
  REQUIRE_THROWS_AS(build.check(), std::invalid_argument);
  REQUIRE_THROWS_WITH(build.check(), "'grid_size' must be 0 (continuous outputs) or at least 2, got 1");
  SeededRandom gen(1);
  const Counts c = {3, 4};
  REQUIRE_THROWS_WITH(make_two_stage(vec({0, 1}), c, BudgetSplit::of(1, 1), gen, build),
                      "'grid_size' must be 0 (continuous outputs) or at least 2, got 1");
}
TEST_CASE("BuildOptimalUnbiased rejects a bad option by its name", "[two_stage][validation]") {
  BuildOptimalUnbiased build;
  build.options.max_bias = -0.5;
  REQUIRE_THROWS_AS(build.check(), std::invalid_argument);
  REQUIRE_THROWS_WITH(build.check(), Contains("'max_bias' must be finite and non-negative, got -0.5"));
}
TEST_CASE("BuildRPWithPrior rejects a negative zeta", "[two_stage][validation]") {
  const BuildRPWithPrior<> build{-1.0, 1e-6, labeldp::OutsideRule::Clamp};
  REQUIRE_THROWS_AS(build.check(), std::invalid_argument);
  REQUIRE_THROWS_WITH(build.check(), "'zeta' must be finite and positive, got -1");
}
TEST_CASE("BuildRPWithPrior rejects a NaN zeta", "[two_stage][validation]") {
  const BuildRPWithPrior<> build{std::numeric_limits<double>::quiet_NaN(), 1e-6, labeldp::OutsideRule::Clamp};
  REQUIRE_THROWS_WITH(build.check(), "'zeta' must be finite and positive, got nan");
}
TEST_CASE("BuildRPWithPrior rejects granularity = 0", "[two_stage][validation]") {
  const BuildRPWithPrior<> build{0.0, 0.0, labeldp::OutsideRule::Clamp};
  REQUIRE_THROWS_AS(build.check(), std::invalid_argument);
  REQUIRE_THROWS_WITH(build.check(), "'granularity' must be finite and positive, got 0");
  const auto prior = labeldp::HistogramPrior<>::from_masses({0, 1}, {1});
  REQUIRE_THROWS_WITH(build(prior, 1.0), "'granularity' must be finite and positive, got 0");
}
