// The private prior of the Python module (Ghazi et al. 2023, Algorithm 4, as `labeldp prior`):
// labels clipped and rounded to the public grid lo, lo + r, ..., hi, counted exactly, each count
// plus independent discrete Laplace noise of scale 2/eps, negative counts set to 0, normalized.
// Split in two so a distributed job (labeldp.dask) can count per shard, add the integer counts
// exactly, and draw the noise once: histogram_counts() and private_prior_from_counts().
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "labeldp/core/json_writer.hpp"
#include "labeldp/core/keyed_random.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/io/atomic_file.hpp"
#include "labeldp/prior/discretize.hpp"
#include "labeldp/prior/private_histogram.hpp"

namespace labeldp::python {

namespace {

/// A released private prior: the noisy counts (the release) and what is computed from them.
struct PyPrivatePrior {
  PrivateHistogram<double> hist;
  std::int64_t n = 0;  // labels counted
  double lo = 0, hi = 0, resolution = 0;

  std::string csv() const {
    std::string s = "value,prob\n";
    const auto& v = hist.prior.values();
    const auto& p = hist.prior.probabilities();
    for (Index i = 0; i < v.size(); ++i) s += json_number(v[i]) + "," + json_number(p[i]) + "\n";
    return s;
  }
  std::string json() const {
    std::string s = "{\"eps\":" + json_number(hist.eps) + ",\"n\":" + std::to_string(n) +
                    ",\"values\":" + json_array(hist.prior.values()) +
                    ",\"probs\":" + json_array(hist.prior.probabilities()) + ",\"noisy_counts\":[";
    for (std::size_t i = 0; i < hist.noisy_counts.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(hist.noisy_counts[i]);
    }
    return s + "],\"uniform_fallback\":" + (hist.uniform_fallback ? "true" : "false") + "}";
  }
};

// The public grid; eps checked first (as `labeldp prior` checks every flag before the labels).
Discretizer<double> make_grid(double eps, double lo, double hi, double resolution) {
  validate_epsilon(eps, "eps");
  if (eps < kMinHistogramEpsilon)
    fail("'eps' " + detail::format_number(eps) +
         " is too small for the prior's histogram: it must be at least 2^-41 (4.5e-13); below, the noise would be "
         "wider than 2^42 counts and the prior pure noise");
  return Discretizer<double>::grid(lo, hi, resolution);
}

Discretizer<double> make_grid(double lo, double hi, double resolution) {
  return Discretizer<double>::grid(lo, hi, resolution);
}

// Counts of the labels on the grid (clipped, rounded to the nearest point, ties up), without the GIL.
// Exact grid counts of the labels (each clipped and rounded to the nearest point, exactly
// grid.index()). Chunks of 2^14 labels are checked, then counted while still in cache; grids of up
// to 2^16 points use the bucket table of finite mechanism files (NearestInputIndex: about 4x
// a binary search) and four interleaved count arrays, so that runs of equal labels do not wait on
// one another's increments.
std::vector<std::int64_t> count(const Discretizer<double>& grid, const DoubleArray& labels) {
  const std::span<const double> in(labels.data(), std::size_t(labels.size()));
  const std::size_t k = std::size_t(grid.size());
  std::vector<std::int64_t> counts(k, 0);
  std::ptrdiff_t bad = -1;
  {
    py::gil_scoped_release nogil;
    constexpr std::size_t kChunk = std::size_t(1) << 14;
    const bool table = k <= (std::size_t(1) << 16);
    const detail::NearestInputIndex nearest =
        table ? detail::NearestInputIndex(grid.support()) : detail::NearestInputIndex();
    std::vector<std::int64_t> lanes(table ? 4 * k : 0, 0);
    for (std::size_t t0 = 0; t0 < in.size() && bad < 0; t0 += kChunk) {
      const auto chunk = in.subspan(t0, std::min(kChunk, in.size() - t0));
      const std::ptrdiff_t b = first_non_finite(chunk);
      if (b >= 0) {
        bad = std::ptrdiff_t(t0) + b;
      } else if (table) {
        std::size_t t = 0;
        for (; t + 4 <= chunk.size(); t += 4)
          for (std::size_t l = 0; l < 4; ++l) ++lanes[l * k + std::size_t(nearest.find(chunk[t + l]))];
        for (; t < chunk.size(); ++t) ++lanes[std::size_t(nearest.find(chunk[t]))];
      } else {
        for (double y : chunk) ++counts[std::size_t(grid.index(y))];
      }
    }
    if (table)
      for (std::size_t i = 0; i < k; ++i) counts[i] = lanes[i] + lanes[k + i] + lanes[2 * k + i] + lanes[3 * k + i];
  }
  if (bad >= 0) fail_label(bad);
  return counts;
}

PyPrivatePrior release(const Discretizer<double>& grid, std::vector<std::int64_t> counts, double eps, double lo,
                       double hi, double resolution, const std::optional<py::bytes>& key) {
  std::int64_t n = 0;
  for (std::int64_t c : counts) n += c;
  const std::span<const std::int64_t> c(counts);
  auto hist = [&] {
    if (key) {
      // Domain 1 of the key's streams (privatize uses domain 0), stream 0: reproducible with the key.
      const KeyedRandom keyed(parse_key(*key));
      auto stream = keyed.stream(0, 1);
      return private_histogram(grid.support(), c, eps, stream);
    }
    SecureRandom gen;
    return private_histogram(grid.support(), c, eps, gen);
  }();
  return PyPrivatePrior{std::move(hist), n, lo, hi, resolution};
}

std::vector<std::int64_t> read_counts(const py::object& counts_object, Index grid_size, double lo, double hi,
                                      double resolution) {
  const py::array counts = py::array::ensure(counts_object);
  if (!counts) fail("'counts' must be an integer array (as histogram_counts returns)");
  const char kind = counts.dtype().kind();
  if (kind != 'i' && kind != 'u')
    fail("'counts' must be an integer array (as histogram_counts returns), got dtype " +
         std::string(py::str(counts.dtype())));
  if (counts.size() != grid_size)
    fail("'counts' has " + std::to_string(counts.size()) + " entries but the grid [" + detail::format_number(lo) +
         ", " + detail::format_number(hi) + "] with resolution " + detail::format_number(resolution) + " has " +
         std::to_string(grid_size) + " points");
  const auto a = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(counts);
  std::vector<std::int64_t> out(a.data(), a.data() + a.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] < 0) fail(element("counts", i) + " = " + std::to_string(out[i]) + " is negative");
  return out;
}

}  // namespace

