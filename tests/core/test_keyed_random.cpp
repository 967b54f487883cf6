// KeyedRandom: the documented stream layout (against the scalar RFC 8439 block function),
// determinism whatever the batch split or order, the batch engine equal to per-record streams,
// the key's size check; [statistical]: keyed outputs fit the mechanism's realized
// probabilities (an under-noised mutant fails), and outputs under two keys are independent
// (joint chi-square against the product of the realized rows; key2 == key1 fails).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <labeldp/core/keyed_random.hpp>
#include <labeldp/core/mechanism.hpp>
#include <labeldp/mechanisms/any_mechanism.hpp>
#include <labeldp/mechanisms/randomized_response.hpp>
#include <labeldp/mechanisms/unbiased_outputs.hpp>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "oracles/statistics.hpp"

namespace {

labeldp::KeyedRandom::Key test_key(std::uint8_t salt) {
  labeldp::KeyedRandom::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = std::uint8_t(i * 37 + salt * 101 + 5);
  return key;
}

// Word w of stream (id, domain) computed from the documented layout with the scalar block.
std::uint64_t layout_word(const labeldp::KeyedRandom::Key& key, std::uint64_t id, std::uint32_t domain,
                          std::uint64_t w) {
  labeldp::ChaCha20::Block state{0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
  for (std::size_t i = 0; i < 8; ++i)
    state[4 + i] = std::uint32_t(key[4 * i]) | (std::uint32_t(key[4 * i + 1]) << 8) |
                   (std::uint32_t(key[4 * i + 2]) << 16) | (std::uint32_t(key[4 * i + 3]) << 24);
  state[12] = std::uint32_t(id / 4);
  state[13] = std::uint32_t((id / 4) >> 32);
  state[14] = std::uint32_t(w / 2);
  state[15] = domain;
  const auto block = labeldp::ChaCha20::block(state);
  const std::size_t j = std::size_t(2 * (id % 4) + (w % 2));
  return std::uint64_t(block[2 * j]) | (std::uint64_t(block[2 * j + 1]) << 32);
}

// A FiniteMechanism as a Mechanism (what sample_keyed takes).
struct Finite {
  labeldp::FiniteMechanism<double> finite;
  double eps() const { return 0; }
  double delta() const { return 0; }
  template <std::uniform_random_bit_generator G>
  double sample(double y, G& gen) const {
    return finite.sample(y, gen);
  }
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const double> in, std::span<double> out, G& gen) const {
    finite.sample(in, out, gen);
  }
  std::string to_json() const { return "{}"; }
  labeldp::Index num_outputs() const { return finite.num_outputs(); }
  labeldp::Matrix<double> realized_probabilities() const { return finite.realized_probabilities(); }
};

// Three-valued randomized response at eps = ln 3 (rows: 3/5 on the label, 1/5 elsewhere).
Finite rr3(double keep = 0.6) {
  labeldp::Vector<double> v(3);
  v << 0.0, 1.0, 2.0;
  labeldp::Matrix<double> p(3, 3);
  const double other = (1 - keep) / 2;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) p(i, j) = i == j ? keep : other;
  return Finite{labeldp::FiniteMechanism<double>(v, v, p)};
}

// A mechanism that draws `words` words per label (exercises the streams beyond the two words
// the batch engine precomputes): the label plus the xor of the words' low bits.
struct ManyWords {
  int words = 5;
  double eps() const { return 0; }
  double delta() const { return 0; }
  template <std::uniform_random_bit_generator G>
  double sample(double y, G& gen) const {
    std::uint64_t x = 0;
    for (int i = 0; i < words; ++i) x = x * 1000003u ^ gen();
    return y + double(x >> 11);
  }
  template <std::uniform_random_bit_generator G>
  void sample(std::span<const double> in, std::span<double> out, G& gen) const {
    labeldp::sample_each(*this, in, out, gen);
  }
  std::string to_json() const { return "{}"; }
};

template <typename M>
std::vector<double> per_record(const M& m, const std::vector<double>& in, const std::vector<std::uint64_t>& ids,
                               const labeldp::KeyedRandom& keyed) {
  std::vector<double> out(in.size());
  for (std::size_t t = 0; t < in.size(); ++t) {
    auto s = keyed.stream(ids[t]);
    out[t] = m.sample(in[t], s);
  }
  return out;
}

}  // namespace

