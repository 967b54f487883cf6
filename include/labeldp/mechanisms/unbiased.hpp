/// \file
/// Optimal unbiased label randomizers (Badanidiyuru, Ghazi, Kamath, Kumar, Leeman, Manurangsi,
/// Varadarajan, Zhang: "Optimal Unbiased Randomizers for Regression with Label Differential
/// Privacy", NeurIPS 2023), computed exactly and fast, and extended past the paper:
///
/// - FeasibleOutputSet (Alg. 2), debiased randomized response (dbRR, Def. 23), unbiased
///   randomized rounding (URR, proof of Lemma 8);
/// - ComputeOptUnbiasedRand (Alg. 1) on any finite output set, by column generation over
///   staircase columns (Kairouz, Oh and Viswanath 2016: the extreme rays of the eps-DP cone): 2k equality rows instead
///   of the paper's \f$n k^2\f$-row LP;
/// - the exact optimum with outputs anywhere on the real line (no grid), by exact pricing of
///   (pattern, real output) columns; it uses at most 2k outputs (Theorem 6) and its loss is
///   never above any grid's;
/// - the bias-bounded randomizer \f$|E[M(y)] - y| \le B\f$ (the paper's "future work"): B = 0
///   is the unbiased one; for large B the loss falls to RR-on-Bins's optimum;
/// - LabelRandomizer (Alg. 3) given a privately estimated prior.
///
/// Losses: the paper optimizes \f$g(\hat y, y) = (\hat y - y)^2 / 2\f$. The solvers here take a
/// core loss (SquaredLoss \f$(\hat y - y)^2\f$ by default, or AbsoluteLoss); scaling g by 1/2
/// changes no minimizer, so the mechanisms are the paper's. Every `expected_loss` reported here
/// is \f$\sum_y p_y E[\ell(M(y), y)]\f$ with the loss as given (for SquaredLoss, twice the paper's
/// \f$\mathcal{G}(M; P)\f$; this is the sense of the CLI contract's `expected_loss`).
///
/// This header includes the parts, one concept each:
/// - unbiased_outputs.hpp: dbRR (Def. 23), FeasibleOutputSet (Alg. 2), URR (Lemma 8);
/// - unbiased_options.hpp: UnbiasedOptions, ContinuousMethod, UnbiasedResult;
/// - unbiased_grid.hpp: Alg. 1 on a finite output set or the Alg. 2 grid, and the slow reference;
/// - unbiased_continuous.hpp: the optimum over real outputs (unbiased or bias-bounded);
/// - unbiased_randomizer.hpp: UnbiasedRandomizer and LabelRandomizer (Alg. 3);
/// - detail/unbiased_master.hpp (the staircase master), detail/unbiased_finish.hpp (master
///   columns to a certified mechanism, through detail/lp_columns.hpp), detail/unbiased_pricing.hpp,
///   detail/unbiased_lp.hpp, detail/unbiased_barrier.hpp, detail/interval_bias.hpp, detail/staircase_barrier.hpp.
#pragma once

#include "labeldp/mechanisms/unbiased_continuous.hpp"
#include "labeldp/mechanisms/unbiased_grid.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_outputs.hpp"
#include "labeldp/mechanisms/unbiased_randomizer.hpp"
