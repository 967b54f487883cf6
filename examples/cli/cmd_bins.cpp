// `labeldp bins --prior FILE --eps E [--loss squared|absolute|poisson] [--json]`: the optimal
// RR-on-Bins mechanism for a known prior (Ghazi et al., ICLR 2023, Algorithms 1-2; solved exactly
// by labeldp::solve_rr_on_bins(); the labeldp CLI contract).
//
// expected_loss = sum_y p(y) E[loss(M(y), y)] under Algorithm 1's exact probabilities, with
// squared (o-y)^2, absolute |o-y| or Poisson o - y ln(o). Everything is computed before anything
// is printed, so bad input leaves stdout empty.
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "command.hpp"
#include "labeldp/core/audit.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_bins {
namespace {

using labeldp::Index;
using labeldp::cli::InputError;

struct BinsArgs {
  std::string prior;
  double eps = 0;
  std::string loss = "squared";
  bool json = false;
};

template <typename Loss>
std::string render(const BinsArgs& a, const labeldp::FinitePrior<double>& prior, const Loss& loss) {
  const auto sol = labeldp::solve_rr_on_bins(prior, a.eps, loss);
  const auto& rr = sol.mechanism;
  if (a.loss == "poisson" && !(rr.outputs()[0] > 0))
    throw InputError(a.prior +
                     ": all probability is on label 0: Poisson log loss needs outputs > 0, and no positive "
                     "output is optimal");
  const double expected = rr.expected_loss(prior, loss);
  labeldp::cli::require_finite_result(expected, a.prior + ": the expected " + a.loss + " loss");
  using labeldp::io::json_number;
  std::ostringstream out;
  if (a.json) {
    // The library's mechanism file, with the loss and its expected value after "delta".
    const std::string text = rr.to_json(), after = "\"delta\":0,";
    const std::size_t at = text.find(after) + after.size();
    out << text.substr(0, at) << "\"loss\":\"" << a.loss << "\",\"expected_loss\":" << json_number(expected) << ","
        << text.substr(at) << "\n";
  } else {
    out << "RR-on-Bins (eps " << json_number(a.eps) << ", " << a.loss << " loss): " << rr.num_outputs()
        << " bins, expected loss " << json_number(expected) << "\n";
    for (Index i = 0; i < rr.num_inputs(); ++i)
      out << json_number(rr.inputs()[i]) << " -> " << json_number(rr.phi(i)) << "\n";
  }
  return out.str();
}

void run_bins(const BinsArgs& a) {
  labeldp::validate_epsilon(a.eps, "--eps");
  labeldp::cli::validate_loss_name(a.loss);
  // Read once (a FIFO works); values the loss cannot take are refused on their line.
  const auto prior = labeldp::cli::read_prior_for_loss(a.prior, a.loss);
  if (prior.size() > labeldp::cli::kMaxBinsValues)
    throw InputError(a.prior + ": " + std::to_string(prior.size()) + " prior values is more than the limit of " +
                     std::to_string(labeldp::cli::kMaxBinsValues) +
                     " for bins (its time grows as the square of the count)");
  const std::string text = labeldp::cli::with_loss(a.loss, [&](const auto& loss) { return render(a, prior, loss); });
  std::cout << text;
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "bins", "optimal RR-on-Bins mechanism for a known prior (Ghazi et al. 2023, Algorithms 1-2, exact)",
    [](CLI::App& app) {
      auto args = std::make_shared<BinsArgs>();
      labeldp::cli::add_prior_option(app, args->prior);
      labeldp::cli::add_eps_option(app, args->eps);
      app.add_option("--loss", args->loss, "squared (default), absolute or poisson (labels >= 0)");
      app.add_flag("--json", args->json,
                   "print {\"mechanism\":\"rr-on-bins\",\"eps\",\"loss\",\"expected_loss\",\"inputs\",\"outputs\","
                   "\"bins\":[{\"first\",\"last\",\"output\"}],\"probabilities\"}, numbers with 17 significant digits");
      app.footer(
          "Each label is reported as its bin's output with probability e^eps/(e^eps+d-1), as each other output "
          "with probability 1/(e^eps+d-1); the bins minimize the expected loss (optimal among all eps-DP "
          "mechanisms, Theorem 5). Limits: at most 65536 prior values (time grows as their square); with squared loss "
          "values up to 1e150 in magnitude.");
      app.callback([args] { run_bins(*args); });
    }}};

}  // namespace
}  // namespace cmd_bins
