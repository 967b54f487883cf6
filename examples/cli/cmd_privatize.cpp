// `labeldp privatize`: eps-label-DP noisy labels (the labeldp CLI contract, "privatize").
//
// Methods (--method M, without --mechanism): the two-stage pipeline of Ghazi et al. (ICLR 2023,
// Algorithm 3), one make_two_stage() call each: eps_prior on a private prior over a public
// finite support (Algorithm 4, exact discrete Laplace noise; default eps_prior = sqrt(k/n) of
// Theorem 7, at most eps/2), the rest on the mechanism built from it:
//   bins         the optimal RR-on-Bins for the private prior (Algorithm 2; BuildRROnBins);
//   unbiased     the optimal unbiased randomizer for the private prior with outputs anywhere on
//                the real line (Badanidiyuru et al. 2023; BuildOptimalUnbiased), applied to the
//                clipped real label by unbiased randomized rounding to the support first
//                (UnbiasedRandomizer), so E[noisy label] = the clipped label exactly;
//   rpwithprior  RPWithPrior's two-stage Algorithm 3 (Hist_eps prior on the grid cells, then
//                BuildRPWithPrior: the optimal interval, outputs on the grid of step R);
//   rr-with-prior  RRWithPrior (Ghazi et al. 2021) for the private prior.
// With a PUBLIC --prior all of eps goes to the mechanism (bins, unbiased, rr-with-prior).
// The baselines laplace, discrete-laplace, gaussian, discrete-gaussian, staircase,
// discrete-staircase, exponential (range --lo/--hi) and rr (over the support) spend all of eps
// on the noise and need no prior (make_baseline()). --mechanism FILE applies a saved mechanism
// file (read_mechanism_file()); no budget is spent here. These need one pass in constant memory.
//
// Input and output: with --column C the input is a CSV file (or standard input) with a header,
// and the output is that CSV with the label column replaced by the noisy label, every other
// field and the header kept byte for byte (line breaks written as LF); --labels-only prints one
// noisy label per line instead. Without --column the input is one label per line.
//
// Memory: the private prior needs every label counted before the first one is randomized, so
// a file is read twice (counting pass, then randomizing pass) and memory stays constant besides
// the support (rpwithprior keeps the labels: 16 bytes each). Standard input, a pipe or a FIFO
// cannot be re-read: its labels (8 bytes each) and, for CSV output, each row's other fields
// (plus 16 bytes) are buffered. Every
// label is validated in the first pass, so on bad input nothing reaches stdout and no output
// file is created (--output is written atomically).
//
// The labels are private: no error message quotes one (only the file, line and column name).
#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/detail/simple_rows.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/io/mechanism_file.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"
#include "labeldp/mechanisms/rpwithprior.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "labeldp/mechanisms/two_stage.hpp"
#include "labeldp/mechanisms/unbiased_options.hpp"
#include "labeldp/mechanisms/unbiased_randomizer.hpp"
#include "labeldp/prior/budget.hpp"
#include "labeldp/prior/discretize.hpp"
#include "labeldp/prior/hist_eps.hpp"
#include "methods.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_privatize {
namespace {

using labeldp::Index;
using labeldp::cli::InputError;
using labeldp::cli::parse_flag_number;
using labeldp::cli::parse_flag_positive;
using labeldp::cli::parse_seed;

constexpr const char* kPrivateNote = " (the value is not shown: the labels file is private)";

struct Options {
  std::string eps, eps_prior, lo, hi, resolution, seed;
  std::string input, column, output, prior, support;
  std::string method, mechanism, delta;
  std::string loss = "squared";
  std::string rounding = "nearest";
  bool labels_only = false, drop_missing = false, summary = false, clip = false;
};

// ---------------------------------------------------------------------------------------------
// Input: rows of a CSV file with a header (--column), or one label per line.

// One data row: its first line, its label (nullopt when missing or not a finite number, with
// the reason) and, for CSV input, its text before and after the label field.
struct Row {
  std::size_t line = 0;
  std::optional<double> label;
  const char* problem = "";
  std::string_view before, after;
};

// Rows read and sampled at a time (the batch sampler draws exactly as one row at a time does).
constexpr std::size_t kBatchRows = 4096;

class LabelSource {
 public:
  LabelSource(const Options& o) : m_column(o.column) {
    m_stdin = o.input.empty() || o.input == "-";
    std::error_code ec;
    m_once = m_stdin || !std::filesystem::is_regular_file(o.input, ec);
    if (m_stdin)
      m_reader = std::make_unique<labeldp::io::CsvReader>(std::cin, "<stdin>");
    else
      m_reader = std::make_unique<labeldp::io::CsvReader>(o.input);
    if (csv()) {
      m_col = labeldp::io::detail::find_column(*m_reader, m_header, m_column);
      m_header_text = m_reader->record_text();
    }
  }

  bool csv() const { return !m_column.empty(); }
  // True when the input cannot be read twice (standard input, a pipe or FIFO).
  bool read_once() const { return m_once; }
  const std::string& name() const { return m_reader->name(); }
  // The header row's text (CSV input).
  const std::string& header_text() const { return m_header_text; }

