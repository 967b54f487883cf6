// labeldp._labeldp: the Python module over the labeldp headers (pybind11). The contract is the
// "Python module" section of the CLI contract: mechanism files loaded and saved as the labeldp
// program reads and writes them, constructors mirroring its commands, exact audits, and
// privatize() on NumPy arrays with the GIL released, unkeyed (SecureRandom) or keyed
// (KeyedRandom: the noise of record i a function of the key and ids[i] only).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"
#include "constructors.hpp"
#include "labeldp/core/audit.hpp"
#include "labeldp/core/keyed_random.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/io/atomic_file.hpp"
#include "labeldp/version.hpp"
#include "mechanism.hpp"

namespace labeldp::python {

void bind_prior(py::module_& m);  // prior.cpp

namespace {

// The whole file at `path` (a FIFO is read once).
std::string read_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path + ": cannot open file: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    fail(path + ": cannot open file: " + (err ? std::strerror(err) : "unknown error"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path + ": cannot read file");
  return text.str();
}

// The exact eps of a finite mechanism's stored probabilities (audit_epsilon(), an upper bound,
// capped at the file's eps, which loading proved exactly); the eps of the rebuilt parameters
// otherwise.
double audit(const PyMechanism& pm) {
  const AnyMechanism& m = pm.mechanism();
  const auto* f = m.finite();
  if (!f) return m.eps();
  const double bound = audit_epsilon(f->probabilities());
  return satisfies_epsilon(f->probabilities(), m.eps()) ? std::min(bound, m.eps()) : bound;
}

// Ids as unsigned 64-bit integers: uint64 as they are, signed integers checked >= 0 (their bits
// are the same). `keep` holds the converted array alive.
std::span<const std::uint64_t> read_ids(const py::object& ids_object, std::size_t n, py::array& keep) {
  const py::array ids = py::array::ensure(ids_object);
  if (!ids) fail("'ids' must be an integer array (int64 >= 0 or uint64), one per label");
  const char kind = ids.dtype().kind();
  if (kind != 'i' && kind != 'u')
    fail("'ids' must be an integer array (int64 >= 0 or uint64), got dtype " + std::string(py::str(ids.dtype())));
  if (std::size_t(ids.size()) != n)
    fail("'ids' has " + std::to_string(ids.size()) + " entries but 'labels' has " + std::to_string(n) +
         " (one id per label)");
  if (kind == 'u') {
    auto a = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(ids);
    keep = a;
    return {a.data(), n};
  }
  auto a = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(ids);
  keep = a;
  const std::int64_t* p = a.data();
  std::ptrdiff_t bad = -1;
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] < 0) {
        bad = std::ptrdiff_t(i);
        break;
      }
  }
  if (bad >= 0) fail(element("ids", std::size_t(bad)) + " = " + std::to_string(p[bad]) + " is negative: ids are >= 0");
  // Signed and unsigned variants of one type may alias; the values are the same for ids >= 0.
  return {reinterpret_cast<const std::uint64_t*>(p), n};
}

py::array_t<double> privatize(const PyMechanism& pm, const DoubleArray& labels, const std::optional<py::bytes>& key,
                              const py::object& ids) {
  const std::size_t n = std::size_t(labels.size());
  std::vector<py::ssize_t> shape(labels.shape(), labels.shape() + labels.ndim());
  py::array_t<double> out(shape);
  const std::span<const double> in(labels.data(), n);
  const std::span<double> noisy(out.mutable_data(), n);
  if (!key && !ids.is_none())
    fail("'ids' given without 'key': ids select the keyed noise, so both are needed (or neither)");
  if (key && ids.is_none())
    fail("'key' needs 'ids': one integer record id per label (the noise of record i depends on ids[i])");
  py::array keep;
  std::span<const std::uint64_t> id_span;
  std::optional<KeyedRandom> keyed;
  if (key) {
    keyed.emplace(parse_key(*key));
    id_span = read_ids(ids, n, keep);
  }
  const AnyMechanism& m = pm.mechanism();
  std::ptrdiff_t bad = -1;
  {
    py::gil_scoped_release nogil;
    // Chunks of kChunk labels, each checked just before it is sampled (still in cache: one pass
    // over memory, not two); a non-finite label stops the call before its chunk is sampled.
    constexpr std::size_t kChunk = std::size_t(1) << 14;
    std::optional<SecureRandom> gen;
    if (!keyed) gen.emplace();
    for (std::size_t t0 = 0; t0 < n && bad < 0; t0 += kChunk) {
      const std::size_t k = std::min(kChunk, n - t0);
      const std::ptrdiff_t b = first_non_finite(in.subspan(t0, k));
      if (b >= 0) {
        bad = std::ptrdiff_t(t0) + b;
      } else if (keyed) {
        sample_keyed(m, in.subspan(t0, k), id_span.subspan(t0, k), *keyed, noisy.subspan(t0, k));
      } else {
        m.sample(in.subspan(t0, k), noisy.subspan(t0, k), *gen);
      }
    }
  }
  if (bad >= 0) fail_label(bad);
  return out;
}

