/// \file
/// Constant-work exact samplers on integer alias tables whose weights sum to \f$2^{64}\f$: one
/// 64-bit word per draw, one table entry, one comparison, whatever the label (see
/// core/sampling.hpp for the work of every sampler). DyadicAliasTable is the sampler of every
/// FiniteMechanism; CyclicRandomizedResponse (randomized response over d values, the sampler
/// of RR-on-Bins) and ClippedDiscreteLaplace (core/clipped_discrete_laplace.hpp) build
/// on it. Rounding to integers never raises a column's max/min ratio, and the tables are
/// checked exactly (dyadic arithmetic below).
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

#include "labeldp/core/sampling.hpp"

namespace labeldp {

namespace detail {

/// A non-negative number \f$m \cdot 2^e\f$ with an integer \f$m < 2^{64}\f$.
struct Dyadic {
  u128 mant = 0;
  int exp = 0;
};

inline int bit_width_u128(u128 v) {
  const std::uint64_t hi = std::uint64_t(v >> 64);
  return hi ? 64 + int(std::bit_width(hi)) : int(std::bit_width(std::uint64_t(v)));
}

/// `x` >= 0 as a Dyadic with a 64-bit mantissa, rounded up or down (exact where long double
/// has at most 64 significant bits, as on x86-64 and wherever it is a double).
inline Dyadic to_dyadic(long double x, bool round_up) {
  if (!(x > 0)) return {};
  int e = 0;
  const long double f = std::frexp(x, &e);  // [0.5, 1)
  const long double scaled = std::ldexp(f, 64);
  const long double r = round_up ? std::ceil(scaled) : std::floor(scaled);
  if (r >= std::ldexp(1.0L, 64)) return {u128(1) << 63, e - 63};
  return {u128(static_cast<std::uint64_t>(r)), e - 64};
}

/// \f$X 2^{e_x} \le Y 2^{e_y}\f$, exactly.
inline bool scaled_le(u128 x, int ex, u128 y, int ey) {
  if (x == 0) return true;
  if (y == 0) return false;
  const int lx = bit_width_u128(x) + ex, ly = bit_width_u128(y) + ey;
  if (lx != ly) return lx < ly;
  if (ex > ey)
    x <<= (ex - ey);  // both now have the same bit width (<= 128)
  else
    y <<= (ey - ex);
  return x <= y;
}

/// \f$b \cdot lo \le a \cdot hi\f$ exactly, for integers a, b <= 2^64.
inline bool mul_le(u128 b, Dyadic lo, u128 a, Dyadic hi) { return scaled_le(b * lo.mant, lo.exp, a * hi.mant, hi.exp); }

/// The shift of dyadic_weights() (see there): moves the common weight of the columns with
/// \f$a_j = b_j\f$ by whole units so that every row's reach \f$[\sum_j lo_{ij}, \sum_j hi_{ij}]\f$
/// contains \f$2^{64}\f$, when one shift does it for all rows (else nothing changes and the row
/// fix reports the row). Sums are offset by \f$B = (d + 1) 2^{64}\f$ to stay unsigned.
inline void shift_common_columns(std::vector<u128>& W, std::vector<u128>& col_a, std::vector<u128>& col_b,
                                 const std::vector<bool>& constrained, std::size_t K, std::size_t D, u128 total) {
  std::vector<std::size_t> common;
  for (std::size_t j = 0; j < D; ++j)
    if (constrained[j] && col_a[j] == col_b[j]) common.push_back(j);
  if (common.empty()) return;
  const u128 B = u128(D + 1) * total;
  u128 t_lo = 0, t_hi = ~u128(0);
  for (std::size_t i = 0; i < K; ++i) {
    u128 lo = 0, hi = 0;
    for (std::size_t j = 0; j < D; ++j) {
      const u128 w = W[i * D + j];
      lo += constrained[j] ? col_a[j] : (w > 0 ? 1 : 0);
      hi += constrained[j] ? col_b[j] : (w > 0 ? total : 0);
    }
    t_lo = std::max(t_lo, total + B - hi);
    t_hi = std::min(t_hi, total + B - lo);
  }
  if (t_lo > t_hi || (t_lo <= B && B <= t_hi)) return;  // impossible, or not needed
  const bool up = t_lo > B;
  u128 units = up ? t_lo - B : B - t_hi;
  for (std::size_t round = 0; units > 0 && round < 2; ++round)
    for (const std::size_t j : common) {
      if (units == 0) break;
      const u128 room = up ? total - col_a[j] : col_a[j] - 1;
      const u128 step = std::min(units, round == 0 ? std::min<u128>(room, 1) : room);
      col_a[j] = col_b[j] = up ? col_a[j] + step : col_a[j] - step;
      units -= step;
    }
  for (const std::size_t j : common)
    for (std::size_t i = 0; i < K; ++i) W[i * D + j] = col_a[j];
}

/// Integer weights, every row summing to exactly \f$2^{64}\f$, for the rows of a non-negative
/// k x d matrix (row-major result). Row i targets \f$r_{ij} = 2^{64} P_{ij} / S_i\f$ (S_i the
/// row's long-double sum: the probabilities a per-row sampler realizes), and the rounding never
/// raises a column's max/min ratio: in column j, with \f$lo_j, hi_j\f$ the smallest and largest
/// targets, every weight lies in \f$[a_j, b_j]\f$ with \f$a_j = \lceil lo_j \rceil\f$ and
/// \f$b_j \ge \lfloor hi_j \rfloor\f$ the largest integer with \f$b_j\, lo_j \le a_j\, hi_j\f$
/// (checked exactly), so the realized ratio is at most \f$hi_j / lo_j\f$: whatever eps-DP
/// guarantee the rows over their sums meet (cap_to_epsilon() in audit.hpp), the integer table
/// meets it too. Zero targets stay 0 and positive ones stay positive (at least one unit, 2^-64);
/// a column that is 0 in some rows and positive in others (not eps-DP for any eps) is
/// unconstrained elsewhere. Each row is then brought to the total by whole units: a deficit
/// goes first to its largest fractional parts, an excess comes first from its smallest, then
/// in bulk from the entries with the most room within their column's bounds (a few units per
/// row: every entry ends within about d units of its target).
/// \throws std::invalid_argument when some row cannot reach the total within those bounds (a
///         row at its columns' upper bounds everywhere; then no per-column ratio-preserving
///         table with a common dyadic total exists near the matrix).
template <typename Derived>
std::vector<u128> dyadic_weights(const Eigen::MatrixBase<Derived>& P) {
  using LD = long double;
  const Index k = P.rows(), d = P.cols();
  const std::size_t K = std::size_t(k), D = std::size_t(d);
  const u128 total = u128(1) << 64;
  const LD two64 = std::ldexp(LD(1), 64);
  std::vector<LD> r(K * D);
  for (std::size_t i = 0; i < K; ++i) {
    LD sum = 0;
    for (std::size_t j = 0; j < D; ++j) sum += LD(P(Index(i), Index(j)));
    if (!(sum > 0)) throw std::invalid_argument("row " + std::to_string(i) + " has no positive probability");
    for (std::size_t j = 0; j < D; ++j) r[i * D + j] = std::min(two64, LD(P(Index(i), Index(j))) / sum * two64);
  }
  auto floor_u = [&](LD x) { return x >= two64 ? total : u128(static_cast<std::uint64_t>(std::floor(x))); };
  auto ceil_u = [&](LD x) { return std::ceil(x) >= two64 ? total : u128(static_cast<std::uint64_t>(std::ceil(x))); };
  std::vector<u128> W(K * D), col_a(D, 0), col_b(D, 0);  // bounds of the constrained columns
  std::vector<Dyadic> col_lo(D), col_hi(D);
  std::vector<bool> constrained(D, false);

  // All rows equal (one input, or a data-independent mechanism): round one row, copy it.
  bool identical = true;
  for (std::size_t i = 1; i < K && identical; ++i)
    for (std::size_t j = 0; j < D && identical; ++j) identical = r[i * D + j] == r[j];
  const std::size_t rows_to_fix = identical ? 1 : K;
  for (std::size_t j = 0; j < D; ++j) {
    LD lo = r[j], hi = r[j];
    for (std::size_t i = 1; i < K; ++i) lo = std::min(lo, r[i * D + j]), hi = std::max(hi, r[i * D + j]);
    u128 a = 0, b = 0;
    if (!identical && lo > 0) {
      constrained[j] = true;
      col_lo[j] = to_dyadic(lo, true);  // the ratio hi/lo rounded down: the safe direction
      col_hi[j] = to_dyadic(hi, false);
      a = std::max<u128>(1, ceil_u(lo));
      if (hi == lo) {
        b = a;
      } else {
        b = std::min<u128>(total, floor_u(LD(a) * (hi / lo)));
        while (b > a && !mul_le(b, col_lo[j], a, col_hi[j])) --b;
        while (b < total && mul_le(b + 1, col_lo[j], a, col_hi[j])) ++b;
      }
    }
    for (std::size_t i = 0; i < rows_to_fix; ++i) {
      const std::size_t at = i * D + j;
      const u128 w = floor_u(r[at]);
      if (constrained[j])
        W[at] = std::min(std::max(w, a), b);
      else
        W[at] = r[at] > 0 ? std::max<u128>(w, 1) : 0;  // keeps the support: positive stays >= 1 unit
    }
    col_a[j] = a;
    col_b[j] = b;
  }
  // Columns whose bounds meet (a_j = b_j: all their targets within a unit) hold one common
  // weight, and any common weight keeps their ratio at 1: when some row cannot reach the total
  // within its bounds (rows that differ by less than a unit everywhere), those columns move
  // together by whole units, which moves every row's reach by the same amount.
  if (!identical) shift_common_columns(W, col_a, col_b, constrained, K, D, total);
  // An entry's bounds: its column's [a, b] when constrained, else [1, 2^64] if positive, {0} if 0.
  auto lower = [&](std::size_t at, std::size_t j) -> u128 { return constrained[j] ? col_a[j] : (r[at] > 0 ? 1 : 0); };
  auto upper = [&](std::size_t at, std::size_t j) -> u128 {
    return constrained[j] ? col_b[j] : (r[at] > 0 ? total : 0);
  };

  std::vector<std::size_t> order(D);
  for (std::size_t i = 0; i < rows_to_fix; ++i) {
    u128* w = &W[i * D];
    const LD* target = &r[i * D];
    std::vector<u128> lo_v(D), hi_v(D);
    for (std::size_t j = 0; j < D; ++j) lo_v[j] = lower(i * D + j, j), hi_v[j] = upper(i * D + j, j);
    const u128* lo = lo_v.data();
    const u128* hi = hi_v.data();
    u128 sum = 0;
    for (std::size_t j = 0; j < D; ++j) sum += w[j];
    auto frac = [&](std::size_t j) { return target[j] - LD(w[j]); };  // exact in long double
    if (sum < total) {
      u128 deficit = total - sum;
      // Largest fractional parts first (largest-remainder rounding), then the most room.
      for (std::size_t j = 0; j < D; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return frac(x) > frac(y); });
      for (std::size_t j : order) {
        if (deficit == 0) break;
        if (frac(j) > 0 && w[j] < hi[j]) ++w[j], --deficit;
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t x, std::size_t y) { return hi[x] - w[x] > hi[y] - w[y]; });
      for (std::size_t j : order) {
        if (deficit == 0) break;
        const u128 add = std::min(deficit, hi[j] - w[j]);
        w[j] += add;
        deficit -= add;
      }
      if (deficit != 0)
        throw std::invalid_argument("row " + std::to_string(i) +
                                    " cannot be rounded to integer weights with the common total 2^64 without "
                                    "raising some column's max/min ratio (every entry is at its column's bound)");
    } else if (sum > total) {
      u128 excess = sum - total;
      for (std::size_t j = 0; j < D; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return frac(x) < frac(y); });
      for (std::size_t j : order) {
        if (excess == 0) break;
        if (w[j] > lo[j]) --w[j], --excess;
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t x, std::size_t y) { return w[x] - lo[x] > w[y] - lo[y]; });
      for (std::size_t j : order) {
        if (excess == 0) break;
        const u128 sub = std::min(excess, w[j] - lo[j]);
        w[j] -= sub;
        excess -= sub;
      }
      if (excess != 0)
        throw std::invalid_argument("row " + std::to_string(i) +
                                    " cannot be rounded to integer weights with the common total 2^64 without "
                                    "raising some column's max/min ratio (every entry is at its column's bound)");
    }
  }
  if (identical)
    for (std::size_t i = 1; i < K; ++i)
      std::copy(W.begin(), W.begin() + std::ptrdiff_t(D), W.begin() + std::ptrdiff_t(i * D));

  // Re-audit what was built, exactly: rows sum to 2^64, zeros stayed zeros, and no column's
  // max/min ratio grew.
  for (std::size_t i = 0; i < K; ++i) {
    u128 sum = 0;
    for (std::size_t j = 0; j < D; ++j) {
      sum += W[i * D + j];
      if (r[i * D + j] == 0 && W[i * D + j] != 0) throw std::logic_error("dyadic_weights: a zero became positive");
    }
    if (sum != total) throw std::logic_error("dyadic_weights: a row does not sum to 2^64");
  }
  for (std::size_t j = 0; j < D; ++j) {
    if (!constrained[j]) continue;
    u128 wmin = total, wmax = 0;
    for (std::size_t i = 0; i < K; ++i) wmin = std::min(wmin, W[i * D + j]), wmax = std::max(wmax, W[i * D + j]);
    if (!mul_le(wmax, col_lo[j], wmin, col_hi[j]))
      throw std::logic_error("dyadic_weights: column " + std::to_string(j) + "'s ratio grew");
  }
  return W;
}

}  // namespace detail

