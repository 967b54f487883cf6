// Tests of the one options style (issue 12): every options struct -- SimplexOptions,
// ColumnGenerationOptions, StaircaseBarrierOptions, OptimalLPOptions, UnbiasedOptions,
// HistEpsOptions -- has check(), which accepts the defaults and rejects each bad field with a
// message that names the field first (nested fields with their path), the rule and the value;
// every solver calls check() before anything else; limits mean what they say at 0 and
// kUnlimited / +infinity is "no limit".
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/mechanisms/detail/staircase_barrier.hpp"
#include "labeldp/mechanisms/optimal_lp.hpp"
#include "labeldp/mechanisms/unbiased_continuous.hpp"
#include "labeldp/mechanisms/unbiased_grid.hpp"
#include "labeldp/optim/column_generation.hpp"
#include "labeldp/optim/simplex.hpp"
#include "labeldp/prior/hist_eps.hpp"

using labeldp::ContinuousMethod;
using labeldp::FinitePrior;
using labeldp::HistEpsOptions;
using labeldp::OptimalLPOptions;
using labeldp::UnbiasedOptions;
using labeldp::detail::StaircaseBarrierOptions;
using labeldp::optim::ColumnGenerationOptions;
using labeldp::optim::Index;
using labeldp::optim::kUnlimited;
using labeldp::optim::SimplexOptions;
using labeldp::optim::SolveStatus;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// One row of a rejection table: the field, how to make it bad, the whole expected message.
template <typename Options>
struct BadField {
  std::string field;                   // as the message names it (with its path when nested)
  std::function<void(Options&)> make;  // sets that field (only) to a bad value
  std::string message;                 // the complete message check() must throw
};

// Each row: check() throws std::invalid_argument whose message is exactly `message`, and starts
// by naming the field. The defaults pass.
template <typename Options>
void require_rejections(const std::vector<BadField<Options>>& rows) {
  REQUIRE_NOTHROW(Options{}.check());
  for (const auto& row : rows) {
    INFO("field " << row.field);
    Options o;
    row.make(o);
    REQUIRE_THROWS_AS(o.check(), std::invalid_argument);
    REQUIRE_THROWS_WITH(o.check(), Catch::StartsWith("'" + row.field + "' "));
    REQUIRE_THROWS_WITH(o.check(), row.message);
  }
}

FinitePrior<> small_prior() { return FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.5, 0.3, 0.2}); }

labeldp::Vector<double> small_outputs() {
  labeldp::Vector<double> o(5);
  o << -1, 0, 1, 2, 3;
  return o;
}

// min x0 + 2 x1 subject to x0 + x1 >= 1: one pivot from the slack basis.
labeldp::optim::LinearProgram small_lp() {
  labeldp::optim::LinearProgram lp;
  lp.A = Eigen::MatrixXd::Ones(1, 2);
  lp.b = Eigen::VectorXd::Ones(1);
  lp.row_types = {labeldp::optim::RowType::GreaterEqual};
  lp.c = Eigen::Vector2d(1, 2);
  return lp;
}

// The optimal-mechanism LP (2) of a two-label prior in compact form, for the barrier.
labeldp::detail::StaircaseBarrierProblem small_barrier_problem() {
  labeldp::detail::StaircaseBarrierProblem P;
  P.cost = Eigen::MatrixXd(2, 3);
  P.cost << 0.0, 0.25, 1.0, 1.0, 0.25, 0.0;
  P.rows = labeldp::detail::StaircaseRows::Normalization;
  P.low = labeldp::detail::staircase_low(1.0);
  return P;
}

}  // namespace

// --- check(): the defaults pass, every bad field is rejected by name ---------------------------

