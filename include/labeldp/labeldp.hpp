/// \file
/// Umbrella header: everything in labeldp. Layers, each using only those above it:
/// core (priors, losses, finite mechanisms, audit, randomness, exact samplers) ->
/// optim (revised simplex, column generation) -> prior (private prior estimation, budget,
/// public discretization) -> mechanisms (RR-on-Bins, optimal LP, unbiased, RPWithPrior,
/// baselines, two-stage) -> io (CSV, JSON).

/// \mainpage labeldp
///
/// Optimal label-differential-privacy mechanisms for regression: given a (privately estimated)
/// prior over sensitive labels, labeldp computes the eps-DP randomizer with the least noisy-label
/// loss, audits its privacy exactly and samples it exactly with a cryptographically secure
/// generator. Header-only C++20 on Eigen 3.4; `#include <labeldp/labeldp.hpp>` includes everything.
/// The README is the user's guide (the `labeldp` program, choosing a mechanism, privacy and
/// security); these pages are the API.
///
/// \section architecture Architecture
///
/// Five layers under `include/labeldp/`; each builds only on the layers above it (the arrows point
/// only down: nothing in core includes optim, nothing in prior includes mechanisms), and a layer's
/// implementation details live in its `detail/` directory and namespace.
///
///     core        priors, losses, finite mechanisms, audit, randomness, exact samplers
///      v
///     optim       revised simplex, column generation
///      v
///     prior       private prior estimation, budget split, public discretization
///      v
///     mechanisms  RR-on-Bins, optimal LP, unbiased, RPWithPrior, two-stage, baselines
///      v
///     io          CSV, JSON, mechanism files
///
/// - **core**: core/concepts.hpp and core/mechanism.hpp, the labeldp::Mechanism concept and
///   labeldp::FiniteMechanism (exact probabilities, expected loss, exact sampling); core/prior.hpp
///   and core/histogram_prior.hpp, labeldp::FinitePrior and labeldp::HistogramPrior; core/loss.hpp,
///   labeldp::SquaredLoss, labeldp::AbsoluteLoss, labeldp::PoissonLogLoss and the
///   labeldp::NoisyLabelLoss concept; core/label_grid.hpp, labeldp::LabelGrid, the public grid of
///   the additive baselines; core/audit.hpp, audit_epsilon(), satisfies_epsilon(),
///   realized_satisfies_epsilon() and cap_to_epsilon(); core/random.hpp, labeldp::SecureRandom (the
///   default, OS-keyed ChaCha20; SIMD blocks in core/detail/chacha20_simd.hpp) and
///   labeldp::SeededRandom (opt-in); core/keyed_random.hpp, labeldp::KeyedRandom and
///   sample_keyed(), re-run-safe noise keyed by the user's secret and the record id; core/sampling.hpp,
///   core/alias_table.hpp and core/clipped_discrete_laplace.hpp, the exact samplers (bernoulli(),
///   uniform_below(), labeldp::DiscreteLaplace, two_sided_geometric(), labeldp::DyadicAliasTable,
///   labeldp::CyclicRandomizedResponse, labeldp::ClippedDiscreteLaplace); core/validate.hpp,
///   core/json_writer.hpp and core/types.hpp, argument checks, 17-digit JSON, Index and Vector.
/// - **optim**: optim/simplex.hpp and optim/simplex_types.hpp, labeldp::optim::RevisedSimplex on a
///   labeldp::optim::LinearProgram with labeldp::optim::SimplexOptions, ending in a
///   labeldp::optim::SolveStatus; optim/column_generation.hpp, the column-generation engine with
///   certified bounds (labeldp::optim::ColumnGenerationOptions).
/// - **prior**: prior/private_histogram.hpp, private_histogram() (counts plus exact discrete
///   Laplace noise); prior/budget.hpp, labeldp::BudgetSplit, split_budget() and theorem7_split();
///   prior/discretize.hpp, labeldp::Discretizer (public clipping and rounding of real labels);
///   prior/hist_eps.hpp, hist_eps(), RPWithPrior's private histogram prior.
/// - **mechanisms**: mechanisms/rr_on_bins.hpp, labeldp::RROnBins and optimal_rr_on_bins();
///   mechanisms/optimal_lp.hpp, optimal_mechanism_lp() over any finite output set;
///   mechanisms/unbiased.hpp (including mechanisms/unbiased_outputs.hpp,
///   mechanisms/unbiased_options.hpp, mechanisms/unbiased_grid.hpp,
///   mechanisms/unbiased_continuous.hpp and mechanisms/unbiased_randomizer.hpp), the optimal
///   unbiased and bias-bounded randomizers and labeldp::UnbiasedRandomizer;
///   mechanisms/rpwithprior.hpp, labeldp::RPWithPrior; mechanisms/two_stage.hpp, make_two_stage(),
///   a private prior and then a mechanism built from it; mechanisms/randomized_response.hpp,
///   mechanisms/additive_noise.hpp, mechanisms/gaussian.hpp and mechanisms/staircase.hpp, the
///   baselines; mechanisms/any_mechanism.hpp, labeldp::AnyMechanism, one value type for all of
///   them, and make_baseline().
/// - **io**: io/csv.hpp, the CSV reader labeldp::io::CsvReader; io/atomic_file.hpp, atomic writes;
///   io/json.hpp and io/json_reader.hpp, 17-digit JSON and the strict JSON reader;
///   io/mechanism_file.hpp, mechanism files (labeldp::io::read_mechanism_file()).
///
/// \section algorithm_map The papers' algorithms
///
/// Ghazi et al., "Regression with Label Differential Privacy", ICLR 2023:
///
/// - Alg. 1, RR-on-Bins: labeldp::RROnBins (mechanisms/rr_on_bins.hpp).
/// - Alg. 2, the optimal bins for a known prior: optimal_rr_on_bins() and solve_rr_on_bins()
///   (mechanisms/rr_on_bins.hpp, exact in O(k) memory); as printed, the tests' O(k^3) reference:
///   labeldp::detail::rr_on_bins_reference() (mechanisms/detail/rr_on_bins_reference.hpp).
/// - Alg. 3, a private prior then RR-on-Bins: make_two_stage() with labeldp::BuildRROnBins,
///   two_stage_privatize() on raw labels (mechanisms/two_stage.hpp).
/// - Alg. 4, the private prior: private_histogram() and private_histogram_of_labels()
///   (prior/private_histogram.hpp).
/// - Theorem 7, the budget split: theorem7_split() (prior/budget.hpp).
/// - LP (2), the optimal mechanism on a finite output set: optimal_mechanism_lp()
///   (mechanisms/optimal_lp.hpp).
/// - Definitions 22 and 26 (Laplace, exponential), 27 (k-ary randomized response), 24 and 25
///   (discrete and continuous staircase), the baselines: labeldp::LaplaceMechanism and
///   labeldp::DiscreteLaplaceMechanism, exponential_mechanism() and labeldp::ExponentialMechanism
///   (mechanisms/additive_noise.hpp); randomized_response() (mechanisms/randomized_response.hpp);
///   labeldp::DiscreteStaircaseMechanism and labeldp::StaircaseMechanism
///   (mechanisms/staircase.hpp).
///
/// Badanidiyuru et al., "Optimal Unbiased Randomizers for Regression with Label Differential
/// Privacy", NeurIPS 2023:
///
/// - Def. 21 and 23, randomized response and eps-debiased randomized response (dbRR):
///   debiased_randomized_response() and debiased_rr_outputs() (mechanisms/unbiased_outputs.hpp).
/// - Alg. 2, FeasibleOutputSet: feasible_output_set() (mechanisms/unbiased_outputs.hpp).
/// - Alg. 1, ComputeOptUnbiasedRand: optimal_unbiased_on_outputs() on a given output set,
///   optimal_unbiased_grid() on the FeasibleOutputSet grid (Alg. 2 then Alg. 1); as printed:
///   optimal_unbiased_reference() (mechanisms/unbiased_grid.hpp).
/// - The optimum over real outputs (at most 2k outputs by Theorem 6, interval patterns by Claim
///   11): optimal_unbiased_continuous() (mechanisms/unbiased_continuous.hpp).
/// - Bias-bounded randomizers, \f$|E[M(y)] - y| \le B\f$ (the paper's future work):
///   labeldp::UnbiasedOptions::max_bias with any of the three solvers above
///   (mechanisms/unbiased_options.hpp).
/// - Unbiased randomized rounding (URR, proof of Lemma 8) and the randomizer it feeds:
///   labeldp::UnbiasedRandomizedRounding (mechanisms/unbiased_outputs.hpp) and
///   labeldp::UnbiasedRandomizer (mechanisms/unbiased_randomizer.hpp).
/// - Alg. 3, LabelRandomizer: make_two_stage() with labeldp::BuildOptimalUnbiased
///   (mechanisms/two_stage.hpp).
///
/// RPWithPrior ("Response Privacy with Prior", ICLR submission):
///
/// - (3.4) with (3.6) or (3.7) outside the interval, Alg. 2: labeldp::RPWithPrior and
///   labeldp::OutsideRule (mechanisms/rpwithprior.hpp).
/// - Lemma 3.5 and Alg. 1, the optimal interval: optimal_interval() (exact, O(m);
///   mechanisms/detail/rpwithprior_interval.hpp); as printed: optimal_interval_reference()
///   (mechanisms/detail/rpwithprior_reference.hpp).
/// - zeta minimizing the expected MSE: choose_zeta() (mechanisms/rpwithprior.hpp).
/// - Alg. 4, Hist_eps: hist_eps(); as printed: hist_eps_paper_nodes() (prior/hist_eps.hpp).
/// - Alg. 3, Hist_eps then RPWithPrior: make_two_stage() with labeldp::BuildRPWithPrior
///   (mechanisms/two_stage.hpp).
///
/// Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020:
///
/// - Alg. 1, Bernoulli(exp(-gamma)) from rational coins: labeldp::bernoulli_exp_neg()
///   (core/bit_pool.hpp).
/// - Alg. 2, the discrete Laplace: labeldp::DiscreteLaplace, O(1) expected time at any scale
///   (core/sampling.hpp).
/// - Alg. 3, the discrete Gaussian, and Theorem 7, its exact delta:
///   labeldp::DiscreteGaussianMechanism and discrete_gaussian_delta() (mechanisms/gaussian.hpp).
///
/// Other baselines: the analytic Gaussian of Balle and Wang 2018
/// (labeldp::AnalyticGaussianMechanism, analytic_gaussian_sigma(), mechanisms/gaussian.hpp), the
/// staircase of Geng and Viswanath 2014 (labeldp::StaircaseMechanism, mechanisms/staircase.hpp) and
/// RRWithPrior of Ghazi et al. 2021 (rr_with_prior(), mechanisms/randomized_response.hpp);
/// make_baseline() builds any baseline by name.
#pragma once