/// Exact categorical sampling of the rows of a matrix with **constant work per draw**: every
/// draw of every row takes exactly one 64-bit word from the generator, one table entry and one
/// comparison, whatever the row (so the number of generator calls and branches cannot reveal
/// which row -- which label -- was sampled).
///
/// Every row's integer weights sum to the same \f$2^{64}\f$ (detail::dyadic_weights(): rounding
/// that never raises a column's max/min ratio, so eps-DP rows stay eps-DP as realized), and each
/// row gets a Walker alias table over \f$m = 2^b \ge d\f$ columns of capacity \f$2^{64-b}\f$
/// (columns beyond d are all alias). A draw takes one word x: its top b bits pick the column
/// and the whole word is compared with the column's cut, so outcome j is returned with
/// probability exactly \f$W_{ij}/2^{64}\f$ (no rejection, no modulo, no floating point).
///
/// What is not constant: the table row is addressed by the row index, so a cache-timing
/// observer of the same machine could learn which row's memory was touched.
///
/// \code{.cpp}
/// labeldp::Matrix<> P(2, 2);
/// P << 0.75, 0.25, 0.25, 0.75;
/// labeldp::DyadicAliasTable table(P);
/// labeldp::SecureRandom gen;
/// labeldp::Index out = table(1, gen);   // 1 with probability 3/4, exactly
/// \endcode
class DyadicAliasTable {
 public:
  DyadicAliasTable() = default;

