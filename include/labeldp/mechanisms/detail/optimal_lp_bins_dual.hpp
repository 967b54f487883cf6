/// \file
/// An exact search for duals that certify RR-on-Bins as optimal for LP (2) of Ghazi et al.
/// (2023) inside the complementary-slackness set of detail::bins_mechanism(): a small LP over
/// the outputs that price out, re-solved with every output that still does (bins_dual_lp()).
///
/// With \f$\lambda = lo + x\f$ (lo: each label's own bin output's excess cost), the
/// complementary-slackness set is the boxes \f$0 \le x_y \le cap_y\f$ and one sum
/// \f$\sum_{y \in S_b} x_y = u_b\f$ per bin, on which \f$\sum_y \lambda_y = \Lambda\f$ is constant.
/// An unused output o certifies, \f$F_o(\lambda) = \sum_y g(w'_{y,o} - \lambda_y) \ge 0\f$, iff
/// \f[ P_o(x) = \sum_y (x_y - a_{y,o})^+ \le B_o, \quad a_{y,o} = (w'_{y,o} - lo_y)^+, \quad
///     B_o = (W'_o - \Lambda) / r - \sum_y (lo_y - w'_{y,o})^+ \f]
/// (\f$F_o = W'_o - \Lambda - r \sum_y (\lambda_y - w'_{y,o})^+\f$). A convex constraint, and
/// inside the boxes mostly linear: \f$(x_y - a_{y,o})^+\f$ is \f$x_y\f$ when \f$a_{y,o} = 0\f$
/// and 0 when \f$a_{y,o} \ge cap_y\f$; only labels whose box straddles \f$w'_{y,o}\f$ need a
/// variable \f$v_{y,o} \ge x_y - a_{y,o}\f$, \f$v \ge 0\f$ (the compact form of the concave
/// \f$F_o\f$). Labels of a bin with the same linear coefficients in every row are one variable
/// (their cap the sum of theirs: any split within the caps gives the same rows), so the LP has
/// about one column per bin and active output plus the straddling labels.
///
/// The rows ask for a common slack t >= 0, and the objective minimizes the linear part of
/// \f$\sum_o P_o\f$ over EVERY unused output (weight 1 per output where \f$a_{y,o} = 0\f$, 1/2
/// where the box straddles) minus \f$10^{-3} t\f$: a point cheap for the outputs that are not
/// rows yet (maximizing t alone gave vertices that priced out new outputs in every round:
/// 6, 20, 30 rows in three LPs, not certified, at weeks-like k = 52, eps 4). An infeasible LP (no point of the set
/// satisfies the rows) ends the search: the bins are then not certifiable this way (not optimal when some dual is; a
/// loss outside Assumption 4 of Ghazi et al. 2023). Every output is then priced exactly by the caller, and the outputs
/// that still price out join the rows: at most |O| - d rounds, each LP cold (rebuilt, since the merged columns change
/// with the rows). Caps are \f$\min(cap_y, u_b)\f$ (x_y <= u_b anyway), which makes most straddles linear at large eps.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/optim/simplex.hpp"

