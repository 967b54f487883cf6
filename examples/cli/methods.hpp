// The mechanisms of `privatize --method M` and `compare --methods`, built one way for both: which
// names exist, which need a prior, and stage 2 of the two-stage pipeline (Ghazi et al. 2023,
// Algorithm 3; Badanidiyuru et al. 2023, Algorithm 3; RPWithPrior's Algorithm 3) from the
// counted labels of a public discretization.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "labeldp/core/prior.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"
#include "labeldp/mechanisms/rpwithprior.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "labeldp/mechanisms/two_stage.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_randomizer.hpp"
#include "labeldp/prior/budget.hpp"
#include "labeldp/prior/discretize.hpp"
#include "labeldp/prior/hist_eps.hpp"

namespace labeldp::cli {

/// The methods that spend part of eps on a private prior first.
inline bool is_two_stage_method(const std::string& m) {
  return m == "bins" || m == "unbiased" || m == "rpwithprior" || m == "rr-with-prior";
}
/// The additive baselines: all of eps on the noise, no prior, the public range [lo, hi].
inline bool is_additive_method(const std::string& m) {
  return m == "laplace" || m == "discrete-laplace" || m == "gaussian" || m == "discrete-gaussian" || m == "staircase" ||
         m == "discrete-staircase" || m == "exponential";
}
inline bool needs_delta(const std::string& m) { return m == "gaussian" || m == "discrete-gaussian"; }
inline bool needs_resolution(const std::string& m) {
  return m == "discrete-laplace" || m == "discrete-gaussian" || m == "discrete-staircase";
}
inline constexpr const char* kMethods =
    "bins, unbiased, rpwithprior, laplace, discrete-laplace, gaussian, discrete-gaussian, staircase, "
    "discrete-staircase, exponential, rr or rr-with-prior";

/// Stage 2 of the two-stage methods (bins, unbiased, rr-with-prior, rpwithprior), as built from
/// the private release; exactly one of the members is set (rpwithprior: the noisy labels).
struct StageTwo {
  std::string mechanism;  // the kind, as in mechanism files ("rr-on-bins", "unbiased", ...)
  std::optional<RROnBins<double>> rr;
  std::optional<UnbiasedRandomizer<double>> unbiased;
  std::optional<AnyMechanism> rrp;
  std::vector<double> rp_noisy;  // rpwithprior: the noisy label of each of `labels`, in order
};

/// Where the support and the labels of a two-stage method come from.
struct StageInputs {
  const Discretizer<double>& disc;                // public support (with its rounding of labels)
  std::span<const std::int64_t> counts;           // labels counted on disc's support
  std::vector<double>* labels = nullptr;          // rpwithprior: every label, in order (cleared after)
  double grid_lo = 0, grid_hi = 0, grid_res = 0;  // rpwithprior: the public grid
  const FinitePrior<double>* prior = nullptr;     // a PUBLIC prior: no stage 1
};

/// Builds stage 2 of `method` (a two-stage method) with the budget `split`, running stage 1
/// (the private prior: private_histogram() of the counts, or Hist_eps of the labels for
/// rpwithprior) with `gen` unless a public prior is given. For rpwithprior the labels are
/// privatized here as well (Hist_eps needs them all), in order, with `gen`.
/// \throws std::invalid_argument from the builders (bad eps, a solve without a mechanism, ...).
template <typename Loss, typename G>
StageTwo build_stage_two(const std::string& method, const StageInputs& in, const BudgetSplit& split, G& gen,
                         const Loss& loss, const UnbiasedOptions& unbiased_options = {}) {
  StageTwo s;
  const auto& support = in.disc.support();
  const Index k = in.disc.size();
  const double support_lo = support[0], support_hi = support[k - 1];
  if (method == "bins") {
    s.mechanism = "rr-on-bins";
    const BuildRROnBins<double, Loss> build{loss};
    s.rr = in.prior ? build(*in.prior, split.eps_mechanism)
                    : make_two_stage(support, in.counts, split, gen, build).mechanism;
  } else if (method == "unbiased") {
    s.mechanism = "unbiased";
    const BuildOptimalUnbiased build{unbiased_options};
    s.unbiased = in.prior ? build(*in.prior, split.eps_mechanism)
                          : make_two_stage(support, in.counts, split, gen, build).mechanism;
  } else if (method == "rr-with-prior") {
    const auto build = [&](const FinitePrior<double>& p, double eps_mechanism) {
      BaselineSpec spec;
      spec.kind = method;
      spec.eps = eps_mechanism;
      spec.lo = support_lo;
      spec.hi = support_hi;
      spec.prior = p;
      return make_baseline(spec);
    };
    s.rrp = in.prior ? build(*in.prior, split.eps_mechanism)
                     : make_two_stage(support, in.counts, split, gen, build).mechanism;
    s.mechanism = s.rrp->kind();
  } else {  // rpwithprior: Hist_eps noises each label, so stage 1 reads the kept labels
    s.mechanism = "rpwithprior";
    const std::vector<double> edges(support.data(), support.data() + k);
    const HistEpsOptions hist_options{in.grid_lo, in.grid_hi, split.eps_prior, in.grid_res};
    BuildRPWithPrior<double> build;
    build.granularity = in.grid_res;
    std::vector<double>& labels = *in.labels;
    const auto two = make_two_stage(hist_eps(labels, edges, hist_options, gen), split.eps_mechanism, build);
    s.rp_noisy.resize(labels.size());
    two.mechanism.sample(std::span<const double>(labels), std::span<double>(s.rp_noisy), gen);
    labels.clear();
    labels.shrink_to_fit();
  }
  return s;
}

}  // namespace labeldp::cli
