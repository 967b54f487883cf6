#include <catch2/catch.hpp>

#include <labeldp/core/random.hpp>

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
  for (std::size_t j = 0; j < 8; ++j) CHECK(gen() == (std::uint64_t(expected[2 * j]) | (std::uint64_t(expected[2 * j + 1]) << 32)));
}
