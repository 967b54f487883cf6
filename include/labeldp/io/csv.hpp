/// \file
/// CSV input for the library's file formats (the labeldp CLI
/// contract, "Input files"). Every error is a `std::invalid_argument` whose message
/// starts with `path:line:` and quotes the offending value, e.g.
/// `prior.csv:7: probability -0.1 is negative`, so that a user can fix the file without a debugger.
///
/// The reader follows RFC 4180 where it matters for robustness (quoted fields, doubled quotes,
/// quoted line breaks, CRLF) and is strict about numbers: a field is a number only if
/// `std::from_chars` consumes all of it (after trimming blanks), so "1e3" is accepted and "abc",
/// "" and "1.2.3" are rejected rather than silently read as 0 or 1.2.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "labeldp/core/histogram_prior.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/validate.hpp"
#include "labeldp/io/detail/simple_rows.hpp"

namespace labeldp::io {

/// Parses a whole string as a real number with `std::from_chars` (general format: "3", "-0.5",
/// "1e3", "inf", "nan"). Leading and trailing blanks (space, tab) and one leading '+' are allowed;
/// anything else that is left over makes the parse fail.
/// \return the number, or std::nullopt when `text` is not (entirely) a number. Out-of-range
///         magnitudes ("1e400") give +-infinity so that callers report them as non-finite.
inline std::optional<double> parse_double(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
    // "+-1" and "+" are not numbers.
    if (text.empty() || text.front() == '-' || text.front() == '+') return std::nullopt;
  }
  if (text.empty()) return std::nullopt;
  // Exact fast path (Clinger, 1990): a plain decimal with at most 15 digits is an integer
  // w < 2^53 over 10^f with f <= 15, both exact doubles, and IEEE division rounds their quotient
  // correctly -- the value from_chars returns. Anything else goes to from_chars.
  {
    const char* p = text.data();
    const char* const end = p + text.size();
    const bool negative = *p == '-';
    p += negative;
    std::uint64_t w = 0;
    int digits = 0, frac = 0;
    bool dot = false;
    for (; p != end && digits <= 15; ++p) {
      if (*p >= '0' && *p <= '9') {
        w = w * 10 + std::uint64_t(*p - '0');
        ++digits;
        frac += dot;
      } else if (*p == '.' && !dot) {
        dot = true;
      } else {
        break;
      }
    }
    if (p == end && digits >= 1 && digits <= 15) {
      const double v = double(w) / detail::kExactPow10[frac];
      return negative ? -v : v;
    }
  }
  double v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, v, std::chars_format::general);
  if (ptr != last) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves v unspecified here; the sign is the text's. Tiny magnitudes underflow.
    const bool negative = text.front() == '-';
    const std::string s(text);
    const double approx = std::strtod(s.c_str(), nullptr);
    if (std::abs(approx) < 1) return negative ? -0.0 : 0.0;
    return negative ? -HUGE_VAL : HUGE_VAL;
  }
  if (ec != std::errc{}) return std::nullopt;
  return v;
}

/// A streaming CSV record reader (RFC 4180 dialect: comma separator, double-quote quoting with a
/// doubled quote as an escaped quote, quoted line breaks allowed; CR before LF removed; blanks
/// around fields trimmed outside quotes; a UTF-8 byte-order mark at the start ignored). Blank
/// lines at the end of the input are ignored; a blank line followed by more data is an error (it
/// usually means a missing value). Memory is one record, at most max_record_bytes.
///
/// \code{.cpp}
/// labeldp::io::CsvReader reader("data.csv");
/// std::vector<std::string> fields;
/// while (reader.next(fields)) {
///   // reader.line() is the record's first line
/// }
/// \endcode
class CsvReader {
 public:
  /// Opens `path` for reading.
  /// \throws std::invalid_argument "path: cannot open file: <reason>" when it cannot be read.
  explicit CsvReader(const std::string& path) : m_name(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw std::invalid_argument(path + ": cannot open file: it is a directory");
    // Reads of kChunk bytes at a time from a regular file (a pipe or FIFO gives what it has).
    m_filebuf = std::make_unique<char[]>(kChunk);
    auto file = std::make_unique<std::ifstream>();
    file->rdbuf()->pubsetbuf(m_filebuf.get(), std::streamsize(kChunk));
    file->open(path, std::ios::binary);
    if (!*file) {
      const int err = errno;
      throw std::invalid_argument(path + ": cannot open file: " + (err ? std::strerror(err) : "unknown error"));
    }
    m_owned = std::move(file);
    m_in = m_owned.get();
  }

