/// \file
/// The optimal eps-DP mechanism onto a finite output set: LP (2) of Ghazi et al. (ICLR 2023,
/// Section 3 and Appendix A), solved by column generation over staircase columns
/// (shared/ALGORITHMS.md, Section 2) with the library's own simplex.
#pragma once

#include <algorithm>
#include <cmath>
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

  Index num_labels() const { return m_loss.rows(); }
  Index num_outputs() const { return m_loss.cols(); }
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

  const Eigen::MatrixXd& weighted_loss() const { return m_loss; }

 private:
  Eigen::MatrixXd m_loss;
  double m_e;
};

}  // namespace detail

/// Options of optimal_mechanism_lp() beyond the column generation's.
struct OptimalLPOptions {
  /// Round and simplex options of the column generation.
  optim::ColumnGenerationOptions column_generation{};
  /// At most this many generated columns per round (the outputs with the most negative
  /// reduced costs); 0 means one per output with a negative reduced cost.
  Index max_columns_per_round = 0;
  /// Staircase columns with a master value below this (relative to the largest) are dropped
  /// from the returned mechanism before its rows are renormalized (roundoff cleaning).
  double drop_tolerance = 1e-14;
};

/// The eps-DP mechanism from the prior's values to the finite output set O with the least
/// expected noisy-label loss \f$\sum_y p_y \sum_{o \in O} M[y][o]\,\ell(o, y)\f$ among ALL eps-DP
/// mechanisms into O: LP (2) of Ghazi et al. (2023) (Appendix A), whose variables are
/// \f$M[y][o] \ge 0\f$ with rows summing to 1 and \f$M[y][o] \le e^\varepsilon M[y'][o]\f$.
///
/// Solved exactly (to simplex tolerances) without the \f$k(k-1)|O|\f$ pairwise rows: every
/// feasible column \f$M[\cdot][o]\f$ is a non-negative combination of staircase vectors (entries
/// 1 or \f$e^\varepsilon\f$), so the LP becomes k equality rows over (pattern, output) columns,
/// priced in O(k) per output (detail::StaircasePricer). The master starts from, at every
/// output, the constant column and the pattern of the labels nearest to it (the
/// RR-on-Bins-like columns of Theorem 5's proof), and grows by column generation until no
/// column has a negative reduced cost: the final duals then certify optimality over all
/// mechanisms into O.
///
/// The returned mechanism lists only outputs with positive probability; its entries are
/// non-negative combinations of staircase vectors, so every column of it is eps-DP up to
/// roundoff (audit_epsilon() <= eps (1 + 1e-12) is tested), and its rows are renormalized to
/// sum to 1.
///
/// \tparam Scalar label type (computations in double).
/// \tparam Loss a NoisyLabelLoss.
/// \param prior the label prior (values y, probabilities p).
/// \param eps privacy parameter, finite and > 0.
/// \param outputs the finite output set O (any order; duplicates ignored), finite, non-empty;
///        the loss must be finite at every (output, label) pair.
/// \param loss the loss \f$\ell(\hat y, y)\f$.
/// \param options column-generation options.
/// \return status, mechanism, expected loss, rounds, columns, iterations.
/// \throws std::invalid_argument for a bad eps, an empty or non-finite output set, a label
///         outside the loss's domain, or an infinite loss value.
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
  if (options.max_columns_per_round < 0)
    detail::fail_parameter("max_columns_per_round", "must be >= 0", double(options.max_columns_per_round));
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

  // Initial master: at every output the constant column (always feasible: M[y][o] = 1 is a
  // 0-DP mechanism) and the pattern of the labels whose nearest output it is.
  std::vector<Index> nearest(static_cast<std::size_t>(k));
  for (Index y = 0; y < k; ++y) {
    const Scalar v = prior.value(y);
    auto it = std::lower_bound(sorted.begin(), sorted.end(), v);
    Index j = Index(it - sorted.begin());
    if (j == n || (j > 0 && std::abs(double(v - sorted[std::size_t(j - 1)])) <= std::abs(double(sorted[std::size_t(j)] - v)))) --j;
    nearest[std::size_t(y)] = j;
  }
  std::vector<Index> col_output;
  std::vector<char> has_nearest(static_cast<std::size_t>(n), 0);
  for (Index y = 0; y < k; ++y) has_nearest[std::size_t(nearest[std::size_t(y)])] = 1;
  Index initial = n;
  for (Index j = 0; j < n; ++j) initial += has_nearest[std::size_t(j)];
  optim::LinearProgram lp;
  lp.A.resize(k, initial);
  lp.c.resize(initial);
  lp.b = Eigen::VectorXd::Ones(k);
  lp.row_types.assign(std::size_t(k), optim::RowType::Equal);
  Index t = 0;
  for (Index j = 0; j < n; ++j) {
    double cost;
    pricer.column(j, [](Index) { return false; }, lp.A.col(t), cost);
    lp.c[t++] = cost;
    col_output.push_back(j);
    if (has_nearest[std::size_t(j)]) {
      pricer.column(j, [&](Index y) { return nearest[std::size_t(y)] == j; }, lp.A.col(t), cost);
      lp.c[t++] = cost;
      col_output.push_back(j);
    }
  }

  optim::RevisedSimplex master(std::move(lp), options.column_generation.simplex);
  const Index cap = options.max_columns_per_round;
  auto pricing = [&](const Eigen::VectorXd& duals) {
    const Eigen::VectorXd rc = pricer.best_reduced_costs(duals);
    const double tol = master.options().dual_feasibility_tolerance *
                       std::max(1.0, master.problem().c.cwiseAbs().maxCoeff()) * 2 * std::max(1.0, e_eps * std::sqrt(double(k)));
    std::vector<Index> chosen;
    for (Index j = 0; j < n; ++j)
      if (rc[j] < -tol) chosen.push_back(j);
    if (cap > 0 && Index(chosen.size()) > cap) {
      std::partial_sort(chosen.begin(), chosen.begin() + cap, chosen.end(), [&](Index a, Index b) { return rc[a] < rc[b]; });
      chosen.resize(std::size_t(cap));
    }
    optim::PricedColumns cols;
    cols.A.resize(k, Index(chosen.size()));
    cols.c.resize(Index(chosen.size()));
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      pricer.best_column(chosen[i], duals, cols.A.col(Index(i)), cols.c[Index(i)]);
      col_output.push_back(chosen[i]);
    }
    return cols;
  };
  // Columns filtered out by solve_by_column_generation() would desynchronize col_output; the
  // pricer's threshold is twice the driver's filter bound (column norms are at most
  // e^eps sqrt(k)), so every column is kept; a mismatch is still checked below.
  const optim::ColumnGenerationResult cg = optim::solve_by_column_generation(master, pricing, options.column_generation);

  OptimalLPResult<Scalar> result;
  result.status = cg.master.status;
  result.rounds = cg.rounds;
  result.columns = master.num_columns();
  result.iterations = cg.master.iterations;
  if (result.status != optim::SolveStatus::Optimal) return result;
  if (Index(col_output.size()) != master.num_columns()) {
    result.status = optim::SolveStatus::NumericalIssue;
    return result;
  }

  // Assemble M[y][o] = sum of the staircase columns at o, drop roundoff-level columns, and
  // renormalize rows (sums are 1 up to the simplex's feasibility tolerance).
  const Eigen::VectorXd& x = cg.master.x;
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
  for (Index y = 0; y < k; ++y) {
    // Kahan-free is fine here: at most n terms of similar magnitude.
    const Scalar s = P.row(y).sum();
    P.row(y) /= s;
  }
  result.mechanism = FiniteMechanism<Scalar>(prior.values(), std::move(out), std::move(P));
  result.expected_loss = result.mechanism.expected_loss(prior, loss);
  return result;
}

}  // namespace labeldp
