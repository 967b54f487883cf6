// Property tests at scale (issue 13), the finite mechanisms built in closed form. 10,000
// instances in all across tests/property (see test_finite_solvers.cpp for the solvers); here:
//   rr-on-bins (squared, absolute, Poisson)    2,400
//   randomized response (make_baseline "rr")      800
//   rr-with-prior (make_baseline)                 800
//   debiased randomized response (dbRR)           600
//   discrete Laplace, clipped (finite())          600
//   exponential mechanism                         600
//   RPWithPrior on a finite label set             700   (6,500 here, 3,500 in the solvers' file)
// For each: the printed matrix (17 digits, read back) and the table the sampler realizes are
// eps-DP exactly, rows sum to 1 within 1e-9, entries finite and >= 0, the printed file loads
// back, and the expected loss matches the mechanism's own sampler (Monte Carlo, Bernstein
// radius) and the rows. A failure prints `LABELDP_PROPERTY_SEED=<seed>` and the parameters.
#include <catch2/catch.hpp>
#include <labeldp/core/alias_table.hpp>
#include <labeldp/core/histogram_prior.hpp>
#include <labeldp/core/label_grid.hpp>
#include <labeldp/io/mechanism_file.hpp>
#include <labeldp/mechanisms/additive_noise.hpp>
#include <labeldp/mechanisms/any_mechanism.hpp>
#include <labeldp/mechanisms/randomized_response.hpp>
#include <labeldp/mechanisms/rpwithprior.hpp>
#include <labeldp/mechanisms/rr_on_bins.hpp>
#include <labeldp/mechanisms/unbiased_outputs.hpp>

#include "property/property_common.hpp"

using namespace labeldp;
using namespace labeldp::property;

namespace {

constexpr int kDraws = 8000;  // Monte Carlo draws per instance (spread over the labels)

const std::vector<double> kExtremeEps{1e-6, 1e-3, 80, 300, 700, 701, 1000, 1e4};

/// The printed matrix is the stored one, eps-DP exactly; the table the FiniteMechanism of the
/// printed numbers would sample is eps-DP exactly too.
void check_printed(const Instance& in, const Matrix<double>& printed, const FiniteMechanism<double>& stored,
                   Findings& f) {
  check_printed_equals(printed, stored.probabilities(), "printed", f);
  check_matrix(printed, in.eps, "printed matrix", f);
  check_matrix(stored.probabilities(), in.eps, "stored matrix", f);
  check_realized(stored, in.eps, "sampler table", f);
}

/// A file written by to_json() loads back (the loader re-audits it exactly) with the same matrix.
void check_loads(const std::string& json, const Matrix<double>& printed, Findings& f) {
  const AnyMechanism loaded = io::load_mechanism(json, "printed");
  if (const FiniteMechanism<double>* m = loaded.finite()) {
    if (m->probabilities() != printed) f.fail("the loaded mechanism's matrix differs from the printed one");
  } else {
    f.fail("the printed finite mechanism loads as a non-finite one");
  }
}

}  // namespace