  // Reads the next data row; false at the end. The row's views are valid until the next call.
  bool next(Row& row) {
    try {
      if (!m_reader->next(m_fields)) return false;
    } catch (const std::invalid_argument& e) {
      labeldp::cli::rethrow_without_values(e);
    }
    row.line = m_reader->line();
    const std::size_t expected = csv() ? m_header.size() : 1;
    if (m_fields.size() != expected)
      throw InputError(where(row.line) + "expected " + std::to_string(expected) +
                       (csv() ? " fields, got " : " label per line, got ") + std::to_string(m_fields.size()) +
                       (csv() ? "" : " fields"));
    const std::string& text = m_fields[m_col];
    row.label.reset();
    if (text.empty()) {
      row.problem = "is missing";
    } else if (const auto v = labeldp::io::parse_double(text); !v) {
      row.problem = "is not a number";
    } else if (!std::isfinite(*v)) {
      row.problem = "is not finite";
    } else {
      row.label = *v;
    }
    if (csv()) {
      const std::string& raw = m_reader->record_text();
      const auto [first, last] = m_reader->field_extent(m_col);
      row.before = std::string_view(raw).substr(0, first);
      row.after = std::string_view(raw).substr(last);
    }
    return true;
  }

  // Reads up to `max` data rows into `rows` (cleared first); false when none are left. Rows in
  // the simple form -- no quote, CR or blank line, the expected number of fields, a finite
  // label -- are cut straight from the reader's read-ahead; any other row goes alone through
  // next(), which handles or reports it exactly as reading one row at a time does. The rows'
  // views are valid until the next call.
  bool next_batch(std::vector<Row>& rows, std::size_t max) {
    rows.clear();
    const std::size_t fields = csv() ? m_header.size() : 1;
    const std::string_view buf = m_reader->buffered_lines();
    const char* const begin = buf.data();
    const char* const end = begin + buf.size();
    const char* p = begin;
    std::size_t line = m_reader->lines_read();
    labeldp::io::detail::SimpleRow cut;
    auto parse = [](std::string_view field) { return labeldp::io::parse_double(field); };
    while (rows.size() < max && p != end) {
      const char* next = labeldp::io::detail::scan_simple_row(p, end, m_col, fields, cut, parse);
      if (!next) break;
      Row& r = rows.emplace_back();
      r.line = ++line;
      r.label = cut.label;
      r.problem = "";
      r.before = std::string_view(cut.begin, std::size_t(cut.first - cut.begin));
      r.after = std::string_view(cut.last, std::size_t(cut.end - cut.last));
      p = next;
    }
    const std::size_t pos = std::size_t(p - begin);
    m_reader->consume(pos, rows.size());
    if (!rows.empty()) return true;
    if (!next(rows.emplace_back())) {
      rows.clear();
      return false;
    }
    return true;
  }

  // The error for a row whose label is missing or not a number (never quoting it).
  [[noreturn]] void fail_label(const Row& row) const {
    throw InputError(where(row.line) + "label" + (csv() ? " in column '" + m_column + "'" : std::string()) + " " +
                     row.problem + kPrivateNote);
  }

 private:
  std::string where(std::size_t line) const { return name() + ":" + std::to_string(line) + ": "; }

  std::string m_column;
  bool m_stdin = false, m_once = false;
  std::unique_ptr<labeldp::io::CsvReader> m_reader;
  std::vector<std::string> m_header, m_fields;
  std::string m_header_text;
  std::size_t m_col = 0;
};

// ---------------------------------------------------------------------------------------------
// Output: --output FILE (atomic), or standard output, optionally spooled to an anonymous
// temporary file until the run has succeeded (single-pass modes, so that an error on a late
// row leaves stdout empty).

class Sink {
 public:
  Sink(const std::string& output, bool spool) {
    if (!output.empty()) {
      m_file.emplace(output);
    } else if (spool) {
      m_spool = std::tmpfile();
      if (!m_spool)
        throw InputError("cannot create a temporary file for the output: " + std::string(std::strerror(errno)));
    }
  }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  ~Sink() {
    if (m_spool) std::fclose(m_spool);
  }

  void put(std::string_view s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    m_used += s.size();
  }

  // At least n free bytes at the end of the buffered output (written out first when full): the
  // caller writes there and then calls advance() with the bytes it wrote.
  char* room(std::size_t n) {
    if (m_buf.size() - m_used < n) {
      flush();
      if (m_buf.size() < n) m_buf.resize(n);
    }
    return m_buf.data() + m_used;
  }
  void advance(std::size_t n) { m_used += n; }

