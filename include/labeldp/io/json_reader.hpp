/// \file
/// The library's one JSON reader: a small, strict RFC 8259 parser for mechanism files and other
/// JSON inputs (the labeldp CLI contract, "Common rules" and "Mechanism files"). The library
/// depends only on Eigen and the standard library, so it cannot use an external JSON library.
///
/// Strict means every document RFC 8259 forbids is rejected, and so is everything that would make
/// a mechanism file ambiguous: duplicate keys (naming the key), trailing data, numbers that are
/// not finite doubles (`1e400`, `NaN`, `Infinity`), invalid escapes, invalid UTF-8 and unpaired
/// surrogates, raw control characters in strings, leading zeros and other malformed numbers
/// (`+1`, `.5`, `1.`), nesting deeper than JsonLimits::max_depth and inputs larger than
/// JsonLimits::max_bytes. A UTF-8 byte-order mark at the very start is ignored (RFC 8259, 8.1).
///
/// Numbers are read with `std::from_chars`, which is correctly rounded, so a number written with
/// 17 significant digits (labeldp::json_number()) reads back to the same double. Numbers that
/// underflow read as zero of their sign.
///
/// Every error is a `std::invalid_argument` with a one-line message
/// `source:line:column: rule`, or for the typed accessors
/// `source:line:column: field 'probabilities[3][7]': expected a number, got a string`, so that
/// loaders stay short and their errors precise. Lines and columns are 1-based; columns count bytes.
///
/// Cost: time linear in the input (plus O(m log m) per object of m members for the duplicate-key
/// check, and O(m) per member lookup). Memory: 52 bytes per value (a node and a child index; a
/// value takes at least two bytes of input unless it is the last one, so at most 26 bytes per
/// input byte, transiently up to twice that while the arrays grow) plus the decoded strings; the
/// default 32 MiB input limit thus bounds a hostile document to under 2 GB and a typical
/// mechanism file (17-digit numbers) to about 3 bytes per input byte. The parser recurses at most
/// JsonLimits::max_depth levels (two frames each).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "labeldp/io/detail/json_parser.hpp"

namespace labeldp::io {

/// Size limits of parse_json(), checked before any allocation that depends on them.
struct JsonLimits {
  /// Largest accepted input in bytes (default 32 MiB; at most 2^31). Larger input is refused.
  std::size_t max_bytes = std::size_t(32) << 20;
  /// Deepest accepted nesting of arrays and objects (default 64; `[[1]]` has depth 2).
  std::size_t max_depth = 64;
};

class JsonValue;

/// Parses a complete JSON document (defined below).
JsonValue parse_json(std::string_view text, std::string_view source_name, const JsonLimits& limits = {});

/// A value of a parsed JSON document: null, boolean, number (a finite double), string (UTF-8),
/// array, or object (members in document order). A JsonValue is a cheap handle that shares
/// ownership of its document, so it stays valid after parse_json()'s result is gone.
///
/// The typed accessors throw `std::invalid_argument` naming the source, position, field path and
/// rule, which keeps loaders short:
/// \code{.cpp}
/// const auto doc = labeldp::io::parse_json(text, "mechanism.json");
/// doc.require_only({"format", "version", "eps", "probabilities"});
/// if (doc.string("format") != "labeldp-mechanism") doc.at("format").fail("must be \"labeldp-mechanism\"");
/// const double eps = doc.number("eps");
/// const auto rows = doc.array("probabilities");
/// for (std::size_t i = 0; i < rows.size(); ++i) {
///   std::vector<double> row = rows.at(i).as_numbers();  // "field 'probabilities[3][7]': expected a number, ..."
/// }
/// \endcode
class JsonValue {
 public:
  using Kind = detail::JsonKind;

  /// The kind of this value.
  Kind kind() const { return node().kind; }
  /// \name Kind tests
  ///@{
  bool is_null() const { return kind() == Kind::Null; }
  bool is_boolean() const { return kind() == Kind::Boolean; }
  bool is_number() const { return kind() == Kind::Number; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_array() const { return kind() == Kind::Array; }
  bool is_object() const { return kind() == Kind::Object; }
  ///@}

  /// 1-based line of the value's first character.
  std::size_t line() const { return node().line; }
  /// 1-based column (in bytes) of the value's first character.
  std::size_t column() const { return node().column; }
  /// The source name given to parse_json().
  const std::string& source() const { return m_tree->source; }

  /// Path of this value from the document's root, e.g. `probabilities[3][7]` or `prior.values`;
  /// empty for the root itself.
  std::string path() const {
    std::vector<std::uint32_t> chain;
    for (std::uint32_t id = m_id; m_tree->nodes[id].parent != detail::kJsonNoParent; id = m_tree->nodes[id].parent)
      chain.push_back(id);
    std::string p;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const auto& n = m_tree->nodes[*it];
      if (m_tree->nodes[n.parent].kind == Kind::Array) {
        p += '[' + std::to_string(n.position) + ']';
      } else {
        if (!p.empty()) p += '.';
        const std::string q = detail::json_quote(std::string_view(m_tree->pool).substr(n.key_offset, n.key_length));
        p += q.substr(1, q.size() - 2);
      }
    }
    return p;
  }

