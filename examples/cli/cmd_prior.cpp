// `labeldp prior`: an eps-DP prior over a public support, estimated from the labels column of a
// CSV file by Algorithm 4 of Ghazi et al. (2023): count the labels on the support (clipped and
// rounded as `privatize` does), add independent discrete Laplace noise of scale 2/E to every
// count (including the zero ones), set negative counts to 0 and normalize. The result is a prior
// file (`value,prob`) that every `--prior` option accepts, so the budget E is spent once and the
// prior can be published and reused by any mechanism.
//
// When every noisy count is <= 0 the normalization is undefined; as the library does
// (prior_from_noisy_counts), the prior is then uniform over the support, a warning says so on
// stderr and the JSON carries "uniform_fallback":true. Both depend on the noisy counts only, so
// they are post-processing and cost no budget.
//
// The labels file is private: no error message quotes a field of it (only its name, line and
// column name). The input is read once (a pipe or FIFO works; `--input -` is standard input) and
// memory is the support's counts.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "command.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/prior/discretize.hpp"
#include "labeldp/prior/private_histogram.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_prior {
namespace {

using labeldp::Index;
using labeldp::cli::InputError;
using labeldp::cli::parse_flag_number;
using labeldp::cli::parse_flag_positive;
using labeldp::cli::parse_seed;
using labeldp::cli::read_support;
using labeldp::cli::rethrow_without_values;

struct Options {
  std::string input, column, eps, lo, hi, resolution, support, seed, output;
  std::string rounding = "nearest";
  bool json = false;
};

// Counts the labels of column `o.column` on the support of `disc`; returns the number of labels.
std::int64_t count_labels(const Options& o, const labeldp::Discretizer<double>& disc,
                          std::vector<std::int64_t>& counts) {
  const bool from_stdin = o.input == "-";
  std::optional<labeldp::io::CsvReader> file;
  if (!from_stdin) file.emplace(o.input);
  labeldp::io::CsvReader stdin_reader(std::cin, "<stdin>");
  labeldp::io::CsvReader& reader = from_stdin ? stdin_reader : *file;
  std::vector<std::string> header, row;
  const std::size_t col = labeldp::io::detail::find_column(reader, header, o.column);
  std::int64_t n = 0;
  for (;;) {
    try {
      if (!reader.next(row)) break;
    } catch (const std::invalid_argument& e) {
      rethrow_without_values(e);
    }
    const std::string where = reader.name() + ":" + std::to_string(reader.line()) + ": ";
    if (row.size() != header.size())
      throw InputError(where + "expected " + std::to_string(header.size()) + " fields, got " +
                       std::to_string(row.size()));
    if (row[col].empty()) throw InputError(where + "label in column '" + o.column + "' is missing");
    const auto y = labeldp::io::parse_double(row[col]);
    if (!y)
      throw InputError(where + "label in column '" + o.column +
                       "' is not a number (the value is not shown: the labels file is private)");
    if (!std::isfinite(*y))
      throw InputError(where + "label in column '" + o.column +
                       "' is not finite (the value is not shown: the labels file is private)");
    ++counts[std::size_t(disc.index(*y))];
    ++n;
  }
  if (n == 0) throw InputError(reader.name() + ":2: no labels after the header");
  return n;
}

void run(const Options& o) {
  // Every flag is checked before any input is read.
  const double eps = parse_flag_positive("--eps", o.eps);
  const bool seeded = !o.seed.empty();
  const std::uint64_t seed = seeded ? parse_seed(o.seed) : 0;
  const labeldp::Rounding rounding = o.rounding == "floor"  ? labeldp::Rounding::Floor
                                     : o.rounding == "ceil" ? labeldp::Rounding::Ceil
                                                            : labeldp::Rounding::Nearest;
  if (!o.output.empty()) {
    std::error_code ec;
    const auto st = std::filesystem::status(o.output, ec);
    if (std::filesystem::is_directory(st)) throw InputError(o.output + ": cannot write file: it is a directory");
    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
      throw InputError(o.output + ": cannot write file: it exists and is not a regular file");
  }

  // The public support (never derived from the labels).
  const bool grid_any = !o.lo.empty() || !o.hi.empty() || !o.resolution.empty();
  std::optional<labeldp::Discretizer<double>> disc;
  if (!o.support.empty()) {
    if (grid_any) throw InputError("'--support' cannot be combined with '--lo', '--hi' or '--resolution'");
    disc = labeldp::Discretizer<double>::points(read_support(o.support), rounding);
  } else if (grid_any) {
    for (const auto& [flag, value] : {std::pair{"--lo", &o.lo}, {"--hi", &o.hi}, {"--resolution", &o.resolution}})
      if (value->empty())
        throw InputError(std::string("'") + flag + "' is missing: a grid needs '--lo', '--hi' and '--resolution'");
    const double lo = parse_flag_number("--lo", o.lo);
    const double hi = parse_flag_number("--hi", o.hi);
    const double res = parse_flag_positive("--resolution", o.resolution);
    if (!(hi > lo)) throw InputError("'--hi' must be greater than '--lo' (" + o.lo + "), got '" + o.hi + "'");
    try {
      disc = labeldp::Discretizer<double>::grid(lo, hi, res, rounding);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("'--resolution' ") + o.resolution + ": " + e.what());
    }
  } else {
    throw InputError("no public support: give '--support FILE', or '--lo', '--hi' and '--resolution'");
  }