TEST_CASE("options: SimplexOptions::check names each bad field", "[options][simplex]") {
  // compute_reduced_costs (bool) has no bad value.
  require_rejections<SimplexOptions>({
      {"primal_feasibility_tolerance", [](auto& o) { o.primal_feasibility_tolerance = 0; },
       "'primal_feasibility_tolerance' must be finite and positive, got 0"},
      {"dual_feasibility_tolerance", [](auto& o) { o.dual_feasibility_tolerance = kNaN; },
       "'dual_feasibility_tolerance' must be finite and positive, got nan"},
      {"pivot_tolerance", [](auto& o) { o.pivot_tolerance = kInf; },
       "'pivot_tolerance' must be finite and positive, got inf"},
      {"max_iterations", [](auto& o) { o.max_iterations = -1; }, "'max_iterations' must be >= 0, got -1"},
      {"time_limit", [](auto& o) { o.time_limit = -1; },
       "'time_limit' must be >= 0 seconds (infinity = no limit), got -1"},
      {"refactorization_interval", [](auto& o) { o.refactorization_interval = 0; },
       "'refactorization_interval' must be >= 1, got 0"},
      {"degenerate_pivots_before_perturbation", [](auto& o) { o.degenerate_pivots_before_perturbation = -1; },
       "'degenerate_pivots_before_perturbation' must be >= 0, got -1"},
  });
}

TEST_CASE("options: ColumnGenerationOptions::check names each bad field", "[options][column_generation]") {
  require_rejections<ColumnGenerationOptions>({
      {"max_rounds", [](auto& o) { o.max_rounds = -1; }, "'max_rounds' must be >= 0, got -1"},
      {"time_limit", [](auto& o) { o.time_limit = kNaN; },
       "'time_limit' must be >= 0 seconds (infinity = no limit), got nan"},
      {"gap_tolerance", [](auto& o) { o.gap_tolerance = -1; },
       "'gap_tolerance' must be finite and non-negative, got -1"},
      {"column_sum_bound", [](auto& o) { o.column_sum_bound = 0; },
       "'column_sum_bound' must be positive (infinity = unknown), got 0"},
      {"dual_smoothing", [](auto& o) { o.dual_smoothing = 1; }, "'dual_smoothing' must be in [0, 1), got 1"},
      {"max_columns_per_round", [](auto& o) { o.max_columns_per_round = -1; },
       "'max_columns_per_round' must be >= 0, got -1"},
      {"warm_duals", [](auto& o) { o.warm_duals = Eigen::VectorXd::Constant(2, kNaN); }, "'warm_duals' must be finite"},
      {"simplex.pivot_tolerance", [](auto& o) { o.simplex.pivot_tolerance = 0; },
       "'simplex.pivot_tolerance' must be finite and positive, got 0"},
  });
}

TEST_CASE("options: StaircaseBarrierOptions::check names each bad field", "[options][staircase_barrier]") {
  require_rejections<StaircaseBarrierOptions>({
      {"tolerance", [](auto& o) { o.tolerance = 0; }, "'tolerance' must be finite and positive, got 0"},
      {"max_iterations", [](auto& o) { o.max_iterations = -1; }, "'max_iterations' must be >= 0, got -1"},
      {"max_correctors", [](auto& o) { o.max_correctors = -1; }, "'max_correctors' must be >= 0, got -1"},
      {"drop_threshold", [](auto& o) { o.drop_threshold = 1; }, "'drop_threshold' must be finite and in [0, 1), got 1"},
      {"time_limit", [](auto& o) { o.time_limit = -0.5; },
       "'time_limit' must be >= 0 seconds (infinity = no limit), got -0.5"},
  });
}

TEST_CASE("options: OptimalLPOptions::check names each bad field, nested ones with their path",
          "[options][optimal_lp]") {
  // interior_point (bool) has no bad value.
  require_rejections<OptimalLPOptions>({
      {"column_generation.time_limit", [](auto& o) { o.column_generation.time_limit = -1; },
       "'column_generation.time_limit' must be >= 0 seconds (infinity = no limit), got -1"},
      {"column_generation.dual_smoothing", [](auto& o) { o.column_generation.dual_smoothing = -0.5; },
       "'column_generation.dual_smoothing' must be in [0, 1), got -0.5"},
      {"column_generation.simplex.max_iterations", [](auto& o) { o.column_generation.simplex.max_iterations = -1; },
       "'column_generation.simplex.max_iterations' must be >= 0, got -1"},
      {"drop_tolerance", [](auto& o) { o.drop_tolerance = -1; },
       "'drop_tolerance' must be finite and non-negative, got -1"},
  });
}