  /// \param rows k x d matrix, entries finite and >= 0, every row with a positive entry;
  ///        d < 2^32.
  /// \throws std::invalid_argument for an empty matrix, a bad entry, a row of zeros, or a
  ///         matrix detail::dyadic_weights() cannot round.
  template <typename Derived>
  explicit DyadicAliasTable(const Eigen::MatrixBase<Derived>& rows) {
    const Index k = rows.rows(), d = rows.cols();
    if (k == 0 || d == 0) throw std::invalid_argument("'rows' must not be empty");
    if (std::uint64_t(d) >= (std::uint64_t(1) << 32))
      throw std::invalid_argument("'rows' must have fewer than 2^32 columns");
    for (Index i = 0; i < k; ++i)
      for (Index j = 0; j < d; ++j) {
        const double p = double(rows(i, j));
        if (!std::isfinite(p) || p < 0) detail::fail_parameter("weight", "must be finite and non-negative", p);
      }
    const std::vector<detail::u128> W = detail::dyadic_weights(rows);
    init(k, d);
    for (Index i = 0; i < k; ++i) build_row(&W[std::size_t(i) * std::size_t(d)], &m_table[std::size_t(i) * m_columns]);
  }

  /// The table of given integer weights: k rows of d, row-major, each row summing to exactly
  /// \f$2^{64}\f$ (the caller's own exact rounding).
  /// \throws std::invalid_argument for a bad size or a row whose sum is not 2^64.
  static DyadicAliasTable from_weights(Index k, Index d, const std::vector<detail::u128>& weights) {
    if (k < 1 || d < 1 || std::uint64_t(d) >= (std::uint64_t(1) << 32) ||
        weights.size() != std::size_t(k) * std::size_t(d))
      throw std::invalid_argument("'weights' must hold k x d entries, k >= 1, 1 <= d < 2^32");
    for (Index i = 0; i < k; ++i) {
      detail::u128 sum = 0;
      for (Index j = 0; j < d; ++j) {
        const detail::u128 w = weights[std::size_t(i) * std::size_t(d) + std::size_t(j)];
        if (w > (detail::u128(1) << 64))
          throw std::invalid_argument("'weights' of row " + std::to_string(i) + " exceed 2^64");
        sum += w;
      }
      if (sum != (detail::u128(1) << 64))
        throw std::invalid_argument("'weights' of row " + std::to_string(i) + " do not sum to 2^64");
    }
    DyadicAliasTable t;
    t.init(k, d);
    for (Index i = 0; i < k; ++i)
      t.build_row(&weights[std::size_t(i) * std::size_t(d)], &t.m_table[std::size_t(i) * t.m_columns]);
    return t;
  }