  void commit() {
    flush();
    if (m_file) {
      m_file->commit();
      return;
    }
    if (m_spool) {
      if (std::fflush(m_spool) != 0 || std::fseek(m_spool, 0, SEEK_SET) != 0)
        throw InputError("temporary output file: write error: " + std::string(std::strerror(errno)));
      std::vector<char> chunk(1u << 16);
      for (;;) {
        const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), m_spool);
        if (got > 0) write_stdout(std::string_view(chunk.data(), got));
        if (got < chunk.size()) break;
      }
      if (std::ferror(m_spool)) throw InputError("temporary output file: read error");
    }
    std::cout.flush();
    if (!std::cout) throw InputError("<stdout>: write error");
  }

 private:
  static void write_stdout(std::string_view s) {
    std::cout.write(s.data(), std::streamsize(s.size()));
    if (!std::cout) throw InputError("<stdout>: write error");
  }

  void flush() {
    if (m_used == 0) return;
    const std::string_view out(m_buf.data(), m_used);
    if (m_file) {
      m_file->write(out);
    } else if (m_spool) {
      if (std::fwrite(out.data(), 1, out.size(), m_spool) != out.size())
        throw InputError("temporary output file: write error: " + std::string(std::strerror(errno)));
    } else {
      write_stdout(out);
    }
    m_used = 0;
  }

  std::optional<labeldp::io::AtomicFileWriter> m_file;
  std::FILE* m_spool = nullptr;
  std::string m_buf = std::string(std::size_t(1) << 20, '\0');  // written out 1 MiB at a time
  std::size_t m_used = 0;                                       // bytes of m_buf in use
};

// Writes one output row: the CSV row with its label replaced, or the noisy label alone.
struct RowWriter {
  Sink& sink;
  bool whole_row;
  void write(std::string_view before, std::string_view noisy, std::string_view after) {
    if (!whole_row) before = after = {};
    char* o = sink.room(before.size() + noisy.size() + after.size() + 1);
    char* const start = o;
    if (!before.empty()) o = std::copy(before.begin(), before.end(), o);
    o = std::copy(noisy.begin(), noisy.end(), o);
    if (!after.empty()) o = std::copy(after.begin(), after.end(), o);
    *o++ = '\n';
    sink.advance(std::size_t(o - start));
  }
  // The same, for a noisy label whose text is followed by readable bytes up to 32 in all (as
  // OutputText gives): copied as a fixed 32 bytes.
  void write32(std::string_view before, std::string_view noisy, std::string_view after) {
    if (!whole_row) before = after = {};
    char* o = sink.room(before.size() + 32 + after.size() + 1);
    char* const start = o;
    if (!before.empty()) o = std::copy(before.begin(), before.end(), o);
    std::memcpy(o, noisy.data(), 32);
    o += noisy.size();
    if (!after.empty()) o = std::copy(after.begin(), after.end(), o);
    *o++ = '\n';
    sink.advance(std::size_t(o - start));
  }
};

// ---------------------------------------------------------------------------------------------
// The run.

struct Summary {
  std::string method, mechanism;
  double eps_prior = 0, eps_mechanism = 0, delta = 0;
  std::int64_t written = 0, dropped = 0;
};

void print_summary(const Options& o, const Summary& s, const std::string& name) {
  if (o.drop_missing)
    std::cerr << "labeldp: dropped " << s.dropped << " row" << (s.dropped == 1 ? "" : "s") << " of " << name
              << " with a missing or unparsable label\n";
  if (!o.summary) return;
  std::cerr << "{\"command\":\"privatize\",\"method\":\"" << s.method << "\",\"mechanism\":\"" << s.mechanism
            << "\",\"eps_prior\":" << labeldp::json_number(s.eps_prior)
            << ",\"eps_mechanism\":" << labeldp::json_number(s.eps_mechanism)
            << ",\"eps_total\":" << labeldp::json_number(s.eps_prior + s.eps_mechanism)
            << ",\"delta\":" << labeldp::json_number(s.delta) << ",\"rows_written\":" << s.written
            << ",\"rows_dropped\":" << s.dropped << "}\n";
}

void check_output_path(const std::string& output) {
  if (output.empty()) return;
  std::error_code ec;
  const auto st = std::filesystem::status(output, ec);
  if (std::filesystem::is_directory(st)) throw InputError(output + ": cannot write file: it is a directory");
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw InputError(output + ": cannot write file: it exists and is not a regular file");
}

using labeldp::cli::is_additive_method;
using labeldp::cli::is_two_stage_method;
using labeldp::cli::kMethods;
using labeldp::cli::needs_delta;
using labeldp::cli::needs_resolution;

// The generator: operating-system entropy unless --seed asks for a reproducible run.
std::unique_ptr<labeldp::ChaCha20> make_generator(bool seeded, std::uint64_t seed) {
  if (seeded) return std::make_unique<labeldp::SeededRandom>(seed);
  return std::make_unique<labeldp::SecureRandom>();
}

// A noisy label's text in `buf`: 17 significant digits, as json_number() ("%.17g") but without
// printf (at most 24 characters: "-1.2345678901234567e-308").
std::string_view format_label(double v, char (&buf)[32]) {
  if (!std::isfinite(v)) throw InputError("internal error: a mechanism returned a non-finite noisy label");
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
  if (ec != std::errc{}) throw InputError("internal error: a noisy label's text does not fit");
  return {buf, std::size_t(end - buf)};
}