  /// Reads from a stream that outlives the reader; `name` is used in messages (e.g. "<stdin>").
  CsvReader(std::istream& in, std::string name) : m_name(std::move(name)), m_in(&in) {}

  /// Reads the next record into `fields` (unquoted, trimmed).
  /// \return false at the end of the input (trailing blank lines are skipped).
  /// \throws std::invalid_argument "path:line: ..." for an unterminated quote, text after a
  ///         closing quote, a blank line inside the data, or a read error.
  bool next(std::vector<std::string>& fields) {
    fields.clear();
    std::string line;
    std::size_t pending_blank = 0;
    for (;;) {
      if (!read_physical_line(line)) {
        check_stream();
        return false;  // only blank lines (if any) remained
      }
      if (is_blank(line)) {
        if (pending_blank == 0) pending_blank = m_physical_line;
        continue;
      }
      break;
    }
    if (pending_blank != 0) {
      m_line = pending_blank;
      fail("blank line inside the data (missing value?)");
    }
    m_line = m_physical_line;
    parse_record(line, fields);
    return true;
  }

  /// The longest record (and line) read, in bytes: a longer one is refused naming this limit
  /// before more memory is used (contract, "Common rules", limits).
  static constexpr std::size_t max_record_bytes = std::size_t(1) << 24;

  /// The 1-based line on which the record last returned by next() starts (the header is line 1).
  std::size_t line() const { return m_line; }

  /// The file name used in messages.
  const std::string& name() const { return m_name; }

  /// The text of the record last returned by next(): its physical lines joined by '\n' (a CR
  /// before a line break and a leading byte-order mark removed), and field j's extent in it,
  /// [first, last) from after the preceding comma to the next one (blanks and quotes included),
  /// so that a caller can replace one field and keep the others byte for byte.
  const std::string& record_text() const { return m_text; }
  std::pair<std::size_t, std::size_t> field_extent(std::size_t j) const { return m_extents.at(j); }

  /// Throws `std::invalid_argument("name:line: message")` for the current record.
  [[noreturn]] void fail(const std::string& message) const {
    throw std::invalid_argument(m_name + ":" + std::to_string(m_line) + ": " + message);
  }

  /// Parses field `text` of the current record as a finite real number; `what` names the field
  /// in messages ("value", "probability", "label", ...).
  /// \throws std::invalid_argument "name:line: what 'abc' is not a number" or
  ///         "name:line: what inf is not finite".
  double parse_finite(std::string_view text, std::string_view what) const {
    const auto v = parse_double(text);
    if (!v) fail(std::string(what) + " '" + std::string(text) + "' is not a number");
    if (!std::isfinite(*v)) fail(std::string(what) + " " + std::string(text) + " is not finite");
    return *v;
  }

  /// Bulk access for fast readers of simple records: the complete lines read ahead (each ending
  /// in '\n'; more input is read first when none is complete). Empty at the end of the input,
  /// or when the next line is longer than the read-ahead (next() then reads it). The caller
  /// parses a prefix of whole lines itself, marks them read with consume(), and leaves every
  /// line it does not handle exactly as next() would (quotes, CR, blank lines, a leading
  /// byte-order mark on line 1) to next(). The view is valid until the next call of any
  /// reading member.
  std::string_view buffered_lines() {
    auto complete = [&]() -> std::string_view {
      const std::string_view rest = std::string_view(m_buf).substr(m_pos);
      const std::size_t last = rest.rfind('\n');
      return last == std::string_view::npos ? std::string_view() : rest.substr(0, last + 1);
    };
    std::string_view lines = complete();
    if (lines.empty() && fill()) lines = complete();
    return lines;
  }

