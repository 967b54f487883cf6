/// \file
/// The optimal eps-DP mechanism onto a finite output set: LP (2) of Ghazi et al. (ICLR 2023,
/// Section 3 and Appendix A), solved by column generation over staircase columns
/// (shared/ALGORITHMS.md, Section 2) with the library's own simplex.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/optim/column_generation.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp {

/// Result of optimal_mechanism_lp().
template <typename Scalar = double>
struct OptimalLPResult {
  /// Outcome of the column generation (Optimal when the pricing proved optimality).
  optim::SolveStatus status = optim::SolveStatus::NumericalIssue;
  /// The optimal mechanism from the prior's values to the outputs it uses with positive
  /// probability (valid when status is Optimal).
  FiniteMechanism<Scalar> mechanism;
  /// Its expected noisy-label loss \f$\sum_y p_y \sum_o M[y][o]\,\ell(o, y)\f$ (the LP optimum).
  Scalar expected_loss = 0;
  /// Pricing rounds of the column generation.
  Index rounds = 0;
  /// Staircase columns in the final master (initial + generated).
  Index columns = 0;
  /// Simplex pivots over all master solves.
  Index iterations = 0;
  /// Lower bound on the LP optimum certified by `duals` (Lagrangian bound, see
  /// optimal_mechanism_lp()); equals expected_loss up to the gap tolerance when Optimal.
  double dual_bound = 0;
  /// Row duals \f$\pi\f$ (one per label) that certify `dual_bound`.
  Eigen::VectorXd duals;
};

namespace detail {

/// The staircase column generator of the mechanism LP. A column is a pair (T, o): an output
/// o and a subset T of the labels; its entries are \f$e^\varepsilon\f$ for y in T and 1 otherwise
/// (the extreme rays of the eps-DP cone \f$\{v \ge 0 : v_y \le e^\varepsilon v_{y'}\}\f$,
/// Kairouz-Oh-Viswanath 2016), its cost \f$\sum_y v_y p_y \ell(o, y)\f$. The master has k
/// equality rows (each row of M sums to 1).
class StaircasePricer {
 public:
  /// \param weighted_loss k x n matrix \f$p_y \ell(o_j, y)\f$.
  /// \param e_eps \f$e^\varepsilon\f$.
  StaircasePricer(Eigen::MatrixXd weighted_loss, double e_eps) : m_loss(std::move(weighted_loss)), m_e(e_eps) {}

  /// Number of labels k (master rows).
  Index num_labels() const { return m_loss.rows(); }
  /// Number of outputs |O|.
  Index num_outputs() const { return m_loss.cols(); }
  /// \f$e^\varepsilon\f$.
  double e_eps() const { return m_e; }

  /// Column (T, o_j) given the membership of each label in T.
  template <typename Mask>
  void column(Index j, const Mask& in_t, Eigen::Ref<Eigen::VectorXd> a, double& cost) const {
    cost = 0;
    for (Index y = 0; y < num_labels(); ++y) {
      a[y] = in_t(y) ? m_e : 1.0;
      cost += a[y] * m_loss(y, j);
    }
  }

  /// Best pattern for every output under duals \f$\pi\f$: y joins T iff
  /// \f$g_y = p_y \ell(o, y) - \pi_y < 0\f$ (each label independently, since the reduced cost
  /// \f$\sum_y v_y g_y\f$ is separable), giving reduced cost \f$\sum_y \min(g_y, e^\varepsilon g_y)\f$.
  /// O(k) per output. Returns the reduced costs (n).
  Eigen::VectorXd best_reduced_costs(const Eigen::VectorXd& duals) const {
    Eigen::VectorXd rc(num_outputs());
    for (Index j = 0; j < num_outputs(); ++j) {
      double s = 0;
      for (Index y = 0; y < num_labels(); ++y) {
        const double g = m_loss(y, j) - duals[y];
        s += g < 0 ? m_e * g : g;
      }
      rc[j] = s;
    }
    return rc;
  }

  /// The best column at output j under `duals`.
  void best_column(Index j, const Eigen::VectorXd& duals, Eigen::Ref<Eigen::VectorXd> a, double& cost) const {
    column(j, [&](Index y) { return m_loss(y, j) - duals[y] < 0; }, a, cost);
  }

  /// The k x |O| matrix \f$p_y \ell(o_j, y)\f$.
  const Eigen::MatrixXd& weighted_loss() const { return m_loss; }

 private:
  Eigen::MatrixXd m_loss;
  double m_e;
};

}  // namespace detail

