/// \file
/// The staircase pricing oracle of the optimal-mechanism LP (Ghazi et al. 2023, LP (2)) and the
/// master form it prices for optimal_mechanism_lp(): costs shifted by the non-private loss and
/// scaled by an estimate of the optimum, columns 0/1 patterns with a mass row.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/optim/column_generation.hpp"

namespace labeldp::detail {

/// The staircase pricing oracle of LP (2) of Ghazi et al. (2023) in the well-conditioned master
/// form used by optimal_mechanism_lp().
///
/// A staircase column (T, o) of LP (2) has entries \f$1 + r\,\chi_T(y)\f$, \f$r = e^\varepsilon - 1\f$
/// (the extreme rays of the eps-DP cone \f$\{v \ge 0 : v_y \le e^\varepsilon v_{y'}\}\f$,
/// Kairouz-Oh-Viswanath 2016), and cost \f$\sum_y (1 + r\chi_T(y))\, w_{y,o}\f$ with
/// \f$w_{y,o} = p_y \ell(o, y)\f$.
///
/// Costs. Every feasible M has rows summing to 1, so subtracting \f$m_y = \min_o w_{y,o}\f$
/// from row y of the costs lowers every feasible objective by exactly the non-private loss
/// \f$C = \sum_y m_y\f$. The master prices the excess costs \f$w'_{y,o} = w_{y,o} - m_y \ge 0\f$
/// (0 at each label's best output) in units of \f$s\f$, an estimate of the optimum
/// (cost_scale()). This is what keeps the master's duals meaningful at large eps: there the
/// optimal duals are \f$\pi_y = m_y + \delta_y\f$ with \f$\delta_y = O(e^{-\varepsilon})\f$, the
/// Lagrangian bound multiplies \f$w_{y,o} - \pi_y\f$ by r, and with unshifted costs the
/// roundoff of \f$m_y\f$ in \f$\pi_y\f$ (1e-16 of \f$m_y\f$), times \f$r = 5 \cdot 10^8\f$ at
/// eps = 20, exceeded the 1e-9 gap; and in units of the best constant mechanism's loss (up to
/// 100x the optimum at large eps) the simplex's absolute tolerances were coarser than the gap.
/// Shifted, the duals carry \f$\delta\f$ itself, and the tolerances are relative to the optimum.
///
/// Rows. At small eps all columns are within r of the all-ones vector, so every basis of the k
/// rows \f$\sum_c z_c a_c = 1\f$ is ill-conditioned (condition ~ k / r). The master therefore
/// carries the total mass \f$S = \sum_c z_c\f$ as a variable (column 0): with \f$\gamma = \max(1, r)\f$
/// and master variables \f$x_c = \gamma z_c\f$, label row y is \f$\sum_c x_c \chi_{T_c}(y) +
/// (\gamma / r) S = \gamma / r\f$ and row k is \f$\sum_c x_c / \gamma - S = 0\f$. A column is
/// then 1 on T, 0 elsewhere and \f$1/\gamma\f$ in the mass row, with cost
/// \f$(W'_o + r \sum_{y \in T} w'_{y,o}) / (\gamma s)\f$, \f$W'_o = \sum_y w'_{y,o}\f$: 0/1 patterns
/// whose bases are as well conditioned as the label sets they encode, at any eps.
///
/// Pricing. With master duals \f$(\rho, \sigma)\f$ the reduced cost of (T, o) is
/// \f$(W'_o / s - \sigma + \sum_{y \in T} (r w'_{y,o} / s - \gamma \rho_y)) / \gamma\f$, minimized
/// over T by taking the labels with a negative term: O(k) per output, exact over all
/// \f$2^k |O|\f$ columns. The original LP's duals are \f$\pi = m + s (\gamma / r) \rho\f$.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicStaircaseOracle {
 public:
  /// \param weighted_loss k x |O| matrix \f$w_{y,o} = p_y \ell(o, y)\f$ (finite).
  /// \param eps privacy parameter (> 0).
  /// \param scale the cost unit s (> 0, finite): an estimate of the LP optimum; non-positive
  ///        or non-finite values select default_scale().
  BasicStaircaseOracle(Eigen::MatrixXd weighted_loss, double eps, double scale = 0)
      : m_loss(std::move(weighted_loss)), m_r(std::expm1(eps)), m_gamma(std::max(1.0, m_r)) {
    const Index k = m_loss.rows();
    m_shift = k && m_loss.cols() ? Eigen::VectorXd(m_loss.rowwise().minCoeff()) : Eigen::VectorXd::Zero(k);
    m_excess = m_loss.colwise() - m_shift;
    m_nonprivate = m_shift.sum();
    m_excess_total = m_excess.colwise().sum().transpose();
    set_cost_scale(scale > 0 && std::isfinite(scale) ? scale : default_scale(eps));
  }

