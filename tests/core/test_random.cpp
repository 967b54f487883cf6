#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <labeldp/core/random.hpp>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

TEST_CASE("ChaCha20: RFC 8439 section 2.3.2 block function test vector", "[random]") {
  labeldp::ChaCha20::Key key{};
  for (std::uint32_t i = 0; i < 8; ++i)
    key[i] = (4 * i) | ((4 * i + 1) << 8) | ((4 * i + 2) << 16) | ((4 * i + 3) << 24);
  const labeldp::ChaCha20::Nonce nonce{0x09000000u, 0x4a000000u, 0x00000000u};
  labeldp::ChaCha20 gen(key, nonce, 1);
  const auto out = labeldp::ChaCha20::block(gen.state());
  const std::array<std::uint32_t, 16> expected{0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033,
                                               0x9aaa2204, 0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                                               0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
  for (std::size_t i = 0; i < 16; ++i) {
    INFO("word " << i);
    CHECK(out[i] == expected[i]);
  }
  // The stream generator yields the same block (words paired little-endian).
  for (std::size_t j = 0; j < 8; ++j)
    CHECK(gen() == (std::uint64_t(expected[2 * j]) | (std::uint64_t(expected[2 * j + 1]) << 32)));
}

TEST_CASE("ChaCha20: the batched stream equals an independent implementation over 20 blocks", "[random]") {
  // Known answers from Python's `cryptography` ChaCha20 (key 00..1f, RFC 8439 nonce, counter 1):
  // 64-bit words 0 and 7 of each of the first 20 blocks; spans several 8-block refills.
  const std::uint64_t expected[40] = {
      0x15593bd1e4e7f110ull, 0x4e3c50a2e883d0cbull, 0x4ebfd7397783880aull, 0x3baf864c37ca065bull,
      0x8665be83cbbdbfdcull, 0x0ea01b5de9fea953ull, 0xca7864330d9fd069ull, 0xd81a6e7fd26838ddull,
      0x0cef9da3e7bf19a9ull, 0x8f570de3be3413c4ull, 0xb1146f098e352b18ull, 0x76215bba5c810c8full,
      0xac8a895716a2dfcaull, 0xc519505997df4b3full, 0x0016f18884f70443ull, 0x94ad24e99a0f6ec6ull,
      0x96e47338e9de6a2cull, 0xd58b01653c47ea8aull, 0xa4a838cca5996742ull, 0xdd6f6deb768237bfull,
      0xdc5a80820b5588e1ull, 0x3262752535e2482dull, 0xbf172e73c6af3373ull, 0x2087fa3385355d8cull,
      0xbfe9fe2854c766deull, 0x780d26aee1e87b33ull, 0xed46d2d5b4ffab4bull, 0x5d7a56d676b152e0ull,
      0x5454404d48e9450cull, 0x4bc55a8aad264f88ull, 0xaf6a1fa35cd476beull, 0x0507a64c91d1676full,
      0x00eae1df1b0ae07cull, 0x142630858ea5100aull, 0xc3e0564f0946b1d2ull, 0x4f789514b7b1431eull,
      0x45b86d9193e0c597ull, 0x37aef8103342c8a6ull, 0x0161e4fa0ec02c99ull, 0x66012db9ef73e1beull};
  labeldp::ChaCha20::Key key{};
  for (std::uint32_t i = 0; i < 8; ++i)
    key[i] = (4 * i) | ((4 * i + 1) << 8) | ((4 * i + 2) << 16) | ((4 * i + 3) << 24);
  labeldp::ChaCha20 gen(key, {0x09000000u, 0x4a000000u, 0u}, 1);
  for (int b = 0; b < 20; ++b) {
    std::uint64_t words[8];
    for (auto& w : words) w = gen();
    INFO("block " << b);
    CHECK(words[0] == expected[2 * b]);
    CHECK(words[7] == expected[2 * b + 1]);
  }
}

TEST_CASE("ChaCha20: the 32-bit block counter carries into the next word", "[random]") {
  const labeldp::ChaCha20::Key key{1, 2, 3, 4, 5, 6, 7, 8};
  // Start 3 blocks before the 32-bit counter wraps: block 3 of the stream must equal the block
  // function at counter 0 with word 13 incremented.
  labeldp::ChaCha20 gen(key, {0, 0, 0}, 0xfffffffdu);
  for (int i = 0; i < 3 * 8; ++i) gen();
  labeldp::ChaCha20 ref(key, {1, 0, 0}, 0);
  const auto block = labeldp::ChaCha20::block(ref.state());
  for (std::size_t j = 0; j < 8; ++j)
    CHECK(gen() == (std::uint64_t(block[2 * j]) | (std::uint64_t(block[2 * j + 1]) << 32)));
}

TEST_CASE("SeededRandom is reproducible, SecureRandom is not", "[random]") {
  labeldp::SeededRandom a(42), b(42), c(43);
  bool all_equal = true, any_differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a(), y = b(), z = c();
    all_equal = all_equal && (x == y);
    any_differs = any_differs || (x != z);
  }
  CHECK(all_equal);
  CHECK(any_differs);
  labeldp::SecureRandom s1, s2;
  int same = 0;
  for (int i = 0; i < 16; ++i) same += (s1() == s2()) ? 1 : 0;
  CHECK(same < 2);  // two OS-keyed streams collide on a 64-bit word with probability 2^-64 each
  static_assert(std::uniform_random_bit_generator<labeldp::SecureRandom>);
  static_assert(std::is_same_v<labeldp::DefaultRandom, labeldp::SecureRandom>);
}