// The text of noisy labels, formatted once per output for a finite mechanism and found by the
// value's bits in a hash table (linear probing, at most a quarter full: almost always one probe).
class OutputText {
 public:
  explicit OutputText(const labeldp::AnyMechanism& m) {
    const auto* f = m.finite();
    if (!f) return;
    const std::size_t k = std::size_t(f->num_outputs());
    m_slots.resize(std::max<std::size_t>(16, std::bit_ceil(4 * k)));
    m_shift = 64 - unsigned(std::countr_zero(m_slots.size()));
    for (Index j = 0; j < f->num_outputs(); ++j) {
      const double v = f->outputs()[j];
      const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
      if (find(bits)) continue;  // a repeated output value
      Slot* s = &m_slots[slot(bits)];
      while (s->len) s = &m_slots[std::size_t(s - m_slots.data() + 1) & (m_slots.size() - 1)];
      const std::string text = labeldp::json_number(v);
      if (text.size() > sizeof s->text) throw InputError("internal error: an output's text is too long");
      s->bits = bits;
      s->len = std::uint32_t(text.size());
      std::memcpy(s->text, text.data(), text.size());
    }
  }
  // v's text; its data is followed by readable bytes up to 32 in all (RowWriter::write32).
  std::string_view operator()(double v) {
    if (const Slot* s = find(std::bit_cast<std::uint64_t>(v))) return {s->text, s->len};
    return format_label(v, m_scratch);
  }

 private:
  struct Slot {
    std::uint64_t bits = 0;
    std::uint32_t len = 0;  // 0: empty
    char text[32] = {};
  };
  std::size_t slot(std::uint64_t bits) const { return std::size_t((bits * 0x9E3779B97F4A7C15ull) >> m_shift); }
  const Slot* find(std::uint64_t bits) const {
    if (m_slots.empty()) return nullptr;
    for (std::size_t i = slot(bits);; i = (i + 1) & (m_slots.size() - 1)) {
      const Slot& s = m_slots[i];
      if (s.len == 0) return nullptr;
      if (s.bits == bits) return &s;
    }
  }

  std::vector<Slot> m_slots;
  unsigned m_shift = 64;
  char m_scratch[32] = {};
};

// One pass over the input with a mechanism fixed before any label is read (--mechanism FILE, or
// a baseline that needs no prior): constant memory. `snap`, when given, maps each label to its
// support point first (rr). Standard output is spooled to an anonymous temporary file until the
// last row is done, so that a bad late row leaves stdout empty (--output is atomic anyway).
void run_single_pass(const Options& o, const labeldp::AnyMechanism& mech, const labeldp::Discretizer<double>* snap,
                     labeldp::ChaCha20& gen, Summary summary) {
  LabelSource source(o);
  const bool whole_row = source.csv() && !o.labels_only;
  Sink sink(o.output, true);
  RowWriter out{sink, whole_row};
  if (whole_row) {
    sink.put(source.header_text());
    sink.put("\n");
  }
  OutputText text(mech);
  std::vector<Row> rows;
  std::vector<double> in, noisy;
  while (source.next_batch(rows, kBatchRows)) {
    in.clear();
    for (const Row& row : rows) {
      if (!row.label) {
        if (!o.drop_missing) source.fail_label(row);
        continue;
      }
      in.push_back(snap ? (*snap)(*row.label) : *row.label);
    }
    noisy.resize(in.size());
    mech.sample(std::span<const double>(in), std::span<double>(noisy), gen);  // the same draws, in order
    std::size_t t = 0;
    for (const Row& row : rows) {
      if (!row.label) {
        ++summary.dropped;
        continue;
      }
      out.write32(row.before, text(noisy[t++]), row.after);
      ++summary.written;
    }
  }
  if (summary.written == 0)
    throw InputError(source.name() + ": no labels to privatize" +
                     (summary.dropped ? " (every label was dropped)" : ""));
  sink.commit();
  print_summary(o, summary, source.name());
}

// --mechanism FILE: apply a saved mechanism; no budget is spent here (the file's eps is what each
// label costs).
void run_mechanism_file(const Options& o) {
  for (const auto& [flag, given] : {std::pair{"--eps", !o.eps.empty()},
                                    {"--eps-prior", !o.eps_prior.empty()},
                                    {"--method", !o.method.empty()},
                                    {"--prior", !o.prior.empty()},
                                    {"--support", !o.support.empty()},
                                    {"--lo", !o.lo.empty()},
                                    {"--hi", !o.hi.empty()},
                                    {"--resolution", !o.resolution.empty()},
                                    {"--delta", !o.delta.empty()},
                                    {"--clip", o.clip},
                                    {"--loss", o.loss != "squared"},
                                    {"--rounding", o.rounding != "nearest"}})
    if (given)
      throw InputError(std::string("'--mechanism' cannot be combined with '") + flag +
                       "': the mechanism file states its eps, inputs and mapping of labels");
  const bool seeded = !o.seed.empty();
  const std::uint64_t seed = seeded ? parse_seed(o.seed) : 0;
  check_output_path(o.output);
  const labeldp::AnyMechanism mech = labeldp::io::read_mechanism_file(o.mechanism);
  Summary summary;
  summary.method = "mechanism-file";
  summary.mechanism = mech.kind();
  summary.eps_mechanism = mech.eps();
  summary.delta = mech.delta();
  const auto gen = make_generator(seeded, seed);
  run_single_pass(o, mech, nullptr, *gen, summary);
}