#include "labeldp/version.hpp"

// One group per layer, in layer order.
// clang-format off
#include "labeldp/core/audit.hpp"
#include "labeldp/core/bit_pool.hpp"
#include "labeldp/core/concepts.hpp"
#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/keyed_random.hpp"
#include "labeldp/core/label_grid.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/alias_table.hpp"
#include "labeldp/core/clipped_discrete_laplace.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

#include "labeldp/optim/column_generation.hpp"
#include "labeldp/optim/simplex.hpp"

#include "labeldp/prior/budget.hpp"
#include "labeldp/prior/discretize.hpp"
#include "labeldp/prior/hist_eps.hpp"
#include "labeldp/prior/private_histogram.hpp"

#include "labeldp/mechanisms/additive_noise.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"
#include "labeldp/mechanisms/gaussian.hpp"
#include "labeldp/mechanisms/optimal_lp.hpp"
#include "labeldp/mechanisms/randomized_response.hpp"
#include "labeldp/mechanisms/rpwithprior.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "labeldp/mechanisms/staircase.hpp"
#include "labeldp/mechanisms/two_stage.hpp"
#include "labeldp/mechanisms/unbiased.hpp"

#include "labeldp/io/atomic_file.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/io/json_reader.hpp"
#include "labeldp/io/mechanism_file.hpp"
// clang-format on
