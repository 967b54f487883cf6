/// \file
/// ComputeOptUnbiasedRand (Badanidiyuru et al. 2023, Alg. 1) by column generation: the scaled
/// problem, the staircase master LP (2k equality rows, 3k with a bias bound, over (pattern,
/// output) columns; Kairouz, Oh and Viswanath 2016: staircase patterns are the extreme rays of
/// the eps-DP cone) with Proposition 7's crash basis, solved on the library's column-generation
/// engine (optim::solve_by_column_generation) with a certified Lagrangian bound.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/unbiased_pricing.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_outputs.hpp"
#include "labeldp/optim/column_generation.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp::detail {

/// Scaled problem: the dbRR interval [L, U] of the labels maps to [-1, 1].
template <typename Scalar>
UnbiasedProblem make_unbiased_problem(const FinitePrior<Scalar>& prior, double eps, double max_bias) {
  UnbiasedProblem P;
  const Index k = prior.size();
  const Vector<Scalar> phi = debiased_rr_outputs(prior.values(), eps);
  const double L = double(phi[0]), U = double(phi[k - 1]);
  // Outputs spanning more than sqrt(DBL_MAX): their squared loss overflows.
  if (!std::isfinite((U - L) * (U - L))) refuse_unbiased_overflow(eps);
  P.shift = 0.5 * (L + U);
  P.scale = k > 1 ? 0.5 * (U - L) : 1.0;
  P.labels.resize(k);
  P.probs.resize(k);
  for (Index i = 0; i < k; ++i) {
    P.labels[i] = (double(prior.value(i)) - P.shift) / P.scale;
    P.probs[i] = double(prior.probability(i));
  }
  P.low = std::nextafter(std::exp(-eps), 1.0);
  P.eps = eps;
  P.max_bias = max_bias / P.scale;
  return P;
}

/// The master LP's right-hand side and row types (columns are added separately).
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline optim::LinearProgram empty_master(const UnbiasedProblem& P) {
  const Index k = P.num_labels(), m = P.num_rows();
  optim::LinearProgram lp;
  lp.A.resize(m, 0);
  lp.c.resize(0);
  lp.b.resize(m);
  lp.row_types.assign(std::size_t(m), optim::RowType::Equal);
  for (Index i = 0; i < k; ++i) {
    lp.b[i] = 1;
    if (P.bounded()) {
      lp.b[k + i] = P.labels[i] + P.max_bias;
      lp.row_types[std::size_t(k + i)] = optim::RowType::LessEqual;
      lp.b[2 * k + i] = P.labels[i] - P.max_bias;
      lp.row_types[std::size_t(2 * k + i)] = optim::RowType::GreaterEqual;
    } else {
      lp.b[k + i] = P.labels[i];
    }
  }
  return lp;
}

/// The master columns of `cols` as one block: `A` (num_rows x cols.size()) and their costs `c`
/// (staircase_coefficients()), `loss_of(column)` giving the per-label loss at the column's
/// output (scaled units). The one assembly of staircase columns: the first master, the columns
/// priced each round, and the crossover's LP and output brackets (unbiased_continuous.hpp).
template <typename LossAt>
void staircase_block(const UnbiasedProblem& P, const std::vector<StaircaseColumn>& cols, LossAt&& loss_of,
                     Eigen::MatrixXd& A, Eigen::VectorXd& c) {
  A.resize(P.num_rows(), Index(cols.size()));
  c.resize(Index(cols.size()));
  for (std::size_t j = 0; j < cols.size(); ++j)
    c[Index(j)] = staircase_coefficients(P, cols[j], loss_of(cols[j]), A.col(Index(j)));
}

/// The `min_ratio` of run_staircase_master() / solve_staircase_master() that computes none: the
/// engine's bound is then the plain kappa one only.
struct NoMinRatio {};

