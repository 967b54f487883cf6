/// \file
/// ClippedDiscreteLaplace: clipped discrete Laplace noise on a grid {0..N} as one constant-work
/// dyadic alias table (core/alias_table.hpp), audited exactly against eps when built.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "labeldp/core/alias_table.hpp"
#include "labeldp/core/sampling.hpp"

namespace labeldp {

/// The clipped discrete Laplace mechanism on the grid {0, ..., N} sampled with **constant work
/// and a label-independent memory access**: output \f$\mathrm{clip}(y + Z, 0, N)\f$ where the
/// offset \f$Z \in [-N, N]\f$ comes from a one-row DyadicAliasTable (one 64-bit word, one entry,
/// one comparison), and the label enters through one addition and two conditional clamps.
///
/// Only \f$\mathrm{clip}(y+Z)\f$ matters for y in [0, N], so the two-sided geometric
/// \f$\Pr[Z = z] \propto \alpha^{|z|}\f$ is folded at \f$\pm N\f$ (the tails' mass on
/// \f$\pm N\f$) without changing the mechanism. Its integer weights \f$W_z\f$ (total
/// \f$2^{64}\f$) are floors of \f$2^{64}\Pr[Z = z]\f$ with \f$\alpha = e^{-\varepsilon(1-\delta)/N}\f$,
/// the remainder added to the tails (the safe direction: it lowers the boundary outputs'
/// ratios), and the realized mechanism is then audited **exactly** in integer arithmetic: for
/// every output, the largest probability over inputs is at most L times the smallest, L a
/// double two ulps below `std::exp(eps)` (interior outputs: sliding windows of N + 1 weights;
/// outputs 0 and N: prefix and suffix sums). \f$\delta\f$ starts at \f$2^{-40}\f$ and doubles
/// until the audit passes (a slightly wider noise: never less private).
///
/// \code{.cpp}
/// labeldp::ClippedDiscreteLaplace noise(100, 1.0);   // grid {0..100}, eps = 1 over its range
/// labeldp::SecureRandom gen;
/// labeldp::Index out = noise(37, gen);                // clip(37 + Z, 0, 100)
/// \endcode
class ClippedDiscreteLaplace {
 public:
  ClippedDiscreteLaplace() = default;

  /// \param steps N >= 1, the grid {0..N} (sensitivity N grid steps).
  /// \param eps privacy parameter, finite and > 0.
  /// \throws std::invalid_argument for a bad eps or N (N < 1 or 2N + 1 >= 2^32), or when no
  ///         table with 2^-64 resolution passes the audit (eps so large that the smallest
  ///         weight rounds to 0).
  ClippedDiscreteLaplace(Index steps, double eps) : m_steps(steps), m_eps(eps) {
    init(steps > 0 ? static_cast<long double>(eps) / static_cast<long double>(steps) : 1, std::ldexp(1.0L, -40), 0.5L);
  }

  /// The same table for a given noise ratio \f$\alpha = e^{-\gamma}\f$ per grid step (e.g. a
  /// DiscreteLaplace's exact \f$\gamma = s/t\f$ with \f$N\gamma < \varepsilon\f$), so that it
  /// realizes that distribution up to the 2^-64 rounding of its weights (never widened).
  /// \throws std::invalid_argument as above (also when that table fails the exact audit against
  ///         eps: for \f$e^{-N\gamma}\f$ near or below 2^-64), or for \f$\gamma\f$ not finite and > 0.
  ClippedDiscreteLaplace(Index steps, double eps, long double gamma) : m_steps(steps), m_eps(eps) {
    if (!(gamma > 0 && gamma < std::numeric_limits<long double>::infinity()))
      detail::fail_parameter("gamma", "must be finite and > 0", double(gamma));
    init(gamma, 0, 0);
  }

  /// N: the grid is {0..N}.
  Index steps() const { return m_steps; }
  /// The privacy parameter eps.
  double eps() const { return m_eps; }
  /// \f$\Pr[Z = z]\f$ for z in [-N, N] as sampled (\f$W_z / 2^{64}\f$, tails folded at \f$\pm N\f$).
  long double offset_probability(Index z) const {
    return std::ldexp(static_cast<long double>(m_weights[std::size_t(z + m_steps)]), -64);
  }
  /// \f$\Pr[\mathrm{output} = o \mid y]\f$ as sampled, for y, o in [0, N].
  long double probability(Index y, Index o) const {
    detail::u128 w = 0;
    if (o > 0 && o < m_steps) w = m_weights[std::size_t(o - y + m_steps)];
    if (o == 0)
      for (Index z = -m_steps; z <= -y; ++z) w += m_weights[std::size_t(z + m_steps)];
    if (o == m_steps)
      for (Index z = m_steps - y; z <= m_steps; ++z) w += m_weights[std::size_t(z + m_steps)];
    return std::ldexp(static_cast<long double>(w), -64);
  }