template <typename Loss>
void run_two_stage(const Options& o, const Loss& loss) {
  // Every flag is checked before any input is read.
  if (o.eps.empty()) throw InputError("--eps is required (the privacy budget; or apply a saved --mechanism FILE)");
  const double eps = parse_flag_positive("--eps", o.eps);
  const bool seeded = !o.seed.empty();
  const std::uint64_t seed = seeded ? parse_seed(o.seed) : 0;
  const std::string method = o.method.empty() ? "bins" : o.method;
  const bool additive = is_additive_method(method);
  if (!is_two_stage_method(method) && !additive && method != "rr")
    throw InputError("'--method' must be one of " + std::string(kMethods) + ", got '" + o.method + "'");
  if (method != "bins" && o.loss != "squared")
    throw InputError("'--loss' applies to '--method bins' only ('--method " + method + "' minimizes squared loss)");
  std::optional<double> eps_prior;
  if (!o.eps_prior.empty()) {
    if (additive || method == "rr")
      throw InputError("'--eps-prior' cannot be used with '--method " + method +
                       "': it needs no prior and spends all of --eps on the noise");
    eps_prior = parse_flag_positive("--eps-prior", o.eps_prior);
    if (!(*eps_prior < eps))
      throw InputError("'--eps-prior' must be less than '--eps' (" + o.eps + "), got '" + o.eps_prior + "'");
  }
  if (!o.delta.empty() && !needs_delta(method))
    throw InputError("'--delta' applies to '--method gaussian' and 'discrete-gaussian' only");
  if (o.clip && !additive) throw InputError("'--clip' applies to the additive baselines only (laplace, ...)");
  check_output_path(o.output);

  if (additive) {
    // The additive baselines: y + noise calibrated to the public range [lo, hi]; no prior.
    if (!o.prior.empty() || !o.support.empty())
      throw InputError("'--method " + method + "' needs no prior or support: give the public range '--lo' and '--hi'");
    for (const auto& [flag, value] : {std::pair{"--lo", &o.lo}, {"--hi", &o.hi}})
      if (value->empty())
        throw InputError("'" + std::string(flag) + "' is missing: '--method " + method +
                         "' needs the public label range '--lo' and '--hi'");
    labeldp::BaselineSpec spec;
    spec.kind = method;
    spec.eps = eps;
    spec.lo = parse_flag_number("--lo", o.lo);
    spec.hi = parse_flag_number("--hi", o.hi);
    if (!(spec.hi > spec.lo)) throw InputError("'--hi' must be greater than '--lo' (" + o.lo + "), got '" + o.hi + "'");
    if (!o.resolution.empty()) {
      if (!needs_resolution(method) && method != "exponential")
        throw InputError("'--resolution' is not used by '--method " + method + "'");
      spec.resolution = parse_flag_positive("--resolution", o.resolution);
    } else if (needs_resolution(method)) {
      throw InputError("'--resolution' is missing: '--method " + method + "' needs the grid step");
    }
    if (needs_delta(method)) {
      if (o.delta.empty()) throw InputError("'--delta' is missing: '--method " + method + "' needs delta in (0, 1)");
      spec.delta = parse_flag_number("--delta", o.delta);
      if (!(spec.delta > 0 && spec.delta < 1)) throw InputError("'--delta' must be in (0, 1), got '" + o.delta + "'");
    }
    spec.clip = o.clip;
    std::optional<labeldp::AnyMechanism> mech;
    try {
      mech = labeldp::make_baseline(spec);
    } catch (const std::invalid_argument& e) {
      throw InputError("'--method " + method + "': " + e.what());
    }
    Summary summary;
    summary.method = method;
    summary.mechanism = mech->kind();
    summary.eps_mechanism = mech->eps();
    summary.delta = mech->delta();
    const auto gen = make_generator(seeded, seed);
    run_single_pass(o, *mech, nullptr, *gen, summary);
    return;
  }
  const labeldp::Rounding rounding = o.rounding == "floor"  ? labeldp::Rounding::Floor
                                     : o.rounding == "ceil" ? labeldp::Rounding::Ceil
                                                            : labeldp::Rounding::Nearest;

  // The public discretization (never derived from the labels).
  const bool grid_any = !o.lo.empty() || !o.hi.empty() || !o.resolution.empty();
  std::optional<labeldp::FinitePrior<double>> prior;
  std::optional<labeldp::Discretizer<double>> disc;
  double grid_lo = 0, grid_hi = 0, grid_res = 0;
  if (method == "rpwithprior" && (!o.prior.empty() || !o.support.empty()))
    throw InputError("'--method rpwithprior' needs the public grid '--lo', '--hi' and '--resolution' (not '" +
                     std::string(o.prior.empty() ? "--support" : "--prior") + "')");
  if (!o.prior.empty()) {
    if (!o.support.empty() || grid_any)
      throw InputError(
          "'--prior' sets the support to the prior's values: do not combine it with '--support', "
          "'--lo', '--hi' or '--resolution'");
    if (!o.eps_prior.empty())
      throw InputError("'--eps-prior' cannot be used with '--prior': a public prior costs no budget");
    prior = labeldp::io::read_prior_csv(o.prior);
    const auto& v = prior->values();
    disc = labeldp::Discretizer<double>::points(std::vector<double>(v.data(), v.data() + v.size()), rounding);
  } else if (!o.support.empty()) {
    if (grid_any) throw InputError("'--support' cannot be combined with '--lo', '--hi' or '--resolution'");
    disc = labeldp::Discretizer<double>::points(labeldp::cli::read_support(o.support), rounding);
  } else if (grid_any) {
    for (const auto& [flag, value] : {std::pair{"--lo", &o.lo}, {"--hi", &o.hi}, {"--resolution", &o.resolution}})
      if (value->empty())
        throw InputError(std::string("'") + flag + "' is missing: a grid needs '--lo', '--hi' and '--resolution'");
    grid_lo = parse_flag_number("--lo", o.lo);
    grid_hi = parse_flag_number("--hi", o.hi);
    grid_res = parse_flag_positive("--resolution", o.resolution);
    if (!(grid_hi > grid_lo)) throw InputError("'--hi' must be greater than '--lo' (" + o.lo + "), got '" + o.hi + "'");
    try {
      disc = labeldp::Discretizer<double>::grid(grid_lo, grid_hi, grid_res, rounding);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("'--resolution' ") + o.resolution + ": " + e.what());
    }
  } else {
    throw InputError(
        "no public discretization: give '--support FILE', or '--lo', '--hi' and '--resolution', "
        "or a public '--prior FILE'");
  }
  const Index k = disc->size();
  // Support sizes the mechanism's construction cannot take in bounded time, refused before any
  // label is read (bins: quadratic; unbiased: UnbiasedOptions::max_labels).
  if (method == "bins" && k > labeldp::cli::kMaxBinsValues)
    throw InputError("'--method bins' takes at most " + std::to_string(labeldp::cli::kMaxBinsValues) +
                     " support points (its time grows as their square), got " + std::to_string(k));
  if (method == "rr" || method == "rr-with-prior")
    labeldp::cli::check_finite_baseline_size(method, k, "'--method " + method + "'");
  if (method == "unbiased" && k > labeldp::UnbiasedOptions{}.max_labels)
    throw InputError("'--method unbiased' takes at most " + std::to_string(labeldp::UnbiasedOptions{}.max_labels) +
                     " support points (UnbiasedOptions::max_labels: its time grows fast with them), got " +
                     std::to_string(k));
  for (Index i = 0; i < k; ++i) {
    try {
      loss.validate_label(disc->support()[i]);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("support value ") + labeldp::detail::format_number(disc->support()[i]) +
                       " is not allowed with '--loss " + o.loss + "': " + e.what());
    }
  }
  if (method == "rpwithprior" && k < 2)
    throw InputError("'--method rpwithprior' needs at least two grid points ('--resolution' below '--hi' - '--lo')");

  if (method == "rr") {
    // k-ary randomized response over the public support: no prior, all of eps on the mechanism.
    labeldp::BaselineSpec spec;
    spec.kind = "rr";
    spec.eps = eps;
    spec.lo = disc->support()[0];
    spec.hi = disc->support()[k - 1];
    spec.prior = labeldp::FinitePrior<double>::from_weights(
        std::vector<double>(disc->support().data(), disc->support().data() + k),
        std::vector<double>(std::size_t(k), 1));
    std::optional<labeldp::AnyMechanism> mech;
    try {
      mech = labeldp::make_baseline(spec);
    } catch (const std::invalid_argument& e) {
      throw InputError("'--method rr': " + std::string(e.what()));
    }
    Summary summary;
    summary.method = method;
    summary.mechanism = mech->kind();
    summary.eps_mechanism = mech->eps();
    const auto gen = make_generator(seeded, seed);
    run_single_pass(o, *mech, &*disc, *gen, summary);
    return;
  }

  // Pass 1: validate and count every label; keep what a second pass needs and cannot re-read.
  LabelSource first(o);
  const bool whole_row = first.csv() && !o.labels_only;
  const bool keep_labels = method == "rpwithprior";
  std::vector<std::int64_t> counts(std::size_t(k), 0);
  std::vector<double> buffered;  // stdin, or rpwithprior: the kept labels in order
  // stdin with CSV output: the rows' texts without their labels, one after the other, and for
  // each row the offsets of its label and of its end in that text.
  std::string stdin_text;
  std::vector<std::uint64_t> stdin_cut;
  std::int64_t n = 0, dropped = 0;
  std::vector<Row> rows;
  while (first.next_batch(rows, kBatchRows))
    for (const Row& row : rows) {
      if (!row.label) {
        if (!o.drop_missing) first.fail_label(row);
        ++dropped;
        continue;
      }
      ++counts[std::size_t(disc->index(*row.label))];
      ++n;
      if (first.read_once() || keep_labels) buffered.push_back(*row.label);
      if (first.read_once() && whole_row) {
        stdin_text.append(row.before);
        stdin_cut.push_back(stdin_text.size());
        stdin_text.append(row.after);
        stdin_cut.push_back(stdin_text.size());
      }
    }
  if (n == 0)
    throw InputError(first.name() + ": no labels to privatize" + (dropped ? " (every label was dropped)" : ""));
  const std::string header = first.header_text();
  const std::string source_name = first.name();
  const bool read_once = first.read_once();

  const auto gen = make_generator(seeded, seed);

  labeldp::BudgetSplit split;
  if (prior)
    split = labeldp::BudgetSplit{0, eps};
  else if (eps_prior)
    split = labeldp::split_budget(eps, *eps_prior);
  else
    split = labeldp::theorem7_split(eps, k, n);

  Summary summary;
  summary.method = method;
  summary.eps_prior = split.eps_prior;
  summary.eps_mechanism = split.eps_mechanism;
  summary.dropped = dropped;

  // Stage 2: the mechanism (methods.hpp, shared with compare), and a function giving the noisy
  // label's text for a label.
  std::optional<labeldp::cli::StageTwo> stage;
  std::vector<std::string> rr_text;
  std::size_t rp_next = 0;
  std::optional<OutputText> rrp_text;
  const double support_lo = disc->support()[0], support_hi = disc->support()[k - 1];
  try {
    // Stage 2 from the public prior when one is given (no stage 1), else both stages at once.
    labeldp::cli::StageInputs inputs{*disc, counts, &buffered, grid_lo, grid_hi, grid_res, prior ? &*prior : nullptr};
    stage = labeldp::cli::build_stage_two(method, inputs, split, *gen, loss);
    summary.mechanism = stage->mechanism;
    if (stage->rr)
      for (Index j = 0; j < stage->rr->num_outputs(); ++j)
        rr_text.push_back(labeldp::json_number(stage->rr->outputs()[j]));
    if (stage->unbiased) {
      const auto& report = *stage->unbiased->report();
      if (!report.optimal())
        std::cerr << "labeldp: warning: the unbiased randomizer is feasible (eps-DP, unbiased) but not certified "
                     "optimal (status "
                  << labeldp::optim::to_string(report.status) << ", gap " << labeldp::detail::format_number(report.gap)
                  << ")\n";
      if (stage->unbiased->mechanism().num_inputs() != k)
        throw InputError("'--method unbiased': the randomizer does not cover the support (internal error)");
    }
    if (stage->rrp) rrp_text.emplace(*stage->rrp);
  } catch (const std::invalid_argument& e) {
    throw InputError("'--method " + method + "': " + e.what());
  }
  const auto& rr = stage->rr;
  const auto& rrp = stage->rrp;
  const auto& unbiased = stage->unbiased;
  const std::vector<double>& rp_noisy = stage->rp_noisy;
  char scratch[32];
  auto noisy_text = [&](double y) -> std::string_view {
    if (rr) return rr_text[std::size_t(rr->sample_index(disc->index(y), *gen))];
    if (rrp) return (*rrp_text)(rrp->sample((*disc)(y), *gen));
    return format_label(unbiased ? unbiased->sample(std::clamp(y, support_lo, support_hi), *gen) : rp_noisy[rp_next++],
                        scratch);
  };

  // Pass 2: randomize and write.
  Sink sink(o.output, false);
  RowWriter out{sink, whole_row};
  if (whole_row) {
    sink.put(header);
    sink.put("\n");
  }
  if (read_once) {
    const std::string_view all = stdin_text;
    std::uint64_t start = 0;
    for (std::size_t i = 0; i < buffered.size() || i < rp_noisy.size(); ++i) {
      const double y = i < buffered.size() ? buffered[i] : 0;
      const std::string_view noisy = noisy_text(y);
      if (whole_row) {
        const std::uint64_t cut = stdin_cut[2 * i], end = stdin_cut[2 * i + 1];
        out.write(all.substr(start, cut - start), noisy, all.substr(cut, end - cut));
        start = end;
      } else {
        out.write({}, noisy, {});
      }
    }
  } else {
    LabelSource second(o);
    std::int64_t seen = 0;
    while (seen <= n && second.next_batch(rows, kBatchRows))
      for (const Row& row : rows) {
        if (!row.label) continue;
        if (++seen > n) break;
        out.write(row.before, noisy_text(*row.label), row.after);
      }
    if (seen != n) throw InputError(source_name + ": the file changed while it was being read");
  }
  summary.written = n;
  sink.commit();
  print_summary(o, summary, source_name);
}