  /// Marks the first `bytes` of buffered_lines(), `lines` whole lines, as read (line() becomes
  /// the last of them).
  void consume(std::size_t bytes, std::size_t lines) {
    m_pos += bytes;
    m_physical_line += lines;
    if (lines > 0) m_line = m_physical_line;
  }

  /// The number of physical lines read so far.
  std::size_t lines_read() const { return m_physical_line; }

 private:
  static bool is_blank(const std::string& s) {
    for (char c : s)
      if (c != ' ' && c != '\t') return false;
    return true;
  }

  // Reads more input after the unconsumed bytes (moved to the front of the buffer): what one
  // read of the underlying file gives (sgetc() fills the stream's buffer; in_avail() is then
  // what it holds), so that a pipe or FIFO is processed as its data arrives, never waiting for
  // a full chunk. False at the end of the input.
  bool fill() {
    if (m_eof) return false;
    std::streambuf* sb = m_in->rdbuf();
    if (!sb || !m_in->good() || sb->sgetc() == std::char_traits<char>::eof()) {
      m_eof = true;
      m_in->setstate(std::ios::eofbit);
      return false;
    }
    if (m_pos > 0) {
      m_buf.erase(0, m_pos);
      m_pos = 0;
    }
    const std::streamsize want = std::clamp<std::streamsize>(sb->in_avail(), 1, std::streamsize(kChunk));
    const std::size_t old = m_buf.size();
    m_buf.resize(old + std::size_t(want));
    const std::streamsize got = sb->sgetn(m_buf.data() + old, want);
    m_buf.resize(old + std::size_t(std::max<std::streamsize>(got, 0)));
    return got > 0;
  }

  // One physical line without its line break (LF or CRLF); false at end of input.
  // At most max_record_bytes are held: a longer line is an error before more is read.
  bool read_physical_line(std::string& line) {
    line.clear();
    bool any = false;
    for (;;) {
      if (m_pos == m_buf.size() && !fill()) {
        if (!any) return false;
        break;
      }
      const char* at = m_buf.data() + m_pos;
      const std::size_t avail = m_buf.size() - m_pos;
      const void* nl = std::memchr(at, '\n', avail);
      const std::size_t take = nl ? std::size_t(static_cast<const char*>(nl) - at) : avail;
      any = true;
      if (line.size() + take > max_record_bytes) {
        m_line = m_physical_line + 1;
        fail("line is longer than " + std::to_string(max_record_bytes) + " bytes (the CSV reader's limit)");
      }
      line.append(at, take);
      m_pos += take;
      if (nl) {
        ++m_pos;
        break;
      }
    }
    ++m_physical_line;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (m_physical_line == 1 && line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    return true;
  }

  void check_stream() const {
    if (m_in->bad()) throw std::invalid_argument(m_name + ": read error after line " + std::to_string(m_physical_line));
  }

  void parse_record(std::string line, std::vector<std::string>& fields) {
    std::size_t i = 0;
    auto blank = [](char c) { return c == ' ' || c == '\t'; };
    m_extents.clear();
    for (;;) {
      const std::size_t first = i;
      while (i < line.size() && blank(line[i])) ++i;
      std::string field;
      if (i < line.size() && line[i] == '"') {
        ++i;
        for (;;) {
          if (i == line.size()) {
            // The quoted field continues on the next physical line.
            std::string more;
            if (!read_physical_line(more)) fail("quoted field is not closed before the end of the file");
            if (line.size() + more.size() >= max_record_bytes)
              fail("record is longer than " + std::to_string(max_record_bytes) + " bytes (the CSV reader's limit)");
            line += '\n';
            line += more;
            continue;
          }
          if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          field += line[i++];
        }
        while (i < line.size() && blank(line[i])) ++i;
        if (i < line.size() && line[i] != ',') fail("unexpected text after a closing quote: '" + line.substr(i) + "'");
      } else {
        const std::size_t start = i;
        while (i < line.size() && line[i] != ',') ++i;
        field = line.substr(start, i - start);
        while (!field.empty() && blank(field.back())) field.pop_back();
        if (field.find('"') != std::string::npos) fail("stray quote in unquoted field '" + field + "'");
      }
      fields.push_back(std::move(field));
      m_extents.emplace_back(first, std::min(i, line.size()));
      if (i >= line.size()) break;
      ++i;  // the comma
    }
    m_text = std::move(line);
  }

  std::string m_name;
  std::unique_ptr<char[]> m_filebuf;  // the owned file stream's buffer (outlives the stream)
  std::unique_ptr<std::istream> m_owned;
  std::istream* m_in = nullptr;
  static constexpr std::size_t kChunk = std::size_t(1) << 18;  // bytes read at a time
  std::string m_buf;                                           // input read ahead; m_buf[m_pos..] is not consumed yet
  std::size_t m_pos = 0;
  bool m_eof = false;
  std::size_t m_physical_line = 0;
  std::size_t m_line = 0;
  std::string m_text;
  std::vector<std::pair<std::size_t, std::size_t>> m_extents;
};

namespace detail {
inline std::string join_fields(const std::vector<std::string>& fields) {
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) s += (i ? "," : "") + fields[i];
  return s;
}

// Reads the header (line 1) and returns the index of column `header`.
inline std::size_t find_column(CsvReader& reader, std::vector<std::string>& header, const std::string& name) {
  if (!reader.next(header)) throw std::invalid_argument(reader.name() + ":1: file is empty, expected a header row");
  std::size_t found = header.size();
  for (std::size_t j = 0; j < header.size(); ++j) {
    if (header[j] != name) continue;
    if (found != header.size()) reader.fail("column '" + name + "' appears twice in the header");
    found = j;
  }
  if (found == header.size()) reader.fail("no column '" + name + "' in header '" + join_fields(header) + "'");
  return found;
}
}  // namespace detail

