/// \file
/// RevisedSimplex's pivoting: the iterations of one phase (Dantzig pricing scaled by column
/// norms, Harris two-pass ratio test, duals updated in O(m) per pivot, time limit) and, against
/// cycling, the ratio test under a random virtual perturbation (Wolfe 1963; Ryan and Osborne
/// 1988) with its generator. Member functions of the class in optim/simplex.hpp.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "labeldp/optim/simplex.hpp"

namespace labeldp::optim {

// Simplex iterations of one phase from the current (primal feasible) basis.
template <typename Deferred>
inline SolveStatus BasicRevisedSimplex<Deferred>::iterate(int phase, SimplexResult& result) {
  Index& iterations = result.iterations;
  const Index m = num_rows();
  const Index off = structural_offset();
  const double dual_tol = m_options.dual_feasibility_tolerance *
                          (phase == 1 ? 1.0 : std::max(1.0, m_lp.c.size() ? m_lp.c.cwiseAbs().maxCoeff() : 0.0));
  const double feas_tol = m_options.primal_feasibility_tolerance * m_b_scale;
  Eigen::VectorXd y(m), w(m), d_struct;
  Index degenerate_run = 0;
  Index pivots_until_clock = 0;  // the clock is read before this phase's first pivot
  m_perturbed = false;
  bool confirm_dense = false;
  // The duals are computed by a BTRAN after every (re)factorization check and otherwise
  // updated in O(m) after each pivot: y += (d_q / w_r) * (row r of the old B^{-1}).
  bool duals_valid = false;
  Eigen::VectorXd rho(m);
  for (;;) {
    if (m_factor.num_updates() >= m_checked_at + m_options.refactorization_interval) {
      if (!check_or_refactor()) return SolveStatus::NumericalIssue;
      duals_valid = false;
    }
    if (!duals_valid || confirm_dense) {
      // Duals: B^T y = c_B.
      for (Index i = 0; i < m; ++i) y[i] = cost(m_basis[std::size_t(i)], phase);
      m_factor.btran(y);
      duals_valid = true;
    }
    if (!y.allFinite()) return SolveStatus::NumericalIssue;

    // Pricing: the most negative reduced cost per unit column norm (Dantzig, scaled).
    Index entering = -1;
    double best = 0, entering_d = 0;
    auto consider = [&](Index v, double d, double norm) {
      if (d >= -dual_tol) return;
      const double score = d / norm;
      if (score < best) {
        best = score;
        entering = v;
        entering_d = d;
      }
    };
    if (phase == 1) {
      for (Index v = 0; v < m; ++v)
        if (m_position[std::size_t(v)] < 0) consider(v, 1.0 - m_art_sign[v] * y[v], 1.0);
    }
    for (Index v = m; v < off; ++v) {
      if (m_position[std::size_t(v)] >= 0) continue;
      const std::size_t s = std::size_t(v - m);
      consider(v, -m_slack_sign[s] * y[m_slack_row[s]], 1.0);
    }
    // A structured product (set_transpose_product()) prices the columns; its "optimal" is
    // confirmed with the dense product, so that it can steer the path but never the result.
    const bool dense = !m_transpose_product || confirm_dense;
    confirm_dense = false;
    if (num_columns() > 0) {
      if (dense) {
        d_struct.noalias() = m_lp.A.transpose() * y;
      } else {
        d_struct.resize(num_columns());
        m_transpose_product(y, d_struct);
        if (d_struct.size() != num_columns()) return SolveStatus::NumericalIssue;
      }
      for (Index j = 0; j < num_columns(); ++j) {
        const Index v = off + j;
        if (m_position[std::size_t(v)] >= 0) continue;
        const double d = (phase == 1 ? 0.0 : m_lp.c[j]) - d_struct[j];
        consider(v, d, m_column_norms[j]);
      }
    }
    if (entering < 0) {
      if (dense) return SolveStatus::Optimal;
      confirm_dense = true;
      continue;
    }
    if (iterations >= m_options.max_iterations) return SolveStatus::IterationLimit;
    if (pivots_until_clock-- == 0) {
      if (time_is_up()) return SolveStatus::TimeLimit;
      pivots_until_clock = kPivotsPerClockRead - 1;
    }

    load_column(entering, w);
    // The entering column's reduced cost recomputed exactly (O(m)): it drives the dual
    // update, and a structured product's choice that does not truly improve is priced again
    // with the dense product, so that every pivot is one the dense rule could have made.
    const double d_exact = cost(entering, phase) - w.dot(y);
    if (!dense && !(d_exact < -dual_tol)) {
      confirm_dense = true;
      continue;
    }
    entering_d = d_exact;
    m_factor.ftran(w);
    if (!w.allFinite()) return SolveStatus::NumericalIssue;

    // Ratio test. A basic artificial in phase 2 sits at zero and may not move either way.
    const double piv = m_options.pivot_tolerance * std::max(1.0, w.cwiseAbs().maxCoeff());
    Index leave = -1;
    if (phase == 2) {
      double best_art = 0;
      for (Index i = 0; i < m; ++i)
        if (is_artificial(m_basis[std::size_t(i)]) && std::abs(w[i]) > piv && std::abs(w[i]) > best_art) {
          best_art = std::abs(w[i]);
          leave = i;
        }
    }
    double theta = 0;
    bool degenerate = leave >= 0;  // a basic artificial leaves at zero
    if (leave < 0) {
      // After a run of degenerate pivots: do rows at zero (within the feasibility tolerance)
      // block the step, i.e. is the vertex degenerate in the entering column's direction?
      // (Looked for only then: the data-dependent test costs branch mispredictions.)
      double largest_at_zero = 0;
      if (degenerate_run >= m_options.degenerate_pivots_before_perturbation)
        for (Index i = 0; i < m; ++i)
          if (w[i] > piv && m_xb[i] <= feas_tol) largest_at_zero = std::max(largest_at_zero, w[i]);
      if (largest_at_zero > 0) {
        leave = perturbed_ratio_test(w, feas_tol, piv, largest_at_zero, result);
        degenerate = true;
      } else {
        // Harris two-pass: the largest step allowed with the feasibility tolerance, then the
        // largest pivot among the rows that block within it (stability over exactness).
        double bound = std::numeric_limits<double>::infinity();
        for (Index i = 0; i < m; ++i)
          if (w[i] > piv) bound = std::min(bound, (m_xb[i] + feas_tol) / w[i]);
        double best_pivot = 0;
        for (Index i = 0; i < m; ++i)
          if (w[i] > piv && m_xb[i] / w[i] <= bound && w[i] > best_pivot) {
            best_pivot = w[i];
            leave = i;
          }
        if (leave < 0) {
          // No positive entry: the cost decreases without bound along the ray (phase 2),
          // which is impossible in phase 1 (the sum of artificials is bounded below by 0).
          return phase == 2 ? SolveStatus::Unbounded : SolveStatus::NumericalIssue;
        }
        degenerate = m_xb[leave] <= feas_tol;
        theta = std::max(m_xb[leave], 0.0) / w[leave];
        if (!degenerate && m_perturbed) {
          // Progress: the perturbation has served its purpose; the next degenerate vertex
          // is met by the Harris rule again (and perturbed afresh if it stalls there).
          m_perturbed = false;
          ++result.perturbation_removals;
        }
      }
    }

    // Update the basic solution and the basis. A degenerate pivot (the leaving variable at
    // zero within the tolerance) moves nothing: the entering variable comes in at zero.
    if (theta != 0) m_xb.noalias() -= theta * w;
    m_xb[leave] = theta;
    const Index old = m_basis[std::size_t(leave)];
    m_position[std::size_t(old)] = -1;
    m_basis[std::size_t(leave)] = entering;
    m_position[std::size_t(entering)] = leave;
    rho = m_factor.inverse_row(leave).transpose();
    y.noalias() += (entering_d / w[leave]) * rho;
    m_factor.update(leave, w);
    ++iterations;
    if (degenerate) {
      ++result.degenerate_pivots;
      ++degenerate_run;
    } else {
      degenerate_run = 0;
    }
  }
}

// The ratio test of a degenerate vertex under the virtual perturbation (Wolfe 1963, "A
// technique for resolving degeneracy in linear programming"; Ryan and Osborne 1988): every
// basic variable at zero gets a virtual value eps_i drawn uniformly from [1, 2], standing for
// an infinitesimal perturbation of b that the real values never see. The leaving row is the
// one of minimum eps_i / w_i among the blocking rows at zero (ties, of probability zero,
// to the largest pivot); eps is carried through the pivot like x_B (eps -= t w, the entering
// variable gets t), so that it stays the basic solution of the same perturbed right-hand
// side. The perturbed objective then falls by t |d_q| > 0 at every pivot, so no basis
// repeats while the perturbation stands: no cycle. Rows whose pivot is below 1e-7 of the
// largest blocking one do not block (they pass, their eps falls slightly, and one that falls
// to <= 0 is drawn afresh), so that the choice never costs the basis its conditioning.
// Returns the leaving row (a blocking row at zero exists).
template <typename Deferred>
inline Index BasicRevisedSimplex<Deferred>::perturbed_ratio_test(const Eigen::VectorXd& w, double feas_tol, double piv,
                                                                 double largest_at_zero, SimplexResult& result) {
  const Index m = num_rows();
  if (!m_perturbed) {
    m_eps.setZero(m);
    m_perturbed = true;
    ++result.perturbations;
  }
  // Rows at zero without a virtual value (newly at zero after a refactorization, or whose
  // value fell to zero) get one.
  for (Index i = 0; i < m; ++i)
    if (m_xb[i] <= feas_tol && !(m_eps[i] > kEpsFloor)) m_eps[i] = 1.0 + uniform01();
  const double pivot_floor = std::max(piv, kPerturbedPivotRatio * largest_at_zero);
  Index leave = -1;
  double min_ratio = std::numeric_limits<double>::infinity();
  for (Index i = 0; i < m; ++i) {
    if (!(w[i] >= pivot_floor && m_xb[i] <= feas_tol)) continue;
    const double ratio = m_eps[i] / w[i];
    const double tie = 1e-12 * min_ratio;
    if (leave < 0 || ratio < min_ratio - tie || (ratio <= min_ratio + tie && w[i] > w[leave])) {
      min_ratio = leave < 0 ? ratio : std::min(min_ratio, ratio);
      leave = i;
    }
  }
  const double t = m_eps[leave] / w[leave];
  m_eps.noalias() -= t * w;
  m_eps[leave] = t;
  ++result.perturbed_pivots;
  return leave;
}

// A uniform draw in [0, 1) (splitmix64; reseeded by every solve(), so solves repeat exactly).
template <typename Deferred>
inline double BasicRevisedSimplex<Deferred>::uniform01() {
  std::uint64_t z = (m_rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

}  // namespace labeldp::optim
