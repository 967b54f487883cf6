// Property tests at scale (issue 13), the finite mechanisms built by the LP solvers; with
// test_finite_closed_form.cpp (6,500 instances) 10,000 instances in all. Here:
//   optimal LP on an output set (squared, absolute, Poisson)       1,200
//   optimal unbiased on the FeasibleOutputSet grid, or on a wider
//     output set (optimal_unbiased_on_outputs; squared, absolute)  1,000
//   bias-bounded unbiased on a grid (max_bias B > 0)                 600
//   continuous unbiased (700 instances, 30% of them bias-bounded)    700   (3,500 here)
// Solvers may stop without a certificate (time limit, iteration limit, numerical issue): every
// outcome is counted and printed, and whenever a mechanism is returned it must pass every check
// (eps-DP exactly as printed and as sampled, rows summing to 1, within its bias bound, expected
// loss matching its sampler). Most instances must be solved to optimality (asserted per family),
// so the checks cannot pass by the solvers returning nothing.
#include <catch2/catch.hpp>
#include <labeldp/io/mechanism_file.hpp>
#include <labeldp/mechanisms/any_mechanism.hpp>
#include <labeldp/mechanisms/optimal_lp.hpp>
#include <labeldp/mechanisms/unbiased.hpp>
#include <optional>

#include "property/property_common.hpp"

using namespace labeldp;
using namespace labeldp::property;

namespace {

constexpr int kDraws = 8000;      // Monte Carlo draws per instance (spread over the labels)
constexpr double kTimeLimit = 5;  // seconds per solve

const std::vector<double> kExtremeEps{1e-3, 0.005, 60, 100, 300};

/// The checks of a returned mechanism: its matrix printed (json_fields, read back) is the stored
/// one and eps-DP exactly; its sampler table is eps-DP exactly; then (`write`, called after the
/// independent checks so a refused mechanism is reported by them) the mechanism file of the
/// command that prints it -- FiniteLabelMechanism / UnbiasedRandomizer::to_json(), whose
/// constructors re-audit it -- holds the same matrix and loads back. With a `known_tag`, a
/// sampler table above e^eps is recorded as that known issue (and the file is not written: its
/// writer refuses such a table). Returns whether the sampler table passed.
bool check_returned(const Instance& in, const FiniteMechanism<double>& m, const std::function<std::string()>& write,
                    Findings& f, const std::string& known_tag = {}) {
  const Matrix<double> printed_fields = printed_probabilities(m);
  check_printed_equals(printed_fields, m.probabilities(), "printed", f);
  check_matrix(printed_fields, in.eps, "printed matrix", f);
  Findings realized;
  check_realized(m, in.eps, "sampler table", realized);
  const bool realized_ok = realized.ok();
  f.absorb(realized, known_tag, [&](const std::string& msg) { return !known_tag.empty() && is_privacy_failure(msg); });
  if (!realized_ok && !known_tag.empty()) return false;
  const std::string json = write();
  const Matrix<double> printed = printed_probabilities(json);
  check_printed_equals(printed, m.probabilities(), "mechanism file", f);
  const AnyMechanism loaded = io::load_mechanism(json, "printed");
  if (!loaded.finite() || loaded.finite()->probabilities() != printed)
    f.fail("the mechanism file loads back with another matrix");
  return realized_ok;
}

/// Known issue (reported to the owner of core/audit.hpp and core/alias_table.hpp): some optimal
/// unbiased and bias-bounded mechanisms, eps-DP exactly as stored, are sampled from an alias
/// table whose integer weights exceed the ratio e^eps (about 1e-14 relative; mostly eps >= 4);
/// UnbiasedRandomizer then refuses them. Minimized in test_privacy_regression.cpp.
const std::string kUnbiasedTable = "unbiased sampler table above e^eps";

/// Known issue, the same defect of cap_to_epsilon() (its slow fixed point removes more than 1e-9
/// of a row): the solver throws FiniteMechanism's "row i sums to ..., not 1" on valid input.
const std::string kCapRowSum = "solver throws: cap_to_epsilon() emptied a row by more than 1e-9";

/// The solve, or nothing when it throws the known issue above (recorded).
template <typename Solve>
auto solve_or_known(Solve&& solve, Findings& f) -> std::optional<decltype(solve())> {
  try {
    return solve();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.find("not 1 (tolerance 1e-9)") == std::string::npos) throw;
    f.known.emplace_back(kCapRowSum, what);
    return std::nullopt;
  }
}

/// The achieved max |E[M(y)] - y| over the labels, from the printed rows.
double achieved_bias(const FiniteMechanism<double>& m) {
  double worst = 0;
  for (Index i = 0; i < m.num_inputs(); ++i) worst = std::max(worst, std::abs(m.conditional_mean(i) - m.inputs()[i]));
  return worst;
}

