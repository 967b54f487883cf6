/// \file
/// The ChaCha20 block function (RFC 8439, Section 2.3) on many blocks at once, one block per
/// SIMD lane: 4 lanes (SSE2 / NEON width, the portable baseline), 8 lanes (AVX2) and 16 lanes
/// (AVX-512F), the wider ones compiled with `__attribute__((target(...)))` and chosen at run time
/// with `__builtin_cpu_supports`, so the library needs no -march flag and still runs on any
/// x86-64 (and on other architectures with the portable path). Every width computes the same
/// words bit for bit (tests/core/test_random.cpp checks them against the RFC vectors and the
/// scalar ChaCha20::block).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace labeldp::detail {

/// Blocks computed per call of chacha20_blocks16().
inline constexpr std::size_t kChaChaGroup = 16;

/// A SIMD width of the ChaCha20 core, in 32-bit lanes (= blocks computed in lockstep).
enum class ChaChaWidth : int { lanes4 = 4, lanes8 = 8, lanes16 = 16 };

/// Whether this CPU runs the given width (4 lanes: always).
inline bool chacha_width_supported(ChaChaWidth w) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  if (w == ChaChaWidth::lanes8) return __builtin_cpu_supports("avx2");
  if (w == ChaChaWidth::lanes16) return __builtin_cpu_supports("avx512f");
  return true;
#else
  return w == ChaChaWidth::lanes4;
#endif
}

/// The widest width this CPU runs (looked up once).
inline ChaChaWidth chacha_best_width() {
  static const ChaChaWidth best = chacha_width_supported(ChaChaWidth::lanes16)  ? ChaChaWidth::lanes16
                                  : chacha_width_supported(ChaChaWidth::lanes8) ? ChaChaWidth::lanes8
                                                                                : ChaChaWidth::lanes4;
  return best;
}

// One double round on 16 lane vectors (column round, then diagonal round).
#define LABELDP_CHACHA_QR(a, b, c, d) \
  a += b;                             \
  d ^= a;                             \
  d = (d << 16) | (d >> 16);          \
  c += d;                             \
  b ^= c;                             \
  b = (b << 12) | (b >> 20);          \
  a += b;                             \
  d ^= a;                             \
  d = (d << 8) | (d >> 24);           \
  c += d;                             \
  b ^= c;                             \
  b = (b << 7) | (b >> 25);

/// N lanes of 32-bit words (GCC/Clang vector extension).
template <int N>
struct ChaChaVec;
template <>
struct ChaChaVec<4> {
  typedef std::uint32_t type __attribute__((vector_size(16)));
};
template <>
struct ChaChaVec<8> {
  typedef std::uint32_t type __attribute__((vector_size(32)));
};
template <>
struct ChaChaVec<16> {
  typedef std::uint32_t type __attribute__((vector_size(64)));
};

/// N blocks (one per lane) of the state `base` with the 64-bit block counters
/// `counters[0..N)` in words 12 (low half) and 13 (high half); word w of block `lane` goes to
/// `out[w * stride + lane]`. Always inlined into the width's (target-specific) entry point;
/// takes and returns no vector by value, so no ABI depends on the target.
template <int N>
[[gnu::always_inline]] inline void chacha_lanes(const std::uint32_t* base, const std::uint64_t* counters,
                                                std::uint32_t* out, std::size_t stride) {
  using V = typename ChaChaVec<N>::type;
  V in[16];
  for (int w = 0; w < 16; ++w) in[w] = V{} + base[w];
  // The counters' lanes are copied in whole (g++ 12 with -march=native took per-lane stores into
  // in[12] and in[13] for reads of uninitialized memory, -Wmaybe-uninitialized).
  std::uint32_t low[N], high[N];
  for (int l = 0; l < N; ++l) {
    low[l] = std::uint32_t(counters[l]);
    high[l] = std::uint32_t(counters[l] >> 32);
  }
  std::memcpy(&in[12], low, sizeof(V));
  std::memcpy(&in[13], high, sizeof(V));
  V x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3], x4 = in[4], x5 = in[5], x6 = in[6], x7 = in[7];
  V x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11], x12 = in[12], x13 = in[13], x14 = in[14], x15 = in[15];
  for (int round = 0; round < 10; ++round) {
    LABELDP_CHACHA_QR(x0, x4, x8, x12)
    LABELDP_CHACHA_QR(x1, x5, x9, x13)
    LABELDP_CHACHA_QR(x2, x6, x10, x14)
    LABELDP_CHACHA_QR(x3, x7, x11, x15)
    LABELDP_CHACHA_QR(x0, x5, x10, x15)
    LABELDP_CHACHA_QR(x1, x6, x11, x12)
    LABELDP_CHACHA_QR(x2, x7, x8, x13)
    LABELDP_CHACHA_QR(x3, x4, x9, x14)
  }
  const V x[16] = {x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15};
  for (int w = 0; w < 16; ++w) {
    const V r = x[w] + in[w];
    std::memcpy(out + std::size_t(w) * stride, &r, sizeof r);
  }
}

#undef LABELDP_CHACHA_QR

/// 16 blocks with 4 lanes: the portable path (SSE2 on x86-64, NEON on AArch64, scalar code
/// elsewhere).
inline void chacha_group_4(const std::uint32_t* base, const std::uint64_t* counters, std::uint32_t* out) {
  for (int q = 0; q < 4; ++q) chacha_lanes<4>(base, counters + 4 * q, out + 4 * q, kChaChaGroup);
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define LABELDP_CHACHA_X86 1
/// 16 blocks with 8 lanes (AVX2); call only when chacha_width_supported(lanes8).
__attribute__((target("avx2"))) inline void chacha_group_8(const std::uint32_t* base, const std::uint64_t* counters,
                                                           std::uint32_t* out) {
  chacha_lanes<8>(base, counters, out, kChaChaGroup);
  chacha_lanes<8>(base, counters + 8, out + 8, kChaChaGroup);
}
/// 16 blocks with 16 lanes (AVX-512F); call only when chacha_width_supported(lanes16).
__attribute__((target("avx512f"))) inline void chacha_group_16(const std::uint32_t* base, const std::uint64_t* counters,
                                                               std::uint32_t* out) {
  chacha_lanes<16>(base, counters, out, kChaChaGroup);
}
#endif

/// 16 ChaCha20 blocks of the state `base` (16 words; words 12-13 are ignored) with the 64-bit
/// block counters `counters[0..16)`, computed with width `w` (which must be supported): word w
/// of block b goes to `out[16 * w + b]` (256 words, word-major, the same for every width).
inline void chacha20_blocks16(ChaChaWidth w, const std::uint32_t* base, const std::uint64_t* counters,
                              std::uint32_t* out) {
#ifdef LABELDP_CHACHA_X86
  if (w == ChaChaWidth::lanes16) return chacha_group_16(base, counters, out);
  if (w == ChaChaWidth::lanes8) return chacha_group_8(base, counters, out);
#endif
  (void)w;
  chacha_group_4(base, counters, out);
}

/// chacha20_blocks16() with the widest width this CPU runs.
inline void chacha20_blocks16(const std::uint32_t* base, const std::uint64_t* counters, std::uint32_t* out) {
  chacha20_blocks16(chacha_best_width(), base, counters, out);
}

}  // namespace labeldp::detail
