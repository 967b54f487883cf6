// Tests of labeldp::optim::solve_by_column_generation(), the column-generation engine: it
// reaches the optimum of the full LP with every column written out, solved by GLPK (cutting
// stock with brute-force knapsack pricing, Gilmore and Gomory 1961; the staircase form of
// LP (2) of Ghazi et al. 2023), and every answer carries a certificate: the lower bound never
// exceeds the optimum, Optimal comes with a closed gap, and limits, failing masters and oracles
// that lie are reported as such, never as Optimal.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "labeldp/optim/column_generation.hpp"
#include "oracles/glpk_oracle.hpp"

using labeldp::optim::ColumnGenerationOptions;
using labeldp::optim::ColumnGenerationResult;
using labeldp::optim::Index;
using labeldp::optim::LinearProgram;
using labeldp::optim::PricedColumns;
using labeldp::optim::RevisedSimplex;
using labeldp::optim::RowType;
using labeldp::optim::SolveStatus;

using labeldp::test::close_relative;

namespace {

// ---------------------------------------------------------------------------------------------
// Cutting stock: rolls of width W, items of widths w_i with demands d_i. Columns are the
// patterns a (non-negative integers, w^T a <= W), each of cost 1 (one roll); rows
// sum_p a_ip x_p >= d_i. Any optimal x has sum x = z* <= sum_i d_i (one piece per roll is
// feasible), so kappa = sum_i d_i.
struct CuttingStock {
  double width = 100;
  Eigen::VectorXd widths;
  Eigen::VectorXd demands;
  std::vector<Eigen::VectorXd> patterns;  // every non-zero pattern
};

void enumerate(const CuttingStock& cs, Index item, double left, Eigen::VectorXd& a, std::vector<Eigen::VectorXd>& out) {
  if (item == cs.widths.size()) {
    if (a.sum() > 0) out.push_back(a);
    return;
  }
  for (int count = 0; count * cs.widths[item] <= left + 1e-12; ++count) {
    a[item] = count;
    enumerate(cs, item + 1, left - count * cs.widths[item], a, out);
  }
  a[item] = 0;
}

CuttingStock random_cutting_stock(std::mt19937_64& rng, Index items) {
  std::uniform_int_distribution<int> w(12, 47), d(5, 60);
  CuttingStock cs;
  cs.widths.resize(items);
  cs.demands.resize(items);
  for (Index i = 0; i < items; ++i) {
    cs.widths[i] = w(rng);
    cs.demands[i] = d(rng);
  }
  Eigen::VectorXd a = Eigen::VectorXd::Zero(items);
  enumerate(cs, 0, cs.width, a, cs.patterns);
  return cs;
}

LinearProgram full_cutting_stock_lp(const CuttingStock& cs) {
  LinearProgram lp;
  const Index m = cs.widths.size(), n = Index(cs.patterns.size());
  lp.A.resize(m, n);
  for (Index j = 0; j < n; ++j) lp.A.col(j) = cs.patterns[std::size_t(j)];
  lp.b = cs.demands;
  lp.row_types.assign(std::size_t(m), RowType::GreaterEqual);
  lp.c = Eigen::VectorXd::Ones(n);
  return lp;
}

// The homogeneous patterns floor(W / w_i) e_i: a feasible, poor start.
LinearProgram initial_cutting_stock_master(const CuttingStock& cs) {
  const Index m = cs.widths.size();
  LinearProgram lp;
  lp.A = Eigen::MatrixXd::Zero(m, m);
  for (Index i = 0; i < m; ++i) lp.A(i, i) = std::floor(cs.width / cs.widths[i]);
  lp.b = cs.demands;
  lp.row_types.assign(std::size_t(m), RowType::GreaterEqual);
  lp.c = Eigen::VectorXd::Ones(m);
  return lp;
}

// Exact knapsack pricing by brute force over every pattern: returns the `per_call` patterns of
// least reduced cost 1 - y^T a that are not yet in the master and are negative, and the
// minimum reduced cost over all patterns.
struct KnapsackPricing {
  const CuttingStock* cs;
  Index per_call = 3;
  std::vector<char> in_master;
  std::vector<Index> last;  // pattern index of each column of the last returned block
  Index calls = 0;

  PricedColumns operator()(const Eigen::VectorXd& y) {
    ++calls;
    const Index n = Index(cs->patterns.size()), m = cs->widths.size();
    std::vector<std::pair<double, Index>> rc;
    double min_rc = std::numeric_limits<double>::infinity();
    for (Index p = 0; p < n; ++p) {
      const double r = 1 - y.dot(cs->patterns[std::size_t(p)]);
      min_rc = std::min(min_rc, r);
      if (!in_master[std::size_t(p)] && r < 0) rc.emplace_back(r, p);
    }
    std::sort(rc.begin(), rc.end());
    if (Index(rc.size()) > per_call) rc.resize(std::size_t(per_call));
    PricedColumns out;
    out.A.resize(m, Index(rc.size()));
    out.c = Eigen::VectorXd::Ones(Index(rc.size()));
    last.clear();
    for (std::size_t t = 0; t < rc.size(); ++t) {
      out.A.col(Index(t)) = cs->patterns[std::size_t(rc[t].second)];
      last.push_back(rc[t].second);
    }
    out.min_reduced_cost = min_rc;
    return out;
  }
};

// ---------------------------------------------------------------------------------------------
// LP (2) of Ghazi et al. 2023 in staircase form: k labels, n outputs; column (T, j) has entries
// e^eps on the labels in T and 1 elsewhere, cost sum_y a_y p_y (o_j - y)^2; k equality rows
// (each row of the mechanism sums to 1). Entries >= 1 in rows summing to 1: kappa = 1.
struct StaircaseLP {
  Index k = 0, n = 0;
  double e = 1;
  Eigen::MatrixXd weighted;  // k x n: p_y (o_j - y)^2

