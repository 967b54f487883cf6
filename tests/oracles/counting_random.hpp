// A generator that counts the 64-bit words a sampler draws: the constant-work tests check that
// the count is the same whatever the label (issue 13, timing).
#pragma once

#include <cstdint>

#include "labeldp/core/random.hpp"

namespace labeldp::test {

/// What every test generator of 64-bit words declares (std::uniform_random_bit_generator).
struct Words64 {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type(0); }
};

struct CountingRandom : Words64 {
  explicit CountingRandom(std::uint64_t seed = 99) : inner(seed) {}
  labeldp::SeededRandom inner;
  long long words = 0;
  result_type operator()() {
    ++words;
    return inner();
  }
};

}  // namespace labeldp::test
