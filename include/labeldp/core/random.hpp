/// \file
/// Random bit generators. The default generator of the library, SecureRandom, is ChaCha20
/// (RFC 8439) keyed with 256 bits from the operating system: cryptographically secure, so an
/// observer of the noisy labels cannot predict or reconstruct the noise. SeededRandom is the
/// same cipher keyed from a user seed: reproducible, and therefore only for tests and
/// experiments, by explicit choice.
#pragma once

#include <pthread.h>
#include <sys/random.h>
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "labeldp/core/detail/chacha20_simd.hpp"

namespace labeldp {

namespace detail {

/// Fills `out` with `size` bytes from getrandom(2) (the kernel CSPRNG, blocking only until it
/// is first seeded at boot), retrying on EINTR and short reads.
/// \throws std::runtime_error when getrandom(2) fails (e.g. ENOSYS on a kernel older than 3.17).
inline void os_random_bytes(void* out, std::size_t size) {
  auto* p = static_cast<unsigned char*>(out);
  while (size > 0) {
    const ssize_t got = ::getrandom(p, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("SecureRandom: getrandom(2) failed (") + std::strerror(errno) +
                               "): no operating-system entropy to key the generator");
    }
    p += got;
    size -= std::size_t(got);
  }
}

/// Incremented in every child process right after fork() (a pthread_atfork child handler), so
/// that a SecureRandom whose state was copied into the child notices and rekeys before its next
/// word. A relaxed atomic: one load per word.
inline std::atomic<std::uint64_t>& fork_generation() {
  static std::atomic<std::uint64_t> generation{0};
  return generation;
}

inline void on_fork_child() { fork_generation().fetch_add(1, std::memory_order_relaxed); }

/// Registers on_fork_child() once per process.
/// \throws std::runtime_error when pthread_atfork fails.
inline void register_fork_handler() {
  static const bool registered = [] {
    if (::pthread_atfork(nullptr, nullptr, &on_fork_child) != 0)
      throw std::runtime_error("SecureRandom: pthread_atfork failed: cannot detect fork()");
    return true;
  }();
  (void)registered;
}

/// Overwrites `n` objects at `p` with zeros through a volatile pointer, so that the compiler
/// cannot drop the stores as dead: every key, keystream word and buffered random word is wiped
/// this way when it is no longer needed.
template <class T>
void secure_zero(T* p, std::size_t n) noexcept {
  volatile T* v = p;
  for (std::size_t i = 0; i < n; ++i) v[i] = T(0);
}
}  // namespace detail

/// ChaCha20 as specified in RFC 8439, Section 2.3, used as a stream of 64-bit words
/// (the keystream's 32-bit words taken in pairs, little-endian). Satisfies
/// `std::uniform_random_bit_generator`.
///
/// Constructed from a key it is the explicit, reproducible keyed stream (tests, SeededRandom,
/// keyed distributed runs: the user's secret as key, the record id as nonce). SecureRandom is
/// the same cipher keyed from getrandom(2), which also rekeys after fork() -- even when used
/// through a `ChaCha20&`. A stream is a secret, so copies are reserved to derived classes that
/// ask for them (SeededRandom): `ChaCha20 c = secure_random;` does not compile.
class ChaCha20 {
 public:
  using result_type = std::uint64_t;
  using Key = std::array<std::uint32_t, 8>;
  using Nonce = std::array<std::uint32_t, 3>;
  using Block = std::array<std::uint32_t, 16>;

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  /// Keystream for `key` and `nonce`, starting at block `counter`.
  ChaCha20(const Key& key, const Nonce& nonce, std::uint32_t counter = 0) { set_key(key, nonce, counter); }

  /// Forgets the key and the buffered words. Virtual: programs hold a SecureRandom or a
  /// SeededRandom through a `std::unique_ptr<ChaCha20>`.
  virtual ~ChaCha20() { wipe(); }

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

  /// The next 64-bit word of the keystream. An OS-keyed stream (SecureRandom) first rekeys
  /// from getrandom(2) when it was moved from or copied into a child process by fork(): one
  /// relaxed atomic load and one well-predicted branch per word.
  result_type operator()() {
    if (m_pos < kBufferWords && m_generation == detail::fork_generation().load(std::memory_order_relaxed)) [[likely]]
      return m_buffer[m_pos++];
    return next_slow();
  }

  /// `n` words of the keystream into `out`: the same words, in the same order, as n calls of
  /// operator() (and the same rekeying after fork()), copied from the buffer a run at a time.
  void fill(std::uint64_t* out, std::size_t n) {
    while (n > 0) {
      if (m_pos == kBufferWords || m_generation != detail::fork_generation().load(std::memory_order_relaxed)) {
        *out++ = next_slow();  // refills (or rekeys) and takes the first word
        --n;
        continue;
      }
      const std::size_t run = std::min(n, kBufferWords - m_pos);
      std::copy_n(m_buffer.data() + m_pos, run, out);
      m_pos += run;
      out += run;
      n -= run;
    }
  }

