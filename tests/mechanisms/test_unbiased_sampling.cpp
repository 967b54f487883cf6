// Samplers of the unbiased randomizers against their exact distributions: chi-square at fixed
// seeds (oracles/statistics.hpp). URR uses the core exact bernoulli(); the mechanism rows the
// core exact alias table.
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/random.hpp>
#include <labeldp/mechanisms/unbiased.hpp>
#include <vector>

#include "oracles/counting_random.hpp"
#include "oracles/statistics.hpp"

using labeldp::Index;
using labeldp::Vector;

namespace {

// Draws `samples` outputs of randomizer.sample(y) and tests them against
// randomizer.output_probabilities(y).
double randomizer_p_value(const labeldp::UnbiasedRandomizer<>& randomizer, double y, long long samples,
                          std::uint64_t seed) {
  const auto& outs = randomizer.mechanism().outputs();
  const Vector<> p = randomizer.output_probabilities(y);
  std::vector<long long> counts(std::size_t(outs.size()), 0);
  labeldp::SeededRandom gen(seed);
  for (long long s = 0; s < samples; ++s) {
    const double o = randomizer.sample(y, gen);
    Index j = 0;
    while (outs[j] != o) ++j;  // outputs are few; o is always one of them
    ++counts[std::size_t(j)];
  }
  return labeldp::test::chi_square(counts, std::vector<double>(p.data(), p.data() + p.size())).p_value;
}

double urr_p_value(const labeldp::UnbiasedRandomizedRounding<>& urr, double v, long long samples, std::uint64_t seed) {
  const Vector<> p = urr.probabilities(v);
  std::vector<long long> counts(std::size_t(p.size()), 0);
  labeldp::SeededRandom gen(seed);
  for (long long s = 0; s < samples; ++s) ++counts[std::size_t(urr.sample_index(v, gen))];
  return labeldp::test::chi_square(counts, std::vector<double>(p.data(), p.data() + p.size())).p_value;
}

labeldp::UnbiasedRandomizer<> figure2_randomizer() {
  const auto prior = labeldp::FinitePrior<>::from_weights({0, 1, 2}, {0.6, 0.25, 0.15});
  const auto r = labeldp::optimal_unbiased_continuous(prior, 0.5);
  REQUIRE(r.optimal());
  return labeldp::UnbiasedRandomizer<>(r.mechanism);
}

}  // namespace

TEST_CASE("UnbiasedRandomizer samples match the exact mixture (chi-square, quick)", "[unbiased][sampling]") {
  const auto randomizer = figure2_randomizer();
  for (double y : {0.0, 0.4, 1.0, 1.9}) {
    INFO("label " << y);
    CHECK(randomizer_p_value(randomizer, y, 20000, 42 + std::uint64_t(10 * y)) > 1e-4);
  }
}

TEST_CASE("URR samples match the exact two-point distribution (chi-square, quick)", "[unbiased][sampling]") {
  Vector<> pts(3);
  pts << 0, 1, 4;
  const labeldp::UnbiasedRandomizedRounding<> urr(pts);
  for (double v : {0.3, 2.5, 3.999}) {
    INFO("value " << v);
    CHECK(urr_p_value(urr, v, 20000, 7) > 1e-4);
  }
}

TEST_CASE("URR between points more than the largest double apart: exact probabilities, unbiased", "[unbiased]") {
  // The gap 3e308 overflows; the probability of rounding up is computed on halves instead of
  // failing (it was NaN: "'p' must be a probability"). Oracle: long double, whose range holds
  // the gap.
  Vector<> pts(3);
  pts << -1.5e308, 1.5e308, 1.7e308;
  const labeldp::UnbiasedRandomizedRounding<> urr(pts);
  for (double v : {-1.5e308, -1e308, 0.0, 3e307, 1.4e308, 1.6e308}) {
    INFO("value " << v);
    const Vector<> p = urr.probabilities(v);
    const long double lo = v < 1.5e308 ? -1.5e308L : 1.5e308L, hi = v < 1.5e308 ? 1.5e308L : 1.7e308L;
    const long double up = (static_cast<long double>(v) - lo) / (hi - lo);
    CHECK(std::abs(static_cast<long double>(p[v < 1.5e308 ? 1 : 2]) - up) <= 1e-15L);
    // E[rounded] = v, relative to the gap (in long double).
    const long double mean = lo * (1 - static_cast<long double>(p[v < 1.5e308 ? 1 : 2])) +
                             hi * static_cast<long double>(p[v < 1.5e308 ? 1 : 2]);
    CHECK(std::abs(mean - static_cast<long double>(v)) <= 1e-15L * (hi - lo));
    labeldp::SeededRandom gen(3);
    CHECK_NOTHROW(urr.sample_index(v, gen));
  }
}

TEST_CASE("UnbiasedRandomizer samples match the exact mixture (chi-square, 1e6 draws)", "[.][statistical][unbiased]") {
  const auto randomizer = figure2_randomizer();
  for (double y : {0.0, 0.7, 1.0, 2.0}) {
    INFO("label " << y);
    CHECK(randomizer_p_value(randomizer, y, 1000000, 1234 + std::uint64_t(10 * y)) > 1e-4);
  }
}

TEST_CASE("URR samples match the exact distribution (chi-square, 1e6 draws)", "[.][statistical][unbiased]") {
  Vector<> pts(4);
  pts << -2, 0, 0.5, 7;
  const labeldp::UnbiasedRandomizedRounding<> urr(pts);
  for (double v : {-1.0, 0.1, 0.25, 6.9}) {
    INFO("value " << v);
    CHECK(urr_p_value(urr, v, 1000000, 99) > 1e-4);
  }
}

TEST_CASE("URR and the unbiased randomizer draw the same words for every label (constant work)",
          "[unbiased][sampling]") {
  // URR: one coin whatever v, also on a point (probability 0); the randomizer adds one alias-table
  // word: two words per label, whether or not the label is one of the prior's values.
  const labeldp::UnbiasedRandomizedRounding<> urr(Vector<>{{0.0, 1.0, 2.5, 4.0}});
  for (double v : {0.0, 0.3, 1.0, 2.5, 3.99, 4.0}) {
    labeldp::test::CountingRandom gen;
    for (int s = 0; s < 500; ++s) (void)urr.sample_index(v, gen);
    INFO("v " << v);
    CHECK(gen.words == 500);
  }
  const auto randomizer = figure2_randomizer();
  for (double y : {0.0, 0.5, 1.0, 1.7, 2.0}) {
    labeldp::test::CountingRandom gen;
    for (int s = 0; s < 500; ++s) (void)randomizer.sample(y, gen);
    INFO("y " << y);
    CHECK(gen.words == 1000);
  }
}
