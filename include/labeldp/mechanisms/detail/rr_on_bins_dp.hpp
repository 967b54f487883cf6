/// \file
/// Internals of the production RR-on-Bins solver (Ghazi et al., ICLR 2023, Algorithm 2 made
/// fast): bin-cost models for the built-in losses and for user losses, the 1-D segmentation DP
/// without bin count, and Dinkelbach's method on the ratio N(Phi) / (d - 1 + e^eps).
///
/// The bin-cost models are in rr_on_bins_cost.hpp (scale, squared, Poisson, any loss) and
/// rr_on_bins_absolute.hpp (absolute loss); this header holds the warm starts, Dinkelbach's
/// method and the monotone output map, and includes both.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/mechanisms/detail/rr_on_bins_absolute.hpp"
#include "labeldp/mechanisms/detail/rr_on_bins_cost.hpp"

namespace labeldp::detail {

/// Largest warm-start window (number of cut positions) worth a restricted DP before the full
/// DP: the restricted DP costs O(cuts^2) calls of model.cost(), the full DP about k^2/2 O(1)
/// candidates for the prefix-sum models.
template <typename Model>
Index warm_window_limit(const Model& model) {
  return model.size() / 4;
}

/// Absolute loss: model.cost() is a median search (O(log k), scalar), while the screened full
/// DP evaluates only a small fraction of its candidates, so windows pay off only when much
/// smaller (measured at k = 1,000 .. 40,000, eps = 0.1 .. 10: with k/4, eps = 6 spent 0.8 s of
/// 0.84 s at k = 10,000 in windows of ~2,000 cuts; with this limit the whole solve takes
/// ~0.05 s). Windows of a few bins (about sqrt(k) cuts per bin) still run: they save a full DP.
template <typename Scalar>
Index warm_window_limit(const AbsoluteBinCost<Scalar>& model) {
  const Index k = model.size();
  return std::max(k / 32, Index(4 * std::sqrt(double(k))));
}

/// Smallest k for which dinkelbach() warm-starts on restricted cut sets before the full DP.
template <typename Model>
Index warm_start_size(const Model&) {
  return 257;
}

/// Absolute loss: its full DP costs several times a squared-loss DP per candidate at small k
/// (before screening pays off), so replacing two of the typical three cold-start DPs by
/// restricted ones (O(k) median-cost bin costs each at these sizes) pays already at k ~ 100.
template <typename Scalar>
Index warm_start_size(const AbsoluteBinCost<Scalar>&) {
  return 33;
}

/// Outcome of Dinkelbach's method on a cost model.
template <typename Scalar>
struct DinkelbachOutcome {
  std::vector<Index> ends;  ///< bin j is [ends[j-1], ends[j]) with ends[-1] = 0; ends.back() = k
  Scalar ratio = 0;         ///< expected loss of the partition with per-bin optimal outputs
  int iterations = 0;       ///< segmentation DPs solved
  bool converged = false;   ///< false only when max_iterations was reached
};

/// N(x) / (alpha d + beta) of a partition, from the models' accurate bin costs (O(k) in all).
template <typename Scalar, typename Model>
Scalar partition_ratio(const Model& model, const std::vector<Index>& ends, RROnBinsScale s) {
  Scalar n = 0;
  Index a = 0;
  for (Index b : ends) {
    n += model.accurate_cost(a, b);
    a = b;
  }
  return n / (Scalar(s.alpha) * Scalar(ends.size()) + Scalar(s.beta));
}

/// Dinkelbach iterations from the partition `out.ends` (ratio `out.ratio`) with the exact
/// minimizer `solve(c, ends)` of \f$\sum_S (L(S) - c)\f$ over some family of partitions.
template <typename Scalar, typename Model, typename Solve>
void dinkelbach_iterate(const Model& model, RROnBinsScale s, Solve&& solve, DinkelbachOutcome<Scalar>& out,
                        int& iterations, int max_iterations) {
  std::vector<Index> ends;
  out.converged = false;
  while (iterations < max_iterations) {
    ++iterations;
    solve(out.ratio * Scalar(s.alpha), ends);
    const Scalar r = partition_ratio<Scalar>(model, ends, s);
    // Improvements below a few ulps of lambda are rounding noise, not a better partition.
    const Scalar tol = 8 * std::numeric_limits<Scalar>::epsilon() * std::abs(out.ratio);
    if (!(r < out.ratio - tol)) {
      out.converged = true;
      return;
    }
    out.ratio = r;
    out.ends = ends;
  }
}

/// Dinkelbach's method for \f$\min_x N(x)/D(x)\f$ over interval partitions x, D(x) = alpha d + beta
/// > 0: given the ratio lambda of the best partition so far, the DP minimizes
/// \f$N(x) - \lambda D(x) = \sum_{S} (L(S) - \lambda\alpha) - \lambda\beta\f$ exactly; a partition
/// with a smaller ratio exists iff that minimum is negative, and the DP's partition then has a
/// ratio below lambda. Finitely many partitions, strictly decreasing ratios: the loop ends at
/// the optimum.
///
/// Warm start: for k >= warm_start_size(model) the same method first runs on the partitions whose cuts lie
/// on a grid of about \f$2\sqrt{k}\f$ positions (O(k) bin costs per DP via model.cost()), then
/// on the partitions whose cuts lie within one grid spacing of the cuts found, until they stop
/// moving (windows of at most warm_window_limit(model) cuts). That is usually the optimum
/// already, and the single full DP then only confirms it (instead of 3-5 full DPs from a cold
/// start). The answer does not depend on the start: only the number of full DPs does.
template <typename Scalar, typename Model>
DinkelbachOutcome<Scalar> dinkelbach(const Model& model, RROnBinsScale s, int max_iterations = 100) {
  const Index k = model.size();
  DinkelbachOutcome<Scalar> out;
  std::vector<Index> one{k}, singletons(static_cast<std::size_t>(k));
  for (Index j = 0; j < k; ++j) singletons[std::size_t(j)] = j + 1;
  const Scalar r1 = partition_ratio<Scalar>(model, one, s);
  const Scalar rk = partition_ratio<Scalar>(model, singletons, s);
  out.ends = r1 <= rk ? one : singletons;
  out.ratio = std::min(r1, rk);

  if (k >= warm_start_size(model)) {
    // DP over partitions whose cuts are in `cuts` (sorted, first 0, last k), scalar costs.
    std::vector<Index> cuts;
    std::vector<Scalar> G;
    std::vector<std::size_t> back;
    // The bin costs of a cut set are kept (up to kCachedCuts cuts, 0.5 MB) for the further
    // Dinkelbach iterations on the same cuts, which differ only in c.
    constexpr std::size_t kCachedCuts = 360;
    std::vector<Index> cached_cuts;
    std::vector<Scalar> cached_costs;
    auto restricted = [&](Scalar c, std::vector<Index>& ends) {
      G.assign(cuts.size(), Scalar(0));
      back.assign(cuts.size(), 0);
      const bool cache = cuts.size() <= kCachedCuts;
      if (cache && cached_cuts != cuts) {
        cached_costs.resize(cuts.size() * (cuts.size() - 1) / 2);
        for (std::size_t i = 1; i < cuts.size(); ++i)
          for (std::size_t r = 0; r < i; ++r) cached_costs[i * (i - 1) / 2 + r] = model.cost(cuts[r], cuts[i]);
        cached_cuts = cuts;
      }
      for (std::size_t i = 1; i < cuts.size(); ++i) {
        Scalar best = std::numeric_limits<Scalar>::infinity();
        for (std::size_t r = 0; r < i; ++r) {
          const Scalar cand = G[r] + (cache ? cached_costs[i * (i - 1) / 2 + r] : model.cost(cuts[r], cuts[i]));
          if (cand < best) {
            best = cand;
            back[i] = r;
          }
        }
        G[i] = best - c;
      }
      ends.clear();
      for (std::size_t i = cuts.size() - 1; i > 0; i = back[i]) ends.push_back(cuts[i]);
      std::reverse(ends.begin(), ends.end());
    };
    int warm_iterations = 0;
    // 1. Cuts on a grid of about 2 sqrt(k) positions.
    const Index grid = std::min<Index>(k, Index(2 * std::sqrt(double(k))));
    const Index spacing = (k + grid - 1) / grid;
    for (Index g = 0; g <= grid; ++g) cuts.push_back(Index((long double)(k)*g / grid));
    dinkelbach_iterate<Scalar>(model, s, restricted, out, warm_iterations, max_iterations);
    // 2. Cuts within one grid spacing of the current cuts, until they stop moving: usually
    //    the exact optimum, so that the first full DP below only confirms it.
    for (int round = 0; round < 4; ++round) {
      std::vector<Index> window{0};
      for (std::size_t j = 0; j + 1 < out.ends.size(); ++j)
        for (Index t = std::max<Index>(1, out.ends[j] - spacing); t <= std::min<Index>(k - 1, out.ends[j] + spacing);
             ++t)
          if (t > window.back()) window.push_back(t);
      window.push_back(k);
      if (Index(window.size()) > warm_window_limit(model)) break;  // no cheaper than the full DP
      const std::vector<Index> before = out.ends;
      cuts = window;
      dinkelbach_iterate<Scalar>(model, s, restricted, out, warm_iterations, max_iterations);
      if (out.ends == before) break;
    }
  }

  std::vector<Scalar> F;
  std::vector<Index> arg;
  auto full = [&](Scalar c, std::vector<Index>& ends) {
    model.dp(c, F, arg);
    ends.clear();
    for (Index i = k; i > 0; i = arg[std::size_t(i)]) ends.push_back(i);
    std::reverse(ends.begin(), ends.end());
  };
  dinkelbach_iterate<Scalar>(model, s, full, out, out.iterations, max_iterations);
  return out;
}

/// Outputs of the bins of a partition, in bin order, made non-decreasing. Per-bin optimal
/// outputs of an optimal partition are already sorted except in ties that involve bins of zero
/// prior mass (whose output is the prior's unconditional optimum); for losses with
/// \f$\partial^2 \ell / \partial o \partial y \le 0\f$ (squared, absolute, Poisson) reassigning
/// the same outputs in sorted order never increases the loss, so sorting keeps the optimum.
template <typename Scalar, typename Model>
Vector<Scalar> monotone_phi(const Model& model, const std::vector<Index>& ends) {
  std::vector<Scalar> outs;
  outs.reserve(ends.size());
  Index a = 0;
  for (Index b : ends) {
    outs.push_back(model.output(a, b));
    a = b;
  }
  std::sort(outs.begin(), outs.end());
  Vector<Scalar> phi(model.size());
  a = 0;
  for (std::size_t j = 0; j < ends.size(); ++j) {
    for (Index i = a; i < ends[j]; ++i) phi[i] = outs[j];
    a = ends[j];
  }
  return phi;
}

}  // namespace labeldp::detail
