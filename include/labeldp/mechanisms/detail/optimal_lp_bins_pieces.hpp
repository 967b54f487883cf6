/// \file
/// An exact search, in one small LP, for duals that certify RR-on-Bins as optimal for LP (2) of
/// Ghazi et al. (2023) inside the complementary-slackness set of detail::bins_mechanism():
/// bins_dual_pieces(), the step after water-filling.
///
/// On the set (see detail::bins_dual_lp() for the notation: \f$\lambda = lo + x\f$, boxes \f$0
/// \le x_y \le cap_y\f$, one sum \f$u_b\f$ per bin) an unused output o certifies iff \f$P_o(x) =
/// \sum_y (x_y - a_{y,o})^+ \le B_o\f$. Cut each box at the breakpoints \f$a_{y,o}\f$ into pieces:
/// piece i of label y, \f$[s_i, s_{i+1})\f$, adds to \f$P_o\f$ exactly for the outputs with
/// \f$a_{y,o} \le s_i\f$, a set that grows with i. With one variable per piece, bounded by its
/// length, every \f$P_o\f$ is LINEAR, and the LP relaxation is exact: for a given \f$x_y\f$, at
/// least \f$(x_y - a)^+\f$ of any split into pieces lies in the pieces above a (those below hold
/// at most a), so any split gives each \f$P_o\f$ at least its true value and any feasible point
/// of the LP is a point of the set that certifies every output. Pieces of one bin that add to the
/// same outputs are one variable (their lengths summed: any split is as good). The LP then has
/// one row per bin and per output whose \f$P_o\f$ can exceed its budget on the set (the others
/// certify anyway), and bounded 0/1 columns: phase 1 of a bounded-variable primal simplex from
/// the slack basis (dense explicit inverse of about |O| rows) finds a point or proves there is
/// none. Its point is priced exactly by the caller, so the certificate never relies on the LP's
/// arithmetic.
///
/// Measured (CPU, the step alone: building, LP and pricing): weeks-like k = 52, |O| = 52, eps 8:
/// 52 rows, 123 columns, 70 pivots, 0.25 ms, where the LPs of bins_dual_lp() (the straddle rows
/// of the compact form) took 24-28 ms and water-filling's gap was still 0.17 after 300 rounds;
/// near-uniform k = 214 with zero-probability labels, |O| = 107, eps 4: 90 rows, 1,525 columns,
/// 770 pivots, 36 ms (before: the failed attempt and the interior point, 49 ms).
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/optimal_lp_bins_dual.hpp"