/// State of a column-generation solve of the staircase master.
struct StaircaseMaster {
  std::vector<StaircaseColumn> columns;                         ///< metadata of the master's structural columns
  std::set<std::pair<double, std::vector<std::uint8_t>>> seen;  ///< (output, pattern) already in
  Eigen::VectorXd x;                                            ///< final primal values over `columns`
  Eigen::VectorXd duals;                                        ///< the final master's row duals (num_rows)
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;
  Index rounds = 0;      ///< pricing rounds (those that added columns, plus the final one)
  Index iterations = 0;  ///< simplex pivots
  /// Master objective of `x` (scaled cost units); NaN when no master solve ended optimal.
  double objective = std::numeric_limits<double>::quiet_NaN();
  /// Certified lower bound (scaled cost units) on the optimum over every column the pricing
  /// searches (optim::ColumnGenerationResult::lower_bound, with
  /// \f$\kappa = k / (1 + (k - 1) \ell)\f$); -infinity when none was obtained.
  double lower_bound = -std::numeric_limits<double>::infinity();
  /// Relative gap (objective - lower_bound) / |objective| (infinity without a bound).
  double gap = std::numeric_limits<double>::infinity();
  /// True when `x` is a feasible solution of the LP (the master's solution uses no penalized
  /// artificial), whatever the status: then finish_unbiased() can build a mechanism from it.
  bool feasible = false;
};

/// A crash basis for solve_staircase_master(): the master's m columns in basis order and, when
/// known in closed form, the basis inverse (empty: the simplex factorizes it). The simplex checks
/// both (RevisedSimplex::set_basis()), so a wrong one costs time, never correctness.
struct StaircaseCrash {
  std::vector<StaircaseColumn> columns;  ///< m columns, basis position i = columns[i]
  Eigen::MatrixXd inverse;               ///< m x m inverse of that basis, or empty
};

/// Inverse of the k x k prefix staircase matrix \f$S(i, \ell) = 1\f$ if \f$i < \ell\f$, else
/// `low` (\f$\ell = 0..k-1\f$: column \f$\ell\f$ is the pattern of the first \f$\ell\f$
/// labels), in closed form, O(k^2). Consecutive columns differ by \f$(1 - low) e_{\ell-1}\f$,
/// so \f$S = M D^{-1}\f$ with D the upper bidiagonal difference matrix and
/// \f$M = [low \cdot 1, (1 - low) e_0, \ldots, (1 - low) e_{k-2}]\f$, whose inverse is
/// explicit: \f$S^{-1} = D M^{-1}\f$ has rows \f$e_{k-1}/low - (e_0 - e_{k-1})/(1 - low)\f$,
/// then \f$(e_{\ell-1} - e_\ell)/(1 - low)\f$ for \f$\ell = 1..k-2\f$, and
/// \f$(e_{k-2} - e_{k-1})/(1 - low)\f$. Requires k >= 2 and 0 < low < 1.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline Eigen::MatrixXd prefix_staircase_inverse(Index k, double low) {
  Eigen::MatrixXd inv = Eigen::MatrixXd::Zero(k, k);
  const double h = 1 / (1 - low);
  inv(0, k - 1) = 1 / low + h;
  inv(0, 0) -= h;
  for (Index len = 1; len < k; ++len) {
    inv(len, len - 1) += h;
    inv(len, len == k - 1 ? k - 1 : len) -= h;
  }
  return inv;
}

