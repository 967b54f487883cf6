// libFuzzer target: the histogram CSV reader (io::read_histogram_csv, `interval --hist`) on
// arbitrary bytes. A histogram it accepts has contiguous cells lo < hi with finite masses
// summing to 1; anything else must be std::invalid_argument.
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
    const auto h = labeldp::io::read_histogram_csv(in, "<fuzz>");
    const auto& e = h.edges();
    const auto& m = h.masses();
    FUZZ_CHECK(h.num_cells() >= 1 && e.size() == m.size() + 1);
    double total = 0;
    for (labeldp::Index i = 0; i < m.size(); ++i) {
      FUZZ_CHECK(std::isfinite(e[i]) && std::isfinite(e[i + 1]) && e[i] < e[i + 1]);
      FUZZ_CHECK(std::isfinite(m[i]) && m[i] >= 0);
      FUZZ_CHECK(std::isfinite(h.densities()[i]) && h.densities()[i] >= 0);
      total += m[i];
    }
    FUZZ_CHECK(std::abs(total - 1) <= 1e-9);
  });
  return 0;
}