/// Options of optimal_mechanism_lp().
struct OptimalLPOptions {
  /// Round limit and the master's simplex options.
  optim::ColumnGenerationOptions column_generation{};
  /// At most this many generated columns per round (those with the most negative reduced
  /// costs at the smoothed duals); 0 means 2k.
  Index max_columns_per_round = 0;
  /// Wentges dual smoothing: columns are priced at \f$\alpha \pi_{center} + (1-\alpha)\pi\f$,
  /// where \f$\pi_{center}\f$ are the duals with the best Lagrangian bound so far. Damps the
  /// dual oscillation of plain column generation on this degenerate LP (0 disables).
  double smoothing = 0.7;
  /// Stop when the Lagrangian lower bound is within this relative gap of the master's optimum.
  double gap_tolerance = 1e-11;
  /// Staircase columns with a master value below this (relative to the largest) are dropped
  /// from the returned mechanism before its rows are renormalized (roundoff cleaning).
  double drop_tolerance = 1e-14;
};

/// The eps-DP mechanism from the prior's values to the finite output set O with the least
/// expected noisy-label loss \f$\sum_y p_y \sum_{o \in O} M[y][o]\,\ell(o, y)\f$ among ALL eps-DP
/// mechanisms into O: LP (2) of Ghazi et al. (2023) (Appendix A), whose variables are
/// \f$M[y][o] \ge 0\f$ with rows summing to 1 and \f$M[y][o] \le e^\varepsilon M[y'][o]\f$.
///
/// Solved without the \f$k(k-1)|O|\f$ pairwise rows: every feasible column \f$M[\cdot][o]\f$ is a
/// non-negative combination of staircase vectors (entries 1 or \f$e^\varepsilon\f$), so the LP
/// becomes k equality rows over (pattern, output) columns, priced exactly in O(k) per output
/// (detail::StaircasePricer).
///
/// Column generation: the master starts from the constant column at every output and, for
/// every interval of labels, the interval pattern at its best output (the columns of
/// RR-on-Bins, Algorithm 1, which by the proof of Theorem 5 already contain an optimal
/// solution; O(k^2 |O|) with prefix sums). Since that master is primal optimal but massively
/// degenerate, the remaining work is finding certifying duals: columns are priced at
/// Wentges-smoothed duals, and the loop stops when the Lagrangian bound
/// \f$\sum_y \pi_y + \min(0, \min_{T,o} \bar c_{T,o}(\pi))\f$ (valid because every column has
/// entries >= 1, so the master's variables sum to at most 1) reaches the master's optimum within
/// `gap_tolerance`, or when no column prices out. `dual_bound` and `duals` are that certificate.
///
/// The returned mechanism lists only outputs with positive probability; its columns are
/// non-negative combinations of staircase vectors, hence eps-DP up to roundoff
/// (audit_epsilon() <= eps (1 + 1e-12) is tested), and its rows are renormalized to sum to 1.
///
/// \tparam Scalar label type (computations in double).
/// \tparam Loss a NoisyLabelLoss.
/// \param prior the label prior (values y, probabilities p).
/// \param eps privacy parameter, finite and > 0.
/// \param outputs the finite output set O (any order; duplicates ignored), finite, non-empty;
///        the loss must be finite at every (output, label) pair.
/// \param loss the loss \f$\ell(\hat y, y)\f$.
/// \param options column-generation options.
/// \return status, mechanism, expected loss, certificate, rounds, columns, iterations.
/// \throws std::invalid_argument for a bad eps, an empty or non-finite output set, a label
///         outside the loss's domain, an infinite loss value, or a bad option.
///
/// \code{.cpp}
/// auto prior = labeldp::FinitePrior<>::from_probabilities({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
/// Eigen::VectorXd grid = Eigen::VectorXd::LinSpaced(201, 0.0, 2.0);
/// auto r = labeldp::optimal_mechanism_lp(prior, 0.5, grid);
/// if (r.status == labeldp::optim::SolveStatus::Optimal) use(r.mechanism);
/// \endcode
template <typename Scalar = double, typename Loss = SquaredLoss<Scalar>>
  requires NoisyLabelLoss<Loss, Scalar>