TEST_CASE("property: RR-on-Bins, 2400 instances (squared, absolute, Poisson)", "[property][rr_on_bins]") {
  Space space;
  space.losses = {LossKind::Squared, LossKind::Absolute, LossKind::Poisson};
  space.extreme_eps = kExtremeEps;
  const Tally rr_tally =
      run_family("rr-on-bins", 1, 2400, [&](std::uint64_t seed, Instance& in, Findings& f, Tally& tally) {
        Draw d(seed);
        in = make_instance("rr-on-bins", seed, space, d);
        with_loss(in.loss, [&](auto loss) {
          const auto sol = solve_rr_on_bins(in.prior, in.eps, loss);
          ++tally.outcomes[optim::to_string(sol.status)];
          const RROnBins<double>& rr = sol.mechanism;
          in.extra = "bins " + std::to_string(rr.num_outputs());
          const std::string json = rr.to_json();
          const Matrix<double> printed = printed_probabilities(json);
          const FiniteMechanism<double> stored = rr.mechanism();
          check_printed(in, printed, stored, f);
          check_loads(json, printed, f);
          // RR-on-Bins samples from its own CyclicRandomizedResponse (W0 on the bin, W1 elsewhere):
          // rebuilt here, checked exactly, and matched to realized_probabilities().
          const Index bins = rr.num_outputs();
          const CyclicRandomizedResponse crr(bins, table_epsilon(in.eps));
          const auto [w0, w1] = crr.weights();
          if (w0 + detail::u128(bins - 1) * w1 != (detail::u128(1) << 64)) f.fail("W0 + (d-1) W1 != 2^64");
          if (bins > 1) {
            if (!(w1 > 0 && w0 >= w1))
              f.fail("RR-on-Bins weights W0 " + num((long double)w0) + " W1 " + num((long double)w1));
            const long double e = std::exp((long double)in.eps) * (1 - std::ldexp(1.0L, -60));
            if (!((long double)w0 <= (long double)w1 * e))
              f.fail("RR-on-Bins sampler W0/W1 = " + num((long double)w0 / (long double)w1) + " exceeds e^eps");
          }
          const Matrix<double> realized = rr.realized_probabilities();
          for (Index i = 0; i < rr.num_inputs(); ++i)
            for (Index j = 0; j < bins; ++j) {
              const long double w = j == rr.bin_of(i) ? crr.own_probability() : crr.other_probability();
              if (realized(i, j) != double(w)) {
                f.fail("realized_probabilities() differs from the sampler's weights at (" + std::to_string(i) + ", " +
                       std::to_string(j) + ")");
                i = rr.num_inputs();
                break;
              }
            }
          if (find_epsilon_violation(realized, in.eps).column >= 0)
            f.fail("realized_probabilities() (doubles) fail find_epsilon_violation");
          ++tally.monte_carlo;
          check_expected_loss(
              in.prior, in.loss,
              [&](Index i) {
                Row r;
                for (Index j = 0; j < bins; ++j) {
                  r.outputs.push_back(rr.outputs()[j]);
                  r.probs.push_back(j == rr.bin_of(i) ? crr.own_probability() : crr.other_probability());
                }
                return r;
              },
              [&](Index i, SeededRandom& g) { return rr.sample(in.prior.value(i), g); },
              double(rr.expected_loss(in.prior, loss)), kDraws, seed, "rr-on-bins", f);
        });
      });
  CHECK(rr_tally.monte_carlo == rr_tally.instances);  // every instance was sampled and checked
  check_known_fraction(rr_tally, 0);
}

namespace {

/// rr and rr-with-prior through make_baseline (what `labeldp baseline --kind` prints).
void randomized_response_family(const std::string& kind, std::uint64_t tag, int count) {
  Space space;
  space.losses = {LossKind::Squared, LossKind::Absolute, LossKind::Poisson};
  space.extreme_eps = kExtremeEps;
  check_known_fraction(run_family(kind, tag, count,
                                  [&](std::uint64_t seed, Instance& in, Findings& f, Tally& tally) {
                                    Draw d(seed);
                                    in = make_instance(kind, seed, space, d);
                                    BaselineSpec spec;
                                    spec.kind = kind;
                                    spec.eps = in.eps;
                                    spec.prior = in.prior;
                                    const AnyMechanism m = make_baseline(spec);
                                    const FiniteMechanism<double>& stored = *m.finite();
                                    in.extra = "outputs " + std::to_string(stored.num_outputs());
                                    const FiniteMechanism<double> direct =
                                        kind == "rr" ? randomized_response(in.prior.values(), in.eps)
                                                     : rr_with_prior(in.prior, in.eps);
                                    if (direct.probabilities() != stored.probabilities())
                                      f.fail("make_baseline differs from the direct construction");
                                    const std::string json = m.to_json();
                                    const Matrix<double> printed = printed_probabilities(json);
                                    check_printed(in, printed, stored, f);
                                    check_loads(json, printed, f);
                                    ++tally.monte_carlo;
                                    with_loss(in.loss, [&](auto loss) {
                                      check_expected_loss(
                                          in.prior, in.loss, [&](Index i) { return realized_row(stored, i); },
                                          [&](Index i, SeededRandom& g) { return m.sample(in.prior.value(i), g); },
                                          double(stored.expected_loss(in.prior, loss)), kDraws, seed, kind, f);
                                    });
                                  }),
                       0);
}

}  // namespace

