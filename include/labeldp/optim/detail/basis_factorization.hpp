/// \file
/// LU factorization of a simplex basis with product-form (eta) updates, refactorized
/// periodically by the caller. Internal to RevisedSimplex.
#pragma once

#include <cmath>
#include <vector>

#include <Eigen/Core>
#include <Eigen/LU>

namespace labeldp::optim::detail {

/// Factorization of a square basis matrix \f$B\f$ as \f$B = B_0 E_1 \cdots E_t\f$: an LU with
/// partial pivoting of the basis \f$B_0\f$ at the last refactorization, followed by one
/// elementary (eta) matrix per basis change (product form of the inverse, Dantzig-Orchard-Hays).
/// Each eta matrix is the identity with column r replaced by \f$w = B^{-1} a_q\f$, so
/// FTRAN/BTRAN cost O(m^2) for the LU plus O(m) per eta. The caller refactorizes after a
/// fixed number of updates: the etas grow linearly in cost and accumulate roundoff.
class BasisFactorization {
 public:
  using Index = Eigen::Index;

  /// Factorizes `basis` afresh (drops every eta). Returns false when the basis is numerically
  /// singular: the smallest pivot of U is below `singular_tolerance` times the largest.
  bool refactor(const Eigen::MatrixXd& basis, double singular_tolerance) {
    m_size = basis.rows();
    m_etas.clear();
    m_eta_rows.clear();
    if (m_size == 0) return true;
    m_lu.compute(basis);
    const Eigen::VectorXd diag = m_lu.matrixLU().diagonal().cwiseAbs();
    const double largest = diag.maxCoeff();
    const double smallest = diag.minCoeff();
    return std::isfinite(largest) && largest > 0 && smallest > singular_tolerance * largest;
  }

  /// Number of eta updates since the last refactorization.
  Index num_updates() const { return Index(m_etas.size()); }

  /// Solves \f$B x = v\f$ in place (FTRAN).
  void ftran(Eigen::VectorXd& v) const {
    if (m_size == 0) return;
    v = m_lu.solve(v);
    for (std::size_t e = 0; e < m_etas.size(); ++e) {
      const Eigen::VectorXd& w = m_etas[e];
      const Index r = m_eta_rows[e];
      const double xr = v[r] / w[r];
      if (xr != 0) v.noalias() -= xr * w;
      v[r] = xr;
    }
  }

  /// Solves \f$B^T y = v\f$ in place (BTRAN).
  void btran(Eigen::VectorXd& v) const {
    if (m_size == 0) return;
    for (std::size_t e = m_etas.size(); e-- > 0;) {
      const Eigen::VectorXd& w = m_etas[e];
      const Index r = m_eta_rows[e];
      // Row r of E^T is w^T; the other rows are the identity.
      const double others = w.dot(v) - w[r] * v[r];
      v[r] = (v[r] - others) / w[r];
    }
    v = m_lu.transpose().solve(v);
  }

  /// Records the basis change "position r now holds the column whose FTRAN is w".
  void update(Index r, const Eigen::VectorXd& w) {
    m_etas.push_back(w);
    m_eta_rows.push_back(r);
  }

 private:
  Index m_size = 0;
  Eigen::PartialPivLU<Eigen::MatrixXd> m_lu;
  std::vector<Eigen::VectorXd> m_etas;
  std::vector<Index> m_eta_rows;
};

}  // namespace labeldp::optim::detail