  Eigen::VectorXd column(Index mask) const {
    Eigen::VectorXd a(k);
    for (Index y = 0; y < k; ++y) a[y] = (mask >> y) & 1 ? e : 1.0;
    return a;
  }
};

StaircaseLP random_staircase(std::mt19937_64& rng, Index k, Index n) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  StaircaseLP s;
  s.k = k;
  s.n = n;
  s.e = std::exp(0.2 + 2.8 * u(rng));
  Eigen::VectorXd labels(k), p(k);
  for (Index y = 0; y < k; ++y) {
    labels[y] = double(y) + 0.5 * u(rng);
    p[y] = 0.05 + u(rng);
  }
  p /= p.sum();
  s.weighted.resize(k, n);
  for (Index j = 0; j < n; ++j) {
    const double o = -1.0 + (double(k) + 1.0) * double(j) / double(n - 1);
    for (Index y = 0; y < k; ++y) s.weighted(y, j) = p[y] * (o - labels[y]) * (o - labels[y]);
  }
  return s;
}

LinearProgram full_staircase_lp(const StaircaseLP& s) {
  const Index masks = Index(1) << s.k;
  LinearProgram lp;
  lp.A.resize(s.k, masks * s.n);
  lp.c.resize(masks * s.n);
  for (Index j = 0; j < s.n; ++j)
    for (Index mask = 0; mask < masks; ++mask) {
      const Index col = j * masks + mask;
      lp.A.col(col) = s.column(mask);
      lp.c[col] = lp.A.col(col).dot(s.weighted.col(j));
    }
  lp.b = Eigen::VectorXd::Ones(s.k);
  lp.row_types.assign(std::size_t(s.k), RowType::Equal);
  return lp;
}

// Start: the constant column (T empty) at every output.
LinearProgram initial_staircase_master(const StaircaseLP& s) {
  LinearProgram lp;
  lp.A = Eigen::MatrixXd::Ones(s.k, s.n);
  lp.c = s.weighted.colwise().sum().transpose();
  lp.b = Eigen::VectorXd::Ones(s.k);
  lp.row_types.assign(std::size_t(s.k), RowType::Equal);
  return lp;
}

// Exact pricing: at every output the best pattern is T = {y : g_y < 0}, g_y = w_yj - pi_y, with
// reduced cost sum_y min(g_y, e g_y); returns the best column of every output that prices out.
struct StaircasePricing {
  const StaircaseLP* s;
  std::vector<Index> last_mask, last_output;
  PricedColumns operator()(const Eigen::VectorXd& pi) {
    PricedColumns out;
    out.A.resize(s->k, 0);
    out.c.resize(0);
    last_mask.clear();
    last_output.clear();
    double min_rc = std::numeric_limits<double>::infinity();
    std::vector<Eigen::VectorXd> cols;
    std::vector<double> costs;
    for (Index j = 0; j < s->n; ++j) {
      Index mask = 0;
      double rc = 0;
      for (Index y = 0; y < s->k; ++y) {
        const double g = s->weighted(y, j) - pi[y];
        if (g < 0) mask |= Index(1) << y;
        rc += g < 0 ? s->e * g : g;
      }
      min_rc = std::min(min_rc, rc);
      if (rc < 0) {
        cols.push_back(s->column(mask));
        costs.push_back(cols.back().dot(s->weighted.col(j)));
        last_mask.push_back(mask);
        last_output.push_back(j);
      }
    }
    out.A.resize(s->k, Index(cols.size()));
    out.c.resize(Index(cols.size()));
    for (std::size_t t = 0; t < cols.size(); ++t) {
      out.A.col(Index(t)) = cols[t];
      out.c[Index(t)] = costs[t];
    }
    out.min_reduced_cost = min_rc;
    return out;
  }
};

// The certificate every result must carry: bound <= objective, a finite bound when the solve
// produced a master, gap consistent with both, and Optimal only with a closed gap.
void require_certificate(const ColumnGenerationResult& r, double tolerance) {
  INFO("status " << labeldp::optim::to_string(r.status) << ", objective " << r.master.objective << ", bound "
                 << r.lower_bound << ", gap " << r.gap);
  REQUIRE(r.lower_bound <= r.master.objective);
  REQUIRE(r.gap >= 0);
  REQUIRE(r.gap <= (r.master.objective - r.lower_bound) / std::abs(r.master.objective) + 1e-15);
  if (r.status == SolveStatus::Optimal) REQUIRE(r.gap <= tolerance);
}

// x >= 0 satisfies the rows of `lp` (whose columns are the master's, in order).
void require_feasible(const LinearProgram& lp, const Eigen::VectorXd& x) {
  REQUIRE(x.size() == lp.A.cols());
  REQUIRE(x.minCoeff() >= -1e-9);
  const Eigen::VectorXd ax = lp.A * x;
  for (Index i = 0; i < lp.b.size(); ++i) {
    const double scale = std::max(1.0, std::abs(lp.b[i]));
    switch (lp.row_types[std::size_t(i)]) {
      case RowType::Equal:
        REQUIRE(std::abs(ax[i] - lp.b[i]) <= 1e-9 * scale);
        break;
      case RowType::GreaterEqual:
        REQUIRE(ax[i] >= lp.b[i] - 1e-9 * scale);
        break;
      case RowType::LessEqual:
        REQUIRE(ax[i] <= lp.b[i] + 1e-9 * scale);
        break;
    }
  }
}

}  // namespace

