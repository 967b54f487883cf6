// Shared machinery of the property tests (issue 13, "Property tests at scale"): a replayable
// random instance (prior of every shape, eps log-uniform with extreme values, loss), the exact
// checks every finite mechanism must pass (printed matrix and realized sampler table eps-DP
// exactly, rows summing to 1, probabilities finite and >= 0) and the Monte Carlo check of its
// expected loss against its own sampler. Each instance draws everything from its seed, and a
// failure prints the seed and every parameter (the prior's values and probabilities with 17
// digits), so `LABELDP_PROPERTY_SEED=<seed>` replays exactly that instance.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/json_writer.hpp>
#include <labeldp/core/loss.hpp>
#include <labeldp/core/mechanism.hpp>
#include <labeldp/core/prior.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/io/json_reader.hpp>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "oracles/prior_shapes.hpp"
#include "oracles/statistics.hpp"

namespace labeldp::property {

using test::Shape;

/// Deterministic draws from a seed (std::mt19937_64's output is fixed by the standard; the
/// conversions below are ours, so an instance is the same under every compiler).
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : m_gen(seed) {}
  double u01() { return double(m_gen() >> 11) * 0x1p-53; }
  double uniform(double a, double b) { return a + (b - a) * u01(); }
  double log_uniform(double a, double b) { return std::exp(uniform(std::log(a), std::log(b))); }
  /// Uniform integer in [a, b].
  long long integer(long long a, long long b) { return a + (long long)(m_gen() % std::uint64_t(b - a + 1)); }
  bool coin(double p) { return u01() < p; }
  std::uint64_t word() { return m_gen(); }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[std::size_t(integer(0, (long long)v.size() - 1))];
  }

 private:
  std::mt19937_64 m_gen;
};

/// Where the labels sit.
enum class Location { NearZero, NearThousand, Negative, Wide };

inline const char* location_name(Location l) {
  switch (l) {
    case Location::NearZero:
      return "near-0";
    case Location::NearThousand:
      return "near-1e3";
    case Location::Negative:
      return "negative";
    case Location::Wide:
      return "wide-0..1e3";
  }
  return "?";
}

enum class LossKind { Squared, Absolute, Poisson };

inline const char* loss_name(LossKind l) {
  return l == LossKind::Squared ? "squared" : l == LossKind::Absolute ? "absolute" : "poisson";
}

/// The loss value as the library computes it.
inline double loss_value(LossKind kind, double o, double y) {
  switch (kind) {
    case LossKind::Squared:
      return SquaredLoss<double>{}(o, y);
    case LossKind::Absolute:
      return AbsoluteLoss<double>{}(o, y);
    case LossKind::Poisson:
      return PoissonLogLoss<double>{}(o, y);
  }
  return NAN;
}

/// Calls `f` with the library's loss object of that kind.
template <typename F>
decltype(auto) with_loss(LossKind kind, F&& f) {
  switch (kind) {
    case LossKind::Absolute:
      return f(AbsoluteLoss<double>{});
    case LossKind::Poisson:
      return f(PoissonLogLoss<double>{});
    default:
      return f(SquaredLoss<double>{});
  }
}

/// What a mechanism family accepts.
struct Space {
  Index max_k = 60;
  double eps_lo = 0.01, eps_hi = 50;
  std::vector<double> extreme_eps;  ///< drawn with probability extreme_rate
  double extreme_rate = 0.08;
  std::vector<LossKind> losses{LossKind::Squared};
  bool allow_single = true;  ///< k = 1 allowed
};

/// Values and weights of one prior shape (weights may include zeros; at least one is positive).
inline std::vector<double> shape_weights(Shape shape, Index k, Draw& d) {
  std::vector<double> w(static_cast<std::size_t>(k));
  switch (shape) {
    case Shape::NearUniform:
      for (auto& x : w) x = 1 + 0.05 * d.u01();
      break;
    case Shape::Spiky: {
      for (auto& x : w) x = d.u01();
      const int spikes = int(d.integer(1, 2));
      for (int s = 0; s < spikes; ++s) w[std::size_t(d.integer(0, k - 1))] = d.log_uniform(1e2, 1e6);
      break;
    }
    case Shape::HeavyTailed: {
      const double a = d.uniform(0.8, 2.5);
      const bool reverse = d.coin(0.5);
      for (Index i = 0; i < k; ++i) w[std::size_t(reverse ? k - 1 - i : i)] = std::pow(double(i + 1), -a);
      break;
    }
    case Shape::WithZeros: {
      for (auto& x : w) x = d.coin(0.35) ? 0.0 : d.u01() + 0.01;
      if (d.coin(0.5)) w.front() = 0;
      if (d.coin(0.5)) w.back() = 0;
      if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; })) w[std::size_t(d.integer(0, k - 1))] = 1;
      break;
    }
  }
  return w;
}

