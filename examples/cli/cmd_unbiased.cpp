// `labeldp unbiased --prior FILE --eps E (--grid N | --continuous) [--max-bias B] [--time-limit S]
// [--json]`: the
// optimal unbiased (or bias-bounded) randomizer for a known prior (Badanidiyuru et al., NeurIPS
// 2023, Algorithms 1-2; the labeldp CLI contract).
//
// expected_loss = sum_y p(y) E[(M(y) - y)^2] (twice the paper's G with g = (o-y)^2/2);
// max_bias = the achieved max_y |E[M(y)] - y|; lower_bound = the certified lower bound on the
// optimal expected loss (weak duality from the solver's final duals and exact pricing), gap =
// (expected_loss - lower_bound) / expected_loss. status "optimal": gap <= 1e-9; "time-limit",
// "iteration-limit" or "numerical-issue" (roundoff kept the certificate above 1e-9): the best
// feasible mechanism found, with its gap (also said on stderr).
// Everything is computed before anything is printed, so bad input leaves stdout empty.
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "command.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/mechanisms/unbiased.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_unbiased {
namespace {

using labeldp::Index;
using labeldp::cli::InputError;

struct UnbiasedArgs {
  std::string prior;
  double eps = 0;
  std::string grid;  // parsed by parse_count(): "1e6" is accepted
  bool continuous = false;
  double max_bias = 0;
  double time_limit = std::numeric_limits<double>::infinity();
  bool json = false;
};

void run_unbiased(const UnbiasedArgs& a) {
  labeldp::validate_epsilon(a.eps, "--eps");
  labeldp::validate_finite_nonnegative("--max-bias", a.max_bias);
  if (a.continuous == !a.grid.empty()) throw InputError("exactly one of '--grid N' and '--continuous' is required");
  const long long grid = a.continuous ? 0 : labeldp::cli::parse_count("--grid", a.grid, 2);
  labeldp::cli::validate_time_limit(a.time_limit);
  const auto prior = labeldp::cli::read_prior_for_loss(a.prior, "squared");
  labeldp::UnbiasedOptions options;
  options.max_bias = a.max_bias;
  options.time_limit = a.time_limit;
  const auto r = a.continuous ? labeldp::optimal_unbiased_continuous(prior, a.eps, options)
                              : labeldp::optimal_unbiased_grid(prior, a.eps, Index(grid), options);
  // A limit reached (or a certificate roundoff kept above 1e-9) after a feasible mechanism was
  // found still answers: the library returns that mechanism with its certified gap.
  if (!r.optimal() && r.mechanism.num_outputs() == 0)
    throw std::runtime_error(a.prior + ": the unbiased randomizer LP ended " + labeldp::optim::to_string(r.status) +
                             " (eps " + labeldp::detail::format_number(a.eps) +
                             ") before a feasible mechanism was found" +
                             (r.status == labeldp::optim::SolveStatus::NumericalIssue && a.eps < 1e-4
                                  ? std::string("; below eps ~1e-5 its outputs grow as 1/eps and the LP is "
                                                "ill-conditioned: use a larger eps, or 'bins' (exact at any eps)")
                                  : std::string()));
  const double lower_bound = double(r.lower_bound), gap = double(r.gap);
  labeldp::cli::require_finite_result(double(r.expected_loss), a.prior + ": the expected squared loss");
  for (Index j = 0; j < r.mechanism.num_outputs(); ++j)
    labeldp::cli::require_finite_result(double(r.mechanism.outputs()[j]), a.prior + ": an output");
  if (!r.optimal())
    std::cerr << "labeldp: warning: " << labeldp::optim::to_string(r.status)
              << " reached: the mechanism is eps-DP and feasible but not certified optimal; its expected loss is "
                 "at most a relative "
              << labeldp::detail::format_number(gap) << " above the optimum\n";
  using labeldp::io::json_number;
  std::ostringstream out;
  if (a.json) {
    out << "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"unbiased\",\"eps\":" << json_number(a.eps)
        << ",\"status\":\"" << labeldp::optim::to_string(r.status)
        << "\",\"expected_loss\":" << json_number(r.expected_loss);
    if (std::isfinite(lower_bound)) out << ",\"lower_bound\":" << json_number(lower_bound);
    if (std::isfinite(gap)) out << ",\"gap\":" << json_number(gap);
    out << ",\"max_bias\":" << json_number(r.max_bias) << "," << labeldp::io::mechanism_json_fields(r.mechanism)
        << "}\n";
  } else {
    out << "optimal " << (a.max_bias > 0 ? "bias-bounded" : "unbiased") << " randomizer (eps " << json_number(a.eps)
        << ", " << (a.continuous ? std::string("continuous outputs") : "grid of " + std::to_string(grid))
        << "): " << r.mechanism.num_outputs() << " outputs, expected squared loss " << json_number(r.expected_loss)
        << ", max bias " << json_number(r.max_bias) << "\n";
    out << "status " << labeldp::optim::to_string(r.status);
    if (std::isfinite(lower_bound))
      out << ", certified lower bound " << json_number(lower_bound) << " (relative gap " << json_number(gap) << ")";
    out << "\n";
    out << "outputs:";
    for (Index j = 0; j < r.mechanism.num_outputs(); ++j) out << " " << json_number(r.mechanism.outputs()[j]);
    out << "\n";
  }
  std::cout << out.str();
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "unbiased",
    "optimal unbiased (or bias-bounded) randomizer for a known prior (Badanidiyuru et al. 2023, Alg. 1-2; exact)",
    [](CLI::App& app) {
      auto args = std::make_shared<UnbiasedArgs>();
      labeldp::cli::add_prior_option(app, args->prior);
      labeldp::cli::add_eps_option(app, args->eps);
      auto* grid = app.add_option(
          "--grid", args->grid,
          "outputs restricted to the N-point FeasibleOutputSet grid (Alg. 2), N >= 2 (at most 262144 / the number "
          "of prior values)");
      auto* cont = app.add_flag("--continuous", args->continuous, "outputs anywhere on the real line (exact optimum)");
      grid->excludes(cont);
      cont->excludes(grid);
      app.add_option("--max-bias", args->max_bias, "B >= 0: require |E[M(y)] - y| <= B for every label (default 0)");
      labeldp::cli::add_time_limit_option(app, args->time_limit);
      app.add_flag("--json", args->json,
                   "print {\"mechanism\":\"unbiased\",\"eps\",\"status\",\"expected_loss\",\"lower_bound\",\"gap\","
                   "\"max_bias\",\"inputs\",\"outputs\",\"probabilities\"}, numbers with 17 significant digits");
      app.footer(
          "expected_loss is sum_y p(y) E[(M(y)-y)^2]; lower_bound is a certified lower bound on the optimum "
          "(weak duality) and gap = (expected_loss - lower_bound) / expected_loss, <= 1e-9 when status is "
          "optimal; max_bias is the achieved max_y |E[M(y)] - y|. Only outputs with positive probability are "
          "listed. Limits: at most 256 prior values, and with --grid N at most 262144 (2^18) (value, grid point) "
          "pairs (time grows fast with both); values up to 1e150 in magnitude; an eps so small that the outputs "
          "(about k * range / eps) overflow is refused.");
      app.callback([args] { run_unbiased(*args); });
    }}};

}  // namespace
}  // namespace cmd_unbiased
