// Goodness-of-fit oracles for sampler tests: Pearson's chi-square with its exact p-value
// (regularized upper incomplete gamma), and the one-sample Kolmogorov-Smirnov statistic with its
// asymptotic p-value.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
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

struct KolmogorovSmirnov {
  double statistic;
  double p_value;
};

/// One-sample KS test of `samples` against the continuous CDF `cdf`.
template <typename Cdf>
KolmogorovSmirnov kolmogorov_smirnov(std::vector<double> samples, Cdf cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = double(samples.size());
  double d = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double f = cdf(samples[i]);
    d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
  }
  const double t = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * d;
  double p = 0;
  for (int j = 1; j < 200; ++j) p += 2 * ((j % 2) ? 1 : -1) * std::exp(-2.0 * j * j * t * t);
  return {d, std::clamp(p, 0.0, 1.0)};
}

}  // namespace labeldp::test