TEST_CASE("column generation: cutting stock with knapsack pricing equals GLPK on every pattern",
          "[column_generation]") {
  std::mt19937_64 rng(42);
  Index total_rounds = 0;
  for (int t = 0; t < 24; ++t) {
    const CuttingStock cs = random_cutting_stock(rng, 3 + t % 5);
    const LinearProgram full = full_cutting_stock_lp(cs);
    const auto glpk = labeldp::test::solve_with_glpk(full);
    REQUIRE(glpk.status == SolveStatus::Optimal);

    RevisedSimplex master(initial_cutting_stock_master(cs));
    KnapsackPricing pricing{&cs, 1 + t % 4, std::vector<char>(cs.patterns.size(), 0), {}, 0};
    std::vector<Index> master_patterns;  // caller's metadata of the appended columns
    ColumnGenerationOptions opt;
    opt.column_sum_bound = cs.demands.sum();
    opt.dual_smoothing = t % 2 ? 0.5 : 0.0;
    opt.max_columns_per_round = t % 3 == 0 ? labeldp::optim::kUnlimited : Index(t % 3);
    const auto r = labeldp::optim::solve_by_column_generation(
        master, pricing, opt, [&](const std::vector<Index>& picked, Index first) {
          REQUIRE(first == master.num_columns() - Index(picked.size()));
          for (Index p : picked) {
            master_patterns.push_back(pricing.last[std::size_t(p)]);
            pricing.in_master[std::size_t(pricing.last[std::size_t(p)])] = 1;
          }
        });
    INFO("trial " << t << ": " << cs.widths.size() << " items, " << cs.patterns.size() << " patterns, rounds "
                  << r.rounds << ", columns " << r.columns);
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(close_relative(r.master.objective, glpk.objective, 1e-9));
    require_certificate(r, opt.gap_tolerance);
    REQUIRE(std::isfinite(r.lower_bound));
    REQUIRE(r.lower_bound <= glpk.objective * (1 + 1e-12));
    total_rounds += r.rounds;
    REQUIRE(r.pricing_calls == pricing.calls);
    REQUIRE(r.columns == Index(master_patterns.size()));
    if (opt.max_columns_per_round != labeldp::optim::kUnlimited)
      REQUIRE(r.columns <= r.rounds * opt.max_columns_per_round);
    // The callback's mapping: appended master column t is pattern master_patterns[t].
    const Index m = cs.widths.size();
    for (std::size_t t2 = 0; t2 < master_patterns.size(); ++t2)
      REQUIRE(master.problem().A.col(m + Index(t2)) == cs.patterns[std::size_t(master_patterns[t2])]);
    require_feasible(master.problem(), r.master.x);
    // Dual certificate on the full LP: no pattern prices out at the final duals.
    const Eigen::VectorXd rc = full.c - full.A.transpose() * r.master.duals;
    REQUIRE(rc.minCoeff() >= -1e-9);
  }
  REQUIRE(total_rounds > 24);  // the homogeneous start is rarely optimal: pricing did the work
}

// Column generation on the staircase LP `s` from its initial master with `opt` (column sum
// bound 1): a certified optimum equal to GLPK's, a bound not above it, a feasible master.
labeldp::optim::ColumnGenerationResult solve_staircase_checked(const StaircaseLP& s, ColumnGenerationOptions opt,
                                                               double glpk_objective) {
  RevisedSimplex master(initial_staircase_master(s));
  StaircasePricing pricing{&s, {}, {}};
  opt.column_sum_bound = 1;
  const auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
  INFO("rounds " << r.rounds);
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(close_relative(r.master.objective, glpk_objective, 1e-9));
  require_certificate(r, opt.gap_tolerance);
  REQUIRE(std::isfinite(r.lower_bound));
  REQUIRE(r.lower_bound <= glpk_objective + 1e-12);
  require_feasible(master.problem(), r.master.x);
  return r;
}

TEST_CASE("column generation: staircase LP (2) equals GLPK on every pattern, smoothing on or off",
          "[column_generation]") {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 16; ++t) {
    const StaircaseLP s = random_staircase(rng, 3 + t % 4, 6 + t % 5);
    const LinearProgram full = full_staircase_lp(s);
    const auto glpk = labeldp::test::solve_with_glpk(full);
    REQUIRE(glpk.status == SolveStatus::Optimal);
    double previous = std::numeric_limits<double>::quiet_NaN();
    for (const double smoothing : {0.0, 0.3, 0.7}) {
      ColumnGenerationOptions opt;
      opt.dual_smoothing = smoothing;
      INFO("trial " << t << ", k " << s.k << ", n " << s.n << ", smoothing " << smoothing);
      const auto r = solve_staircase_checked(s, opt, glpk.objective);
      if (!std::isnan(previous)) REQUIRE(close_relative(r.master.objective, previous, 1e-10));
      previous = r.master.objective;
    }
  }
}

