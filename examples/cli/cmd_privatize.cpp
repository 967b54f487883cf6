// `labeldp privatize`: eps-label-DP noisy labels, one per line, by RR-on-Bins (Ghazi et al.,
// ICLR 2023). Labels are first mapped onto a public finite support (--support FILE, or --lo,
// --hi and --resolution; or the values of a known public --prior). With --prior all of eps goes
// to the optimal RR-on-Bins for that prior (Algorithm 2); otherwise the prior is estimated
// privately first (Algorithm 3: eps_prior on the private histogram, Algorithm 4, the rest on the
// mechanism; default eps_prior = sqrt(k/n) of Theorem 7, clamped to eps/2).
//
// Memory: the private histogram needs every label counted before the first one is randomized,
// so file input is read twice (counting pass, then randomizing pass) and memory stays constant
// besides the support. Standard input cannot be re-read: its labels are buffered as support
// indices (4 bytes per label). Every label is validated in the first pass, so on bad input
// nothing reaches stdout and no output file is created (--output is written atomically).
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/io/json.hpp"
#include "labeldp/mechanisms/rr_on_bins.hpp"
#include "labeldp/mechanisms/two_stage.hpp"
#include "labeldp/prior/budget.hpp"
#include "labeldp/prior/discretize.hpp"

namespace {

using labeldp::Index;
using labeldp::cli::InputError;

struct Options {
  std::string eps, eps_prior, lo, hi, resolution, seed;
  std::string input, column, output, prior, support;
  std::string loss = "squared";
  std::string rounding = "nearest";
};

double parse_flag_number(const std::string& flag, const std::string& text) {
  const auto v = labeldp::io::parse_double(text);
  if (!v || !std::isfinite(*v)) throw InputError("'" + flag + "' must be a finite number, got '" + text + "'");
  return *v;
}

double parse_flag_positive(const std::string& flag, const std::string& text) {
  const double v = parse_flag_number(flag, text);
  if (!(v > 0)) throw InputError("'" + flag + "' must be a finite number > 0, got '" + text + "'");
  return v;
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (text.empty() || ec != std::errc{} || ptr != last)
    throw InputError("'--seed' must be an integer in [0, 2^64), got '" + text + "'");
  return v;
}

// Reads the support file: CSV with header `value`, one finite value per row (duplicates are an
// error, as in a prior file).
std::vector<double> read_support(const std::string& path) {
  std::vector<double> values;
  std::vector<std::size_t> lines;
  labeldp::io::for_each_column_value(path, "value", [&](double v, std::size_t line) {
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i] == v)
        throw InputError(path + ":" + std::to_string(line) + ": duplicate value " + labeldp::detail::format_number(v) +
                         " (also on line " + std::to_string(lines[i]) + ")");
    values.push_back(v);
    lines.push_back(line);
  });
  if (values.empty()) throw InputError(path + ":2: no support values after the header 'value'");
  return values;
}

// Calls f(label, line) for every label of the input (pass over the file or stdin).
template <typename F>
void for_each_label(const Options& o, F&& f) {
  if (!o.column.empty()) {
    labeldp::io::for_each_column_value(o.input, o.column, f);
  } else if (o.input.empty() || o.input == "-") {
    labeldp::io::for_each_line_value(std::cin, "<stdin>", f);
  } else {
    std::ifstream in(o.input, std::ios::binary);
    if (!in) throw InputError(o.input + ": cannot open file: " + std::strerror(errno));
    labeldp::io::for_each_line_value(in, o.input, f);
  }
}