  /// Throws `std::invalid_argument("source:line:column: field 'path': rule")` (for the root:
  /// `... top-level value: rule`). Loaders call it for semantic errors, e.g.
  /// `v.fail("must be finite and positive, got -1")`.
  [[noreturn]] void fail(std::string_view rule) const {
    const std::string p = path();
    throw std::invalid_argument(source() + ":" + std::to_string(line()) + ":" + std::to_string(column()) + ": " +
                                (p.empty() ? std::string("top-level value") : "field '" + p + "'") + ": " +
                                std::string(rule));
  }

  /// \name Typed views of this value
  /// Each throws `std::invalid_argument` ("expected a number, got a string") for another kind.
  ///@{
  bool as_bool() const { return expect(Kind::Boolean).boolean; }
  double as_number() const { return expect(Kind::Number).number; }
  /// The number as an integer; it must be integral and at most \f$2^{53}\f$ in magnitude.
  std::int64_t as_integer() const {
    const double v = as_number();
    if (!(std::floor(v) == v && std::abs(v) <= 9007199254740992.0))
      fail("expected an integer (at most 2^53 in magnitude), got " + number_text(v));
    return std::int64_t(v);
  }
  /// The decoded string (UTF-8).
  std::string as_string() const {
    const auto& n = expect(Kind::String);
    return m_tree->pool.substr(n.first, n.count);
  }
  /// An array of numbers as a vector; a non-number entry is named by its path.
  std::vector<double> as_numbers() const {
    const auto& n = expect(Kind::Array);
    std::vector<double> v;
    v.reserve(n.count);
    for (std::uint32_t i = 0; i < n.count; ++i) v.push_back(child(i).as_number());
    return v;
  }
  ///@}

  /// Number of elements of an array or members of an object.
  /// \throws std::invalid_argument for other kinds.
  std::size_t size() const {
    if (!is_array() && !is_object()) fail(std::string("expected an array or an object, got ") + kind_name());
    return node().count;
  }
  /// Element `i` of an array.
  /// \throws std::invalid_argument when this is not an array or `i` is out of range.
  JsonValue at(std::size_t i) const {
    const auto& n = expect(Kind::Array);
    if (i >= n.count)
      fail("index " + std::to_string(i) + " is out of range (" + std::to_string(n.count) + " elements)");
    return child(std::uint32_t(i));
  }
  /// The member keys of an object, in document order.
  std::vector<std::string> keys() const {
    const auto& n = expect(Kind::Object);
    std::vector<std::string> k;
    for (std::uint32_t i = 0; i < n.count; ++i) k.push_back(std::string(key_of(i)));
    return k;
  }
  /// The member `key` of an object, if present.
  /// \throws std::invalid_argument when this is not an object.
  std::optional<JsonValue> find(std::string_view key) const {
    const auto& n = expect(Kind::Object);
    for (std::uint32_t i = 0; i < n.count; ++i)
      if (key_of(i) == key) return child(i);
    return std::nullopt;
  }
  /// Whether an object has member `key`.
  bool contains(std::string_view key) const { return find(key).has_value(); }
  /// The required member `key` of an object.
  /// \throws std::invalid_argument "field 'key': missing (required)" naming the object's position.
  JsonValue at(std::string_view key) const {
    auto v = find(key);
    if (!v) {
      const std::string p = path();
      const std::string q = detail::json_quote(key);
      throw std::invalid_argument(source() + ":" + std::to_string(line()) + ":" + std::to_string(column()) +
                                  ": field '" + (p.empty() ? "" : p + ".") + q.substr(1, q.size() - 2) +
                                  "': missing (required)");
    }
    return *v;
  }

