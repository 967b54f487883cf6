// Tests of labeldp/io/json.hpp: 17-digit round-trip of numbers (checked against strtod on random
// bit patterns), rejection of non-finite numbers, and the mechanism fields read back by a JSON
// parser written independently here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <labeldp/core/mechanism.hpp>
#include <labeldp/io/json.hpp>
#include <limits>
#include <random>
#include <string>

using Catch::Matchers::Contains;
using labeldp::io::json_array;
using labeldp::io::json_number;

namespace {

// A tiny recursive-descent reader for arrays of numbers and arrays of arrays (the oracle:
// independent of the writer, strict about JSON number syntax via strtod on the exact token).
struct MiniJson {
  const std::string& s;
  std::size_t i = 0;
  void expect(char c) {
    if (i >= s.size() || s[i] != c)
      throw std::runtime_error("expected '" + std::string(1, c) + "' at " + std::to_string(i));
    ++i;
  }
  double number() {
    const std::size_t start = i;
    while (i < s.size() && std::strchr("+-0123456789.eE", s[i])) ++i;
    const std::string tok = s.substr(start, i - start);
    char* end = nullptr;
    const double v = std::strtod(tok.c_str(), &end);
    if (tok.empty() || *end != '\0') throw std::runtime_error("bad number '" + tok + "'");
    return v;
  }
  std::vector<double> array() {
    std::vector<double> v;
    expect('[');
    if (s[i] == ']') {
      ++i;
      return v;
    }
    for (;;) {
      v.push_back(number());
      if (s[i] == ']') {
        ++i;
        return v;
      }
      expect(',');
    }
  }
  std::vector<std::vector<double>> matrix() {
    std::vector<std::vector<double>> m;
    expect('[');
    for (;;) {
      m.push_back(array());
      if (s[i] == ']') {
        ++i;
        return m;
      }
      expect(',');
    }
  }
  void key(const std::string& k) {
    expect('"');
    const std::size_t end = s.find('"', i);
    if (s.substr(i, end - i) != k) throw std::runtime_error("expected key " + k);
    i = end + 1;
    expect(':');
  }
};

double parse(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  REQUIRE(*end == '\0');
  return v;
}

}  // namespace

TEST_CASE("json_number: 17 significant digits", "[json]") {
  CHECK(json_number(0.1) == "0.10000000000000001");
  CHECK(json_number(1.0) == "1");
  CHECK(json_number(-2.5) == "-2.5");
  CHECK(json_number(0.0) == "0");
  CHECK(json_number(1e300) == "1.0000000000000001e+300");
  CHECK(json_number(std::numeric_limits<double>::denorm_min()) == "4.9406564584124654e-324");
}

TEST_CASE("json_number round-trips random doubles exactly", "[json]") {
  std::mt19937_64 gen(42);
  int checked = 0;
  for (int t = 0; t < 200000; ++t) {
    const std::uint64_t bits = gen();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string s = json_number(v);
    const double back = parse(s);
    std::uint64_t back_bits;
    std::memcpy(&back_bits, &back, sizeof back);
    INFO(s);
    REQUIRE(back_bits == bits);  // bit-exact, including the sign of zero
    ++checked;
  }
  CHECK(checked > 190000);
}

TEST_CASE("json_number rejects NaN", "[json]") {
  REQUIRE_THROWS_AS(json_number(std::nan("")), std::invalid_argument);
  REQUIRE_THROWS_WITH(json_number(std::nan("")), Contains("non-finite number nan"));
}

TEST_CASE("json_number rejects +infinity", "[json]") {
  REQUIRE_THROWS_AS(json_number(HUGE_VAL), std::invalid_argument);
  REQUIRE_THROWS_WITH(json_number(HUGE_VAL), Contains("non-finite number inf"));
}

TEST_CASE("json_number rejects -infinity", "[json]") {
  REQUIRE_THROWS_WITH(json_number(-HUGE_VAL), Contains("non-finite number -inf"));
}

TEST_CASE("json_array writes numbers and rejects a non-finite entry", "[json]") {
  labeldp::Vector<double> v(3);
  v << 0, 0.5, 1e-7;
  CHECK(json_array(v) == "[0,0.5,9.9999999999999995e-08]");
  CHECK(json_array(labeldp::Vector<double>(0)) == "[]");
  v[1] = std::nan("");
  REQUIRE_THROWS_AS(json_array(v), std::invalid_argument);
}

TEST_CASE("json_string escapes quotes, backslashes and control characters", "[json]") {
  CHECK(labeldp::io::json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
  CHECK(labeldp::io::json_string("squared") == "\"squared\"");
}

TEST_CASE("mechanism_json_fields reads back to the same mechanism", "[json]") {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  const labeldp::Index k = 4, d = 3;
  labeldp::Vector<double> in(k), out(d);
  in << -1.5, 0, 0.1, 7;
  out << 0.3, 1.0 / 3, 2e5;
  labeldp::Matrix<double> p(k, d);
  for (labeldp::Index i = 0; i < k; ++i) {
    for (labeldp::Index j = 0; j < d; ++j) p(i, j) = u(gen);
    p.row(i) /= p.row(i).sum();
  }
  const labeldp::FiniteMechanism<double> m(in, out, p);
  const std::string text = std::string("{") + labeldp::io::mechanism_json_fields(m) + "}";
  MiniJson r{text};
  r.expect('{');
  r.key("inputs");
  const auto inputs = r.array();
  r.expect(',');
  r.key("outputs");
  const auto outputs = r.array();
  r.expect(',');
  r.key("probabilities");
  const auto probs = r.matrix();
  r.expect('}');
  REQUIRE(r.i == text.size());
  REQUIRE(inputs.size() == std::size_t(k));
  REQUIRE(outputs.size() == std::size_t(d));
  REQUIRE(probs.size() == std::size_t(k));
  for (labeldp::Index i = 0; i < k; ++i) CHECK(inputs[std::size_t(i)] == in[i]);
  for (labeldp::Index j = 0; j < d; ++j) CHECK(outputs[std::size_t(j)] == out[j]);
  for (labeldp::Index i = 0; i < k; ++i) {
    REQUIRE(probs[std::size_t(i)].size() == std::size_t(d));
    for (labeldp::Index j = 0; j < d; ++j) CHECK(probs[std::size_t(i)][std::size_t(j)] == p(i, j));  // exact
  }
}
