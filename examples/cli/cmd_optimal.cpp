// `labeldp optimal --prior FILE --eps E --outputs FILE [--loss squared|absolute|poisson]
// [--time-limit S] [--json]`:
// the eps-DP mechanism with the least expected loss among ALL eps-DP mechanisms from the prior's
// values to the given finite output set (Ghazi et al., ICLR 2023, LP (2); solved by
// labeldp::optimal_mechanism_lp(), column generation over staircase columns; the
// labeldp CLI contract).
//
// The outputs file is a CSV with header `output`, one finite value per row, duplicates ignored.
// The JSON carries "status", the certified "lower_bound" on the optimal expected loss and the
// relative "gap"; a time limit reached after a feasible mechanism was found still answers with
// that mechanism and says so on stderr.
// Everything is computed before anything is printed, so bad input leaves stdout empty.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "command.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/mechanisms/optimal_lp.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_optimal {
namespace {

using labeldp::Index;
using labeldp::cli::InputError;

struct OptimalArgs {
  std::string prior;
  double eps = 0;
  std::string outputs;
  std::string loss = "squared";
  double time_limit = std::numeric_limits<double>::infinity();
  bool json = false;
};

// The outputs file, read once (a FIFO works): values the loss cannot take are refused on their
// line (poisson: outputs > 0; squared: magnitude up to 1e150).
labeldp::Vector<double> read_outputs(const std::string& path, const std::string& loss) {
  std::vector<double> values;
  labeldp::io::for_each_column_value(path, "output", [&](double v, std::size_t line) {
    const std::string where = path + ":" + std::to_string(line) + ": output " + labeldp::detail::format_number(v);
    if (loss == "poisson" && !(v > 0)) throw InputError(where + " is not positive: Poisson log loss needs outputs > 0");
    if (loss == "squared" && std::abs(v) > labeldp::cli::kMaxSquaredLossMagnitude)
      throw InputError(where +
                       " is beyond 1e150 in magnitude (the limit with squared loss: its square would overflow)");
    if (values.size() >= labeldp::io::kMaxCsvRows)
      throw InputError(path + ":" + std::to_string(line) + ": more than " + std::to_string(labeldp::io::kMaxCsvRows) +
                       " outputs (the reader's limit)");
    values.push_back(v);
  });
  if (values.empty()) throw InputError(path + ":2: no output values: at least one row is required");
  labeldp::Vector<double> out(Index(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) out[Index(i)] = values[i];
  return out;
}

template <typename Loss>
std::string render(const OptimalArgs& a, const labeldp::FinitePrior<double>& prior,
                   const labeldp::Vector<double>& outputs, const Loss& loss) {
  labeldp::OptimalLPOptions options;
  options.column_generation.time_limit = a.time_limit;
  const auto r = labeldp::optimal_mechanism_lp(prior, a.eps, outputs, options, loss);
  labeldp::cli::require_finite_result(double(r.expected_loss), a.prior + ": the expected " + a.loss + " loss");
  r.require_mechanism();
  if (const std::string w = r.warning(); !w.empty()) std::cerr << "labeldp: warning: " << w << "\n";
  using labeldp::io::json_number;
  std::ostringstream out;
  if (a.json) {
    out << labeldp::io::optimal_lp_json(r, a.eps, a.loss) << "\n";
  } else {
    const auto& m = r.mechanism;
    out << "optimal eps-DP mechanism onto " << outputs.size() << " outputs (eps " << json_number(a.eps) << ", "
        << a.loss << " loss): " << m.num_outputs() << " outputs used, expected loss " << json_number(r.expected_loss)
        << " (certified lower bound " << json_number(r.dual_bound) << ")\n";
    for (Index i = 0; i < m.num_inputs(); ++i) {
      out << json_number(m.inputs()[i]) << ":";
      for (Index j = 0; j < m.num_outputs(); ++j)
        out << " " << json_number(m.outputs()[j]) << "@" << json_number(m.probabilities()(i, j));
      out << "\n";
    }
  }
  return out.str();
}

void run_optimal(const OptimalArgs& a) {
  labeldp::validate_epsilon(a.eps, "--eps");
  labeldp::cli::validate_time_limit(a.time_limit);
  labeldp::cli::validate_loss_name(a.loss);
  const auto prior = labeldp::cli::read_prior_for_loss(a.prior, a.loss);
  const auto outputs = read_outputs(a.outputs, a.loss);
  const std::string text =
      labeldp::cli::with_loss(a.loss, [&](const auto& loss) { return render(a, prior, outputs, loss); });
  std::cout << text;
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "optimal", "optimal eps-DP mechanism onto a finite output set (Ghazi et al. 2023, LP (2), column generation)",
    [](CLI::App& app) {
      auto args = std::make_shared<OptimalArgs>();
      labeldp::cli::add_prior_option(app, args->prior);
      labeldp::cli::add_eps_option(app, args->eps);
      app.add_option("--outputs", args->outputs,
                     "CSV with header output; one finite value per row (duplicates ignored)")
          ->required();
      app.add_option("--loss", args->loss, "squared (default), absolute or poisson (labels >= 0, outputs > 0)");
      labeldp::cli::add_time_limit_option(app, args->time_limit);
      app.add_flag("--json", args->json,
                   "print {\"mechanism\":\"optimal-lp\",\"eps\",\"loss\",\"status\",\"expected_loss\",\"lower_bound\","
                   "\"gap\",\"inputs\",\"outputs\","
                   "\"probabilities\"}, numbers with 17 significant digits; only outputs with positive probability");
      app.footer(
          "Solves LP (2) of Ghazi et al. (2023) exactly by column generation over staircase columns; the "
          "expected loss is sum_y p(y) sum_o P[y][o] loss(o, y). Limits: at most 1024 prior values and 1048576 (2^20) "
          "(value, distinct output) pairs (time grows about as the cube of the values); with squared loss values and "
          "outputs up to 1e150 in magnitude. Below eps 1e-12 the answer is the best constant output (optimal within "
          "a relative eps, certified).");
      app.callback([args] { run_optimal(*args); });
    }}};

}  // namespace
}  // namespace cmd_optimal