OptimalLPResult<Scalar> optimal_mechanism_lp(const FinitePrior<Scalar>& prior, double eps, const Vector<Scalar>& outputs,
                                             const Loss& loss = Loss{}, const OptimalLPOptions& options = {}) {
  validate_epsilon(eps);
  validate_finite_nonnegative("drop_tolerance", options.drop_tolerance);
  validate_in_range("smoothing", options.smoothing, 0.0, 0.99);
  validate_finite_positive("gap_tolerance", options.gap_tolerance);
  if (options.max_columns_per_round < 0)
    detail::fail_parameter("max_columns_per_round", "must be >= 0", double(options.max_columns_per_round));
  if (options.column_generation.max_rounds < 0)
    detail::fail_parameter("max_rounds", "must be >= 0", double(options.column_generation.max_rounds));
  if (outputs.size() == 0) throw std::invalid_argument("'outputs' must not be empty, got 0 values");
  std::vector<Scalar> sorted(outputs.data(), outputs.data() + outputs.size());
  for (Scalar o : sorted)
    if (!std::isfinite(double(o))) detail::fail_parameter("outputs", "must be finite", double(o));
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const Index k = prior.size(), n = Index(sorted.size());
  for (Index y = 0; y < k; ++y) loss.validate_label(prior.value(y));

  Eigen::MatrixXd weighted(k, n);
  for (Index j = 0; j < n; ++j)
    for (Index y = 0; y < k; ++y) {
      const double l = double(loss(sorted[std::size_t(j)], prior.value(y)));
      if (!std::isfinite(l))
        throw std::invalid_argument("loss " + loss.name() + " is not finite at output " +
                                    detail::format_number(double(sorted[std::size_t(j)])) + " for label " +
                                    detail::format_number(double(prior.value(y))));
      weighted(y, j) = double(prior.probability(y)) * l;
    }
  const double e_eps = std::exp(eps);
  detail::StaircasePricer pricer(weighted, e_eps);

  // Initial master. The cost of pattern [a, b] at output j is S_j + (e^eps - 1) (P_j[b+1] - P_j[a])
  // with P_j the prefix sums of p_y loss(o_j, y), so each interval's best output costs O(|O|).
  Eigen::MatrixXd prefix(k + 1, n);
  prefix.row(0).setZero();
  for (Index y = 0; y < k; ++y) prefix.row(y + 1) = prefix.row(y) + weighted.row(y);
  const Index initial = n + k * (k + 1) / 2;
  optim::LinearProgram lp;
  lp.A.resize(k, initial);
  lp.c.resize(initial);
  lp.b = Eigen::VectorXd::Ones(k);
  lp.row_types.assign(std::size_t(k), optim::RowType::Equal);
  std::vector<Index> col_output;
  col_output.reserve(std::size_t(initial));
  Index t = 0;
  for (Index j = 0; j < n; ++j) {
    pricer.column(j, [](Index) { return false; }, lp.A.col(t), lp.c[t]);
    ++t;
    col_output.push_back(j);
  }
  for (Index a = 0; a < k; ++a)
    for (Index b = a; b < k; ++b) {
      Index best_j = 0;
      double best = std::numeric_limits<double>::infinity();
      for (Index j = 0; j < n; ++j) {
        const double cost = prefix(k, j) + (e_eps - 1) * (prefix(b + 1, j) - prefix(a, j));
        if (cost < best) {
          best = cost;
          best_j = j;
        }
      }
      pricer.column(best_j, [&](Index y) { return y >= a && y <= b; }, lp.A.col(t), lp.c[t]);
      ++t;
      col_output.push_back(best_j);
    }

  optim::RevisedSimplex master(std::move(lp), options.column_generation.simplex);
  const Index cap = options.max_columns_per_round > 0 ? options.max_columns_per_round : 2 * k;
  const double alpha = options.smoothing;

  OptimalLPResult<Scalar> result;
  Eigen::VectorXd center;
  double center_bound = -std::numeric_limits<double>::infinity();
  optim::SimplexResult sol;
  Eigen::VectorXd a_col(k);
  Index stalled_rounds = 0;
  double last_gap = std::numeric_limits<double>::infinity();
  for (;;) {
    sol = master.solve();
    result.iterations += sol.iterations;
    if (sol.status != optim::SolveStatus::Optimal) {
      result.status = sol.status;
      result.columns = master.num_columns();
      return result;
    }
    const Eigen::VectorXd& pi = sol.duals;
    const double ub = sol.objective;
    // Lagrangian bound at the master duals (sum of master variables <= 1, see above).
    const Eigen::VectorXd rc_master = pricer.best_reduced_costs(pi);
    const double bound_master = pi.sum() + std::min(0.0, rc_master.minCoeff());
    if (bound_master > center_bound) {
      center_bound = bound_master;
      center = pi;
    }
    const Eigen::VectorXd sep = alpha > 0 ? Eigen::VectorXd(alpha * center + (1 - alpha) * pi) : pi;
    const Eigen::VectorXd rc_sep = alpha > 0 ? pricer.best_reduced_costs(sep) : rc_master;
    if (alpha > 0) {
      const double bound_sep = sep.sum() + std::min(0.0, rc_sep.minCoeff());
      if (bound_sep > center_bound) {
        center_bound = bound_sep;
        center = sep;
      }
    }
    const double scale = std::max(1.0, std::abs(ub));
    if (ub - center_bound <= options.gap_tolerance * scale) {
      result.status = optim::SolveStatus::Optimal;
      break;
    }
    if (result.rounds >= options.column_generation.max_rounds) {
      result.status = optim::SolveStatus::IterationLimit;
      result.columns = master.num_columns();
      return result;
    }
    ++result.rounds;
    // Candidates: the outputs ordered by reduced cost at the smoothed duals; a column enters
    // when it prices out at the master's own duals (else it could not pivot in), with the
    // master duals' best pattern as the fallback (no mis-pricing stall).
    const double tol = 1e-12 * scale;
    std::vector<Index> order(static_cast<std::size_t>(n));
    for (Index j = 0; j < n; ++j) order[std::size_t(j)] = j;
    const Index consider = std::min<Index>(n, cap);
    std::partial_sort(order.begin(), order.begin() + consider, order.end(),
                      [&](Index x, Index z) { return std::min(rc_sep[x], rc_master[x]) < std::min(rc_sep[z], rc_master[z]); });
    Eigen::MatrixXd A_new(k, consider);
    Eigen::VectorXd c_new(consider);
    Index added = 0;
    for (Index i = 0; i < consider; ++i) {
      const Index j = order[std::size_t(i)];
      double cost;
      pricer.best_column(j, sep, a_col, cost);
      if (!(cost - a_col.dot(pi) < -tol)) {
        if (!(rc_master[j] < -tol)) continue;
        pricer.best_column(j, pi, a_col, cost);
      }
      A_new.col(added) = a_col;
      c_new[added] = cost;
      col_output.push_back(j);
      ++added;
    }
    if (added == 0) {
      // No column prices out at the master duals: they are dual feasible for the full LP.
      center_bound = std::max(center_bound, pi.sum());
      center = pi;
      result.status = optim::SolveStatus::Optimal;
      break;
    }
    // Columns whose reduced cost is below the master's own dual tolerance are not pivoted in;
    // then rounds repeat without progress. Stop after a few such rounds: optimal if the gap is
    // within the master's tolerance, else a numerical failure.
    if (sol.iterations == 0 && ub - center_bound >= last_gap) {
      if (++stalled_rounds >= 3) {
        const double master_tol = master.options().dual_feasibility_tolerance;
        result.status = ub - center_bound <= master_tol * scale ? optim::SolveStatus::Optimal
                                                                : optim::SolveStatus::NumericalIssue;
        break;
      }
    } else {
      stalled_rounds = 0;
    }
    last_gap = ub - center_bound;
    master.add_columns(A_new.leftCols(added), c_new.head(added));
  }
  result.columns = master.num_columns();
  if (result.status != optim::SolveStatus::Optimal) return result;
  result.dual_bound = center_bound;
  result.duals = center;

  // Assemble M[y][o] = sum of the staircase columns at o, drop roundoff-level columns, and
  // renormalize rows (sums are 1 up to the simplex's feasibility tolerance).
  const Eigen::VectorXd& x = sol.x;
  const double xmax = x.size() ? x.maxCoeff() : 0.0;
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(k, n);
  const Eigen::MatrixXd& A = master.problem().A;
  for (Index c = 0; c < x.size(); ++c)
    if (x[c] > options.drop_tolerance * xmax) M.col(col_output[std::size_t(c)]) += x[c] * A.col(c);
  std::vector<Index> used;
  for (Index j = 0; j < n; ++j)
    if (M.col(j).maxCoeff() > 0) used.push_back(j);
  Vector<Scalar> out(Index(used.size()));
  Matrix<Scalar> P(k, Index(used.size()));
  for (std::size_t u = 0; u < used.size(); ++u) {
    out[Index(u)] = sorted[std::size_t(used[u])];
    for (Index y = 0; y < k; ++y) P(y, Index(u)) = Scalar(M(y, used[u]));
  }
  for (Index y = 0; y < k; ++y) P.row(y) /= P.row(y).sum();
  result.mechanism = FiniteMechanism<Scalar>(prior.values(), std::move(out), std::move(P));
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  return result;
}

}  // namespace labeldp
