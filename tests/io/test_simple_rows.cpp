// The bulk CSV row scanner (io/detail/simple_rows.hpp) against a plain reference: the
// character-by-character scan it replaced (split at commas, refuse quotes, CR and wrong field
// counts, parse the label with parse_double), on random lines of every shape.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "labeldp/io/csv.hpp"
#include "labeldp/io/detail/simple_rows.hpp"

namespace {

using labeldp::io::parse_double;
using labeldp::io::detail::parse_plain_decimal;
using labeldp::io::detail::scan_simple_row;
using labeldp::io::detail::SimpleRow;

struct Reference {
  bool simple = false;
  std::size_t first = 0, last = 0, end = 0;  // offsets in the line
  double label = 0;
};

// The reference: one line (without its '\n').
Reference reference(std::string_view text, std::size_t col, std::size_t fields) {
  Reference r;
  std::size_t commas = 0, first = 0, last = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      if (commas == col) last = std::min(last, i);
      if (++commas == col) first = i + 1;
    } else if (c == '"' || c == '\r') {
      return r;
    }
  }
  if (commas + 1 != fields) return r;
  const auto v = parse_double(text.substr(first, last - first));
  if (!v || !std::isfinite(*v)) return r;
  r.simple = true;
  r.first = first;
  r.last = last;
  r.end = text.size();
  r.label = *v;
  return r;
}

// A random field: mostly plain decimals of every length, sometimes another number form or junk.
std::string random_field(std::mt19937_64& rng) {
  const char* pieces[] = {"0",  "1", "9", "5", "3", ".",  "-",  "+", " ",
                          "\t", "e", "E", "7", "2", "\"", "\r", "x", "inf"};
  std::string s;
  switch (rng() % 8) {
    case 0: {  // junk of any kind
      const std::size_t n = rng() % 8;
      for (std::size_t i = 0; i < n; ++i) s += pieces[rng() % std::size(pieces)];
      return s;
    }
    case 1:  // an exponent form
      return std::to_string(int(rng() % 2000) - 1000) + "e" + std::to_string(int(rng() % 40) - 20);
    default: {  // a plain decimal with 0-20 digits, maybe a sign and a dot
      if (rng() % 3 == 0) s += '-';
      const std::size_t digits = rng() % 21;
      const std::size_t dot = rng() % (digits + 2);
      for (std::size_t i = 0; i < digits; ++i) {
        if (i == dot) s += '.';
        s += char('0' + rng() % 10);
      }
      if (dot == digits && rng() % 2) s += '.';
      return s;
    }
  }
}

}  // namespace

TEST_CASE("parse_plain_decimal equals parse_double bit for bit on plain decimals", "[csv]") {
  std::mt19937_64 rng(20261127);
  std::size_t taken = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    std::string field = random_field(rng);
    std::string text = field + (rng() % 2 ? "," : "\n") + std::string(32, 'z');
    double v = -7;
    const char* end = parse_plain_decimal(text.data(), v);
    if (!end) continue;
    ++taken;
    INFO("field '" << field << "'");
    REQUIRE(std::size_t(end - text.data()) == field.size());
    const auto ref = parse_double(field);
    REQUIRE(ref.has_value());
    REQUIRE(std::bit_cast<std::uint64_t>(v) == std::bit_cast<std::uint64_t>(*ref));
  }
  CHECK(taken > 100000);  // the plain forms were exercised
  double v = 0;
  for (const char* refused : {"1e5,", "+1,", " 1,", "1 ,", "1.2.3,", "-,", ".,", "1234567890123456,", "--1,",
                              "12345678901234567890,", "1\r\n"}) {
    const std::string text = std::string(refused) + std::string(32, '\n');
    INFO(refused);
    CHECK(parse_plain_decimal(text.data(), v) == nullptr);
  }
}

TEST_CASE("scan_simple_row agrees with the reference scan on random lines", "[csv]") {
  std::mt19937_64 rng(7);
  auto parse = [](std::string_view f) { return parse_double(f); };
  std::size_t simple = 0, lines = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::size_t fields = 1 + rng() % 4, col = rng() % fields;
    std::string buf;
    std::vector<std::size_t> starts;
    const std::size_t n = 1 + rng() % 20;
    for (std::size_t i = 0; i < n; ++i) {
      starts.push_back(buf.size());
      const std::size_t have = rng() % 7 == 0 ? 1 + rng() % 5 : fields;  // sometimes the wrong count
      for (std::size_t f = 0; f < have; ++f) {
        if (f) buf += ',';
        buf += random_field(rng);
      }
      buf += '\n';
    }
    starts.push_back(buf.size());
    const char* const begin = buf.data();
    const char* const end = begin + buf.size();
    for (std::size_t i = 0; i < n; ++i) {
      ++lines;
      const std::string_view line(begin + starts[i], starts[i + 1] - starts[i] - 1);
      const Reference ref = reference(line, col, fields);
      SimpleRow row;
      const char* next = scan_simple_row(begin + starts[i], end, col, fields, row, parse);
      INFO("line '" << line << "', column " << col << " of " << fields);
      REQUIRE((next != nullptr) == ref.simple);
      if (!next) continue;
      ++simple;
      REQUIRE(next == begin + starts[i + 1]);
      REQUIRE(row.begin == begin + starts[i]);
      REQUIRE(std::size_t(row.first - row.begin) == ref.first);
      REQUIRE(std::size_t(row.last - row.begin) == ref.last);
      REQUIRE(std::size_t(row.end - row.begin) == ref.end);
      REQUIRE(std::bit_cast<std::uint64_t>(row.label) == std::bit_cast<std::uint64_t>(ref.label));
    }
  }
  CHECK(simple > lines / 4);
  CHECK(simple < lines);
}
