// The mechanism-file text of each Python constructor (constructors.cpp): the JSON the labeldp
// program prints with --json for the same arguments.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace labeldp::python {

/// `labeldp bins`: the optimal RR-on-Bins (Ghazi et al. 2023, Algorithms 1-2).
std::string rr_on_bins_json(const std::vector<double>& values, const std::vector<double>& probs, double eps,
                            const std::string& loss);
/// `labeldp optimal`: the optimal eps-DP mechanism onto `outputs` (Ghazi et al. 2023, LP (2)).
/// `*warning` is set when the solve stopped at a limit with a feasible, uncertified mechanism.
std::string optimal_json(const std::vector<double>& values, const std::vector<double>& probs, double eps,
                         const std::vector<double>& outputs, const std::string& loss, std::optional<double> time_limit,
                         std::string* warning);
/// `labeldp unbiased`: the optimal unbiased or bias-bounded randomizer (Badanidiyuru et al.
/// 2023, Algorithms 1-2), on a grid of `grid` points or with continuous outputs.
std::string unbiased_json(const std::vector<double>& values, const std::vector<double>& probs, double eps,
                          std::optional<long long> grid, bool continuous, std::optional<double> max_bias,
                          std::optional<double> time_limit, std::string* warning);
/// `labeldp interval`: RPWithPrior on its optimal interval for the histogram prior of cells
/// [lo[i], hi[i]) with masses mass[i].
std::string interval_json(const std::vector<double>& lo, const std::vector<double>& hi, const std::vector<double>& mass,
                          double eps, double zeta, std::optional<double> granularity);
/// `labeldp baseline`: an additive or randomized-response baseline on [lo, hi].
std::string baseline_json(const std::string& kind, double eps, double lo, double hi, double delta,
                          std::optional<double> resolution, bool clip, const std::optional<std::vector<double>>& values,
                          const std::optional<std::vector<double>>& probs);

}  // namespace labeldp::python