/// The eps-debiased randomized response (dbRR; Badanidiyuru et al. 2023, Def. 23) moved onto a
/// grid, as a crash basis of the unbiased master: dbRR sends y to \f$\Phi(y_j)\f$ with
/// probability \f$e^\varepsilon / Z\f$ if j = y, else 1 / Z (\f$Z = e^\varepsilon + k - 1\f$); its column
/// at \f$\Phi(y_j)\f$ is the staircase column of the singleton pattern {j}. Splitting that mass
/// between the two grid points around \f$\Phi(y_j)\f$ in the proportions that keep its mean
/// (both parts are multiples of the same column, so eps-DP holds) gives a feasible mechanism on
/// the grid with 2k columns: singleton j at \f$g_{a_j}\f$ (positions 0..k-1) and at
/// \f$g_{a_j + 1}\f$ (k..2k-1). The basis is \f$\mathrm{diag}(S, S) [I, I; G_a, G_b]\f$ with
/// \f$S = \ell J + (1 - \ell) I\f$, so its inverse is closed form:
/// \f$[G_b D^{-1}, -D^{-1}; -G_a D^{-1}, D^{-1}] \mathrm{diag}(S^{-1}, S^{-1})\f$ with
/// \f$D = G_b - G_a\f$ and \f$S^{-1} = (I - c J) / (1 - \ell)\f$, \f$c = \ell / (1 - \ell + k \ell)\f$.
/// At large eps dbRR is close to the optimum (each label stays near itself), where Proposition
/// 7's two-point start is far from it and column generation needs hundreds of rounds to get
/// there. `outputs`: the scaled grid, ascending, at least 2 points. `split_at[j]` receives
/// \f$a_j\f$ and `upper_share[j]` the share of the mass at \f$g_{a_j + 1}\f$.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline StaircaseCrash debiased_rr_crash(const UnbiasedProblem& P, const Eigen::VectorXd& outputs,
                                        std::vector<Index>& split_at, std::vector<double>& upper_share) {
  const Index k = P.num_labels(), n = outputs.size();
  StaircaseCrash crash;
  const double w = std::expm1(P.eps), sum = P.labels.sum();
  split_at.assign(std::size_t(k), 0);
  upper_share.assign(std::size_t(k), 0.0);
  Eigen::VectorXd ga(k), gb(k);
  std::vector<StaircaseColumn> upper;
  for (Index j = 0; j < k; ++j) {
    const double phi = P.labels[j] + (double(k) * P.labels[j] - sum) / w;  // debiased_rr_outputs(), scaled
    const Index a = std::clamp<Index>(
        Index(std::upper_bound(outputs.data(), outputs.data() + n, phi) - outputs.data()) - 1, 0, n - 2);
    split_at[std::size_t(j)] = a;
    ga[j] = outputs[a];
    gb[j] = outputs[a + 1];
    upper_share[std::size_t(j)] = std::clamp((phi - ga[j]) / (gb[j] - ga[j]), 0.0, 1.0);
    StaircaseColumn col;
    col.pattern.assign(std::size_t(k), 0);
    col.pattern[std::size_t(j)] = 1;
    col.output = ga[j];
    col.grid_index = a;
    crash.columns.push_back(col);
    col.output = gb[j];
    col.grid_index = a + 1;
    upper.push_back(std::move(col));
  }
  for (auto& col : upper) crash.columns.push_back(std::move(col));
  const double low = P.low, c = low / (1 - low + double(k) * low);
  Eigen::MatrixXd s_inv = Eigen::MatrixXd::Constant(k, k, -c / (1 - low));
  s_inv.diagonal().array() += 1 / (1 - low);
  const Eigen::VectorXd d_inv = (gb - ga).cwiseInverse();
  crash.inverse.resize(2 * k, 2 * k);
  crash.inverse.topLeftCorner(k, k) = gb.cwiseProduct(d_inv).asDiagonal() * s_inv;
  crash.inverse.topRightCorner(k, k) = -(d_inv.asDiagonal() * s_inv);
  crash.inverse.bottomLeftCorner(k, k) = -(ga.cwiseProduct(d_inv).asDiagonal() * s_inv);
  crash.inverse.bottomRightCorner(k, k) = d_inv.asDiagonal() * s_inv;
  return crash;
}