const char* kModuleDoc = R"(labeldp: optimal label-differential-privacy mechanisms for regression.

Build a mechanism from a prior (rr_on_bins, optimal, unbiased), a histogram (interval) or a public
range (baseline), or load one (load, loads); audit it exactly (m.audit()); privatize NumPy arrays
of labels (m.privatize). Mechanism files are the labeldp program's: a file saved here is read by
`labeldp privatize --mechanism FILE` and `labeldp audit`, and the other way round.

Randomness: m.privatize(labels) draws from labeldp's SecureRandom (ChaCha20 keyed from the
operating system). m.privatize(labels, key=key, ids=ids) is keyed: the noise of record i is a
function of (key, ids[i]) only, so a retried or re-partitioned job reproduces the same noisy
labels instead of releasing a second, independent noisy copy (which would double the budget).
The key is a secret: make it with secrets.token_bytes(32), keep it like a password (anyone with
it and the ids can recompute the noise), use one key per release, and never derive it from the
data.)";

}  // namespace

void bind_module(py::module_& mod) {
  mod.doc() = kModuleDoc;
  mod.attr("__version__") = LABELDP_VERSION_STRING;

  py::class_<PyMechanism> mech(mod, "Mechanism", R"(A label-DP mechanism, as a labeldp mechanism file.

Made by the constructors (rr_on_bins, optimal, unbiased, interval, baseline) or by load/loads;
never constructed directly. Picklable (as its JSON text), so it ships to Dask or Spark workers.)");
  mech.def_property_readonly(
          "kind", [](const PyMechanism& m) { return m.mechanism().kind(); },
          "The mechanism's name in files: 'rr-on-bins', 'optimal-lp', 'unbiased', 'rpwithprior', 'laplace', ...")
      .def_property_readonly(
          "eps", [](const PyMechanism& m) { return m.mechanism().eps(); },
          "The privacy budget eps each privatized label costs.")
      .def_property_readonly(
          "delta", [](const PyMechanism& m) { return m.mechanism().delta(); },
          "delta of an (eps, delta) guarantee: 0 except for the Gaussian baselines.")
      .def_property_readonly(
          "expected_loss", [](const PyMechanism& m) { return m.expected_loss(); },
          "The expected noisy-label loss under the prior it was built for (the file's 'expected_loss'), or None "
          "where the file defines none.")
      .def_property_readonly(
          "is_finite", [](const PyMechanism& m) { return m.mechanism().finite() != nullptr; },
          "True for a finite mechanism (inputs, outputs and a probability table).")
      .def_property_readonly(
          "inputs",
          [](const PyMechanism& m) -> std::optional<py::array_t<double>> {
            if (const auto* f = m.mechanism().finite()) return to_array(f->inputs());
            return std::nullopt;
          },
          "A finite mechanism's inputs (increasing; labels are clipped and rounded to them), else None.")
      .def_property_readonly(
          "outputs",
          [](const PyMechanism& m) -> std::optional<py::array_t<double>> {
            if (const auto* f = m.mechanism().finite()) return to_array(f->outputs());
            return std::nullopt;
          },
          "A finite mechanism's outputs (increasing), else None.")
      .def_property_readonly(
          "probabilities",
          [](const PyMechanism& m) -> std::optional<py::array_t<double>> {
            const auto* f = m.mechanism().finite();
            if (!f) return std::nullopt;
            const auto& P = f->probabilities();
            py::array_t<double> a({py::ssize_t(P.rows()), py::ssize_t(P.cols())});
            for (Index i = 0; i < P.rows(); ++i)
              for (Index j = 0; j < P.cols(); ++j) a.mutable_at(i, j) = P(i, j);
            return a;
          },
          "A finite mechanism's table P[i, j] = Pr[output j | input i] (rows sum to 1), else None.")
      .def("to_json", &PyMechanism::text, "The mechanism file: one JSON object (what `labeldp ... --json` prints).")
      .def(
          "save",
          [](const PyMechanism& m, const std::string& path) { io::write_file_atomically(path, m.text() + "\n"); },
          py::arg("path"),
          "Writes the mechanism file to `path` atomically (a temporary file renamed over it), readable by "
          "labeldp.load and `labeldp privatize --mechanism`.")
      .def("audit", &audit,
           "The exact privacy level: for a finite mechanism, max over outputs o and inputs y, y' of "
           "ln(P[y->o] / P[y'->o]) of its stored table (checked exactly against eps when loaded); for the others, "
           "the eps their rebuilt parameters prove.")
      .def("privatize", &privatize, py::arg("labels"), py::arg("key") = py::none(), py::arg("ids") = py::none(),
           R"(Noisy labels for `labels` (any numeric array; a new float64 array of the same shape).

Each label is mapped to the mechanism's inputs as the file states (clipped and rounded to its
support, or its range for additive noise), then randomized once. Vectorized C++ with the GIL
released. Without `key`: a fresh SecureRandom (operating-system keyed ChaCha20) per call. With
`key` (32 secret bytes) and `ids` (integer array, one id >= 0 per label, unique per record): the
noise of label i is a function of (key, ids[i]) only, so any re-run, retry or re-partitioning
gives exactly the same output.
Raises ValueError naming the argument for a non-finite label (by index, never its value), a key
that is not 32 bytes, ids of the wrong type, sign or length.)")
      .def("__repr__",
           [](const PyMechanism& m) {
             return "<labeldp.Mechanism " + m.mechanism().kind() + " eps=" + json_number(m.mechanism().eps()) + ">";
           })
      .def(py::pickle([](const PyMechanism& m) { return py::make_tuple(m.text()); },
                      [](const py::tuple& t) {
                        if (t.size() != 1) fail("Mechanism pickle: expected one field (the JSON text)");
                        return PyMechanism::from_text(t[0].cast<std::string>(), "<pickle>");
                      }));

  mod.def(
      "loads", [](const std::string& text) { return PyMechanism::from_text(text, "<string>"); }, py::arg("text"),
      "A mechanism from a mechanism file's text, revalidated as `labeldp privatize --mechanism` does (fields, "
      "version, eps-DP exactly). Raises ValueError naming the line, field and rule.");
  mod.def(
      "load", [](const std::string& path) { return PyMechanism::from_text(read_text(path), path); }, py::arg("path"),
      "A mechanism from a mechanism file (as written by the labeldp program or Mechanism.save). Raises ValueError "
      "naming the file, line, field and rule.");

  mod.def(
      "rr_on_bins",
      [](const std::vector<double>& values, const std::vector<double>& probs, double eps, const std::string& loss) {
        std::string text;
        {
          py::gil_scoped_release nogil;
          text = rr_on_bins_json(values, probs, eps, loss);
        }
        return PyMechanism::from_text(text, "rr_on_bins");
      },
      py::arg("values"), py::arg("probs"), py::arg("eps"), py::arg("loss") = "squared",
      "The optimal RR-on-Bins mechanism for the prior (values, probs) (Ghazi et al. 2023, Algorithms 1-2; exact), "
      "as `labeldp bins`. probs: >= 0, summing to 1 within 1e-9; loss: 'squared', 'absolute' or 'poisson'.");
  mod.def(
      "optimal",
      [](const std::vector<double>& values, const std::vector<double>& probs, double eps,
         const std::vector<double>& outputs, const std::string& loss, std::optional<double> time_limit) {
        std::string text, warning;
        {
          py::gil_scoped_release nogil;
          text = optimal_json(values, probs, eps, outputs, loss, time_limit, &warning);
        }
        if (!warning.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0)
          throw py::error_already_set();
        return PyMechanism::from_text(text, "optimal");
      },
      py::arg("values"), py::arg("probs"), py::arg("eps"), py::arg("outputs"), py::arg("loss") = "squared",
      py::arg("time_limit") = py::none(),
      "The eps-DP mechanism with the least expected loss among all eps-DP mechanisms from the prior's values to "
      "`outputs` (Ghazi et al. 2023, LP (2); column generation), as `labeldp optimal`. A time limit reached after a "
      "feasible mechanism was found returns it with a RuntimeWarning and its certified gap in the file.");
  mod.def(
      "unbiased",
      [](const std::vector<double>& values, const std::vector<double>& probs, double eps, std::optional<long long> grid,
         bool continuous, std::optional<double> max_bias, std::optional<double> time_limit) {
        std::string text, warning;
        {
          py::gil_scoped_release nogil;
          text = unbiased_json(values, probs, eps, grid, continuous, max_bias, time_limit, &warning);
        }
        if (!warning.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0)
          throw py::error_already_set();
        return PyMechanism::from_text(text, "unbiased");
      },
      py::arg("values"), py::arg("probs"), py::arg("eps"), py::arg("grid") = py::none(), py::arg("continuous") = false,
      py::arg("max_bias") = py::none(), py::arg("time_limit") = py::none(),
      "The optimal unbiased randomizer for squared loss (Badanidiyuru et al. 2023, Algorithms 1-2), as `labeldp "
      "unbiased`: outputs on the `grid`-point FeasibleOutputSet grid, or anywhere with continuous=True (exactly one). "
      "max_bias=B >= 0: the bias-bounded variant, |E[M(y)] - y| <= B.");
  mod.def(
      "interval",
      [](const std::vector<double>& lo, const std::vector<double>& hi, const std::vector<double>& mass, double eps,
         double zeta, std::optional<double> granularity) {
        std::string text;
        {
          py::gil_scoped_release nogil;
          text = interval_json(lo, hi, mass, eps, zeta, granularity);
        }
        return PyMechanism::from_text(text, "interval");
      },
      py::arg("lo"), py::arg("hi"), py::arg("mass"), py::arg("eps"), py::arg("zeta"),
      py::arg("granularity") = py::none(),
      "RPWithPrior on its optimal interval [A1, A2] for the histogram prior with cells [lo[i], hi[i]) of mass "
      "mass[i] (sorted, contiguous; masses normalized), as `labeldp interval`. zeta > 0: the interval's margin.");
  mod.def(
      "baseline",
      [](const std::string& kind, double eps, double lo, double hi, double delta, std::optional<double> resolution,
         bool clip, std::optional<std::vector<double>> values, std::optional<std::vector<double>> probs) {
        std::string text;
        {
          py::gil_scoped_release nogil;
          text = baseline_json(kind, eps, lo, hi, delta, resolution, clip, values, probs);
        }
        return PyMechanism::from_text(text, "baseline");
      },
      py::arg("kind"), py::arg("eps"), py::arg("lo"), py::arg("hi"), py::arg("delta") = 0.0,
      py::arg("resolution") = py::none(), py::kw_only(), py::arg("clip") = false, py::arg("values") = py::none(),
      py::arg("probs") = py::none(),
      "An additive or randomized-response baseline on the public range [lo, hi], as `labeldp baseline`: kind "
      "'laplace', 'discrete-laplace' (needs resolution), 'gaussian' (needs 0 < delta < 1), 'discrete-gaussian' (delta "
      "and resolution), 'staircase', 'discrete-staircase' (resolution), 'exponential', 'rr' or 'rr-with-prior' (need "
      "the prior as values=, probs=; with another kind the prior gives expected_loss). clip=True clips outputs to "
      "[lo, hi].");

  bind_prior(mod);
}

}  // namespace labeldp::python

PYBIND11_MODULE(_labeldp, mod) { labeldp::python::bind_module(mod); }
