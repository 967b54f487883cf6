// Anti-cycling of labeldp::optim::RevisedSimplex (the virtual perturbation of degenerate
// vertices, SimplexOptions::degenerate_pivots_before_perturbation): LPs from the literature
// that cycle under the textbook simplex rule, and random highly degenerate LPs, each solved
// to GLPK's optimum with the default trigger and with the perturbation forced at every
// degenerate vertex; the result's counters show that the perturbation ran and was removed.
//
// That each literature LP really cycles is not taken on trust: a textbook tableau simplex
// (below) is run on it and must return to its starting basis.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "labeldp/optim/simplex.hpp"
#include "oracles/glpk_oracle.hpp"

using labeldp::optim::Index;
using labeldp::optim::LinearProgram;
using labeldp::optim::RevisedSimplex;
using labeldp::optim::RowType;
using labeldp::optim::SimplexOptions;
using labeldp::optim::SimplexResult;
using labeldp::optim::SolveStatus;

using labeldp::test::close_relative;

namespace {

// The textbook rule on min c'x, A x <= b (b >= 0), x >= 0 from the slack basis, as a dense
// tableau: the entering column has the most negative reduced cost (Dantzig's rule, the first
// one on ties) and the leaving row the minimum ratio (the first row on ties). Returns the
// number of pivots after which a basis repeats (a cycle), or -1 if the rule stops (optimal or
// unbounded) within `max_pivots`.
int textbook_cycle_length(const LinearProgram& lp, int max_pivots) {
  const Index m = lp.A.rows(), n = lp.A.cols();
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(m + 1, n + m + 1);
  T.topLeftCorner(m, n) = lp.A;
  T.block(0, n, m, m).setIdentity();
  T.block(0, n + m, m, 1) = lp.b;
  T.block(m, 0, 1, n) = lp.c.transpose();
  std::vector<Index> basis(static_cast<std::size_t>(m));
  for (Index i = 0; i < m; ++i) basis[std::size_t(i)] = n + i;
  std::set<std::vector<Index>> seen;
  for (int pivot = 0; pivot < max_pivots; ++pivot) {
    std::vector<Index> key = basis;
    std::sort(key.begin(), key.end());
    if (!seen.insert(key).second) return pivot;
    Index q = -1;
    double most_negative = -1e-12;
    for (Index j = 0; j < n + m; ++j)
      if (T(m, j) < most_negative) {
        most_negative = T(m, j);
        q = j;
      }
    if (q < 0) return -1;
    Index r = -1;
    double min_ratio = 0;
    for (Index i = 0; i < m; ++i) {
      if (T(i, q) <= 1e-12) continue;
      const double ratio = T(i, n + m) / T(i, q);
      if (r < 0 || ratio < min_ratio - 1e-12) {
        min_ratio = ratio;
        r = i;
      }
    }
    if (r < 0) return -1;
    T.row(r) /= T(r, q);
    for (Index i = 0; i <= m; ++i)
      if (i != r) T.row(i) -= T(i, q) * T.row(r);
    basis[std::size_t(r)] = q;
  }
  return -1;
}

LinearProgram make_lp(Eigen::MatrixXd A, Eigen::VectorXd b, std::vector<RowType> types, Eigen::VectorXd c) {
  LinearProgram lp;
  lp.A = std::move(A);
  lp.b = std::move(b);
  lp.row_types = std::move(types);
  lp.c = std::move(c);
  return lp;
}

// Options that perturb at every degenerate vertex (the trigger fires at once).
SimplexOptions forced() {
  SimplexOptions o;
  o.degenerate_pivots_before_perturbation = 0;
  return o;
}

// Solves `lp` with `options` and checks status and objective against GLPK's; returns the result.
SimplexResult solve_against_glpk(const LinearProgram& lp, const SimplexOptions& options) {
  RevisedSimplex simplex(lp, options);
  const SimplexResult r = simplex.solve();
  const auto g = labeldp::test::solve_with_glpk(lp);
  INFO("ours: " << to_string(r.status) << " " << r.objective << " after " << r.iterations
                << " pivots, GLPK: " << to_string(g.status) << " " << g.objective);
  REQUIRE(g.status != SolveStatus::NumericalIssue);
  REQUIRE(r.status == g.status);
  if (g.status == SolveStatus::Optimal) {
    REQUIRE(close_relative(r.objective, g.objective, 1e-9));
    // x is feasible: A x within 1e-9 of b on each row's side, x >= 0.
    REQUIRE(r.x.minCoeff() >= 0);
    const Eigen::VectorXd slack = lp.A * r.x - lp.b;
    for (Index i = 0; i < lp.A.rows(); ++i) {
      const double s = slack[i];
      switch (lp.row_types[std::size_t(i)]) {
        case RowType::Equal:
          REQUIRE(std::abs(s) <= 1e-9);
          break;
        case RowType::LessEqual:
          REQUIRE(s <= 1e-9);
          break;
        case RowType::GreaterEqual:
          REQUIRE(s >= -1e-9);
          break;
      }
    }
    // Dual feasibility of the reported basis: reduced costs >= 0, row duals of the right sign.
    REQUIRE(r.reduced_costs.minCoeff() >= -1e-9);
    for (Index i = 0; i < lp.A.rows(); ++i) {
      if (lp.row_types[std::size_t(i)] == RowType::LessEqual) REQUIRE(r.duals[i] <= 1e-9);
      if (lp.row_types[std::size_t(i)] == RowType::GreaterEqual) REQUIRE(r.duals[i] >= -1e-9);
    }
  }
  // The counters are consistent: perturbed pivots are degenerate, and the perturbation is
  // removed at most once per time it was switched on.
  REQUIRE(r.perturbed_pivots <= r.degenerate_pivots);
  REQUIRE(r.degenerate_pivots <= r.iterations);
  REQUIRE(r.perturbation_removals <= r.perturbations);
  REQUIRE((r.perturbations == 0) == (r.perturbed_pivots == 0));
  return r;
}

struct LiteratureLp {
  std::string name;
  LinearProgram lp;
  double optimum;  // the optimum stated in the literature
};

std::vector<LiteratureLp> literature_lps() {
  const std::vector<RowType> le3(3, RowType::LessEqual);
  return {
      // Beale (1955), "Cycling in the dual simplex algorithm", Naval Research Logistics
      // Quarterly 2: min -3/4 x1 + 150 x2 - 1/50 x3 + 6 x4 with rows
      // x1/4 - 60 x2 - x3/25 + 9 x4 <= 0, x1/2 - 90 x2 - x3/50 + 3 x4 <= 0, x3 <= 1. The first
      // two rows have b = 0, so at the origin 2 of the 3 basic slacks are zero; Dantzig's rule
      // with first-row ties enters x1, x2, x3, x4 and then the two slacks, every pivot of ratio
      // 0, and after 6 pivots the slack basis is back. Optimum -1/20 at x1 = 1/25, x3 = 1.
      {"Beale (1955)",
       make_lp(Eigen::MatrixXd{{0.25, -60, -1.0 / 25, 9}, {0.5, -90, -1.0 / 50, 3}, {0, 0, 1, 0}},
               Eigen::Vector3d(0, 0, 1), le3, Eigen::Vector4d(-0.75, 150, -1.0 / 50, 6)),
       -0.05},
      // Kuhn's example, in Balinski and Tucker (1969), "Duality theory of linear programs: a
      // constructive approach with applications", SIAM Review 11: min -2x1 - 3x2 + x3 + 12x4
      // with rows -2x1 - 9x2 + x3 + 9x4 <= 0, x1/3 + x2 - x3/3 - 2x4 <= 0,
      // 2x1 + 3x2 - x3 - 12x4 <= 2. The cost row is minus the third row, so the objective is
      // bounded by -2; the origin is degenerate in the first two rows, and Dantzig's rule with
      // first-row ties cycles through 6 bases that all keep x = 0.
      {"Kuhn (Balinski and Tucker 1969)",
       make_lp(Eigen::MatrixXd{{-2, -9, 1, 9}, {1.0 / 3, 1, -1.0 / 3, -2}, {2, 3, -1, -12}}, Eigen::Vector3d(0, 0, 2),
               le3, Eigen::Vector4d(-2, -3, 1, 12)),
       -2},
      // Chvatal (1983), "Linear Programming", ch. 3: max 10x1 - 57x2 - 9x3 - 24x4 with
      // rows x1/2 - 11x2/2 - 5x3/2 + 9x4 <= 0, x1/2 - 3x2/2 - x3/2 + x4 <= 0, x1 <= 1: again
      // two zero right-hand sides, and the largest-coefficient rule with first-row ties cycles
      // through 6 degenerate bases at the origin. Optimum 1 at x1 = x3 = 1.
      {"Chvatal (1983)",
       make_lp(Eigen::MatrixXd{{0.5, -5.5, -2.5, 9}, {0.5, -1.5, -0.5, 1}, {1, 0, 0, 0}}, Eigen::Vector3d(0, 0, 1), le3,
               -Eigen::Vector4d(10, -57, -9, -24)),
       -1},
  };
}

}  // namespace

