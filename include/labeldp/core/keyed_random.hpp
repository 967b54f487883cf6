/// \file
/// Keyed randomness for re-run-safe privatization: the noise of record `id` is a function of the
/// user's secret 32-byte key and `id` only, so a retried, re-partitioned or re-run job releases
/// exactly the same noisy labels (never a second, independent noisy copy of a label, which would
/// silently double the privacy budget).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>

#include "labeldp/core/concepts.hpp"
#include "labeldp/core/detail/chacha20_simd.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

namespace detail {
struct KeyedBatch;

/// sample_keyed()'s blocks for words 2 to 9 of its records (pairs 1 to 4 of the layout in
/// KeyedRandom's comment): for 16 consecutive block counters at once, computed by the SIMD core
/// when a record first needs them, so that mechanisms drawing more than two words per record
/// (the additive-noise baselines) pay one SIMD group per 64 contiguous ids instead of one scalar
/// block per record (issue 15). Wiped when destroyed.
struct KeyedPairCache {
  // Pairs 1 to 4, words 2 to 9 (later pairs: one scalar block each): the exact Gaussian draws
  // about 6 words per label.
  static constexpr std::size_t kPairs = 4;
  alignas(64) std::uint32_t words[kPairs][16 * kChaChaGroup];
  std::uint64_t first[kPairs] = {};  // the first counter of each pair's group
  bool valid[kPairs] = {};
  ChaChaWidth width = chacha_best_width();
  KeyedPairCache() = default;
  KeyedPairCache(const KeyedPairCache&) = delete;
  KeyedPairCache& operator=(const KeyedPairCache&) = delete;
  ~KeyedPairCache() { secure_zero(&words[0][0], kPairs * 16 * kChaChaGroup); }
};
}  // namespace detail

/// The user's secret 32-byte key; the noise of record `id` is a function of (key, id) only.
///
/// **Layout.** Stream `(id, domain)` is a stream of 64-bit words cut from ChaCha20 blocks
/// (RFC 8439, Section 2.3) keyed with the user's key (its 32 bytes read as eight little-endian
/// 32-bit words, as in RFC 8439): word w of the stream is the 64-bit word
/// `2 * (id mod 4) + (w mod 2)` (32-bit words taken in pairs, little-endian) of the block whose
/// state words 12-13 hold the 64-bit counter `id div 4` (low half in word 12), word 14 holds
/// `w div 2` and word 15 holds `domain`. Four consecutive ids thus share one block for their
/// first two words (what a finite mechanism needs: randomized rounding of a raw label to the grid
/// and one alias-table draw), which makes batches of contiguous ids about as cheap as the
/// unkeyed generator; distinct (id, domain, w) never share a word, so the streams of different
/// records and domains are disjoint parts of one ChaCha20 keystream family under the key
/// (words 12-15 act as a 128-bit block counter and nonce). `domain` separates uses of one key
/// (0 = labels, 1 = prior noise, ...). A stream has 2^33 words.
///
/// **The key.** Generate it once per release from the operating system's CSPRNG, e.g.
/// `head -c 32 /dev/urandom > key.bin` (or `os.urandom(32)` in Python), keep it secret like a
/// password (whoever holds it can recompute the noise and undo it), and use the same key for
/// every retry or re-run of that release; a new release of the same labels needs a new key
/// (and its own privacy budget). Never derive it from a seed, a timestamp or the data.
/// KeyedRandom and its streams wipe their copy of the key when destroyed.
///
/// **Record ids** must identify records uniquely within a release (e.g. the row number of the
/// input table, or a stable primary key): two records with the same id and label get the same
/// noisy label, and records with the same id share their noise. Contiguous ids are the fast case
/// (four records per ChaCha20 block); arbitrary 64-bit ids cost one block per record.
///
/// \code{.cpp}
/// labeldp::KeyedRandom keyed(key);                  // key: 32 secret bytes
/// auto gen = keyed.stream(record_id);               // deterministic given (key, record_id)
/// double noisy = mechanism.sample(label, gen);
/// labeldp::sample_keyed(mechanism, labels, ids, keyed, noisy_labels);  // the same, batched
/// \endcode
class KeyedRandom {
 public:
  /// 32 key bytes.
  using Key = std::array<std::uint8_t, 32>;