TEST_CASE("KeyedRandom: stream words follow the documented ChaCha20 layout", "[keyed]") {
  const auto key = test_key(1);
  const labeldp::KeyedRandom keyed(key);
  // ids around a 2^32 block-counter boundary (carry into state word 13) and large ids.
  const std::uint64_t ids[] = {0, 1, 2, 3, 4, 7, 4ull * 0xffffffffull + 3, 4ull * 0x100000000ull, ~std::uint64_t{0}};
  for (std::uint64_t id : ids)
    for (std::uint32_t domain : {0u, 1u, 0xffffffffu}) {
      auto s = keyed.stream(id, domain);
      for (std::uint64_t w = 0; w < 7; ++w) {
        INFO("id " << id << " domain " << domain << " word " << w);
        CHECK(s() == layout_word(key, id, domain, w));
      }
    }
}

TEST_CASE("KeyedRandom: streams are functions of (key, id, domain)", "[keyed]") {
  const labeldp::KeyedRandom a(test_key(1)), b(test_key(1)), c(test_key(2));
  auto s1 = a.stream(42), s2 = b.stream(42), s3 = c.stream(42), s4 = a.stream(43), s5 = a.stream(42, 1);
  for (int w = 0; w < 6; ++w) {
    const auto x = s1();
    CHECK(x == s2());
    CHECK(x != s3());
    CHECK(x != s4());
    CHECK(x != s5());
  }
  // A copy of a stream replays it.
  auto s6 = a.stream(9);
  (void)s6();
  auto s7 = s6;
  CHECK(s6() == s7());
}

TEST_CASE("KeyedRandom: a key that is not 32 bytes is refused", "[keyed]") {
  const std::vector<std::uint8_t> short_key(31, 7);
  CHECK_THROWS_WITH(labeldp::KeyedRandom(std::span<const std::uint8_t>(short_key)),
                    "KeyedRandom: the key has 31 bytes; it must have 32");
  const std::vector<std::uint8_t> good(32, 7);
  const auto key = test_key(0);
  CHECK_NOTHROW(labeldp::KeyedRandom(std::span<const std::uint8_t>(good)));
  // The span and array constructors agree.
  auto s1 = labeldp::KeyedRandom(std::span<const std::uint8_t>(key.data(), key.size())).stream(3);
  auto s2 = labeldp::KeyedRandom(key).stream(3);
  CHECK(s1() == s2());
}

TEST_CASE("sample_keyed: equals per-record streams whatever the split, order or ids", "[keyed]") {
  const labeldp::KeyedRandom keyed(test_key(3));
  const auto m = rr3();
  const ManyWords many;       // pairs 0-2: words 2-5 through sample_keyed's SIMD cache
  const ManyWords deeper{9};  // pairs 3 and 4 beyond it (one scalar block each)
  std::mt19937_64 rng(7);
  const std::size_t n = 1000;
  std::vector<double> in(n);
  for (auto& y : in) y = double(rng() % 3);
  std::vector<std::uint64_t> contiguous(n), random_ids(n), repeated(n);
  std::iota(contiguous.begin(), contiguous.end(), std::uint64_t{4ull * 0xffffffffull - 100});
  for (auto& id : random_ids) id = rng();
  for (std::size_t t = 0; t < n; ++t) repeated[t] = t / 7;  // runs of equal ids
  for (const auto* ids : {&contiguous, &random_ids, &repeated}) {
    const auto expected = per_record(m, in, *ids, keyed);
    const auto expected_many = per_record(many, in, *ids, keyed);
    const auto expected_deeper = per_record(deeper, in, *ids, keyed);
    std::vector<double> out(n), out_many(n), out_deeper(n);
    labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(*ids), keyed,
                          std::span<double>(out));
    labeldp::sample_keyed(many, std::span<const double>(in), std::span<const std::uint64_t>(*ids), keyed,
                          std::span<double>(out_many));
    labeldp::sample_keyed(deeper, std::span<const double>(in), std::span<const std::uint64_t>(*ids), keyed,
                          std::span<double>(out_deeper));
    CHECK(out == expected);
    CHECK(out_many == expected_many);
    CHECK(out_deeper == expected_deeper);
    // Partitioned into uneven pieces.
    std::vector<double> pieces(n, -1);
    for (std::size_t t0 = 0, len = 1; t0 < n; t0 += len, len = len * 3 % 97 + 1) {
      const std::size_t k = std::min(len, n - t0);
      labeldp::sample_keyed(m, std::span<const double>(in).subspan(t0, k),
                            std::span<const std::uint64_t>(*ids).subspan(t0, k), keyed,
                            std::span<double>(pieces).subspan(t0, k));
    }
    CHECK(pieces == expected);
    // Shuffled order.
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<double> sin(n), sout(n);
    std::vector<std::uint64_t> sids(n);
    for (std::size_t t = 0; t < n; ++t) sin[t] = in[perm[t]], sids[t] = (*ids)[perm[t]];
    labeldp::sample_keyed(m, std::span<const double>(sin), std::span<const std::uint64_t>(sids), keyed,
                          std::span<double>(sout));
    for (std::size_t t = 0; t < n; ++t) CHECK(sout[t] == expected[perm[t]]);
  }
}

