// A corpus of random LP instances for the three LP solvers of the mechanisms layer, each checked
// against GLPK on the explicit LP and each required to end certified:
//
//   unbiased grid      optimal_unbiased_grid (Badanidiyuru et al. 2023, Alg. 1 on the
//                      FeasibleOutputSet grid of Alg. 2) vs unbiased_lp(..., Compact)
//   bias-bounded grid  the same with UnbiasedOptions::max_bias = B (|E[M(y)] - y| <= B)
//   optimal LP (2)     optimal_mechanism_lp (Ghazi et al. 2023, LP (2)) vs compact_mechanism_lp
//   continuous         optimal_unbiased_continuous (unbiased and bias-bounded) on a subset:
//                      certified by its lower bound and never above GLPK's optimum on the grid
//
// Priors: near-uniform, spiky (weeks-like: small weights with a few large spikes), heavy-tailed
// (lognormal-like, labels 0, s, 2s, ...), and any of these with zero-probability labels; k from 2
// to 40, plus near-uniform k = 200 priors on small grids; eps from 0.05 to 12. Every instance is
// generated from its own SplitMix64 seed (integer arithmetic only), so the corpus is the same on
// every platform and an instance is named by its kind and number in the failure messages.
//
// Checks per instance: status Optimal; objective equal to GLPK's to 1e-9 relative; certificate
// bound <= loss <= bound (1 + 1e-9) (the bound may exceed the loss by 1e-12 relative, roundoff);
// the mechanism's audited epsilon at most eps and its bias within the bound. The solvers get
// deterministic limits (rounds, pivots), never a clock, so a stall is reported as a failed
// instance, not a hung test. LABELDP_CORPUS_VERBOSE=1 prints every instance with its solve times.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <labeldp/core/audit.hpp>
#include <labeldp/mechanisms/optimal_lp.hpp>
#include <labeldp/mechanisms/unbiased.hpp>
#include <limits>
#include <string>
#include <vector>

#include "mechanisms/test_unbiased_oracle.hpp"
#include "oracles/prior_shapes.hpp"

using labeldp::FinitePrior;
using labeldp::Index;
using labeldp::optim::SolveStatus;

namespace {

/// SplitMix64 (Steele, Lea and Flood 2014): a fixed integer recurrence, so the corpus does not
/// depend on the standard library's distributions.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int below(int n) { return int(next() % std::uint64_t(n)); }
};

using labeldp::test::Shape;
using labeldp::test::shape_name;
enum class Kind { UnbiasedGrid, BiasedGrid, MechanismLP };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::UnbiasedGrid:
      return "unbiased-grid";
    case Kind::BiasedGrid:
      return "bias-bounded-grid";
    case Kind::MechanismLP:
      return "optimal-lp";
  }
  return "?";
}

const double kEpsList[] = {0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 6, 8, 12};
constexpr int kNumEps = 11;

/// Label values and weights of one shape.
void shape_weights(Shape shape, int k, SplitMix64& rng, std::vector<double>& v, std::vector<double>& w) {
  v.assign(std::size_t(k), 0.0);
  w.assign(std::size_t(k), 0.0);
  if (shape == Shape::HeavyTailed) {
    const double step = 0.5 + 2 * rng.uniform(), mu = 1 + 2 * rng.uniform(), s = 0.5 + 0.7 * rng.uniform();
    for (int i = 0; i < k; ++i) {
      const double t = std::log(i + 1.0) - mu;
      v[std::size_t(i)] = i * step;
      w[std::size_t(i)] = std::exp(-t * t / (2 * s * s)) / (i + 1.0);
    }
    return;
  }
  double x = std::floor(20 * rng.uniform()) - 10;
  const bool integer_steps = rng.uniform() < 0.5;
  for (int i = 0; i < k; ++i) {
    v[std::size_t(i)] = x;
    x += integer_steps ? 1 + rng.below(3) : 0.25 + 1.75 * rng.uniform();
  }
  if (shape == Shape::NearUniform) {
    for (auto& wi : w) wi = 0.5 + rng.uniform();
    return;
  }
  for (auto& wi : w) wi = 0.05 + 0.1 * rng.uniform();  // spiky
  const int spikes = 1 + rng.below(3);
  for (int s = 0; s < spikes; ++s) w[std::size_t(rng.below(k))] += 3 + 27 * rng.uniform();
  if (rng.uniform() < 0.5) w[std::size_t(k - 1)] += 30;  // weeks-like: the top label heavy
}