void bind_prior(py::module_& mod) {
  py::class_<PyPrivatePrior>(mod, "PrivatePrior", R"(A private prior: Ghazi et al. (2023), Algorithm 4.

The release is `noisy_counts` (exact count + discrete Laplace noise of scale 2/eps on each point of
the public grid); `values`/`probs` are computed from it alone (negative counts set to 0,
normalized; uniform when no count is positive, see uniform_fallback), so the prior is eps-label-DP
and can feed rr_on_bins(prior.values, prior.probs, eps2) etc. (budget eps + eps2 in total).
save() writes the `value,prob` CSV that `labeldp ... --prior FILE` reads; to_json() is what
`labeldp prior --json` prints.)")
      .def_property_readonly(
          "values", [](const PyPrivatePrior& p) { return to_array(p.hist.prior.values()); },
          "The grid points (increasing).")
      .def_property_readonly(
          "probs", [](const PyPrivatePrior& p) { return to_array(p.hist.prior.probabilities()); },
          "The private probability of each grid point (sum 1).")
      .def_property_readonly(
          "noisy_counts",
          [](const PyPrivatePrior& p) {
            return py::array_t<std::int64_t>(py::ssize_t(p.hist.noisy_counts.size()), p.hist.noisy_counts.data());
          },
          "The released noisy counts (int64, before clipping at 0).")
      .def_property_readonly(
          "eps", [](const PyPrivatePrior& p) { return p.hist.eps; }, "The budget the release spent.")
      .def_property_readonly(
          "n", [](const PyPrivatePrior& p) { return p.n; },
          "The number of labels counted (not private: do not release it alongside the prior).")
      .def_property_readonly(
          "uniform_fallback", [](const PyPrivatePrior& p) { return p.hist.uniform_fallback; },
          "True when every noisy count was <= 0 and the prior is uniform over the grid.")
      .def_readonly("lo", &PyPrivatePrior::lo, "The grid's lower end (labels below are clipped to it).")
      .def_readonly("hi", &PyPrivatePrior::hi, "The grid's upper end (labels above are clipped to it).")
      .def_readonly("resolution", &PyPrivatePrior::resolution, "The grid step.")
      .def("to_json", &PyPrivatePrior::json,
           "{\"eps\",\"n\",\"values\",\"probs\",\"noisy_counts\",\"uniform_fallback\"}, as `labeldp prior --json`.")
      .def("to_csv", &PyPrivatePrior::csv, "The prior as CSV, header value,prob (17 significant digits).")
      .def(
          "save", [](const PyPrivatePrior& p, const std::string& path) { io::write_file_atomically(path, p.csv()); },
          py::arg("path"), "Writes to_csv() to `path` atomically: a prior file for `labeldp bins --prior` etc.")
      .def("__eq__",
           [](const PyPrivatePrior& a, const PyPrivatePrior& b) {
             return a.hist.noisy_counts == b.hist.noisy_counts && a.hist.eps == b.hist.eps && a.n == b.n &&
                    a.lo == b.lo && a.hi == b.hi && a.resolution == b.resolution;
           })
      .def("__repr__",
           [](const PyPrivatePrior& p) {
             return "<labeldp.PrivatePrior eps=" + json_number(p.hist.eps) + " on " +
                    std::to_string(p.hist.noisy_counts.size()) + " grid points>";
           })
      .def(py::pickle(
          [](const PyPrivatePrior& p) {
            return py::make_tuple(p.hist.eps, p.n, p.lo, p.hi, p.resolution, p.hist.noisy_counts);
          },
          [](const py::tuple& t) {
            if (t.size() != 6) fail("PrivatePrior pickle: expected 6 fields");
            const double eps = t[0].cast<double>(), lo = t[2].cast<double>(), hi = t[3].cast<double>(),
                         resolution = t[4].cast<double>();
            const auto grid = make_grid(eps, lo, hi, resolution);
            auto noisy = t[5].cast<std::vector<std::int64_t>>();
            bool uniform = false;
            auto prior = prior_from_noisy_counts(grid.support(), std::span<const std::int64_t>(noisy), &uniform);
            PyPrivatePrior p{PrivateHistogram<double>{std::move(prior), std::move(noisy), uniform, eps,
                                                      private_histogram_alpha(eps)},
                             t[1].cast<std::int64_t>(), lo, hi, resolution};
            return p;
          }));

  mod.def(
      "histogram_counts",
      [](const DoubleArray& labels, double lo, double hi, double resolution) {
        const auto grid = make_grid(lo, hi, resolution);
        const auto counts = count(grid, labels);
        return py::array_t<std::int64_t>(py::ssize_t(counts.size()), counts.data());
      },
      py::arg("labels"), py::arg("lo"), py::arg("hi"), py::arg("resolution"),
      R"(Exact counts (int64 array) of `labels` on the grid lo, lo + resolution, ..., hi: each label
clipped to [lo, hi] and rounded to the nearest point, as private_prior bins them. Not private by
itself: counts of disjoint shards add exactly, and private_prior_from_counts adds the noise once.)");
  mod.def(
      "private_prior_from_counts",
      [](const py::object& counts, double eps, double lo, double hi, double resolution,
         const std::optional<py::bytes>& key) {
        const auto grid = make_grid(eps, lo, hi, resolution);
        return release(grid, read_counts(counts, grid.size(), lo, hi, resolution), eps, lo, hi, resolution, key);
      },
      py::arg("counts"), py::arg("eps"), py::arg("lo"), py::arg("hi"), py::arg("resolution"),
      py::arg("key") = py::none(),
      R"(The private prior of exact grid counts (histogram_counts, or their sum over shards): one
discrete Laplace draw per grid point. private_prior(labels, ...) equals
private_prior_from_counts(histogram_counts(labels, ...), ...) exactly with the same key.)");
  mod.def(
      "private_prior",
      [](const DoubleArray& labels, double eps, double lo, double hi, double resolution,
         const std::optional<py::bytes>& key) {
        const auto grid = make_grid(eps, lo, hi, resolution);
        return release(grid, count(grid, labels), eps, lo, hi, resolution, key);
      },
      py::arg("labels"), py::arg("eps"), py::arg("lo"), py::arg("hi"), py::arg("resolution"),
      py::arg("key") = py::none(),
      R"(An eps-label-DP prior of `labels` on the public grid lo, lo + resolution, ..., hi (Ghazi et
al. 2023, Algorithm 4; as `labeldp prior`). Without `key` the noise comes from SecureRandom; with a
32-byte `key` it is drawn from the key's stream (id 0, domain 1; privatize uses domain 0, so
one key may serve both) and is reproducible, e.g. by a retried job. Never release two priors made
with one key: their noise would be the same, and cancel in their difference.)");
}

}  // namespace labeldp::python