  /// Number of rows k.
  Index rows() const { return m_rows; }
  /// Number of outcomes d.
  Index cols() const { return m_outcomes; }

  /// An outcome of row i in [0, cols()), with probability exactly weight(i, j) / 2^64. One
  /// 64-bit word, one table entry, one comparison.
  template <std::uniform_random_bit_generator G>
  Index operator()(Index i, G& gen) const {
    const std::uint64_t x = random_u64(gen);
    const Entry& e = m_table[std::size_t(i) * m_columns + std::size_t(x >> m_shift)];
    // Branch-free selection (a mask, not a jump): no misprediction on the coin, whose outcome
    // is as random as the output, and timing independent of it.
    const std::uint32_t take_alias = std::uint32_t(0) - std::uint32_t(x >= e.cut);
    return Index(e.primary ^ ((e.primary ^ e.alias) & take_alias));
  }

  /// The integer weights of row i (they sum to \f$2^{64}\f$), recovered from the alias table
  /// itself: exactly what operator() realizes.
  std::vector<detail::u128> row_weights(Index i) const {
    std::vector<detail::u128> w(std::size_t(m_outcomes), 0);
    const std::uint64_t capacity = std::uint64_t(1) << m_shift;
    for (std::size_t c = 0; c < m_columns; ++c) {
      const Entry& e = m_table[std::size_t(i) * m_columns + c];
      const std::uint64_t start = std::uint64_t(c) << m_shift;
      const std::uint64_t own = e.cut - start;
      if (own > 0) w[e.primary] += own;  // a padding column (primary >= d) owns nothing
      w[e.alias] += capacity - own;
    }
    return w;
  }