/// A prior of the given shape with k labels.
FinitePrior<> random_prior(Shape shape, int k, SplitMix64& rng) {
  std::vector<double> v, w;
  if (shape != Shape::WithZeros) {
    shape_weights(shape, k, rng, v, w);
    return FinitePrior<>::from_weights(v, w);
  }
  shape_weights(Shape(rng.below(3)), k, rng, v, w);
  int positive = 0;
  for (auto& wi : w) {
    if (rng.uniform() < 0.3) wi = 0;
    positive += wi > 0;
  }
  if (positive < 2) {  // at least two labels with positive probability
    w.front() = 1;
    w.back() = 1;
  }
  return FinitePrior<>::from_weights(v, w);
}

/// One corpus instance.
struct Instance {
  Kind kind = Kind::UnbiasedGrid;
  int number = 0;
  Shape shape = Shape::NearUniform;
  FinitePrior<> prior = FinitePrior<>::from_weights({0.0}, {1.0});
  double eps = 1;
  Index grid = 0;              // unbiased / bias-bounded: FeasibleOutputSet size
  double max_bias = 0;         // bias-bounded: B
  Eigen::VectorXd outputs;     // optimal LP (2): the output set (sorted, distinct)
  bool absolute_loss = false;  // optimal LP (2): AbsoluteLoss instead of SquaredLoss

  std::string describe() const {
    char s[256];
    std::snprintf(s, sizeof s, "%s #%d: %s prior k = %lld, eps = %g, %s = %lld, B = %g%s", kind_name(kind), number,
                  shape_name(shape), static_cast<long long>(prior.size()), eps,
                  kind == Kind::MechanismLP ? "outputs" : "grid",
                  static_cast<long long>(kind == Kind::MechanismLP ? outputs.size() : grid), max_bias,
                  absolute_loss ? ", absolute loss" : "");
    return s;
  }
};

/// Instance `number` of a kind: shape and eps cycle through all combinations, the rest is drawn
/// from the instance's own seed. k in [2, max_k], grid / output count in [2, max_n].
Instance make_instance(Kind kind, int number, int max_k, int max_n) {
  SplitMix64 rng{0x1ab5'0000'0000ull + std::uint64_t(kind) * 1'000'003ull + std::uint64_t(number)};
  Instance in;
  in.kind = kind;
  in.number = number;
  in.shape = Shape((number / kNumEps) % 4);
  in.eps = kEpsList[number % kNumEps];
  const int k = 2 + rng.below(max_k - 1);
  in.prior = random_prior(in.shape, k, rng);
  const double span = in.prior.value(k - 1) - in.prior.value(0);
  const int n = 2 + rng.below(max_n - 1);
  if (kind == Kind::MechanismLP) {
    const double lo = in.prior.value(0) - 0.2 * span, hi = in.prior.value(k - 1) + 0.2 * span;
    std::vector<double> o;
    const bool even = rng.uniform() < 0.5;
    for (int i = 0; i < n; ++i) o.push_back(even ? lo + (hi - lo) * i / (n - 1) : lo + (hi - lo) * rng.uniform());
    std::sort(o.begin(), o.end());
    o.erase(std::unique(o.begin(), o.end()), o.end());
    in.outputs = Eigen::Map<Eigen::VectorXd>(o.data(), Index(o.size()));
    in.absolute_loss = rng.below(4) == 0;
  } else {
    in.grid = n;
    if (kind == Kind::BiasedGrid) {
      const double fractions[] = {0.001, 0.01, 0.05, 0.2, 1.0};
      in.max_bias = fractions[rng.below(5)] * span;
    }
  }
  return in;
}