TEST_CASE("property: randomized response, 800 instances", "[property][randomized_response]") {
  randomized_response_family("rr", 2, 800);
}

TEST_CASE("property: RRWithPrior, 800 instances", "[property][randomized_response]") {
  randomized_response_family("rr-with-prior", 3, 800);
}

TEST_CASE("property: debiased randomized response, 600 instances", "[property][unbiased]") {
  Space space;
  space.losses = {LossKind::Squared, LossKind::Absolute};
  space.extreme_eps = kExtremeEps;
  check_known_fraction(run_family("dbrr", 4, 600,
                                  [&](std::uint64_t seed, Instance& in, Findings& f, Tally& tally) {
                                    Draw d(seed);
                                    in = make_instance("dbrr", seed, space, d);
                                    const FiniteMechanism<double> m =
                                        debiased_randomized_response(in.prior.values(), in.eps);
                                    const Matrix<double> printed = printed_probabilities(m);
                                    check_printed(in, printed, m, f);
                                    ++tally.monte_carlo;
                                    with_loss(in.loss, [&](auto loss) {
                                      check_expected_loss(
                                          in.prior, in.loss, [&](Index i) { return realized_row(m, i); },
                                          [&](Index i, SeededRandom& g) { return m.sample(in.prior.value(i), g); },
                                          double(m.expected_loss(in.prior, loss)), kDraws, seed, "dbrr", f);
                                    });
                                  }),
                       0);
}

namespace {

/// A public grid for the lattice baselines: N steps of a power-of-two resolution at the
/// instance's location, and a prior of its shape over all grid points.
LabelGrid<double> lattice_instance(const std::string& family, std::uint64_t seed, const Space& space, Instance& in,
                                   Draw& d) {
  in = make_instance(family, seed, space, d);
  const Index n = Index(std::llround(d.log_uniform(1, 60.999)));
  const double res = std::ldexp(1.0, int(d.integer(-3, 1)));
  double lo = 0;
  switch (in.location) {
    case Location::NearZero:
      lo = 0;
      break;
    case Location::NearThousand:
      lo = 1000 - double(n) * res;
      break;
    case Location::Negative:
      lo = -double(n) * res - double(d.integer(0, 100));
      break;
    case Location::Wide:
      lo = 0;
      break;
  }
  const LabelGrid<double> grid = in.location == Location::Wide ? LabelGrid<double>(0, 1000, 1000 / double(n))
                                                               : LabelGrid<double>(lo, lo + double(n) * res, res);
  const Vector<double> v = grid.values();
  const std::vector<double> values(v.data(), v.data() + v.size());
  in.prior = FinitePrior<double>::from_weights(values, shape_weights(in.shape, v.size(), d));
  in.extra = "grid [" + num(grid.lo()) + ", " + num(grid.hi()) + "] N " + std::to_string(grid.steps());
  return grid;
}

}  // namespace

// Known issue (reported; mechanisms/additive_noise.hpp): the closed form of the clipped discrete
// Laplace mechanism's expected loss (detail::grid_laplace_loss) cancels terms of order 1/gamma^3
// and is off by up to 6e-8 relative at eps = 1e-6 (its rows and its sampler agree with each other).
const std::string kLaplaceLoss = "DiscreteLaplaceMechanism::expected_loss() inexact at eps 1e-6";