  /// Keyed with `key`.
  explicit KeyedRandom(const Key& key) { load(key.data()); }

  /// Keyed with the 32 bytes of `key`.
  /// \throws std::invalid_argument unless key.size() == 32.
  explicit KeyedRandom(std::span<const std::uint8_t> key) {
    if (key.size() != 32)
      throw std::invalid_argument("KeyedRandom: the key has " + std::to_string(key.size()) + " bytes; it must have 32");
    load(key.data());
  }

  KeyedRandom(const KeyedRandom&) = default;
  KeyedRandom& operator=(const KeyedRandom&) = default;
  /// Forgets the key.
  ~KeyedRandom() { detail::secure_zero(m_base.data(), m_base.size()); }

  /// A uniform_random_bit_generator (result_type uint64_t, min 0, max 2^64-1) whose words are a
  /// function of (key, id, domain) only (see the class comment for the layout). It holds its
  /// own copy of the key (wiped on destruction), so it may outlive this object. Copies replay
  /// the same words: keyed streams are reproducible by design.
  class Stream {
   public:
    using result_type = std::uint64_t;
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

    Stream(const Stream&) = default;
    Stream& operator=(const Stream&) = default;
    ~Stream() {
      detail::secure_zero(m_base.data(), m_base.size());
      detail::secure_zero(m_pair_words, 2);
    }

    /// The next 64-bit word of the stream.
    /// \throws std::length_error after 2^33 words.
    result_type operator()() {
      if ((m_word >> 1) == m_pair) [[likely]]
        return m_pair_words[m_word++ & 1];
      return next_slow();
    }

    /// The record id of this stream.
    std::uint64_t id() const { return m_id; }

   private:
    friend class KeyedRandom;
    friend struct detail::KeyedBatch;

    explicit Stream(const std::array<std::uint32_t, 16>& base, std::uint64_t id, std::uint32_t domain)
        : m_base(base), m_id(id) {
      m_base[15] = domain;
    }

    // Starts record `id` over with its first two words already computed (sample_keyed).
    void reset(std::uint64_t id, std::uint64_t w0, std::uint64_t w1) {
      m_id = id;
      m_word = 0;
      m_pair = 0;
      m_pair_words[0] = w0;
      m_pair_words[1] = w1;
    }

    result_type next_slow() {
      const std::uint64_t pair = m_word >> 1;
      if (pair > std::numeric_limits<std::uint32_t>::max())
        throw std::length_error("KeyedRandom: a record's stream has 2^33 words; all were used");
      const std::uint64_t counter = m_id >> 2;
      if (m_cache && pair >= 1 && pair <= detail::KeyedPairCache::kPairs) return next_cached(counter, pair);
      std::array<std::uint32_t, 16> state = m_base;
      state[12] = std::uint32_t(counter);
      state[13] = std::uint32_t(counter >> 32);
      state[14] = std::uint32_t(pair);
      const auto block = ChaCha20::block(state);
      const std::size_t q = std::size_t(m_id & 3);
      m_pair_words[0] = std::uint64_t(block[4 * q]) | (std::uint64_t(block[4 * q + 1]) << 32);
      m_pair_words[1] = std::uint64_t(block[4 * q + 2]) | (std::uint64_t(block[4 * q + 3]) << 32);
      m_pair = pair;
      detail::secure_zero(state.data(), state.size());
      return m_pair_words[m_word++ & 1];
    }