  /// Row i's realized probabilities, weight / 2^64 (exact in long double on x86-64).
  std::vector<long double> realized(Index i) const {
    const auto w = row_weights(i);
    std::vector<long double> p(w.size());
    for (std::size_t j = 0; j < w.size(); ++j) p[j] = std::ldexp(static_cast<long double>(w[j]), -64);
    return p;
  }

 private:
  struct Entry {
    std::uint64_t cut = 0;      // x < cut: primary, else alias (cut - column start = primary's share)
    std::uint32_t primary = 0;  // the column's own outcome
    std::uint32_t alias = 0;
  };

  void init(Index k, Index d) {
    m_rows = k;
    m_outcomes = d;
    const unsigned bits = unsigned(std::bit_width(std::uint64_t(std::max<Index>(d, 2)) - 1));  // m = 2^bits >= 2
    m_columns = std::size_t(1) << bits;
    m_shift = 64 - bits;
    m_table.assign(std::size_t(k) * m_columns, Entry{});
  }

  void build_row(const detail::u128* w, Entry* out) const {
    using detail::u128;
    const std::size_t m = m_columns, d = std::size_t(m_outcomes);
    const u128 capacity = u128(1) << m_shift;
    std::vector<u128> mass(m, 0);
    std::vector<std::uint32_t> small, large;
    for (std::size_t c = 0; c < m; ++c) {
      mass[c] = c < d ? w[c] : 0;
      (mass[c] < capacity ? small : large).push_back(std::uint32_t(c));
    }
    // Integer Vose: a small column keeps its mass and takes the rest from a large one.
    for (std::size_t c = 0; c < m; ++c)
      out[c] = Entry{(std::uint64_t(c) << m_shift), std::uint32_t(c), std::uint32_t(c)};
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back();
      small.pop_back();
      const std::uint32_t l = large.back();
      out[s].cut = std::uint64_t((u128(s) << m_shift) + mass[s]);
      out[s].alias = l;
      mass[l] -= capacity - mass[s];
      if (mass[l] < capacity) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // Exact arithmetic leaves the remaining columns exactly full: all primary (primary ==
    // alias, so the cut at the column start never matters).
    for (std::uint32_t c : large) out[c] = Entry{(std::uint64_t(c) << m_shift), c, c};
    for (std::uint32_t c : small) out[c] = Entry{(std::uint64_t(c) << m_shift), c, c};
    // An empty padding column (c >= d) has cut == start: always its alias, never itself.
  }