TEST_CASE("cycling: the literature LPs cycle under the textbook rule", "[simplex][cycling]") {
  // The oracle for the claim that these are cycling examples: the textbook tableau simplex
  // returns to its starting basis after 6 degenerate pivots on each.
  for (const auto& example : literature_lps()) {
    INFO(example.name);
    REQUIRE(textbook_cycle_length(example.lp, 100) == 6);
  }
  // And the tableau code is not a cycle detector that always fires: on a nondegenerate LP
  // (b > 0 on every row) it stops.
  const LinearProgram nondegenerate = make_lp(Eigen::MatrixXd{{1, 1}, {1, 3}}, Eigen::Vector2d(4, 6),
                                              {RowType::LessEqual, RowType::LessEqual}, Eigen::Vector2d(-1, -2));
  REQUIRE(textbook_cycle_length(nondegenerate, 100) == -1);
}

TEST_CASE("cycling: the literature LPs reach GLPK's optimum with and without a forced perturbation",
          "[simplex][cycling][glpk]") {
  for (const auto& example : literature_lps()) {
    INFO(example.name);
    SECTION(example.name + ", default options") {
      const SimplexResult r = solve_against_glpk(example.lp, SimplexOptions{});
      REQUIRE(r.objective == Approx(example.optimum).epsilon(1e-12));
    }
    SECTION(example.name + ", perturbation at every degenerate vertex") {
      const SimplexResult r = solve_against_glpk(example.lp, forced());
      REQUIRE(r.objective == Approx(example.optimum).epsilon(1e-12));
      // Every literature LP starts at a degenerate vertex, and its optimum is away from the
      // origin: the perturbation is switched on, decides pivots, and is removed by a pivot
      // that moves x.
      REQUIRE(r.degenerate_pivots > 0);
      REQUIRE(r.perturbations > 0);
      REQUIRE(r.perturbed_pivots > 0);
      REQUIRE(r.perturbation_removals > 0);
    }
  }
}