/// Calls `f(value, line)` for every value of the numeric column named `header` of the CSV input
/// of `reader` (header row first), in file order, reading one record at a time (constant memory).
/// \throws std::invalid_argument "name:line: ..." for an unreadable file, an empty file, a header
///         without the column (or with it twice), a row with a different number of fields than
///         the header, or a field that is not a finite number; exceptions thrown by `f` propagate.
template <typename F>
void for_each_column_value(CsvReader& reader, const std::string& header, F&& f) {
  std::vector<std::string> head, row;
  const std::size_t col = detail::find_column(reader, head, header);
  while (reader.next(row)) {
    if (row.size() != head.size())
      reader.fail("expected " + std::to_string(head.size()) + " fields, got " + std::to_string(row.size()) + " ('" +
                  detail::join_fields(row) + "')");
    f(reader.parse_finite(row[col], header), reader.line());
  }
}

/// for_each_column_value() of the file `path`.
template <typename F>
void for_each_column_value(const std::string& path, const std::string& header, F&& f) {
  CsvReader reader(path);
  for_each_column_value(reader, header, std::forward<F>(f));
}

/// Calls `f(value, line)` for every line of `in` holding one finite number (labels one per
/// line, no header). `name` is used in messages. Trailing blank lines are ignored.
/// \throws std::invalid_argument "name:line: label 'abc' is not a number" and the like.
template <typename F>
void for_each_line_value(std::istream& in, const std::string& name, F&& f) {
  CsvReader reader(in, name);
  std::vector<std::string> row;
  while (reader.next(row)) {
    if (row.size() != 1)
      reader.fail("expected one label per line, got " + std::to_string(row.size()) + " fields ('" +
                  detail::join_fields(row) + "')");
    f(reader.parse_finite(row[0], "label"), reader.line());
  }
}

/// One numeric column (by header name) of a CSV file with a header row, in file order.
/// \throws std::invalid_argument as for_each_column_value().
inline std::vector<double> read_column_csv(const std::string& path, const std::string& header) {
  std::vector<double> values;
  for_each_column_value(path, header, [&](double v, std::size_t) { values.push_back(v); });
  return values;
}