TEST_CASE("property: discrete Laplace (clipped), 600 instances", "[property][additive_noise]") {
  Space space;
  space.extreme_eps = {1e-6, 1e-3, 80, 300, 700};
  const Tally result =
      run_family("discrete-laplace", 5, 600, [&](std::uint64_t seed, Instance& in, Findings& f, Tally& tally) {
        Draw d(seed);
        const LabelGrid<double> grid = lattice_instance("discrete-laplace", seed, space, in, d);
        const DiscreteLaplaceMechanism<double> m(grid, in.eps, true);
        const FiniteMechanism<double> fm = m.finite();
        check_printed(in, printed_probabilities(fm), fm, f);
        const std::string json = m.to_json();
        io::load_mechanism(json, "printed");  // rebuilt and compared field by field
        // The sampler adds exact discrete Laplace noise exp(-gamma |z|), gamma = s/t: N gamma <= eps.
        const long double n_gamma = (long double)grid.steps() * (long double)m.noise().s() / (long double)m.noise().t();
        if (!(n_gamma <= (long double)in.eps * (1 - std::ldexp(1.0L, -60))))
          f.fail("sampler's N gamma " + num(n_gamma) + " exceeds eps");
        if (!(m.realized_epsilon() <= in.eps))
          f.fail("realized_epsilon() " + num(m.realized_epsilon()) + " exceeds eps");
        // The matrix the sampler realizes (the constant-work table when there is one), exactly.
        const Index n = Index(grid.steps()) + 1;
        if (auto bad =
                exact_column_violation(n, n, in.eps, [&](Index j, Index o) { return m.realized_probability(j, o); }))
          f.fail("the sampler's realized matrix is not eps-DP exactly: " + *bad);
        for (Index j = 0; j < n; ++j) {
          long double sum = 0;
          for (Index o = 0; o < n; ++o) sum += m.realized_probability(j, o);
          if (!(std::abs(sum - 1) <= 1e-15L)) f.fail("realized row " + std::to_string(j) + " sums to " + num(sum));
        }
        ++tally.outcomes[m.constant_work() ? "constant-work table" : "exact sampler"];
        ++tally.monte_carlo;
        Findings loss;
        check_expected_loss(
            in.prior, LossKind::Squared, [&](Index i) { return realized_row(fm, i); },
            [&](Index i, SeededRandom& g) { return m.sample(in.prior.value(i), g); }, double(m.expected_loss(in.prior)),
            kDraws, seed, "discrete-laplace", loss);
        f.absorb(loss, kLaplaceLoss, [&](const std::string& msg) {
          return in.eps < 1e-3 && msg.find("reported expected loss") != std::string::npos;
        });
      });
  check_known_fraction(result, 0.05);
}

TEST_CASE("property: exponential mechanism, 600 instances", "[property][additive_noise]") {
  Space space;
  space.extreme_eps = {1e-6, 1e-3, 80, 300, 700, 1000};
  check_known_fraction(run_family("exponential", 6, 600,
                                  [&](std::uint64_t seed, Instance& in, Findings& f, Tally& tally) {
                                    Draw d(seed);
                                    const LabelGrid<double> grid = lattice_instance("exponential", seed, space, in, d);
                                    const ExponentialMechanism<double> m(grid, in.eps);
                                    const FiniteMechanism<double>& fm = m.finite();
                                    check_printed(in, printed_probabilities(fm), fm, f);
                                    io::load_mechanism(m.to_json(), "printed");
                                    ++tally.monte_carlo;
                                    check_expected_loss(
                                        in.prior, LossKind::Squared, [&](Index i) { return realized_row(fm, i); },
                                        [&](Index i, SeededRandom& g) { return m.sample(in.prior.value(i), g); },
                                        double(m.expected_loss(in.prior)), kDraws, seed, "exponential", f);
                                  }),
                       0);
}

// Known issue (reported to the owner of mechanisms/rpwithprior.hpp): RPWithPrior's sampled rows
// are exact rationals whose ratio bound is met with equality, and finite_mechanism() rounds them
// to doubles to nearest, so its matrix (and the alias table built from it) exceeds e^eps by about
// an ulp in about half of the instances. The sampler itself (bernoulli + uniform_below on the
// lattice) is checked strictly through realized_epsilon_bound() and discretized_epsilon().
const std::string kRPWithPriorRows = "RPWithPrior::finite_mechanism() rows above e^eps by an ulp";