/// Bias within B up to roundoff relative to the labels' and outputs' magnitude (the tolerance of
/// detail::refuse_bias_beyond(): 1e-6 relative of B, or 1e-9 of the labels' range at B = 0).
void check_bias(const Instance& in, const FiniteMechanism<double>& m, double bound, Findings& f) {
  const double range = in.prior.values().maxCoeff() - in.prior.values().minCoeff();
  const double magnitude = std::max({m.outputs().cwiseAbs().maxCoeff(), in.prior.values().cwiseAbs().maxCoeff(), 1.0});
  const double tol = bound * 1e-6 + std::max(1e-9 * range, 1e-12 * magnitude);
  const double bias = achieved_bias(m);
  if (!(bias <= bound + tol))
    f.fail("achieved bias " + num(bias) + " exceeds the bound " + num(bound) + " (tolerance " + num(tol) + ")");
}

/// The certificate of a returned mechanism (issue 11: lower_bound <= expected_loss <= lower_bound
/// (1 + 1e-9) for every certified solve, and otherwise a status that says why): a bound that is
/// a number no higher than the loss (beyond it by at most 1e-10 relative, the roundoff
/// attach_certificate() absorbs), the reported gap equal to (loss - bound) / |loss|, and status
/// Optimal only with that gap within `tolerance`. A bound may be missing (-infinity or NaN), or
/// above the loss, only when the status is not Optimal.
void check_certificate(optim::SolveStatus status, double loss, double bound, double gap, double tolerance,
                       Findings& f) {
  const bool optimal = status == optim::SolveStatus::Optimal;
  const std::string what = "status " + optim::to_string(status) + ", loss " + num(loss) + ", lower bound " +
                           num(bound) + ", gap " + num(gap);
  if (!std::isfinite(bound)) {
    if (optimal) f.fail("certificate: optimal without a finite lower bound (" + what + ")");
    return;
  }
  const double scale = std::max(std::abs(loss), 1e-300);
  if (!(bound <= loss + 1e-10 * scale)) {
    if (optimal) f.fail("certificate: optimal with the lower bound above the loss (" + what + ")");
    return;
  }
  const double expected_gap = std::max(0.0, loss - bound) / scale;
  if (!(std::abs(gap - expected_gap) <= 1e-12 + 1e-9 * expected_gap))
    f.fail("certificate: the gap is not (loss - bound) / |loss| = " + num(expected_gap) + " (" + what + ")");
  if (optimal && !(gap <= tolerance))
    f.fail("certificate: optimal with a gap above " + num(tolerance) + " (" + what + ")");
}

/// Solver outcome accounting: the status, and whether a mechanism came with it. With
/// LABELDP_PROPERTY_VERBOSE set, every instance that did not end optimal is printed (replayable).
void count(Tally& tally, const Instance& in, optim::SolveStatus status, bool has_mechanism) {
  ++tally.outcomes[optim::to_string(status) + (has_mechanism ? "" : "(no mechanism)")];
  if (status != optim::SolveStatus::Optimal && std::getenv("LABELDP_PROPERTY_VERBOSE"))
    std::printf("[property] %s: %s\n", optim::to_string(status).c_str(), in.describe().c_str());
}

/// At least `fraction` of the instances solved to optimality (the rest are counted above).
void require_mostly_optimal(const Tally& tally, double fraction) {
  const int optimal = tally.outcomes.count("optimal") ? tally.outcomes.at("optimal") : 0;
  INFO(tally.family << ": " << optimal << " of " << tally.instances << " optimal");
  CHECK(double(optimal) >= fraction * double(tally.instances));
}

/// An output set for the optimal LP: a uniform grid over the labels' range widened a little,
/// the prior's values plus random points, or random points (all positive for Poisson loss).
Vector<double> lp_outputs(const Instance& in, Draw& d, std::string& how) {
  const double lo = in.prior.values().minCoeff(), hi = in.prior.values().maxCoeff();
  const double pad = d.uniform(0, 0.2) * std::max(hi - lo, 1.0);
  double a = lo - pad, b = hi + pad;
  if (in.loss == LossKind::Poisson) a = std::max(a, std::max(lo, 1e-3) * 0.5), b = std::max(b, 2 * a);
  const Index n = Index(d.integer(2, 60));
  std::vector<double> out;
  const int kind = int(d.integer(0, 2));
  if (kind == 0) {
    how = "uniform grid";
    for (Index j = 0; j < n; ++j) out.push_back(a + (b - a) * double(j) / double(n - 1));
  } else {
    how = kind == 1 ? "prior values + random" : "random";
    if (kind == 1)
      for (Index i = 0; i < in.prior.size(); ++i)
        if (in.loss != LossKind::Poisson || in.prior.value(i) > 0) out.push_back(in.prior.value(i));
    for (Index j = 0; j < n; ++j) out.push_back(d.uniform(a, b));
  }
  how += ", " + std::to_string(out.size()) + " outputs in [" + num(a) + ", " + num(b) + "]";
  return Eigen::Map<const Vector<double>>(out.data(), Index(out.size()));
}

}  // namespace

