// A generator that replays given 64-bit words (zeros past the end) and counts what it hands out:
// drives the exact samplers down their rare boundary and tie paths, word by word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "oracles/counting_random.hpp"

namespace labeldp::test {

struct ScriptedRandom : Words64 {
  explicit ScriptedRandom(std::vector<std::uint64_t> w = {}) : words(std::move(w)) {}
  std::vector<std::uint64_t> words;
  std::size_t next = 0;  // words drawn so far (may pass words.size(): zeros were drawn then)
  result_type operator()() {
    const result_type w = next < words.size() ? words[next] : 0;
    ++next;
    return w;
  }
  /// Every scripted word was drawn, and no more.
  bool exhausted() const { return next == words.size(); }
};

}  // namespace labeldp::test
