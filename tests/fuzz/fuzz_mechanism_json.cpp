// libFuzzer target: the mechanism file loader (io::load_mechanism on io::parse_json: `audit
// --mechanism`, `privatize --mechanism`) on arbitrary bytes. A file it accepts must hold a
// mechanism that keeps the library's promises: a finite one is eps-DP exactly as stored
// (find_epsilon_violation) and as its sampler realizes it (realized_satisfies_epsilon), its rows
// sum to 1 and its samples are among its outputs; every kind samples finite labels and writes a
// file that loads back to the same file. Anything else must be std::invalid_argument.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/random.hpp>
#include <labeldp/io/mechanism_file.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"

namespace {

void check_mechanism(const labeldp::AnyMechanism& m) {
  FUZZ_CHECK(m.eps() > 0);
  labeldp::SeededRandom gen(7);
  if (const auto* f = m.finite()) {
    const auto& P = f->probabilities();
    FUZZ_CHECK(labeldp::find_epsilon_violation(P, m.eps()).column < 0);
    FUZZ_CHECK(labeldp::realized_satisfies_epsilon(*f, m.eps()));
    for (labeldp::Index i = 0; i < P.rows(); ++i) {
      FUZZ_CHECK(std::abs(P.row(i).sum() - 1) <= 1e-9);
      const double y = m.sample(f->inputs()[i], gen);
      bool found = false;
      for (labeldp::Index j = 0; j < f->num_outputs(); ++j) found = found || f->outputs()[j] == y;
      FUZZ_CHECK(found);
    }
  }
  for (const double y : {0.0, 1.0, -1e6, 1e6, 0.5}) FUZZ_CHECK(std::isfinite(m.sample(y, gen)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<labeldp::AnyMechanism> m;
  labeldp_fuzz::expect_valid_or_invalid_argument([&] { m.emplace(labeldp::io::load_mechanism(text, "<fuzz>")); });
  if (!m) return 0;
  check_mechanism(*m);
  // What the library writes, it reads back, to the same file (outside the try: no error allowed).
  const std::string written = m->to_json();
  const labeldp::AnyMechanism again = labeldp::io::load_mechanism(written, "<written>");
  FUZZ_CHECK(again.kind() == m->kind());
  FUZZ_CHECK(again.to_json() == written);
  return 0;
}