TEST_CASE(
    "column generation: the weighted bound (column_weight_bound) is valid, never below kappa's, and a W too "
    "small breaks it",
    "[column_generation]") {
  // LP (2) in staircase form: summing its k equality rows gives sum_j w_j x_j = k with w_j the
  // column's entry sum k + (e - 1)|T_j| >= k (hence kappa = 1). An oracle that also reports the
  // least ratio rc_j / w_j over every column (brute force over every pattern and output) lets
  // the engine bound by b^T y + k min(0, ratio). One pricing (max_rounds = 0) at the first
  // master's duals, whose bound is all the certificate has: it must be <= GLPK's optimum of the
  // full LP, >= the kappa bound, strictly above it on some instances, and with W = k / 4 (a
  // mutant whose weights do not hold) above the optimum on some.
  std::mt19937_64 rng(31);
  int tighter = 0, mutant_broken = 0;
  for (int t = 0; t < 40; ++t) {
    const StaircaseLP s = random_staircase(rng, 3 + t % 4, 6 + t % 5);
    const auto glpk = labeldp::test::solve_with_glpk(full_staircase_lp(s));
    REQUIRE(glpk.status == SolveStatus::Optimal);
    INFO("trial " << t << ", k " << s.k << ", n " << s.n);
    const auto ratio_of = [&s](const Eigen::VectorXd& pi) {
      double best = std::numeric_limits<double>::infinity();
      for (Index j = 0; j < s.n; ++j)
        for (Index mask = 0; mask < (Index(1) << s.k); ++mask) {
          const Eigen::VectorXd a = s.column(mask);
          best = std::min(best, (a.dot(s.weighted.col(j)) - a.dot(pi)) / a.sum());
        }
      return best;
    };
    const auto solve = [&](bool weighted, double W) {
      RevisedSimplex master(initial_staircase_master(s));
      StaircasePricing plain{&s, {}, {}};
      ColumnGenerationOptions opt;
      opt.column_sum_bound = 1;
      opt.max_rounds = 0;
      if (weighted) opt.column_weight_bound = W;
      return labeldp::optim::solve_by_column_generation(
          master,
          [&](const Eigen::VectorXd& pi) {
            PricedColumns out = plain(pi);
            if (weighted) out.min_reduced_cost_ratio = ratio_of(pi);
            return out;
          },
          opt);
    };
    const auto kappa_only = solve(false, 0);
    const auto with_weights = solve(true, double(s.k));
    require_certificate(with_weights, 1e-9);
    REQUIRE(std::isfinite(with_weights.lower_bound));
    CHECK(with_weights.lower_bound <= glpk.objective * (1 + 1e-12) + 1e-15);
    CHECK(with_weights.lower_bound >= kappa_only.lower_bound - 1e-15);
    if (with_weights.lower_bound > kappa_only.lower_bound + 1e-6 * std::abs(glpk.objective)) ++tighter;
    const auto mutant = solve(true, double(s.k) / 4);
    if (mutant.lower_bound > glpk.objective * (1 + 1e-9)) ++mutant_broken;
  }
  CHECK(tighter >= 10);
  CHECK(mutant_broken >= 1);
}

TEST_CASE("column generation: warm-start duals start the certificate and never change the optimum",
          "[column_generation]") {
  std::mt19937_64 rng(29);
  for (int t = 0; t < 12; ++t) {
    const StaircaseLP s = random_staircase(rng, 3 + t % 4, 6 + t % 5);
    const LinearProgram full = full_staircase_lp(s);
    const auto glpk = labeldp::test::solve_with_glpk(full);
    REQUIRE(glpk.status == SolveStatus::Optimal);
    // Optimal duals of the full LP (our simplex on the explicit LP, checked against GLPK's value).
    RevisedSimplex direct(full);
    const auto exact = direct.solve();
    REQUIRE(exact.status == SolveStatus::Optimal);
    REQUIRE(close_relative(exact.objective, glpk.objective, 1e-9));
    std::normal_distribution<double> noise(0, 1);
    Eigen::VectorXd perturbed = exact.duals, wild = exact.duals;
    for (Index i = 0; i < perturbed.size(); ++i) {
      perturbed[i] += 1e-3 * noise(rng);
      wild[i] = 1e3 * noise(rng);
    }
    const std::vector<std::pair<const char*, Eigen::VectorXd>> starts = {
        {"optimal", exact.duals}, {"perturbed", perturbed}, {"zero", Eigen::VectorXd::Zero(s.k)}, {"wild", wild}};
    for (const auto& [name, warm] : starts) {
      for (const double smoothing : {0.0, 0.5}) {
        ColumnGenerationOptions opt;
        opt.dual_smoothing = smoothing;
        opt.warm_duals = warm;
        INFO("trial " << t << ", warm duals " << name << ", smoothing " << smoothing);
        solve_staircase_checked(s, opt, glpk.objective);
      }
    }
    // With the optimal duals the very first pricing proves the bound: after one master solve
    // (max_rounds = 0) the certified bound is already the optimum; cold, it is the bound of the
    // first master's duals.
    RevisedSimplex warm_master(initial_staircase_master(s)), cold_master(initial_staircase_master(s));
    StaircasePricing warm_pricing{&s, {}, {}}, cold_pricing{&s, {}, {}};
    ColumnGenerationOptions once;
    once.column_sum_bound = 1;
    once.max_rounds = 0;
    const auto cold = labeldp::optim::solve_by_column_generation(cold_master, cold_pricing, once);
    once.warm_duals = exact.duals;
    const auto warm = labeldp::optim::solve_by_column_generation(warm_master, warm_pricing, once);
    INFO("trial " << t << ": cold bound " << cold.lower_bound << ", warm bound " << warm.lower_bound << ", optimum "
                  << glpk.objective);
    REQUIRE(warm.lower_bound >= glpk.objective - 1e-9 * std::abs(glpk.objective));
    REQUIRE(warm.lower_bound <= glpk.objective + 1e-12);
    REQUIRE(warm.lower_bound >= cold.lower_bound);
    require_certificate(warm, once.gap_tolerance);
  }
}

TEST_CASE("column generation: round limit gives IterationLimit with a valid bound and a feasible master",
          "[column_generation]") {
  std::mt19937_64 rng(3);
  const CuttingStock cs = random_cutting_stock(rng, 9);
  const auto glpk = labeldp::test::solve_with_glpk(full_cutting_stock_lp(cs));
  Index needed = 0;  // rounds of the unlimited solve
  {
    RevisedSimplex master(initial_cutting_stock_master(cs));
    KnapsackPricing pricing{&cs, 1, std::vector<char>(cs.patterns.size(), 0), {}, 0};
    ColumnGenerationOptions opt;
    opt.column_sum_bound = cs.demands.sum();
    const auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
    REQUIRE(r.status == SolveStatus::Optimal);
    needed = r.rounds;
  }
  REQUIRE(needed >= 4);
  for (const Index limit : {Index(0), Index(1), needed / 2, needed - 1}) {
    RevisedSimplex master(initial_cutting_stock_master(cs));
    KnapsackPricing pricing{&cs, 1, std::vector<char>(cs.patterns.size(), 0), {}, 0};
    ColumnGenerationOptions opt;
    opt.column_sum_bound = cs.demands.sum();
    opt.max_rounds = limit;
    const auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
    INFO("max_rounds " << limit);
    REQUIRE(r.status == SolveStatus::IterationLimit);
    REQUIRE(r.rounds == limit);
    require_certificate(r, opt.gap_tolerance);
    REQUIRE(std::isfinite(r.lower_bound));
    REQUIRE(r.lower_bound <= glpk.objective * (1 + 1e-12));
    REQUIRE(r.master.objective >= glpk.objective * (1 - 1e-12));
    REQUIRE(r.gap > opt.gap_tolerance);
    require_feasible(master.problem(), r.master.x);
  }
}