  /// Sets the cost unit s (> 0 and finite; otherwise ignored), e.g. to an interior point's
  /// estimate of the optimum once known. Columns built before keep their old costs. s is raised
  /// to at least \f$r \max(1, \max w') 10^{-300}\f$ so that the scaled costs \f$(r / s) w'\f$ stay
  /// finite: with C = 0 the optimum is about \f$e^{-\varepsilon}\f$, and \f$r / s\f$ would
  /// overflow from eps ~ 350 (NaN costs at eps 600 - 700).
  void set_cost_scale(double scale) {
    if (!(scale > 0 && std::isfinite(scale))) return;
    const double max_excess = m_excess.size() ? m_excess.maxCoeff() : 0.0;
    scale = std::max(scale, m_r * std::max(1.0, max_excess) * 1e-300);
    if (!std::isfinite(scale)) return;
    m_cost_scale = scale;
    m_total = m_excess_total / m_cost_scale;
    m_scaled = (m_r / m_cost_scale) * m_excess;
  }

  /// A scale from closed forms: the least loss of two feasible mechanisms, the best constant
  /// one (\f$C + \min_o W'_o\f$) and randomized response onto each label's best output
  /// (probability \f$e^\varepsilon / (e^\varepsilon + |O| - 1)\f$ there, \f$1 / (e^\varepsilon +
  /// |O| - 1)\f$ elsewhere: loss \f$C + \sum_o W'_o / (e^\varepsilon + |O| - 1)\f$); both are upper
  /// bounds on the optimum, the second within a small factor of it at large eps. 1 when both
  /// are 0 (then every mechanism has loss 0).
  double default_scale(double eps) const {
    if (m_excess_total.size() == 0) return 1.0;
    const double n = double(m_excess_total.size());
    const double rr = m_excess_total.sum() / (std::exp(std::min(eps, 700.0)) + n - 1);
    const double u = m_nonprivate + std::min(m_excess_total.minCoeff(), rr);
    return u > 0 && std::isfinite(u) ? u : 1.0;
  }

  /// Number of labels k.
  Index num_labels() const { return m_loss.rows(); }
  /// Number of outputs |O|.
  Index num_outputs() const { return m_loss.cols(); }
  /// Master rows: k label rows and the mass row.
  Index num_rows() const { return num_labels() + 1; }
  /// \f$r = e^\varepsilon - 1\f$.
  double r() const { return m_r; }
  /// \f$\gamma = \max(1, r)\f$.
  double gamma() const { return m_gamma; }
  /// The master's cost unit s (an estimate of the optimum).
  double cost_scale() const { return m_cost_scale; }
  /// The non-private loss \f$C = \sum_y \min_o w_{y,o}\f$: the full LP's objective is
  /// \f$C + s\f$ times the master's (objective_offset() in master units).
  double nonprivate_loss() const { return m_nonprivate; }
  /// \f$C / s\f$: the constant that turns master objectives into the LP's (in units of s).
  double objective_offset() const { return m_nonprivate / m_cost_scale; }
  /// \f$\gamma / r\f$: the mass variable's entry in every label row, and every label row's
  /// right-hand side.
  double mass_coefficient() const { return m_gamma / m_r; }

  /// The least cost of a staircase column per unit of master weight, \f$\min_o W'_o / (\gamma
  /// s)\f$ (ColumnGenerationOptions::min_column_cost; the mass variable costs 0).
  double min_column_cost() const { return m_total.size() ? m_total.minCoeff() / m_gamma : 0.0; }
  /// \f$\kappa\f$ of the Lagrangian bound for a master whose objective z >= 0 is an upper bound on
  /// the optimum: \f$\sum_c x_c = \gamma S \le \gamma\f$, and an optimal solution has
  /// \f$\sum_c x_c \le z / \text{min\_column\_cost()}\f$.
  double column_sum_bound(double z) const {
    const double lambda = min_column_cost();
    return lambda > 0 && z >= 0 ? std::min(m_gamma, z / lambda) : m_gamma;
  }

  /// The master column of pattern T (`in_t(y)` true for y in T) at output j, and its cost.
  template <typename Mask>
  void column(Index j, const Mask& in_t, Eigen::Ref<Eigen::VectorXd> a, double& cost) const {
    double inside = 0;
    for (Index y = 0; y < num_labels(); ++y) {
      const bool in = in_t(y);
      a[y] = in ? 1.0 : 0.0;
      if (in) inside += m_scaled(y, j);
    }
    cost = (m_total[j] + inside) / m_gamma;
    a[num_labels()] = 1.0 / m_gamma;
  }