TEST_CASE("property: RPWithPrior on a finite label set, 700 instances", "[property][rpwithprior]") {
  Space space;
  space.max_k = 40;
  space.allow_single = false;
  space.extreme_eps = {1e-3, 80, 300, 700};
  const Tally result =
      run_family("rpwithprior", 7, 700, [&](std::uint64_t seed, Instance& in, Findings& f, Tally& tally) {
        Draw d(seed);
        in = make_instance("rpwithprior", seed, space, d);
        // The histogram's edges are the labels; its masses the prior's (one cell fewer).
        const Index k = in.prior.size();
        std::vector<double> edges(in.prior.values().data(), in.prior.values().data() + k);
        std::vector<double> masses(in.prior.probabilities().data(), in.prior.probabilities().data() + k - 1);
        if (std::all_of(masses.begin(), masses.end(), [](double x) { return x == 0; })) masses.back() = 1;
        const auto hist = HistogramPrior<double>::from_masses(edges, masses);
        const double width = edges.back() - edges.front();
        const double zeta = d.coin(0.5) ? choose_zeta(hist, in.eps).zeta : d.log_uniform(1e-3, 1) * width;
        const OutsideRule rule = d.coin(0.5) ? OutsideRule::Clamp : OutsideRule::Uniform;
        const auto interval = optimal_interval(hist, in.eps, zeta);
        const double g = (interval.a2 - interval.a1 + 2 * zeta) / d.uniform(5, 150);
        const int bits = d.coin(0.7) ? RPWithPrior<double>::kDefaultLatticeBits : int(d.integer(8, 30));
        in.extra = "zeta " + num(zeta) + ", interval [" + num(interval.a1) + ", " + num(interval.a2) + "], g " +
                   num(g) + ", rule " + (rule == OutsideRule::Clamp ? "clamp" : "uniform") + ", lattice bits " +
                   std::to_string(bits);
        std::optional<RPWithPrior<double>> built;
        try {
          built.emplace(interval.a1, interval.a2, zeta, in.eps, g, rule, bits);
        } catch (const std::invalid_argument&) {
          ++tally.outcomes["refused"];  // e.g. zeta below one lattice step: refused with a reason
          return;
        }
        ++tally.outcomes["built"];
        const RPWithPrior<double>& m = *built;
        const FiniteMechanism<double> fm = m.finite_mechanism(edges);
        Findings exact;
        check_printed(in, printed_probabilities(fm), fm, exact);
        f.absorb(exact, kRPWithPriorRows, is_privacy_failure);
        if (!(m.realized_epsilon_bound() <= in.eps))
          f.fail("realized_epsilon_bound() " + num(m.realized_epsilon_bound()) + " > eps");
        if (!(m.discretized_epsilon() <= in.eps * (1 + 1e-12)))
          f.fail("discretized_epsilon() " + num(m.discretized_epsilon()) + " > eps");
        const AnyMechanism loaded = io::load_mechanism(m.to_json(), "printed");
        if (loaded.to_json() != m.to_json()) f.fail("the loaded RPWithPrior differs from the printed one");
        ++tally.monte_carlo;
        check_expected_loss(
            in.prior, LossKind::Squared,
            [&](Index i) {
              Row r;
              const Vector<double> p = m.output_probabilities(in.prior.value(i));
              for (Index j = 0; j < p.size(); ++j) r.outputs.push_back(m.output(j)), r.probs.push_back(p[j]);
              return r;
            },
            [&](Index i, SeededRandom& gen) { return m.sample(in.prior.value(i), gen); },
            double(fm.expected_loss(in.prior)), kDraws, seed, "rpwithprior", f);
      });
  check_known_fraction(result, 0.7);
}