namespace {

// The first of a few random cutting-stock instances whose column generation takes at least 8
// rounds (the tailing-off and bound tests stop it part way).
CuttingStock slow_cutting_stock() {
  CuttingStock cs;
  for (std::uint64_t seed = 3; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    cs = random_cutting_stock(rng, 12);
    RevisedSimplex master(initial_cutting_stock_master(cs));
    KnapsackPricing pricing{&cs, 1, std::vector<char>(cs.patterns.size(), 0), {}, 0};
    ColumnGenerationOptions opt;
    opt.column_sum_bound = cs.demands.sum();
    if (labeldp::optim::solve_by_column_generation(master, pricing, opt).rounds >= 8) break;
  }
  return cs;
}

// Column generation on `cs` from its initial master; the master's answer is checked feasible.
auto solve_checked(const CuttingStock& cs, const ColumnGenerationOptions& opt) {
  RevisedSimplex master(initial_cutting_stock_master(cs));
  KnapsackPricing pricing{&cs, 1, std::vector<char>(cs.patterns.size(), 0), {}, 0};
  auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
  require_feasible(master.problem(), r.master.x);
  return r;
}

// slow_cutting_stock(), the options of its solves (column_sum_bound set), its full solve
// (Optimal, at least 8 rounds: checked) and the solves stopped after r = 0, 1, ..., its rounds
// appending rounds (max_rounds = r).
struct RoundSolves {
  CuttingStock cs;
  ColumnGenerationOptions base;
  labeldp::optim::ColumnGenerationResult full;
  std::vector<labeldp::optim::ColumnGenerationResult> stopped;
};
RoundSolves solves_by_round() {
  RoundSolves runs;
  runs.cs = slow_cutting_stock();
  runs.base.column_sum_bound = runs.cs.demands.sum();
  runs.full = solve_checked(runs.cs, runs.base);
  REQUIRE(runs.full.status == SolveStatus::Optimal);
  REQUIRE(runs.full.rounds >= 8);
  for (Index r = 0; r <= runs.full.rounds; ++r) {
    ColumnGenerationOptions opt = runs.base;
    opt.max_rounds = r;
    runs.stopped.push_back(solve_checked(runs.cs, opt));
  }
  return runs;
}

// A solve of runs.cs under `opt` (runs.base with a stopping test) stops after `expected` rounds
// as IterationLimit, with the master of the solve stopped there by max_rounds and a certified
// bound; or, expected < 0, runs to the full solve's optimum.
void require_stop(const RoundSolves& runs, const ColumnGenerationOptions& opt, Index expected) {
  const auto r = solve_checked(runs.cs, opt);
  require_certificate(r, opt.gap_tolerance);
  if (expected < 0) {
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(r.rounds == runs.full.rounds);
    REQUIRE(r.master.objective == runs.full.master.objective);
  } else {
    REQUIRE(r.status == SolveStatus::IterationLimit);
    REQUIRE(r.rounds == expected);
    REQUIRE(r.master.objective == runs.stopped[std::size_t(expected)].master.objective);
    REQUIRE(r.lower_bound <= r.master.objective);
  }
}

}  // namespace

TEST_CASE("column generation: the tailing-off test stops where the objective's fall says, with IterationLimit",
          "[column_generation]") {
  const RoundSolves runs = solves_by_round();
  const ColumnGenerationOptions& base = runs.base;
  const Index needed = runs.full.rounds;
  // Oracle: z_r, the master objective after r appending rounds, from solves stopped there.
  std::vector<double> z;
  for (const auto& s : runs.stopped) z.push_back(s.master.objective);
  const Index window = 2, from = 3;
  // Relative falls over the window from round `from` on; their median is a threshold some
  // rounds meet and some do not.
  std::vector<double> falls;
  for (Index r = from; r < needed; ++r)
    falls.push_back((z[std::size_t(r - window)] - z[std::size_t(r)]) / std::abs(z[std::size_t(r)]));
  std::vector<double> sorted = falls;
  std::sort(sorted.begin(), sorted.end());
  for (const double first : {0.0, 1e9}) {
    for (const double later : {0.0, sorted[sorted.size() / 2], 1e9}) {
      ColumnGenerationOptions opt = base;
      opt.tailing_off_from = from;
      opt.tailing_off_window = window;
      opt.tailing_off_first_decrease = first;
      opt.tailing_off_decrease = later;
      Index expected = -1;  // the first round whose fall is below what it needs; -1: none
      for (Index r = from; r < needed && expected < 0; ++r)
        if (!(z[std::size_t(r - window)] - z[std::size_t(r)] >=
              (r == from ? first : later) * std::abs(z[std::size_t(r)])))
          expected = r;
      INFO("first " << first << " later " << later << " expected stop " << expected);
      require_stop(runs, opt, expected);
    }
  }
}