/// The most rows read_prior_csv() and read_histogram_csv() accept (2^22 = 4,194,304 prior values
/// or histogram cells): one more is refused naming this limit, so a hostile file cannot grow the
/// reader's arrays (24-32 bytes a row) past about 130 MB (contract, "Common rules", limits).
inline constexpr std::size_t kMaxCsvRows = std::size_t(1) << 22;

namespace detail {
inline void check_row_limit(const CsvReader& reader, std::size_t rows, const char* what) {
  if (rows >= kMaxCsvRows)
    reader.fail("more than " + std::to_string(kMaxCsvRows) + " " + what + " (the reader's limit)");
}
}  // namespace detail

/// Reads a prior file from `reader` (contract: header `value,prob` or `value,count`, one row per distinct
/// value, in any order). `prob` must sum to 1 within 1e-9 (relative); counts are normalized.
/// `check_value(value, reader)` is called on every value as it is read (e.g. to refuse a label
/// a loss cannot take, with reader.fail() naming the line), so a FIFO is read only once.
/// \throws std::invalid_argument "path:line: message naming the value" for a missing or
///         unreadable file, an empty file, a bad header, a wrong number of fields, a non-numeric
///         or non-finite field, a negative weight, a duplicate value (naming both lines), no data
///         row, all weights 0, probabilities not summing to 1, or more than kMaxCsvRows rows.
template <typename Check>
FinitePrior<double> read_prior_csv(CsvReader& reader, Check&& check_value) {
  const std::string& path = reader.name();
  std::vector<std::string> fields;
  if (!reader.next(fields))
    throw std::invalid_argument(path + ":1: file is empty, expected header 'value,prob' or 'value,count'");
  if (fields.size() != 2 || fields[0] != "value" || (fields[1] != "prob" && fields[1] != "count"))
    reader.fail("header '" + detail::join_fields(fields) + "' is not 'value,prob' or 'value,count'");
  const bool counts = fields[1] == "count";
  const char* weight_name = counts ? "count" : "probability";
  std::vector<double> values, weights;
  std::vector<std::size_t> lines;
  while (reader.next(fields)) {
    if (fields.size() != 2)
      reader.fail("expected 2 fields (value," + std::string(counts ? "count" : "prob") + "), got " +
                  std::to_string(fields.size()) + " ('" + detail::join_fields(fields) + "')");
    detail::check_row_limit(reader, values.size(), "prior values");
    const double v = reader.parse_finite(fields[0], "value");
    const double w = reader.parse_finite(fields[1], weight_name);
    if (w < 0) reader.fail(std::string(weight_name) + " " + fields[1] + " is negative");
    check_value(v, static_cast<const CsvReader&>(reader));
    values.push_back(v);
    weights.push_back(w);
    lines.push_back(reader.line());
  }
  if (values.empty()) throw std::invalid_argument(path + ":2: no data rows after the header");
  // Duplicates: sort indices by value and compare neighbours, so both lines can be named.
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return values[a] < values[b] || (values[a] == values[b] && lines[a] < lines[b]);
  });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (values[order[i]] == values[order[i - 1]])
      throw std::invalid_argument(path + ":" + std::to_string(lines[order[i]]) + ": duplicate value " +
                                  labeldp::detail::format_number(values[order[i]]) + " (also on line " +
                                  std::to_string(lines[order[i - 1]]) + ")");
  double total = 0;
  for (double w : weights) total += w;
  if (!(total > 0))
    throw std::invalid_argument(path + ":2-" + std::to_string(lines.back()) + ": all " + weight_name +
                                (counts ? "s are 0" : " values are 0") + ": at least one must be positive");
  if (!std::isfinite(total))
    throw std::invalid_argument(path + ": the " + std::string(weight_name) + " column sums to infinity");
  if (!counts && std::abs(total - 1) > 1e-9)
    throw std::invalid_argument(path + ":2-" + std::to_string(lines.back()) + ": probabilities sum to " +
                                labeldp::detail::format_number(total) + ", not 1 (tolerance 1e-9)");
  return FinitePrior<double>::from_weights(values, weights);
}

