/// \file
/// Factorization of a simplex basis: an explicit dense inverse, updated in product form after
/// every basis change and recomputed from an LU with partial pivoting when the caller asks
/// (periodically, or when its residuals drift). Internal to RevisedSimplex.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <utility>
#include <vector>

namespace labeldp::optim::detail {

/// The inverse \f$B^{-1}\f$ of a square basis matrix, kept explicitly (Dantzig-Orchard-Hays
/// product form applied to a dense inverse rather than stored as an eta file).
///
/// Why explicit: the bases RevisedSimplex meets are small and dense (the unbiased-randomizer
/// master has 2k = 104 rows, every column dense), where FTRAN and BTRAN as one dense
/// matrix-vector product each run about twice as fast as two triangular solves plus an
/// ever-growing eta file, and the basis change is one rank-one update of the same cost. The
/// price is the refactorization (an LU and its inverse, about 3x an LU alone), so the caller
/// refactorizes only every few dozen updates or when the residuals say the inverse drifted.
///
/// The rank-one update is deferred: update() records \f$B^{-1} \leftarrow B^{-1} - u\,\rho^T\f$
/// and the next FTRAN applies it column by column in the same pass that forms the product
/// (a simplex pivot's FTRAN always follows the previous pivot's update). At 2k = 104 rows the
/// inverse (86 KB) does not fit in L1, and both operations are memory-bound: fused, the inverse
/// is streamed once per pivot instead of twice. BTRAN and inverse rows account for a pending
/// update in O(m) without applying it.
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
class BasicBasisFactorization {
 public:
  using Index = Eigen::Index;

  /// Factorizes `basis` afresh (drops every update). Returns false when the basis is
  /// numerically singular: the smallest pivot of the LU's U is below `singular_tolerance`
  /// times the largest.
  bool refactor(const Eigen::MatrixXd& basis, double singular_tolerance) {
    m_size = basis.rows();
    m_updates = 0;
    m_pending = false;
    if (m_size == 0) return true;
    if (refactor_diagonal(basis, singular_tolerance, m_inverse)) {
      m_scratch.resize(m_size);
      m_row.resize(m_size);
      return true;
    }
    m_lu.compute(basis);
    const Eigen::VectorXd diag = m_lu.matrixLU().diagonal().cwiseAbs();
    const double largest = diag.maxCoeff();
    const double smallest = diag.minCoeff();
    if (!(std::isfinite(largest) && largest > 0 && smallest > singular_tolerance * largest)) return false;
    m_inverse = m_lu.inverse();
    m_scratch.resize(m_size);
    m_row.resize(m_size);
    return m_inverse.allFinite();
  }

  /// A diagonal `basis` (the all-logical basis every cold simplex solve starts from: one signed
  /// unit column per row) is its own LU with no row exchange, and its inverse is
  /// \f$e_i / d_i\f$ column by column: `inverse` gets exactly what the O(m^3) LU and inverse
  /// compute (0.5 s at m = 1203, the bias-bounded crossover of k = 401 labels), in O(m^2).
  /// Returns false, leaving `inverse` alone, when `basis` is not diagonal or is singular by the
  /// test of refactor().
  static bool refactor_diagonal(const Eigen::MatrixXd& basis, double singular_tolerance, Eigen::MatrixXd& inverse) {
    const Index m = basis.rows();
    for (Index j = 0; j < m; ++j)
      for (Index i = 0; i < m; ++i)
        if (i != j && basis(i, j) != 0) return false;
    const Eigen::VectorXd diag = basis.diagonal().cwiseAbs();
    const double largest = diag.maxCoeff(), smallest = diag.minCoeff();
    if (!(std::isfinite(largest) && largest > 0 && smallest > singular_tolerance * largest)) return false;
    inverse.resize(m, m);
    for (Index j = 0; j < m; ++j)
      for (Index i = 0; i < m; ++i) inverse(i, j) = (i == j ? 1.0 : 0.0) / basis(i, i);
    return true;
  }

  /// Takes a basis inverse computed elsewhere (the caller has checked it), as refactor() would
  /// compute it: drops every update. Takes the matrix over (pass it with std::move()).
  void set_inverse(Eigen::MatrixXd inverse) {
    m_size = inverse.rows();
    m_updates = 0;
    m_pending = false;
    m_inverse = std::move(inverse);
    m_scratch.resize(m_size);
    m_row.resize(m_size);
  }

  /// Number of updates since the last refactorization.
  Index num_updates() const { return m_updates; }

