// `labeldp interval --hist FILE --eps E --zeta Z [--json]`: RPWithPrior's optimal interval
// [A1, A2] for a histogram prior (the labeldp CLI contract; RPWithPrior ICLR submission,
// Lemma 3.5 / Algorithm 1, solved exactly in O(m) by labeldp::optimal_interval()).
//
// Extension: `--choose-zeta` instead of `--zeta` picks zeta minimizing the closed-form expected
// noisy-label MSE (labeldp::choose_zeta()) and adds "expected_mse" to the JSON.
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "command.hpp"
#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/mechanisms/rpwithprior.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_interval {
namespace {

struct IntervalArgs {
  std::string hist;
  double eps = 0;
  double zeta = 0;
  bool zeta_given = false;
  bool choose_zeta = false;
  bool json = false;
  double granularity = 0;  // 0: chosen from the interval (see --granularity)
};

void run_interval(const IntervalArgs& a) {
  labeldp::validate_epsilon(a.eps);
  if (a.zeta_given == a.choose_zeta)
    throw labeldp::cli::InputError("interval: give exactly one of --zeta Z and --choose-zeta");
  if (a.zeta_given) labeldp::validate_finite_positive("zeta", a.zeta);
  const auto prior = labeldp::io::read_histogram_csv(a.hist);
  double zeta = a.zeta;
  double mse = 0;
  if (a.choose_zeta) {
    const auto choice = labeldp::choose_zeta(prior, a.eps);
    zeta = choice.zeta;
    mse = choice.expected_mse;
  }
  const auto best = labeldp::optimal_interval(prior, a.eps, zeta);
  if (a.choose_zeta) labeldp::cli::require_finite_result(mse, a.hist + ": the expected noisy-label MSE");
  labeldp::cli::require_finite_result(best.a2 - best.a1 + 2 * zeta, a.hist + ": the interval's width plus 2 zeta");
  // The output grid of the sampler (what `privatize --mechanism` applies): --granularity, or the
  // largest power of two giving at least 2^16 grid points on [A1 - zeta, A2 + zeta].
  double g = a.granularity;
  if (g == 0)
    g = std::ldexp(1.0, std::ilogb((best.a2 - best.a1 + 2 * zeta) / 65536.0));
  else
    labeldp::validate_finite_positive("granularity", g);
  // Building the sampled mechanism validates the grid (size, lattice) before anything is printed.
  (void)labeldp::RPWithPrior<double>(best.a1, best.a2, zeta, a.eps, g);
  // Everything is computed before anything is printed: nothing on stdout on error.
  std::ostringstream out;
  using labeldp::io::json_number;
  if (a.json) {
    out << "{\"format\":\"labeldp-mechanism\",\"version\":1,\"mechanism\":\"rpwithprior\",\"eps\":"
        << json_number(a.eps) << ",\"delta\":0,\"zeta\":" << json_number(zeta) << ",\"A1\":" << json_number(best.a1)
        << ",\"A2\":" << json_number(best.a2) << ",\"objective\":" << json_number(best.objective)
        << ",\"granularity\":" << json_number(g)
        << ",\"outside\":\"clamp\",\"lattice_bits\":" << labeldp::RPWithPrior<double>::kDefaultLatticeBits;
    if (a.choose_zeta) out << ",\"expected_mse\":" << json_number(mse);
    out << "}\n";
  } else {
    out << "RPWithPrior optimal interval (eps " << json_number(a.eps) << ", zeta " << json_number(zeta) << ")\n"
        << "A1 " << json_number(best.a1) << "\nA2 " << json_number(best.a2) << "\nobjective "
        << json_number(best.objective) << "\n";
    if (a.choose_zeta) out << "expected_mse " << json_number(mse) << "\n";
  }
  std::cout << out.str();
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "interval", "RPWithPrior's optimal interval [A1, A2] for a histogram prior (exact, O(cells))", [](CLI::App& app) {
      auto args = std::make_shared<IntervalArgs>();
      app.add_option("--hist", args->hist,
                     "CSV with header lo,hi,mass: rows sorted and contiguous, lo < hi, mass finite >= 0, not all 0 "
                     "(normalized); density mass/(hi-lo) on [lo,hi)")
          ->required();
      labeldp::cli::add_eps_option(app, args->eps);
      app.add_option("--zeta", args->zeta, "neighbourhood half-width zeta, finite and > 0")
          ->each([args](const std::string&) { args->zeta_given = true; });
      app.add_option("--granularity", args->granularity,
                     "output grid step of the sampled mechanism written to the file (default: the largest power of "
                     "two giving >= 2^16 points on [A1 - zeta, A2 + zeta])");
      app.add_flag("--choose-zeta", args->choose_zeta,
                   "instead of --zeta: choose zeta minimizing the closed-form expected noisy-label MSE "
                   "(adds \"expected_mse\")");
      app.add_flag("--json", args->json,
                   "print {\"mechanism\":\"rpwithprior\",\"eps\":E,\"zeta\":Z,\"A1\":a,\"A2\":b,\"objective\":F}, "
                   "numbers with 17 significant digits");
      app.footer(
          "objective = F(A1,A2) = 2Z/(2Z + e^-E (A2-A1)) * (prior mass of [A1,A2]) (Lemma 3.3), maximized "
          "exactly over all A1 <= A2. Ties: smallest A2, then the shortest interval. Limits: at most 4194304 (2^22) "
          "histogram cells, lines up to 16 MiB.");
      app.callback([args] { run_interval(*args); });
    }}};

}  // namespace
}  // namespace cmd_interval