  std::vector<Entry> m_table;
  Index m_rows = 0, m_outcomes = 0;
  std::size_t m_columns = 0;
  unsigned m_shift = 63;
};

/// Randomized response on d values with **constant work and a label-independent memory
/// access**: output `bin` with probability \f$W_0 / 2^{64}\f$ and each other value with
/// \f$W_1 / 2^{64}\f$, drawn as \f$(\mathit{bin} + T) \bmod d\f$ with the offset T from a
/// one-row DyadicAliasTable. The word drawn, the table entry read and the branches taken depend
/// on the random word only; the label enters through one addition and one conditional
/// subtraction. This is RR-on-Bins' Algorithm 1 (and k-ary randomized response) as a sampler.
///
/// The weights are integers: \f$W_1 = \lceil 2^{64} / (L + d - 1) \rceil\f$ and
/// \f$W_0 = 2^{64} - (d-1) W_1\f$, with L a double two ulps below `std::exp(eps)`, so the
/// realized ratio \f$W_0 / W_1 \le L < e^\varepsilon\f$ holds exactly (the safe direction, by at
/// most \f$(d-1)\,2^{-64}\f$ of probability), and own_probability() / other_probability()
/// report exactly what is sampled.
///
/// \code{.cpp}
/// labeldp::CyclicRandomizedResponse rr(5, 1.0);   // 5 values, eps = 1
/// labeldp::SecureRandom gen;
/// labeldp::Index out = rr(2, gen);                 // 2 w.p. ~e/(e+4), each other ~1/(e+4)
/// \endcode
class CyclicRandomizedResponse {
 public:
  CyclicRandomizedResponse() = default;