TEST_CASE("random_u64 assembles 64 bits from 32-bit and odd-range generators", "[random]") {
  std::mt19937 mt(1);
  std::mt19937 mt_copy(1);
  const std::uint64_t v = labeldp::random_u64(mt);
  const std::uint64_t lo = mt_copy(), hi = mt_copy();
  CHECK(v == (lo | (hi << 32)));
  std::minstd_rand odd(7);  // range [1, 2^31 - 2]: goes through the rejecting distribution
  std::uint64_t all_or = 0;
  for (int i = 0; i < 64; ++i) all_or |= labeldp::random_u64(odd);
  CHECK(all_or == ~std::uint64_t{0});  // every bit position gets set eventually
}

TEST_CASE("SecureRandom is not copyable (a copy would replay the noise) but movable", "[random]") {
  static_assert(!std::is_copy_constructible_v<labeldp::SecureRandom>);
  static_assert(!std::is_copy_assignable_v<labeldp::SecureRandom>);
  static_assert(std::is_nothrow_move_constructible_v<labeldp::SecureRandom>);
  static_assert(std::is_nothrow_move_assignable_v<labeldp::SecureRandom>);
  // Nor can it be sliced into a ChaCha20 copy (which would replay the stream).
  static_assert(!std::is_constructible_v<labeldp::ChaCha20, labeldp::SecureRandom&>);
  static_assert(!std::is_constructible_v<labeldp::ChaCha20, labeldp::SecureRandom&&>);
  static_assert(!std::is_assignable_v<labeldp::ChaCha20&, labeldp::SecureRandom&>);
  // The explicitly seeded generator stays copyable (reproducible by design).
  static_assert(std::is_copy_constructible_v<labeldp::SeededRandom>);
}

