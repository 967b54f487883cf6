/// \file
/// Internals of io/json_reader.hpp: the parsed document (a flat array of nodes) and the strict
/// recursive-descent RFC 8259 parser that builds it. See io/json_reader.hpp for the rules.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

namespace labeldp::io::detail {

/// Kind of a JSON value.
enum class JsonKind : std::uint8_t { Null, Boolean, Number, String, Array, Object };

inline constexpr std::uint32_t kJsonNoParent = 0xffffffffu;

// One value of a parsed document. Strings and keys live in JsonTree::pool; the children of an
// array or object are the ids children[first .. first + count).
struct JsonNode {
  std::uint32_t parent = kJsonNoParent;
  std::uint32_t position = 0;  // index in the parent's children
  std::uint32_t line = 0, column = 0;
  std::uint32_t first = 0, count = 0;            // string: pool offset and length; container: children
  std::uint32_t key_offset = 0, key_length = 0;  // key, when the parent is an object
  double number = 0;
  JsonKind kind = JsonKind::Null;
  bool boolean = false;
};

struct JsonTree {
  std::string source;
  std::string pool;
  std::vector<JsonNode> nodes;
  std::vector<std::uint32_t> children;
};

// Quotes `text` for a one-line message: control characters, quotes and backslashes escaped,
// non-ASCII bytes as \xNN, at most 48 bytes shown.
inline std::string json_quote(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string s = "'";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == 48) {
      s += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    } else {
      s += char(c);
    }
  }
  return s + "'";
}

inline const char* json_kind_name(JsonKind k) {
  static constexpr const char* names[] = {"null", "a boolean", "a number", "a string", "an array", "an object"};
  return names[static_cast<int>(k)];
}

// Recursive-descent parser over the whole input; recursion depth is bounded by max_depth.
class JsonParser {
 public:
  /// Parses `text`; `source` names it in messages. Inputs over `max_bytes` (at most 2^31) and
  /// nesting over `max_depth` are refused.
  JsonParser(std::string_view text, std::string_view source, std::size_t max_bytes, std::size_t max_depth)
      : m_text(text), m_max_bytes(max_bytes), m_max_depth(max_depth), m_tree(std::make_shared<JsonTree>()) {
    m_tree->source = std::string(source);
  }

