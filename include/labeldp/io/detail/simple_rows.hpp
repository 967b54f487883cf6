// Fast scanning of simple CSV rows (the bulk path of CsvReader::buffered_lines()).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace labeldp::io::detail {

/// A simple row cut from whole buffered lines: the label field is `[first, last)` of the line
/// `[begin, end)` (end at its '\n'), the label a plain decimal parsed exactly.
struct SimpleRow {
  const char* begin = nullptr;
  const char* first = nullptr;
  const char* last = nullptr;
  const char* end = nullptr;
  double label = 0;
};

/// Eight bytes in memory order as a word whose byte i is the i-th byte (little-endian order
/// whatever the machine's).
inline std::uint64_t load_le64(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}

/// Bit i set for each byte i (of 8) whose top bit is set in `m` (m has only bits 0x80 per byte).
inline unsigned byte_mask(std::uint64_t m) { return unsigned(((m >> 7) * 0x0102040810204080ull) >> 56); }

/// The value of eight decimal digits, one per byte (0..9, byte 0 the most significant), in three
/// multiplications.
inline std::uint64_t combine_digits(std::uint64_t v) {
  v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFull;
  v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFull;
  return (v * 10000 + (v >> 32)) & 0xFFFFFFFFull;
}

/// The value of the first n <= 8 decimal digits at p (already checked to be digits; reads 8
/// bytes at p): the digits left-padded with zeros to eight. The subtraction borrows only into
/// the bytes after the digits, which are masked off.
inline std::uint64_t swar_digits(const char* p, unsigned n) {
  if (n == 0) return 0;
  const std::uint64_t v = load_le64(p) - 0x3030303030303030ull;
  return combine_digits(n == 8 ? v : (v & ((std::uint64_t(1) << (8 * n)) - 1)) << (8 * (8 - n)));
}

/// \f$10^0 .. 10^{15}\f$, each an exact double: the divisors of the exact decimal fast path
/// (Clinger 1990) of parse_plain_decimal() and parse_double().
inline constexpr double kExactPow10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/// Parses a plain decimal -- an optional '-', then at most 15 digits with at most one '.', at
/// least one digit -- at `s`, ended by ',' or '\n' within 17 bytes; reads at most 26 bytes from `s`
/// (the caller guarantees them). Returns the terminator's address, or nullptr for anything else
/// (blanks, '+', exponents, more digits, ...), which the caller hands to parse_double(). The
/// value is parse_double()'s fast path exactly: the digits as an integer w < 10^15 < 2^53 over
/// 10^(fraction digits), one correctly rounded IEEE division (Clinger 1990).
inline const char* parse_plain_decimal(const char* s, double& value) {
  static constexpr std::uint64_t kPow10i[16] = {1,
                                                10,
                                                100,
                                                1000,
                                                10000,
                                                100000,
                                                1000000,
                                                10000000,
                                                100000000,
                                                1000000000,
                                                10000000000,
                                                100000000000,
                                                1000000000000,
                                                10000000000000,
                                                100000000000000,
                                                1000000000000000};
  const bool negative = *s == '-';
  s += negative;
  unsigned other = 0, dots = 0;  // bit i: byte i of s is neither a digit nor '.'; is '.'
#if defined(__SSE2__)
  {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i t = _mm_sub_epi8(x, _mm_set1_epi8('0'));
    const __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t);  // t < 10 unsigned
    const __m128i dot = _mm_cmpeq_epi8(x, _mm_set1_epi8('.'));
    other = ~unsigned(_mm_movemask_epi8(_mm_or_si128(digit, dot))) & 0xFFFFu;
    dots = unsigned(_mm_movemask_epi8(dot));
  }