 protected:
  struct OsKeyed {};
  /// A stream keyed from getrandom(2) that rekeys after fork() (SecureRandom).
  /// \throws std::runtime_error when the operating system provides no entropy.
  explicit ChaCha20(OsKeyed) : m_os_keyed(true) {
    detail::register_fork_handler();
    rekey_from_os();
  }

  // Copies only for derived classes that want them (SeededRandom); a move wipes an OS-keyed
  // source, which rekeys from the OS if used again (never replays the moved stream).
  ChaCha20(const ChaCha20&) = default;
  ChaCha20& operator=(const ChaCha20&) = default;
  ChaCha20(ChaCha20&& other) noexcept : ChaCha20(static_cast<const ChaCha20&>(other)) {
    if (other.m_os_keyed) other.wipe();
  }
  ChaCha20& operator=(ChaCha20&& other) noexcept {
    if (this != &other) {
      *this = static_cast<const ChaCha20&>(other);
      if (other.m_os_keyed) other.wipe();
    }
    return *this;
  }

 private:
  static constexpr std::uint64_t kWiped = ~std::uint64_t{0};  // never a fork generation

  void set_key(const Key& key, const Nonce& nonce, std::uint32_t counter) {
    m_state[0] = 0x61707865u;
    m_state[1] = 0x3320646eu;
    m_state[2] = 0x79622d32u;
    m_state[3] = 0x6b206574u;
    for (int i = 0; i < 8; ++i) m_state[4 + i] = key[std::size_t(i)];
    m_state[12] = counter;
    for (int i = 0; i < 3; ++i) m_state[13 + i] = nonce[std::size_t(i)];
    m_pos = kBufferWords;
  }

  static constexpr std::size_t kBlocks = detail::kChaChaGroup;  // blocks generated per refill
  static constexpr std::size_t kBufferWords = kBlocks * 8;      // 64-bit words per refill

  result_type next_slow() {
    const std::uint64_t now = detail::fork_generation().load(std::memory_order_relaxed);
    if (m_generation != now) {
      if (m_os_keyed)
        rekey_from_os();  // moved from, or a child after fork(): a fresh key, never the old stream
      else
        m_generation = now;  // an explicitly keyed stream is reproducible by design
    }
    if (m_pos == kBufferWords) refill();
    return m_buffer[m_pos++];
  }

  void rekey_from_os() {
    std::array<std::uint32_t, 8 + 3> words{};
    detail::os_random_bytes(words.data(), sizeof words);
    Key key{};
    Nonce nonce{};
    for (std::size_t i = 0; i < 8; ++i) key[i] = words[i];
    for (std::size_t i = 0; i < 3; ++i) nonce[i] = words[8 + i];
    set_key(key, nonce, 0);
    m_generation = detail::fork_generation().load(std::memory_order_relaxed);
    detail::secure_zero(words.data(), words.size());
    detail::secure_zero(key.data(), key.size());
  }

  // Forgets the key and the buffered words; an OS-keyed stream rekeys on its next use.
  void wipe() noexcept {
    detail::secure_zero(m_state.data(), m_state.size());
    detail::secure_zero(m_buffer.data(), m_buffer.size());
    m_pos = kBufferWords;
    m_generation = kWiped;
  }

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

  // The blocks of a refill are computed by the SIMD core (detail/chacha20_simd.hpp: 16, 8 or 4
  // lanes, chosen at run time), 16 consecutive 64-bit block counters in words 12-13.
  void refill() {
    const std::uint64_t counter = std::uint64_t(m_state[12]) | (std::uint64_t(m_state[13]) << 32);
    std::uint64_t counters[kBlocks];
    for (std::size_t b = 0; b < kBlocks; ++b) counters[b] = counter + b;  // wraps mod 2^64
    alignas(64) std::uint32_t out[16 * kBlocks];
    detail::chacha20_blocks16(m_state.data(), counters, out);
    for (std::size_t b = 0; b < kBlocks; ++b)
      for (std::size_t j = 0; j < 8; ++j)
        m_buffer[b * 8 + j] =
            std::uint64_t(out[(2 * j) * kBlocks + b]) | (std::uint64_t(out[(2 * j + 1) * kBlocks + b]) << 32);
    const std::uint64_t next = counter + kBlocks;
    m_state[12] = std::uint32_t(next);
    m_state[13] = std::uint32_t(next >> 32);
    m_pos = 0;
  }