namespace labeldp::detail {

/// The most rows of one LP of bins_dual_lp() in optimal_mechanism_lp(): the dense simplex of
/// 241 rows took about 10 ms (weeks-like k = 52, eps 8), and larger ones cost more than the
/// interior point they would save (near-uniform k = 214, eps 4: over a minute at ~1,500 rows).
inline constexpr Index kBinsDualMaxRows = 300;

/// The complementary-slackness set of RR-on-Bins (see the file comment), in loss units.
struct BinsDualSet {
  std::vector<Index> ends;    ///< bin b is [ends[b-1], ends[b]), ends[-1] = 0, ends.back() = k
  std::vector<char> is_used;  ///< per output: 1 for a bin's output (\f$F_o = 0\f$ on the set)
  Eigen::VectorXd lo;         ///< \f$lo_y\f$
  Eigen::VectorXd cap;        ///< \f$cap_y\f$ (may be +infinity)
  std::vector<double> u;      ///< \f$u_b\f$
  double Lambda = 0;          ///< \f$\Lambda\f$ (the bins' excess loss)
};

/// Restores each bin's sum \f$\sum_{y \in S_b} x_y = u_b\f$ after roundoff, moving x within its
/// boxes \f$0 \le x_y \le cap_y\f$ on the bin's labels in order (the searches' candidates).
/// \tparam Deferred unused (`void`): a template only so that this code is compiled in the translation
/// units that use it (README, "Compile time").
template <typename Deferred = void>
inline void restore_bin_sums(const BinsDualSet& set, const Eigen::VectorXd& cap, Eigen::VectorXd& x) {
  for (std::size_t b = 0, s = 0; b < set.ends.size(); ++b) {
    const Index first = Index(s), e = set.ends[b];
    double missing = set.u[b] - x.segment(first, e - first).sum();
    for (Index y = first; y < e && missing != 0; ++y) {
      const double step = std::clamp(missing, -x[y], cap[y] - x[y]);
      x[y] += step;
      missing -= step;
    }
    s = std::size_t(e);
  }
}

/// Searches the set for \f$\lambda\f$ with \f$F_o(\lambda) \ge 0\f$ for every output (file
/// comment), starting from the outputs whose entry of `reduced` is negative at the caller's
/// point. `excess` is k x |O| (\f$w'\f$), `r` \f$= e^\varepsilon - 1\f$. `price(lambda,
/// reduced)` re-prices every output at a candidate (its reduced costs into `reduced`) and
/// returns whether it certifies. Returns the number of LPs solved; `lambda` and `reduced` hold
/// the certified point when `price` accepted it (`certified` true); otherwise `lambda` is
/// unchanged and `reduced` is the last candidate's. Stops after `max_rounds` LPs, before an LP
/// of more than `max_rows` rows, when an LP is infeasible or fails, or when no new output prices
/// out.
template <typename Price>
Index bins_dual_lp(const Eigen::MatrixXd& excess, double r, const BinsDualSet& set, Index max_rounds, Index max_rows,
                   const Price& price, Eigen::VectorXd& lambda, Eigen::VectorXd& reduced, bool& certified) {
  certified = false;
  const Index k = excess.rows(), n = excess.cols(), d = Index(set.ends.size());
  std::vector<char> active(static_cast<std::size_t>(n), 0);
  std::vector<Index> rows_of;  // active outputs, in the order they joined
  // The variables' unit: the largest bin sum (x / sigma is at most about 1).
  double sigma = 0;
  for (double v : set.u) sigma = std::max(sigma, v);
  if (!(sigma > 0) || !std::isfinite(sigma)) sigma = 1;
  Eigen::VectorXd budget = Eigen::VectorXd::Zero(n);
  for (Index j = 0; j < n; ++j) {
    double b = (excess.col(j).sum() - set.Lambda) / r;
    for (Index y = 0; y < k; ++y) b -= std::max(0.0, set.lo[y] - excess(y, j));
    budget[j] = b;
  }
  // The caps that can bind: x_y <= u_b on bin b anyway. A pair (y, o) with a_{y,o} >= this
  // cap is linear (0) and a cap at or above u_b needs no row.
  Eigen::VectorXd cap(k);
  std::vector<char> binding(static_cast<std::size_t>(k), 0);
  for (Index b = 0, y = 0; b < d; ++b)
    for (; y < set.ends[std::size_t(b)]; ++y) {
      cap[y] = std::min(set.cap[y], set.u[std::size_t(b)]);
      binding[std::size_t(y)] = set.cap[y] < set.u[std::size_t(b)];
    }
  Index solved = 0;
  const double margin_weight = 1e-3;
  for (Index round = 0; round < max_rounds; ++round) {
    Index added = 0;
    for (Index j = 0; j < n; ++j)
      if (!set.is_used[std::size_t(j)] && !active[std::size_t(j)] && reduced[j] < 0) {
        if (budget[j] < 0) return solved;  // P_o >= 0 > B_o: no point of the set certifies o
        active[std::size_t(j)] = 1;
        rows_of.push_back(j);
        ++added;
      }
    if (added == 0) return solved;
    const Index m = Index(rows_of.size());
    // Type of (label, active row): 1 linear (a = 0), 0 absent (a >= cap), 2 straddling.
    const auto type = [&](Index y, Index o) -> char {
      const double a = std::max(0.0, excess(y, o) - set.lo[y]);
      return a <= 0 ? 1 : a >= cap[y] ? 0 : 2;
    };
    // Objective: the linear part of sum_o P_o over every unused output (1 where a = 0, 1/2
    // where the box straddles), so that the point stays cheap for the outputs not yet rows.
    Eigen::VectorXd weight = Eigen::VectorXd::Zero(k);
    for (Index y = 0; y < k; ++y)
      for (Index j = 0; j < n; ++j)
        if (!set.is_used[std::size_t(j)]) {
          const char c = type(y, j);
          weight[y] += c == 1 ? 1.0 : c == 2 ? 0.5 : 0.0;
        }
    // Columns: merged label groups, then the straddle variables, then t.
    std::vector<Index> group_of(static_cast<std::size_t>(k), -1);
    std::vector<Index> group_bin;
    std::vector<double> group_cap, group_weight;
    std::vector<char> group_capped;
    std::vector<std::vector<char>> group_sig;
    struct Straddle {
      Index label, row;
      double a;
    };
    std::vector<Straddle> straddles;
    std::vector<char> sig(static_cast<std::size_t>(m));
    for (Index b = 0, y = 0; b < d; ++b) {
      std::map<std::pair<std::vector<char>, std::pair<bool, double>>, Index> seen;
      for (; y < set.ends[std::size_t(b)]; ++y) {
        if (!(cap[y] > 0)) continue;  // x_y = 0
        bool straddling = false;
        for (Index t = 0; t < m; ++t) {
          sig[std::size_t(t)] = type(y, rows_of[std::size_t(t)]);
          straddling = straddling || sig[std::size_t(t)] == 2;
        }
        const bool finite = binding[std::size_t(y)];
        if (!straddling) {
          const auto key = std::make_pair(sig, std::make_pair(finite, weight[y]));
          const auto it = seen.find(key);
          if (it != seen.end()) {
            group_of[std::size_t(y)] = it->second;
            group_cap[std::size_t(it->second)] += cap[y];
            continue;
          }
          seen.emplace(key, Index(group_bin.size()));
        }
        group_of[std::size_t(y)] = Index(group_bin.size());
        group_bin.push_back(b);
        group_cap.push_back(cap[y]);
        group_capped.push_back(finite);
        group_weight.push_back(weight[y]);
        group_sig.push_back(sig);
        for (Index t = 0; t < m; ++t)
          if (sig[std::size_t(t)] == 2)
            straddles.push_back({y, t, std::max(0.0, excess(y, rows_of[std::size_t(t)]) - set.lo[y])});
      }
    }
    const Index G = Index(group_bin.size()), S = Index(straddles.size());
    Index capped = 0;
    for (char c : group_capped) capped += c;
    std::vector<char> bin_has(static_cast<std::size_t>(d), 0);
    for (Index b : group_bin) bin_has[std::size_t(b)] = 1;
    for (Index b = 0; b < d; ++b)
      if (!bin_has[std::size_t(b)] && set.u[std::size_t(b)] > 0) return solved;  // a sum with no room
    const Index cols = G + S + 1, rows = d + capped + m + S;
    if (rows > max_rows) return solved;  // a dense simplex this size costs more than the LP (2) itself
    optim::LinearProgram lp;
    lp.A = Eigen::MatrixXd::Zero(rows, cols);
    lp.b = Eigen::VectorXd::Zero(rows);
    lp.c = Eigen::VectorXd::Zero(cols);
    for (Index g = 0; g < G; ++g) lp.c[g] = group_weight[std::size_t(g)];
    lp.c[G + S] = -margin_weight;  // and the least slack t >= 0 of the output rows
    lp.row_types.assign(std::size_t(rows), optim::RowType::LessEqual);
    for (Index b = 0; b < d; ++b) {
      lp.b[b] = set.u[std::size_t(b)] / sigma;
      lp.row_types[std::size_t(b)] = optim::RowType::Equal;
    }
    const Index row = d + capped;  // the output rows; the straddle rows follow them
    for (Index g = 0, cap_row = d; g < G; ++g) {
      lp.A(group_bin[std::size_t(g)], g) = 1;
      if (group_capped[std::size_t(g)]) {
        lp.A(cap_row, g) = 1;
        lp.b[cap_row++] = group_cap[std::size_t(g)] / sigma;
      }
      for (Index t = 0; t < m; ++t)
        if (group_sig[std::size_t(g)][std::size_t(t)] == 1) lp.A(row + t, g) = 1;
    }
    for (Index t = 0; t < m; ++t) {
      lp.A(row + t, G + S) = 1;
      lp.b[row + t] = budget[rows_of[std::size_t(t)]] / sigma;
    }
    for (Index s = 0; s < S; ++s) {
      const Straddle& st = straddles[std::size_t(s)];
      lp.A(row + st.row, G + s) = 1;  // v_{y,o} in output o's row
      lp.A(row + m + s, group_of[std::size_t(st.label)]) = 1;
      lp.A(row + m + s, G + s) = -1;  // x_y - v_{y,o} <= a_{y,o}
      lp.b[row + m + s] = st.a / sigma;
    }
    optim::RevisedSimplex simplex(std::move(lp));
    const optim::SimplexResult sr = simplex.solve();
    ++solved;
    if (sr.status != optim::SolveStatus::Optimal || sr.x.size() != cols || !sr.x.allFinite()) return solved;
    // Each group's value split in proportion to the caps, clamped to the boxes; each bin's
    // sum restored on the labels with room.
    Eigen::VectorXd x = Eigen::VectorXd::Zero(k);
    for (Index y = 0; y < k; ++y) {
      const Index g = group_of[std::size_t(y)];
      if (g < 0) continue;
      const double v = std::max(0.0, sigma * sr.x[g]), c = group_cap[std::size_t(g)];
      x[y] = std::min(v * (cap[y] / c), cap[y]);
    }
    restore_bin_sums(set, cap, x);
    Eigen::VectorXd candidate = set.lo + x, candidate_reduced;
    if (price(candidate, candidate_reduced)) {
      lambda = std::move(candidate);
      reduced = std::move(candidate_reduced);
      certified = true;
      return solved;
    }
    reduced = std::move(candidate_reduced);
  }
  return solved;
}

}  // namespace labeldp::detail