TEST_CASE("SecureRandom: two generators differ; a moved-from one rekeys to a fresh stream", "[random]") {
  labeldp::SecureRandom a, b;
  std::array<std::uint64_t, 8> wa{}, wb{};
  for (auto& w : wa) w = a();
  for (auto& w : wb) w = b();
  CHECK(wa != wb);

  // The moved-to generator continues the stream; the moved-from one is wiped and, when used
  // again, rekeys from getrandom(2): its words differ from the continuation of the stream.
  labeldp::SecureRandom c(std::move(a));
  std::array<std::uint64_t, 8> wc{}, wa2{};
  for (auto& w : wc) w = c();
  for (auto& w : wa2) w = a();  // NOLINT(bugprone-use-after-move): defined behaviour, tested
  CHECK(wc != wa2);
  CHECK(wa2 != std::array<std::uint64_t, 8>{});  // not the all-zero key's stream of a wiped state...
  labeldp::ChaCha20 zero({}, {});
  bool equals_zero_key = true;
  for (auto w : wa2) equals_zero_key = equals_zero_key && (w == zero());
  CHECK_FALSE(equals_zero_key);  // ...nor the keystream of the all-zero key

  labeldp::SecureRandom d;
  d = std::move(c);
  std::array<std::uint64_t, 8> wd{}, wc2{};
  for (auto& w : wd) w = d();
  for (auto& w : wc2) w = c();  // NOLINT(bugprone-use-after-move)
  CHECK(wd != wc2);
}

TEST_CASE("SecureRandom: after fork() the child's stream differs from the parent's", "[random]") {
  // The child draws word by word, or in one fill() (random_words()), which must rekey too.
  const bool fill = GENERATE(false, true);
  INFO("child draws with fill(): " << fill);
  labeldp::SecureRandom secure;
  // Through a ChaCha20& (as a program choosing between seeded and secure holds it) as well.
  labeldp::ChaCha20& gen = secure;
  // Leave words buffered across the fork: the child must not replay them either.
  for (int i = 0; i < 5; ++i) (void)gen();
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::array<std::uint64_t, 200> words{};  // past the 128-word buffer as well
    if (fill)
      labeldp::random_words(gen, words.data(), words.size());
    else
      for (auto& w : words) w = gen();
    const ssize_t n = ::write(fds[1], words.data(), sizeof words);
    ::_exit(n == ssize_t(sizeof words) ? 0 : 1);
  }
  ::close(fds[1]);
  std::array<std::uint64_t, 200> parent{}, child{};
  for (auto& w : parent) w = gen();
  std::size_t got = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(child.data());
  while (got < sizeof child) {
    const ssize_t n = ::read(fds[0], bytes + got, sizeof child - got);
    if (n <= 0) break;
    got += std::size_t(n);
  }
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == sizeof child);
  int same = 0;
  for (std::size_t i = 0; i < parent.size(); ++i) same += parent[i] == child[i] ? 1 : 0;
  INFO("words equal at the same position: " << same);
  CHECK(same == 0);
  // Nor is any child word one of the parent's (a shifted replay).
  int shared = 0;
  for (auto c : child)
    for (auto p : parent) shared += c == p ? 1 : 0;
  CHECK(shared == 0);
}

TEST_CASE("random_words: the same words in the same order as random_u64 calls, with or without fill()", "[random]") {
  // ChaCha20::fill() copies runs from the 128-word buffer: runs that end inside it, on its end
  // and across refills, mixed with single words, against a twin drawn word by word.
  labeldp::SeededRandom a(77), b(77);
  std::vector<std::uint64_t> got, want;
  for (std::size_t n : {0, 1, 5, 122, 128, 129, 300, 1, 127, 1000}) {
    std::vector<std::uint64_t> block(n + 1);
    labeldp::random_words(a, block.data(), n);
    block[n] = a();
    got.insert(got.end(), block.begin(), block.end());
    for (std::size_t i = 0; i <= n; ++i) want.push_back(labeldp::random_u64(b));
  }
  CHECK(got == want);
  // Generators without fill(): the loop of random_u64 (two words of a 32-bit generator each).
  std::mt19937 m32(5), n32(5);
  std::vector<std::uint64_t> w32(33);
  labeldp::random_words(m32, w32.data(), w32.size());
  for (std::uint64_t w : w32) CHECK(w == labeldp::random_u64(n32));
}