TEST_CASE("sample_keyed: an AnyMechanism on raw labels (randomized rounding + alias draw) equals per-record streams",
          "[keyed]") {
  // Both raw-label maps (nearest input: one word per record; unbiased rounding: two) go through
  // FiniteLabelMechanism::sample_words(). Inputs {-1.5e308, 1.5e308} overflow the rounding's gap
  // (the reference draw, which needs more words than the block gives: the group is redone per
  // record), one input has a coin of probability 0.
  const labeldp::KeyedRandom keyed(test_key(8));
  labeldp::Vector<double> grid(11), huge(2), one(1);
  for (int i = 0; i <= 10; ++i) grid[i] = double(i);
  huge << -1.5e308, 1.5e308;
  one << 2.0;
  std::mt19937_64 rng(9);
  for (const auto* inputs : {&grid, &huge, &one}) {
    for (const char* kind : {"rr", "unbiased"}) {
      const auto any = labeldp::AnyMechanism::from_finite(kind, 1.0, labeldp::randomized_response(*inputs, 1.0));
      std::uniform_real_distribution<double> label(-1.0, 11.0), unit(-1.0, 1.0);
      const std::size_t n = 777;
      std::vector<double> in(n), out(n);
      for (auto& y : in) y = inputs == &huge ? 1.4e308 * unit(rng) : label(rng);
      std::vector<std::uint64_t> contiguous(n), random_ids(n);
      std::iota(contiguous.begin(), contiguous.end(), std::uint64_t{3});
      for (auto& id : random_ids) id = rng();
      for (const auto* ids : {&contiguous, &random_ids}) {
        INFO(kind << ", " << inputs->size() << " inputs, " << (ids == &contiguous ? "contiguous" : "random") << " ids");
        labeldp::sample_keyed(any, std::span<const double>(in), std::span<const std::uint64_t>(*ids), keyed,
                              std::span<double>(out));
        CHECK(out == per_record(any, in, *ids, keyed));
      }
      if (inputs != &grid) continue;
      // The rounding draws a word: two records with equal labels and ids in one block still
      // differ somewhere (the outputs are not a function of the label alone).
      std::vector<double> same(n, 4.5), out_same(n);
      labeldp::sample_keyed(any, std::span<const double>(same), std::span<const std::uint64_t>(contiguous), keyed,
                            std::span<double>(out_same));
      CHECK(std::count(out_same.begin(), out_same.end(), out_same[0]) < std::ptrdiff_t(n));
      // A non-finite label is refused, naming the rule.
      in[500] = std::nan("");
      CHECK_THROWS_WITH(
          labeldp::sample_keyed(any, std::span<const double>(in), std::span<const std::uint64_t>(contiguous), keyed,
                                std::span<double>(out)),
          Catch::Contains("must be finite"));
    }
  }
}

