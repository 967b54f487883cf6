// Goodness-of-fit oracles for sampler tests: Pearson's chi-square with its exact p-value
// (regularized upper incomplete gamma) and its z-score, binned against an exact CDF; the
// one-sample Kolmogorov-Smirnov statistic with its asymptotic p-value; and, for the mechanisms
// that add noise on a grid, their noise in grid steps and a Monte Carlo estimate of their loss;
// Bernstein's radius for Monte Carlo means of bounded losses.
// Generic over the mechanism, prior and generator types (no library header needed).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace labeldp::test {

/// Regularized upper incomplete gamma Q(a, x) (Numerical Recipes' series / continued fraction).
inline double gamma_q(double a, double x) {
  if (x < 0 || a <= 0) throw std::invalid_argument("gamma_q: bad arguments");
  if (x == 0) return 1;
  const double gln = std::lgamma(a);
  if (x < a + 1) {
    double ap = a, sum = 1 / a, del = sum;
    for (int n = 0; n < 100000; ++n) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (std::abs(del) < std::abs(sum) * 1e-15) break;
    }
    return 1 - sum * std::exp(-x + a * std::log(x) - gln);
  }
  double b = x + 1 - a, c = 1 / 1e-300, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (std::abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-15) break;
  }
  return std::exp(-x + a * std::log(x) - gln) * h;
}

struct ChiSquare {
  double statistic;
  int dof;
  double p_value;
};

/// Pearson's chi-square test of observed counts against exact probabilities. Cells with expected
/// count below 5 are pooled into one cell. A cell with probability 0 and a positive count yields
/// p_value 0 (impossible outcome observed).
inline ChiSquare chi_square(const std::vector<long long>& observed, const std::vector<double>& probs) {
  if (observed.size() != probs.size()) throw std::invalid_argument("chi_square: size mismatch");
  long long n = 0;
  for (long long o : observed) n += o;
  double stat = 0, pooled_e = 0;
  long long pooled_o = 0;
  int cells = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    const double e = probs[i] * double(n);
    if (probs[i] == 0) {
      if (observed[i] > 0) return {INFINITY, 0, 0.0};
      continue;
    }
    if (e < 5) {
      pooled_e += e;
      pooled_o += observed[i];
      continue;
    }
    stat += (double(observed[i]) - e) * (double(observed[i]) - e) / e;
    ++cells;
  }
  if (pooled_e > 0) {
    stat += (double(pooled_o) - pooled_e) * (double(pooled_o) - pooled_e) / pooled_e;
    ++cells;
  }
  const int dof = std::max(cells - 1, 1);
  return {stat, dof, gamma_q(dof / 2.0, stat / 2.0)};
}

/// chi_square() with every cell's expected count at least 5: cells below (rare outcomes, e.g.
/// probability e^-eps at a large eps) are merged, smallest first, into groups of at least 5, and
/// a remainder below 5 joins the smallest cell of at least 5 (chi_square() pools them into one
/// cell whatever its expected count, which a single rare draw can blow up). A cell of
/// probability 0 observed gives p_value 0. With fewer than two cells left the statistic is 0 and
/// p_value 1.
inline ChiSquare chi_square_grouped(const std::vector<long long>& observed, const std::vector<double>& probs) {
  if (observed.size() != probs.size()) throw std::invalid_argument("chi_square_grouped: size mismatch");
  long long n = 0;
  for (long long o : observed) n += o;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] == 0 && observed[i] > 0) return {INFINITY, 0, 0.0};
    if (probs[i] > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return probs[a] < probs[b]; });
  std::vector<long long> obs;
  std::vector<double> expect;
  double e_acc = 0;
  long long o_acc = 0;
  for (std::size_t i : order) {
    e_acc += probs[i] * double(n);
    o_acc += observed[i];
    if (e_acc >= 5) {
      expect.push_back(e_acc), obs.push_back(o_acc);
      e_acc = 0, o_acc = 0;
    }
  }
  if (e_acc > 0 || o_acc > 0) {
    if (expect.empty()) return {0, 1, 1.0};
    expect.front() += e_acc, obs.front() += o_acc;  // the smallest group of at least 5
  }
  if (expect.size() < 2) return {0, 1, 1.0};
  double stat = 0;
  for (std::size_t c = 0; c < expect.size(); ++c)
    stat += (double(obs[c]) - expect[c]) * (double(obs[c]) - expect[c]) / expect[c];
  const int dof = int(expect.size()) - 1;
  return {stat, dof, gamma_q(dof / 2.0, stat / 2.0)};
}