TEST_CASE("cycling: the trigger counts degenerate pivots before perturbing", "[simplex][cycling]") {
  // On Beale's LP the first pivot is degenerate (b = 0 on the rows it blocks). A trigger larger than any run of
  // degenerate pivots never perturbs; a forced one does.
  const LinearProgram lp = literature_lps()[0].lp;
  SimplexOptions late;
  late.degenerate_pivots_before_perturbation = 1000000;
  const SimplexResult never = solve_against_glpk(lp, late);
  REQUIRE(never.perturbations == 0);
  REQUIRE(never.perturbed_pivots == 0);
  REQUIRE(never.degenerate_pivots > 0);
  const SimplexResult at_once = solve_against_glpk(lp, forced());
  REQUIRE(at_once.perturbations > 0);
  REQUIRE(at_once.perturbed_pivots > 0);
}

namespace {

// A small highly degenerate LP: integer entries in [-3, 3], most right-hand sides zero, some
// columns duplicated (same or doubled entries, the same or another cost), mostly <= rows (so
// the slack basis starts at a degenerate vertex) with some = and >= rows, and often a bounding
// row sum(x) <= 1..3 so that many are bounded.
LinearProgram degenerate_lp(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> dim_m(2, 9), dim_n(2, 10), entry(-3, 3), die(0, 9), rhs(1, 3);
  const Index m = dim_m(rng), base = dim_n(rng);
  Eigen::MatrixXd A(m, base);
  Eigen::VectorXd c(base);
  for (Index j = 0; j < base; ++j) {
    for (Index i = 0; i < m; ++i) A(i, j) = entry(rng);
    c[j] = entry(rng);
  }
  // Duplicates of random columns.
  const int copies = die(rng) % 5;
  for (int t = 0; t < copies; ++t) {
    const Index src = std::uniform_int_distribution<Index>(0, A.cols() - 1)(rng);
    A.conservativeResize(Eigen::NoChange, A.cols() + 1);
    c.conservativeResize(c.size() + 1);
    const double scale = die(rng) < 5 ? 1.0 : 2.0;
    A.col(A.cols() - 1) = scale * A.col(src);
    c[c.size() - 1] = die(rng) < 5 ? scale * c[src] : double(entry(rng));
  }
  const bool bounding = die(rng) < 7;
  const Index rows = m + (bounding ? 1 : 0);
  LinearProgram lp;
  lp.A.resize(rows, A.cols());
  lp.A.topRows(m) = A;
  lp.b = Eigen::VectorXd::Zero(rows);
  lp.row_types.assign(std::size_t(rows), RowType::LessEqual);
  for (Index i = 0; i < m; ++i) {
    const int d = die(rng);
    if (d == 0) lp.row_types[std::size_t(i)] = RowType::Equal;
    if (d == 1) lp.row_types[std::size_t(i)] = RowType::GreaterEqual;
    if (die(rng) < 2) lp.b[i] = rhs(rng);
  }
  if (bounding) {
    lp.A.row(m).setOnes();
    lp.b[m] = rhs(rng);
  }
  lp.c = c;
  return lp;
}

}  // namespace

