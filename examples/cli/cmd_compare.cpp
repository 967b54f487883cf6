// `labeldp compare`: the papers' evaluation on the user's own data (the labeldp CLI contract,
// "labeldp compare"; Ghazi et al. 2023 Table 1 and Fig. 6, Badanidiyuru et al. 2023 Fig. 2).
//
// The rows are split into train and test (seeded, test fraction T). For each method, eps and
// seed the training labels go through the same two-stage pipeline as `privatize --method`
// (methods.hpp: a private prior on the public grid with eps1 = sqrt(k/n) of Theorem 7, then the
// mechanism with the rest; the baselines spend all of eps on the noise), and two numbers are
// recorded: the noisy-label MSE against the original training labels, and the test MSE on the
// clean test labels of a ridge regression (ridge.hpp; penalty by 5-fold cross-validation on the
// noisy training labels only) trained on the noisy labels. Reference rows: ridge on the clean
// labels (`non-private`) and the training mean (`mean`). Mean and standard deviation over seeds.
//
// This is an evaluation on data the user holds, not a release: its numbers use the clean labels.
// Error messages still never quote a label (file and line only).
//
// Cells (method, eps, seed) are independent and run on every core; each has its own generator,
// derived from --seed and the cell, so a seeded run does not depend on thread scheduling.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/io/atomic_file.hpp"
#include "labeldp/io/csv.hpp"
#include "labeldp/mechanisms/any_mechanism.hpp"
#include "labeldp/prior/budget.hpp"
#include "labeldp/prior/discretize.hpp"
#include "methods.hpp"
#include "ridge.hpp"