TEST_CASE("options: UnbiasedOptions::check names each bad field", "[options][unbiased]") {
  require_rejections<UnbiasedOptions>({
      {"max_bias", [](auto& o) { o.max_bias = -0.5; }, "'max_bias' must be finite and non-negative, got -0.5"},
      {"output_lower", [](auto& o) { o.output_lower = kNaN; }, "'output_lower' must not be NaN, got nan"},
      {"output_upper", [](auto& o) { o.output_upper = kNaN; }, "'output_upper' must not be NaN, got nan"},
      {"output_lower",
       [](auto& o) {
         o.output_lower = 3;
         o.output_upper = 3;
       },
       "'output_lower' must be below 'output_upper', got 3 and 3"},
      {"max_rounds", [](auto& o) { o.max_rounds = -1; }, "'max_rounds' must be >= 0, got -1"},
      {"pricing_tolerance", [](auto& o) { o.pricing_tolerance = 0; },
       "'pricing_tolerance' must be finite and positive, got 0"},
      {"seed_grid_size", [](auto& o) { o.seed_grid_size = -2; },
       "'seed_grid_size' must be -1 (automatic) or >= 0, got -2"},
      {"max_columns_per_round", [](auto& o) { o.max_columns_per_round = -2; },
       "'max_columns_per_round' must be -1 (automatic), positive, or kUnlimited (all), got -2"},
      {"dual_smoothing", [](auto& o) { o.dual_smoothing = 1; },
       "'dual_smoothing' must be -1 (automatic) or in [0, 1), got 1"},
      {"time_limit", [](auto& o) { o.time_limit = -1; },
       "'time_limit' must be >= 0 seconds (infinity = no limit), got -1"},
      {"gap_tolerance", [](auto& o) { o.gap_tolerance = kNaN; },
       "'gap_tolerance' must be finite and non-negative, got nan"},
      {"simplex.refactorization_interval", [](auto& o) { o.simplex.refactorization_interval = 0; },
       "'simplex.refactorization_interval' must be >= 1, got 0"},
      {"continuous_method", [](auto& o) { o.continuous_method = static_cast<ContinuousMethod>(7); },
       "'continuous_method' must be Automatic, InteriorPoint or ColumnGeneration, got 7"},
      {"bias_pattern_rounds", [](auto& o) { o.bias_pattern_rounds = -1; },
       "'bias_pattern_rounds' must be at least 0, got -1"},
  });
}

TEST_CASE("options: HistEpsOptions::check names each bad field", "[options][hist_eps]") {
  require_rejections<HistEpsOptions>({
      {"lo", [](auto& o) { o.lo = kNaN; }, "'lo' must be finite, got nan"},
      {"hi", [](auto& o) { o.hi = kInf; }, "'hi' must be finite, got inf"},
      {"lo", [](auto& o) { o.lo = 2; }, "'lo' must be less than 'hi' = 1, got 2"},
      {"eps", [](auto& o) { o.eps = 0; }, "'eps' must be finite and positive, got 0"},
      {"resolution", [](auto& o) { o.resolution = -0.5; }, "'resolution' must be finite and positive, got -0.5"},
      {"resolution", [](auto& o) { o.resolution = 1e-12; },
       "'resolution' must be at least (hi - lo) / 2^32 = 2.3283064365386963e-10, got 9.9999999999999998e-13"},
  });
}

// --- every solver calls check() first ----------------------------------------------------------

TEST_CASE("options: RevisedSimplex checks its options", "[options][simplex]") {
  SimplexOptions bad;
  bad.refactorization_interval = 0;
  REQUIRE_THROWS_WITH(labeldp::optim::RevisedSimplex(small_lp(), bad),
                      "'refactorization_interval' must be >= 1, got 0");
  // Before the problem: an LP with a NaN cost and a bad option names the option.
  labeldp::optim::LinearProgram lp = small_lp();
  lp.c[0] = kNaN;
  REQUIRE_THROWS_WITH(labeldp::optim::RevisedSimplex(lp, bad), Catch::StartsWith("'refactorization_interval'"));
  labeldp::optim::RevisedSimplex s(small_lp());
  REQUIRE_THROWS_WITH(s.set_time_limit(-2), "'time_limit' must be >= 0 seconds (infinity = no limit), got -2");
}

