// Shared helpers of the libFuzzer targets (tests/fuzz/fuzz_*.cpp): a reader that turns the fuzz
// input into parameters, and the one rule of every target: std::invalid_argument is the
// library's documented error for bad input (README, "Conventions"), so it ends a run quietly;
// any other exception escapes and libFuzzer reports it as a crash, and so does a failed
// invariant (FUZZ_CHECK), a sanitizer report, a leak or a timeout.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

/// Aborts (a libFuzzer crash, with the input saved) when an invariant of the library fails.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

namespace labeldp_fuzz {

/// Runs `f`; std::invalid_argument (bad input, documented) is expected and swallowed.
template <typename F>
void expect_valid_or_invalid_argument(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(e.what()[0] != '\0');  // every documented error says what is wrong
  }
}

/// Consumes the fuzz input front to back; past the end every read gives zeros.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : m_p(data), m_n(size) {}
  std::size_t remaining() const { return m_n; }
  std::uint8_t u8() {
    if (m_n == 0) return 0;
    --m_n;
    return *m_p++;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | u8();
    return v;
  }
  /// An integer in [lo, hi].
  long long range(long long lo, long long hi) { return lo + (long long)(u32() % std::uint32_t(hi - lo + 1)); }
  /// A uniform number in [0, 1].
  double unit() { return u32() / 4294967295.0; }
  /// Any double, NaN and infinities included (8 raw bytes).
  double raw_double() {
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | u8();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  /// A positive eps, mostly in [1e-4, 1e4] (log-uniform), sometimes extreme or invalid.
  double eps() {
    switch (u8() % 8) {
      case 0:
        return raw_double();
      case 1:
        return std::ldexp(1.0 + unit(), int(range(-1080, 1030)));
      default:
        return std::pow(10.0, -4 + 8 * unit());
    }
  }
  /// A label value: small integers, reals in [-100, 100], or any double.
  double value() {
    switch (u8() % 8) {
      case 0:
        return raw_double();
      case 1:
      case 2:
      case 3:
        return double(range(-5, 20));
      default:
        return -100 + 200 * unit();
    }
  }
  /// The rest of the input as text.
  std::string_view rest() {
    std::string_view s(reinterpret_cast<const char*>(m_p), m_n);
    m_p += m_n;
    m_n = 0;
    return s;
  }

 private:
  const std::uint8_t* m_p;
  std::size_t m_n;
};

}  // namespace labeldp_fuzz