TEST_CASE("property: optimal LP mechanism, 1200 instances", "[property][optimal_lp]") {
  Space space;
  space.max_k = 40;
  space.losses = {LossKind::Squared, LossKind::Absolute, LossKind::Poisson};
  space.extreme_eps = kExtremeEps;
  const Tally tally = run_family("optimal-lp", 11, 1200, [&](std::uint64_t seed, Instance& in, Findings& f, Tally& t) {
    Draw d(seed);
    in = make_instance("optimal-lp", seed, space, d);
    std::string how;
    const Vector<double> outputs = lp_outputs(in, d, how);
    in.extra = how;
    OptimalLPOptions options;
    options.column_generation.time_limit = kTimeLimit;
    with_loss(in.loss, [&](auto loss) {
      const auto r = optimal_mechanism_lp(in.prior, in.eps, outputs, options, loss);
      const bool has = r.mechanism.num_inputs() > 0;
      count(t, in, r.status, has);
      if (r.status == optim::SolveStatus::Optimal && !has) f.fail("status optimal without a mechanism");
      if (!has) return;
      check_certificate(r.status, double(r.expected_loss), r.dual_bound, r.certified_gap(), kCertifiedGap, f);
      check_returned(
          in, r.mechanism, [&] { return FiniteLabelMechanism("optimal-lp", in.eps, r.mechanism).to_json(); }, f);
      const FiniteLabelMechanism flm("optimal-lp", in.eps, r.mechanism);
      ++t.monte_carlo;
      check_expected_loss(
          in.prior, in.loss, [&](Index i) { return realized_row(r.mechanism, i); },
          [&](Index i, SeededRandom& g) { return flm.sample(in.prior.value(i), g); }, double(r.expected_loss), kDraws,
          seed, "optimal-lp", f);
    });
  });
  require_mostly_optimal(tally, 0.85);
  check_known_fraction(tally, 0);
}

namespace {

/// One unbiased or bias-bounded solve on a grid / output set, checked.
void unbiased_grid_instance(const Instance& in, const UnbiasedOptions& options, const Vector<double>* outputs,
                            Index grid_size, Findings& f, Tally& t) {
  with_loss(in.loss, [&](auto loss) {
    const auto solved = solve_or_known(
        [&] {
          return outputs ? optimal_unbiased_on_outputs(in.prior, in.eps, *outputs, options, loss)
                         : optimal_unbiased_grid(in.prior, in.eps, grid_size, options, loss);
        },
        f);
    if (!solved) return;
    const auto& r = *solved;
    const bool has = r.mechanism.num_inputs() > 0;
    count(t, in, r.status, has);
    if (r.status == optim::SolveStatus::Optimal && !has) f.fail("status optimal without a mechanism");
    if (!has) return;
    check_certificate(r.status, double(r.expected_loss), double(r.lower_bound), double(r.gap), options.gap_tolerance,
                      f);
    const bool table_ok = check_returned(
        in, r.mechanism, [&] { return UnbiasedRandomizer<double>(r, in.eps).to_json(); }, f, kUnbiasedTable);
    check_bias(in, r.mechanism, options.max_bias, f);
    ++t.monte_carlo;
    // The randomizer's sampler (URR, then the alias table), or the table alone where the
    // randomizer refuses it (the known issue above).
    std::optional<UnbiasedRandomizer<double>> randomizer;
    if (table_ok) randomizer.emplace(r, in.eps);
    check_expected_loss(
        in.prior, in.loss, [&](Index i) { return realized_row(r.mechanism, i); },
        [&](Index i, SeededRandom& g) {
          return randomizer ? randomizer->sample(in.prior.value(i), g) : r.mechanism.sample(in.prior.value(i), g);
        },
        double(r.expected_loss), kDraws, in.seed, "unbiased", f);
  });
}

}  // namespace