  /// \name Typed members of an object
  /// `obj.number("eps")` is `obj.at("eps").as_number()`: each throws naming the field for a
  /// missing member or a wrong kind. The optional_ forms return std::nullopt for a missing member
  /// (a member that is present must still have the right kind; null is not "missing").
  ///@{
  double number(std::string_view key) const { return at(key).as_number(); }
  std::int64_t integer(std::string_view key) const { return at(key).as_integer(); }
  std::string string(std::string_view key) const { return at(key).as_string(); }
  bool boolean(std::string_view key) const { return at(key).as_bool(); }
  JsonValue array(std::string_view key) const { return at(key).expect_self(Kind::Array); }
  JsonValue object(std::string_view key) const { return at(key).expect_self(Kind::Object); }
  std::optional<double> optional_number(std::string_view key) const {
    return optional<double>(key, &JsonValue::as_number);
  }
  std::optional<std::int64_t> optional_integer(std::string_view key) const {
    return optional<std::int64_t>(key, &JsonValue::as_integer);
  }
  std::optional<std::string> optional_string(std::string_view key) const {
    return optional<std::string>(key, &JsonValue::as_string);
  }
  std::optional<bool> optional_boolean(std::string_view key) const { return optional<bool>(key, &JsonValue::as_bool); }
  ///@}

  /// Rejects members of an object other than `allowed` (e.g. a misspelt optional field).
  /// \throws std::invalid_argument "field 'epss': unknown field (allowed: eps, ...)".
  void require_only(std::initializer_list<std::string_view> allowed) const {
    const auto& n = expect(Kind::Object);
    for (std::uint32_t i = 0; i < n.count; ++i) {
      if (std::find(allowed.begin(), allowed.end(), key_of(i)) != allowed.end()) continue;
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      child(i).fail("unknown field (allowed: " + list + ")");
    }
  }

 private:
  friend JsonValue parse_json(std::string_view, std::string_view, const JsonLimits&);
  JsonValue(std::shared_ptr<const detail::JsonTree> tree, std::uint32_t id) : m_tree(std::move(tree)), m_id(id) {}

  const detail::JsonNode& node() const { return m_tree->nodes[m_id]; }
  const char* kind_name() const { return detail::json_kind_name(kind()); }
  const detail::JsonNode& expect(Kind k) const {
    if (kind() != k) fail(std::string("expected ") + detail::json_kind_name(k) + ", got " + kind_name());
    return node();
  }
  JsonValue expect_self(Kind k) const {
    expect(k);
    return *this;
  }
  template <typename T>
  std::optional<T> optional(std::string_view key, T (JsonValue::*get)() const) const {
    const auto v = find(key);
    return v ? std::optional<T>(((*v).*get)()) : std::nullopt;
  }
  JsonValue child(std::uint32_t i) const { return JsonValue(m_tree, m_tree->children[node().first + i]); }
  std::string_view key_of(std::uint32_t i) const {
    const auto& c = m_tree->nodes[m_tree->children[node().first + i]];
    return std::string_view(m_tree->pool).substr(c.key_offset, c.key_length);
  }
  static std::string number_text(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  }

  std::shared_ptr<const detail::JsonTree> m_tree;
  std::uint32_t m_id = 0;
};

/// Parses a complete JSON document (RFC 8259, strictly: see the file comment for every rule).
/// \param text the document (UTF-8).
/// \param source_name used in messages, e.g. the file name.
/// \param limits input size and nesting limits.
/// \return the root value.
/// \throws std::invalid_argument "source:line:column: rule" for any invalid or over-limit input.
inline JsonValue parse_json(std::string_view text, std::string_view source_name, const JsonLimits& limits) {
  auto [tree, root] = detail::JsonParser(text, source_name, limits.max_bytes, limits.max_depth).parse();
  return JsonValue(std::move(tree), root);
}

/// Reads and parses a JSON file (or FIFO: read once), refusing more than `limits.max_bytes`
/// bytes before holding them in memory.
/// \throws std::invalid_argument "path: cannot open file: ..." or as parse_json().
inline JsonValue read_json_file(const std::string& path, const JsonLimits& limits = {}) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(path + ": cannot open file: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw std::invalid_argument(path + ": cannot open file: " + (err ? std::strerror(err) : "unknown error"));
  }
  std::string text;
  char buf[1 << 16];
  const std::size_t max_bytes = std::min<std::size_t>(limits.max_bytes, std::size_t(1) << 31);
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, std::size_t(in.gcount()));
    if (text.size() > max_bytes)
      throw std::invalid_argument(path + ": input is more than the limit of " + std::to_string(max_bytes) + " bytes");
  }
  if (in.bad()) throw std::invalid_argument(path + ": read error");
  return parse_json(text, path, limits);
}

}  // namespace labeldp::io