TEST_CASE("options: solve_by_column_generation checks its options", "[options][column_generation]") {
  labeldp::optim::RevisedSimplex master(small_lp());
  bool priced = false;
  auto oracle = [&](const Eigen::VectorXd& y) {
    priced = true;
    return labeldp::optim::PricedColumns{Eigen::MatrixXd(y.size(), 0), Eigen::VectorXd(0), 0.0};
  };
  ColumnGenerationOptions bad;
  bad.dual_smoothing = 1;
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, oracle, bad),
                      "'dual_smoothing' must be in [0, 1), got 1");
  bad = ColumnGenerationOptions{};
  bad.simplex.time_limit = -1;
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, oracle, bad),
                      Catch::StartsWith("'simplex.time_limit'"));
  CHECK_FALSE(priced);
}

TEST_CASE("options: the staircase barrier checks its options", "[options][staircase_barrier]") {
  StaircaseBarrierOptions bad;
  bad.max_correctors = -1;
  REQUIRE_THROWS_WITH(labeldp::detail::solve_staircase_barrier(small_barrier_problem(), bad),
                      "'max_correctors' must be >= 0, got -1");
  labeldp::detail::StaircaseBarrier barrier(small_barrier_problem());
  REQUIRE_THROWS_WITH(barrier.solve(bad), "'max_correctors' must be >= 0, got -1");
}

TEST_CASE("options: optimal_mechanism_lp checks its options first", "[options][optimal_lp]") {
  OptimalLPOptions bad;
  bad.drop_tolerance = kNaN;
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_outputs(), bad),
                      "'drop_tolerance' must be finite and non-negative, got nan");
  // Before eps and the outputs.
  REQUIRE_THROWS_WITH(labeldp::optimal_mechanism_lp(small_prior(), 0.0, labeldp::Vector<double>(0), bad),
                      Catch::StartsWith("'drop_tolerance'"));
  bad = OptimalLPOptions{};
  bad.column_generation.simplex.pivot_tolerance = -1;
  REQUIRE_THROWS_WITH(
      labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_outputs(), bad, labeldp::AbsoluteLoss<>{}),
      "'column_generation.simplex.pivot_tolerance' must be finite and positive, got -1");
}

TEST_CASE("options: the unbiased solvers check their options first", "[options][unbiased]") {
  const auto prior = small_prior();
  const auto outputs = small_outputs();
  UnbiasedOptions bad;
  bad.pricing_tolerance = kNaN;
  const std::string message = "'pricing_tolerance' must be finite and positive, got nan";
  SECTION("grid") {
    REQUIRE_THROWS_WITH(labeldp::optimal_unbiased_grid(prior, 1.0, 16, bad), message);
    REQUIRE_THROWS_WITH(labeldp::optimal_unbiased_grid(prior, 0.0, 0, bad), message);
  }
  SECTION("outputs") { REQUIRE_THROWS_WITH(labeldp::optimal_unbiased_on_outputs(prior, 1.0, outputs, bad), message); }
  SECTION("continuous") { REQUIRE_THROWS_WITH(labeldp::optimal_unbiased_continuous(prior, 1.0, bad), message); }
  SECTION("reference") { REQUIRE_THROWS_WITH(labeldp::optimal_unbiased_reference(prior, 1.0, outputs, bad), message); }
  SECTION("nested simplex options") {
    UnbiasedOptions nested;
    nested.simplex.max_iterations = -3;
    REQUIRE_THROWS_WITH(labeldp::optimal_unbiased_grid(prior, 1.0, 16, nested),
                        "'simplex.max_iterations' must be >= 0, got -3");
    REQUIRE_THROWS_WITH(labeldp::optimal_unbiased_continuous(prior, 1.0, nested),
                        "'simplex.max_iterations' must be >= 0, got -3");
  }
}