TEST_CASE("sample_keyed: size mismatches are refused before any draw", "[keyed]") {
  const labeldp::KeyedRandom keyed(test_key(3));
  const auto m = rr3();
  const std::vector<double> in(4, 1.0);
  const std::vector<std::uint64_t> ids(3, 0);
  std::vector<double> out(4, -1);
  CHECK_THROWS_WITH(labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(ids), keyed,
                                          std::span<double>(out)),
                    "sample_keyed: 'ids' has 3 entries but 'in' has 4");
  const std::vector<std::uint64_t> ids4(4, 0);
  std::vector<double> out3(3, -1);
  CHECK_THROWS_WITH(labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(ids4), keyed,
                                          std::span<double>(out3)),
                    "sample_keyed: 'out' has 3 entries but 'in' has 4");
  CHECK(out3 == std::vector<double>(3, -1));
}

namespace {

// Counts of the outputs of sample_keyed over ids 0..n-1 with every label `y`.
std::vector<long long> keyed_counts(const Finite& m, const labeldp::KeyedRandom& keyed, double y, std::size_t n) {
  std::vector<double> in(n, y), out(n);
  std::vector<std::uint64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::uint64_t{0});
  labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(ids), keyed,
                        std::span<double>(out));
  std::vector<long long> counts(std::size_t(m.num_outputs()), 0);
  for (double o : out) ++counts[std::size_t(o)];
  return counts;
}

}  // namespace

TEST_CASE("sample_keyed: outputs fit the realized probabilities; an under-noised mutant does not",
          "[.][statistical][keyed]") {
  const labeldp::KeyedRandom keyed(test_key(4));
  const auto m = rr3();
  const auto mutant = rr3(0.62);  // 2 points more mass on the true label
  const auto realized = m.realized_probabilities();
  const std::size_t n = 400000;
  for (int y = 0; y < 3; ++y) {
    std::vector<double> row(3);
    for (int j = 0; j < 3; ++j) row[std::size_t(j)] = realized(y, j);
    const auto good = labeldp::test::chi_square(keyed_counts(m, keyed, double(y), n), row);
    const auto bad = labeldp::test::chi_square(keyed_counts(mutant, keyed, double(y), n), row);
    INFO("label " << y << ": z " << labeldp::test::chi_square_z(good) << ", mutant z "
                  << labeldp::test::chi_square_z(bad));
    CHECK(labeldp::test::chi_square_z(good) < 6);
    CHECK(labeldp::test::chi_square_z(bad) > 6);
  }
}

TEST_CASE("sample_keyed: outputs under two keys are independent; the same key twice is not",
          "[.][statistical][keyed]") {
  const auto m = rr3();
  const auto realized = m.realized_probabilities();
  const std::size_t n = 300000;
  const labeldp::KeyedRandom key1(test_key(5)), key2(test_key(6)), key1_again(test_key(5));
  std::vector<double> in(n), out1(n), out2(n), out_same(n);
  std::vector<std::uint64_t> ids(n);
  std::mt19937_64 rng(11);
  for (std::size_t t = 0; t < n; ++t) in[t] = double(rng() % 3), ids[t] = rng();
  labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(ids), key1,
                        std::span<double>(out1));
  labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(ids), key2,
                        std::span<double>(out2));
  labeldp::sample_keyed(m, std::span<const double>(in), std::span<const std::uint64_t>(ids), key1_again,
                        std::span<double>(out_same));
  // Per label y, the 9 cells (output under key A, output under key B) against
  // P[y][a] * P[y][b] (the product of the realized row with itself).
  auto joint_z = [&](const std::vector<double>& a, const std::vector<double>& b) {
    double worst = -1e300;
    for (int y = 0; y < 3; ++y) {
      std::vector<long long> counts(9, 0);
      for (std::size_t t = 0; t < n; ++t)
        if (in[t] == double(y)) ++counts[std::size_t(3 * a[t] + b[t])];
      std::vector<double> probs(9);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) probs[std::size_t(3 * i + j)] = realized(y, i) * realized(y, j);
      worst = std::max(worst, labeldp::test::chi_square_z(labeldp::test::chi_square(counts, probs)));
    }
    return worst;
  };
  const double independent = joint_z(out1, out2), same = joint_z(out1, out_same);
  INFO("z of two keys " << independent << ", of the same key twice " << same);
  CHECK(independent < 6);
  CHECK(same > 6);
}

#include <labeldp/prior/discretize.hpp>