TEST_CASE("column generation: the bound test stops at the first round whose gap is not below its threshold",
          "[column_generation]") {
  const RoundSolves runs = solves_by_round();
  const ColumnGenerationOptions& base = runs.base;
  const Index needed = runs.full.rounds;
  // Oracle: the relative gap after r appending rounds, from solves stopped there.
  std::vector<double> gap;
  for (const auto& s : runs.stopped) gap.push_back((s.master.objective - s.lower_bound) / std::abs(s.master.objective));
  // Thresholds between the gaps seen from round 1 on (midpoints: no ties with a gap, whose
  // quotient the engine does not form), below and above them all, with the test starting at
  // rounds 1, 3 and 5.
  std::vector<double> seen(gap.begin() + 1, gap.begin() + needed);
  std::sort(seen.begin(), seen.end());
  REQUIRE(seen.front() < seen.back());  // the thresholds tell the rounds apart
  std::vector<double> thresholds{seen.front() / 2, 2 * seen.back()};
  for (std::size_t i = 1; i < seen.size(); ++i)
    if (seen[i] > seen[i - 1] * (1 + 1e-6)) thresholds.push_back((seen[i - 1] + seen[i]) / 2);
  std::vector<Index> stops;
  for (const Index from : {Index(1), Index(3), Index(5)})
    for (const double threshold : thresholds) {
      ColumnGenerationOptions opt = base;
      opt.bound_test_from = from;
      opt.bound_test_gap = threshold;
      Index expected = -1;  // the first round from `from` on whose gap is not below the threshold
      for (Index r = from; r < needed && expected < 0; ++r)
        if (!(gap[std::size_t(r)] < threshold)) expected = r;
      INFO("from " << from << " threshold " << threshold << " expected stop " << expected);
      require_stop(runs, opt, expected);
      if (expected >= 0) stops.push_back(expected);
    }
  // Stops at more than one round, and solves that go on to the optimum: not vacuous.
  std::sort(stops.begin(), stops.end());
  CHECK(std::unique(stops.begin(), stops.end()) - stops.begin() >= 2);
}

TEST_CASE("column generation: time limit 0 gives TimeLimit with a valid bound and a feasible master",
          "[column_generation]") {
  std::mt19937_64 rng(11);
  const CuttingStock cs = random_cutting_stock(rng, 5);
  const auto glpk = labeldp::test::solve_with_glpk(full_cutting_stock_lp(cs));
  RevisedSimplex master(initial_cutting_stock_master(cs));
  KnapsackPricing pricing{&cs, 2, std::vector<char>(cs.patterns.size(), 0), {}, 0};
  ColumnGenerationOptions opt;
  opt.column_sum_bound = cs.demands.sum();
  opt.time_limit = 0;
  const auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
  REQUIRE(r.status == SolveStatus::TimeLimit);
  REQUIRE(r.rounds == 0);
  REQUIRE(r.pricing_calls == 1);
  require_certificate(r, opt.gap_tolerance);
  REQUIRE(std::isfinite(r.lower_bound));
  REQUIRE(r.lower_bound <= glpk.objective * (1 + 1e-12));
  REQUIRE(r.master.objective >= glpk.objective * (1 - 1e-12));
  require_feasible(master.problem(), r.master.x);
  REQUIRE(r.bound_duals.size() == cs.widths.size());
}

TEST_CASE("column generation: an oracle that returns non-improving columns cannot make it report Optimal",
          "[column_generation]") {
  std::mt19937_64 rng(5);
  const CuttingStock cs = random_cutting_stock(rng, 5);
  const auto glpk = labeldp::test::solve_with_glpk(full_cutting_stock_lp(cs));
  KnapsackPricing honest{&cs, 1, std::vector<char>(cs.patterns.size(), 0), {}, 0};
  SECTION("honest minimum, useless columns") {
    // The true minimum reduced cost, but the columns handed over are the WORST patterns.
    RevisedSimplex master(initial_cutting_stock_master(cs));
    auto liar = [&](const Eigen::VectorXd& y) {
      PricedColumns p = honest(y);
      Index worst = 0;
      double worst_rc = -std::numeric_limits<double>::infinity();
      for (std::size_t q = 0; q < cs.patterns.size(); ++q) {
        const double rc = 1 - y.dot(cs.patterns[q]);
        if (rc > worst_rc) {
          worst_rc = rc;
          worst = Index(q);
        }
      }
      p.A = cs.patterns[std::size_t(worst)];
      p.c = Eigen::VectorXd::Ones(1);
      return p;
    };
    ColumnGenerationOptions opt;
    opt.column_sum_bound = cs.demands.sum();
    const auto r = labeldp::optim::solve_by_column_generation(master, liar, opt);
    REQUIRE(r.status == SolveStatus::NumericalIssue);
    require_certificate(r, opt.gap_tolerance);
    REQUIRE(std::isfinite(r.lower_bound));
    REQUIRE(r.lower_bound <= glpk.objective * (1 + 1e-12));
    REQUIRE(r.columns == 0);
  }
  SECTION("claims nothing improves, yet returns an improving column") {
    // min_reduced_cost = 0 is contradicted by the column it returns: the engine believes the
    // column (it computes its reduced cost itself) and goes on to the true optimum.
    RevisedSimplex master(initial_cutting_stock_master(cs));
    auto liar = [&](const Eigen::VectorXd& y) {
      PricedColumns p = honest(y);
      p.min_reduced_cost = 0;
      return p;
    };
    ColumnGenerationOptions opt;
    opt.column_sum_bound = cs.demands.sum();
    const auto r =
        labeldp::optim::solve_by_column_generation(master, liar, opt, [&](const std::vector<Index>& picked, Index) {
          for (Index p : picked) honest.in_master[std::size_t(honest.last[std::size_t(p)])] = 1;
        });
    REQUIRE(r.status == SolveStatus::Optimal);
    REQUIRE(close_relative(r.master.objective, glpk.objective, 1e-9));
    require_certificate(r, opt.gap_tolerance);
  }
  SECTION("not exact (no minimum) and out of columns") {
    // A heuristic oracle that finds nothing proves nothing.
    RevisedSimplex master(initial_cutting_stock_master(cs));
    auto heuristic = [&](const Eigen::VectorXd& y) {
      PricedColumns p;
      p.A.resize(y.size(), 0);
      return p;
    };
    const auto r = labeldp::optim::solve_by_column_generation(master, heuristic);
    REQUIRE(r.status == SolveStatus::NumericalIssue);
    REQUIRE(r.lower_bound == -std::numeric_limits<double>::infinity());
    REQUIRE(r.gap == std::numeric_limits<double>::infinity());
  }
}

