// The Python constructors, one per construction command of the labeldp program (bins, optimal,
// unbiased, interval, baseline): the same library calls and the same mechanism file as the
// command prints with --json (examples/cli/cmd_*.cpp), so a file saved from Python and one
// written by the program are interchangeable. Each returns the file's text; module.cpp loads it.
#include "constructors.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"
#include "labeldp/mechanisms/optimal_lp.hpp"
#include "labeldp/mechanisms/randomized_response.hpp"
#include "labeldp/mechanisms/rpwithprior.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "labeldp/mechanisms/unbiased.hpp"

namespace labeldp::python {

namespace {

using detail::format_number;

// The CLI's limits (examples/cli/command.hpp): the same rules for the same constructions.
constexpr double kMaxSquaredLossMagnitude = 1e150;
constexpr Index kMaxBinsValues = 65536;
constexpr Index kMaxRRValues = 2048;
constexpr Index kMaxRRWithPriorValues = Index(1) << 18;

void check_loss_name(const std::string& loss) {
  if (loss != "squared" && loss != "absolute" && loss != "poisson")
    fail("'loss' must be \"squared\", \"absolute\" or \"poisson\", got " + json_string(loss));
}

template <typename F>
decltype(auto) with_loss(const std::string& name, F&& f) {
  check_loss_name(name);
  if (name == "squared") return f(SquaredLoss<double>{});
  if (name == "absolute") return f(AbsoluteLoss<double>{});
  return f(PoissonLogLoss<double>{});
}

// The prior of (values, probs), checked for `loss` as the CLI checks a prior file.
FinitePrior<double> make_prior(const std::vector<double>& values, const std::vector<double>& probs,
                               const std::string& loss) {
  check_prior(values, probs, loss == "squared" ? kMaxSquaredLossMagnitude : std::numeric_limits<double>::infinity(),
              loss == "poisson");
  return FinitePrior<double>::from_weights(values, probs);
}

void require_finite_result(double v, const std::string& what) {
  if (!std::isfinite(v))
    fail(what + " overflows (" + format_number(v) +
         "): the labels are too large in magnitude for this eps; rescale them");
}

}  // namespace

std::string rr_on_bins_json(const std::vector<double>& values, const std::vector<double>& probs, double eps,
                            const std::string& loss) {
  validate_epsilon(eps, "eps");
  check_loss_name(loss);
  const FinitePrior<double> prior = make_prior(values, probs, loss);
  if (prior.size() > kMaxBinsValues)
    fail("'values' has " + std::to_string(prior.size()) + " entries, more than the limit of " +
         std::to_string(kMaxBinsValues) + " for rr_on_bins (its time grows as the square of the count)");
  return with_loss(loss, [&](const auto& l) {
    const auto sol = solve_rr_on_bins(prior, eps, l);
    const auto& rr = sol.mechanism;
    if (loss == "poisson" && !(rr.outputs()[0] > 0))
      fail(
          "'probs': all probability is on label 0: Poisson log loss needs outputs > 0, and no positive output is "
          "optimal");
    const double expected = rr.expected_loss(prior, l);
    require_finite_result(expected, "the expected " + loss + " loss");
    // The library's mechanism file with the loss and its expected value after "delta" (as `bins`).
    const std::string text = rr.to_json(), after = "\"delta\":0,";
    const std::size_t at = text.find(after) + after.size();
    return text.substr(0, at) + "\"loss\":" + json_string(loss) + ",\"expected_loss\":" + json_number(expected) + "," +
           text.substr(at);
  });
}

std::string optimal_json(const std::vector<double>& values, const std::vector<double>& probs, double eps,
                         const std::vector<double>& outputs, const std::string& loss, std::optional<double> time_limit,
                         std::string* warning) {
  validate_epsilon(eps, "eps");
  check_loss_name(loss);
  if (time_limit && (std::isnan(*time_limit) || *time_limit < 0))
    fail("'time_limit' must be a number of seconds >= 0, got " + format_number(*time_limit));
  const FinitePrior<double> prior = make_prior(values, probs, loss);
  if (outputs.empty()) fail("'outputs' must hold at least one value, got 0");
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string at = element("outputs", i) + " = " + format_number(outputs[i]);
    if (!std::isfinite(outputs[i])) fail(at + " is not finite");
    if (loss == "poisson" && !(outputs[i] > 0)) fail(at + " is not positive: Poisson log loss needs outputs > 0");
    if (loss == "squared" && std::abs(outputs[i]) > kMaxSquaredLossMagnitude)
      fail(at + " is beyond 1e150 in magnitude (the limit with squared loss: its square would overflow)");
  }
  Vector<double> outs(Index(outputs.size()));
  for (std::size_t i = 0; i < outputs.size(); ++i) outs[Index(i)] = outputs[i];
  return with_loss(loss, [&](const auto& l) {
    OptimalLPOptions options;
    if (time_limit) options.column_generation.time_limit = *time_limit;
    const auto r = optimal_mechanism_lp(prior, eps, outs, options, l);
    require_finite_result(double(r.expected_loss), "the expected " + loss + " loss");
    r.require_mechanism();
    if (warning) *warning = r.warning();
    return io::optimal_lp_json(r, eps, loss);
  });
}