TEST_CASE("BufferedWords serves the generator's words in order, 64 at a time", "[random]") {
  labeldp::SeededRandom a(78), b(78);
  {
    labeldp::BufferedWords<labeldp::SeededRandom> words(a);
    for (int i = 0; i < 200; ++i) CHECK(labeldp::random_u64(words) == b());
  }
  // Destroyed after 200 of 256 words drawn from `a`: the 56 it held are skipped.
  for (int i = 0; i < 56; ++i) (void)b();
  CHECK(a() == b());
}

TEST_CASE("os_random_bytes fills odd lengths", "[random]") {
  std::array<unsigned char, 1000> a{}, b{};
  labeldp::detail::os_random_bytes(a.data(), 999);
  labeldp::detail::os_random_bytes(b.data(), 999);
  CHECK(a != b);
  CHECK(a[999] == 0);  // exactly 999 bytes written
}

TEST_CASE("An explicitly keyed ChaCha20 replays its stream in a forked child (reproducible by design)", "[random]") {
  labeldp::SeededRandom gen(11);
  labeldp::SeededRandom ref = gen;
  (void)gen();
  (void)ref();
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::uint64_t w = gen();
    const ssize_t n = ::write(fds[1], &w, sizeof w);
    ::_exit(n == ssize_t(sizeof w) ? 0 : 1);
  }
  ::close(fds[1]);
  std::uint64_t child = 0;
  REQUIRE(::read(fds[0], &child, sizeof child) == ssize_t(sizeof child));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(child == ref());
  CHECK(gen() == child);
}

