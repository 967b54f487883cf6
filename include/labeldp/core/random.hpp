/// \file
/// Random bit generators. The default generator of the library, SecureRandom, is ChaCha20
/// (RFC 8439) keyed with 256 bits from the operating system: cryptographically secure, so an
/// observer of the noisy labels cannot predict or reconstruct the noise. SeededRandom is the
/// same cipher keyed from a user seed: reproducible, and therefore only for tests and
/// experiments, by explicit choice.
#pragma once

#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

namespace labeldp {

/// ChaCha20 as specified in RFC 8439, Section 2.3, used as a stream of 64-bit words
/// (the keystream's 32-bit words taken in pairs, little-endian). Satisfies
/// `std::uniform_random_bit_generator`.
class ChaCha20 {
 public:
  using result_type = std::uint64_t;
  using Key = std::array<std::uint32_t, 8>;
  using Nonce = std::array<std::uint32_t, 3>;
  using Block = std::array<std::uint32_t, 16>;

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  /// Keystream for `key` and `nonce`, starting at block `counter`.
  ChaCha20(const Key& key, const Nonce& nonce, std::uint32_t counter = 0) {
    m_state[0] = 0x61707865u;
    m_state[1] = 0x3320646eu;
    m_state[2] = 0x79622d32u;
    m_state[3] = 0x6b206574u;
    for (int i = 0; i < 8; ++i) m_state[4 + i] = key[std::size_t(i)];
    m_state[12] = counter;
    for (int i = 0; i < 3; ++i) m_state[13 + i] = nonce[std::size_t(i)];
  }

  /// The ChaCha20 block function of RFC 8439, Section 2.3: 20 rounds on `in`, plus `in`.
  static Block block(const Block& in) {
    Block x = in;
    for (int round = 0; round < 10; ++round) {
      quarter(x, 0, 4, 8, 12);
      quarter(x, 1, 5, 9, 13);
      quarter(x, 2, 6, 10, 14);
      quarter(x, 3, 7, 11, 15);
      quarter(x, 0, 5, 10, 15);
      quarter(x, 1, 6, 11, 12);
      quarter(x, 2, 7, 8, 13);
      quarter(x, 3, 4, 9, 14);
    }
    for (std::size_t i = 0; i < 16; ++i) x[i] += in[i];
    return x;
  }

  /// The current 16-word input state (constants, key, counter, nonce).
  const Block& state() const { return m_state; }

  result_type operator()() {
    if (m_pos == kBufferWords) refill();
    return m_buffer[m_pos++];
  }

 private:
  static constexpr std::size_t kBlocks = 8;                 // blocks generated per refill
  static constexpr std::size_t kBufferWords = kBlocks * 8;  // 64-bit words per refill

  static void quarter(Block& x, int a, int b, int c, int d) {
    auto& A = x[std::size_t(a)];
    auto& B = x[std::size_t(b)];
    auto& C = x[std::size_t(c)];
    auto& D = x[std::size_t(d)];
    A += B;
    D ^= A;
    D = std::rotl(D, 16);
    C += D;
    B ^= C;
    B = std::rotl(B, 12);
    A += B;
    D ^= A;
    D = std::rotl(D, 8);
    C += D;
    B ^= C;
    B = std::rotl(B, 7);
  }

  // Four lanes of 32-bit words (GCC/Clang vector extension, SSE2 width, part of the x86-64 and
  // AArch64 baselines): four blocks are computed in lockstep, one block per lane, so every round
  // is a handful of SIMD instructions.
  static constexpr std::size_t kLanes = 4;
  typedef std::uint32_t Lanes __attribute__((vector_size(4 * kLanes)));

  static Lanes rotl(Lanes v, int r) { return (v << r) | (v >> (32 - r)); }

  static void qr(Lanes& a, Lanes& b, Lanes& c, Lanes& d) {
    a += b;
    d ^= a;
    d = rotl(d, 16);
    c += d;
    b ^= c;
    b = rotl(b, 12);
    a += b;
    d ^= a;
    d = rotl(d, 8);
    c += d;
    b ^= c;
    b = rotl(b, 7);
  }