  /// The document and the id of its root value.
  /// \throws std::invalid_argument "source:line:column: rule".
  std::pair<std::shared_ptr<const JsonTree>, std::uint32_t> parse() {
    const std::size_t max_bytes = std::min<std::size_t>(m_max_bytes, std::size_t(1) << 31);
    if (m_text.size() > max_bytes)
      throw std::invalid_argument(m_tree->source + ": input is " + std::to_string(m_text.size()) +
                                  " bytes, more than the limit of " + std::to_string(max_bytes) + " bytes");
    if (m_text.substr(0, 3) == "\xEF\xBB\xBF") m_i = m_line_start = 3;
    skip_space();
    if (m_i == m_text.size()) fail("empty input: expected a JSON value");
    const std::uint32_t root = parse_value(0);
    skip_space();
    if (m_i != m_text.size()) fail("trailing data after the JSON value");
    return {std::move(m_tree), root};
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { fail_at(m_i, message); }
  [[noreturn]] void fail_at(std::size_t pos, const std::string& message) const {
    throw std::invalid_argument(m_tree->source + ":" + std::to_string(m_line) + ":" +
                                std::to_string(pos - m_line_start + 1) + ": " + message);
  }
  bool at_end() const { return m_i >= m_text.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(m_text[m_i]); }

  void skip_space() {
    while (!at_end()) {
      const char c = m_text[m_i];
      if (c == '\n') {
        ++m_line;
        m_line_start = m_i + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++m_i;
    }
  }

  std::string describe_here() const {
    if (at_end()) return "end of input";
    const unsigned char c = peek();
    return c >= 0x20 && c < 0x7f ? "'" + std::string(1, char(c)) + "'" : json_quote(m_text.substr(m_i, 1));
  }

  std::uint32_t new_node(JsonKind kind) {
    JsonNode n;
    n.kind = kind;
    n.line = std::uint32_t(m_line);
    n.column = std::uint32_t(m_i - m_line_start + 1);
    m_tree->nodes.push_back(n);
    return std::uint32_t(m_tree->nodes.size() - 1);
  }

  // Parses one value at the current position (after spaces); `depth` open containers enclose it.
  std::uint32_t parse_value(std::size_t depth) {
    if (at_end()) fail("unexpected end of input: expected a value");
    const unsigned char c = peek();
    if (c == '{' || c == '[') {
      if (depth + 1 > m_max_depth) fail("nesting deeper than " + std::to_string(m_max_depth) + " levels (the limit)");
      return parse_container(c == '{', depth + 1);
    }
    if (c == '"') {
      const std::uint32_t id = new_node(JsonKind::String);
      const auto [offset, length] = parse_string();
      m_tree->nodes[id].first = offset;
      m_tree->nodes[id].count = length;
      return id;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    struct Literal {
      std::string_view word;
      JsonKind kind;
      bool truth;
    };
    static constexpr Literal literals[] = {
        {"true", JsonKind::Boolean, true}, {"false", JsonKind::Boolean, false}, {"null", JsonKind::Null, false}};
    for (const Literal& lit : literals) {
      if (char(c) != lit.word[0]) continue;
      if (m_text.substr(m_i, lit.word.size()) != lit.word)
        fail("invalid literal " + describe_word() + ": expected '" + std::string(lit.word) + "'");
      const std::uint32_t id = new_node(lit.kind);
      m_tree->nodes[id].boolean = lit.truth;
      m_i += lit.word.size();
      return id;
    }
    if (m_text.substr(m_i, 3) == "NaN" || m_text.substr(m_i, 8) == "Infinity")
      fail("non-finite number " + describe_word() + " is not allowed (JSON numbers are finite)");
    if (c == '+' || c == '.') fail("invalid number " + describe_word() + ": a number starts with '-' or a digit");
    fail("unexpected " + describe_here() + ": expected a value");
  }

  std::string describe_word() const {
    std::size_t j = m_i;
    while (j < m_text.size() && j - m_i < 40 &&
           std::string_view(",]} \t\r\n").find(m_text[j]) == std::string_view::npos)
      ++j;
    return json_quote(m_text.substr(m_i, j - m_i));
  }

  std::uint32_t parse_container(bool object, std::size_t depth) {
    const std::uint32_t id = new_node(object ? JsonKind::Object : JsonKind::Array);
    const char close = object ? '}' : ']';
    const std::size_t mark = m_pending.size();
    ++m_i;
    skip_space();
    if (!at_end() && m_text[m_i] == close) {
      ++m_i;
    } else {
      for (;;) {
        skip_space();
        std::uint32_t key_offset = 0, key_length = 0;
        if (object) {
          if (at_end() || peek() != '"') fail("unexpected " + describe_here() + ": expected a string key");
          std::tie(key_offset, key_length) = parse_string();
          skip_space();
          if (at_end() || peek() != ':') fail("unexpected " + describe_here() + ": expected ':' after a key");
          ++m_i;
          skip_space();
        }
        const std::uint32_t child = parse_value(depth);
        m_tree->nodes[child].key_offset = key_offset;
        m_tree->nodes[child].key_length = key_length;
        m_pending.push_back(child);
        skip_space();
        if (!at_end() && peek() == ',') {
          ++m_i;
          continue;
        }
        if (!at_end() && m_text[m_i] == close) {
          ++m_i;
          break;
        }
        fail("unexpected " + describe_here() + ": expected ',' or '" + std::string(1, close) + "'");
      }
    }
    auto& tree = *m_tree;
    tree.nodes[id].first = std::uint32_t(tree.children.size());
    tree.nodes[id].count = std::uint32_t(m_pending.size() - mark);
    for (std::size_t j = mark; j < m_pending.size(); ++j) {
      tree.nodes[m_pending[j]].parent = id;
      tree.nodes[m_pending[j]].position = std::uint32_t(j - mark);
      tree.children.push_back(m_pending[j]);
    }
    m_pending.resize(mark);
    if (object) check_duplicate_keys(id);
    return id;
  }

  void check_duplicate_keys(std::uint32_t id) {
    const auto& tree = *m_tree;
    const JsonNode& n = tree.nodes[id];
    if (n.count < 2) return;
    auto key = [&](std::uint32_t c) {
      return std::string_view(tree.pool).substr(tree.nodes[c].key_offset, tree.nodes[c].key_length);
    };
    std::vector<std::uint32_t> ids(tree.children.begin() + n.first, tree.children.begin() + n.first + n.count);
    std::stable_sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
    for (std::size_t j = 1; j < ids.size(); ++j) {
      if (key(ids[j]) != key(ids[j - 1])) continue;
      const JsonNode& second = tree.nodes[ids[j]];
      const JsonNode& first = tree.nodes[ids[j - 1]];
      throw std::invalid_argument(tree.source + ":" + std::to_string(second.line) + ":" +
                                  std::to_string(second.column) + ": duplicate key " + json_quote(key(ids[j])) +
                                  " (first at " + std::to_string(first.line) + ":" + std::to_string(first.column) +
                                  ")");
    }
  }

  unsigned hex4() {
    unsigned v = 0;
    const char* first = m_text.data() + m_i;
    const auto r = std::from_chars(first, first + std::min<std::size_t>(4, m_text.size() - m_i), v, 16);
    if (r.ptr != first + 4 || r.ec != std::errc{}) fail("invalid escape: \\u needs four hexadecimal digits");
    m_i += 4;
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    const int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static constexpr unsigned lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    out += char(n == 1 ? cp : lead[n] | (cp >> (6 * (n - 1))));
    for (int k = n - 2; k >= 0; --k) out += char(0x80 | ((cp >> (6 * k)) & 0x3F));
  }

  // Length of the valid UTF-8 sequence starting at m_i (a non-ASCII lead byte), or 0.
  std::size_t utf8_length() const {
    const auto b = [&](std::size_t k) {
      return m_i + k < m_text.size() ? static_cast<unsigned char>(m_text[m_i + k]) : 0u;
    };
    const unsigned c = b(0);
    const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return b(k) >= lo && b(k) <= hi; };
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no UTF-16 surrogates
    if (c >= 0xE1 && c <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
  }

  // Parses a string literal at m_i (on its '"'), appends it decoded to the pool.
  std::pair<std::uint32_t, std::uint32_t> parse_string() {
    std::string& out = m_tree->pool;
    const std::size_t offset = out.size();
    ++m_i;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const unsigned char c = peek();
      if (c == '"') {
        ++m_i;
        break;
      }
      if (c < 0x20) fail("control character " + json_quote(m_text.substr(m_i, 1)) + " in a string must be escaped");
      if (c >= 0x80) {
        const std::size_t n = utf8_length();
        if (n == 0) fail("invalid UTF-8 byte " + json_quote(m_text.substr(m_i, 1)) + " in a string");
        out.append(m_text.substr(m_i, n));
        m_i += n;
        continue;
      }
      if (c != '\\') {
        out += char(c);
        ++m_i;
        continue;
      }
      const std::size_t escape_at = m_i;
      if (++m_i == m_text.size()) fail("unterminated string");
      const char e = m_text[m_i++];
      static constexpr std::string_view simple = "\"\\/bfnrt", decoded = "\"\\/\b\f\n\r\t";
      if (const auto k = simple.find(e); k != std::string_view::npos) {
        out += decoded[k];
        continue;
      }
      if (e != 'u') {
        const bool shown = e > 0x20 && e < 0x7f;
        fail_at(escape_at, std::string("invalid escape '\\") + (shown ? std::string(1, e) : "") + "' in a string" +
                               (shown ? "" : " (backslash before " + json_quote(std::string_view(&e, 1)) + ")"));
      }
      unsigned cp = hex4();
      if (cp >= 0xDC00 && cp <= 0xDFFF) fail_at(escape_at, "unpaired surrogate (low surrogate \\u escape first)");
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (m_text.substr(m_i, 2) != "\\u")
          fail_at(escape_at, "unpaired surrogate (high surrogate not followed by \\u)");
        m_i += 2;
        const unsigned low = hex4();
        if (low < 0xDC00 || low > 0xDFFF) fail_at(escape_at, "unpaired surrogate (high surrogate without a low one)");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      }
      append_utf8(out, cp);
    }
    return {std::uint32_t(offset), std::uint32_t(out.size() - offset)};
  }

  std::uint32_t parse_number() {
    const std::size_t start = m_i;
    auto digit = [&] { return !at_end() && peek() >= '0' && peek() <= '9'; };
    auto bad = [&](const std::string& rule) {
      m_i = start;
      fail("invalid number " + describe_word() + ": " + rule);
    };
    if (peek() == '-') {
      ++m_i;
      if (m_text.substr(m_i, 8) == "Infinity") {
        m_i = start;
        fail("non-finite number " + describe_word() + " is not allowed (JSON numbers are finite)");
      }
    }
    if (!digit()) bad("expected a digit after '-'");
    if (peek() == '0') {
      ++m_i;
      if (digit()) bad("leading zeros are not allowed");
    } else {
      while (digit()) ++m_i;
    }
    if (!at_end() && peek() == '.') {
      ++m_i;
      if (!digit()) bad("expected a digit after '.'");
      while (digit()) ++m_i;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++m_i;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++m_i;
      if (!digit()) bad("expected a digit in the exponent");
      while (digit()) ++m_i;
    }
    const std::string_view text = m_text.substr(start, m_i - start);
    double v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec == std::errc::result_out_of_range) {
      if (decimal_magnitude(text) > 0) {
        m_i = start;
        fail("number " + describe_word() + " is out of range (it overflows to infinity)");
      }
      v = text[0] == '-' ? -0.0 : 0.0;  // underflow: the correctly rounded value is zero
    } else if (r.ec != std::errc{} || r.ptr != text.data() + text.size() || !std::isfinite(v)) {
      bad("not a finite double");
    }
    m_i = start;
    const std::uint32_t id = new_node(JsonKind::Number);
    m_i = start + text.size();
    m_tree->nodes[id].number = v;
    return id;
  }