TEST_CASE("cycling: 400 random highly degenerate LPs agree with GLPK, perturbation forced and default",
          "[simplex][cycling][glpk]") {
  std::mt19937_64 rng(19690101);
  std::map<SolveStatus, int> counts;
  Index perturbed_pivots = 0, removals = 0, perturbed_lps = 0, removed_lps = 0;
  for (int t = 0; t < 400; ++t) {
    const LinearProgram lp = degenerate_lp(rng);
    INFO("LP #" << t << " (" << lp.A.rows() << " x " << lp.A.cols() << ")");
    const SimplexResult forced_result = solve_against_glpk(lp, forced());
    const SimplexResult default_result = solve_against_glpk(lp, SimplexOptions{});
    REQUIRE(forced_result.status == default_result.status);
    ++counts[forced_result.status];
    perturbed_pivots += forced_result.perturbed_pivots;
    removals += forced_result.perturbation_removals;
    if (forced_result.perturbations > 0) ++perturbed_lps;
    if (forced_result.perturbation_removals > 0) ++removed_lps;
  }
  INFO("optimal " << counts[SolveStatus::Optimal] << ", infeasible " << counts[SolveStatus::Infeasible]
                  << ", unbounded " << counts[SolveStatus::Unbounded] << "; perturbed LPs " << perturbed_lps
                  << ", with a removal " << removed_lps << ", perturbed pivots " << perturbed_pivots);
  // The family must exercise the mechanism and every outcome.
  REQUIRE(counts[SolveStatus::Optimal] >= 250);
  REQUIRE(counts[SolveStatus::Unbounded] >= 30);
  REQUIRE(counts[SolveStatus::Infeasible] >= 20);
  REQUIRE(perturbed_lps >= 250);
  REQUIRE(removed_lps >= 100);
  REQUIRE(perturbed_pivots >= 600);
  REQUIRE(removals >= 100);
}

TEST_CASE("cycling: a perturbed solve is deterministic and warm starts still work", "[simplex][cycling][glpk]") {
  // The virtual values are drawn from a generator reseeded by every solve(): the same LP gives
  // the same pivots; after add_columns() a forced-perturbation warm solve reaches GLPK's
  // optimum of the larger LP.
  std::mt19937_64 rng(1955);
  int warm = 0;
  for (int t = 0; t < 100; ++t) {
    const LinearProgram full = degenerate_lp(rng);
    const Index n = full.A.cols(), half = n / 2;
    if (half < 1) continue;
    RevisedSimplex a(full, forced()), b(full, forced());
    const SimplexResult ra = a.solve(), rb = b.solve();
    REQUIRE(ra.status == rb.status);
    REQUIRE(ra.iterations == rb.iterations);
    REQUIRE(ra.perturbed_pivots == rb.perturbed_pivots);
    REQUIRE((ra.x - rb.x).cwiseAbs().maxCoeff() == 0);

    LinearProgram first = full;
    first.A = full.A.leftCols(half);
    first.c = full.c.head(half);
    RevisedSimplex simplex(first, forced());
    if (simplex.solve().status != SolveStatus::Optimal) continue;
    simplex.add_columns(full.A.rightCols(n - half), full.c.tail(n - half));
    const SimplexResult r = simplex.solve();
    REQUIRE(r.warm_started);
    const auto g = labeldp::test::solve_with_glpk(full);
    REQUIRE(r.status == g.status);
    if (g.status == SolveStatus::Optimal) REQUIRE(close_relative(r.objective, g.objective, 1e-9));
    ++warm;
  }
  REQUIRE(warm >= 30);
}

TEST_CASE("cycling: the trigger is validated", "[simplex][cycling][validation]") {
  SimplexOptions o;
  o.degenerate_pivots_before_perturbation = -1;
  REQUIRE_THROWS_AS(RevisedSimplex(literature_lps()[0].lp, o), std::invalid_argument);
  REQUIRE_THROWS_WITH(RevisedSimplex(literature_lps()[0].lp, o),
                      Catch::Contains("'degenerate_pivots_before_perturbation' must be >= 0, got -1"));
}