  void refill() {
    for (std::size_t group = 0; group < kBlocks / kLanes; ++group) blocks(group * kLanes);
    const std::uint32_t before = m_state[12];
    m_state[12] += std::uint32_t(kBlocks);
    if (m_state[12] < before) ++m_state[13];
    m_pos = 0;
  }

  // Blocks first .. first + kLanes - 1 of this refill into the buffer.
  void blocks(std::size_t first) {
    Lanes in[16];
    for (std::size_t w = 0; w < 16; ++w) in[w] = Lanes{} + m_state[w];
    // 64-bit block counter in words 12-13 so the stream never repeats within 2^64 blocks.
    const Lanes offset{std::uint32_t(first), std::uint32_t(first + 1), std::uint32_t(first + 2),
                       std::uint32_t(first + 3)};
    in[12] += offset;
    in[13] -= (in[12] < m_state[12]);  // a lane comparison is -1 where true: adds the carry
    Lanes x[16];
    for (std::size_t w = 0; w < 16; ++w) x[w] = in[w];
    for (int round = 0; round < 10; ++round) {
      qr(x[0], x[4], x[8], x[12]);
      qr(x[1], x[5], x[9], x[13]);
      qr(x[2], x[6], x[10], x[14]);
      qr(x[3], x[7], x[11], x[15]);
      qr(x[0], x[5], x[10], x[15]);
      qr(x[1], x[6], x[11], x[12]);
      qr(x[2], x[7], x[8], x[13]);
      qr(x[3], x[4], x[9], x[14]);
    }
    for (std::size_t w = 0; w < 16; ++w) x[w] += in[w];
    for (std::size_t b = 0; b < kLanes; ++b)
      for (std::size_t j = 0; j < 8; ++j)
        m_buffer[(first + b) * 8 + j] = std::uint64_t(x[2 * j][b]) | (std::uint64_t(x[2 * j + 1][b]) << 32);
  }

  Block m_state{};
  std::array<std::uint64_t, kBufferWords> m_buffer{};
  std::size_t m_pos = kBufferWords;
};

/// The library's default generator: ChaCha20 keyed with 256 bits of operating-system entropy
/// (`std::random_device`, which reads getrandom(2) / /dev/urandom on Linux) and a random nonce.
/// Cryptographically secure; never reproducible.
class SecureRandom : public ChaCha20 {
 public:
  SecureRandom() : ChaCha20(os_key(), os_nonce()) {}

 private:
  static Key os_key() {
    std::random_device rd;
    Key k{};
    for (auto& w : k) w = static_cast<std::uint32_t>(rd());
    return k;
  }
  static Nonce os_nonce() {
    std::random_device rd;
    Nonce n{};
    for (auto& w : n) w = static_cast<std::uint32_t>(rd());
    return n;
  }
};

/// ChaCha20 keyed deterministically from a 64-bit seed. Reproducible, hence NOT private:
/// anyone who knows the seed can recompute the noise. Only for tests, benchmarks and
/// experiments, and only by explicit choice.
class SeededRandom : public ChaCha20 {
 public:
  explicit SeededRandom(std::uint64_t seed)
      : ChaCha20(Key{std::uint32_t(seed), std::uint32_t(seed >> 32), 0x6c616265u, 0x6c64702du, 0x73656564u, 0, 0, 0},
                 Nonce{0, 0, 0}) {}
};

/// The generator used when the caller supplies none.
using DefaultRandom = SecureRandom;

/// 64 uniformly random bits from any uniform random bit generator (exact: generators whose
/// range is not a power of two go through `std::uniform_int_distribution`, which rejects).
template <std::uniform_random_bit_generator G>
std::uint64_t random_u64(G& gen) {
  using R = typename G::result_type;
  constexpr auto lo = G::min();
  constexpr auto hi = G::max();
  if constexpr (lo == 0 && hi == std::numeric_limits<std::uint64_t>::max()) {
    return static_cast<std::uint64_t>(gen());
  } else if constexpr (lo == 0 && std::numeric_limits<R>::digits >= 32 && hi == R(0xffffffffu)) {
    const std::uint64_t a = static_cast<std::uint64_t>(gen());
    const std::uint64_t b = static_cast<std::uint64_t>(gen());
    return a | (b << 32);
  } else {
    std::uniform_int_distribution<std::uint64_t> dist;
    return dist(gen);
  }
}

}  // namespace labeldp
