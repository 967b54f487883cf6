// libFuzzer target: the numeric-column CSV reader (io::for_each_column_value: `optimal
// --outputs` (column `output`), `--support` (column `value`), `prior --input --column`) on
// arbitrary bytes. The first byte picks the column; every value passed on is finite and its
// line numbers increase; anything else must be std::invalid_argument.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <labeldp/io/csv.hpp>
#include <sstream>
#include <string>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  labeldp_fuzz::Bytes bytes(data, size);
  static const char* const columns[] = {"output", "value", "wage"};
  const std::string column = columns[bytes.u8() % 3];
  const std::string text(bytes.rest());
  labeldp_fuzz::expect_valid_or_invalid_argument([&] {
    std::istringstream in(text);
    labeldp::io::CsvReader reader(in, "<fuzz>");
    std::size_t last_line = 1;
    labeldp::io::for_each_column_value(reader, column, [&](double v, std::size_t line) {
      FUZZ_CHECK(std::isfinite(v));
      FUZZ_CHECK(line > last_line);
      last_line = line;
    });
  });
  return 0;
}