    // next_slow() for pairs 1 and 2 inside sample_keyed(): the same words, from the cache's
    // group of 16 counters (computed when the counter is outside the cached group).
    result_type next_cached(std::uint64_t counter, std::uint64_t pair) {
      detail::KeyedPairCache& c = *m_cache;
      const std::size_t p = std::size_t(pair - 1);
      if (!c.valid[p] || counter < c.first[p] || counter - c.first[p] >= detail::kChaChaGroup) {
        std::array<std::uint32_t, 16> state = m_base;
        state[14] = std::uint32_t(pair);
        std::uint64_t counters[detail::kChaChaGroup];
        for (std::size_t b = 0; b < detail::kChaChaGroup; ++b) counters[b] = counter + b;  // counter < 2^62
        detail::chacha20_blocks16(c.width, state.data(), counters, c.words[p]);
        c.first[p] = counter;
        c.valid[p] = true;
        detail::secure_zero(state.data(), state.size());
      }
      const std::uint32_t* w = c.words[p] + 4 * std::size_t(m_id & 3) * detail::kChaChaGroup + (counter - c.first[p]);
      m_pair_words[0] = std::uint64_t(w[0]) | (std::uint64_t(w[detail::kChaChaGroup]) << 32);
      m_pair_words[1] = std::uint64_t(w[2 * detail::kChaChaGroup]) | (std::uint64_t(w[3 * detail::kChaChaGroup]) << 32);
      m_pair = pair;
      return m_pair_words[m_word++ & 1];
    }

    std::array<std::uint32_t, 16> m_base;       // constants, key, -, -, -, domain
    detail::KeyedPairCache* m_cache = nullptr;  // sample_keyed()'s, for its contiguous ids
    std::uint64_t m_id = 0;
    std::uint64_t m_word = 0;                                          // index of the next word
    std::uint64_t m_pair = std::numeric_limits<std::uint64_t>::max();  // pair held in m_pair_words
    std::uint64_t m_pair_words[2] = {0, 0};
  };

  /// The stream of record `id` in `domain` (0 = labels, 1 = prior noise, ...).
  Stream stream(std::uint64_t id, std::uint32_t domain = 0) const { return Stream(m_base, id, domain); }

 private:
  friend struct detail::KeyedBatch;

  void load(const std::uint8_t* key) {
    m_base = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
    for (std::size_t i = 0; i < 8; ++i)
      m_base[4 + i] = std::uint32_t(key[4 * i]) | (std::uint32_t(key[4 * i + 1]) << 8) |
                      (std::uint32_t(key[4 * i + 2]) << 16) | (std::uint32_t(key[4 * i + 3]) << 24);
  }

  std::array<std::uint32_t, 16> m_base{};  // ChaCha20 state: constants, key; words 12-15 zero
};

namespace detail {

/// A generator for sample_words() that only records that it was called: the block then needs
/// a record's third word, which the per-record path draws from the record's own stream.
struct MoreWordsNeeded {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type(0); }
  bool needed = false;
  result_type operator()() {
    needed = true;
    return 0;
  }
};

/// Whether M samples blocks of labels from given words (FiniteLabelMechanism::sample_words()).
template <typename M>
concept KeyedWordSampler = requires(const M& m, std::span<const double> in, const std::uint64_t* w,
                                    std::span<double> out, MoreWordsNeeded& g) {
  { m.words_per_label() } -> std::convertible_to<unsigned>;
  m.sample_words(in, w, out, g);
};

/// The batch engine of sample_keyed(): blocks for up to 16 distinct block counters computed at
/// once by the SIMD core, each record served its first two words from them.
struct KeyedBatch {
  template <typename M>
  static constexpr bool kWordSampler = KeyedWordSampler<M>;