/// Structured pricing product \f$A^T y\f$ of a staircase master (RevisedSimplex::set_transpose_product()):
/// a staircase column at output o has \f$a^T y = \sum_i s_i (\pi_i + o \sigma_i)\f$ with
/// \f$s_i = \ell + (1 - \ell) [i \in T]\f$; with the prefix sums of \f$\pi\f$ and of \f$\sigma\f$ (the
/// unbiasedness duals folded, bias_duals()) a pattern costs O(1) per run of consecutive labels
/// instead of O(k): O(1) for the intervals (all one-sided and interval patterns, Claim 11), and
/// few runs for the other patterns a bias bound's optimum needs. The first `artificial`
/// columns are the pairs \f$\pm e_r\f$ of solve_staircase_master(); describe() the others in
/// column order.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicStaircaseProduct {
 public:
  BasicStaircaseProduct(const UnbiasedProblem& P, Index artificial) : m_P(P), m_artificial(artificial) {}

  /// Appends the next structural column.
  void describe(const StaircaseColumn& col) {
    Shape sh;
    sh.output = col.output;
    sh.first_run = m_runs.size();
    const Index k = m_P.num_labels();
    for (Index i = 0; i < k;) {
      while (i < k && !col.pattern[std::size_t(i)]) ++i;
      if (i == k) break;
      const Index start = i;
      while (i < k && col.pattern[std::size_t(i)]) ++i;
      m_runs.emplace_back(start, i);
    }
    sh.end_run = m_runs.size();
    m_shapes.push_back(sh);
  }

  /// out = A^T y (out sized to the artificial and described columns).
  void multiply(const Eigen::VectorXd& y, Eigen::VectorXd& out) {
    const Index k = m_P.num_labels();
    const Eigen::VectorXd sigma = bias_duals(m_P, y);
    m_prefix_pi.assign(std::size_t(k + 1), 0.0);
    m_prefix_sigma.assign(std::size_t(k + 1), 0.0);
    for (Index i = 0; i < k; ++i) {
      m_prefix_pi[std::size_t(i + 1)] = m_prefix_pi[std::size_t(i)] + y[i];
      m_prefix_sigma[std::size_t(i + 1)] = m_prefix_sigma[std::size_t(i)] + sigma[i];
    }
    for (Index r = 0; r < m_artificial / 2; ++r) {
      out[2 * r] = y[r];
      out[2 * r + 1] = -y[r];
    }
    const double all_pi = m_prefix_pi[std::size_t(k)], all_sigma = m_prefix_sigma[std::size_t(k)];
    for (std::size_t j = 0; j < m_shapes.size(); ++j) {
      const Shape& sh = m_shapes[j];
      const double o = sh.output;
      double inside = 0;
      for (std::size_t t = sh.first_run; t < sh.end_run; ++t) {
        const auto [first, last] = m_runs[t];
        inside += (m_prefix_pi[std::size_t(last)] - m_prefix_pi[std::size_t(first)]) +
                  o * (m_prefix_sigma[std::size_t(last)] - m_prefix_sigma[std::size_t(first)]);
      }
      out[m_artificial + Index(j)] = m_P.low * (all_pi + o * all_sigma) + (1 - m_P.low) * inside;
    }
  }

 private:
  struct Shape {
    double output = 0;
    std::size_t first_run = 0, end_run = 0;  ///< the pattern's runs: m_runs[first_run, end_run)
  };
  const UnbiasedProblem& m_P;
  Index m_artificial;
  std::vector<Shape> m_shapes;
  std::vector<std::pair<Index, Index>> m_runs;  ///< [first, last) labels of each run
  std::vector<double> m_prefix_pi, m_prefix_sigma;
};

/// StaircaseProduct: BasicStaircaseProduct<> (see there).
using StaircaseProduct = BasicStaircaseProduct<>;

/// The Wentges smoothing weight the staircase master uses: options.dual_smoothing, or when that
/// is automatic 0.5 from k = 100 labels on (the master's duals jump between extreme points of a
/// highly degenerate dual there) and 0 below.
inline double staircase_dual_smoothing(const UnbiasedOptions& options, Index k) {
  return options.dual_smoothing == double(kAutomatic) ? (k >= 100 ? 0.5 : 0.0) : options.dual_smoothing;
}

/// Early stops of the staircase master's column generation, for a caller with a cheaper way to
/// finish (the interior point): both stop with IterationLimit and the best master found.
struct StaircaseEarlyStop {
  /// Rounds after which column generation goes on only while its objective falls fast
  /// (optim::ColumnGenerationOptions::tailing_off_from; kUnlimited = off).
  Index tailing_off_from = optim::kUnlimited;
  /// Rounds after which column generation goes on only while its certified relative gap is
  /// below 1 (optim::ColumnGenerationOptions::bound_test_from; kUnlimited = off).
  Index bound_test_from = optim::kUnlimited;
};

