// Tests of the library's strict JSON reader (io/json_reader.hpp): a corpus of valid and invalid
// documents (one failing case per rejection rule, each message checked), the typed accessors'
// field paths, 17-digit round trips of json_number, a differential test against nlohmann/json
// on random documents, and random byte mutations that must parse or throw std::invalid_argument.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <labeldp/core/json_writer.hpp>
#include <labeldp/io/json_reader.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using labeldp::io::JsonLimits;
using labeldp::io::JsonValue;
using labeldp::io::parse_json;

namespace {

// The message of the std::invalid_argument that parsing `text` throws ("" if it parses).
std::string error_of(const std::string& text, const JsonLimits& limits = {}) {
  try {
    parse_json(text, "doc.json", limits);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

template <typename F>
std::string error_of_call(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json reader: valid documents parse to the right values", "[json_reader]") {
  SECTION("scalars") {
    CHECK(parse_json("null", "d").is_null());
    CHECK(parse_json(" true ", "d").as_bool());
    CHECK_FALSE(parse_json("\tfalse\r\n", "d").as_bool());
    CHECK(parse_json("0", "d").as_number() == 0);
    CHECK(std::signbit(parse_json("-0", "d").as_number()));
    CHECK(parse_json("-12.5e-1", "d").as_number() == -1.25);
    CHECK(parse_json("1E+2", "d").as_number() == 100);
    CHECK(parse_json("1e-400", "d").as_number() == 0);  // underflow reads as zero
    CHECK(std::signbit(parse_json("-1e-400", "d").as_number()));
    CHECK(parse_json("4.9406564584124654e-324", "d").as_number() == std::numeric_limits<double>::denorm_min());
    CHECK(parse_json("1.7976931348623157e308", "d").as_number() == std::numeric_limits<double>::max());
    CHECK(parse_json("123456789012345678901234567890", "d").as_number() == 1.2345678901234568e29);
  }
  SECTION("strings: escapes and UTF-8") {
    CHECK(parse_json(R"("a\"b\\c\/d\b\f\n\r\t")", "d").as_string() == "a\"b\\c/d\b\f\n\r\t");
    CHECK(parse_json(R"("\u00e9\u20AC\ud83d\ude00")", "d").as_string() == "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    CHECK(parse_json("\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"", "d").as_string() ==
          "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    CHECK(parse_json(R"("\u0000")", "d").as_string() == std::string(1, '\0'));
  }
  SECTION("containers keep order; a byte-order mark is ignored") {
    const auto v = parse_json("\xEF\xBB\xBF{\"z\":[1,[2,{}],[]],\"a\":{\"b\":null},\"m\":\"x\"}", "d");
    CHECK(v.keys() == std::vector<std::string>{"z", "a", "m"});
    CHECK(v.array("z").size() == 3);
    CHECK(v.array("z").at(1).at(0).as_number() == 2);
    CHECK(v.object("a").at("b").is_null());
    CHECK(v.string("m") == "x");
    CHECK(parse_json("[]", "d").size() == 0);
    CHECK(parse_json("{}", "d").size() == 0);
  }
  SECTION("nesting up to the limit") {
    CHECK_NOTHROW(parse_json(std::string(64, '[') + std::string(64, ']'), "d"));
    CHECK_NOTHROW(parse_json(std::string(3, '[') + std::string(3, ']'), "d", JsonLimits{1 << 20, 3}));
  }
}

TEST_CASE("json reader: every rejection rule has its own failing case and message", "[json_reader]") {
  struct Case {
    std::string text, fragment;
  };
  const std::vector<Case> cases = {
      {"{\"eps\":1,\"b\":2,\"eps\":3}", "doc.json:1:22: duplicate key 'eps' (first at 1:8)"},
      {"{\"a\":{\"k\":1,\"k\":1}}", "duplicate key 'k'"},
      {"[1] 2", "doc.json:1:5: trailing data after the JSON value"},
      {"{} }", "trailing data"},
      {"1e400", "number '1e400' is out of range (it overflows to infinity)"},
      {"-1e309", "out of range"},
      {"[0.00000000001e320]", "out of range"},
      {"NaN", "non-finite number 'NaN' is not allowed"},
      {"[Infinity]", "non-finite number 'Infinity' is not allowed"},
      {"-Infinity", "non-finite number '-Infinity' is not allowed"},
      {R"("\x")", "doc.json:1:2: invalid escape '\\x' in a string"},
      {R"("\u12G4")", "\\u needs four hexadecimal digits"},
      {R"("\u12")", "\\u needs four hexadecimal digits"},
      {R"("\ud800")", "unpaired surrogate"},
      {R"("\ud800\u0041")", "unpaired surrogate (high surrogate without a low one)"},
      {R"("\udc00")", "unpaired surrogate (low surrogate"},
      {"\"\xFF\"", "invalid UTF-8 byte '\\xff' in a string"},
      {"\"\xC3\"", "invalid UTF-8 byte"},              // truncated sequence
      {"\"\xC0\xAF\"", "invalid UTF-8 byte"},          // overlong
      {"\"\xED\xA0\x80\"", "invalid UTF-8 byte"},      // encoded surrogate
      {"\"\xF4\x90\x80\x80\"", "invalid UTF-8 byte"},  // above U+10FFFF
      {"\"a\nb\"", "doc.json:1:3: control character '\\x0a' in a string must be escaped"},
      {"\"\t\"", "control character"},
      {"01", "invalid number '01': leading zeros are not allowed"},
      {"-012", "leading zeros are not allowed"},
      {"+1", "invalid number '+1': a number starts with '-' or a digit"},
      {".5", "invalid number '.5': a number starts with '-' or a digit"},
      {"1.", "invalid number '1.': expected a digit after '.'"},
      {"1.e3", "expected a digit after '.'"},
      {"1e", "expected a digit in the exponent"},
      {"1e+", "expected a digit in the exponent"},
      {"-", "expected a digit after '-'"},
      {"0x10", "trailing data"},
      {std::string(65, '[') + std::string(65, ']'), "doc.json:1:65: nesting deeper than 64 levels (the limit)"},
      {"", "doc.json:1:1: empty input: expected a JSON value"},
      {"  \n ", "empty input"},
      {"[1,]", "unexpected ']': expected a value"},
      {"[1 2]", "expected ',' or ']'"},
      {"{\"a\" 1}", "expected ':' after a key"},
      {"{a:1}", "expected a string key"},
      {"{\"a\":1,}", "expected a string key"},
      {"[1", "unexpected end of input: expected ',' or ']'"},
      {"\"abc", "unterminated string"},
      {"tru", "invalid literal 'tru': expected 'true'"},
      {"nul", "expected 'null'"},
      {"'a'", "unexpected ''': expected a value"},
      {std::string("[\0]", 3), "unexpected '\\x00'"},
  };
  for (const auto& c : cases) {
    INFO("document: " << c.text);
    const std::string e = error_of(c.text);
    CHECK_THAT(e, StartsWith("doc.json:") && Contains(c.fragment));
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("json reader: the input size limit is checked first", "[json_reader]") {
  const std::string doc = "[" + std::string(100, ' ') + "1]";
  CHECK_THAT(error_of(doc, JsonLimits{64, 64}),
             Contains("doc.json: input is 103 bytes, more than the limit of 64 bytes"));
  CHECK(error_of(doc, JsonLimits{103, 64}).empty());
}

TEST_CASE("json reader: errors report line and column", "[json_reader]") {
  CHECK_THAT(error_of("{\n  \"a\": 1,\n  \"b\": [1, 2,, 3]\n}"), StartsWith("doc.json:3:14: unexpected ','"));
  const auto v = parse_json("{\n  \"a\": 1,\n  \"b\": [1, 2, 3]\n}", "doc.json");
  CHECK(v.at("b").line() == 3);
  CHECK(v.at("b").column() == 8);
  CHECK(v.at("b").at(2).column() == 15);
}

TEST_CASE("json reader: typed accessors name the source, position, field path and rule", "[json_reader]") {
  const auto doc = parse_json(
      "{\"mechanism\":\"rr\",\"eps\":1.5,\"clip\":true,\"version\":1,\n"
      "\"probabilities\":[[0.5,0.5],[1,\"x\"]],\"prior\":{\"values\":[1,2,null]}}",
      "mechanism.json");
  CHECK(doc.string("mechanism") == "rr");
  CHECK(doc.number("eps") == 1.5);
  CHECK(doc.boolean("clip"));
  CHECK(doc.integer("version") == 1);
  CHECK(doc.optional_number("delta") == std::nullopt);
  CHECK(doc.optional_number("eps") == 1.5);
  CHECK(doc.optional_boolean("clip") == true);
  CHECK(doc.array("probabilities").at(0).as_numbers() == std::vector<double>{0.5, 0.5});
  CHECK_NOTHROW(doc.require_only({"mechanism", "eps", "clip", "version", "probabilities", "prior"}));

  CHECK(error_of_call([&] { doc.array("probabilities").at(1).as_numbers(); }) ==
        "mechanism.json:2:31: field 'probabilities[1][1]': expected a number, got a string");
  CHECK(error_of_call([&] { doc.object("prior").array("values").as_numbers(); }) ==
        "mechanism.json:2:60: field 'prior.values[2]': expected a number, got null");
  CHECK(error_of_call([&] { doc.number("delta"); }) == "mechanism.json:1:1: field 'delta': missing (required)");
  CHECK(error_of_call([&] { doc.object("prior").number("probs"); }) ==
        "mechanism.json:2:45: field 'prior.probs': missing (required)");
  CHECK_THAT(error_of_call([&] { doc.number("mechanism"); }),
             Contains("field 'mechanism': expected a number, got a string"));
  CHECK_THAT(error_of_call([&] { doc.string("eps"); }), Contains("field 'eps': expected a string, got a number"));
  CHECK_THAT(error_of_call([&] { doc.boolean("eps"); }), Contains("field 'eps': expected a boolean, got a number"));
  CHECK_THAT(error_of_call([&] { doc.array("eps"); }), Contains("field 'eps': expected an array, got a number"));
  CHECK_THAT(error_of_call([&] { doc.object("probabilities"); }),
             Contains("field 'probabilities': expected an object, got an array"));
  CHECK_THAT(error_of_call([&] { doc.integer("eps"); }), Contains("field 'eps': expected an integer"));
  CHECK_THAT(error_of_call([&] { doc.optional_string("eps"); }), Contains("field 'eps': expected a string"));
  CHECK_THAT(error_of_call([&] { doc.array("probabilities").at(5); }),
             Contains("field 'probabilities': index 5 is out of range (2 elements)"));
  CHECK(error_of_call([&] {
          doc.require_only({"mechanism", "eps", "probabilities"});
        }) == "mechanism.json:1:36: field 'clip': unknown field (allowed: mechanism, eps, probabilities)");
  CHECK(error_of_call([&] { parse_json("[1]", "a.json").number("eps"); }) ==
        "a.json:1:1: top-level value: expected an object, got an array");
  CHECK(error_of_call([&] { doc.at("eps").fail("must be at most 1, got 1.5"); }) ==
        "mechanism.json:1:25: field 'eps': must be at most 1, got 1.5");
  // A handle keeps its document alive.
  JsonValue kept = parse_json("{\"a\":[\"s\"]}", "d").array("a").at(0);
  CHECK(kept.as_string() == "s");
  CHECK(kept.path() == "a[0]");
}

TEST_CASE("json reader: 17-digit numbers from json_number read back exactly", "[json_reader]") {
  std::mt19937_64 rng(20261125);
  std::vector<double> specials = {0.0,
                                  -0.0,
                                  std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::min(),
                                  std::numeric_limits<double>::max(),
                                  -std::numeric_limits<double>::max(),
                                  0.1,
                                  1.0 / 3,
                                  1e-300,
                                  5e-324};
  for (int i = 0; i < 20000; ++i) {
    double x = std::bit_cast<double>(rng());
    if (!std::isfinite(x)) continue;
    if (i % 2) x = std::ldexp(double(rng() >> 11), -int(rng() % 80));  // ordinary magnitudes too
    specials.push_back(x);
  }
  std::size_t mismatches = 0;
  for (double x : specials) {
    const double y = parse_json(labeldp::json_number(x), "d").as_number();
    if (std::bit_cast<std::uint64_t>(x) != std::bit_cast<std::uint64_t>(y)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

namespace {

// Random valid JSON text (no duplicate keys, depth <= 8), with random spacing and number and
// string spellings.
struct DocGenerator {
  std::mt19937_64 rng;
  std::size_t pick(std::size_t n) { return std::size_t(rng() % n); }
  std::string space() {
    static const char* ws[] = {"", "", "", " ", "\n", "\t", "\r\n", "  "};
    return ws[pick(8)];
  }
  std::string digits(std::size_t n, bool nonzero_first) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += char('0' + (i == 0 && nonzero_first ? 1 + pick(9) : pick(10)));
    return s;
  }
  std::string number() {
    if (pick(4) == 0) {
      double x = std::bit_cast<double>(rng());
      while (!std::isfinite(x)) x = std::bit_cast<double>(rng());
      return labeldp::json_number(x);
    }
    std::string s = pick(2) ? "-" : "";
    const std::size_t int_digits = pick(3) == 0 ? 1 : 1 + pick(25);
    s += int_digits == 1 && pick(3) == 0 ? "0" : digits(int_digits, true);
    if (pick(2)) s += "." + digits(1 + pick(25), false);
    if (pick(2)) {
      s += pick(2) ? "e" : "E";
      const int sign = int(pick(3));
      s += sign == 0 ? "" : sign == 1 ? "+" : "-";
      s += std::to_string(pick(sign == 2 ? 400 : 280));  // stays finite; may underflow
    }
    return s;
  }
  void utf8(std::string& s, unsigned cp) {
    if (cp < 0x80) {
      s += char(cp);
    } else if (cp < 0x800) {
      s += char(0xC0 | (cp >> 6));
      s += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += char(0xE0 | (cp >> 12));
      s += char(0x80 | ((cp >> 6) & 0x3F));
      s += char(0x80 | (cp & 0x3F));
    } else {
      s += char(0xF0 | (cp >> 18));
      s += char(0x80 | ((cp >> 12) & 0x3F));
      s += char(0x80 | ((cp >> 6) & 0x3F));
      s += char(0x80 | (cp & 0x3F));
    }
  }
  unsigned code_point() {
    for (;;) {
      const unsigned cp = pick(3) == 0 ? unsigned(pick(0x110000)) : unsigned(0x20 + pick(0x300));
      if (cp >= 0x20 && (cp < 0xD800 || cp > 0xDFFF)) return cp;
    }
  }
  std::string string() {
    std::string s = "\"";
    const std::size_t n = pick(12);
    char hex[16];
    for (std::size_t i = 0; i < n; ++i) {
      switch (pick(6)) {
        case 0: {
          static const char* esc[] = {"\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"};
          s += esc[pick(8)];
          break;
        }
        case 1: {
          const unsigned cp = code_point();
          if (cp >= 0x10000) {
            const unsigned v = cp - 0x10000;
            std::snprintf(hex, sizeof hex, "\\u%04X\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
          } else {
            std::snprintf(hex, sizeof hex, pick(2) ? "\\u%04x" : "\\u%04X", cp);
          }
          s += hex;
          break;
        }
        case 2: {
          const unsigned cp = code_point();
          if (cp == '"' || cp == '\\')
            s += 'q';
          else
            utf8(s, cp);
          break;
        }
        default: {
          const char c = char(0x20 + pick(0x5f));
          s += (c == '"' || c == '\\') ? 'x' : c;
        }
      }
    }
    return s + "\"";
  }
  std::string value(int depth) {
    const std::size_t kind = depth >= 8 ? pick(4) : pick(6);
    switch (kind) {
      case 0: {
        static const char* lit[] = {"null", "true", "false"};
        return lit[pick(3)];
      }
      case 1:
      case 2:
        return number();
      case 3:
        return string();
      case 4: {
        std::string s = "[" + space();
        const std::size_t n = pick(5);
        for (std::size_t i = 0; i < n; ++i) s += (i ? "," + space() : "") + value(depth + 1) + space();
        return s + "]";
      }
      default: {
        std::string s = "{" + space();
        const std::size_t n = pick(5);
        for (std::size_t i = 0; i < n; ++i) {
          std::string key = string();
          key.insert(key.size() - 1, "#" + std::to_string(i));  // unique keys
          s += (i ? "," + space() : "") + key + space() + ":" + space() + value(depth + 1) + space();
        }
        return s + "}";
      }
    }
  }
};

// Structural equality of our value and nlohmann's (object members in order).
bool same(const JsonValue& a, const nlohmann::ordered_json& b) {
  switch (a.kind()) {
    case JsonValue::Kind::Null:
      return b.is_null();
    case JsonValue::Kind::Boolean:
      return b.is_boolean() && b.get<bool>() == a.as_bool();
    case JsonValue::Kind::Number:
      return b.is_number() && b.get<double>() == a.as_number();
    case JsonValue::Kind::String:
      return b.is_string() && b.get<std::string>() == a.as_string();
    case JsonValue::Kind::Array: {
      if (!b.is_array() || b.size() != a.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!same(a.at(i), b[i])) return false;
      return true;
    }
    case JsonValue::Kind::Object: {
      if (!b.is_object() || b.size() != a.size()) return false;
      const auto keys = a.keys();
      std::size_t i = 0;
      for (auto it = b.begin(); it != b.end(); ++it, ++i)
        if (it.key() != keys[i] || !same(a.at(keys[i]), it.value())) return false;
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("json reader: agrees with nlohmann/json on random valid documents", "[json_reader]") {
  DocGenerator gen{std::mt19937_64(7)};
  int rejected = 0, different = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::string text = gen.space() + gen.value(0) + gen.space();
    const auto theirs = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    REQUIRE_FALSE(theirs.is_discarded());  // the generator makes valid JSON only
    try {
      if (!same(parse_json(text, "d"), theirs)) {
        ++different;
        UNSCOPED_INFO("values differ: " << text);
      }
    } catch (const std::invalid_argument& e) {
      ++rejected;
      UNSCOPED_INFO("rejected: " << text << "\n  " << e.what());
    }
  }
  CHECK(rejected == 0);
  CHECK(different == 0);
}

namespace {

// Parses `iterations` random byte mutations of random valid documents: each must parse or throw
// std::invalid_argument with a one-line "m.json:..." message, and whatever parses must be JSON
// to nlohmann/json too, with the same values (we are stricter, never looser).
void mutation_round(int iterations, std::uint64_t seed) {
  DocGenerator gen{std::mt19937_64(seed)};
  std::mt19937_64 rng(seed + 2);
  static const char interesting[] = "[]{}\",:\\-+.eE0123456789tfnu \n\x00\x7f\x80\xbf\xc0\xed\xf4\xff";
  int accepted = 0, rejected = 0, ours_only = 0;
  for (int i = 0; i < iterations; ++i) {
    std::string text = gen.value(0);
    const int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits && !text.empty(); ++k) {
      const std::size_t at = std::size_t(rng() % text.size());
      const char c = interesting[rng() % (sizeof interesting - 1)];
      switch (rng() % 4) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + std::ptrdiff_t(at), c);
          break;
        case 2:
          text.erase(at, 1 + rng() % 3);
          break;
        default:
          text[at] = char(text[at] ^ char(1 << (rng() % 8)));
      }
    }
    try {
      const auto v = parse_json(text, "m.json");
      ++accepted;
      // Whatever we accept is JSON to nlohmann too, with the same values.
      const auto theirs = nlohmann::ordered_json::parse(text, nullptr, false);
      if (theirs.is_discarded() || !same(v, theirs)) {
        ++ours_only;
        UNSCOPED_INFO("accepted by us only or different: " << text);
      }
    } catch (const std::invalid_argument& e) {
      ++rejected;
      const std::string m = e.what();
      if (m.rfind("m.json:", 0) != 0 || m.find('\n') != std::string::npos) FAIL("bad message: " << m);
    }
  }
  INFO("accepted " << accepted << ", rejected " << rejected);
  CHECK(ours_only == 0);
  CHECK(rejected > iterations / 6);
  CHECK(accepted > iterations / 60);
}

}  // namespace

TEST_CASE("json reader: random byte mutations parse or throw invalid_argument, never crash", "[json_reader]") {
  mutation_round(6000, 11);
}

TEST_CASE("json reader: 300,000 random byte mutations (slow; run under sanitizers)", "[.][json_reader_fuzz]") {
  mutation_round(300000, 101);
}

TEST_CASE("json reader: bounded time on adversarial input", "[json_reader]") {
  // A million open brackets stop at the depth limit.
  CHECK_THAT(error_of(std::string(1'000'000, '[')), Contains("nesting deeper than 64 levels"));
  // 200,000 members: the duplicate check is O(m log m); the duplicate is found at the end.
  std::string obj = "{";
  for (int i = 0; i < 200000; ++i) obj += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  CHECK(parse_json(obj.substr(0, obj.size() - 1) + "}", "d").size() == 200000);
  CHECK_THAT(error_of(obj + "\"k17\":0}"), Contains("duplicate key 'k17'"));
  // A number with a million digits is read exactly and quickly.
  CHECK(parse_json("0." + std::string(1'000'000, '0') + "1e1000000", "d").as_number() == 0.1);
}

TEST_CASE("json reader: read_json_file reads a file and refuses a missing one or a directory", "[json_reader]") {
  CHECK_THAT(error_of_call([] { labeldp::io::read_json_file("/nonexistent/dir/m.json"); }),
             StartsWith("/nonexistent/dir/m.json: cannot open file"));
  CHECK_THAT(error_of_call([] { labeldp::io::read_json_file("/tmp"); }), Contains("it is a directory"));
}