TEST_CASE("options: Hist_eps checks its options first", "[options][hist_eps]") {
  labeldp::SeededRandom gen(3);
  const HistEpsOptions bad{0.0, 1.0, -1.0, 0.1};
  const std::string message = "'eps' must be finite and positive, got -1";
  const std::vector<double> labels{0.25, 0.5};
  const std::vector<double> edges{0.0, 0.5, 1.0};
  REQUIRE_THROWS_WITH(labeldp::hist_eps(labels, edges, bad, gen), message);
  REQUIRE_THROWS_WITH(labeldp::hist_eps(std::vector<double>{}, edges, bad, gen), message);  // before 'labels'
  REQUIRE_THROWS_WITH(labeldp::hist_eps_noisy_labels(labels, bad, gen), message);
  REQUIRE_THROWS_WITH(labeldp::hist_eps_paper_nodes(labels, 0.1, bad, gen), message);
}

// --- one meaning of 0 and of "no limit" --------------------------------------------------------

TEST_CASE("options: a limit of 0 means zero, kUnlimited means none", "[options]") {
  SECTION("simplex pivots") {
    SimplexOptions o;
    o.max_iterations = 0;
    CHECK(labeldp::optim::RevisedSimplex(small_lp(), o).solve().status == SolveStatus::IterationLimit);
    o.max_iterations = kUnlimited;
    const auto r = labeldp::optim::RevisedSimplex(small_lp(), o).solve();
    CHECK(r.status == SolveStatus::Optimal);
    CHECK(r.objective == Approx(1.0));
  }
  SECTION("barrier iterations") {
    StaircaseBarrierOptions o;
    o.max_iterations = 0;
    const auto zero = labeldp::detail::solve_staircase_barrier(small_barrier_problem(), o);
    CHECK(zero.iterations == 0);
    o.max_iterations = kUnlimited;
    CHECK(labeldp::detail::solve_staircase_barrier(small_barrier_problem(), o).status == SolveStatus::Optimal);
  }
  SECTION("column-generation rounds and columns of the optimal LP") {
    const auto reference = labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_outputs());
    REQUIRE(reference.status == SolveStatus::Optimal);
    OptimalLPOptions o;
    o.interior_point = false;
    o.column_generation.max_rounds = kUnlimited;
    o.column_generation.max_columns_per_round = kUnlimited;
    const auto r = labeldp::optimal_mechanism_lp(small_prior(), 1.0, small_outputs(), o);
    CHECK(r.status == SolveStatus::Optimal);
    CHECK(double(r.expected_loss) == Approx(double(reference.expected_loss)).epsilon(1e-9));
  }
  SECTION("unbiased: 0 rounds is a limit like the engine's, kUnlimited columns is all") {
    const auto prior = small_prior();
    const auto reference = labeldp::optimal_unbiased_grid(prior, 1.0, 16);
    REQUIRE(reference.optimal());
    UnbiasedOptions o;
    o.max_rounds = 0;  // was rejected by the unbiased solvers while the engine took it
    const auto zero = labeldp::optimal_unbiased_grid(prior, 1.0, 16, o);
    CHECK((zero.status == SolveStatus::Optimal || zero.status == SolveStatus::IterationLimit));
    if (zero.mechanism.num_outputs() > 0) {
      CHECK(zero.expected_loss >= reference.expected_loss * (1 - 1e-9));
      CHECK(labeldp::audit_epsilon(zero.mechanism.probabilities()) <= 1.0 * (1 + 1e-9));
    }
    for (Index cap : {kUnlimited, Index(0), labeldp::kAutomatic, Index(1)}) {
      INFO("max_columns_per_round " << cap);
      UnbiasedOptions c;
      c.max_columns_per_round = cap;
      const auto r = labeldp::optimal_unbiased_grid(prior, 1.0, 16, c);
      REQUIRE(r.optimal());
      CHECK(r.expected_loss == Approx(reference.expected_loss).epsilon(1e-9));
    }
  }
}