TEST_CASE("NearestInputIndex (the raw-label map of finite mechanism files) equals Discretizer::points().index",
          "[keyed]") {
  std::mt19937_64 rng(21);
  std::vector<std::vector<double>> supports;
  supports.push_back({3.5});
  supports.push_back({-1.0, 2.0});
  {
    std::vector<double> grid;
    for (int i = 0; i <= 100; ++i) grid.push_back(50.0 * i);
    supports.push_back(grid);
  }
  {
    std::vector<double> tenths;  // 0.1 steps: not exact in binary, roundoff at bucket edges
    for (int i = 0; i <= 1000; ++i) tenths.push_back(0.1 * i - 7.3);
    supports.push_back(tenths);
  }
  for (int rep = 0; rep < 5; ++rep) {  // irregular: clustered and spread points
    std::vector<double> v;
    for (int i = 0; i < 60; ++i) v.push_back(std::ldexp(double(rng() % 100000) - 50000.0, int(rng() % 20) - 10));
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    supports.push_back(v);
  }
  supports.push_back({-1e308, 0.0, 1e308});  // a range that overflows
  for (const auto& support : supports) {
    labeldp::Vector<double> inputs(labeldp::Index(support.size()));
    for (std::size_t i = 0; i < support.size(); ++i) inputs[labeldp::Index(i)] = support[i];
    const labeldp::detail::NearestInputIndex fast(inputs);
    const auto reference = labeldp::Discretizer<double>::points(support);
    std::vector<double> labels{-1e300, 1e300, -0.0};
    for (std::size_t i = 0; i < support.size(); ++i) {
      const double s = support[i];
      for (double y : {s, std::nextafter(s, -HUGE_VAL), std::nextafter(s, HUGE_VAL)}) labels.push_back(y);
      if (i + 1 < support.size()) {
        const double mid = s + (support[i + 1] - s) / 2;
        for (double y : {mid, std::nextafter(mid, -HUGE_VAL), std::nextafter(mid, HUGE_VAL)}) labels.push_back(y);
      }
    }
    std::uniform_real_distribution<double> around(support.front() - 10, support.back() + 10);
    if (std::isfinite(support.back() - support.front()))
      for (int t = 0; t < 20000; ++t) labels.push_back(around(rng));
    for (double y : labels) {
      INFO("support of " << support.size() << " points, label " << y);
      REQUIRE(fast.find(y) == reference.index(y));
    }
  }
}

TEST_CASE("Unbiased mechanism files round raw labels exactly as UnbiasedRandomizedRounding, draw for draw", "[keyed]") {
  std::mt19937_64 rng(33);
  std::vector<std::vector<double>> supports{{-1.0, 2.0}, {0.0, 0.1, 0.30000000000000004, 7.0}};
  {
    std::vector<double> grid;
    for (int i = 0; i <= 100; ++i) grid.push_back(50.0 * i);
    supports.push_back(grid);
  }
  {
    std::vector<double> v;
    for (int i = 0; i < 40; ++i) v.push_back(std::ldexp(double(rng() % 100000) - 50000.0, int(rng() % 16) - 8));
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    supports.push_back(v);
  }
  for (const auto& support : supports) {
    const labeldp::Index k = labeldp::Index(support.size());
    labeldp::Vector<double> inputs(k);
    for (labeldp::Index i = 0; i < k; ++i) inputs[i] = support[std::size_t(i)];
    // k-ary RR is eps-DP, so it is a valid finite mechanism of any kind; only the map matters.
    const labeldp::FiniteLabelMechanism file("unbiased", 1.0, labeldp::randomized_response(inputs, 1.0));
    const labeldp::UnbiasedRandomizedRounding<double> rounding(inputs);
    std::vector<double> labels{support.front() - 5, support.back() + 5};
    for (std::size_t i = 0; i < support.size(); ++i) {
      labels.push_back(support[i]);
      labels.push_back(std::nextafter(support[i], -HUGE_VAL));
      labels.push_back(std::nextafter(support[i], HUGE_VAL));
    }
    std::uniform_real_distribution<double> around(support.front() - 1, support.back() + 1);
    for (int t = 0; t < 5000; ++t) labels.push_back(around(rng));
    labeldp::SeededRandom g1(77), g2(77);
    for (double y : labels) {
      const double c = std::clamp(y, support.front(), support.back());
      INFO("support of " << support.size() << " points, label " << y);
      REQUIRE(file.input_index(y, g1) == rounding.sample_index(c, g2));
      REQUIRE(g1() == g2());  // the same number of words drawn
    }
  }
}