namespace labeldp::detail {

/// Sizes of the LP of bins_dual_pieces() (for tests and benchmarks).
struct BinsPiecesStats {
  Index rows = 0;         ///< bins plus the output rows kept
  Index columns = 0;      ///< merged piece variables
  Index pivots = 0;       ///< simplex pivots (bound flips included)
  bool feasible = false;  ///< phase 1 reached a point of the set
};

/// The most merged piece variables of the LP of bins_dual_pieces() (larger ones are left to the
/// interior point: near-uniform k = 214 instances have thousands).
inline constexpr Index kBinsPiecesMaxColumns = 4000;

/// The most pivots of the LP of bins_dual_pieces() in optimal_mechanism_lp().
inline constexpr Index kBinsPiecesMaxPivots = 2000;

/// The most work of bins_dual_pieces(), in entries touched: the pieces built (their output sets)
/// and, per pivot, the columns' nonzeros priced and the inverse updated (about 50 ms). Near-uniform
/// k = 214 with zero-probability labels, |O| = 107, eps 4 (1,525 columns, 770 pivots, 36 ms)
/// fits within it; a search that cannot certify costs at most that before the interior point.
inline constexpr double kBinsPiecesMaxWork = 6e7;

/// Searches the complementary-slackness set `set` for \f$\lambda\f$ with \f$F_o(\lambda) \ge 0\f$
/// for every output by the piece LP of the file comment. `excess` is k x |O| (\f$w'\f$), `r`
/// \f$= e^\varepsilon - 1\f$. `price(lambda, reduced)` re-prices every output at the point found
/// (its reduced costs into `reduced`) and returns whether it certifies; `lambda` and `reduced`
/// then hold it and `certified` is true (otherwise both are unchanged). Gives up (uncertified)
/// when a budget is negative, a bin's sum does not fit its boxes, the LP has more than
/// kBinsPiecesMaxColumns columns, `max_pivots` pivots or kBinsPiecesMaxWork pass, or phase 1
/// ends above zero (the set has no certifying point).
template <typename Price>
BinsPiecesStats bins_dual_pieces(const Eigen::MatrixXd& excess, double r, const BinsDualSet& set, Index max_pivots,
                                 const Price& price, Eigen::VectorXd& lambda, Eigen::VectorXd& reduced,
                                 bool& certified) {
  certified = false;
  BinsPiecesStats stats;
  const Index k = excess.rows(), n = excess.cols(), d = Index(set.ends.size());
  if (k == 0 || d == 0 || !(r > 0)) return stats;
  std::vector<Index> bin_of(static_cast<std::size_t>(k));
  Eigen::VectorXd cap(k);  // x_y <= u_b anyway
  for (Index b = 0, y = 0; b < d; ++b)
    for (; y < set.ends[std::size_t(b)]; ++y) {
      bin_of[std::size_t(y)] = b;
      cap[y] = std::max(0.0, std::min(set.cap[y], set.u[std::size_t(b)]));
    }
  // Output rows: the unused outputs whose P_o can exceed the budget on the set.
  std::vector<Index> rows_of;
  std::vector<double> budget_of;
  Eigen::VectorXd bin_room(d);
  for (Index j = 0; j < n; ++j) {
    if (set.is_used[std::size_t(j)]) continue;
    double B = (excess.col(j).sum() - set.Lambda) / r;
    for (Index y = 0; y < k; ++y) B -= std::max(0.0, set.lo[y] - excess(y, j));
    if (!(B >= 0)) return stats;  // P_o >= 0 > B_o: no point of the set certifies o
    bin_room.setZero();
    for (Index y = 0; y < k; ++y)
      bin_room[bin_of[std::size_t(y)]] += std::max(0.0, cap[y] - std::max(0.0, excess(y, j) - set.lo[y]));
    double most = 0;
    for (Index b = 0; b < d; ++b) most += std::min(bin_room[b], set.u[std::size_t(b)]);
    if (most > B) {
      rows_of.push_back(j);
      budget_of.push_back(B);
    }
  }
  const Index m = Index(rows_of.size()), R = d + m;
  stats.rows = R;
  // Pieces, merged per (bin, signature); each label remembers its pieces in order.
  std::vector<Index> col_bin;
  std::vector<std::vector<Index>> col_rows;
  std::vector<double> col_len;
  std::map<std::pair<Index, std::vector<Index>>, Index> seen;
  struct Piece {
    Index column;
    double length;
  };
  std::vector<std::vector<Piece>> pieces(static_cast<std::size_t>(k));
  std::vector<std::pair<double, Index>> brk;
  std::vector<Index> sig;
  double work = 0;
  for (Index y = 0; y < k; ++y) {
    if (!(cap[y] > 0)) continue;
    if (work > kBinsPiecesMaxWork || Index(col_len.size()) > kBinsPiecesMaxColumns) return stats;
    brk.clear();
    for (Index t = 0; t < m; ++t) brk.emplace_back(std::max(0.0, excess(y, rows_of[std::size_t(t)]) - set.lo[y]), t);
    std::sort(brk.begin(), brk.end());
    double start = 0;
    std::size_t next = 0;
    sig.clear();
    while (start < cap[y]) {
      while (next < brk.size() && brk[next].first <= start) sig.push_back(brk[next++].second);
      const double end = next < brk.size() ? std::min(cap[y], brk[next].first) : cap[y];
      std::vector<Index> key = sig;
      std::sort(key.begin(), key.end());
      work += double(key.size() + 1);
      const auto found = seen.try_emplace({bin_of[std::size_t(y)], std::move(key)}, Index(col_len.size()));
      if (found.second) {
        col_bin.push_back(bin_of[std::size_t(y)]);
        col_rows.push_back(found.first->first.second);
        col_len.push_back(0);
      }
      col_len[std::size_t(found.first->second)] += end - start;
      pieces[std::size_t(y)].push_back({found.first->second, end - start});
      start = end;
    }
  }
  const Index G = Index(col_len.size());
  stats.columns = G;
  if (G > kBinsPiecesMaxColumns) return stats;
  {
    Eigen::VectorXd room = Eigen::VectorXd::Zero(d);
    for (Index g = 0; g < G; ++g) room[col_bin[std::size_t(g)]] += col_len[std::size_t(g)];
    for (Index b = 0; b < d; ++b)
      if (room[b] < set.u[std::size_t(b)]) return stats;  // a sum that does not fit its boxes
  }

  // Phase 1, bounded primal simplex. Variables: columns 0..G-1 (0 <= z <= len), then one
  // per row: the bin rows' artificials (cost 1) and the output rows' slacks (cost 0), both
  // >= 0. Rows scaled by sigma (the largest bin sum).
  double sigma = 0;
  for (double v : set.u) sigma = std::max(sigma, v);
  if (!(sigma > 0) || !std::isfinite(sigma)) return stats;
  const Index V = G + R;
  Eigen::VectorXd value = Eigen::VectorXd::Zero(V), upper(V), cost = Eigen::VectorXd::Zero(V);
  for (Index g = 0; g < G; ++g) upper[g] = col_len[std::size_t(g)] / sigma;
  for (Index i = 0; i < R; ++i) upper[G + i] = std::numeric_limits<double>::infinity();
  for (Index b = 0; b < d; ++b) {
    cost[G + b] = 1;
    value[G + b] = set.u[std::size_t(b)] / sigma;
  }
  for (Index t = 0; t < m; ++t) value[G + d + t] = budget_of[std::size_t(t)] / sigma;
  std::vector<Index> basis(static_cast<std::size_t>(R)), position(static_cast<std::size_t>(V), -1);
  for (Index i = 0; i < R; ++i) {
    basis[std::size_t(i)] = G + i;
    position[std::size_t(G + i)] = i;
  }
  Eigen::MatrixXd inverse = Eigen::MatrixXd::Identity(R, R);
  const auto dot = [&](const Eigen::VectorXd& yv, Index j) {
    if (j >= G) return yv[j - G];
    double s = yv[col_bin[std::size_t(j)]];
    for (Index t : col_rows[std::size_t(j)]) s += yv[d + t];
    return s;
  };
  Eigen::VectorXd w(R), wcol(R);
  // Row duals of the slack basis: 1 on the bins' rows (their artificials), 0 on the outputs';
  // updated at each pivot.
  Eigen::VectorXd yv = Eigen::VectorXd::Zero(R);
  yv.head(d).setOnes();
  Eigen::VectorXd inv_norm(V);  // 1 / the column's norm
  for (Index j = 0; j < V; ++j)
    inv_norm[j] = j < G ? 1 / std::sqrt(1.0 + double(col_rows[std::size_t(j)].size())) : 1.0;
  const double tol = 1e-11, pivot_tol = 1e-9;
  const auto infeasibility = [&] { return value.segment(G, d).sum(); };
  Index nonzeros = V;
  for (Index g = 0; g < G; ++g) nonzeros += Index(col_rows[std::size_t(g)].size());
  while (infeasibility() > tol) {
    if (stats.pivots >= max_pivots || work > kBinsPiecesMaxWork) return stats;
    work += double(nonzeros) + double(R) * double(R);
    // Entering: the largest reduced cost over the column's norm (a cheap steepest edge).
    Index q = -1;
    double best = 0, dir = 0, dq = 0;
    for (Index j = 0; j < V; ++j) {
      if (position[std::size_t(j)] >= 0) continue;
      const double dj = cost[j] - dot(yv, j), score = dj * inv_norm[j];
      if (value[j] > 0) {  // nonbasic at its length
        if (dj > tol && score > best) {
          best = score;
          q = j;
          dir = -1;
          dq = dj;
        }
      } else if (dj < -tol && -score > best) {
        best = -score;
        q = j;
        dir = 1;
        dq = dj;
      }
    }
    if (q < 0) return stats;  // phase 1 optimal above zero: no certifying point in the set
    if (q >= G) {
      w = inverse.col(q - G);
    } else {
      w = inverse.col(col_bin[std::size_t(q)]);
      for (Index t : col_rows[std::size_t(q)]) w += inverse.col(d + t);
    }
    // Ratio test: the basic values move by -dir theta w; the entering one by dir theta.
    double theta = upper[q];
    Index leave = -1;
    const double wmax = std::max(1.0, w.cwiseAbs().maxCoeff());
    for (Index i = 0; i < R; ++i) {
      const double move = dir * w[i];
      if (std::abs(move) <= pivot_tol * wmax) continue;
      const Index j = basis[std::size_t(i)];
      const double room = move > 0 ? value[j] / move : (upper[j] - value[j]) / -move;
      if (room < theta) {
        theta = std::max(0.0, room);
        leave = i;
      }
    }
    if (!std::isfinite(theta)) return stats;  // unbounded: not in phase 1 (the artificials are >= 0)
    for (Index i = 0; i < R; ++i) value[basis[std::size_t(i)]] -= dir * theta * w[i];
    value[q] += dir * theta;
    ++stats.pivots;
    if (leave < 0) continue;  // a bound flip
    const Index out = basis[std::size_t(leave)];
    const double lim = w[leave] * dir > 0 ? 0.0 : upper[out];
    value[out] = lim;
    position[std::size_t(out)] = -1;
    basis[std::size_t(leave)] = q;
    position[std::size_t(q)] = leave;
    const Eigen::RowVectorXd prow = inverse.row(leave) / w[leave];
    yv += dq * prow.transpose();  // the entering column's reduced cost becomes 0
    wcol = w;
    wcol[leave] = 0;
    inverse.noalias() -= wcol * prow;
    inverse.row(leave) = prow;
  }
  stats.feasible = true;
  // Each label's x: its pieces in order, each filled to its merged column's fraction.
  Eigen::VectorXd x = Eigen::VectorXd::Zero(k);
  for (Index y = 0; y < k; ++y)
    for (const Piece& p : pieces[std::size_t(y)]) {
      const double len = col_len[std::size_t(p.column)];
      const double fraction = len > 0 ? std::clamp(sigma * value[p.column] / len, 0.0, 1.0) : 0.0;
      x[y] += fraction * p.length;
    }
  for (Index y = 0; y < k; ++y) x[y] = std::min(x[y], cap[y]);
  restore_bin_sums(set, cap, x);  // each bin's sum after roundoff
  Eigen::VectorXd candidate = set.lo + x, candidate_reduced;
  if (price(candidate, candidate_reduced)) {
    lambda = std::move(candidate);
    reduced = std::move(candidate_reduced);
    certified = true;
  }
  return stats;
}

}  // namespace labeldp::detail