TEST_CASE("column generation: without a column-sum bound the exact stop at the master's duals still decides",
          "[column_generation]") {
  // kappa unknown (infinity): no bound while any reduced cost is negative, but exact pricing at
  // the master's duals that finds no column the simplex would pivot in proves the optimum.
  std::mt19937_64 rng(17);
  const StaircaseLP s = random_staircase(rng, 5, 9);
  const auto glpk = labeldp::test::solve_with_glpk(full_staircase_lp(s));
  RevisedSimplex master(initial_staircase_master(s));
  StaircasePricing pricing{&s, {}, {}};
  const auto r = labeldp::optim::solve_by_column_generation(master, pricing);
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(close_relative(r.master.objective, glpk.objective, 1e-9));
  REQUIRE(r.lower_bound <= r.master.objective);
  // Whatever bound there is comes from a non-negative pricing (b^T y), hence meets the objective.
  if (std::isfinite(r.lower_bound)) REQUIRE(r.gap <= 1e-9);
}

TEST_CASE("column generation: pricing with nothing to add stops after one call", "[column_generation]") {
  const StaircaseLP s = [] {
    std::mt19937_64 rng(1);
    return random_staircase(rng, 4, 7);
  }();
  RevisedSimplex master(full_staircase_lp(s));  // every column already in the master
  StaircasePricing pricing{&s, {}, {}};
  ColumnGenerationOptions opt;
  opt.column_sum_bound = 1;
  const auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(r.pricing_calls == 1);
  REQUIRE(r.rounds == 0);
  REQUIRE(r.columns == 0);
  require_certificate(r, 1e-9);
}

TEST_CASE("column generation: re-optimization is warm (far fewer pivots than from scratch)", "[column_generation]") {
  std::mt19937_64 rng(9);
  const CuttingStock cs = random_cutting_stock(rng, 7);
  RevisedSimplex master(initial_cutting_stock_master(cs));
  KnapsackPricing pricing{&cs, 1, std::vector<char>(cs.patterns.size(), 0), {}, 0};
  Index solves = 0;
  auto counting = [&](const Eigen::VectorXd& y) {
    ++solves;
    return pricing(y);
  };
  ColumnGenerationOptions opt;
  opt.column_sum_bound = cs.demands.sum();
  const auto r =
      labeldp::optim::solve_by_column_generation(master, counting, opt, [&](const std::vector<Index>& picked, Index) {
        for (Index p : picked) pricing.in_master[std::size_t(pricing.last[std::size_t(p)])] = 1;
      });
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(r.master.warm_started);
  REQUIRE(r.rounds > 3);
  master.reset();
  const auto cold = master.solve();
  REQUIRE_FALSE(cold.warm_started);
  REQUIRE(close_relative(cold.objective, r.master.objective, 1e-9));
  INFO("pivots over " << solves << " warm solves " << r.iterations << ", one cold solve " << cold.iterations);
  REQUIRE(double(r.iterations) / double(solves) < double(cold.iterations));
}

TEST_CASE("column generation: a master solve stopped by the master's own time limit is reported",
          "[column_generation]") {
  std::mt19937_64 rng(23);
  const CuttingStock cs = random_cutting_stock(rng, 6);
  labeldp::optim::SimplexOptions simplex;
  simplex.time_limit = 0;  // stops before the first pivot; the homogeneous start needs phase 1
  RevisedSimplex master(initial_cutting_stock_master(cs), simplex);
  KnapsackPricing pricing{&cs, 2, std::vector<char>(cs.patterns.size(), 0), {}, 0};
  ColumnGenerationOptions opt;
  opt.column_sum_bound = cs.demands.sum();
  const auto r = labeldp::optim::solve_by_column_generation(master, pricing, opt);
  REQUIRE(r.status == SolveStatus::TimeLimit);
  REQUIRE(r.master.status == SolveStatus::TimeLimit);
  REQUIRE(r.pricing_calls == 0);
  REQUIRE(r.lower_bound == -std::numeric_limits<double>::infinity());
  REQUIRE(master.options().time_limit == 0);  // the master's own limit is restored
}

TEST_CASE("column generation: an infeasible master is reported, not thrown", "[column_generation]") {
  LinearProgram lp;  // x <= -1 with x >= 0
  lp.A = Eigen::MatrixXd{{1.0}};
  lp.b = Eigen::VectorXd::Constant(1, -1.0);
  lp.row_types = {RowType::LessEqual};
  lp.c = Eigen::VectorXd::Ones(1);
  RevisedSimplex master(lp);
  Index calls = 0;
  const auto r = labeldp::optim::solve_by_column_generation(master, [&](const Eigen::VectorXd& d) {
    ++calls;
    return PricedColumns{Eigen::MatrixXd(d.size(), 0), Eigen::VectorXd(0), 0.0};
  });
  REQUIRE(r.status == SolveStatus::Infeasible);
  REQUIRE(r.master.status == SolveStatus::Infeasible);
  REQUIRE(r.pricing_calls == 0);
  REQUIRE(calls == 0);
  REQUIRE(r.lower_bound == -std::numeric_limits<double>::infinity());
}