std::string unbiased_json(const std::vector<double>& values, const std::vector<double>& probs, double eps,
                          std::optional<long long> grid, bool continuous, std::optional<double> max_bias,
                          std::optional<double> time_limit, std::string* warning) {
  validate_epsilon(eps, "eps");
  const double bias = max_bias.value_or(0.0);
  if (!std::isfinite(bias) || bias < 0) fail("'max_bias' must be a finite number >= 0, got " + format_number(bias));
  if (continuous == grid.has_value()) fail("exactly one of 'grid' (an integer >= 2) and 'continuous=True' is required");
  if (grid && *grid < 2) fail("'grid' must be at least 2, got " + std::to_string(*grid));
  if (time_limit && (std::isnan(*time_limit) || *time_limit < 0))
    fail("'time_limit' must be a number of seconds >= 0, got " + format_number(*time_limit));
  const FinitePrior<double> prior = make_prior(values, probs, "squared");
  UnbiasedOptions options;
  options.max_bias = bias;
  if (time_limit) options.time_limit = *time_limit;
  const auto r = continuous ? optimal_unbiased_continuous(prior, eps, options)
                            : optimal_unbiased_grid(prior, eps, Index(*grid), options);
  if (!r.optimal() && r.mechanism.num_outputs() == 0)
    throw std::runtime_error("the unbiased randomizer LP ended " + optim::to_string(r.status) + " (eps " +
                             format_number(eps) + ") before a feasible mechanism was found" +
                             (r.status == optim::SolveStatus::NumericalIssue && eps < 1e-4
                                  ? std::string("; below eps ~1e-5 its outputs grow as 1/eps and the LP is "
                                                "ill-conditioned: use a larger eps, or rr_on_bins (exact at any eps)")
                                  : std::string()));
  const double lower_bound = double(r.lower_bound), gap = double(r.gap);
  require_finite_result(double(r.expected_loss), "the expected squared loss");
  for (Index j = 0; j < r.mechanism.num_outputs(); ++j)
    require_finite_result(double(r.mechanism.outputs()[j]), "an output");
  if (!r.optimal() && warning)
    *warning = optim::to_string(r.status) +
               " reached: the mechanism is eps-DP and feasible but not certified optimal; its expected loss is at most "
               "a relative " +
               format_number(gap) + " above the optimum";
  std::string s =
      "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"unbiased\",\"eps\":" + json_number(eps) +
      ",\"status\":\"" + optim::to_string(r.status) + "\",\"expected_loss\":" + json_number(double(r.expected_loss));
  if (std::isfinite(lower_bound)) s += ",\"lower_bound\":" + json_number(lower_bound);
  if (std::isfinite(gap)) s += ",\"gap\":" + json_number(gap);
  return s + ",\"max_bias\":" + json_number(double(r.max_bias)) + "," + io::mechanism_json_fields(r.mechanism) + "}";
}

std::string interval_json(const std::vector<double>& lo, const std::vector<double>& hi, const std::vector<double>& mass,
                          double eps, double zeta, std::optional<double> granularity) {
  validate_epsilon(eps, "eps");
  validate_finite_positive("zeta", zeta);
  const auto prior = HistogramPrior<double>::from_cells(lo, hi, mass);
  const auto best = optimal_interval(prior, eps, zeta);
  require_finite_result(best.a2 - best.a1 + 2 * zeta, "the interval's width plus 2 zeta");
  // The sampler's output grid, as `interval`: the given granularity, or the largest power of two
  // giving at least 2^16 grid points on [A1 - zeta, A2 + zeta].
  double g = 0;
  if (granularity) {
    validate_finite_positive("granularity", *granularity);
    g = *granularity;
  } else {
    g = std::ldexp(1.0, std::ilogb((best.a2 - best.a1 + 2 * zeta) / 65536.0));
  }
  (void)RPWithPrior<double>(best.a1, best.a2, zeta, eps, g);  // validates the grid before the text is made
  return "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"rpwithprior\",\"eps\":" + json_number(eps) +
         ",\"delta\":0,\"zeta\":" + json_number(zeta) + ",\"A1\":" + json_number(best.a1) +
         ",\"A2\":" + json_number(best.a2) + ",\"objective\":" + json_number(best.objective) +
         ",\"granularity\":" + json_number(g) +
         ",\"outside\":\"clamp\",\"lattice_bits\":" + std::to_string(RPWithPrior<double>::kDefaultLatticeBits) + "}";
}