/// The chi-square statistic as a z-score, \f$(X^2 - dof)/\sqrt{2\,dof}\f$: the sampler tests
/// require z < 6 of a correct sampler and z > 6 of an under-noised mutant.
inline double chi_square_z(const ChiSquare& r) { return (r.statistic - r.dof) / std::sqrt(2.0 * r.dof); }

/// Pearson's chi-square of integer draws against an exact CDF on the cells (-inf, e_0],
/// (e_0, e_1], ..., (e_last, inf) of the sorted `edges`.
template <typename Cdf>
ChiSquare binned_chi_square(const std::vector<std::int64_t>& draws, const std::vector<std::int64_t>& edges, Cdf cdf) {
  std::vector<long long> observed(edges.size() + 1, 0);
  for (std::int64_t z : draws) ++observed[std::size_t(std::lower_bound(edges.begin(), edges.end(), z) - edges.begin())];
  std::vector<double> probs;
  long double prev = 0;
  for (std::int64_t e : edges) {
    const long double c = cdf(e);
    probs.push_back(double(c - prev));
    prev = c;
  }
  probs.push_back(double(1 - prev));
  return chi_square(observed, probs);
}

/// The CDF of an integer distribution given by its pmf, as prefix sums over [-reach, reach]
/// (0 below, 1 from reach on); callable on reals (P(Z <= floor(x))).
template <typename Pmf>
auto cdf_from_pmf(Pmf pmf, std::int64_t reach) {
  std::vector<double> table(std::size_t(2 * reach + 1));
  double acc = 0;
  for (std::int64_t z = -reach; z <= reach; ++z) table[std::size_t(z + reach)] = acc += pmf(z);
  return [table = std::move(table), reach](double x) {
    const double z = std::floor(x);
    return z < double(-reach) ? 0.0 : z >= double(reach) ? 1.0 : table[std::size_t(std::int64_t(z) + reach)];
  };
}

/// Edges of `bins` cells of `width` integer steps centred on 0 (for binned_chi_square(); the two
/// tails beyond them are cells too).
inline std::vector<std::int64_t> centred_edges(std::int64_t width, int bins) {
  const std::int64_t half = width * bins / 2;
  std::vector<std::int64_t> e;
  for (int k = 0; k <= bins; ++k) e.push_back(-half - 1 + k * width);
  return e;
}

/// Pearson's chi-square of `n` draws of a categorical sampler (`draw()` returns an index in
/// [0, probs.size())) against the exact probabilities `probs`.
template <typename Draw>
ChiSquare categorical_chi_square(const std::vector<double>& probs, long long n, Draw draw) {
  std::vector<long long> observed(probs.size(), 0);
  for (long long t = 0; t < n; ++t) {
    const auto i = static_cast<std::size_t>(draw());
    if (i >= observed.size()) throw std::out_of_range("categorical_chi_square: draw out of range");
    ++observed[i];
  }
  return chi_square(observed, probs);
}

struct KolmogorovSmirnov {
  double statistic;
  double p_value;
};

/// One-sample KS test of `samples` against the continuous CDF `cdf`.
template <typename T, typename Cdf>
KolmogorovSmirnov kolmogorov_smirnov(std::vector<T> samples, Cdf cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = double(samples.size());
  double d = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double f = cdf(double(samples[i]));
    d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
  }
  const double t = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * d;
  double p = 0;
  for (int j = 1; j < 200; ++j) p += 2 * ((j % 2) ? 1 : -1) * std::exp(-2.0 * j * j * t * t);
  return {d, std::clamp(p, 0.0, 1.0)};
}

