// `labeldp baseline --kind K --eps E --lo L --hi H [--delta D] [--resolution R] [--prior FILE]
// [--clip] [--json]`: the additive-noise and randomized-response baselines the papers compare
// against, on the public label range [L, H] (sensitivity H - L), as mechanism files (the labeldp
// CLI contract, "baseline" and "Mechanism files").
//
// Kinds: laplace (exact, on a power-of-two grid), discrete-laplace (grid of step R), gaussian
// (analytic sigma, Balle and Wang 2018), discrete-gaussian (Canonne, Kamath and Steinke 2020),
// staircase and discrete-staircase (Geng and Viswanath 2014; Ghazi et al. 2023, Defs. 24-25),
// exponential (on [L, H], grid of step R), rr and rr-with-prior (over the --prior's values).
// With --prior, "expected_loss" is the exact expected squared error under the prior (with
// clipping when --clip). Everything is computed before anything is printed, so bad input leaves
// stdout empty.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "command.hpp"
#include "labeldp/core/audit.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/mechanisms/additive_noise.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"
#include "labeldp/mechanisms/gaussian.hpp"
#include "labeldp/mechanisms/randomized_response.hpp"
#include "labeldp/mechanisms/staircase.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_baseline {
namespace {

using labeldp::Index;
using labeldp::cli::InputError;
using labeldp::detail::format_number;

constexpr const char* kKinds =
    "laplace, discrete-laplace, gaussian, discrete-gaussian, staircase, discrete-staircase, exponential, rr, "
    "rr-with-prior";

struct BaselineArgs {
  std::string kind, prior;
  double eps = 0, lo = 0, hi = 0;
  std::optional<double> delta, resolution;
  bool clip = false, json = false;
};

bool needs_delta(const std::string& k) { return k == "gaussian" || k == "discrete-gaussian"; }
bool needs_resolution(const std::string& k) {
  return k == "discrete-laplace" || k == "discrete-gaussian" || k == "discrete-staircase";
}
bool takes_resolution(const std::string& k) { return needs_resolution(k) || k == "exponential"; }
bool needs_prior(const std::string& k) { return k == "rr" || k == "rr-with-prior"; }

void check_finite(const char* flag, double v) {
  if (!std::isfinite(v)) throw InputError(std::string("'") + flag + "' must be finite, got " + format_number(v));
}

// Every rule that does not need a mechanism built, checked in the order of the usage line.
void validate(const BaselineArgs& a) {
  if (!(a.kind == "laplace" || a.kind == "discrete-laplace" || a.kind == "gaussian" || a.kind == "discrete-gaussian" ||
        a.kind == "staircase" || a.kind == "discrete-staircase" || a.kind == "exponential" || a.kind == "rr" ||
        a.kind == "rr-with-prior"))
    throw InputError("'--kind' must be one of " + std::string(kKinds) + ", got " + labeldp::json_string(a.kind));
  labeldp::validate_epsilon(a.eps, "--eps");
  check_finite("--lo", a.lo);
  check_finite("--hi", a.hi);
  if (!(a.lo < a.hi))
    throw InputError("'--lo' must be below '--hi', got --lo " + format_number(a.lo) + ", --hi " + format_number(a.hi));
  if (!std::isfinite(a.hi - a.lo))
    throw InputError("'--hi' - '--lo' must be finite, got --lo " + format_number(a.lo) + ", --hi " +
                     format_number(a.hi));
  if (needs_delta(a.kind)) {
    if (!a.delta) throw InputError("'--kind " + a.kind + "' needs '--delta D' (0 < D < 1)");
    if (!(*a.delta > 0 && *a.delta < 1))
      throw InputError("'--delta' must be in (0, 1), got " + format_number(*a.delta));
  } else if (a.delta && *a.delta != 0) {
    throw InputError("'--delta' must be 0 or absent for '--kind " + a.kind + "' (pure eps-DP), got " +
                     format_number(*a.delta));
  }
  if (needs_resolution(a.kind) && !a.resolution) throw InputError("'--kind " + a.kind + "' needs '--resolution R'");
  if (a.resolution && !takes_resolution(a.kind))
    throw InputError("'--resolution' does not apply to '--kind " + a.kind + "'");
  if (a.resolution) {
    const double r = *a.resolution;
    if (!std::isfinite(r) || !(r > 0))
      throw InputError("'--resolution' must be finite and > 0, got " + format_number(r));
    const double steps = (a.hi - a.lo) / r, rounded = std::round(steps);
    if (std::abs(steps - rounded) > 1e-9 * std::max(1.0, steps) || rounded < 1 || rounded > 2147483648.0)
      throw InputError("'--resolution' must divide --hi - --lo into 1 to 2^31 steps, got " + format_number(r) +
                       " for [" + format_number(a.lo) + ", " + format_number(a.hi) + "]");
    if (a.kind == "exponential" && rounded > double(labeldp::ExponentialMechanism<>::kMaxSteps))
      throw InputError("'--resolution' gives " + format_number(rounded) +
                       " grid steps; the exponential mechanism allows at most " +
                       std::to_string(labeldp::ExponentialMechanism<>::kMaxSteps));
  }
  if (needs_prior(a.kind) && a.prior.empty()) throw InputError("'--kind " + a.kind + "' needs '--prior FILE'");
}

// The prior's values must lie in the public range [lo, hi]: rr answers with them.
void check_prior_in_range(const BaselineArgs& a, const labeldp::FinitePrior<double>& prior) {
  const double first = prior.value(0), last = prior.value(prior.size() - 1);
  if (first < a.lo || last > a.hi)
    throw InputError(a.prior + ": value " + format_number(first < a.lo ? first : last) +
                     " is outside [--lo, --hi] = [" + format_number(a.lo) + ", " + format_number(a.hi) + "]");
}

// rr and rr-with-prior as finite mechanisms: probabilities capped so that every printed ratio is
// at most e^eps in exact arithmetic (the contract's "Exactness"), then re-validated.
std::string finite_json(const BaselineArgs& a, const labeldp::FinitePrior<double>& prior) {
  auto raw =
      a.kind == "rr" ? labeldp::randomized_response(prior.values(), a.eps) : labeldp::rr_with_prior(prior, a.eps);
  labeldp::Matrix<double> P = raw.probabilities();
  labeldp::cap_to_epsilon(P, a.eps);
  const labeldp::FiniteMechanism<double> m(raw.inputs(), raw.outputs(), std::move(P));
  std::string s = labeldp::detail::baseline_json_head(a.kind.c_str(), a.eps, a.lo, a.hi, true);
  if (a.kind == "rr-with-prior") s += ",\"top_k\":" + std::to_string(m.num_outputs());
  const double expected = m.expected_loss(prior);
  labeldp::cli::require_finite_result(expected, a.prior + ": the expected squared loss");
  s += ",\"expected_loss\":" + labeldp::json_number(expected) + "," + labeldp::io::mechanism_json_fields(m) + "}";
  return s;
}

std::string build(const BaselineArgs& a) {
  std::optional<labeldp::FinitePrior<double>> prior;
  if (!a.prior.empty()) prior = labeldp::io::read_prior_csv(a.prior);
  if (needs_prior(a.kind)) {
    labeldp::cli::check_finite_baseline_size(a.kind, prior->size(), a.prior + ": '--kind " + a.kind + "'");
    check_prior_in_range(a, *prior);
    return finite_json(a, *prior);
  }
  // The additive kinds: built by the library's one dispatch (make_baseline), as a loaded file is.
  labeldp::BaselineSpec spec;
  spec.kind = a.kind;
  spec.eps = a.eps;
  spec.delta = a.delta.value_or(0);
  spec.lo = a.lo;
  spec.hi = a.hi;
  spec.resolution = a.resolution;
  spec.clip = a.clip;
  const labeldp::AnyMechanism m = labeldp::make_baseline(spec);
  std::string s = m.to_json();
  if (prior) {
    s.pop_back();  // the closing brace
    const double expected = *m.expected_loss(*prior);
    labeldp::cli::require_finite_result(expected, a.prior + ": the expected squared loss");
    s += ",\"expected_loss\":" + labeldp::json_number(expected) + "}";
  }
  return s;
}

// A short human-readable summary of the mechanism file (without --json).
std::string summary(const BaselineArgs& a, const std::string& json) {
  std::ostringstream out;
  out << a.kind << " baseline on [" << format_number(a.lo) << ", " << format_number(a.hi) << "], eps "
      << format_number(a.eps) << (a.clip ? ", outputs clipped" : "") << "\n"
      << "mechanism file (--json): " << json << "\n";
  return out.str();
}

void run_baseline(const BaselineArgs& a) {
  validate(a);
  std::string json;
  try {
    json = build(a);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());  // a library rule (e.g. eps too small for the grid), one line
  }
  const std::string text = a.json ? json + "\n" : summary(a, json);
  std::cout << text;
  std::cout.flush();
  if (!std::cout) throw InputError("<stdout>: write error");
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "baseline", "additive-noise and randomized-response baselines on a public label range, as mechanism files",
    [](CLI::App& app) {
      auto args = std::make_shared<BaselineArgs>();
      app.add_option("--kind", args->kind, std::string("one of ") + kKinds)->required();
      labeldp::cli::add_eps_option(app, args->eps);
      app.add_option("--lo", args->lo, "public lower end L of the label range")->required();
      app.add_option("--hi", args->hi, "public upper end H of the label range (sensitivity H - L)")->required();
      app.add_option("--delta", args->delta, "delta in (0, 1) for gaussian and discrete-gaussian; 0 otherwise");
      app.add_option(
          "--resolution", args->resolution,
          "grid step R dividing H - L (discrete-laplace, discrete-gaussian, discrete-staircase; exponential: "
          "default (H - L)/1024)");
      app.add_option("--prior", args->prior,
                     "CSV with header value,prob or value,count: adds the exact expected squared error; rr and "
                     "rr-with-prior answer with its values");
      app.add_flag("--clip", args->clip, "clip the noisy labels to [L, H] (post-processing)");
      app.add_flag("--json", args->json,
                   "print the mechanism file: {\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":K,\"eps\","
                   "\"delta\",\"sensitivity\",\"lo\",\"hi\",\"clip\", the kind's parameters[, \"expected_loss\"]}");
      app.footer(
          "Every kind samples exactly (no floating-point u < p): Laplace-type noise on a public grid with the "
          "realized guarantee stated (\"realized_eps\" <= eps). Limits: rr at most 2048 prior values, rr-with-prior "
          "262144 (2^18).");
      app.callback([args] { run_baseline(*args); });
    }}};

}  // namespace
}  // namespace cmd_baseline