  template <typename M>
  static void run(const M& m, std::span<const double> in, std::span<const std::uint64_t> ids, const KeyedRandom& keyed,
                  std::span<double> out) {
    KeyedRandom::Stream s = keyed.stream(0, 0);
    KeyedPairCache cache;
    alignas(64) std::uint32_t words[16 * kChaChaGroup];
    std::uint64_t counters[kChaChaGroup];
    constexpr std::size_t kMaxRecords = 4 * kChaChaGroup;
    unsigned char slot[kMaxRecords];
    const ChaChaWidth width = chacha_best_width();
    const std::size_t n = in.size();
    std::size_t t0 = 0;
    while (t0 < n) {
      // Records t0 .. t1-1 whose blocks are among at most 16 distinct consecutive counters.
      std::size_t used = 0, t1 = t0;
      while (t1 < n && t1 - t0 < kMaxRecords) {
        const std::uint64_t c = ids[t1] >> 2;
        if (used == 0 || counters[used - 1] != c) {
          if (used == kChaChaGroup) break;
          counters[used++] = c;
        }
        slot[t1 - t0] = static_cast<unsigned char>(used - 1);
        ++t1;
      }
      for (std::size_t b = used; b < kChaChaGroup; ++b) counters[b] = counters[used - 1];
      chacha20_blocks16(width, s.m_base.data(), counters, words);
      // Groups of contiguous ids (at least two records per counter) fetch words 2-5 of their
      // records through the cache; scattered ids compute one scalar block per record and pair.
      s.m_cache = t1 - t0 >= 2 * used ? &cache : nullptr;
      if constexpr (kWordSampler<M>) {
        // A mechanism with a block sampler on given words (at most two per record): the same
        // outputs as the per-record loop below, which redoes the group in the rare case (2^-64
        // per label) that the block sampler needs a word beyond the first two.
        const unsigned p = m.words_per_label();
        if (p <= 2) {
          std::uint64_t given[2 * kMaxRecords];
          for (std::size_t t = t0; t < t1; ++t) {
            const std::size_t b = slot[t - t0], q = std::size_t(ids[t] & 3);
            const std::uint32_t* w = words + 4 * q * kChaChaGroup + b;
            given[p * (t - t0)] = std::uint64_t(w[0]) | (std::uint64_t(w[kChaChaGroup]) << 32);
            if (p == 2)
              given[2 * (t - t0) + 1] = std::uint64_t(w[2 * kChaChaGroup]) | (std::uint64_t(w[3 * kChaChaGroup]) << 32);
          }
          const auto in_group = in.subspan(t0, t1 - t0);
          validate_finite_labels(in_group);
          MoreWordsNeeded more;
          m.sample_words(in_group, given, out.subspan(t0, t1 - t0), more);
          secure_zero(given, p * (t1 - t0));
          if (!more.needed) {
            t0 = t1;
            continue;
          }
        }
      }
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t b = slot[t - t0], q = std::size_t(ids[t] & 3);
        const std::uint32_t* w = words + 4 * q * kChaChaGroup + b;
        s.reset(ids[t], std::uint64_t(w[0]) | (std::uint64_t(w[kChaChaGroup]) << 32),
                std::uint64_t(w[2 * kChaChaGroup]) | (std::uint64_t(w[3 * kChaChaGroup]) << 32));
        out[t] = double(m.sample(in[t], s));
      }
      t0 = t1;
    }
    s.m_cache = nullptr;
    secure_zero(words, 16 * kChaChaGroup);
  }
};

}  // namespace detail

/// `out[t] = m.sample(in[t], keyed.stream(ids[t]))` for every t (the same values, bit for bit),
/// batched: the ChaCha20 blocks of up to 16 records' (or, for contiguous ids, 64 records')
/// first words are computed at once by the SIMD core. Since each output depends only on
/// (key, ids[t], in[t]), any split, order or retry of the batch gives the same outputs.
/// \throws std::invalid_argument when `ids` or `out` differ in length from `in` (before any
///         draw), or what `m.sample` throws (e.g. a non-finite label; `out` is then written up
///         to that label, or up to the group of at most 64 records that holds it).
template <Mechanism M>
void sample_keyed(const M& m, std::span<const double> in, std::span<const std::uint64_t> ids, const KeyedRandom& keyed,
                  std::span<double> out) {
  if (ids.size() != in.size())
    throw std::invalid_argument("sample_keyed: 'ids' has " + std::to_string(ids.size()) + " entries but 'in' has " +
                                std::to_string(in.size()));
  if (out.size() != in.size())
    throw std::invalid_argument("sample_keyed: 'out' has " + std::to_string(out.size()) + " entries but 'in' has " +
                                std::to_string(in.size()));
  if constexpr (requires { std::visit([](const auto&) {}, m.variant()); })
    // A type-erased mechanism (AnyMechanism): one dispatch per batch, not per label.
    std::visit([&](const auto& inner) { detail::KeyedBatch::run(inner, in, ids, keyed, out); }, m.variant());
  else
    detail::KeyedBatch::run(m, in, ids, keyed, out);
}

}  // namespace labeldp