  // Checked before the labels are read: the histogram's noise needs eps >= 2^-41.
  if (eps < labeldp::kMinHistogramEpsilon)
    throw InputError("'--eps' " + o.eps +
                     " is too small for the prior's histogram: it must be at least 2^-41 (4.5e-13); below, the "
                     "noise would be wider than 2^42 counts and the prior pure noise");

  std::vector<std::int64_t> counts(std::size_t(disc->size()), 0);
  const std::int64_t n = count_labels(o, *disc, counts);

  // Algorithm 4 with exact discrete Laplace noise; OS entropy unless --seed asks for a
  // reproducible (and therefore not private) run.
  std::unique_ptr<labeldp::ChaCha20> gen;
  if (seeded)
    gen = std::make_unique<labeldp::SeededRandom>(seed);
  else
    gen = std::make_unique<labeldp::SecureRandom>();
  const auto hist = labeldp::private_histogram(disc->support(), std::span<const std::int64_t>(counts), eps, *gen);
  const auto& values = hist.prior.values();
  const auto& probs = hist.prior.probabilities();

  std::string csv = "value,prob\n";
  for (Index i = 0; i < values.size(); ++i)
    csv += labeldp::json_number(values[i]) + "," + labeldp::json_number(probs[i]) + "\n";
  std::string json;
  if (o.json) {
    json = "{\"eps\":" + labeldp::json_number(eps) + ",\"n\":" + std::to_string(n) +
           ",\"values\":" + labeldp::json_array(values) + ",\"probs\":" + labeldp::json_array(probs) +
           ",\"noisy_counts\":[";
    for (std::size_t i = 0; i < hist.noisy_counts.size(); ++i)
      json += (i ? "," : "") + std::to_string(hist.noisy_counts[i]);
    json += std::string("],\"uniform_fallback\":") + (hist.uniform_fallback ? "true" : "false") + "}\n";
  }

  if (!o.output.empty()) labeldp::io::write_file_atomically(o.output, csv);
  if (hist.uniform_fallback)
    std::cerr << "labeldp: warning: every noisy count is <= 0, so the prior is uniform over the support "
                 "(Algorithm 4 cannot normalize; try a larger --eps or a coarser support)\n";
  const std::string& text = o.json ? json : csv;
  if (o.json || o.output.empty()) {
    std::cout.write(text.data(), std::streamsize(text.size()));
    std::cout.flush();
    if (!std::cout) throw InputError("<stdout>: write error");
  }
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "prior", "an eps-DP prior over a public support from a labels column (Ghazi et al. 2023, Alg. 4)",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("--input", o->input, "CSV file with a header row holding the labels ('-': standard input)")
          ->required();
      app.add_option("--column", o->column, "name of the label column")->required();
      app.add_option("--eps", o->eps, "privacy budget E of the prior, a finite number > 0")->required();
      app.add_option("--lo", o->lo, "public grid: labels below are clipped to LO");
      app.add_option("--hi", o->hi, "public grid: labels above are clipped to HI");
      app.add_option("--resolution", o->resolution, "public grid step: support LO, LO+R, ..., HI");
      app.add_option("--support", o->support, "public support: CSV with header 'value', one value per row");
      app.add_option("--rounding", o->rounding, "nearest (default; ties up), floor or ceil")
          ->check(CLI::IsMember({"nearest", "floor", "ceil"}));
      app.add_option("--seed", o->seed,
                     "deterministic generator seeded with S (NOT private: for tests and experiments); default: "
                     "seeded from the operating system's entropy");
      app.add_option("--output", o->output, "write the prior CSV (value,prob) here, atomically");
      app.add_flag("--json", o->json,
                   "print {\"eps\",\"n\",\"values\",\"probs\",\"noisy_counts\",\"uniform_fallback\"} on stdout "
                   "instead of the CSV");
      app.footer(
          "Labels are clipped to the support's range and rounded to a support point, as in privatize (a public "
          "map: choose it without looking at the data). Every count gets independent discrete Laplace noise of "
          "scale 2/E (sensitivity 2 under label replacement), negative counts become 0, and the counts are "
          "normalized; if none is positive the prior is uniform (a warning says so). The output is accepted by "
          "every --prior option.");
      app.callback([o] { run(*o); });
    }}};

}  // namespace
}  // namespace cmd_prior
