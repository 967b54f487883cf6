// libFuzzer target: mechanism construction from fuzzed parameters. The input's bytes choose a
// prior (1-8 values and weights, ordinary or extreme doubles), eps (mostly 1e-4..1e4, sometimes
// any double) and a mechanism: RR-on-Bins, the optimal unbiased randomizer on a small
// FeasibleOutputSet grid, k-ary RR, RRWithPrior, a baseline by name (make_baseline) or
// RPWithPrior. Construction either throws std::invalid_argument (documented bad input) or
// returns a mechanism that keeps the library's invariants, checked with its own audit
// (core/audit.hpp): the stored and the realized (sampler) tables are eps-DP exactly
// (find_epsilon_violation, realized_satisfies_epsilon), rows sum to 1, samples are finite, and
// the mechanism file it writes loads back (io::load_mechanism) to the same file.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/io/mechanism_file.hpp>
#include <labeldp/mechanisms/randomized_response.hpp>
#include <labeldp/mechanisms/rr_on_bins.hpp>
#include <labeldp/mechanisms/unbiased.hpp>
#include <string>
#include <vector>

#include "fuzz_common.hpp"

namespace {

using labeldp::FiniteMechanism;
using labeldp::Index;

template <typename Derived>
void check_table(const Eigen::MatrixBase<Derived>& P, double eps) {
  FUZZ_CHECK(labeldp::find_epsilon_violation(P, eps).column < 0);
  for (Index i = 0; i < P.rows(); ++i) {
    for (Index j = 0; j < P.cols(); ++j) FUZZ_CHECK(std::isfinite(double(P(i, j))) && P(i, j) >= 0);
    FUZZ_CHECK(std::abs(double(P.row(i).sum()) - 1) <= 1e-9);
  }
}

void check_finite(const FiniteMechanism<double>& m, double eps) {
  check_table(m.probabilities(), eps);
  check_table(m.realized_probabilities(), eps);
  FUZZ_CHECK(labeldp::realized_satisfies_epsilon(m, eps));
}

// A mechanism file the library writes loads back to the same file, and samples finite labels.
// Any error here is a finding: the file was written by the library itself.
void check_file(const std::string& json) {
  try {
    const labeldp::AnyMechanism m = labeldp::io::load_mechanism(json, "<written>");
    FUZZ_CHECK(m.to_json() == labeldp::io::load_mechanism(m.to_json(), "<rewritten>").to_json());
    labeldp::SeededRandom gen(11);
    for (const double y : {0.0, 1.0, -1e9, 1e9}) FUZZ_CHECK(std::isfinite(m.sample(y, gen)));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "a mechanism file the library wrote does not load back: %s\n%s\n", e.what(), json.c_str());
    std::abort();
  }
}

labeldp::FinitePrior<double> make_prior(labeldp_fuzz::Bytes& b) {
  const int k = int(b.range(1, 8));
  std::vector<double> values, weights;
  for (int i = 0; i < k; ++i) {
    values.push_back(b.value());
    const std::uint8_t w = b.u8();
    weights.push_back(w == 255 ? b.raw_double() : double(w % 16));
  }
  return labeldp::FinitePrior<double>::from_weights(values, weights);
}