  /// A grid index in [0, N]: clip(y + Z, 0, N). One 64-bit word.
  /// \pre 0 <= y <= N.
  template <std::uniform_random_bit_generator G>
  Index operator()(Index y, G& gen) const {
    Index o = y + m_table(0, gen) - m_steps;
    o = o < 0 ? 0 : o;
    return o > m_steps ? m_steps : o;
  }

 private:
  // The table for alpha = e^{-rate (1 - delta)}, delta = first_delta, then 2^-40, doubling while
  // below max_delta, until the exact audit passes.
  void init(long double rate, long double first_delta, long double max_delta) {
    validate_epsilon(m_eps);
    if (m_steps < 1 || std::uint64_t(2 * m_steps + 1) >= (std::uint64_t(1) << 32))
      detail::fail_parameter("steps", "must be in [1, 2^31 - 1)", double(m_steps));
    double L = std::exp(m_eps);
    if (!(L < std::numeric_limits<double>::infinity())) L = std::numeric_limits<double>::max();
    L = std::max(std::nextafter(std::nextafter(L, 0.0), 0.0), 1.0);  // ratio 1 is eps-DP for every eps
    m_bound = detail::to_dyadic(static_cast<long double>(L), false);
    for (long double delta = first_delta;
         delta == first_delta || delta<max_delta; delta = delta> 0 ? 2 * delta : std::ldexp(1.0L, -40)) {
      build(rate * (1 - delta));
      if (audit()) {
        m_table = DyadicAliasTable::from_weights(1, 2 * m_steps + 1, m_weights);
        return;
      }
    }
    throw std::invalid_argument("clipped discrete Laplace: no table with 2^-64 resolution is " +
                                detail::format_number(m_eps) + "-DP on " + std::to_string(m_steps + 1) +
                                " grid points (eps too large: the smallest probabilities round to 0)");
  }

  void build(long double rate) {
    using detail::u128;
    const Index N = m_steps;
    const long double alpha = std::exp(-rate);
    // Pr[Z = z] = c alpha^|z| for |z| < N, tails alpha^N / (1 + alpha) on each of +-N.
    const long double c = (1 - alpha) / (1 + alpha);
    const long double two64 = std::ldexp(1.0L, 64);
    m_weights.assign(std::size_t(2 * N + 1), 0);
    u128 sum = 0;
    for (Index z = -N; z <= N; ++z) {
      const Index a = z < 0 ? -z : z;
      const long double p = a == N ? std::pow(alpha, static_cast<long double>(N)) / (1 + alpha)
                                   : c * std::pow(alpha, static_cast<long double>(a));
      const long double scaled = std::floor(std::min(two64, p * two64));
      const u128 w = scaled >= two64 ? (u128(1) << 64) : u128(static_cast<std::uint64_t>(scaled));
      m_weights[std::size_t(z + N)] = w;
      sum += w;
    }
    if (sum > (u128(1) << 64)) {
      // Long-double roundoff of the probabilities: take the excess (a few units) from W_0, the
      // largest weight, which is only ever the larger side of a ratio (the safe direction).
      m_weights[std::size_t(N)] -= sum - (u128(1) << 64);
      return;
    }
    const u128 rest = (u128(1) << 64) - sum;
    m_weights.front() += rest / 2;
    m_weights.back() += rest - rest / 2;
  }

  // Exact eps-DP check of the realized (N+1) x (N+1) matrix, O(N).
  bool audit() const {
    using detail::u128;
    const Index N = m_steps;
    const auto W = [&](Index z) { return m_weights[std::size_t(z + N)]; };
    auto ratio_ok = [&](u128 hi, u128 lo) { return detail::mul_le(hi, detail::Dyadic{1, 0}, lo, m_bound); };
    // Output 0: sum_{z=-N}^{-y} W_z, largest at y = 0, smallest at y = N; output N mirrored.
    u128 left = 0, right = 0;
    for (Index z = -N; z <= 0; ++z) left += W(z);
    for (Index z = 0; z <= N; ++z) right += W(z);
    if (!ratio_ok(left, W(-N)) || !ratio_ok(right, W(N))) return false;
    // Interior o in [1, N-1]: the weights W_{o-N} .. W_o (sliding windows of N + 1).
    if (N >= 2) {
      std::vector<Index> maxq, minq;  // monotone deques as vectors with a head index
      std::size_t maxh = 0, minh = 0;
      for (Index z = -N + 1; z <= N - 1; ++z) {
        while (maxq.size() > maxh && W(maxq.back()) <= W(z)) maxq.pop_back();
        maxq.push_back(z);
        while (minq.size() > minh && W(minq.back()) >= W(z)) minq.pop_back();
        minq.push_back(z);
        const Index o = z;  // the window ending at z is output o = z (inputs y = 0..N)
        if (o < 1) continue;
        while (maxq[maxh] < o - N) ++maxh;
        while (minq[minh] < o - N) ++minh;
        if (!ratio_ok(W(maxq[maxh]), W(minq[minh]))) return false;
      }
    }
    return true;
  }

  Index m_steps = 1;
  double m_eps = 1;
  detail::Dyadic m_bound;
  std::vector<detail::u128> m_weights;
  DyadicAliasTable m_table;
};

}  // namespace labeldp