  Block m_state{};
  std::array<std::uint64_t, kBufferWords> m_buffer{};
  std::size_t m_pos = kBufferWords;
  std::uint64_t m_generation = detail::fork_generation().load(std::memory_order_relaxed);
  bool m_os_keyed = false;
};

/// The library's default generator: ChaCha20 keyed with a 256-bit key and a 96-bit nonce read
/// from getrandom(2) (never RDRAND or a user-space pool). Cryptographically secure; never
/// reproducible.
///
/// A generator is a secret stream, so it is **not copyable**: a copy would replay the same
/// noise (nor can it be sliced into a ChaCha20 copy). It is movable: the moved-to generator
/// continues the stream, and the moved-from one is wiped and rekeys itself from the operating
/// system on its next use (a fresh, independent stream). It is **safe across fork()**: a
/// pthread_atfork handler marks every generator copied into the child, which then rekeys from
/// getrandom(2) before its next word, so parent and child never emit the same words (buffered
/// words included; also when used through a `ChaCha20&`). A child created by the raw clone(2)
/// system call or by `_Fork()` runs no fork handlers and is not covered. Not thread-safe: one
/// generator per thread.
///
/// For reproducible tests use SeededRandom, and for keyed distributed runs (a retried task
/// must redraw the same noise) ChaCha20 with your own key and the record id as nonce: both by
/// explicit choice.
///
/// \code{.cpp}
/// labeldp::SecureRandom gen;                     // keyed from getrandom(2)
/// std::uint64_t w = gen();                       // 64 random bits
/// labeldp::SecureRandom other = std::move(gen);  // gen rekeys itself if used again
/// \endcode
class SecureRandom : public ChaCha20 {
 public:
  /// A generator keyed from getrandom(2).
  /// \throws std::runtime_error when the operating system provides no entropy.
  SecureRandom() : ChaCha20(OsKeyed{}) {}

  SecureRandom(const SecureRandom&) = delete;
  SecureRandom& operator=(const SecureRandom&) = delete;
  /// Takes over `other`'s stream; `other` is wiped and rekeys from the OS on its next use.
  SecureRandom(SecureRandom&&) noexcept = default;
  /// Takes over `other`'s stream; `other` is wiped and rekeys from the OS on its next use.
  SecureRandom& operator=(SecureRandom&&) noexcept = default;
  ~SecureRandom() override = default;
};

/// ChaCha20 keyed deterministically from a 64-bit seed. Reproducible, hence NOT private:
/// anyone who knows the seed can recompute the noise. Only for tests, benchmarks and
/// experiments, and only by explicit choice.
class SeededRandom : public ChaCha20 {
 public:
  explicit SeededRandom(std::uint64_t seed)
      : ChaCha20(Key{std::uint32_t(seed), std::uint32_t(seed >> 32), 0x6c616265u, 0x6c64702du, 0x73656564u, 0, 0, 0},
                 Nonce{0, 0, 0}) {}

  SeededRandom(const SeededRandom&) = default;
  SeededRandom& operator=(const SeededRandom&) = default;
  SeededRandom(SeededRandom&&) noexcept = default;
  SeededRandom& operator=(SeededRandom&&) noexcept = default;
  ~SeededRandom() override = default;
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

/// `n` words of random_u64(gen) into `out`, in order: through the generator's own `fill()` when
/// it has one (ChaCha20: a copy from its buffer instead of a call per word).
template <std::uniform_random_bit_generator G>
void random_words(G& gen, std::uint64_t* out, std::size_t n) {
  if constexpr (requires { gen.fill(out, n); })
    gen.fill(out, n);
  else
    for (std::size_t i = 0; i < n; ++i) out[i] = random_u64(gen);
}

/// A generator that serves the words of another in order, drawn `kWords` at a time with
/// random_words() (one copy from a ChaCha20's buffer instead of a call per word). The words it
/// holds when it is destroyed are never used.
template <std::uniform_random_bit_generator G>
class BufferedWords {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type(0); }
  explicit BufferedWords(G& gen) : m_gen(gen) {}
  BufferedWords(const BufferedWords&) = delete;
  BufferedWords& operator=(const BufferedWords&) = delete;
  ~BufferedWords() { detail::secure_zero(m_words.data(), kWords); }
  result_type operator()() {
    if (m_pos == kWords) [[unlikely]]
      refill();
    return m_words[m_pos++];
  }

 private:
  [[gnu::noinline]] void refill() {
    random_words(m_gen, m_words.data(), kWords);
    m_pos = 0;
  }

  static constexpr std::size_t kWords = 64;
  G& m_gen;
  std::array<std::uint64_t, kWords> m_words{};
  std::size_t m_pos = kWords;
};

}  // namespace labeldp