/// k strictly increasing label values at a location.
inline std::vector<double> location_values(Location loc, Index k, Draw& d) {
  std::vector<double> v(static_cast<std::size_t>(k));
  double x = 0, lo_gap = 1e-3, hi_gap = 2;
  switch (loc) {
    case Location::NearZero:
      x = d.coin(0.5) ? 0.0 : d.uniform(0, 1);
      break;
    case Location::NearThousand:
      x = d.uniform(990, 1000);
      hi_gap = 1;
      break;
    case Location::Negative:
      x = d.uniform(-200, -1);
      lo_gap = 1e-2;
      hi_gap = 8;
      break;
    case Location::Wide:
      x = 0;
      lo_gap = 1e-3;
      hi_gap = 2000.0 / double(k);
      break;
  }
  for (Index i = 0; i < k; ++i) {
    v[std::size_t(i)] = x;
    double next = x + (loc == Location::Wide ? d.uniform(lo_gap, hi_gap) : d.log_uniform(lo_gap, hi_gap));
    if (!(next > x)) next = std::nextafter(x, INFINITY);
    x = next;
  }
  return v;
}

/// One random instance: the parameters every family draws, and what is needed to replay it.
struct Instance {
  std::string family;
  std::uint64_t seed = 0;
  Shape shape = Shape::NearUniform;
  Location location = Location::NearZero;
  LossKind loss = LossKind::Squared;
  double eps = 1;
  FinitePrior<double> prior = FinitePrior<double>::from_weights({0.0}, {1.0});
  std::string extra;  ///< family-specific parameters, for the failure message

  std::string describe() const {
    std::ostringstream s;
    s.precision(17);
    s << "REPLAY: LABELDP_PROPERTY_SEED=" << seed << " (family " << family << ")\n  shape " << test::shape_name(shape)
      << ", location " << location_name(location) << ", k " << prior.size() << ", eps " << eps << ", loss "
      << loss_name(loss);
    if (!extra.empty()) s << ", " << extra;
    s << "\n  values {";
    for (Index i = 0; i < prior.size(); ++i) s << (i ? ", " : "") << prior.value(i);
    s << "}\n  probabilities {";
    for (Index i = 0; i < prior.size(); ++i) s << (i ? ", " : "") << prior.probability(i);
    s << "}";
    return s.str();
  }
};