  // For a number from_chars found out of range: the exponent e with 10^(e-1) <= |x| < 10^e,
  // saturated (only its sign matters: > 0 means overflow, otherwise underflow).
  static long long decimal_magnitude(std::string_view t) {
    std::size_t j = t[0] == '-' ? 1 : 0;
    long long lead = 0;  // position of the first nonzero digit relative to the decimal point
    bool seen = false, fraction = false;
    long long integer_digits = 0, zeros_after_point = 0;
    for (; j < t.size() && t[j] != 'e' && t[j] != 'E'; ++j) {
      if (t[j] == '.') {
        fraction = true;
        continue;
      }
      if (!seen && t[j] != '0') seen = true;
      if (!fraction && seen) ++integer_digits;
      if (fraction && !seen) ++zeros_after_point;
    }
    lead = integer_digits > 0 ? integer_digits : -zeros_after_point;
    long long exponent = 0;
    if (j < t.size()) {
      ++j;
      const bool negative = t[j] == '-';
      if (t[j] == '-' || t[j] == '+') ++j;
      for (; j < t.size(); ++j) exponent = std::min<long long>(exponent * 10 + (t[j] - '0'), 1'000'000'000'000LL);
      if (negative) exponent = -exponent;
    }
    return lead + exponent;
  }

  std::string_view m_text;
  std::size_t m_max_bytes, m_max_depth;
  std::shared_ptr<JsonTree> m_tree;
  std::vector<std::uint32_t> m_pending;  // children of the open containers
  std::size_t m_i = 0;
  std::size_t m_line = 1;
  std::size_t m_line_start = 0;
};

}  // namespace labeldp::io::detail