bool verbose() {
  const char* v = std::getenv("LABELDP_CORPUS_VERBOSE");
  return v && std::string(v) == "1";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool close_rel(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

/// GLPK's optimum of the explicit LP: its floating-point simplex with tolerances 1e-10 (its
/// default 1e-7 leaves objectives 1e-8 off at eps = 12), retried with its presolver and then its
/// exact simplex if that fails (GLPK's plain simplex can fail at eps = 12, k = 200).
double glpk_optimum(const labeldp::test::SparseLinearProgram& lp) {
  labeldp::test::GlpkOptions o;
  o.tolerance = 1e-10;
  auto g = labeldp::test::solve_with_glpk(lp, o);
  if (g.status != SolveStatus::Optimal) {
    o.presolve = true;
    g = labeldp::test::solve_with_glpk(lp, o);
  }
  if (g.status != SolveStatus::Optimal) {
    o.presolve = false;
    o.exact = true;
    g = labeldp::test::solve_with_glpk(lp, o);
  }
  REQUIRE(g.status == SolveStatus::Optimal);
  return g.objective;
}

std::string digits(double x) {
  char s[40];
  std::snprintf(s, sizeof s, "%.17g", x);
  return s;
}

/// labeldp's objective equals GLPK's to 1e-9 relative.
void check_against_glpk(double objective, double glpk_value) {
  INFO("labeldp " << digits(objective) << ", GLPK " << digits(glpk_value));
  CHECK(close_rel(objective, glpk_value, 1e-9));
}

/// bound <= loss <= bound (1 + 1e-9), the bound allowed 1e-12 above the loss (roundoff).
void check_certificate(double loss, double bound) {
  INFO("loss " << digits(loss) << ", certified bound " << digits(bound));
  CHECK(std::isfinite(bound));
  CHECK(bound <= loss * (1 + 1e-12));
  CHECK(loss <= bound * (1 + 1e-9));
}

/// Audited epsilon and, for the unbiased kinds, |E[M(y)] - y| <= B (+ roundoff).
void check_mechanism(const labeldp::FiniteMechanism<>& m, const FinitePrior<>& prior, double eps, bool unbiased_kind,
                     double max_bias) {
  CHECK(labeldp::audit_epsilon(m.probabilities()) <= eps * (1 + 1e-9) + 1e-12);
  if (!unbiased_kind) return;
  const double scale = std::max(1.0, std::abs(prior.value(0)) + std::abs(prior.value(prior.size() - 1)));
  const Eigen::VectorXd mean = m.probabilities() * m.outputs();
  for (Index y = 0; y < prior.size(); ++y) {
    INFO("label " << prior.value(y) << ": E[M(y)] = " << mean[y]);
    CHECK(std::abs(mean[y] - prior.value(y)) <= max_bias + 1e-7 * scale);
  }
}

/// Deterministic limits instead of a clock: far above what any certified solve of this size
/// needs, so that a stall ends as a failed instance.
labeldp::UnbiasedOptions unbiased_options(double max_bias) {
  labeldp::UnbiasedOptions o;
  o.max_bias = max_bias;
  o.max_rounds = 2000;
  o.simplex.max_iterations = 200000;
  return o;
}

Eigen::MatrixXd squared_loss_matrix(const FinitePrior<>& prior, const Eigen::VectorXd& grid) {
  Eigen::MatrixXd loss(prior.size(), grid.size());
  for (Index y = 0; y < prior.size(); ++y)
    for (Index i = 0; i < grid.size(); ++i) loss(y, i) = (grid[i] - prior.value(y)) * (grid[i] - prior.value(y));
  return loss;
}

/// Unbiased or bias-bounded grid instance: labeldp vs GLPK, certificate, mechanism. Returns
/// GLPK's optimum (for the continuous comparison).
double check_grid_instance(const Instance& in) {
  INFO(in.describe());
  const auto options = unbiased_options(in.max_bias);
  auto t0 = std::chrono::steady_clock::now();
  labeldp::UnbiasedResult<> r;
  try {
    r = labeldp::optimal_unbiased_grid(in.prior, in.eps, in.grid, options);
  } catch (const std::exception& e) {
    FAIL_CHECK("labeldp threw: " << e.what());
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double t_labeldp = seconds_since(t0);
  const Eigen::VectorXd grid = labeldp::feasible_output_set(in.prior, in.eps, in.grid);
  const auto lp = labeldp::test::unbiased_lp(in.prior.values(), in.prior.probabilities(), in.eps, grid,
                                             squared_loss_matrix(in.prior, grid), in.max_bias,
                                             labeldp::test::UnbiasedLpForm::Compact);
  t0 = std::chrono::steady_clock::now();
  const double glpk = glpk_optimum(lp);
  const double t_glpk = seconds_since(t0);
  if (verbose())
    std::fprintf(stderr, "%s: %s loss %.17g lb %.17g GLPK %.17g rounds %lld | labeldp %.3f s, GLPK %.3f s\n",
                 in.describe().c_str(), labeldp::optim::to_string(r.status).c_str(), double(r.expected_loss),
                 double(r.lower_bound), glpk, static_cast<long long>(r.rounds), t_labeldp, t_glpk);
  CHECK(labeldp::optim::to_string(r.status) == labeldp::optim::to_string(SolveStatus::Optimal));
  if (!r.optimal()) return glpk;
  check_against_glpk(r.expected_loss, glpk);
  check_certificate(r.expected_loss, r.lower_bound);
  check_mechanism(r.mechanism, in.prior, in.eps, true, in.max_bias);
  return glpk;
}

/// Optimal LP (2) instance: labeldp vs GLPK, certificate, mechanism.
void check_mechanism_lp_instance(const Instance& in) {
  INFO(in.describe());
  labeldp::OptimalLPOptions options;
  options.column_generation.max_rounds = 2000;
  options.column_generation.simplex.max_iterations = 200000;
  auto t0 = std::chrono::steady_clock::now();
  labeldp::OptimalLPResult<> r;
  try {
    r = in.absolute_loss
            ? labeldp::optimal_mechanism_lp(in.prior, in.eps, in.outputs, options, labeldp::AbsoluteLoss<>{})
            : labeldp::optimal_mechanism_lp(in.prior, in.eps, in.outputs, options, labeldp::SquaredLoss<>{});
  } catch (const std::exception& e) {
    FAIL_CHECK("labeldp threw: " << e.what());
    return;
  }
  const double t_labeldp = seconds_since(t0);
  auto loss = [&](double o, double y) { return in.absolute_loss ? std::abs(o - y) : (o - y) * (o - y); };
  const auto lp =
      labeldp::test::compact_mechanism_lp(in.prior.values(), in.prior.probabilities(), in.eps, in.outputs, loss);
  t0 = std::chrono::steady_clock::now();
  const double glpk = glpk_optimum(lp);
  const double t_glpk = seconds_since(t0);
  if (verbose())
    std::fprintf(stderr, "%s: %s loss %.17g bound %.17g GLPK %.17g rounds %lld | labeldp %.3f s, GLPK %.3f s\n",
                 in.describe().c_str(), labeldp::optim::to_string(r.status).c_str(), double(r.expected_loss),
                 r.dual_bound, glpk, static_cast<long long>(r.rounds), t_labeldp, t_glpk);
  CHECK(labeldp::optim::to_string(r.status) == labeldp::optim::to_string(SolveStatus::Optimal));
  if (r.status != SolveStatus::Optimal) return;
  check_against_glpk(r.expected_loss, glpk);
  check_certificate(r.expected_loss, r.dual_bound);
  check_mechanism(r.mechanism, in.prior, in.eps, false, 0);
}

/// Continuous solve of a grid instance's prior, eps and B: certified, and never above the grid's
/// GLPK optimum (the grid is one feasible output set among all real ones).
void check_continuous_instance(const Instance& in, double glpk_grid_optimum) {
  INFO("continuous, " << in.describe());
  const auto options = unbiased_options(in.max_bias);
  auto t0 = std::chrono::steady_clock::now();
  labeldp::UnbiasedResult<> r;
  try {
    r = labeldp::optimal_unbiased_continuous(in.prior, in.eps, options);
  } catch (const std::exception& e) {
    FAIL_CHECK("labeldp threw: " << e.what());
    return;
  }
  if (verbose())
    std::fprintf(stderr, "continuous %s: %s loss %.17g lb %.17g grid %.17g | labeldp %.3f s\n", in.describe().c_str(),
                 labeldp::optim::to_string(r.status).c_str(), double(r.expected_loss), double(r.lower_bound),
                 glpk_grid_optimum, seconds_since(t0));
  if (in.max_bias > 0 && r.status == SolveStatus::NumericalIssue) {
    // Known limit (issue 11, open): the bias-bounded continuous optimum is reached by column
    // generation, whose certificate can stay above 1e-9 (the status then says so, never Optimal).
    // The mechanism must still be feasible, eps-DP, within its reported gap and no worse than
    // the grid; the gap stays small.
    REQUIRE(r.mechanism.num_outputs() > 0);
    CHECK(r.lower_bound <= r.expected_loss);
    CHECK(r.gap <= 1e-3);
    CHECK(r.expected_loss - r.lower_bound <= r.gap * r.expected_loss * (1 + 1e-9) + 1e-15);
  } else {
    CHECK(labeldp::optim::to_string(r.status) == labeldp::optim::to_string(SolveStatus::Optimal));
    if (!r.optimal()) return;
    check_certificate(r.expected_loss, r.lower_bound);
    CHECK(r.gap <= 1e-9);
  }
  INFO("grid optimum (GLPK) " << glpk_grid_optimum);
  CHECK(r.expected_loss <= glpk_grid_optimum * (1 + 1e-9));
  check_mechanism(r.mechanism, in.prior, in.eps, true, in.max_bias);
}

/// Runs instances [first, first + count) of a grid kind; every `continuous_every`-th (0: none) also
/// continuous when k <= continuous_max_k.
void run_grid_corpus(Kind kind, int first, int count, int max_k, int max_n, int continuous_every,
                     int continuous_max_k) {
  for (int i = first; i < first + count; ++i) {
    const Instance in = make_instance(kind, i, max_k, max_n);
    const double glpk = check_grid_instance(in);
    if (continuous_every > 0 && i % continuous_every == 0 && in.prior.size() <= continuous_max_k && std::isfinite(glpk))
      check_continuous_instance(in, glpk);
  }
}

}  // namespace

TEST_CASE("corpus: the compact LP (2) equals the pairwise one (oracle self-check)", "[corpus]") {
  for (int i = 0; i < 12; ++i) {
    const Instance in = make_instance(Kind::MechanismLP, 1000 + i, 8, 8);
    INFO(in.describe());
    auto loss = [](double o, double y) { return (o - y) * (o - y); };
    const double compact = glpk_optimum(
        labeldp::test::compact_mechanism_lp(in.prior.values(), in.prior.probabilities(), in.eps, in.outputs, loss));
    const double pairwise = glpk_optimum(
        labeldp::test::explicit_mechanism_lp(in.prior.values(), in.prior.probabilities(), in.eps, in.outputs, loss));
    INFO("compact " << compact << ", pairwise " << pairwise);
    CHECK(close_rel(compact, pairwise, 1e-9));
  }
}

TEST_CASE("corpus: unbiased grid vs GLPK, certified; continuous on a subset", "[corpus]") {
  run_grid_corpus(Kind::UnbiasedGrid, 0, 132, 40, 40, 3, 40);
}

TEST_CASE("corpus: bias-bounded grid vs GLPK, certified; continuous on a subset", "[corpus]") {
  run_grid_corpus(Kind::BiasedGrid, 0, 132, 40, 40, 4, 20);
}

TEST_CASE("corpus: optimal LP (2) vs GLPK, certified", "[corpus]") {
  for (int i = 0; i < 132; ++i) check_mechanism_lp_instance(make_instance(Kind::MechanismLP, i, 40, 30));
}

TEST_CASE("corpus: near-uniform k = 200 priors on small grids vs GLPK", "[corpus]") {
  // Diabetes-like size: GLPK solves these grids (6..12 points) in about a second; eps 1, 4, 8, 12.
  const double eps_list[] = {1, 4, 8, 12};
  for (int j = 0; j < 4; ++j) {
    SplitMix64 rng{0x200'0000ull + std::uint64_t(j)};
    Instance in;
    in.kind = Kind::UnbiasedGrid;
    in.number = 2000 + j;
    in.shape = Shape::NearUniform;
    in.prior = random_prior(Shape::NearUniform, 200, rng);
    in.eps = eps_list[j];
    in.grid = 6 + 2 * j;
    const double glpk = check_grid_instance(in);
    if (std::isfinite(glpk)) check_continuous_instance(in, glpk);
    in.kind = Kind::BiasedGrid;
    in.max_bias = 5;
    check_grid_instance(in);
  }
}

TEST_CASE("corpus, larger sweep: k up to 80, grids up to 120", "[corpus][.slow]") {
  run_grid_corpus(Kind::UnbiasedGrid, 132, 300, 80, 120, 2, 80);
  run_grid_corpus(Kind::BiasedGrid, 132, 300, 80, 120, 2, 60);
  for (int i = 132; i < 432; ++i) check_mechanism_lp_instance(make_instance(Kind::MechanismLP, i, 80, 80));
}