void run(const Options& o) {
  // Nothing has been read or written yet: let standard input be read without C stdio's locking.
  std::ios_base::sync_with_stdio(false);
  if (!o.mechanism.empty()) return run_mechanism_file(o);
  labeldp::cli::with_loss(o.loss, [&](const auto& loss) { run_two_stage(o, loss); });
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "privatize", "eps-label-DP noisy labels: two-stage pipeline, baselines or a saved --mechanism; CSV in, CSV out",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("--eps", o->eps, "total privacy budget E, a finite number > 0 (required unless --mechanism)");
      app.add_option("--method", o->method,
                     "two-stage (private prior, then the mechanism): bins (default: optimal RR-on-Bins), unbiased "
                     "(optimal unbiased randomizer, real outputs), rpwithprior (RPWithPrior on the "
                     "--lo/--hi/--resolution grid), rr-with-prior; baselines (all of --eps on the noise, no prior, "
                     "range --lo/--hi): laplace, discrete-laplace, gaussian, discrete-gaussian, staircase, "
                     "discrete-staircase, exponential, rr (over the support)");
      app.add_option("--mechanism", o->mechanism,
                     "apply a saved mechanism file (the --json output of bins, optimal, unbiased, interval or "
                     "baseline): no budget is spent here, the file's eps is what each label costs; one pass, "
                     "constant memory; not with --eps, --method, --prior or the discretization options");
      app.add_option("--delta", o->delta, "gaussian, discrete-gaussian: delta in (0, 1)");
      app.add_flag("--clip", o->clip, "additive baselines: clip the noisy labels to [LO, HI]");
      app.add_option("--input", o->input,
                     "input file (default or '-': standard input): with --column a CSV file with a header, "
                     "otherwise one label per line");
      app.add_option("--column", o->column,
                     "name of the label column: the output is the input CSV with this column replaced by the noisy "
                     "label");
      app.add_flag("--labels-only", o->labels_only, "with --column: print only the noisy labels, one per line");
      app.add_flag("--drop-missing", o->drop_missing,
                   "leave out rows whose label is missing or not a finite number (their count is printed on "
                   "stderr; it is not privatized) instead of stopping with an error naming the line");
      app.add_flag("--summary", o->summary,
                   "print one JSON line on stderr at the end: method, mechanism, eps per stage (eps_prior, "
                   "eps_mechanism, eps_total), delta, rows_written, rows_dropped");
      app.add_option("--output", o->output, "write the output here (atomically) instead of standard output");
      app.add_option("--prior", o->prior,
                     "known PUBLIC prior (CSV value,prob or value,count): its values are the support and all of "
                     "--eps goes to the mechanism (bins, unbiased, rr-with-prior)");
      app.add_option("--support", o->support, "public support: CSV with header 'value', one value per row");
      app.add_option("--lo", o->lo, "public grid: labels below are clipped to LO");
      app.add_option("--hi", o->hi, "public grid: labels above are clipped to HI");
      app.add_option("--resolution", o->resolution, "public grid step: support LO, LO+R, ..., HI");
      app.add_option("--rounding", o->rounding, "nearest (default; ties up), floor or ceil")
          ->check(CLI::IsMember({"nearest", "floor", "ceil"}));
      app.add_option("--eps-prior", o->eps_prior,
                     "budget of the private prior (0 < E1 < E; default sqrt(k/n) of Theorem 7, at most E/2)");
      app.add_option("--seed", o->seed,
                     "deterministic generator seeded with S (NOT private: for tests and experiments); default: "
                     "seeded from the operating system's entropy");
      app.add_option("--loss", o->loss, "loss the bins minimize: squared (default), absolute or poisson");
      app.footer(
          "Labels are clipped to the support's range and rounded to a support point (a public map: choose it "
          "without looking at the data; 'unbiased' rounds by unbiased randomized rounding instead, so its noisy "
          "label's mean is the clipped label). Without --prior the prior is estimated privately (Algorithm 3 of "
          "Ghazi et al. 2023), which needs all labels counted first: a file is read twice; standard input, a pipe or "
          "FIFO is "
          "buffered (8 bytes per label, plus each row's text and 16 bytes for CSV output). rpwithprior keeps the "
          "labels in "
          "memory (16 bytes each). --mechanism and the baselines but rr-with-prior need no prior: one pass in "
          "constant memory (to standard output the result is spooled to an anonymous temporary file, as large as "
          "the output, and copied when the last row is done, so bad input leaves stdout empty). Output: the input "
          "CSV with the label column replaced (other fields and the header byte for byte, LF line ends), or one "
          "noisy label per line, in input order, 17 significant digits. Limits: support points at most 10^7 for a "
          "grid, "
          "4194304 (2^22) for a file, 65536 with --method bins, 256 with unbiased, 2048 with rr, 262144 with "
          "rr-with-prior; lines up to 16 MiB; "
          "mechanism files up to 32 MiB.");
      app.callback([o] { run(*o); });
    }}};

}  // namespace
}  // namespace cmd_privatize