TEST_CASE("FiniteLabelMechanism: the batch sampler draws as repeated single calls, draw for draw", "[keyed]") {
  // Labels around, on and between 101 inputs (the two-stage grid) and 3 uneven ones; both raw-label
  // maps (nearest input, unbiased randomized rounding), sizes across the 128-label blocks.
  std::vector<std::vector<double>> supports{{0.0, 0.1, 0.30000000000000004, 7.0}, {}};
  for (int i = 0; i <= 100; ++i) supports[1].push_back(50.0 * i);
  std::mt19937_64 rng(44);
  for (const auto& support : supports) {
    labeldp::Vector<double> inputs(labeldp::Index(support.size()));
    for (std::size_t i = 0; i < support.size(); ++i) inputs[labeldp::Index(i)] = support[i];
    std::uniform_real_distribution<double> around(support.front() - 1, support.back() + 1);
    for (const char* kind : {"unbiased", "rr-on-bins"}) {
      const labeldp::FiniteLabelMechanism m(kind, 1.0, labeldp::randomized_response(inputs, 1.0));
      for (std::size_t n : {std::size_t(1), std::size_t(127), std::size_t(128), std::size_t(1000)}) {
        std::vector<double> in(n), out(n);
        for (std::size_t t = 0; t < n; ++t) in[t] = t % 5 == 0 ? support[t % support.size()] : around(rng);
        labeldp::SeededRandom g1(9), g2(9);
        m.sample(std::span<const double>(in), std::span<double>(out), g1);
        INFO(kind << ", " << support.size() << " inputs, " << n << " labels");
        for (std::size_t t = 0; t < n; ++t) REQUIRE(out[t] == m.sample(in[t], g2));
        CHECK(g1() == g2());  // the same number of words drawn
      }
    }
  }
  const labeldp::FiniteLabelMechanism m(
      "unbiased", 1.0,
      labeldp::randomized_response(labeldp::Vector<double>(labeldp::Vector<double>::LinSpaced(3, 0, 2)), 1.0));
  std::vector<double> in(300, 1.5), out(300);
  in[200] = std::nan("");
  labeldp::SeededRandom gen(1);
  CHECK_THROWS_AS(m.sample(std::span<const double>(in), std::span<double>(out), gen), std::invalid_argument);
}

TEST_CASE("FiniteLabelMechanism: batch outputs of unbiased rounding fit the mixture of two rows; a mutant does not",
          "[.][statistical][keyed]") {
  // Label 0.3 between inputs 0 and 1: output distribution 0.7 P[0] + 0.3 P[1] of the realized
  // rows. The mutant rounds with an under-noised table (keep 0.62 instead of 0.6).
  const labeldp::FiniteLabelMechanism m("unbiased", 1.1, rr3().finite);  // ln 3 = 1.0986
  const labeldp::FiniteLabelMechanism mutant("unbiased", 1.2, rr3(0.62).finite);
  const auto realized = m.finite().realized_probabilities();
  std::vector<double> mix(3);
  for (int j = 0; j < 3; ++j) mix[std::size_t(j)] = 0.7 * realized(0, j) + 0.3 * realized(1, j);
  const std::size_t n = 400000;
  std::vector<double> in(n, 0.3), out(n);
  auto counts = [&](const labeldp::FiniteLabelMechanism& mech) {
    labeldp::SeededRandom gen(21);
    mech.sample(std::span<const double>(in), std::span<double>(out), gen);
    std::vector<long long> c(3, 0);
    for (double o : out) ++c[std::size_t(o)];
    return c;
  };
  const double good = labeldp::test::chi_square_z(labeldp::test::chi_square(counts(m), mix));
  const double bad = labeldp::test::chi_square_z(labeldp::test::chi_square(counts(mutant), mix));
  INFO("z " << good << ", mutant z " << bad);
  CHECK(good < 6);
  CHECK(bad > 6);
}