/// The seed of instance `i` of a family (distinct families get distinct streams).
inline std::uint64_t instance_seed(std::uint64_t family_tag, int i) {
  std::uint64_t z = family_tag * 0x9E3779B97F4A7C15ull + std::uint64_t(i) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The seed to replay, when LABELDP_PROPERTY_SEED is set.
inline std::optional<std::uint64_t> replay_seed() {
  const char* s = std::getenv("LABELDP_PROPERTY_SEED");
  if (!s || !*s) return std::nullopt;
  return std::strtoull(s, nullptr, 10);
}

/// `count` scaled by LABELDP_PROPERTY_SCALE (default 1; e.g. 0.1 under sanitizers), at least 1.
inline int scaled_count(int count) {
  const char* s = std::getenv("LABELDP_PROPERTY_SCALE");
  const double f = s && *s ? std::strtod(s, nullptr) : 1.0;
  return std::max(1, int(std::lround(double(count) * (f > 0 ? f : 1.0))));
}

/// The seeds to run for a family: `count` of them, or only the replayed one when it belongs here.
inline std::vector<std::uint64_t> family_seeds(std::uint64_t family_tag, int count) {
  std::vector<std::uint64_t> seeds;
  const auto replay = replay_seed();
  count = scaled_count(count);
  for (int i = 0; i < count; ++i) {
    const std::uint64_t s = instance_seed(family_tag, i);
    if (!replay || *replay == s) seeds.push_back(s);
  }
  if (replay && seeds.empty()) {
    // A replayed seed of another family (or a hand-picked one): run it here too.
    seeds.push_back(*replay);
  }
  return seeds;
}

/// Draws an instance of a family from its seed (prior shape, location, k, eps, loss).
inline Instance make_instance(const std::string& family, std::uint64_t seed, const Space& space, Draw& d) {
  Instance in;
  in.family = family;
  in.seed = seed;
  in.shape = Shape(d.integer(0, 3));
  in.loss = d.pick(space.losses);
  in.location = Location(d.integer(0, 3));
  if (in.loss == LossKind::Poisson && in.location == Location::Negative) in.location = Location::NearZero;
  Index k;
  if (space.allow_single && d.coin(0.04))
    k = 1;
  else
    k = Index(std::llround(d.log_uniform(2, double(space.max_k) + 0.999)));
  k = std::clamp<Index>(k, space.allow_single ? 1 : 2, space.max_k);
  if (!space.extreme_eps.empty() && d.coin(space.extreme_rate))
    in.eps = d.pick(space.extreme_eps);
  else
    in.eps = d.log_uniform(space.eps_lo, space.eps_hi);
  const auto values = location_values(in.location, k, d);
  const auto weights = shape_weights(in.shape, k, d);
  in.prior = FinitePrior<double>::from_weights(values, weights);
  return in;
}

/// Failures found in one instance (empty: it passed).
struct Findings {
  std::vector<std::string> failures;
  /// Failures of a known, reported library defect (tag, message): counted and printed with the
  /// replay line, not asserted here (each has a minimized [!shouldfail] test in
  /// test_privacy_regression.cpp, which starts failing once the defect is fixed).
  std::vector<std::pair<std::string, std::string>> known;
  void fail(const std::string& what) { failures.push_back(what); }
  /// Moves the failures of `other` into this one, those matching `is_known` as known issue `tag`.
  template <typename Pred>
  void absorb(const Findings& other, const std::string& tag, Pred is_known) {
    for (const auto& m : other.failures) {
      if (is_known(m))
        known.emplace_back(tag, m);
      else
        failures.push_back(m);
    }
    for (const auto& k : other.known) known.push_back(k);
  }
  bool ok() const { return failures.empty(); }
  std::string text() const {
    std::string s;
    for (const auto& f : failures) s += "  - " + f + "\n";
    return s;
  }
};

inline std::string num(long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17Lg", v);
  return buf;
}

/// The probabilities of a matrix as the JSON writer prints them, read back by the library's
/// strict JSON reader (`"probabilities":[[...],...]` of `json`, or of json_fields() of `m`).
inline Matrix<double> printed_probabilities(const std::string& json) {
  const io::JsonValue doc = io::parse_json(json, "printed", io::JsonLimits{});
  const io::JsonValue rows = doc.array("probabilities");
  const std::size_t k = rows.size();
  const std::size_t d = k ? rows.at(std::size_t(0)).size() : 0;
  Matrix<double> P(static_cast<Index>(k), static_cast<Index>(d));
  for (std::size_t i = 0; i < k; ++i) {
    const auto row = rows.at(i).as_numbers();
    if (row.size() != d) throw std::runtime_error("ragged printed matrix");
    for (std::size_t j = 0; j < d; ++j) P(Index(i), Index(j)) = row[j];
  }
  return P;
}
inline Matrix<double> printed_probabilities(const FiniteMechanism<double>& m) {
  return printed_probabilities("{" + json_fields(m) + "}");
}

/// Independent exact eps check of a k x d table of non-negative long doubles (weights or
/// probabilities): in each column max <= e^eps * min, decided in long double with a relative
/// margin of 2^-60 in the safe direction (a ratio within 2^-60 of e^eps counts as a violation;
/// the library keeps its ratios at least 2 ulps of a double, 2^-52, below).
template <typename Get>
std::optional<std::string> exact_column_violation(Index k, Index d, double eps, Get get) {
  const long double e = std::exp((long double)eps) * (1 - std::ldexp(1.0L, -60));
  for (Index j = 0; j < d; ++j) {
    long double hi = 0, lo = std::numeric_limits<long double>::infinity();
    Index hi_i = 0, lo_i = 0;
    for (Index i = 0; i < k; ++i) {
      const long double v = get(i, j);
      if (v > hi) hi = v, hi_i = i;
      if (v < lo) lo = v, lo_i = i;
    }
    if (hi <= 0) continue;
    if (!(hi <= lo * e))
      return "column " + std::to_string(j) + ": row " + std::to_string(hi_i) + " has " + num(hi) + ", row " +
             std::to_string(lo_i) + " has " + num(lo) + " (ratio " + num(lo > 0 ? hi / lo : INFINITY) + ", e^eps " +
             num(std::exp((long double)eps)) + ")";
  }
  return std::nullopt;
}

/// Rows finite, >= 0 and summing to 1 within 1e-9; and eps-DP exactly (the library's
/// find_epsilon_violation() and the independent check above). `what` names the matrix.
inline void check_matrix(const Matrix<double>& P, double eps, const std::string& what, Findings& f) {
  for (Index i = 0; i < P.rows(); ++i) {
    long double sum = 0;
    for (Index j = 0; j < P.cols(); ++j) {
      const double p = P(i, j);
      if (!std::isfinite(p) || p < 0) {
        f.fail(what + ": entry (" + std::to_string(i) + ", " + std::to_string(j) + ") = " + num(p) +
               " is not finite and >= 0");
        return;
      }
      sum += p;
    }
    if (!(std::abs(sum - 1) <= 1e-9L))
      f.fail(what + ": row " + std::to_string(i) + " sums to " + num(sum) + " (not 1 within 1e-9)");
  }
  const EpsilonViolation v = find_epsilon_violation(P, eps);
  if (v.column >= 0)
    f.fail(what + ": find_epsilon_violation at column " + std::to_string(v.column) + " rows " +
           std::to_string(v.high_row) + "/" + std::to_string(v.low_row) + ": " + num(P(v.high_row, v.column)) + " vs " +
           num(P(v.low_row, v.column)));
  if (auto bad =
          exact_column_violation(P.rows(), P.cols(), eps, [&](Index i, Index j) { return (long double)P(i, j); }))
    f.fail(what + " not eps-DP exactly: " + *bad);
}

/// The integer table a FiniteMechanism samples from, checked exactly two ways: the library's
/// realized_satisfies_epsilon() and the independent long-double check of its row weights (each
/// row summing to exactly 2^64).
inline void check_realized(const FiniteMechanism<double>& m, double eps, const std::string& what, Findings& f) {
  const Index k = m.num_inputs(), d = m.num_outputs();
  std::vector<std::vector<detail::u128>> w(static_cast<std::size_t>(k));
  for (Index i = 0; i < k; ++i) {
    w[std::size_t(i)] = m.sampler().row_weights(i);
    detail::u128 sum = 0;
    for (auto x : w[std::size_t(i)]) sum += x;
    if (sum != (detail::u128(1) << 64)) f.fail(what + ": sampler row " + std::to_string(i) + " does not sum to 2^64");
  }
  if (!realized_satisfies_epsilon(m, eps)) f.fail(what + ": realized_satisfies_epsilon() is false");
  if (auto bad = exact_column_violation(
          k, d, eps, [&](Index i, Index j) { return (long double)w[std::size_t(i)][std::size_t(j)]; }))
    f.fail(what + ": sampler weights not eps-DP exactly: " + *bad);
  // The realized probabilities as doubles (what an audit of realized_probabilities() sees).
  const Matrix<double> R = m.realized_probabilities();
  const EpsilonViolation v = find_epsilon_violation(R, eps);
  if (v.column >= 0)
    f.fail(what + ": realized_probabilities() fail find_epsilon_violation at column " + std::to_string(v.column));
}

/// The printed matrix must be the stored one (17 digits read back exactly), of the same shape.
inline void check_printed_equals(const Matrix<double>& printed, const Matrix<double>& stored, const std::string& what,
                                 Findings& f) {
  if (printed.rows() != stored.rows() || printed.cols() != stored.cols()) {
    f.fail(what + ": printed matrix is " + std::to_string(printed.rows()) + " x " + std::to_string(printed.cols()) +
           ", stored " + std::to_string(stored.rows()) + " x " + std::to_string(stored.cols()));
    return;
  }
  for (Index i = 0; i < stored.rows(); ++i)
    for (Index j = 0; j < stored.cols(); ++j)
      if (printed(i, j) != stored(i, j)) {
        f.fail(what + ": printed entry (" + std::to_string(i) + ", " + std::to_string(j) + ") " + num(printed(i, j)) +
               " differs from stored " + num(stored(i, j)));
        return;
      }
}

/// Exact distribution of one row: outputs and probabilities.
struct Row {
  std::vector<double> outputs;
  std::vector<long double> probs;
};

/// The Monte Carlo check of an expected loss: for every label of positive prior probability,
/// `n` draws of `sample(i, gen)` (the mechanism's own sampler on prior value i); their loss
/// mean per row against the row's exact mean, summed with the prior's weights, must lie within
/// the Bernstein radius (statistics.hpp, confidence 1 - 1e-9 for the instance) of the exact
/// expected loss; and `reported` (the mechanism's or solver's expected loss) must equal the
/// exact one from the rows within 1e-9 relative; and one row's draws must fit the row
/// (chi-square, see below). Rows with an infinite loss of positive
/// probability make the expected loss infinite: then `reported` must be infinite and no draws
/// are made.
/// Draws of the goodness-of-fit check of one row per instance.
inline constexpr int kFitDraws = 4000;

template <typename Sample>
void check_expected_loss(const FinitePrior<double>& prior, LossKind loss, const std::function<Row(Index)>& row_of,
                         Sample&& sample, double reported, int draws, std::uint64_t seed, const std::string& what,
                         Findings& f) {
  const Index k = prior.size();
  Index positive = 0;
  for (Index i = 0; i < k; ++i) positive += prior.probability(i) > 0;
  const int n = std::max(64, draws / int(std::max<Index>(positive, 1)));
  const double delta = 1e-9 / double(std::max<Index>(positive, 1));
  long double exact = 0, radius = 0, mc = 0, scale = 0;
  bool infinite = false;
  std::vector<Row> rows(static_cast<std::size_t>(k));
  for (Index i = 0; i < k; ++i) {
    if (!(prior.probability(i) > 0)) continue;
    rows[std::size_t(i)] = row_of(i);
    const Row& r = rows[std::size_t(i)];
    long double mean = 0, lo = INFINITY, hi = -INFINITY;
    for (std::size_t j = 0; j < r.outputs.size(); ++j) {
      if (!(r.probs[j] > 0)) continue;
      const long double l = loss_value(loss, r.outputs[j], prior.value(i));
      if (!std::isfinite(double(l))) infinite = true;
      mean += r.probs[j] * l;
      lo = std::min(lo, l), hi = std::max(hi, l);
    }
    if (infinite) break;
    long double var = 0;
    for (std::size_t j = 0; j < r.outputs.size(); ++j) {
      if (!(r.probs[j] > 0)) continue;
      const long double dl = loss_value(loss, r.outputs[j], prior.value(i)) - mean;
      var += r.probs[j] * dl * dl;
    }
    exact += prior.probability(i) * mean;
    scale += prior.probability(i) * std::max(std::abs(lo), std::abs(hi));
    radius += prior.probability(i) * test::bernstein_radius(double(var), double(hi - lo), n, delta);
  }
  if (infinite) {
    if (std::isfinite(reported))
      f.fail(what + ": a row has infinite loss but the reported expected loss is " + num(reported));
    return;
  }
  if (!(std::abs((long double)reported - exact) <= 1e-9L * std::max<long double>(scale, 1e-300) + 1e-12L * exact))
    f.fail(what + ": reported expected loss " + num(reported) + " differs from the rows' exact " + num(exact));
  SeededRandom gen(seed ^ 0x5eed5eed5eedull);
  for (Index i = 0; i < k; ++i) {
    if (!(prior.probability(i) > 0)) continue;
    long double s = 0;
    for (int t = 0; t < n; ++t) s += loss_value(loss, sample(i, gen), prior.value(i));
    mc += prior.probability(i) * (s / n);
  }
  // Goodness of fit of one row (chosen by the seed) of the sampler against its exact distribution:
  // Pearson's chi-square p-value below 1e-9 fails (with 10,000 instances, a correct sampler fails
  // with probability about 1e-5); a value that is not an output of the row fails at once.
  {
    std::vector<Index> positive_rows;
    for (Index i = 0; i < k; ++i)
      if (prior.probability(i) > 0) positive_rows.push_back(i);
    const Index i = positive_rows[std::size_t(seed % positive_rows.size())];
    const Row& r = rows[std::size_t(i)];
    std::vector<double> probs(r.probs.begin(), r.probs.end());
    std::vector<long long> observed(r.outputs.size(), 0);
    long long strays = 0;
    SeededRandom fit_gen(seed ^ 0xf17f17f17ull);
    for (int t = 0; t < kFitDraws; ++t) {
      const double o = sample(i, fit_gen);
      const auto it = std::lower_bound(r.outputs.begin(), r.outputs.end(), o);
      if (it == r.outputs.end() || *it != o)
        ++strays;
      else
        ++observed[std::size_t(it - r.outputs.begin())];
    }
    if (strays > 0)
      f.fail(what + ": the sampler returned " + std::to_string(strays) + " values that are not outputs of row " +
             std::to_string(i));
    else if (const test::ChiSquare fit = test::chi_square_grouped(observed, probs); fit.p_value < 1e-9)
      f.fail(what + ": row " + std::to_string(i) + "'s samples do not fit its exact distribution (chi-square " +
             num(fit.statistic) + ", dof " + std::to_string(fit.dof) + ", p " + num(fit.p_value) + ")");
  }
  // Slack for the difference between the stored and the realized rows (about 1e-16 relative).
  const long double slack = 1e-9L * std::max<long double>(scale, 1e-300);
  if (!(std::abs(mc - exact) <= radius + slack))
    f.fail(what + ": Monte Carlo expected loss " + num(mc) + " (" + std::to_string(n) + " draws per label) is " +
           num(std::abs(mc - exact)) + " from the exact " + num(exact) + ", beyond the Bernstein radius " +
           num(radius));
}

/// True for an eps-DP failure message of the checks above (not a row sum or a finiteness one).
inline bool is_privacy_failure(const std::string& m) {
  return m.find("eps-DP") != std::string::npos || m.find("find_epsilon_violation") != std::string::npos ||
         m.find("realized_satisfies_epsilon") != std::string::npos;
}

/// Rows of a FiniteMechanism as its sampler realizes them.
inline Row realized_row(const FiniteMechanism<double>& m, Index i) {
  Row r;
  const auto p = m.sampler().realized(i);
  for (Index j = 0; j < m.num_outputs(); ++j) {
    r.outputs.push_back(m.outputs()[j]);
    r.probs.push_back(p[std::size_t(j)]);
  }
  return r;
}

/// Per-family tallies, printed at the end of each family's test case (solver statuses, instances
/// that ran, Monte Carlo checks, failures).
struct Tally {
  std::string family;
  int instances = 0, failed = 0, monte_carlo = 0, known = 0;
  std::map<std::string, int> outcomes;
  void print() const {
    std::printf("[property] %-28s %5d instances, %5d with Monte Carlo, %d failed;", family.c_str(), instances,
                monte_carlo, failed);
    for (const auto& [k, v] : outcomes) std::printf(" %s: %d", k.c_str(), v);
    std::printf("\n");
    std::fflush(stdout);
  }
};

/// At most `fraction` of a family's instances hit known issues (so a known defect cannot spread
/// unnoticed).
inline void check_known_fraction(const Tally& tally, double fraction) {
  INFO(tally.family << ": " << tally.known << " of " << tally.instances << " instances hit a known issue");
  CHECK(double(tally.known) <= fraction * double(tally.instances));
}

/// Runs `count` instances of a family: body(seed, instance, findings, tally) draws the instance
/// into `instance` and records what fails into `findings`; an exception is a failure too. Every
/// instance is one Catch assertion whose message is the replay line and the failures.
template <typename Body>
Tally run_family(const std::string& family, std::uint64_t tag, int count, Body&& body) {
  Tally tally;
  tally.family = family;
  for (const std::uint64_t seed : family_seeds(tag, count)) {
    Instance instance;
    instance.family = family;
    instance.seed = seed;
    Findings findings;
    try {
      body(seed, instance, findings, tally);
    } catch (const std::exception& e) {
      findings.fail(std::string("exception: ") + e.what());
    }
    ++tally.instances;
    if (findings.ok() && !findings.known.empty()) {
      ++tally.outcomes["KNOWN ISSUE: " + findings.known.front().first];
      ++tally.known;
      std::fprintf(stderr, "[property] KNOWN ISSUE %s\n  - %s\n", instance.describe().c_str(),
                   findings.known.front().second.c_str());
    }
    if (!findings.ok()) {
      ++tally.failed;
      std::fprintf(stderr, "[property] FAILED %s\n%s", instance.describe().c_str(), findings.text().c_str());
    }
    INFO(instance.describe() << "\n" << findings.text());
    CHECK(findings.ok());
  }
  tally.print();
  return tally;
}

}  // namespace labeldp::property
