// The README's main job: privatize the weekly wages of the CPS 1988 survey (28,155 men; the
// sensitive label of an otherwise public record) with RR-on-Bins and a private prior
// (Algorithm 3 of Ghazi et al., ICLR 2023), for a range of privacy budgets, and compare the
// noise with the Laplace mechanism.
//
// Steps, for each total budget eps:
//  1. public discretization: clip wages to [0, 5000] dollars, round to multiples of 50
//     (k = 101 support points; chosen without looking at the data, so it costs no budget);
//  2. eps1 = sqrt(k/n) (Theorem 7; at most eps/2) buys a private histogram of the discretized
//     wages (Algorithm 4 with exact discrete Laplace noise);
//  3. eps2 = eps - eps1 buys the optimal RR-on-Bins for that private prior (Algorithm 2);
//  4. every wage is randomized once with a cryptographically secure generator (SecureRandom).
// The whole release is eps-label-DP.
//
// Columns: the exact expected squared error of the best eps-DP mechanism if the prior were known
// (optimal RR-on-Bins for the empirical prior at the full eps: what Theorem 7 converges to, and
// not itself private); then, for the two-stage release, the exact expected squared error of the noisy labels E[(M(y) -
// y)^2], both against the discretized wage (the mechanism's own loss under the empirical prior) and against the raw
// wage (adds the public rounding and clipping error); the squared error actually observed on
// this run against the raw wages; and the exact expected squared error of the Laplace mechanism
// (wage clipped to [0, 5000], plus Lap(5000/eps), clipped back to [0, 5000], as in the paper's
// Appendix F) against the raw wages.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "labeldp/core/random.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/mechanisms/two_stage.hpp"

namespace {

// E[(clip(y + Z, lo, hi) - y0)^2] for Z ~ Lap(b), y in [lo, hi], and a raw label y0, exactly:
// with a = y - lo, c = hi - y, the clipped noise D = clip(Z, -a, c) has
//   E[D^2] = 2b^2 - b(b + a)e^{-a/b} - b(b + c)e^{-c/b},  E[D] = (b/2)(e^{-a/b} - e^{-c/b}),
// and (y + D - y0)^2 expands around y - y0.
double laplace_clipped_mse(double y, double y0, double lo, double hi, double b) {
  const double a = y - lo, c = hi - y;
  const double ea = std::exp(-a / b), ec = std::exp(-c / b);
  const double second = 2 * b * b - b * (b + a) * ea - b * (b + c) * ec;
  const double first = 0.5 * b * (ea - ec);
  const double shift = y - y0;
  return second + 2 * shift * first + shift * shift;
}

}  // namespace

int main() {
  const std::string path = std::string(LABELDP_DATA_DIR) + "/cps1988.csv";
  const std::vector<double> wages = labeldp::io::read_column_csv(path, "wage");
  const double lo = 0, hi = 5000, step = 50;
  const auto disc = labeldp::Discretizer<double>::grid(lo, hi, step);
  const auto n = labeldp::Index(wages.size());

  // The empirical prior of the discretized wages: used only to REPORT exact losses (it is not
  // private and is not released).
  std::vector<std::int64_t> counts(std::size_t(disc.size()), 0);
  std::size_t clipped = 0;
  for (double w : wages) {
    ++counts[std::size_t(disc.index(w))];
    if (w > hi) ++clipped;
  }
  const std::vector<double> support(disc.support().data(), disc.support().data() + disc.size());
  const auto empirical =
      labeldp::FinitePrior<double>::from_weights(support, std::vector<double>(counts.begin(), counts.end()));

  std::printf(
      "CPS 1988 weekly wages: n = %lld labels, public support [%g, %g] step %g (k = %lld points), "
      "%zu wages (%.2f%%) clipped\n",
      static_cast<long long>(n), lo, hi, step, static_cast<long long>(disc.size()), clipped,
      100.0 * double(clipped) / double(n));
  std::printf(
      "Two-stage RR-on-Bins (Ghazi et al. 2023, Alg. 3) with SecureRandom; Laplace: clip, add Lap(%g/eps), "
      "clip.\n\n",
      hi - lo);
  std::printf("%6s %8s %8s %5s %14s %14s %14s %14s %14s %8s\n", "eps", "eps1", "eps2", "bins", "known prior",
              "E[MSE] disc.", "E[MSE] raw", "MSE observed", "Laplace E[MSE]", "ratio");

  labeldp::SecureRandom gen;
  for (double eps : {0.05, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0}) {
    const auto result = labeldp::two_stage_privatize(disc, std::span<const double>(wages), eps, gen);
    const auto& rr = result.two_stage.mechanism;  // the optimal RR-on-Bins for the private prior
    const auto mech = rr.mechanism();
    const double exact_disc = rr.expected_loss(empirical);
    const double known = labeldp::optimal_rr_on_bins(empirical, eps).expected_loss(empirical);
    double exact_raw = 0, observed = 0, laplace = 0;
    const double b = (hi - lo) / eps;
    for (labeldp::Index i = 0; i < n; ++i) {
      const double y0 = wages[std::size_t(i)];
      const labeldp::Index row = disc.index(y0);
      for (labeldp::Index j = 0; j < mech.num_outputs(); ++j)
        exact_raw += mech.probabilities()(row, j) * (mech.outputs()[j] - y0) * (mech.outputs()[j] - y0);
      const double noisy = result.noisy_labels[std::size_t(i)];
      observed += (noisy - y0) * (noisy - y0);
      laplace += laplace_clipped_mse(std::min(std::max(y0, lo), hi), y0, lo, hi, b);
    }
    exact_raw /= double(n);
    observed /= double(n);
    laplace /= double(n);
    std::printf("%6.2f %8.4f %8.4f %5lld %14.1f %14.1f %14.1f %14.1f %14.1f %8.2f\n", eps,
                result.two_stage.budget.eps_prior, result.two_stage.budget.eps_mechanism,
                static_cast<long long>(rr.num_outputs()), known, exact_disc, exact_raw, observed, laplace,
                laplace / exact_raw);
  }
  std::printf(
      "\nknown prior: optimal RR-on-Bins at eps for the (non-private) empirical prior, vs the discretized "
      "wages;\nE[MSE] disc./raw: exact, of this run's two-stage mechanism vs the discretized/raw wages;\n"
      "ratio = Laplace E[MSE] / two-stage E[MSE] against the raw wages (higher: RR-on-Bins better).\n");
  return 0;
}