TEST_CASE("column generation rejects: pricing blocks of the wrong shape", "[column_generation][validation]") {
  RevisedSimplex master(initial_staircase_master([] {
    std::mt19937_64 rng(4);
    return random_staircase(rng, 4, 5);
  }()));
  auto rows = [](const Eigen::VectorXd&) {
    return PricedColumns{Eigen::MatrixXd::Ones(3, 1), Eigen::VectorXd::Zero(1), -1.0};
  };
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, rows),
                      Catch::Contains("pricing returned columns with 3 rows, the master has 4"));
  auto costs = [](const Eigen::VectorXd&) {
    return PricedColumns{Eigen::MatrixXd::Ones(4, 2), Eigen::VectorXd::Zero(1), -1.0};
  };
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, costs),
                      Catch::Contains("pricing returned 2 columns but 1 costs"));
}

TEST_CASE("column generation rejects: options out of range, naming the field", "[column_generation][validation]") {
  const auto rejects = [](auto set, const char* message) {
    ColumnGenerationOptions opt;
    set(opt);
    REQUIRE_THROWS_AS(opt.check(), std::invalid_argument);
    REQUIRE_THROWS_WITH(opt.check(), Catch::Contains(message));
  };
  rejects([](ColumnGenerationOptions& o) { o.max_rounds = -1; }, "'max_rounds' must be >= 0, got -1");
  rejects([](ColumnGenerationOptions& o) { o.time_limit = -1; }, "'time_limit' must be >= 0 seconds");
  rejects([](ColumnGenerationOptions& o) { o.time_limit = std::nan(""); }, "'time_limit'");
  rejects([](ColumnGenerationOptions& o) { o.gap_tolerance = -1e-9; },
          "'gap_tolerance' must be finite and non-negative");
  rejects([](ColumnGenerationOptions& o) { o.gap_tolerance = std::numeric_limits<double>::infinity(); },
          "'gap_tolerance'");
  rejects([](ColumnGenerationOptions& o) { o.column_sum_bound = 0; }, "'column_sum_bound' must be positive");
  rejects([](ColumnGenerationOptions& o) { o.column_weight_bound = 0; }, "'column_weight_bound' must be positive");
  rejects([](ColumnGenerationOptions& o) { o.column_weight_bound = std::numeric_limits<double>::quiet_NaN(); },
          "'column_weight_bound'");
  rejects([](ColumnGenerationOptions& o) { o.dual_smoothing = 1; }, "'dual_smoothing' must be in [0, 1), got 1");
  rejects([](ColumnGenerationOptions& o) { o.dual_smoothing = -0.1; }, "'dual_smoothing'");
  rejects([](ColumnGenerationOptions& o) { o.max_columns_per_round = -2; }, "'max_columns_per_round' must be >= 0");
  rejects([](ColumnGenerationOptions& o) { o.tailing_off_from = -1; }, "'tailing_off_from' must be >= 0");
  rejects([](ColumnGenerationOptions& o) { o.tailing_off_window = 0; }, "'tailing_off_window' must be at least 1");
  rejects([](ColumnGenerationOptions& o) { o.tailing_off_decrease = -0.1; }, "'tailing_off_decrease'");
  rejects([](ColumnGenerationOptions& o) { o.bound_test_from = -1; }, "'bound_test_from' must be >= 0");
  rejects([](ColumnGenerationOptions& o) { o.bound_test_gap = 0; }, "'bound_test_gap' must be finite and positive");
  rejects([](ColumnGenerationOptions& o) { o.bound_test_gap = std::nan(""); }, "'bound_test_gap'");
  rejects([](ColumnGenerationOptions& o) { o.tailing_off_first_decrease = std::nan(""); },
          "'tailing_off_first_decrease'");
  rejects([](ColumnGenerationOptions& o) { o.warm_duals = Eigen::VectorXd::Constant(2, std::nan("")); },
          "'warm_duals' must be finite");
  ColumnGenerationOptions ok;
  REQUIRE_NOTHROW(ok.check());
  // The engine checks them too.
  RevisedSimplex master(initial_staircase_master([] {
    std::mt19937_64 rng(6);
    return random_staircase(rng, 3, 4);
  }()));
  ColumnGenerationOptions bad;
  bad.max_rounds = -1;
  auto none = [](const Eigen::VectorXd& d) {
    return PricedColumns{Eigen::MatrixXd(d.size(), 0), Eigen::VectorXd(0), 0.0};
  };
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, none, bad), Catch::Contains("'max_rounds'"));
  ColumnGenerationOptions wrong_size;
  wrong_size.warm_duals = Eigen::VectorXd::Zero(master.num_rows() + 1);
  REQUIRE_THROWS_WITH(labeldp::optim::solve_by_column_generation(master, none, wrong_size),
                      Catch::Contains("'warm_duals' has 4 entries, the master has 3 rows"));
}

TEST_CASE("column generation: known_lower_bound is validated (NaN and +infinity refused)", "[column_generation]") {
  labeldp::optim::ColumnGenerationOptions o;
  o.known_lower_bound = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(o.check(), Catch::Matchers::Contains("known_lower_bound"));
  o.known_lower_bound = std::numeric_limits<double>::infinity();
  CHECK_THROWS(o.check());
  o.known_lower_bound = -std::numeric_limits<double>::infinity();
  CHECK_NOTHROW(o.check());
}

TEST_CASE("column generation: objective_offset and min_column_cost are validated", "[column_generation]") {
  labeldp::optim::ColumnGenerationOptions o;
  o.objective_offset = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(o.check(), Catch::Matchers::Contains("'objective_offset' must be finite"));
  o.objective_offset = -3;
  CHECK_NOTHROW(o.check());
  o.min_column_cost = -1;
  CHECK_THROWS_WITH(o.check(), Catch::Matchers::Contains("'min_column_cost' must be finite and non-negative, got -1"));
  o.min_column_cost = std::numeric_limits<double>::infinity();
  CHECK_THROWS(o.check());
  o.min_column_cost = 0.5;
  CHECK_NOTHROW(o.check());
}