  /// Solves \f$B x = v\f$ in place (FTRAN). Applies a pending update in the same pass.
  void ftran(Eigen::VectorXd& v) const {
    if (m_size == 0) return;
    if (!m_pending) {
      m_scratch.noalias() = m_inverse * v;
    } else {
      // Four columns per sweep, so that the accumulator is read and written once per four
      // columns (plain loops: the compiler vectorizes them).
      m_scratch.setZero();
      const Index n = m_size;
      double* acc = m_scratch.data();
      const double* u = m_u.data();
      Index j = 0;
      for (; j + 4 <= n; j += 4)
        update_and_accumulate(m_inverse.col(j).data(), m_inverse.col(j + 1).data(), m_inverse.col(j + 2).data(),
                              m_inverse.col(j + 3).data(), u, m_row.data() + j, v.data() + j, acc, n);
      for (; j < n; ++j) {
        auto column = m_inverse.col(j);
        column.noalias() -= m_row[j] * m_u;
        m_scratch.noalias() += v[j] * column;
      }
      m_pending = false;
    }
    v.swap(m_scratch);
  }

  /// Solves \f$B^T y = v\f$ in place (BTRAN).
  void btran(Eigen::VectorXd& v) const {
    if (m_size == 0) return;
    m_scratch.noalias() = m_inverse.transpose() * v;
    if (m_pending) m_scratch.noalias() -= m_u.dot(v) * m_row.transpose();
    v.swap(m_scratch);
  }

  /// Row r of \f$B^{-1}\f$, i.e. \f$B^{-T} e_r\f$ (a BTRAN of a unit vector, O(m) here).
  Eigen::RowVectorXd inverse_row(Index r) const {
    if (!m_pending) return m_inverse.row(r);
    return m_inverse.row(r) - m_u[r] * m_row;
  }

  /// Records the basis change "position r now holds the column whose FTRAN is w":
  /// \f$B_{new}^{-1} = E^{-1} B^{-1}\f$ with E the identity whose column r is w, i.e. row r is
  /// divided by \f$w_r\f$ and \f$w_i\f$ times the new row r is subtracted from every other row i:
  /// \f$B_{new}^{-1} = B^{-1} - (w - e_r)\,\rho^T\f$ with \f$\rho^T\f$ = row r of \f$B^{-1}\f$ over
  /// \f$w_r\f$. Deferred to the next FTRAN (see the class comment).
  void update(Index r, const Eigen::VectorXd& w) {
    ++m_updates;
    if (m_size == 0) return;
    if (m_pending) apply_pending();
    m_row = m_inverse.row(r) / w[r];
    m_u = w;
    m_u[r] -= 1;
    m_pending = true;
  }

 private:
  Index m_size = 0;
  Index m_updates = 0;
  // Columns c0..c3 of the inverse get the pending update (c_t -= u * row_t) and their product
  // with v_t is added to acc. Distinct arrays (restrict), so that the loop vectorizes.
  static void update_and_accumulate(double* __restrict__ c0, double* __restrict__ c1, double* __restrict__ c2,
                                    double* __restrict__ c3, const double* __restrict__ u,
                                    const double* __restrict__ row, const double* __restrict__ v,
                                    double* __restrict__ acc, Index n) {
    const double r0 = row[0], r1 = row[1], r2 = row[2], r3 = row[3];
    const double v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
    for (Index i = 0; i < n; ++i) {
      const double a0 = c0[i] - u[i] * r0, a1 = c1[i] - u[i] * r1;
      const double a2 = c2[i] - u[i] * r2, a3 = c3[i] - u[i] * r3;
      c0[i] = a0;
      c1[i] = a1;
      c2[i] = a2;
      c3[i] = a3;
      acc[i] += (v0 * a0 + v1 * a1) + (v2 * a2 + v3 * a3);
    }
  }

  void apply_pending() const {
    m_inverse.noalias() -= m_u * m_row;
    m_pending = false;
  }

  Eigen::PartialPivLU<Eigen::MatrixXd> m_lu;
  // The inverse and its pending update are mutable: applying the update inside a const FTRAN
  // changes the representation, not the matrix represented.
  mutable Eigen::MatrixXd m_inverse;
  mutable bool m_pending = false;
  Eigen::VectorXd m_u;  // pending update: B^{-1} -= m_u * m_row
  Eigen::RowVectorXd m_row;
  // Work vector: FTRAN/BTRAN run once or twice per pivot, and must not allocate.
  mutable Eigen::VectorXd m_scratch;
};

/// BasisFactorization: BasicBasisFactorization<> (see there).
using BasisFactorization = BasicBasisFactorization<>;

}  // namespace labeldp::optim::detail
