// libFuzzer target: the labels input of `privatize` on arbitrary bytes, read as
// examples/cli/cmd_privatize.cpp reads it with io::CsvReader: either a CSV with a header naming
// the label column (find_column, then per record the fields, record_text() and the label
// field's extent, which privatize uses to rewrite the row byte for byte around the noisy label),
// or one label per line (io::for_each_line_value, `--labels-only` input). Only
// std::invalid_argument may escape; extents must lie inside the record text.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <labeldp/io/csv.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  labeldp_fuzz::Bytes bytes(data, size);
  const std::uint8_t mode = bytes.u8();
  const std::string text(bytes.rest());
  labeldp_fuzz::expect_valid_or_invalid_argument([&] {
    std::istringstream in(text);
    if (mode % 4 == 0) {
      labeldp::io::for_each_line_value(in, "<fuzz>", [](double y, std::size_t) { FUZZ_CHECK(std::isfinite(y)); });
      return;
    }
    labeldp::io::CsvReader reader(in, "<fuzz>");
    std::vector<std::string> header, fields;
    const std::size_t col = labeldp::io::detail::find_column(reader, header, mode % 4 == 1 ? "wage" : "label");
    FUZZ_CHECK(col < header.size());
    std::size_t last_line = reader.line();
    while (reader.next(fields)) {
      FUZZ_CHECK(reader.line() > last_line);
      last_line = reader.line();
      const std::string& raw = reader.record_text();
      for (std::size_t j = 0; j < fields.size(); ++j) {
        const auto [first, last] = reader.field_extent(j);
        FUZZ_CHECK(first <= last && last <= raw.size());
        FUZZ_CHECK(j == 0 || first > reader.field_extent(j - 1).second);  // a comma between
      }
      if (fields.size() != header.size()) continue;  // privatize: "expected N fields"
      const auto [first, last] = reader.field_extent(col);
      // The extent privatize replaces is the label field itself: unquoted, its text up to blanks;
      // quoted, the quotes around it.
      std::string_view slice = std::string_view(raw).substr(first, last - first);
      while (!slice.empty() && (slice.front() == ' ' || slice.front() == '\t')) slice.remove_prefix(1);
      while (!slice.empty() && (slice.back() == ' ' || slice.back() == '\t')) slice.remove_suffix(1);
      if (!slice.empty() && slice.front() == '"')
        FUZZ_CHECK(slice.size() >= 2 && slice.back() == '"' && slice.size() >= fields[col].size() + 2);
      else
        FUZZ_CHECK(slice == fields[col]);
      if (const auto v = labeldp::io::parse_double(fields[col])) (void)*v;
    }
  });
  return 0;
}