  /// \param d number of values, 1 <= d < 2^32.
  /// \param eps privacy parameter, finite and > 0 (+infinity for "always keep" is not allowed).
  /// \throws std::invalid_argument for a bad d or eps.
  CyclicRandomizedResponse(Index d, double eps) : m_d(d) {
    validate_epsilon(eps);
    if (d < 1 || std::uint64_t(d) >= (std::uint64_t(1) << 32))
      detail::fail_parameter("d", "must be in [1, 2^32)", double(d));
    using detail::u128;
    const u128 total = u128(1) << 64;
    if (d == 1) {
      m_own = total;
      m_other = 0;
    } else {
      double L = std::exp(eps);
      if (!(L < std::numeric_limits<double>::infinity())) L = std::numeric_limits<double>::max();
      // Below eps ~ 2^-53 e^eps rounds to 1 and L would fall below 1 (then "own <= L other" would
      // make the kept bin the less likely one, and other/own > e^eps): equal weights are eps-DP.
      L = std::max(std::nextafter(std::nextafter(L, 0.0), 0.0), 1.0);
      const detail::Dyadic Ld = detail::to_dyadic(static_cast<long double>(L), false);
      const u128 dm1 = u128(d - 1);
      // Smallest W1 with 2^64 - (d-1) W1 <= L W1: start from the long-double estimate.
      auto ok = [&](u128 w1) {
        return w1 > 0 && dm1 * w1 <= total && detail::mul_le(total - dm1 * w1, detail::Dyadic{1, 0}, w1, Ld);
      };
      const long double est = std::ldexp(1.0L, 64) / (static_cast<long double>(L) + static_cast<long double>(d - 1));
      u128 w1 = std::max<u128>(1, u128(static_cast<std::uint64_t>(std::min(est, std::ldexp(1.0L, 63)))));
      while (w1 > 1 && ok(w1 - 1)) --w1;
      while (!ok(w1)) ++w1;
      m_other = w1;
      m_own = total - dm1 * w1;
    }
    std::vector<detail::u128> w(std::size_t(d), m_other);
    w[0] = m_own;
    m_offsets = DyadicAliasTable::from_weights(1, d, w);
  }

  /// Number of values d.
  Index size() const { return m_d; }
  /// \f$\Pr[\text{output} = \text{bin}] = W_0 / 2^{64}\f$, exactly (in long double on x86-64).
  long double own_probability() const { return std::ldexp(static_cast<long double>(m_own), -64); }
  /// \f$\Pr[\text{output} = v]\f$ for each \f$v \ne \text{bin}\f$, \f$W_1 / 2^{64}\f$.
  long double other_probability() const { return std::ldexp(static_cast<long double>(m_other), -64); }
  /// The integer weights \f$W_0, W_1\f$ (total \f$W_0 + (d-1) W_1 = 2^{64}\f$).
  std::pair<detail::u128, detail::u128> weights() const { return {m_own, m_other}; }

  /// A value in [0, d): `bin` or another one, exactly as above. One 64-bit word.
  /// \pre 0 <= bin < d.
  template <std::uniform_random_bit_generator G>
  Index operator()(Index bin, G& gen) const {
    const Index v = bin + m_offsets(0, gen);
    return v - (m_d & -Index(v >= m_d));  // branch-free wrap into [0, d)
  }

 private:
  Index m_d = 1;
  detail::u128 m_own = 0, m_other = 0;
  DyadicAliasTable m_offsets;
};

}  // namespace labeldp