/// read_prior_csv() without a value check.
inline FinitePrior<double> read_prior_csv(CsvReader& reader) {
  return read_prior_csv(reader, [](double, const CsvReader&) {});
}

/// read_prior_csv() of the file `path`.
inline FinitePrior<double> read_prior_csv(const std::string& path) {
  CsvReader reader(path);
  return read_prior_csv(reader);
}

/// read_prior_csv() of a stream; `name` is used in messages in place of a path.
inline FinitePrior<double> read_prior_csv(std::istream& in, const std::string& name) {
  CsvReader reader(in, name);
  return read_prior_csv(reader);
}

/// Reads a histogram file (contract: header `lo,hi,mass`; rows sorted and contiguous, each row's
/// lo equal to the previous row's hi, lo < hi, mass finite and >= 0, not all 0; masses are
/// normalized) with the one CSV reader (byte-order mark, CRLF, quoted fields, as every file).
/// \throws std::invalid_argument "name:line: message naming the value" for an unreadable or
///         empty file, a bad header, a wrong number of fields, a non-numeric or non-finite
///         field, lo >= hi, a negative mass, overlapping, unsorted or non-contiguous rows, no
///         data row, all masses 0, or more than kMaxCsvRows rows.
inline HistogramPrior<double> read_histogram_csv(CsvReader& reader) {
  const std::string& name = reader.name();
  std::vector<std::string> fields;
  if (!reader.next(fields)) throw std::invalid_argument(name + ": empty histogram file (header 'lo,hi,mass' expected)");
  if (fields.size() != 3 || fields[0] != "lo" || fields[1] != "hi" || fields[2] != "mass")
    reader.fail("header must be 'lo,hi,mass', got '" + detail::join_fields(fields) + "'");
  std::vector<double> lo, hi, mass;
  std::vector<std::size_t> lines;
  while (reader.next(fields)) {
    if (fields.size() != 3)
      reader.fail("expected 3 fields (lo,hi,mass), got " + std::to_string(fields.size()) + ": '" +
                  detail::join_fields(fields) + "'");
    detail::check_row_limit(reader, lo.size(), "histogram cells");
    const double a = reader.parse_finite(fields[0], "lo");
    const double b = reader.parse_finite(fields[1], "hi");
    const double w = reader.parse_finite(fields[2], "mass");
    if (!(a < b))
      reader.fail("lo " + labeldp::detail::format_number(a) + " is not less than hi " +
                  labeldp::detail::format_number(b));
    if (w < 0) reader.fail("mass " + labeldp::detail::format_number(w) + " is negative");
    if (!hi.empty() && a != hi.back())
      reader.fail("lo " + labeldp::detail::format_number(a) + (a < hi.back() ? " overlaps" : " leaves a gap after") +
                  " the previous row's hi " + labeldp::detail::format_number(hi.back()) +
                  " (rows must be sorted and contiguous)");
    lo.push_back(a);
    hi.push_back(b);
    mass.push_back(w);
    lines.push_back(reader.line());
  }
  if (lo.empty()) throw std::invalid_argument(name + ": no histogram rows after the header");
  double total = 0;
  for (double w : mass) total += w;
  if (!(total > 0))
    throw std::invalid_argument(name + ":" + std::to_string(lines.front()) + "-" + std::to_string(lines.back()) +
                                ": masses are all 0 (at least one must be positive)");
  if (!std::isfinite(total))
    throw std::invalid_argument(name + ": masses sum to " + labeldp::detail::format_number(total) + ", not finite");
  return HistogramPrior<double>::from_cells(lo, hi, mass);
}

/// read_histogram_csv() of the file `path`.
inline HistogramPrior<double> read_histogram_csv(const std::string& path) {
  CsvReader reader(path);
  return read_histogram_csv(reader);
}

/// read_histogram_csv() of a stream; `name` is used in messages in place of a path.
inline HistogramPrior<double> read_histogram_csv(std::istream& in, const std::string& name) {
  CsvReader reader(in, name);
  return read_histogram_csv(reader);
}

}  // namespace labeldp::io