TEST_CASE("property: optimal unbiased randomizer on a grid or output set, 1000 instances", "[property][unbiased]") {
  Space space;
  space.max_k = 40;
  space.losses = {LossKind::Squared, LossKind::Absolute};
  space.extreme_eps = kExtremeEps;
  const Tally tally =
      run_family("unbiased-grid", 12, 1000, [&](std::uint64_t seed, Instance& in, Findings& f, Tally& t) {
        Draw d(seed);
        in = make_instance("unbiased-grid", seed, space, d);
        UnbiasedOptions options;
        options.time_limit = kTimeLimit;
        const Index grid_size = Index(std::llround(d.log_uniform(2, 300)));
        if (in.prior.size() > 1 && d.coin(0.3)) {
          // A wider output set than FeasibleOutputSet's [L, U] (feasible: it contains L and U's span).
          const Vector<double> dbrr = debiased_rr_outputs(in.prior.values(), table_epsilon(in.eps));
          const double L = dbrr.minCoeff(), U = dbrr.maxCoeff(), pad = d.uniform(0, 0.5) * (U - L);
          Vector<double> outputs(grid_size + 2);
          for (Index j = 0; j < grid_size; ++j) outputs[j] = d.uniform(L - pad, U + pad);
          outputs[grid_size] = L - pad, outputs[grid_size + 1] = U + pad;
          std::sort(outputs.begin(), outputs.end());  // the solver takes strictly increasing outputs
          outputs.conservativeResize(Index(std::unique(outputs.begin(), outputs.end()) - outputs.begin()));
          in.extra = "on_outputs: " + std::to_string(outputs.size()) + " random outputs in [" + num(L - pad) + ", " +
                     num(U + pad) + "]";
          unbiased_grid_instance(in, options, &outputs, 0, f, t);
        } else {
          in.extra = "grid_size " + std::to_string(grid_size);
          unbiased_grid_instance(in, options, nullptr, grid_size, f, t);
        }
      });
  require_mostly_optimal(tally, 0.95);
  check_known_fraction(tally, 0);
}

TEST_CASE("property: bias-bounded randomizer on a grid, 600 instances", "[property][unbiased]") {
  Space space;
  space.max_k = 40;
  space.losses = {LossKind::Squared, LossKind::Absolute};
  space.extreme_eps = kExtremeEps;
  const Tally tally =
      run_family("bias-bounded-grid", 13, 600, [&](std::uint64_t seed, Instance& in, Findings& f, Tally& t) {
        Draw d(seed);
        in = make_instance("bias-bounded-grid", seed, space, d);
        UnbiasedOptions options;
        options.time_limit = kTimeLimit;
        const double range = in.prior.values().maxCoeff() - in.prior.values().minCoeff();
        options.max_bias = d.log_uniform(1e-3, 1) * std::max(range, 1e-3);
        const Index grid_size = Index(std::llround(d.log_uniform(2, 300)));
        in.extra = "grid_size " + std::to_string(grid_size) + ", max_bias " + num(options.max_bias);
        unbiased_grid_instance(in, options, nullptr, grid_size, f, t);
      });
  require_mostly_optimal(tally, 0.9);
  check_known_fraction(tally, 0);
}

TEST_CASE("property: continuous unbiased and bias-bounded randomizers, 700 instances", "[property][unbiased]") {
  Space space;
  space.max_k = 40;
  space.extreme_eps = kExtremeEps;
  const Tally tally = run_family("continuous", 14, 700, [&](std::uint64_t seed, Instance& in, Findings& f, Tally& t) {
    Draw d(seed);
    in = make_instance("continuous", seed, space, d);
    UnbiasedOptions options;
    options.time_limit = kTimeLimit;
    if (d.coin(0.3)) {
      const double range = in.prior.values().maxCoeff() - in.prior.values().minCoeff();
      options.max_bias = d.log_uniform(1e-3, 1) * std::max(range, 1e-3);
    }
    in.extra = "max_bias " + num(options.max_bias);
    const auto solved = solve_or_known([&] { return optimal_unbiased_continuous(in.prior, in.eps, options); }, f);
    if (!solved) return;
    const auto& r = *solved;
    const bool has = r.mechanism.num_inputs() > 0;
    count(t, in, r.status, has);
    if (r.status == optim::SolveStatus::Optimal && !has) f.fail("status optimal without a mechanism");
    if (!has) return;
    check_certificate(r.status, double(r.expected_loss), double(r.lower_bound), double(r.gap), options.gap_tolerance,
                      f);
    const bool table_ok = check_returned(
        in, r.mechanism, [&] { return UnbiasedRandomizer<double>(r, in.eps).to_json(); }, f, kUnbiasedTable);
    check_bias(in, r.mechanism, options.max_bias, f);
    ++t.monte_carlo;
    std::optional<UnbiasedRandomizer<double>> randomizer;
    if (table_ok) randomizer.emplace(r, in.eps);
    check_expected_loss(
        in.prior, LossKind::Squared, [&](Index i) { return realized_row(r.mechanism, i); },
        [&](Index i, SeededRandom& g) {
          return randomizer ? randomizer->sample(in.prior.value(i), g) : r.mechanism.sample(in.prior.value(i), g);
        },
        double(r.expected_loss), kDraws, seed, "continuous", f);
  });
  require_mostly_optimal(tally, 0.85);
  check_known_fraction(tally, 0);
}