template <typename Loss>
void run_privatize(const Options& o, const Loss& loss) {
  // Every flag is checked before any input is read.
  const double eps = parse_flag_positive("--eps", o.eps);
  const bool seeded = !o.seed.empty();
  const std::uint64_t seed = seeded ? parse_seed(o.seed) : 0;
  std::optional<double> eps_prior;
  if (!o.eps_prior.empty()) {
    eps_prior = parse_flag_positive("--eps-prior", o.eps_prior);
    if (!(*eps_prior < eps))
      throw InputError("'--eps-prior' must be less than '--eps' (" + o.eps + "), got '" + o.eps_prior + "'");
  }
  const bool from_stdin = o.column.empty() && (o.input.empty() || o.input == "-");
  if (!o.column.empty() && (o.input.empty() || o.input == "-"))
    throw InputError("'--column' needs '--input FILE' (a CSV file with a header row)");
  const labeldp::Rounding rounding = o.rounding == "floor"  ? labeldp::Rounding::Floor
                                     : o.rounding == "ceil" ? labeldp::Rounding::Ceil
                                                            : labeldp::Rounding::Nearest;

  // The public discretization (never derived from the labels).
  const bool grid_any = !o.lo.empty() || !o.hi.empty() || !o.resolution.empty();
  std::optional<labeldp::FinitePrior<double>> prior;
  std::optional<labeldp::Discretizer<double>> disc;
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
    throw InputError(
        "no public discretization: give '--support FILE', or '--lo', '--hi' and '--resolution', "
        "or a public '--prior FILE'");
  }
  const Index k = disc->size();
  for (Index i = 0; i < k; ++i) {
    try {
      loss.validate_label(disc->support()[i]);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("support value ") + labeldp::detail::format_number(disc->support()[i]) +
                       " is not allowed with '--loss " + o.loss + "': " + e.what());
    }
  }

  // Pass 1: validate and count every label (and keep the indices of stdin labels).
  std::vector<std::int64_t> counts(std::size_t(k), 0);
  std::vector<std::uint32_t> buffered;
  std::int64_t n = 0;
  for_each_label(o, [&](double y, std::size_t) {
    const Index i = disc->index(y);
    ++counts[std::size_t(i)];
    ++n;
    if (from_stdin) buffered.push_back(std::uint32_t(i));
  });
  if (n == 0) throw InputError((from_stdin ? std::string("<stdin>") : o.input) + ": no labels to privatize");

  // The generator: operating-system entropy unless --seed asks for a reproducible run.
  std::unique_ptr<labeldp::ChaCha20> gen;
  if (seeded)
    gen = std::make_unique<labeldp::SeededRandom>(seed);
  else
    gen = std::make_unique<labeldp::SecureRandom>();

  std::optional<labeldp::RROnBins<double>> rr;
  if (prior) {
    rr = labeldp::optimal_rr_on_bins(*prior, eps, loss);
  } else {
    labeldp::BudgetSplit split;
    if (eps_prior) {
      split = labeldp::split_budget(eps, *eps_prior);
    } else {
      split = labeldp::theorem7_split(eps, k, n);
    }
    const auto two = labeldp::TwoStageRandomizer<double, Loss>::fit(disc->support(), counts, split, *gen, loss);
    rr = two.rr_on_bins();
  }

  // Pass 2: randomize and write. Output strings are formatted once per output value.
  std::vector<std::string> text(std::size_t(rr->num_outputs()));
  for (Index j = 0; j < rr->num_outputs(); ++j)
    text[std::size_t(j)] = labeldp::io::json_number(rr->outputs()[j]) + "\n";
  std::optional<labeldp::io::AtomicFileWriter> file;
  if (!o.output.empty()) file.emplace(o.output);
  std::string chunk;
  auto flush = [&] {
    if (file)
      file->write(chunk);
    else
      std::cout.write(chunk.data(), std::streamsize(chunk.size()));
    chunk.clear();
  };
  auto emit = [&](Index support_index) {
    chunk += text[std::size_t(rr->sample_index(support_index, *gen))];
    if (chunk.size() >= (1u << 16)) flush();
  };
  if (from_stdin) {
    for (std::uint32_t i : buffered) emit(Index(i));
  } else {
    std::int64_t second = 0;
    for_each_label(o, [&](double y, std::size_t) {
      emit(disc->index(y));
      ++second;
    });
    if (second != n) throw InputError(o.input + ": the file changed while it was being read");
  }
  flush();
  if (file)
    file->commit();
  else
    std::cout.flush();
}

void run(const Options& o) {
  labeldp::cli::with_loss(o.loss, [&](const auto& loss) { run_privatize(o, loss); });
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "privatize", "eps-label-DP noisy labels by RR-on-Bins, with a public or privately estimated prior",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("--eps", o->eps, "total privacy budget E, a finite number > 0")->required();
      app.add_option("--input", o->input,
                     "labels, one per line (default: standard input), or with --column a CSV file with a header");
      app.add_option("--column", o->column, "name of the label column of the --input CSV file");
      app.add_option("--output", o->output, "write the noisy labels here (atomically) instead of standard output");
      app.add_option("--prior", o->prior,
                     "known PUBLIC prior (CSV value,prob or value,count): its values are the support and all of "
                     "--eps goes to the optimal RR-on-Bins");
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
          "without looking at the data). Without --prior the prior is estimated privately (Algorithm 3 of Ghazi et "
          "al. 2023), which needs all labels counted first: a file is read twice; standard input is buffered (4 "
          "bytes per label). Output: one noisy label per line, in input order, 17 significant digits.");
      app.callback([o] { run(*o); });
    }}};

}  // namespace