/// The noise of `n` draws M(y) of a grid mechanism and of an under-noised mutant, drawn
/// alternately from `gen`, both in steps of the model's grid from y's grid point:
/// round((M(y) - value(index(y))) / step).
template <typename M, typename Mutant, typename Gen>
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> grid_noise_draws(const M& model, const Mutant& mutant,
                                                                                 double y, int n, Gen gen) {
  const auto& grid = model.grid();
  const double c = grid.value(grid.index(y)), g = grid.step();
  std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> z;
  for (int i = 0; i < n; ++i) {
    z.first.push_back(std::llround((model.sample(y, gen) - c) / g));
    z.second.push_back(std::llround((mutant.sample(y, gen) - c) / g));
  }
  return z;
}

/// True when the batch form `m.sample(in, out, gen)` returns exactly the single draws
/// `m.sample(in[i], gen)` of a copy of `gen` (the same seed), in order.
template <typename M, typename Gen>
bool batch_matches_single(const M& m, const std::vector<double>& in, Gen gen) {
  Gen single = gen;
  std::vector<double> out(in.size());
  m.sample(std::span<const double>(in), std::span<double>(out), gen);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (out[i] != m.sample(in[i], single)) return false;
  return true;
}

/// Bernstein's inequality as a test radius: for the mean of n independent draws of a variable
/// with variance `variance` whose values span at most `range` (so |X - E X| <= range), the
/// deviation t with \f$\Pr[|\bar X - E X| \ge t] \le \delta\f$, i.e. the root of
/// \f$n t^2 = L (2\sigma^2 + 2 R t / 3)\f$, \f$L = \ln(2/\delta)\f$. Unlike a z-score it holds
/// without the central limit theorem, so rare outcomes with a large loss (probability e^-eps
/// at large eps) cannot make a correct sampler fail.
inline double bernstein_radius(double variance, double range, long long n, double delta) {
  if (n <= 0) throw std::invalid_argument("bernstein_radius: n must be positive");
  const double L = std::log(2 / delta), a = range * L / 3;
  return (a + std::sqrt(a * a + 2 * double(n) * variance * L)) / double(n);
}

struct MonteCarlo {
  double mean, se;
};

/// Stratified Monte Carlo estimate of the expected squared error \f$\sum_y p(y) E[(M(y) - y)^2]\f$
/// under `prior`, `per_value` draws per support point from `gen`, with its standard error.
template <typename M, typename Prior, typename Gen>
MonteCarlo monte_carlo_loss(const M& m, const Prior& prior, int per_value, Gen gen) {
  double mean = 0, var = 0;
  for (decltype(prior.size()) i = 0; i < prior.size(); ++i) {
    const double y = prior.value(i);
    double s = 0, s2 = 0;
    for (int k = 0; k < per_value; ++k) {
      const double d = m.sample(y, gen) - y, e = d * d;
      s += e;
      s2 += e * e;
    }
    const double mu = s / per_value, v = std::max(0.0, s2 / per_value - mu * mu);
    mean += prior.probability(i) * mu;
    var += prior.probability(i) * prior.probability(i) * v / per_value;
  }
  return {mean, std::sqrt(var)};
}

/// The discrete Laplace pmf \f$\frac{1-a}{1+a} a^{|z|}\f$, \f$a = e^{-s/t}\f$, written out
/// independently of the library from the noise's rational \f$\gamma = s/t\f$ (`d.s()`, `d.t()`).
template <typename DiscreteLaplaceLike>
long double discrete_laplace_pmf(const DiscreteLaplaceLike& d, long double z) {
  const long double g = static_cast<long double>(d.s()) / static_cast<long double>(d.t()), a = std::exp(-g);
  return (1 - a) / (1 + a) * std::exp(-g * std::fabs(z));
}

/// Bin edges for a fit of two-sided noise of scale `scale`: cells a quarter scale wide over
/// +-8 scales, and every integer in -10..10.
inline std::vector<std::int64_t> two_sided_noise_edges(long double scale) {
  std::vector<std::int64_t> e;
  for (int i = -32; i <= 32; ++i) e.push_back(std::int64_t(std::floor(scale * i / 4)));
  for (int z = -10; z <= 10; ++z) e.push_back(z);
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  return e;
}

}  // namespace labeldp::test
