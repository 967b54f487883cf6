// RR-on-Bins (Ghazi et al., ICLR 2023, Algorithms 1-2): the production solver against the
// paper's O(k^3) algorithm as printed, against exhaustive enumeration of interval partitions,
// against GLPK's optimum over ALL eps-DP mechanisms (Theorem 5); exact privacy audits of the
// exact and of the realized sampler matrices; chi-square goodness of fit of the sampler; and
// one test per rejected input.
#include <catch2/catch.hpp>

#include <glpk.h>

#include <algorithm>
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
      for (Index j = 0; j < k; ++j) w[std::size_t(j)] = prior.probability(j) * (j >= lo && j < hi ? std::exp(eps) : 1.0);
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
        const Index col = Index(std::lower_bound(distinct.begin(), distinct.end(), outs[std::size_t(b)]) - distinct.begin());
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
  return {FinitePrior<double>::from_probabilities(values, probs), eps, has_zero};
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
    INFO("production " << production << ", solver value " << sol.expected_loss << ", reference "
                       << ref.expected_loss << ", brute force " << brute.best);
    REQUIRE(sol.status == labeldp::RROnBinsStatus::Optimal);
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
  const auto prior = FinitePrior<double>::from_probabilities({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
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