#else
  constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  for (int half = 0; half < 2; ++half) {
    const std::uint64_t w = load_le64(s + 8 * half);
    const std::uint64_t t = w ^ (0x30 * kOnes);                                   // digits -> 0..9
    const std::uint64_t not_digit = (((t & ~kHigh) + 0x76 * kOnes) | t) & kHigh;  // t >= 10
    const std::uint64_t d = w ^ (0x2E * kOnes);                                   // '.' -> 0
    const std::uint64_t not_dot = (((d & ~kHigh) + 0x7F * kOnes) | d) & kHigh;    // d != 0
    other |= byte_mask(not_digit & not_dot) << (8 * half);
    dots |= byte_mask(~not_dot & kHigh) << (8 * half);
  }
#endif
  const unsigned len = unsigned(std::countr_zero(other | 0x10000u));  // the run of digits and dots
  const char term = s[len];
  dots &= (1u << len) - 1;  // (dots & (dots - 1)) != 0: two dots or more
  if (len > 16 || (term != ',' && term != '\n') || (dots & (dots - 1)) != 0) return nullptr;
  const unsigned dot = dots ? unsigned(std::countr_zero(dots)) : len;
  const unsigned int_digits = dot, frac_digits = dots ? len - dot - 1 : 0;
  const unsigned n = int_digits + frac_digits;
  if (n == 0 || n > 15) return nullptr;
  std::uint64_t w;
  if (len <= 8) {  // one word: the digits (0..9 per byte, no borrow) with the dot's byte removed
    std::uint64_t v = load_le64(s) ^ 0x3030303030303030ull;
    if (dots) {
      const std::uint64_t below = (std::uint64_t(1) << (8 * dot)) - 1;
      v = (v & below) | ((v >> 8) & ~below);
    }
    w = combine_digits(n == 8 ? v : (v & ((std::uint64_t(1) << (8 * n)) - 1)) << (8 * (8 - n)));
  } else {
    auto digits = [](const char* p, unsigned k) {
      return k <= 8 ? swar_digits(p, k) : swar_digits(p, k - 8) * 100000000 + swar_digits(p + k - 8, 8);
    };
    w = digits(s, int_digits) * kPow10i[frac_digits] + digits(s + dot + 1, frac_digits);
  }
  const double v = double(w) / kExactPow10[frac_digits];
  value = negative ? -v : v;
  return s + len;
}

/// Cuts one simple row from whole lines `[p, end)` (end just past a '\n'; the caller scans the
/// last 32 bytes of a buffer another way): no quote or CR, exactly `fields` fields, the label
/// (field `col`) a plain decimal (parse_plain_decimal()) or else a finite value of
/// `parse(std::string_view field)` (-> std::optional<double>, e.g. parse_double). Returns the
/// next line's start, or nullptr when the row is not simple: nothing is decided about it then,
/// and the caller reads it the general way.
template <typename Parse>
const char* scan_simple_row(const char* p, const char* end, std::size_t col, std::size_t fields, SimpleRow& row,
                            Parse&& parse) {
  row.begin = p;
  for (std::size_t commas = 0; commas < col; ++p) {  // the fields before the label
    const char c = *p;
    if (c == '\n' || c == '"' || c == '\r') return nullptr;
    commas += c == ',';
  }
  row.first = p;
  const char* q = end - p >= 32 ? parse_plain_decimal(p, row.label) : nullptr;
  if (!q) {  // any other number form: the field's end, then the general parser
    for (q = p; *q != ',' && *q != '\n'; ++q)
      if (*q == '"' || *q == '\r') return nullptr;
    const auto v = parse(std::string_view(p, std::size_t(q - p)));
    if (!v || !(*v - *v == 0)) return nullptr;  // not a number, or not finite
    row.label = *v;
  }
  row.last = p = q;
  std::size_t seen = col + 1;
  for (; *p != '\n'; ++p) {  // the fields after it
    const char c = *p;
    if (c == '"' || c == '\r') return nullptr;
    seen += c == ',';
  }
  if (seen != fields) return nullptr;
  row.end = p;
  return p + 1;
}

}  // namespace labeldp::io::detail