namespace {

// Every SIMD width of the ChaCha20 core this machine runs (4 lanes always; 8 with AVX2; 16 with
// AVX-512F).
std::vector<labeldp::detail::ChaChaWidth> supported_widths() {
  std::vector<labeldp::detail::ChaChaWidth> widths;
  for (auto w : {labeldp::detail::ChaChaWidth::lanes4, labeldp::detail::ChaChaWidth::lanes8,
                 labeldp::detail::ChaChaWidth::lanes16})
    if (labeldp::detail::chacha_width_supported(w)) widths.push_back(w);
  return widths;
}

// The RFC 8439 test key 00 01 .. 1f as the state's words 4-11.
labeldp::ChaCha20::Block rfc_state(std::uint32_t n0, std::uint32_t n1, std::uint32_t n2) {
  labeldp::ChaCha20::Block s{0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
  for (std::uint32_t i = 0; i < 8; ++i)
    s[4 + i] = (4 * i) | ((4 * i + 1) << 8) | ((4 * i + 2) << 16) | ((4 * i + 3) << 24);
  s[13] = n0;
  s[14] = n1;
  s[15] = n2;
  return s;
}

}  // namespace

TEST_CASE("ChaCha20 SIMD core: RFC 8439 section 2.3.2 block at every width", "[random]") {
  const std::array<std::uint32_t, 16> expected{0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033,
                                               0x9aaa2204, 0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                                               0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
  const auto base = rfc_state(0x09000000u, 0x4a000000u, 0);
  // Counter 1 in word 12, the nonce's first word in word 13: the 64-bit counter is both.
  std::uint64_t counters[16];
  for (auto& c : counters) c = 1 | (std::uint64_t(0x09000000u) << 32);
  const auto widths = supported_widths();
  INFO("avx2 " << labeldp::detail::chacha_width_supported(labeldp::detail::ChaChaWidth::lanes8) << ", avx512f "
               << labeldp::detail::chacha_width_supported(labeldp::detail::ChaChaWidth::lanes16));
  CHECK(widths.size() >= 1);
  for (auto width : widths) {
    std::array<std::uint32_t, 256> out{};
    labeldp::detail::chacha20_blocks16(width, base.data(), counters, out.data());
    for (std::size_t b = 0; b < 16; ++b)
      for (std::size_t w = 0; w < 16; ++w) {
        INFO("width " << int(width) << " block " << b << " word " << w);
        CHECK(out[16 * w + b] == expected[w]);
      }
  }
}

TEST_CASE("ChaCha20 SIMD core: RFC 8439 section 2.4.2 keystream (sunscreen) at every width", "[random]") {
  const std::string plaintext =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would "
      "be it.";
  const std::array<std::uint8_t, 114> ciphertext{
      0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81, 0xe9, 0x7e, 0x7a,
      0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b, 0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47,
      0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57, 0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f,
      0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8, 0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08,
      0x8a, 0x22, 0xb6, 0x5e, 0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37,
      0x36, 0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42, 0x87, 0x4d};
  REQUIRE(plaintext.size() == ciphertext.size());
  const auto base = rfc_state(0, 0x4a000000u, 0);
  std::uint64_t counters[16];
  for (std::uint64_t b = 0; b < 16; ++b) counters[b] = 1 + b;
  for (auto width : supported_widths()) {
    std::array<std::uint32_t, 256> out{};
    labeldp::detail::chacha20_blocks16(width, base.data(), counters, out.data());
    for (std::size_t i = 0; i < plaintext.size(); ++i) {
      const std::size_t block = i / 64, word = (i % 64) / 4, shift = 8 * (i % 4);
      const auto key_byte = std::uint8_t(out[16 * word + block] >> shift);
      INFO("width " << int(width) << " byte " << i);
      CHECK(std::uint8_t(std::uint8_t(plaintext[i]) ^ key_byte) == ciphertext[i]);
    }
  }
}

TEST_CASE("ChaCha20 SIMD core: every width equals the scalar block bit for bit, counter carries included", "[random]") {
  std::mt19937_64 rng(20240515);
  for (int group = 0; group < 300; ++group) {
    labeldp::ChaCha20::Block base{};
    for (auto& w : base) w = std::uint32_t(rng());
    std::uint64_t counters[16];
    const int kind = group % 3;
    for (std::uint64_t b = 0; b < 16; ++b) {
      if (kind == 0)  // consecutive across the carry from word 12 into word 13
        counters[b] = (std::uint64_t(rng() % 1000) << 32) + 0xfffffff8u + b;
      else if (kind == 1)  // consecutive across the 64-bit wrap
        counters[b] = ~std::uint64_t{0} - 7 + b;
      else  // arbitrary (the keyed batches)
        counters[b] = rng();
    }
    for (auto width : supported_widths()) {
      std::array<std::uint32_t, 256> out{};
      labeldp::detail::chacha20_blocks16(width, base.data(), counters, out.data());
      for (std::size_t b = 0; b < 16; ++b) {
        auto state = base;
        state[12] = std::uint32_t(counters[b]);
        state[13] = std::uint32_t(counters[b] >> 32);
        const auto expected = labeldp::ChaCha20::block(state);
        for (std::size_t w = 0; w < 16; ++w) {
          INFO("group " << group << " width " << int(width) << " block " << b << " word " << w);
          REQUIRE(out[16 * w + b] == expected[w]);
        }
      }
    }
  }
}

TEST_CASE("ChaCha20 stream: 1000 blocks equal the scalar block function across the 32-bit carry", "[random]") {
  const labeldp::ChaCha20::Key key{11, 22, 33, 44, 55, 66, 77, 88};
  labeldp::ChaCha20 gen(key, {5, 6, 7}, 0xffffff00u);
  auto state = gen.state();
  for (int b = 0; b < 1000; ++b) {
    const auto block = labeldp::ChaCha20::block(state);
    for (std::size_t j = 0; j < 8; ++j) {
      INFO("block " << b << " word " << j);
      REQUIRE(gen() == (std::uint64_t(block[2 * j]) | (std::uint64_t(block[2 * j + 1]) << 32)));
    }
    if (++state[12] == 0) ++state[13];
  }
}
