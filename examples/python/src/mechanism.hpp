// The Python module's mechanism object: a mechanism file's text (exactly what the labeldp program
// prints for the same construction) and the library's AnyMechanism loaded from it, so that a
// mechanism built in Python, loaded from a file, or unpickled on a Dask worker is the same object
// and applies the same way as `labeldp privatize --mechanism FILE`.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "labeldp/io/json_reader.hpp"
#include "labeldp/io/mechanism_file.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"

namespace labeldp::python {

/// A loaded, validated mechanism file.
class PyMechanism {
 public:
  /// Parses and revalidates `text` (io::load_mechanism(): every field, eps-DP exactly);
  /// `source` names it in errors.
  /// \throws std::invalid_argument one line naming the source, line:column, the field and the rule.
  static PyMechanism from_text(std::string text, const std::string& source) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    const io::JsonValue doc = io::parse_json(text, source);
    AnyMechanism m = io::load_mechanism(doc);
    return PyMechanism(std::move(text), std::move(m), doc.optional_number("expected_loss"));
  }

  /// The mechanism file's text (one JSON object, no trailing newline).
  const std::string& text() const { return m_text; }
  /// The mechanism.
  const AnyMechanism& mechanism() const { return m_mech; }
  /// The file's `expected_loss`, when it states one.
  std::optional<double> expected_loss() const { return m_expected_loss; }

 private:
  PyMechanism(std::string text, AnyMechanism m, std::optional<double> loss)
      : m_text(std::move(text)), m_mech(std::move(m)), m_expected_loss(loss) {}

  std::string m_text;
  AnyMechanism m_mech;
  std::optional<double> m_expected_loss;
};

}  // namespace labeldp::python