/// The column-generation rounds of solve_staircase_master() on a master already built (its
/// structural columns after `artificial` penalized ones are S.columns, described to `product`
/// in order, and S.seen holds them): continues from the master's current basis, so a caller
/// whose LP over some of the columns is already solved (the bias-bounded crossover) resumes
/// there instead of solving that LP again from scratch. Fills S's status, solution and bound.
/// `early`: rounds after which column generation stops early (StaircaseEarlyStop; default off).
/// `min_ratio(duals, mu, argmin_size)` (NoMinRatio: none): a lower bound on the least reduced
/// cost per unit of normalization mass over the pricing's whole column space
/// (staircase_min_ratio()), called when the least reduced cost `mu` is negative with the pattern
/// size `argmin_size` of a column reaching it (its first Dinkelbach iterate, already priced);
/// the engine's bound is then also the weighted one
/// (optim::ColumnGenerationOptions::column_weight_bound, W = k). With one, `price` is called as
/// `price(duals, tol, min_rc, &argmin_size)` and reports that size.
template <typename LossAt, typename Price, typename MinRatio = NoMinRatio>
void run_staircase_master(const UnbiasedProblem& P, optim::RevisedSimplex& master, StaircaseProduct& product,
                          Index artificial, StaircaseMaster& S, LossAt&& loss_of, Price&& price,
                          const UnbiasedOptions& options, const Eigen::VectorXd& warm_duals = {},
                          const StaircaseEarlyStop& early = {}, MinRatio&& min_ratio = {}) {
  constexpr bool weighted = !std::is_same_v<std::remove_cvref_t<MinRatio>, NoMinRatio>;
  // Engine options. Wentges smoothing: the master's duals jump between extreme points of a
  // highly degenerate dual (many labels, few outputs), and columns priced there are often
  // useless a round later; the smoothed point moves steadily.
  optim::ColumnGenerationOptions cg;
  cg.max_rounds = options.max_rounds;
  cg.time_limit = options.time_limit;
  cg.gap_tolerance = options.gap_tolerance;
  // kappa (Lagrangian bound b'y + kappa min(0, min reduced cost)): the most total weight
  // (UnbiasedProblem::column_mass_bound()). The empty pattern's ratio rc_j / w_j equals the full
  // pattern's (both are sum_i terms_i / k), so the minimum is reached on a non-empty pattern.
  const double k_labels = double(P.num_labels());
  cg.column_sum_bound = P.column_mass_bound();
  // The same sum weighs each column by its own w_j (staircase_min_ratio()): W = k.
  if (weighted) cg.column_weight_bound = k_labels;
  cg.dual_smoothing = staircase_dual_smoothing(options, P.num_labels());
  // The most negative columns first, at most max_columns_per_round of them: every column costs
  // a dot product per simplex pivot for the rest of the solve.
  cg.max_columns_per_round =
      options.max_columns_per_round == kAutomatic ? 2 * P.num_labels() : options.max_columns_per_round;
  cg.warm_duals = warm_duals;
  cg.tailing_off_from = early.tailing_off_from;
  cg.bound_test_from = early.bound_test_from;
  // The pricing oracle of the engine: exact pricing (price() reports the minimum reduced cost
  // over its whole column space) returning the priced columns not yet in the master, once
  // each. `last` keeps their metadata until the engine says which ones it appended. Without
  // smoothing the oracle's duals are the master's, so only the max_columns_per_round most
  // negative can be appended: the others are not even assembled.
  std::vector<StaircaseColumn> last;
  std::set<std::pair<double, std::vector<std::uint8_t>>> in_block;
  auto oracle = [&](const Eigen::VectorXd& y) {
    optim::PricedColumns out;
    double min_rc = 0;
    Index argmin_size = 0;
    std::vector<StaircaseColumn> priced;
    if constexpr (weighted)
      priced = price(y, options.pricing_tolerance, min_rc, &argmin_size);
    else
      priced = price(y, options.pricing_tolerance, min_rc);
    const std::size_t cap = std::size_t(cg.max_columns_per_round);
    if (cg.dual_smoothing == 0 && cap > 0 && priced.size() > cap)
      std::stable_sort(priced.begin(), priced.end(), [](const StaircaseColumn& u, const StaircaseColumn& v) {
        return u.reduced_cost < v.reduced_cost;
      });
    last.clear();
    in_block.clear();
    for (auto& col : priced) {
      if (cg.dual_smoothing == 0 && cap > 0 && last.size() >= cap) break;
      if (!S.seen.count({col.output, col.pattern}) && in_block.emplace(col.output, col.pattern).second)
        last.push_back(std::move(col));
    }
    staircase_block(P, last, loss_of, out.A, out.c);
    out.min_reduced_cost = min_rc;
    if constexpr (weighted)
      if (min_rc < 0) out.min_reduced_cost_ratio = min_ratio(y, min_rc, argmin_size);
    return out;
  };
  auto on_append = [&](const std::vector<Index>& picked, Index) {
    for (Index t : picked) {
      StaircaseColumn& col = last[std::size_t(t)];
      S.seen.emplace(col.output, col.pattern);
      product.describe(col);
      S.columns.push_back(std::move(col));
    }
  };
  const optim::ColumnGenerationResult r = optim::solve_by_column_generation(master, oracle, cg, on_append);
  S.status = r.status;
  S.iterations = r.iterations;
  S.rounds = r.rounds + (r.pricing_calls > 0 ? 1 : 0);
  if (r.master.x.size() == master.num_columns()) S.x = r.master.x.tail(r.master.x.size() - artificial);
  S.duals = r.master.duals;
  S.objective = r.master.objective;
  S.lower_bound = r.lower_bound;
  S.gap = r.gap;
  S.feasible =
      S.x.size() == Index(S.columns.size()) &&
      (artificial == 0 || r.master.x.head(artificial).maxCoeff() <= options.simplex.primal_feasibility_tolerance);
  // A solution that still uses the penalized artificials is no solution of the LP.
  if (S.status == optim::SolveStatus::Optimal && artificial > 0 &&
      r.master.x.head(artificial).maxCoeff() > options.simplex.primal_feasibility_tolerance)
    S.status = optim::SolveStatus::Infeasible;
}