void run(labeldp_fuzz::Bytes& b) {
  const std::uint8_t which = b.u8() % 6;
  const double eps = b.eps();
  // Every eps the library accepts, down to the smallest: below eps ~ 2^-53, where e^eps rounds to
  // 1, the checks (find_epsilon_violation, realized_satisfies_epsilon) and cap_to_epsilon() accept
  // equal entries and nothing else, so the mechanisms come out label-independent (0-DP).
  switch (which) {
    case 0: {  // RR-on-Bins (`bins`)
      const auto prior = make_prior(b);
      const auto rr = labeldp::optimal_rr_on_bins(prior, eps);
      check_finite(rr.mechanism(), eps);
      check_table(rr.realized_probabilities(), eps);
      check_file(rr.to_json());
      labeldp::SeededRandom gen(3);
      for (Index i = 0; i < rr.num_inputs(); ++i) FUZZ_CHECK(std::isfinite(rr.sample(rr.inputs()[i], gen)));
      break;
    }
    case 1: {  // optimal unbiased (or bias-bounded) on a small grid (`unbiased --grid`)
      // tests/fuzz/findings/unbiased_grid_cap_not_converged.bin is the input on which the old
      // fixed-point cap_to_epsilon() left a stored ratio two ulps above e^eps (issue 13, fixed).
      // Not below eps 1e-5 (known, issue 11): the first master solve is not limited by the time
      // limit (by design: a time limit of 0 still answers with a feasible mechanism), and at eps
      // 2.4e-10 it took 22 s under the fuzzer's instrumentation (0.4 s in a Release build;
      // corpus input unbiased_grid_tiny_eps_first_master.bin). The unbiased LP is ill-conditioned
      // there anyway (outputs ~ 1/eps) and the CLI says so.
      if (eps < 1e-5) break;
      const auto prior = make_prior(b);
      const Index grid = Index(b.range(2, 12));
      labeldp::UnbiasedOptions options;
      options.time_limit = 1.0;
      if (b.u8() % 4 == 0) options.max_bias = b.unit() * 10;
      const auto r = labeldp::optimal_unbiased_grid(prior, eps, grid, options);
      if (r.mechanism.num_outputs() == 0) break;  // no mechanism found: a status, not an error
      check_finite(r.mechanism, eps);
      check_file(labeldp::AnyMechanism::from_finite("unbiased", eps, r.mechanism).to_json());
      break;
    }
    case 2: {  // k-ary randomized response on the prior's values
      const auto prior = make_prior(b);
      const auto m = labeldp::randomized_response(prior.values(), eps);
      check_finite(m, eps);
      check_file(labeldp::AnyMechanism::from_finite("rr", eps, m).to_json());
      break;
    }
    case 3: {  // RRWithPrior
      const auto prior = make_prior(b);
      const auto m = labeldp::rr_with_prior(prior, eps);
      check_finite(m, eps);
      check_file(labeldp::AnyMechanism::from_finite("rr-with-prior", eps, m).to_json());
      break;
    }
    case 4: {  // a baseline by name (`baseline --kind`)
      labeldp::BaselineSpec s;
      const auto& kinds = labeldp::baseline_kinds();
      s.kind = kinds[b.u8() % kinds.size()];
      s.eps = eps;
      s.lo = b.value();
      s.hi = b.u8() % 8 == 0 ? b.value() : s.lo + std::pow(10.0, -3 + 7 * b.unit());
      const std::uint8_t flags = b.u8();
      s.clip = flags & 1;
      s.delta = flags & 2 ? b.unit() : 1e-6;
      if (flags & 4) s.resolution = (s.hi - s.lo) / double(b.range(1, 4096));
      if (flags & 8) s.resolution = b.value();
      if (s.kind == "rr" || s.kind == "rr-with-prior") s.prior = make_prior(b);
      // The exponential mechanism is a (steps + 1)^2 table: keep runs short (its default grid,
      // 1024 steps, takes seconds under the fuzzer's instrumentation, and is built three times).
      if (s.kind == "exponential" && !((s.hi - s.lo) / s.resolution.value_or((s.hi - s.lo) / 1024) <= 64)) break;
      const labeldp::AnyMechanism m = labeldp::make_baseline(s);
      FUZZ_CHECK(m.eps() == eps);
      if (const auto* f = m.finite()) check_finite(*f, eps);
      check_file(m.to_json());
      break;
    }
    case 5: {  // RPWithPrior on [A1, A2] with noise half-width zeta on a grid of step g
      const double a1 = b.value();
      const double a2 = b.u8() % 8 == 0 ? b.value() : a1 + std::pow(10.0, -3 + 6 * b.unit());
      const double zeta = std::pow(10.0, -4 + 7 * b.unit());
      const double g = b.u8() % 8 == 0 ? b.value() : std::pow(10.0, -4 + 6 * b.unit());
      const auto rule = b.u8() % 2 ? labeldp::OutsideRule::Clamp : labeldp::OutsideRule::Uniform;
      const int bits = int(b.range(1, 30));
      const labeldp::RPWithPrior<double> m(a1, a2, zeta, eps, g, rule, bits);
      FUZZ_CHECK(m.realized_epsilon_bound() <= eps);
      if (m.num_outputs() <= 4096) FUZZ_CHECK(m.discretized_epsilon() <= eps);
      labeldp::SeededRandom gen(5);
      for (const double y : {a1, a2, 0.5 * (a1 + a2), a1 - 1e6, a2 + 1e6}) FUZZ_CHECK(std::isfinite(m.sample(y, gen)));
      check_file(labeldp::AnyMechanism("rpwithprior", m).to_json());
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  labeldp_fuzz::Bytes bytes(data, size);
  labeldp_fuzz::expect_valid_or_invalid_argument([&] { run(bytes); });
  return 0;
}