// Named around the anonymous namespace so that the program's unity build (one translation unit
// for every command) keeps each command's helpers apart.
namespace cmd_compare {
namespace {

using labeldp::Index;
using labeldp::cli::InputError;
namespace ridge = labeldp::cli::ridge;

struct Options {
  std::string input, column, features, eps, methods = "all", seeds = "5", test_fraction = "0.2";
  std::string lo, hi, resolution, output_dir, seed, density, delta = "1e-5", time_limit = "10", threads;
  bool json = false;
};

// ---------------------------------------------------------------------------------------------
// Methods: the two-stage ones, k-ary RR, and every additive baseline with and without clipping.

struct Method {
  std::string name;  // as printed ("rr-on-bins", "laplace-clip", ...)
  std::string base;  // as privatize --method names it ("bins", "laplace", ...)
  bool clip = false;
};

const std::vector<Method>& all_methods() {
  static const std::vector<Method> methods = [] {
    std::vector<Method> m{{"rr-on-bins", "bins", false},
                          {"unbiased", "unbiased", false},
                          {"rpwithprior", "rpwithprior", false},
                          {"rr-with-prior", "rr-with-prior", false},
                          {"rr", "rr", false}};
    for (const char* k :
         {"laplace", "discrete-laplace", "gaussian", "discrete-gaussian", "staircase", "discrete-staircase"}) {
      m.push_back({k, k, false});
      m.push_back({std::string(k) + "-clip", k, true});
    }
    m.push_back({"exponential", "exponential", false});  // its outputs are in [lo, hi] already
    return m;
  }();
  return methods;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  for (auto& s : out) {
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    while (!s.empty() && s.back() == ' ') s.pop_back();
  }
  return out;
}

// Indices into all_methods() of --methods (all, or a list; "bins" is accepted for rr-on-bins).
std::vector<std::size_t> parse_methods(const std::string& text) {
  const auto& all = all_methods();
  std::vector<std::size_t> out;
  if (text == "all") {
    for (std::size_t i = 0; i < all.size(); ++i) out.push_back(i);
    return out;
  }
  for (const auto& name : split_list(text)) {
    const std::string n = name == "bins" ? "rr-on-bins" : name;
    const auto it = std::find_if(all.begin(), all.end(), [&](const Method& m) { return m.name == n; });
    if (it == all.end()) {
      std::string known;
      for (const auto& m : all) known += (known.empty() ? "" : ", ") + m.name;
      throw InputError("'--methods' must be 'all' or a list of: " + known + "; got '" + name + "'");
    }
    const std::size_t i = std::size_t(it - all.begin());
    if (std::find(out.begin(), out.end(), i) != out.end()) throw InputError("'--methods' names '" + name + "' twice");
    out.push_back(i);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Input.

struct Data {
  std::vector<double> labels;
  std::vector<std::vector<std::string>> features;  // features[j][i]
};

Data read_data(const Options& o, const std::vector<std::string>& feature_names) {
  std::unique_ptr<labeldp::io::CsvReader> reader;
  const bool use_stdin = o.input == "-";
  try {
    if (use_stdin)
      reader = std::make_unique<labeldp::io::CsvReader>(std::cin, "<stdin>");
    else
      reader = std::make_unique<labeldp::io::CsvReader>(o.input);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  std::vector<std::string> header, fields;
  std::size_t label_col = 0;
  std::vector<std::size_t> feature_cols;
  try {
    label_col = labeldp::io::detail::find_column(*reader, header, o.column);
    for (const auto& f : feature_names) {
      if (f == o.column)
        throw InputError(reader->name() + ":1: feature '" + f + "' is the label column '--column " + o.column + "'");
      const auto it = std::find(header.begin(), header.end(), f);
      if (it == header.end())
        throw InputError(reader->name() + ":1: no feature column '" + f + "' in header '" +
                         labeldp::io::detail::join_fields(header) + "'");
      feature_cols.push_back(std::size_t(it - header.begin()));
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  Data d;
  d.features.resize(feature_names.size());
  for (;;) {
    try {
      if (!reader->next(fields)) break;
    } catch (const std::invalid_argument& e) {
      labeldp::cli::rethrow_without_values(e);
    }
    const std::string where = reader->name() + ":" + std::to_string(reader->line()) + ": ";
    if (fields.size() != header.size())
      throw InputError(where + "expected " + std::to_string(header.size()) + " fields, got " +
                       std::to_string(fields.size()));
    if (d.labels.size() >= labeldp::io::kMaxCsvRows)
      throw InputError(where + "more than " + std::to_string(labeldp::io::kMaxCsvRows) + " rows (the reader's limit)");
    const std::string& text = fields[label_col];
    const auto v = labeldp::io::parse_double(text);
    if (text.empty() || !v || !std::isfinite(*v) || std::abs(*v) > labeldp::cli::kMaxSquaredLossMagnitude)
      throw InputError(where + "label in column '" + o.column + "' is " +
                       (text.empty()         ? "missing"
                        : !v                 ? "not a number"
                        : !std::isfinite(*v) ? "not finite"
                                             : "beyond 1e150 in magnitude") +
                       " (the value is not shown: the labels file is private)");
    d.labels.push_back(*v);
    for (std::size_t j = 0; j < feature_cols.size(); ++j) d.features[j].push_back(fields[feature_cols[j]]);
  }
  if (d.labels.size() < 20)
    throw InputError(reader->name() + ": " + std::to_string(d.labels.size()) +
                     " data rows; compare needs at least 20 (train and test, 5-fold cross-validation)");
  return d;
}

// ---------------------------------------------------------------------------------------------
// Randomness: one independent generator per purpose, derived from --seed (or the OS).

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Seeding {
  bool seeded = false;
  std::uint64_t seed = 0;
  std::unique_ptr<labeldp::ChaCha20> make(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) const {
    if (!seeded) return std::make_unique<labeldp::SecureRandom>();
    return std::make_unique<labeldp::SeededRandom>(mix(mix(mix(seed) ^ a) ^ b) ^ c);
  }
};

// ---------------------------------------------------------------------------------------------
// One train/test split and everything label-independent about it.

struct Split {
  std::vector<std::size_t> train, test;
  Eigen::VectorXd y_train, y_test;
  Eigen::MatrixXd x_test;
  std::optional<ridge::RidgeCV> cv;
  std::vector<std::int64_t> counts;  // training labels on the public grid
  double non_private = 0, mean = 0, train_var = 0;
};

Split make_split(const Data& d, const ridge::Encoder& enc, double test_fraction,
                 const labeldp::Discretizer<double>& disc, labeldp::ChaCha20& gen) {
  const std::size_t n = d.labels.size();
  std::vector<std::size_t> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = i;
  for (std::size_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[std::size_t(labeldp::uniform_below(i + 1, gen))]);
  const std::size_t n_test = std::clamp<std::size_t>(std::size_t(std::llround(test_fraction * double(n))), 1, n - 10);
  Split s;
  s.test.assign(perm.begin(), perm.begin() + std::ptrdiff_t(n_test));
  s.train.assign(perm.begin() + std::ptrdiff_t(n_test), perm.end());
  auto pick = [&](const std::vector<std::size_t>& rows) {
    std::vector<std::vector<std::string>> cols(d.features.size());
    for (std::size_t j = 0; j < cols.size(); ++j)
      for (std::size_t r : rows) cols[j].push_back(d.features[j][r]);
    return enc.encode(cols);
  };
  s.x_test = pick(s.test);
  s.cv.emplace(pick(s.train), 5);
  s.y_train.resize(Index(s.train.size()));
  s.y_test.resize(Index(s.test.size()));
  for (std::size_t i = 0; i < s.train.size(); ++i) s.y_train(Index(i)) = d.labels[s.train[i]];
  for (std::size_t i = 0; i < s.test.size(); ++i) s.y_test(Index(i)) = d.labels[s.test[i]];
  s.counts.assign(std::size_t(disc.size()), 0);
  for (Index i = 0; i < s.y_train.size(); ++i) ++s.counts[std::size_t(disc.index(s.y_train(i)))];
  s.non_private = ridge::mse(s.cv->fit(s.y_train).predict(s.x_test), s.y_test);
  const double m = s.y_train.mean();
  s.mean = (s.y_test.array() - m).square().mean();
  s.train_var = (s.y_train.array() - m).square().mean();
  return s;
}

// ---------------------------------------------------------------------------------------------
// One cell: a method at one eps on one split.

struct Grid {
  double lo = 0, hi = 0, resolution = 0;
  std::optional<labeldp::Discretizer<double>> disc;
};

struct Cell {
  std::size_t method = 0, eps = 0, seed = 0;
  double noisy_mse = 0, test_mse = 0;
  bool uncertified = false;
  std::string error;
  std::vector<double> noisy;  // kept for the density plot's cell only
};

// The noisy training labels of method `m` at `eps` on split `s`: both stages of a two-stage method
// (with `gen`), or the prebuilt `baseline`.
std::vector<double> privatize_training(const Method& m, double eps, const labeldp::AnyMechanism* baseline,
                                       const Split& s, const Grid& g, double time_limit, labeldp::ChaCha20& gen,
                                       bool& uncertified) {
  const Index n = s.y_train.size();
  std::vector<double> noisy(static_cast<std::size_t>(n));
  const auto& disc = *g.disc;
  const Index k = disc.size();
  if (labeldp::cli::is_two_stage_method(m.base)) {
    std::vector<double> labels(s.y_train.data(), s.y_train.data() + n);
    labeldp::cli::StageInputs in{disc, s.counts, &labels, g.lo, g.hi, g.resolution, nullptr};
    labeldp::UnbiasedOptions uo;
    uo.time_limit = time_limit;
    const auto split = labeldp::theorem7_split(eps, k, n);
    const auto st = labeldp::cli::build_stage_two(m.base, in, split, gen, labeldp::SquaredLoss<double>{}, uo);
    const double slo = disc.support()[0], shi = disc.support()[k - 1];
    if (st.unbiased && st.unbiased->report() && !st.unbiased->report()->optimal()) uncertified = true;
    for (Index i = 0; i < n; ++i) {
      const double y = s.y_train(i);
      double& out = noisy[std::size_t(i)];
      if (st.rr)
        out = st.rr->outputs()[st.rr->sample_index(disc.index(y), gen)];
      else if (st.rrp)
        out = st.rrp->sample(disc(y), gen);
      else if (st.unbiased)
        out = st.unbiased->sample(std::clamp(y, slo, shi), gen);
      else
        out = st.rp_noisy[std::size_t(i)];
    }
    return noisy;
  }
  const labeldp::AnyMechanism& mech = *baseline;
  for (Index i = 0; i < n; ++i) {
    const double y = s.y_train(i);
    noisy[std::size_t(i)] = mech.sample(m.base == "rr" ? disc(y) : y, gen);
  }
  return noisy;
}

// The baseline `m` at `eps`: no prior, so one mechanism serves every seed.
labeldp::AnyMechanism make_baseline_for(const Method& m, double eps, double delta, const Grid& g) {
  const auto& disc = *g.disc;
  const Index k = disc.size();
  labeldp::BaselineSpec spec;
  spec.kind = m.base;
  spec.eps = eps;
  spec.clip = m.clip;
  if (m.base == "rr") {  // k-ary RR over the public grid (privatize --method rr)
    spec.lo = disc.support()[0];
    spec.hi = disc.support()[k - 1];
    spec.prior = labeldp::FinitePrior<double>::from_weights(
        std::vector<double>(disc.support().data(), disc.support().data() + k), std::vector<double>(std::size_t(k), 1));
  } else {
    spec.lo = g.lo;
    spec.hi = g.hi;
    if (labeldp::cli::needs_resolution(m.base)) spec.resolution = g.resolution;
    if (labeldp::cli::needs_delta(m.base)) spec.delta = delta;
  }
  return labeldp::make_baseline(spec);
}

// Baselines built once per (method, eps), by whichever thread needs one first.
struct BaselineSlot {
  std::once_flag once;
  std::optional<labeldp::AnyMechanism> mech;
  std::string error;
};

// ---------------------------------------------------------------------------------------------
// Output.

struct Row {
  std::string method;
  double eps = 0;
  double noisy_mse = 0, noisy_sd = 0, test_mse = 0, test_sd = 0;
  int uncertified = 0;
};

std::pair<double, double> mean_sd(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return {m, v.size() > 1 ? std::sqrt(ss / double(v.size() - 1)) : 0.0};
}

std::string num(double v) { return labeldp::json_number(v); }

std::string short_num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  try {
    labeldp::io::AtomicFileWriter w(path.string());
    w.write(text);
    w.commit();
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
}

std::string find_gnuplot() {
  if (const char* p = std::getenv("LABELDP_GNUPLOT"); p && *p) return p;
  const char* path = std::getenv("PATH");
  if (!path) return {};
  std::string all = path;
  std::size_t start = 0;
  while (start <= all.size()) {
    const std::size_t end = std::min(all.find(':', start), all.size());
    const std::string dir = all.substr(start, end - start);
    if (!dir.empty()) {
      const std::string cand = dir + "/gnuplot";
      if (::access(cand.c_str(), X_OK) == 0) return cand;
    }
    start = end + 1;
  }
  return {};
}

std::string gp_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// A gnuplot script drawing `what` (test or noisy-label MSE) against eps, one line per method
// with the seeds' standard deviation as error bars, the reference rows as flat lines; log scale
// on y when the values span more than a factor of 10. Writes `out` in the given terminal.
std::string line_plot_script(const std::vector<Row>& rows, const std::vector<std::string>& methods, bool test,
                             double non_private, double mean, const std::string& terminal, const std::string& out,
                             const std::string& title) {
  std::ostringstream s;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& r : rows) {
    const double v = test ? r.test_mse : r.noisy_mse;
    if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (test) lo = std::min(lo, non_private), hi = std::max(hi, mean);
  s << "reset\nset terminal " << terminal << "\nset output " << gp_quote(out) << "\n";
  s << "set title " << gp_quote(title) << "\nset xlabel 'eps (log scale)'\nset ylabel "
    << gp_quote(test ? "test MSE of ridge trained on noisy labels" : "noisy-label MSE (training labels)") << "\n";
  s << "set logscale x 2\nset key outside right top box\nset grid\n";
  if (hi > 10 * lo) s << "set logscale y\nset format y '%g'\n";
  for (std::size_t m = 0; m < methods.size(); ++m) {
    s << "$m" << m << " << EOD\n";
    for (const auto& r : rows)
      if (r.method == methods[m])
        s << num(r.eps) << " " << num(test ? r.test_mse : r.noisy_mse) << " " << num(test ? r.test_sd : r.noisy_sd)
          << "\n";
    s << "EOD\n";
  }
  s << "plot ";
  for (std::size_t m = 0; m < methods.size(); ++m) {
    s << (m ? ", \\\n     " : "") << "$m" << m << " using 1:2:3 with yerrorlines lw 2 pt " << (m % 13 + 1) << " dt "
      << (m / 8 + 1) << " title " << gp_quote(methods[m]);
  }
  if (test)
    s << ", \\\n     " << num(non_private) << " with lines lw 2 lc 'black' dt 2 title 'non-private', \\\n     "
      << num(mean) << " with lines lw 2 lc 'gray50' dt 3 title 'mean'";
  s << "\n";
  return s.str();
}

std::string density_script(const std::vector<double>& original, const std::vector<double>& noisy, const Grid& g,
                           const std::string& title, const std::string& terminal, const std::string& out) {
  // Histogram densities on 60 bins over [lo - 10%, hi + 10%] of the public range; values beyond
  // are left out (the plot says how many).
  const double span = g.hi - g.lo;
  const double a = g.lo - 0.1 * span, b = g.hi + 0.1 * span;
  const int bins = 60;
  const double w = (b - a) / bins;
  auto hist = [&](const std::vector<double>& v, std::size_t& outside) {
    std::vector<double> h(bins, 0);
    for (double x : v) {
      const double t = std::floor((x - a) / w);
      if (t < 0 || t >= bins)
        ++outside;
      else
        h[std::size_t(t)] += 1;
    }
    for (double& c : h) c /= double(v.size()) * w;
    return h;
  };
  std::size_t out_o = 0, out_n = 0;
  const auto ho = hist(original, out_o), hn = hist(noisy, out_n);
  std::ostringstream s;
  s << "reset\nset terminal " << terminal << "\nset output " << gp_quote(out) << "\n";
  s << "set title " << gp_quote(title) << "\nset xlabel 'label'\nset ylabel 'density'\nset key top right\n";
  s << "set style fill transparent solid 0.4 noborder\nset xrange [" << num(a) << ":" << num(b) << "]\n";
  s << "$d << EOD\n";
  for (int i = 0; i < bins; ++i)
    s << num(a + (i + 0.5) * w) << " " << num(ho[std::size_t(i)]) << " " << num(hn[std::size_t(i)]) << "\n";
  s << "EOD\n";
  s << "set boxwidth " << num(w) << " absolute\n";
  s << "plot $d using 1:2 with boxes lc rgb '#1f77b4' title " << gp_quote("original labels")
    << ", \\\n     $d using 1:3 with boxes lc rgb '#d62728' title "
    << gp_quote("noisy labels" + (out_n ? " (" + std::to_string(out_n) + " outside the plotted range)" : std::string()))
    << "\n";
  return s.str();
}

// Runs gnuplot on `script` (written next to the outputs), then renames each temporary output to
// its final name, so a failed run leaves no partial image. Returns false with `why` on failure.
bool run_gnuplot(const std::string& gnuplot, const std::filesystem::path& dir, const std::string& script,
                 const std::vector<std::pair<std::string, std::string>>& renames, std::string& why) {
  const auto script_path = dir / (".compare-" + std::to_string(::getpid()) + ".gp");
  write_file(script_path, script);
  // The script and the temporary images are removed if a signal ends the run (as AtomicFileWriter's).
  std::vector<std::string> temporaries{script_path.string()};
  for (const auto& r : renames) temporaries.push_back((dir / r.first).string());
  std::vector<std::size_t> slots;
  for (const auto& t : temporaries) slots.push_back(labeldp::io::detail::TemporaryFiles::add(t.c_str()));
  struct Unregister {
    std::vector<std::size_t>& slots;
    ~Unregister() {
      for (std::size_t slot : slots) labeldp::io::detail::TemporaryFiles::remove(slot);
    }
  } unregister{slots};
  auto sh_quote = [](const std::string& t) {
    std::string q = "'";
    for (char c : t) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string cmd = sh_quote(gnuplot) + " " + sh_quote(script_path.string()) + " 2>&1";
  std::string output;
  int status = -1;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) output += buf;
    status = ::pclose(p);
  }
  std::error_code ec;
  std::filesystem::remove(script_path, ec);
  if (status != 0) {
    for (const auto& [tmp, _] : renames) std::filesystem::remove(dir / tmp, ec);
    const auto nl = output.find('\n');
    why = "gnuplot failed" + (output.empty() ? std::string() : ": " + output.substr(0, nl));
    return false;
  }
  for (const auto& [tmp, final_name] : renames) {
    std::filesystem::rename(dir / tmp, dir / final_name, ec);
    if (ec) {
      why = (dir / final_name).string() + ": " + ec.message();
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The run.

void run(const Options& o) {
  // Every option is checked before the input is read.
  if (o.input.empty()) throw InputError("'--input' is required (a CSV file with a header, or '-')");
  if (o.column.empty()) throw InputError("'--column' is required (the label column)");
  if (o.features.empty()) throw InputError("'--features' is required (comma-separated feature columns)");
  if (o.eps.empty()) throw InputError("'--eps' is required (comma-separated eps values)");
  std::vector<double> eps_list;
  for (const auto& e : split_list(o.eps)) {
    const double v = labeldp::cli::parse_flag_positive("--eps", e);
    if (std::find(eps_list.begin(), eps_list.end(), v) != eps_list.end())
      throw InputError("'--eps' lists " + e + " twice");
    eps_list.push_back(v);
  }
  std::sort(eps_list.begin(), eps_list.end());
  const auto methods = parse_methods(o.methods);
  const std::size_t seeds = std::size_t(labeldp::cli::parse_count("--seeds", o.seeds, 1));
  if (seeds > 1000) throw InputError("'--seeds' must be at most 1000, got '" + o.seeds + "'");
  const double test_fraction = labeldp::cli::parse_flag_number("--test-fraction", o.test_fraction);
  if (!(test_fraction > 0 && test_fraction < 1))
    throw InputError("'--test-fraction' must be in (0, 1), got '" + o.test_fraction + "'");
  const double delta = labeldp::cli::parse_flag_number("--delta", o.delta);
  if (!(delta > 0 && delta < 1)) throw InputError("'--delta' must be in (0, 1), got '" + o.delta + "'");
  const double time_limit = labeldp::cli::parse_flag_number("--time-limit", o.time_limit);
  labeldp::cli::validate_time_limit(time_limit);
  Seeding seeding;
  seeding.seeded = !o.seed.empty();
  if (seeding.seeded) seeding.seed = labeldp::cli::parse_seed(o.seed);
  std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (!o.threads.empty()) threads = std::size_t(labeldp::cli::parse_count("--threads", o.threads, 1));
  threads = std::min<std::size_t>(threads, 64);
  const std::vector<std::string> feature_names = split_list(o.features);
  for (std::size_t j = 0; j < feature_names.size(); ++j) {
    if (feature_names[j].empty()) throw InputError("'--features' has an empty name in '" + o.features + "'");
    for (std::size_t i = 0; i < j; ++i)
      if (feature_names[i] == feature_names[j]) throw InputError("'--features' names '" + feature_names[j] + "' twice");
  }
  const bool grid_any = !o.lo.empty() || !o.hi.empty() || !o.resolution.empty();
  Grid grid;
  if (grid_any) {
    for (const auto& [flag, value] : {std::pair{"--lo", &o.lo}, {"--hi", &o.hi}, {"--resolution", &o.resolution}})
      if (value->empty())
        throw InputError(std::string("'") + flag +
                         "' is missing: the public grid needs '--lo', '--hi' and '--resolution'");
    grid.lo = labeldp::cli::parse_flag_number("--lo", o.lo);
    grid.hi = labeldp::cli::parse_flag_number("--hi", o.hi);
    grid.resolution = labeldp::cli::parse_flag_positive("--resolution", o.resolution);
    if (!(grid.hi > grid.lo)) throw InputError("'--hi' must be greater than '--lo' (" + o.lo + "), got '" + o.hi + "'");
  }
  std::string density_method;
  double density_eps = 0;
  if (!o.density.empty()) {
    const auto colon = o.density.rfind(':');
    if (colon == std::string::npos) throw InputError("'--density' must be METHOD:EPS, got '" + o.density + "'");
    density_method = o.density.substr(0, colon);
    if (density_method == "bins") density_method = "rr-on-bins";
    density_eps = labeldp::cli::parse_flag_positive("--density", o.density.substr(colon + 1));
    const bool listed = std::any_of(methods.begin(), methods.end(),
                                    [&](std::size_t m) { return all_methods()[m].name == density_method; });
    if (!listed || std::find(eps_list.begin(), eps_list.end(), density_eps) == eps_list.end())
      throw InputError("'--density' " + o.density + " is not one of the compared methods and eps values");
    if (o.output_dir.empty()) throw InputError("'--density' needs '--output-dir' (it writes density.png and .svg)");
  }
  std::filesystem::path dir;
  if (!o.output_dir.empty()) {
    dir = o.output_dir;
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
      throw InputError(o.output_dir + ": '--output-dir' exists and is not a directory");
  }

  const Data data = read_data(o, feature_names);
  const std::size_t n = data.labels.size();
  if (!grid_any) {
    // No public grid given: the labels' range with 100 steps. Fine for an evaluation on data
    // one holds; a release must choose the range without looking at the labels.
    const auto [mn, mx] = std::minmax_element(data.labels.begin(), data.labels.end());
    grid.lo = *mn;
    grid.hi = *mx > *mn ? *mx : *mn + 1;
    grid.resolution = (grid.hi - grid.lo) / 100;
  }
  try {
    grid.disc = labeldp::Discretizer<double>::grid(grid.lo, grid.hi, grid.resolution);
  } catch (const std::invalid_argument& e) {
    throw InputError("'--resolution' " + o.resolution + ": " + e.what());
  }
  const Index k = grid.disc->size();
  for (std::size_t m : methods) {
    const auto& base = all_methods()[m].base;
    const Index limit = base == "unbiased"        ? labeldp::UnbiasedOptions{}.max_labels
                        : base == "bins"          ? labeldp::cli::kMaxBinsValues
                        : base == "rr"            ? labeldp::cli::kMaxRRValues
                        : base == "rr-with-prior" ? labeldp::cli::kMaxRRWithPriorValues
                                                  : k;
    if (k > limit)
      throw InputError("'--methods' " + all_methods()[m].name + " takes at most " + std::to_string(limit) +
                       " grid points, got " + std::to_string(k) + " (raise '--resolution')");
    if (base == "rpwithprior" && k < 2)
      throw InputError("'--methods' rpwithprior needs at least two grid points ('--resolution' below '--hi' - '--lo')");
  }
  if (density_method.empty() && !dir.empty()) {
    // Default: the first compared method at the eps closest to 1 (log scale).
    density_method = all_methods()[methods.front()].name;
    density_eps = *std::min_element(eps_list.begin(), eps_list.end(),
                                    [](double a, double b) { return std::abs(std::log(a)) < std::abs(std::log(b)); });
  }

  ridge::Encoder encoder(feature_names, data.features);
  if (encoder.width() == 0) throw InputError("'--features': every feature column is constant (nothing to regress on)");

  const bool progress = ::isatty(2) != 0;
  const auto start = std::chrono::steady_clock::now();
  std::vector<Split> splits;
  for (std::size_t s = 0; s < seeds; ++s) {
    const auto gen = seeding.make(1, s);
    splits.push_back(make_split(data, encoder, test_fraction, *grid.disc, *gen));
  }

  // The cells, the slow ones (unbiased, large eps first) first.
  std::vector<Cell> cells;
  for (std::size_t m : methods)
    for (std::size_t e = 0; e < eps_list.size(); ++e)
      for (std::size_t s = 0; s < seeds; ++s) cells.push_back(Cell{m, e, s, 0, 0, false, {}, {}});
  std::vector<std::size_t> order(cells.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    auto cost = [&](const Cell& c) {
      const auto& base = all_methods()[c.method].base;
      return base == "unbiased" ? 2.0 + double(c.eps) : base == "bins" ? 1.0 : 0.0;
    };
    return cost(cells[a]) > cost(cells[b]);
  });
  std::vector<std::unique_ptr<BaselineSlot>> baselines(all_methods().size() * eps_list.size());
  for (auto& b : baselines) b = std::make_unique<BaselineSlot>();
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= order.size()) return;
      Cell& c = cells[order[i]];
      const Method& m = all_methods()[c.method];
      const Split& s = splits[c.seed];
      try {
        const labeldp::AnyMechanism* baseline = nullptr;
        if (!labeldp::cli::is_two_stage_method(m.base)) {
          BaselineSlot& slot = *baselines[c.method * eps_list.size() + c.eps];
          std::call_once(slot.once, [&] {
            try {
              slot.mech = make_baseline_for(m, eps_list[c.eps], delta, grid);
            } catch (const std::invalid_argument& e) {
              slot.error = e.what();
            }
          });
          if (!slot.mech) throw std::invalid_argument(slot.error);
          baseline = &*slot.mech;
        }
        const auto gen = seeding.make(2 + c.method, std::uint64_t(c.eps) << 32 | c.seed, 0);
        std::vector<double> noisy =
            privatize_training(m, eps_list[c.eps], baseline, s, grid, time_limit, *gen, c.uncertified);
        const Eigen::Map<const Eigen::VectorXd> y(noisy.data(), Index(noisy.size()));
        c.noisy_mse = ridge::mse(y, s.y_train);
        c.test_mse = ridge::mse(s.cv->fit(y).predict(s.x_test), s.y_test);
        if (!std::isfinite(c.noisy_mse) || !std::isfinite(c.test_mse))
          c.error = "the MSE overflows: the labels are too large in magnitude; rescale them";
        if (c.seed == 0 && m.name == density_method && eps_list[c.eps] == density_eps) c.noisy = std::move(noisy);
      } catch (const std::invalid_argument& e) {
        c.error = e.what();
      }
      const std::size_t d = ++done;
      if (progress) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        std::cerr << "\rlabeldp compare: " << d << "/" << cells.size() << " runs" << std::flush;
      }
    }
  };
  {
    std::vector<std::thread> pool;
    const std::size_t t = std::min(threads, cells.size());
    for (std::size_t i = 1; i < t; ++i) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) std::cerr << "\n";
  for (const auto& c : cells)
    if (!c.error.empty())
      throw InputError("'--methods' " + all_methods()[c.method].name + " at eps " +
                       labeldp::detail::format_number(eps_list[c.eps]) + ": " + c.error);

  // Aggregate over seeds.
  std::vector<Row> rows;
  int uncertified = 0;
  for (std::size_t m : methods)
    for (std::size_t e = 0; e < eps_list.size(); ++e) {
      std::vector<double> a, b;
      Row r;
      r.method = all_methods()[m].name;
      r.eps = eps_list[e];
      for (const auto& c : cells)
        if (c.method == m && c.eps == e) {
          a.push_back(c.noisy_mse);
          b.push_back(c.test_mse);
          r.uncertified += c.uncertified ? 1 : 0;
        }
      std::tie(r.noisy_mse, r.noisy_sd) = mean_sd(a);
      std::tie(r.test_mse, r.test_sd) = mean_sd(b);
      uncertified += r.uncertified;
      rows.push_back(r);
    }
  std::vector<double> np, mn, var;
  for (const auto& s : splits) np.push_back(s.non_private), mn.push_back(s.mean), var.push_back(s.train_var);
  const auto [np_mean, np_sd] = mean_sd(np);
  const auto [mean_mean, mean_sd_] = mean_sd(mn);
  const auto [var_mean, var_sd] = mean_sd(var);
  const std::size_t n_test = splits.front().test.size();

  // Files first (atomic each), so that stdout reports what was written.
  std::vector<std::string> method_names;
  for (std::size_t m : methods) method_names.push_back(all_methods()[m].name);
  std::string plot_note;
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InputError(o.output_dir + ": cannot create directory: " + ec.message());
    std::ostringstream csv;
    csv << "method,eps,seeds,noisy_label_mse,noisy_label_mse_sd,test_mse,test_mse_sd\n";
    for (const auto& r : rows)
      csv << r.method << "," << num(r.eps) << "," << seeds << "," << num(r.noisy_mse) << "," << num(r.noisy_sd) << ","
          << num(r.test_mse) << "," << num(r.test_sd) << "\n";
    for (double e : eps_list) {
      csv << "non-private," << num(e) << "," << seeds << ",0,0," << num(np_mean) << "," << num(np_sd) << "\n";
      csv << "mean," << num(e) << "," << seeds << "," << num(var_mean) << "," << num(var_sd) << "," << num(mean_mean)
          << "," << num(mean_sd_) << "\n";
    }
    write_file(dir / "compare.csv", csv.str());
    const std::string gnuplot = find_gnuplot();
    if (gnuplot.empty()) {
      std::cerr << "labeldp: compare: plots not drawn (gnuplot not found): install it with 'apt-get install "
                   "gnuplot-nox' (Debian) and run again; "
                << (dir / "compare.csv").string() << " is written\n";
    } else {
      const std::string tag = ".tmp-" + std::to_string(::getpid());  // temporaries: ".NAME.tmp-PID"
      std::string script;
      std::vector<std::pair<std::string, std::string>> renames;
      const std::string subtitle = " (" + std::to_string(seeds) + " seed" + (seeds == 1 ? "" : "s") + ", " +
                                   std::to_string(n - n_test) + " training rows)";
      for (const auto& [ext, term] : {std::pair<std::string, std::string>{"png", "pngcairo size 1100,650 font ',10'"},
                                      {"svg", "svg size 1100,650 dynamic font 'sans,11'"}}) {
        for (const bool test : {true, false}) {
          const std::string name = std::string(test ? "test_mse." : "noisy_label_mse.") + ext;
          script +=
              line_plot_script(rows, method_names, test, np_mean, mean_mean, term, (dir / ("." + name + tag)).string(),
                               (test ? "Test MSE of ridge trained on noisy labels" : "Noisy-label MSE") + subtitle);
          renames.emplace_back("." + name + tag, name);
        }
        const Cell* dc = nullptr;
        for (const auto& c : cells)
          if (!c.noisy.empty()) dc = &c;
        if (dc) {
          const std::string name = std::string("density.") + ext;
          const auto& y = splits[0].y_train;
          script += density_script(
              std::vector<double>(y.data(), y.data() + y.size()), dc->noisy, grid,
              "Original vs noisy training labels: " + density_method + ", eps " + short_num(density_eps) + " (seed 1)",
              term, (dir / ("." + name + tag)).string());
          renames.emplace_back("." + name + tag, name);
        }
      }
      std::string why;
      if (!run_gnuplot(gnuplot, dir, script, renames, why)) throw InputError(o.output_dir + ": plots: " + why);
    }
  }

  std::ostringstream out;
  if (o.json) {
    out << "{\"rows\":[";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      out << (i ? "," : "") << "{\"method\":\"" << r.method << "\",\"eps\":" << num(r.eps)
          << ",\"noisy_label_mse\":" << num(r.noisy_mse) << ",\"noisy_label_mse_sd\":" << num(r.noisy_sd)
          << ",\"test_mse\":" << num(r.test_mse) << ",\"test_mse_sd\":" << num(r.test_sd)
          << ",\"uncertified_solves\":" << r.uncertified << "}";
    }
    out << "],\"non_private_test_mse\":" << num(np_mean) << ",\"mean_test_mse\":" << num(mean_mean)
        << ",\"non_private_test_mse_sd\":" << num(np_sd) << ",\"mean_test_mse_sd\":" << num(mean_sd_)
        << ",\"seeds\":" << seeds << ",\"rows_train\":" << (n - n_test) << ",\"rows_test\":" << n_test
        << ",\"lo\":" << num(grid.lo) << ",\"hi\":" << num(grid.hi) << ",\"resolution\":" << num(grid.resolution)
        << ",\"delta\":" << num(delta) << ",\"seconds\":" << num(seconds) << "}\n";
  } else {
    char line[256];
    out << "labeldp compare: " << (n - n_test) << " training rows, " << n_test << " test rows, " << seeds << " seed"
        << (seeds == 1 ? "" : "s") << "; mean +- sd over seeds; grid [" << short_num(grid.lo) << ", "
        << short_num(grid.hi) << "] step " << short_num(grid.resolution) << "\n";
    std::snprintf(line, sizeof line, "%-24s %7s %14s %12s %14s %12s\n", "method", "eps", "noisy_label_mse", "sd",
                  "test_mse", "sd");
    out << line;
    for (const auto& r : rows) {
      std::snprintf(line, sizeof line, "%-24s %7s %14.6g %12.4g %14.6g %12.4g%s\n", r.method.c_str(),
                    short_num(r.eps).c_str(), r.noisy_mse, r.noisy_sd, r.test_mse, r.test_sd,
                    r.uncertified ? "  *" : "");
      out << line;
    }
    std::snprintf(line, sizeof line, "%-24s %7s %14.6g %12.4g %14.6g %12.4g\n", "non-private", "-", 0.0, 0.0, np_mean,
                  np_sd);
    out << line;
    std::snprintf(line, sizeof line, "%-24s %7s %14.6g %12.4g %14.6g %12.4g\n", "mean", "-", var_mean, var_sd,
                  mean_mean, mean_sd_);
    out << line;
    if (uncertified)
      out << "* " << uncertified
          << " unbiased solve(s) stopped at --time-limit: eps-DP and unbiased, but not certified optimal\n";
    std::snprintf(line, sizeof line, "%.1f s on %zu thread%s\n", seconds, std::min(threads, cells.size()),
                  threads == 1 ? "" : "s");
    out << line;
    if (!dir.empty()) out << "written to " << dir.string() << "/\n";
  }
  std::cout << out.str();
  std::cout.flush();
  if (!std::cout) throw InputError("<stdout>: write error");
}

const labeldp::cli::CommandRegistration registration{labeldp::cli::Command{
    "compare",
    "the papers' evaluation on your data: noisy-label MSE and test MSE of ridge per method and eps, table, CSV, plots",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("--input", o->input, "CSV file with a header ('-': standard input)")->required();
      app.add_option("--column", o->column, "the label column")->required();
      app.add_option("--features", o->features,
                     "comma-separated feature columns: numeric ones as they are (standardized), others one-hot")
          ->required();
      app.add_option("--eps", o->eps, "comma-separated eps values, each finite and > 0")->required();
      app.add_option("--methods", o->methods,
                     "all (default) or a comma-separated list of: rr-on-bins (or bins), unbiased, rpwithprior, "
                     "rr-with-prior, rr, laplace, discrete-laplace, gaussian, discrete-gaussian, staircase, "
                     "discrete-staircase (each also as NAME-clip: noisy labels clipped to [LO, HI]), exponential");
      app.add_option("--seeds", o->seeds, "number of splits and noise draws per method and eps (default 5)");
      app.add_option("--test-fraction", o->test_fraction,
                     "fraction of rows held out for the test MSE, in (0, 1) "
                     "(default 0.2)");
      app.add_option("--lo", o->lo, "public grid: labels below are clipped to LO (default: the labels' minimum)");
      app.add_option("--hi", o->hi, "public grid: labels above are clipped to HI (default: the labels' maximum)");
      app.add_option("--resolution", o->resolution, "public grid step (default: (HI - LO)/100)");
      app.add_option("--delta", o->delta, "delta of the gaussian baselines, in (0, 1) (default 1e-5)");
      app.add_option("--time-limit", o->time_limit,
                     "seconds per unbiased solve (default 10); a solve stopped by it is eps-DP and unbiased but "
                     "not certified optimal, and its row is marked");
      app.add_option("--output-dir", o->output_dir,
                     "write compare.csv (a row per method and eps, and the non-private and mean rows repeated per "
                     "eps), test_mse.png/.svg, noisy_label_mse.png/.svg and density.png/.svg here (created if "
                     "missing; each file atomically)");
      app.add_option("--density", o->density,
                     "METHOD:EPS for the density plot of original vs noisy training labels (default: the first "
                     "method at the eps closest to 1)");
      app.add_option("--seed", o->seed,
                     "deterministic split and noise seeded with S (NOT private: for tests and experiments); default: "
                     "the operating system's entropy");
      app.add_option("--threads", o->threads, "worker threads (default: every core)");
      app.add_flag("--json", o->json, "print one JSON object instead of the table");
      app.footer(
          "Each method runs the pipeline of 'privatize --method' on the training labels: rr-on-bins, unbiased, "
          "rpwithprior and rr-with-prior spend eps1 = sqrt(k/n) (Theorem 7 of Ghazi et al. 2023, at most eps/2) on a "
          "private prior over the grid and the rest on the mechanism; rr and the additive baselines spend all of eps "
          "on the noise. Test MSE: ridge regression (penalty by 5-fold cross-validation on the noisy training "
          "labels) trained on the noisy labels, evaluated on the clean test labels. Reference rows: non-private "
          "(ridge on the clean labels) and mean (the training mean; its noisy_label_mse is the labels' variance). "
          "This is an evaluation on data you hold, not a private release.");
      app.callback([o] { run(*o); });
    }}};

}  // namespace
}  // namespace cmd_compare