std::string baseline_json(const std::string& kind, double eps, double lo, double hi, double delta,
                          std::optional<double> resolution, bool clip, const std::optional<std::vector<double>>& values,
                          const std::optional<std::vector<double>>& probs) {
  const auto& kinds = baseline_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    std::string known;
    for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + k;
    fail("'kind' must be one of " + known + ", got " + json_string(kind));
  }
  validate_epsilon(eps, "eps");
  if (!std::isfinite(lo)) fail("'lo' must be finite, got " + format_number(lo));
  if (!std::isfinite(hi)) fail("'hi' must be finite, got " + format_number(hi));
  if (!(lo < hi)) fail("'lo' must be below 'hi', got lo " + format_number(lo) + ", hi " + format_number(hi));
  if (!std::isfinite(hi - lo))
    fail("'hi' - 'lo' must be finite, got lo " + format_number(lo) + ", hi " + format_number(hi));
  const bool needs_delta = kind == "gaussian" || kind == "discrete-gaussian";
  const bool needs_resolution =
      kind == "discrete-laplace" || kind == "discrete-gaussian" || kind == "discrete-staircase";
  const bool takes_resolution = needs_resolution || kind == "exponential";
  const bool needs_prior = kind == "rr" || kind == "rr-with-prior";
  if (needs_delta && !(delta > 0 && delta < 1))
    fail("'delta' must be in (0, 1) for kind " + json_string(kind) + ", got " + format_number(delta));
  if (!needs_delta && delta != 0)
    fail("'delta' must be 0 for kind " + json_string(kind) + " (pure eps-DP), got " + format_number(delta));
  if (needs_resolution && !resolution) fail("kind " + json_string(kind) + " needs 'resolution' (the grid step)");
  if (resolution && !takes_resolution) fail("'resolution' does not apply to kind " + json_string(kind));
  if (resolution) {
    const double r = *resolution;
    if (!std::isfinite(r) || !(r > 0)) fail("'resolution' must be finite and > 0, got " + format_number(r));
    const double steps = (hi - lo) / r, rounded = std::round(steps);
    if (std::abs(steps - rounded) > 1e-9 * std::max(1.0, steps) || rounded < 1 || rounded > 2147483648.0)
      fail("'resolution' must divide hi - lo into 1 to 2^31 steps, got " + format_number(r) + " for [" +
           format_number(lo) + ", " + format_number(hi) + "]");
    if (kind == "exponential" && rounded > double(ExponentialMechanism<>::kMaxSteps))
      fail("'resolution' gives " + format_number(rounded) + " grid steps; the exponential mechanism allows at most " +
           std::to_string(ExponentialMechanism<>::kMaxSteps));
  }
  if (values.has_value() != probs.has_value()) fail("'values' and 'probs' (the prior) go together: give both or none");
  if (needs_prior && !values) fail("kind " + json_string(kind) + " needs the prior: 'values' and 'probs'");
  std::optional<FinitePrior<double>> prior;
  if (values) prior = make_prior(*values, *probs, "any");
  if (needs_prior) {
    const Index limit = kind == "rr" ? kMaxRRValues : kMaxRRWithPriorValues;
    if (prior->size() > limit)
      fail("kind " + json_string(kind) + " takes at most " + std::to_string(limit) + " values, got " +
           std::to_string(prior->size()));
    const double first = prior->value(0), last = prior->value(prior->size() - 1);
    if (first < lo || last > hi)
      fail("'values' holds " + format_number(first < lo ? first : last) + ", outside [lo, hi] = [" + format_number(lo) +
           ", " + format_number(hi) + "]");
    // As `baseline`: the probabilities capped so every stored ratio is at most e^eps exactly.
    auto raw = kind == "rr" ? randomized_response(prior->values(), eps) : rr_with_prior(*prior, eps);
    Matrix<double> P = raw.probabilities();
    cap_to_epsilon(P, eps);
    const FiniteMechanism<double> m(raw.inputs(), raw.outputs(), std::move(P));
    std::string s = detail::baseline_json_head(kind.c_str(), eps, lo, hi, true);
    if (kind == "rr-with-prior") s += ",\"top_k\":" + std::to_string(m.num_outputs());
    const double expected = m.expected_loss(*prior);
    require_finite_result(expected, "the expected squared loss");
    return s + ",\"expected_loss\":" + json_number(expected) + "," + io::mechanism_json_fields(m) + "}";
  }
  BaselineSpec spec;
  spec.kind = kind;
  spec.eps = eps;
  spec.delta = delta;
  spec.lo = lo;
  spec.hi = hi;
  spec.resolution = resolution;
  spec.clip = clip;
  const AnyMechanism m = make_baseline(spec);
  std::string s = m.to_json();
  if (prior) {
    s.pop_back();  // the closing brace
    const double expected = *m.expected_loss(*prior);
    require_finite_result(expected, "the expected squared loss");
    s += ",\"expected_loss\":" + json_number(expected) + "}";
  }
  return s;
}

}  // namespace labeldp::python
