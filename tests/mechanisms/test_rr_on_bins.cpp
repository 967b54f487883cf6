// RR-on-Bins (Ghazi et al., ICLR 2023, Algorithms 1-2): the production solver against the
// paper's O(k^3) algorithm as printed, against exhaustive enumeration of interval partitions,
// against GLPK's optimum over ALL eps-DP mechanisms (Theorem 5); exact privacy audits of the
// exact and of the realized sampler matrices; chi-square goodness of fit of the sampler; and
// one test per rejected input.
#include <glpk.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/mechanisms/detail/rr_on_bins_reference.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "oracles/counting_random.hpp"
#include "oracles/glpk_oracle.hpp"
#include "oracles/statistics.hpp"

using labeldp::AbsoluteLoss;
using labeldp::FiniteMechanism;
using labeldp::FinitePrior;
using labeldp::Index;
using labeldp::PoissonLogLoss;
using labeldp::RROnBins;
using labeldp::SquaredLoss;
using labeldp::Vector;

namespace {

// Huber loss (delta = 1): continuous and monotone away from y in both arguments (Assumption 4),
// but none of the built-in closed forms apply, so the solver takes its generic path.
struct HuberLoss {
  double operator()(double o, double y) const {
    const double a = std::abs(o - y);
    return a <= 1 ? 0.5 * a * a : a - 0.5;
  }
  // Weighted minimizer by bisection on the (monotone) derivative over [min y, max y].
  double minimize(std::span<const double> values, std::span<const double> weights) const {
    double lo = values.front(), hi = values.back();
    for (int it = 0; it < 200 && lo < hi; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (mid <= lo || mid >= hi) break;
      double g = 0;
      for (std::size_t i = 0; i < values.size(); ++i) g += weights[i] * std::clamp(mid - values[i], -1.0, 1.0);
      (g < 0 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  }
  std::string name() const { return "huber"; }
  void validate_label(double y) const { labeldp::validate_finite("label", y); }
};

// Squared loss behind a different type: forces the generic bin-cost path (loss.minimize on all
// values), an independent check of the prefix-sum formulas.
struct OpaqueSquaredLoss {
  double operator()(double o, double y) const { return (o - y) * (o - y); }
  double minimize(std::span<const double> v, std::span<const double> w) const { return SquaredLoss<>{}.minimize(v, w); }
  std::string name() const { return "opaque-squared"; }
  void validate_label(double y) const { labeldp::validate_finite("label", y); }
};

struct BruteForce {
  double best = std::numeric_limits<double>::infinity();
  double second = std::numeric_limits<double>::infinity();  // best loss of a different Phi
  Vector<double> phi;
};

// Exhaustive oracle: every partition of the sorted values into intervals (2^(k-1) of them),
// each bin with its optimal output (loss.minimize over all values, weights p_y e^{eps [y in bin]},
// the definition of L[r][i]); the matrix of Algorithm 1 is built directly (equal outputs merged,
// columns sorted) and its loss evaluated by FiniteMechanism::expected_loss.
template <typename Loss>
BruteForce brute_force(const FinitePrior<double>& prior, double eps, const Loss& loss) {
  const Index k = prior.size();
  const std::vector<double> values(prior.values().data(), prior.values().data() + k);
  BruteForce out;
  std::map<std::vector<double>, double> seen;
  for (unsigned mask = 0; mask < (1u << (k - 1)); ++mask) {
    std::vector<Index> starts{0};
    for (Index i = 1; i < k; ++i)
      if (mask & (1u << (i - 1))) starts.push_back(i);
    const Index d = Index(starts.size());
    std::vector<double> outs;
    for (Index b = 0; b < d; ++b) {
      const Index lo = starts[std::size_t(b)], hi = b + 1 < d ? starts[std::size_t(b + 1)] : k;
      std::vector<double> w(static_cast<std::size_t>(k));
      for (Index j = 0; j < k; ++j)
        w[std::size_t(j)] = prior.probability(j) * (j >= lo && j < hi ? std::exp(eps) : 1.0);
      outs.push_back(loss.minimize(std::span<const double>(values), std::span<const double>(w)));
    }
    // Distinct sorted outputs; probabilities of equal outputs add up.
    std::vector<double> distinct(outs);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const double own = std::exp(eps) / (std::exp(eps) + double(d) - 1), other = 1 / (std::exp(eps) + double(d) - 1);
    labeldp::Matrix<double> P = labeldp::Matrix<double>::Zero(k, Index(distinct.size()));
    std::vector<double> phi(static_cast<std::size_t>(k));
    for (Index i = 0; i < k; ++i) {
      Index bin = 0;
      while (bin + 1 < d && starts[std::size_t(bin + 1)] <= i) ++bin;
      phi[std::size_t(i)] = outs[std::size_t(bin)];
      for (Index b = 0; b < d; ++b) {
        const Index col =
            Index(std::lower_bound(distinct.begin(), distinct.end(), outs[std::size_t(b)]) - distinct.begin());
        P(i, col) += b == bin ? own : other;
      }
    }
    const Vector<double> o = Eigen::Map<const Vector<double>>(distinct.data(), Index(distinct.size()));
    const double v = FiniteMechanism<double>(prior.values(), o, P).expected_loss(prior, loss);
    seen[phi] = std::min(seen.count(phi) ? seen[phi] : v, v);
  }
  for (const auto& [phi, v] : seen) {
    if (v < out.best) {
      out.second = out.best;
      out.best = v;
      out.phi = Eigen::Map<const Vector<double>>(phi.data(), Index(phi.size()));
    } else if (v < out.second) {
      out.second = v;
    }
  }
  return out;
}

struct RandomCase {
  FinitePrior<double> prior;
  double eps;
  bool has_zero;
};

// A random prior with k in [1, kmax] values (integers or reals, optionally non-negative), some
// cases with zero-probability values, and eps log-uniform in [0.01, 20].
RandomCase random_case(std::mt19937_64& rng, Index kmax, bool nonnegative) {
  std::uniform_int_distribution<Index> kd(1, kmax);
  const Index k = kd(rng);
  std::uniform_real_distribution<double> u(0, 1);
  const bool integers = u(rng) < 0.5, zeros = u(rng) < 0.25;
  std::vector<double> values, probs;
  double x = nonnegative ? (integers ? 0.0 : 0.1 * u(rng)) : std::floor(-10 * u(rng));
  bool has_zero = false;
  for (Index i = 0; i < k; ++i) {
    values.push_back(x);
    x += integers ? double(1 + int(4 * u(rng))) : 0.05 + 5 * u(rng) * u(rng);
    double p = u(rng) * u(rng) + 1e-3;
    if (zeros && k > 1 && u(rng) < 0.3) {
      p = 0;
      has_zero = true;
    }
    probs.push_back(p);
  }
  if (std::all_of(probs.begin(), probs.end(), [](double p) { return p == 0; })) probs[0] = 1, has_zero = k > 1;
  const double eps = std::exp(std::log(0.01) + (std::log(20.0) - std::log(0.01)) * u(rng));
  return {FinitePrior<double>::from_weights(values, probs), eps, has_zero};
}

bool close(double a, double b, double rel = 1e-9) {
  return std::abs(a - b) <= rel * std::max({std::abs(a), std::abs(b), 1e-300}) + 1e-15;
}

template <typename Loss>
void check_against_oracles(const Loss& loss, bool nonnegative, std::uint64_t seed, int cases) {
  std::mt19937_64 rng(seed);
  int compared_phi = 0;
  for (int c = 0; c < cases; ++c) {
    const RandomCase rc = random_case(rng, 10, nonnegative);
    const auto& prior = rc.prior;
    INFO("case " << c << ", loss " << loss.name() << ", k = " << prior.size() << ", eps = " << rc.eps);
    const auto sol = labeldp::solve_rr_on_bins(prior, rc.eps, loss);
    const auto ref = labeldp::detail::rr_on_bins_reference(prior, rc.eps, loss);
    const auto brute = brute_force(prior, rc.eps, loss);
    const double production = sol.mechanism.expected_loss(prior, loss);
    const double via_matrix = sol.mechanism.mechanism().expected_loss(prior, loss);
    INFO("production " << production << ", solver value " << sol.expected_loss << ", reference " << ref.expected_loss
                       << ", brute force " << brute.best);
    REQUIRE(sol.status == labeldp::optim::SolveStatus::Optimal);
    CHECK(close(production, brute.best));
    CHECK(close(via_matrix, brute.best));
    CHECK(close(sol.expected_loss, brute.best));
    CHECK(close(ref.expected_loss, brute.best));
    // Phi itself must match wherever the optimum is unique (no zero-probability values, whose
    // bin assignment is a tie, and a clear gap to the second-best Phi).
    if (!rc.has_zero && brute.second > brute.best + 1e-7 * std::abs(brute.best) + 1e-12) {
      ++compared_phi;
      for (Index i = 0; i < prior.size(); ++i) {
        INFO("value index " << i);
        CHECK(sol.mechanism.phi(i) == Approx(brute.phi[i]).epsilon(1e-7).margin(1e-9));
        CHECK(ref.phi[i] == Approx(brute.phi[i]).epsilon(1e-7).margin(1e-9));
      }
    }
    const double bound = rc.eps * (1 + 1e-12);
    CHECK(labeldp::audit_epsilon(sol.mechanism.mechanism()) <= bound);
    CHECK(labeldp::audit_epsilon(sol.mechanism.realized_probabilities()) <= bound);
  }
  CHECK(compared_phi > cases / 2);  // the Phi comparison really ran
}

}  // namespace

TEST_CASE("RR-on-Bins: the paper's example (prior {0: 0.6, 1: 0.25, 2: 0.15}, eps 0.5, squared)", "[rr_on_bins]") {
  const auto prior = FinitePrior<double>::from_weights({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  const auto rr = labeldp::optimal_rr_on_bins(prior, 0.5);
  REQUIRE(rr.num_outputs() == 2);
  CHECK(rr.phi(0) == Approx(0.396).margin(0.0005));
  CHECK(rr.phi(1) == Approx(0.720).margin(0.0005));
  CHECK(rr.phi(2) == rr.phi(1));
  CHECK(rr.bin_of(0) == 0);
  CHECK(rr.bin_of(2) == 1);
  const auto ref = labeldp::detail::rr_on_bins_reference(prior, 0.5);
  CHECK(ref.bins == 2);
  CHECK(rr.expected_loss(prior) == Approx(ref.expected_loss).epsilon(1e-12));
}

TEST_CASE("RR-on-Bins: production == Algorithm 2 as printed == exhaustive enumeration (squared)", "[rr_on_bins]") {
  check_against_oracles(SquaredLoss<>{}, false, 11, 300);
}

TEST_CASE("RR-on-Bins: production == Algorithm 2 as printed == exhaustive enumeration (absolute)", "[rr_on_bins]") {
  check_against_oracles(AbsoluteLoss<>{}, false, 12, 300);
}

TEST_CASE("RR-on-Bins: production == Algorithm 2 as printed == exhaustive enumeration (Poisson)", "[rr_on_bins]") {
  check_against_oracles(PoissonLogLoss<>{}, true, 13, 300);
}

TEST_CASE("RR-on-Bins: production == Algorithm 2 as printed == exhaustive enumeration (user Huber loss)",
          "[rr_on_bins]") {
  check_against_oracles(HuberLoss{}, false, 14, 200);
}

TEST_CASE("RR-on-Bins: production == Algorithm 2 as printed at k up to 120", "[rr_on_bins]") {
  std::mt19937_64 rng(21);
  std::lognormal_distribution<double> wage(6.3, 0.6);
  for (int c = 0; c < 12; ++c) {
    // Heavy-tailed wage-like labels rounded to 10s: many distinct values, uneven probabilities.
    std::vector<double> labels;
    const int n = 200 + 100 * c;
    for (int t = 0; t < n; ++t) labels.push_back(10 * std::round(wage(rng) / 10));
    const auto prior = FinitePrior<double>::from_labels(labels);
    const double eps = std::exp(std::uniform_real_distribution<double>(std::log(0.05), std::log(8.0))(rng));
    INFO("k = " << prior.size() << ", eps = " << eps);
    SECTION("squared") {
      const auto sol = labeldp::solve_rr_on_bins(prior, eps, SquaredLoss<>{});
      const auto ref = labeldp::detail::rr_on_bins_reference(prior, eps, SquaredLoss<>{});
      CHECK(close(sol.mechanism.expected_loss(prior), ref.expected_loss));
      CHECK(sol.iterations <= 10);
    }
    SECTION("absolute") {
      const auto sol = labeldp::solve_rr_on_bins(prior, eps, AbsoluteLoss<>{});
      const auto ref = labeldp::detail::rr_on_bins_reference(prior, eps, AbsoluteLoss<>{});
      CHECK(close(sol.mechanism.expected_loss(prior, AbsoluteLoss<>{}), ref.expected_loss));
    }
    SECTION("Poisson") {
      const auto sol = labeldp::solve_rr_on_bins(prior, eps, PoissonLogLoss<>{});
      const auto ref = labeldp::detail::rr_on_bins_reference(prior, eps, PoissonLogLoss<>{});
      CHECK(close(sol.mechanism.expected_loss(prior, PoissonLogLoss<>{}), ref.expected_loss));
    }
    SECTION("generic path (squared loss behind an opaque type) == prefix-sum path") {
      const auto a = labeldp::solve_rr_on_bins(prior, eps, OpaqueSquaredLoss{});
      const auto b = labeldp::solve_rr_on_bins(prior, eps, SquaredLoss<>{});
      CHECK(close(a.mechanism.expected_loss(prior), b.mechanism.expected_loss(prior)));
    }
  }
}

TEST_CASE("RR-on-Bins: production == Algorithm 2 as printed above the warm-start size (k > 256)", "[rr_on_bins]") {
  // k > 256 switches on the coarse-grid and window warm starts before the full DP.
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(0, 1);
  for (const double eps : {0.3, 2.0, 6.0}) {
    std::vector<double> values, probs;
    for (int j = 0; j < 300; ++j) {
      values.push_back(j + 0.5 * u(rng));
      probs.push_back(std::exp(-0.5 * std::pow((j - 90.0) / 40.0, 2)) * (0.5 + u(rng)) + 1e-4);
    }
    const auto prior = FinitePrior<double>::from_weights(values, probs);
    INFO("eps = " << eps);
    const auto sq = labeldp::solve_rr_on_bins(prior, eps, SquaredLoss<>{});
    CHECK(close(sq.mechanism.expected_loss(prior), labeldp::detail::rr_on_bins_reference(prior, eps).expected_loss));
    const auto ab = labeldp::solve_rr_on_bins(prior, eps, AbsoluteLoss<>{});
    CHECK(close(ab.mechanism.expected_loss(prior, AbsoluteLoss<>{}),
                labeldp::detail::rr_on_bins_reference(prior, eps, AbsoluteLoss<>{}).expected_loss));
    const auto po = labeldp::solve_rr_on_bins(prior, eps, PoissonLogLoss<>{});
    CHECK(close(po.mechanism.expected_loss(prior, PoissonLogLoss<>{}),
                labeldp::detail::rr_on_bins_reference(prior, eps, PoissonLogLoss<>{}).expected_loss));
    CHECK(sq.status == labeldp::optim::SolveStatus::Optimal);
    CHECK(sq.iterations <= 3);
  }
}

TEST_CASE("RR-on-Bins: warm-started solver == Algorithm 2 on random priors with zero-probability values (k > 256)",
          "[rr_on_bins]") {
  std::mt19937_64 rng(51);
  std::uniform_real_distribution<double> u(0, 1);
  for (int c = 0; c < 4; ++c) {
    std::vector<double> values, probs;
    double x = 0;
    for (int j = 0; j < 260 + 10 * c; ++j) {
      values.push_back(x);
      x += 0.1 + u(rng) * u(rng) * 3;
      probs.push_back(u(rng) < 0.2 ? 0.0 : u(rng) * u(rng));
    }
    const auto prior = FinitePrior<double>::from_weights(values, probs);
    const double eps = std::exp(std::log(0.01) + (std::log(20.0) - std::log(0.01)) * u(rng));
    INFO("case " << c << ", eps = " << eps);
    CHECK(close(labeldp::optimal_rr_on_bins(prior, eps).expected_loss(prior),
                labeldp::detail::rr_on_bins_reference(prior, eps).expected_loss));
    CHECK(close(labeldp::optimal_rr_on_bins(prior, eps, AbsoluteLoss<>{}).expected_loss(prior, AbsoluteLoss<>{}),
                labeldp::detail::rr_on_bins_reference(prior, eps, AbsoluteLoss<>{}).expected_loss));
    CHECK(close(labeldp::optimal_rr_on_bins(prior, eps, PoissonLogLoss<>{}).expected_loss(prior, PoissonLogLoss<>{}),
                labeldp::detail::rr_on_bins_reference(prior, eps, PoissonLogLoss<>{}).expected_loss));
  }
}

namespace {

// A prior on k values with ties everywhere the screened absolute-loss DP could trip: integer
// labels with repeated gaps, probabilities drawn from a few levels (many exact ties in the bin
// costs), about a quarter of the values with probability zero; shape 1 adds a far outlier,
// shape 2 puts most of the mass on the largest values (global median near the right end, so
// that most outputs stay left of it for most rows: the DP's "linear" outputs).
FinitePrior<double> tied_prior(std::mt19937_64& rng, Index k, int shape) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> values, probs;
  double x = 0;
  for (Index j = 0; j < k; ++j) {
    values.push_back(x);
    x += 1 + int(3 * u(rng)) * int(3 * u(rng));
    const double level = double(int(4 * u(rng)));  // 0, 1, 2 or 3
    const double tilt = shape == 2 ? std::floor(8 * std::pow(double(j) / double(k), 4)) : 1.0;
    probs.push_back(u(rng) < 0.25 ? 0.0 : level * tilt);
  }
  if (shape == 1) values.back() += 50 * x;
  if (std::all_of(probs.begin(), probs.end(), [](double p) { return p == 0; })) probs[0] = 1;
  return FinitePrior<double>::from_weights(values, probs);
}

}  // namespace

TEST_CASE("RR-on-Bins: screened absolute-loss DP == the plain O(k^2) segmentation DP on median bin costs",
          "[rr_on_bins]") {
  // The production DP swaps the minima over bin start and output, skips blocks of outputs by a
  // lower bound and catches their running minima up later. The oracle is the textbook DP
  // F[i] = min_r F[r] + L([r, i)) - c with L from the weighted median (binary search), at the
  // Dinkelbach value of the optimum and at other c, for every row i.
  std::mt19937_64 rng(71);
  for (const Index k : {Index(200), Index(700), Index(1500)})
    for (const int shape : {0, 1, 2})
      for (const double eps : {0.05, 1.0, 4.0, 12.0}) {
        const auto prior = tied_prior(rng, k, shape);
        const auto scale = labeldp::detail::RROnBinsScale::from_eps(eps);
        const labeldp::detail::AbsoluteBinCost<double> model(prior, scale);
        const double lambda = labeldp::solve_rr_on_bins(prior, eps, AbsoluteLoss<>{}).expected_loss;
        for (const double c : {lambda * scale.alpha, 0.0, 0.5 * lambda * scale.alpha, 3 * lambda * scale.alpha}) {
          INFO("k = " << k << ", shape " << shape << ", eps = " << eps << ", c = " << c);
          std::vector<double> F;
          std::vector<Index> arg;
          model.dp(c, F, arg);
          std::vector<double> G(std::size_t(k + 1), 0.0);
          for (Index i = 1; i <= k; ++i) {
            double best = std::numeric_limits<double>::infinity();
            for (Index r = 0; r < i; ++r) best = std::min(best, G[std::size_t(r)] + model.cost(r, i));
            G[std::size_t(i)] = best - c;
          }
          const double magnitude = model.cost(0, k) + c * double(k);
          int mismatches = 0;
          for (Index i = 0; i <= k; ++i)
            if (std::abs(F[std::size_t(i)] - G[std::size_t(i)]) > 1e-10 * magnitude) ++mismatches;
          CHECK(mismatches == 0);
          // The traced partition attains F[k].
          double traced = 0;
          for (Index i = k; i > 0; i = arg[std::size_t(i)]) {
            REQUIRE(arg[std::size_t(i)] < i);
            traced += model.cost(arg[std::size_t(i)], i) - c;
          }
          CHECK(std::abs(traced - G[std::size_t(k)]) <= 1e-10 * magnitude);
        }
      }
}

TEST_CASE("RR-on-Bins: absolute loss == Algorithm 2 as printed with zero-probability values and ties (k > 256)",
          "[rr_on_bins]") {
  std::mt19937_64 rng(72);
  for (const Index k : {Index(400), Index(520)})
    for (const double eps : {0.05, 1.0, 4.0, 12.0}) {
      const auto prior = tied_prior(rng, k, eps > 3 ? 1 : (eps < 0.5 ? 2 : 0));
      INFO("k = " << k << ", eps = " << eps);
      const auto sol = labeldp::solve_rr_on_bins(prior, eps, AbsoluteLoss<>{});
      const auto ref = labeldp::detail::rr_on_bins_reference(prior, eps, AbsoluteLoss<>{});
      REQUIRE(sol.status == labeldp::optim::SolveStatus::Optimal);
      CHECK(close(sol.mechanism.expected_loss(prior, AbsoluteLoss<>{}), ref.expected_loss));
      CHECK(close(sol.expected_loss, ref.expected_loss));
      CHECK(labeldp::audit_epsilon(sol.mechanism.mechanism()) <= eps * (1 + 1e-12));
    }
}

namespace {

// min over ALL eps-DP mechanisms from the prior's values to `outputs` of the expected loss
// (LP: rows sum to 1, P[y][o] <= e^eps P[y'][o]), solved by GLPK.
template <typename Loss>
double glpk_optimal_loss(const FinitePrior<double>& prior, const std::vector<double>& outputs, double eps,
                         const Loss& loss) {
  const int k = int(prior.size()), n = int(outputs.size());
  std::vector<Eigen::Triplet<double>> t;
  std::vector<labeldp::optim::RowType> types;
  std::vector<double> b;
  int row = 0;
  for (int y = 0; y < k; ++y, ++row) {
    for (int o = 0; o < n; ++o) t.emplace_back(row, y * n + o, 1.0);
    types.push_back(labeldp::optim::RowType::Equal);
    b.push_back(1);
  }
  for (int o = 0; o < n; ++o)
    for (int y = 0; y < k; ++y)
      for (int z = 0; z < k; ++z)
        if (y != z) {
          t.emplace_back(row, y * n + o, 1.0);
          t.emplace_back(row, z * n + o, -std::exp(eps));
          types.push_back(labeldp::optim::RowType::LessEqual);
          b.push_back(0);
          ++row;
        }
  labeldp::test::SparseLinearProgram lp;
  lp.A.resize(row, k * n);
  lp.A.setFromTriplets(t.begin(), t.end());
  lp.b = Eigen::Map<const Eigen::VectorXd>(b.data(), row);
  lp.row_types = types;
  lp.c.resize(k * n);
  for (int y = 0; y < k; ++y)
    for (int o = 0; o < n; ++o) lp.c[y * n + o] = prior.probability(y) * loss(outputs[std::size_t(o)], prior.value(y));
  const auto r = labeldp::test::solve_with_glpk(lp);
  REQUIRE(r.status == labeldp::optim::SolveStatus::Optimal);
  return r.objective;
}

}  // namespace

TEST_CASE("RR-on-Bins: optimal among ALL eps-DP mechanisms (Theorem 5) — GLPK's LP optimum", "[rr_on_bins]") {
  std::mt19937_64 rng(41);
  for (int c = 0; c < 12; ++c) {
    const RandomCase rc = random_case(rng, 5, true);
    const auto& prior = rc.prior;
    const double lo = prior.value(0), hi = prior.value(prior.size() - 1);
    auto check = [&](const auto& loss) {
      const auto rr = labeldp::optimal_rr_on_bins(prior, rc.eps, loss);
      // Outputs: the mechanism's own plus a 24-point grid over the label range (Poisson: > 0).
      std::vector<double> outs(rr.outputs().data(), rr.outputs().data() + rr.num_outputs());
      for (int g = 0; g < 24; ++g) {
        const double o = lo + (hi - lo) * (g + 0.5) / 24;
        if (o > 0 || loss.name() != "poisson") outs.push_back(o);
      }
      const double lp = glpk_optimal_loss(prior, outs, rc.eps, loss);
      const double mine = rr.expected_loss(prior, loss);
      INFO("case " << c << ", loss " << loss.name() << ", k = " << prior.size() << ", eps = " << rc.eps << ": LP " << lp
                   << ", RR-on-Bins " << mine);
      const double tol = 1e-7 * std::max(1.0, std::abs(mine));
      CHECK(lp <= mine + tol);  // RR-on-Bins is feasible for the LP
      CHECK(lp >= mine - tol);  // and nothing on this output set beats it
    };
    check(SquaredLoss<>{});
    check(AbsoluteLoss<>{});
    check(PoissonLogLoss<>{});
  }
}

TEST_CASE("RR-on-Bins: edge cases (k = 1, zero-probability values, point masses)", "[rr_on_bins]") {
  SECTION("k = 1: the trivial mechanism") {
    const auto prior = FinitePrior<double>::from_weights({3.5}, {1.0});
    const auto rr = labeldp::optimal_rr_on_bins(prior, 1.0);
    REQUIRE(rr.num_outputs() == 1);
    CHECK(rr.phi(0) == 3.5);
    CHECK(rr.expected_loss(prior) == 0);
    labeldp::SeededRandom gen(1);
    for (int t = 0; t < 100; ++t) CHECK(rr.sample(3.5, gen) == 3.5);
    CHECK(labeldp::audit_epsilon(rr.mechanism()) == 0);
  }
  SECTION("point mass among zero-probability values: one bin, loss 0") {
    const auto prior = FinitePrior<double>::from_weights({0.0, 1.0, 2.0, 5.0}, {0.0, 1.0, 0.0, 0.0});
    for (const double eps : {0.1, 1.0, 10.0}) {
      const auto sq = labeldp::optimal_rr_on_bins(prior, eps);
      CHECK(sq.num_outputs() == 1);
      CHECK(sq.expected_loss(prior) == Approx(0).margin(1e-12));
      const auto ab = labeldp::optimal_rr_on_bins(prior, eps, AbsoluteLoss<>{});
      CHECK(ab.expected_loss(prior, AbsoluteLoss<>{}) == Approx(0).margin(1e-12));
    }
  }
  SECTION("Poisson with all mass on label 0") {
    const auto prior = FinitePrior<double>::from_weights({0.0, 3.0}, {1.0, 0.0});
    const auto sol = labeldp::solve_rr_on_bins(prior, 1.0, PoissonLogLoss<>{});
    CHECK(sol.mechanism.num_outputs() == 1);
    CHECK(sol.mechanism.expected_loss(prior, PoissonLogLoss<>{}) == 0);
  }
  SECTION("zero-probability values at both ends and inside, every loss, against the brute force") {
    const auto prior =
        FinitePrior<double>::from_weights({0.0, 1.0, 2.0, 4.0, 7.0, 8.0, 9.0}, {0.0, 0.3, 0.0, 0.2, 0.4, 0.1, 0.0});
    for (const double eps : {0.05, 0.7, 3.0, 15.0}) {
      INFO("eps = " << eps);
      CHECK(close(labeldp::optimal_rr_on_bins(prior, eps).expected_loss(prior),
                  brute_force(prior, eps, SquaredLoss<>{}).best));
      CHECK(close(labeldp::optimal_rr_on_bins(prior, eps, AbsoluteLoss<>{}).expected_loss(prior, AbsoluteLoss<>{}),
                  brute_force(prior, eps, AbsoluteLoss<>{}).best));
      CHECK(close(labeldp::optimal_rr_on_bins(prior, eps, PoissonLogLoss<>{}).expected_loss(prior, PoissonLogLoss<>{}),
                  brute_force(prior, eps, PoissonLogLoss<>{}).best));
    }
  }
}

TEST_CASE("RR-on-Bins: Algorithm 1's matrix and the sampler's realized matrix audit to eps", "[rr_on_bins]") {
  const Vector<double> inputs = (Vector<double>(6) << -2, 0, 1, 3, 4, 10).finished();
  const Vector<double> phi = (Vector<double>(6) << -1, -1, 2, 2, 3.5, 10).finished();
  for (const double eps : {1e-3, 0.01, 0.5, std::log(5.0), 1.0, 3.0, 10.0, 20.0, 30.0}) {
    INFO("eps = " << eps);
    const RROnBins<double> rr(inputs, phi, eps);
    REQUIRE(rr.num_outputs() == 4);
    const auto mech = rr.mechanism();
    // Exact entries of Algorithm 1.
    const double e = std::exp(eps);
    CHECK(mech.probabilities()(0, 0) == Approx(e / (e + 3)).epsilon(1e-14));
    CHECK(mech.probabilities()(0, 1) == Approx(1 / (e + 3)).epsilon(1e-12));
    const double audited = labeldp::audit_epsilon(mech);
    CHECK(audited <= eps * (1 + 1e-12));
    CHECK(audited >= eps * (1 - 1e-9));
    const double realized = labeldp::audit_epsilon(rr.realized_probabilities());
    CHECK(realized <= eps * (1 + 1e-12));
    // Integer weights of total 2^64: the small one, about 2^64 e^-eps, is rounded up by at most 1.
    CHECK(realized >= eps * (1 - 1e-9) - std::ldexp(std::exp(eps), -63));
    // Rows of the realized matrix are distributions.
    CHECK(rr.realized_probabilities().row(2).sum() == Approx(1).epsilon(1e-15));
  }
  SECTION("large eps: the sampler keeps 2^-64 on every other bin (more private, never less)") {
    for (const double eps : {30.0, 60.0, 300.0}) {
      const RROnBins<double> rr(inputs, phi, eps);
      const double realized = labeldp::audit_epsilon(rr.realized_probabilities());
      CHECK(realized <= eps);
      CHECK(realized >= std::min(eps, 64 * std::log(2.0)) * (1 - 1e-3));
      CHECK(rr.uniform_probability() > 0);
    }
  }
}

namespace {

// Chi-square of `n` samples of input index i against the exact row of Algorithm 1.
double sampler_p_value(const RROnBins<double>& rr, Index i, long long n, std::uint64_t seed,
                       const labeldp::Matrix<double>& rows, Index row_of_truth) {
  labeldp::SeededRandom gen(seed);
  std::vector<long long> counts(std::size_t(rr.num_outputs()), 0);
  const double y = rr.inputs()[i];
  for (long long t = 0; t < n; ++t) {
    const double o = rr.sample(y, gen);
    const Index j =
        Index(std::lower_bound(rr.outputs().data(), rr.outputs().data() + rr.num_outputs(), o) - rr.outputs().data());
    ++counts[std::size_t(j)];
  }
  std::vector<double> probs(std::size_t(rr.num_outputs()));
  for (Index j = 0; j < rr.num_outputs(); ++j) probs[std::size_t(j)] = rows(row_of_truth, j);
  return labeldp::test::chi_square(counts, probs).p_value;
}

}  // namespace

TEST_CASE("RR-on-Bins: sample() matches Algorithm 1's rows (chi-square, fixed seeds)", "[rr_on_bins]") {
  const auto prior = FinitePrior<double>::from_weights({0, 1, 2, 3, 5, 8, 13}, {0.3, 0.2, 0.15, 0.15, 0.1, 0.06, 0.04});
  const auto rr = labeldp::optimal_rr_on_bins(prior, 2.0);
  REQUIRE(rr.num_outputs() >= 3);
  const auto P = rr.mechanism().probabilities();
  for (Index i = 0; i < rr.num_inputs(); ++i) {
    INFO("input " << rr.inputs()[i]);
    CHECK(sampler_p_value(rr, i, 20000, 100 + std::uint64_t(i), P, i) > 1e-4);
  }
  // The test has power: the samples of the first input are rejected against the last input's row.
  CHECK(sampler_p_value(rr, 0, 20000, 7, P, rr.num_inputs() - 1) < 1e-6);
  // sample_index draws from the same distribution.
  labeldp::SeededRandom gen(5);
  std::vector<long long> counts(std::size_t(rr.num_outputs()), 0);
  for (int t = 0; t < 20000; ++t) ++counts[std::size_t(rr.sample_index(3, gen))];
  std::vector<double> row(P.row(3).data(), P.row(3).data() + P.cols());
  CHECK(labeldp::test::chi_square(counts, row).p_value > 1e-4);
}

TEST_CASE("RR-on-Bins: sample() matches Algorithm 1's rows, 2e6 draws per input and several eps",
          "[.][statistical][rr_on_bins]") {
  const auto prior =
      FinitePrior<double>::from_weights({0, 1, 2, 3, 5, 8, 13, 21}, {0.25, 0.2, 0.15, 0.12, 0.1, 0.08, 0.06, 0.04});
  for (const double eps : {0.05, 0.5, 2.0, 6.0}) {
    const auto rr = labeldp::optimal_rr_on_bins(prior, eps, AbsoluteLoss<>{});
    const auto P = rr.mechanism().probabilities();
    for (Index i = 0; i < rr.num_inputs(); ++i) {
      INFO("eps " << eps << ", input " << rr.inputs()[i] << ", d = " << rr.num_outputs());
      CHECK(sampler_p_value(rr, i, 2000000, 1000 + std::uint64_t(i), P, i) > 1e-5);
    }
  }
}

TEST_CASE("RR-on-Bins: label lookup", "[rr_on_bins]") {
  const Vector<double> inputs = (Vector<double>(4) << -1.5, 0.0, 2.25, 1e300).finished();
  const Vector<double> phi = (Vector<double>(4) << 0, 0, 1, 1).finished();
  const RROnBins<double> rr(inputs, phi, 1.0);
  for (Index i = 0; i < 4; ++i) CHECK(rr.input_index(inputs[i]) == i);
  CHECK(rr.input_index(-0.0) == 1);  // -0 == 0
  labeldp::SeededRandom gen(3);
  const double o = rr.sample(2.25, gen);
  CHECK((o == 0 || o == 1));
}

// ---- Rejected input: one test per value, checking type and message. ----

TEST_CASE("RR-on-Bins rejects eps = 0", "[rr_on_bins][validation]") {
  const Vector<double> v = Vector<double>::LinSpaced(3, 0, 2);
  REQUIRE_THROWS_AS(RROnBins<double>(v, v, 0.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(v, v, 0.0), Catch::Contains("'eps' must be finite and positive, got 0"));
}
TEST_CASE("RR-on-Bins rejects a negative eps", "[rr_on_bins][validation]") {
  const Vector<double> v = Vector<double>::LinSpaced(3, 0, 2);
  REQUIRE_THROWS_AS(RROnBins<double>(v, v, -1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(v, v, -1.0), Catch::Contains("'eps' must be finite and positive, got -1"));
}
TEST_CASE("RR-on-Bins rejects eps = NaN", "[rr_on_bins][validation]") {
  const Vector<double> v = Vector<double>::LinSpaced(3, 0, 2);
  REQUIRE_THROWS_AS(RROnBins<double>(v, v, std::nan("")), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(v, v, std::nan("")),
                      Catch::Contains("'eps' must be finite and positive, got nan"));
}
TEST_CASE("RR-on-Bins rejects eps = inf", "[rr_on_bins][validation]") {
  const Vector<double> v = Vector<double>::LinSpaced(3, 0, 2);
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(RROnBins<double>(v, v, inf), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(v, v, inf), Catch::Contains("'eps' must be finite and positive, got inf"));
}
TEST_CASE("optimal_rr_on_bins rejects eps = 0, negative, NaN and inf", "[rr_on_bins][validation]") {
  const auto prior = FinitePrior<double>::from_weights({0.0, 1.0}, {0.5, 0.5});
  for (const double eps : {0.0, -2.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    INFO("eps = " << eps);
    REQUIRE_THROWS_AS(labeldp::optimal_rr_on_bins(prior, eps), std::invalid_argument);
    REQUIRE_THROWS_WITH(labeldp::optimal_rr_on_bins(prior, eps), Catch::Contains("'eps' must be finite and positive"));
    REQUIRE_THROWS_WITH(labeldp::detail::rr_on_bins_reference(prior, eps),
                        Catch::Contains("'eps' must be finite and positive"));
  }
}
TEST_CASE("RR-on-Bins rejects a decreasing phi", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(3) << 0, 1, 2).finished();
  const Vector<double> phi = (Vector<double>(3) << 0, 0.5, 0.25).finished();
  REQUIRE_THROWS_AS(RROnBins<double>(in, phi, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(in, phi, 1.0),
                      Catch::Contains("'phi' must be non-decreasing (entry 2 follows 0.5), got 0.25"));
}
TEST_CASE("RR-on-Bins rejects phi and inputs of different sizes", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(3) << 0, 1, 2).finished();
  const Vector<double> phi = (Vector<double>(2) << 0, 1).finished();
  REQUIRE_THROWS_AS(RROnBins<double>(in, phi, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(in, phi, 1.0),
                      Catch::Contains("'phi' must have one entry per input (3), got 2"));
}
TEST_CASE("RR-on-Bins rejects empty inputs", "[rr_on_bins][validation]") {
  const Vector<double> none(0);
  REQUIRE_THROWS_AS(RROnBins<double>(none, none, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(none, none, 1.0), Catch::Contains("'inputs' must not be empty"));
}
TEST_CASE("RR-on-Bins rejects inputs that are not strictly increasing", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(3) << 0, 1, 1).finished();
  REQUIRE_THROWS_AS(RROnBins<double>(in, in, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(in, in, 1.0),
                      Catch::Contains("'inputs' must be strictly increasing (entry 2 follows 1), got 1"));
}
TEST_CASE("RR-on-Bins rejects a non-finite input", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(2) << 0, std::numeric_limits<double>::infinity()).finished();
  const Vector<double> phi = (Vector<double>(2) << 0, 1).finished();
  REQUIRE_THROWS_AS(RROnBins<double>(in, phi, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(in, phi, 1.0), Catch::Contains("'inputs' must be finite, got inf"));
}
TEST_CASE("RR-on-Bins rejects a NaN phi", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(2) << 0, 1).finished();
  const Vector<double> phi = (Vector<double>(2) << 0, std::nan("")).finished();
  REQUIRE_THROWS_AS(RROnBins<double>(in, phi, 1.0), std::invalid_argument);
  REQUIRE_THROWS_WITH(RROnBins<double>(in, phi, 1.0), Catch::Contains("'phi' must be finite, got nan"));
}
TEST_CASE("RR-on-Bins: sample() rejects a label that is not an input", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(3) << 0, 1, 2).finished();
  const RROnBins<double> rr(in, in, 1.0);
  labeldp::SeededRandom gen(1);
  REQUIRE_THROWS_AS(rr.sample(1.5, gen), std::invalid_argument);
  REQUIRE_THROWS_WITH(rr.sample(1.5, gen), Catch::Contains("'y' must be one of the mechanism's input values, got 1.5"));
}
TEST_CASE("RR-on-Bins: sample() rejects a NaN label", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(3) << 0, 1, 2).finished();
  const RROnBins<double> rr(in, in, 1.0);
  labeldp::SeededRandom gen(1);
  REQUIRE_THROWS_AS(rr.sample(std::nan(""), gen), std::invalid_argument);
  REQUIRE_THROWS_WITH(rr.sample(std::nan(""), gen),
                      Catch::Contains("'y' must be one of the mechanism's input values, got nan"));
}
TEST_CASE("RR-on-Bins: sample_index() rejects an index out of range", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(3) << 0, 1, 2).finished();
  const RROnBins<double> rr(in, in, 1.0);
  labeldp::SeededRandom gen(1);
  REQUIRE_THROWS_AS(rr.sample_index(3, gen), std::invalid_argument);
  REQUIRE_THROWS_WITH(rr.sample_index(3, gen), Catch::Contains("'input_index' must be in [0, 3), got 3"));
  REQUIRE_THROWS_WITH(rr.sample_index(-1, gen), Catch::Contains("'input_index' must be in [0, 3), got -1"));
}
TEST_CASE("optimal_rr_on_bins rejects a negative label with Poisson log loss", "[rr_on_bins][validation]") {
  const auto prior = FinitePrior<double>::from_weights({-1.0, 2.0}, {0.5, 0.5});
  REQUIRE_THROWS_AS(labeldp::optimal_rr_on_bins(prior, 1.0, PoissonLogLoss<>{}), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::optimal_rr_on_bins(prior, 1.0, PoissonLogLoss<>{}),
                      Catch::Contains("Poisson log loss needs labels >= 0, got -1"));
}
TEST_CASE("RR-on-Bins: expected_loss rejects a prior on other values", "[rr_on_bins][validation]") {
  const Vector<double> in = (Vector<double>(2) << 0, 1).finished();
  const RROnBins<double> rr(in, in, 1.0);
  const auto other = FinitePrior<double>::from_weights({0.0, 2.0}, {0.5, 0.5});
  REQUIRE_THROWS_AS(rr.expected_loss(other), std::invalid_argument);
  REQUIRE_THROWS_WITH(rr.expected_loss(other),
                      Catch::Contains("'prior' must have exactly the mechanism's input values"));
}

TEST_CASE("RR-on-Bins at eps beyond doubles (709 .. 1e308) is built at 700, eps-DP exactly, and keeps its eps",
          "[rr_on_bins]") {
  const auto prior = labeldp::FinitePrior<>::from_weights({0, 1, 5, 9}, {0.2, 0.3, 0.4, 0.1});
  for (const double eps : {30.0, 700.0, 709.0, 710.0, 800.0, 1e308}) {
    INFO("eps = " << eps);
    const auto rr = labeldp::optimal_rr_on_bins(prior, eps);
    CHECK(rr.eps() == eps);
    REQUIRE(rr.num_outputs() == 4);  // one bin per value: identity up to e^-min(eps, 700)
    for (labeldp::Index j = 0; j < 4; ++j) CHECK(rr.outputs()[j] == Approx(prior.value(j)).margin(1e-9));
    const auto m = rr.mechanism();
    CHECK(std::isfinite(m.probabilities().sum()));
    CHECK(m.probabilities().minCoeff() > 0);  // no exact zero: a zero next to a positive entry is not DP
    CHECK(labeldp::satisfies_epsilon(m.probabilities(), std::min(eps, 700.0)));
    CHECK(labeldp::satisfies_epsilon(m.probabilities(), eps));
    CHECK(rr.own_bin_probability() == Approx(1.0));
    labeldp::SeededRandom gen(3);
    for (int i = 0; i < 100; ++i) CHECK(rr.sample(5.0, gen) == rr.outputs()[2]);
  }
}

TEST_CASE("RR-on-Bins draws one generator word per label, whatever the label (constant work)", "[rr_on_bins]") {
  for (const double eps : {0.05, 1.0, 4.0, 20.0, 800.0}) {
    const auto prior =
        FinitePrior<double>::from_weights({0, 1, 2, 3, 5, 8, 13}, {0.3, 0.2, 0.15, 0.15, 0.1, 0.06, 0.04});
    const auto rr = labeldp::optimal_rr_on_bins(prior, eps);
    CHECK(labeldp::satisfies_epsilon(rr.realized_probabilities(), eps));
    for (Index i = 0; i < rr.num_inputs(); ++i) {
      INFO("eps " << eps << " input " << rr.inputs()[i]);
      labeldp::test::CountingRandom gen(42);
      for (int t = 0; t < 1000; ++t) (void)rr.sample(rr.inputs()[i], gen);
      CHECK(gen.words == 1000);
    }
  }
}