/// Column generation on the staircase master, on the library's engine
/// (optim::solve_by_column_generation(), \f$\kappa = k / (1 + (k - 1) \ell)\f$, derived below): `loss_of(column)` gives
/// the per-label loss vector at the column's output (scaled units), `price(duals, tol, min_rc)` the columns of reduced
/// cost below -tol and, in `min_rc`, the exact minimum reduced cost over its whole column space. The master starts from
/// Proposition 7's crash basis when the initial columns hold it (closed-form inverse) and prices with a structured
/// \f$A^T y\f$ (prefix sums). The result is Optimal only when certified (exact pricing at the master's duals, or the
/// Lagrangian bound within options.gap_tolerance); otherwise IterationLimit, TimeLimit
/// (options.time_limit) or NumericalIssue, with `lower_bound` and `gap` either way.
///
/// With `penalty` > 0 the master also holds 2m artificial columns \f$\pm e_r\f$ of that cost, so it
/// is feasible from the start even when the initial columns are not; a final solution that
/// still uses them is reported as SolveStatus::Infeasible (exact when `penalty` exceeds the
/// largest dual of the LP, which holds for any reasonable output set since costs are O(1)).
/// `warm_duals` (master rows, or empty): near-optimal duals of the full LP (an interior point's,
/// master_duals()); priced first, they start the certificate and the smoothing center
/// (optim::ColumnGenerationOptions::warm_duals).
/// `crash`: a caller's crash basis (StaircaseCrash), tried before Proposition 7's; its columns
/// must be among `initial`. Ignored (Proposition 7's basis, or phase 1, instead) when a column
/// is missing or the simplex rejects the basis.
/// `early`, `min_ratio`: as for run_staircase_master().
template <typename LossAt, typename Price, typename MinRatio = NoMinRatio>
StaircaseMaster solve_staircase_master(const UnbiasedProblem& P, std::vector<StaircaseColumn> initial, LossAt&& loss_of,
                                       Price&& price, const UnbiasedOptions& options, double penalty = 0,
                                       const Eigen::VectorXd& warm_duals = {}, const StaircaseCrash& crash = {},
                                       const StaircaseEarlyStop& early = {}, MinRatio&& min_ratio = {}) {
  StaircaseMaster S;
  const Index m = P.num_rows();
  const Index artificial = penalty > 0 ? 2 * m : 0;
  std::vector<StaircaseColumn> fresh;
  for (auto& col : initial)
    if (S.seen.emplace(col.output, col.pattern).second) fresh.push_back(std::move(col));
  optim::LinearProgram lp = empty_master(P);
  {
    Eigen::MatrixXd A;
    Eigen::VectorXd c;
    staircase_block(P, fresh, loss_of, A, c);
    lp.A = Eigen::MatrixXd::Zero(m, artificial + A.cols());
    lp.c.resize(artificial + A.cols());
    for (Index r = 0; r < artificial / 2; ++r) {
      lp.A(r, 2 * r) = 1;
      lp.A(r, 2 * r + 1) = -1;
    }
    lp.c.head(artificial).setConstant(penalty);
    lp.A.rightCols(A.cols()) = A;
    lp.c.tail(A.cols()) = c;
  }
  S.columns = std::move(fresh);
  StaircaseProduct product(P, artificial);
  for (const auto& col : S.columns) product.describe(col);
  optim::SimplexOptions simplex_options = options.simplex;
  simplex_options.compute_reduced_costs = false;  // the pricing below works from the duals
  optim::RevisedSimplex master(std::move(lp), simplex_options);
  master.set_transpose_product(
      [&product](const Eigen::VectorXd& y, Eigen::VectorXd& out) { product.multiply(y, out); });
  {
    // Crash basis (Proposition 7): when the initial columns hold the prefixes of length
    // 0..k-1 at the lowest output and the empty pattern and the suffixes of length 1..k-1 at
    // the highest, those 2k columns are a basis whose weights are the two-point mechanism's
    // decomposition, non-negative whenever the two outputs bracket the two-label dbRR interval
    // (proof of Prop. 7). Starting
    // phase 2 there skips phase 1's >= 2k pivots; if the weights are negative (not bracketed)
    // the simplex rejects the basis and runs phase 1 as before.
    const Index k = P.num_labels();
    bool crashed = false;
    if (Index(crash.columns.size()) == m) {
      std::map<std::pair<double, std::vector<std::uint8_t>>, Index> where;
      for (std::size_t j = 0; j < S.columns.size(); ++j)
        where.emplace(std::make_pair(S.columns[j].output, S.columns[j].pattern), artificial + Index(j));
      std::vector<Index> basis;
      for (const auto& col : crash.columns) {
        const auto it = where.find({col.output, col.pattern});
        if (it == where.end()) break;
        basis.push_back(it->second);
      }
      std::vector<Index> sorted = basis;
      std::sort(sorted.begin(), sorted.end());
      if (Index(basis.size()) == m && std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end())
        crashed = master.set_basis(basis, crash.inverse);
    }
    if (!crashed && !P.bounded() && !S.columns.empty()) {
      double lo = S.columns.front().output, hi = lo;
      for (const auto& col : S.columns) {
        lo = std::min(lo, col.output);
        hi = std::max(hi, col.output);
      }
      std::vector<Index> at_lo(std::size_t(k), -1), at_hi(std::size_t(k), -1);
      for (std::size_t j = 0; j < S.columns.size(); ++j) {
        const StaircaseColumn& col = S.columns[j];
        if (col.output != lo && col.output != hi) continue;
        // len = number of leading (prefix) or trailing (suffix) ones; the pattern must be
        // exactly that prefix or suffix.
        Index ones = 0, lead = 0, trail = 0;
        for (Index i = 0; i < k; ++i) ones += col.pattern[std::size_t(i)];
        while (lead < k && col.pattern[std::size_t(lead)]) ++lead;
        while (trail < k && col.pattern[std::size_t(k - 1 - trail)]) ++trail;
        const Index column = artificial + Index(j);
        if (col.output == lo && ones == lead && lead < k) at_lo[std::size_t(lead)] = column;
        if (col.output == hi && hi > lo && ones == trail && trail < k) at_hi[std::size_t(trail)] = column;
      }
      std::vector<Index> basis;
      for (Index len = 0; len < k; ++len) basis.push_back(at_lo[std::size_t(len)]);
      for (Index len = 0; len < k; ++len) basis.push_back(at_hi[std::size_t(len)]);
      if (std::find(basis.begin(), basis.end(), Index(-1)) == basis.end()) {
        // The basis is [S_lo, S_hi; lo S_lo, hi S_hi] = [I, I; lo I, hi I] diag(S_lo, S_hi) with
        // S_lo, S_hi the k x k prefix and suffix staircase matrices, so its inverse is
        // diag(S_lo^-1, S_hi^-1) [hi I, -I; -lo I, I] / (hi - lo): two k x k inverses, an
        // eighth of the O((2k)^3) factorization each (the simplex checks it before use).
        // S_hi is S_lo with its rows reversed, so its inverse is S_lo^-1 with its columns reversed.
        const Eigen::MatrixXd inv_lo = prefix_staircase_inverse(k, P.low);
        const Eigen::MatrixXd inv_hi = inv_lo.rowwise().reverse();
        Eigen::MatrixXd inverse(2 * k, 2 * k);
        inverse << hi * inv_lo, -inv_lo, -lo * inv_hi, inv_hi;
        inverse /= hi - lo;
        master.set_basis(basis, std::move(inverse));
      }
    }
  }
  run_staircase_master(P, master, product, artificial, S, loss_of, price, options, warm_duals, early,
                       std::forward<MinRatio>(min_ratio));
  return S;
}

}  // namespace labeldp::detail
