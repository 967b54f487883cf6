// libFuzzer target: the prior CSV reader (io::read_prior_csv, `--prior` of bins, optimal,
// unbiased, baseline, privatize) on arbitrary bytes. A prior it accepts must be a distribution
// on sorted, distinct, finite values; anything else must be std::invalid_argument.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <labeldp/io/csv.hpp>
#include <sstream>
#include <string>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  labeldp_fuzz::expect_valid_or_invalid_argument([&] {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    const auto prior = labeldp::io::read_prior_csv(in, "<fuzz>");
    const auto& v = prior.values();
    const auto& p = prior.probabilities();
    FUZZ_CHECK(prior.size() >= 1 && v.size() == p.size());
    double total = 0;
    for (labeldp::Index i = 0; i < v.size(); ++i) {
      FUZZ_CHECK(std::isfinite(v[i]));
      FUZZ_CHECK(i == 0 || v[i - 1] < v[i]);
      FUZZ_CHECK(std::isfinite(p[i]) && p[i] >= 0 && p[i] <= 1);
      total += p[i];
    }
    FUZZ_CHECK(std::abs(total - 1) <= 1e-9);
  });
  return 0;
}
