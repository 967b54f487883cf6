/// \file
/// Umbrella header: everything in labeldp. Layers, each using only those above it:
/// core (priors, losses, finite mechanisms, audit, randomness, exact samplers) ->
/// optim (revised simplex, column generation) -> prior (private prior estimation, budget,
/// public discretization) -> mechanisms (RR-on-Bins, optimal LP, unbiased, RPWithPrior,
/// baselines, two-stage) -> io (CSV, JSON).
#pragma once

#include "labeldp/version.hpp"

// One group per layer, in layer order.
// clang-format off
#include "labeldp/core/audit.hpp"
#include "labeldp/core/concepts.hpp"
#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/json_writer.hpp"
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