  /// The original LP's row duals \f$\pi = m + s (\gamma / r) \rho\f$ from master duals
  /// \f$(\rho, \sigma)\f$.
  Eigen::VectorXd label_duals(const Eigen::VectorXd& y) const {
    return m_shift + (m_cost_scale * mass_coefficient()) * y.head(num_labels());
  }
  /// Master duals of the shifted LP's duals \f$\pi' = \pi - m\f$ (costs \f$w'\f$; inverse of
  /// label_duals() up to the shift), with \f$\sigma\f$ making the mass variable's reduced cost 0.
  Eigen::VectorXd master_duals_of_excess(const Eigen::VectorXd& pi_excess) const {
    Eigen::VectorXd y(num_rows());
    y.head(num_labels()) = pi_excess / (m_cost_scale * mass_coefficient());
    y[num_labels()] = pi_excess.sum() / m_cost_scale;
    return y;
  }

  /// Exact pricing at master duals y = \f$(\rho, \sigma)\f$: for every output, the reduced cost
  /// of its best pattern (O(k |O|) in total).
  Eigen::VectorXd reduced_costs(const Eigen::VectorXd& y) const {
    const Index k = num_labels();
    const Eigen::VectorXd g = m_gamma * y.head(k);
    return (m_total.array() - y[k] + ((m_scaled.colwise() - g).cwiseMin(0.0)).colwise().sum().transpose().array()) /
           m_gamma;
  }

  /// The pricing oracle (optim::PricingOracle): the best column of every output whose reduced
  /// cost at y is negative, and as `min_reduced_cost` the minimum over all staircase columns
  /// plus the mass variable's reduced cost \f$\sigma - (\gamma / r) \sum_y \rho_y\f$ when that is
  /// negative. The engine's Lagrangian bound \f$b^T y + \gamma \min(0, \mu)\f$ is then valid,
  /// because every feasible point has \f$\sum_c x_c = \gamma S \le \gamma\f$ (each original
  /// column has entries >= 1 in rows summing to 1).
  optim::PricedColumns operator()(const Eigen::VectorXd& y) {
    const Index k = num_labels(), n = num_outputs();
    const Eigen::VectorXd rc = reduced_costs(y);
    const double rc_mass = y[k] - mass_coefficient() * y.head(k).sum();
    m_last.clear();
    for (Index j = 0; j < n; ++j)
      if (rc[j] < 0) m_last.push_back(j);
    optim::PricedColumns out;
    out.A.resize(num_rows(), Index(m_last.size()));
    out.c.resize(Index(m_last.size()));
    const Eigen::VectorXd g = m_gamma * y.head(k);
    for (std::size_t t = 0; t < m_last.size(); ++t) {
      const Index j = m_last[t];
      column(
          j, [&](Index l) { return m_scaled(l, j) - g[l] < 0; }, out.A.col(Index(t)), out.c[Index(t)]);
    }
    const double mu = n > 0 ? rc.minCoeff() : 0.0;
    out.min_reduced_cost = rc_mass < 0 ? std::min(mu, 0.0) + rc_mass / m_gamma : mu;
    return out;
  }

  /// The k x |O| matrix \f$w_{y,o}\f$.
  const Eigen::MatrixXd& loss() const { return m_loss; }
  /// The k x |O| matrix of excess costs \f$w'_{y,o} = w_{y,o} - m_y\f$.
  const Eigen::MatrixXd& excess_loss() const { return m_excess; }
  /// The k x |O| matrix \f$r\,w'_{y,o} / s\f$.
  const Eigen::MatrixXd& scaled_loss() const { return m_scaled; }
  /// \f$W'_o / s\f$ per output.
  const Eigen::VectorXd& total_loss() const { return m_total; }

  /// Outputs of the columns returned by the last call of operator() (in order).
  const std::vector<Index>& last_outputs() const { return m_last; }

 private:
  Eigen::MatrixXd m_loss;          // w_{y,o}
  Eigen::MatrixXd m_excess;        // w'_{y,o} = w_{y,o} - m_y
  Eigen::MatrixXd m_scaled;        // r w'_{y,o} / s
  Eigen::VectorXd m_shift;         // m_y
  Eigen::VectorXd m_excess_total;  // W'_o
  Eigen::VectorXd m_total;         // W'_o / s
  double m_r, m_gamma, m_cost_scale = 1, m_nonprivate = 0;
  std::vector<Index> m_last;
};

/// StaircaseOracle: BasicStaircaseOracle<> (see there).
using StaircaseOracle = BasicStaircaseOracle<>;

}  // namespace labeldp::detail
