/// \file
/// A histogram prior: a piecewise-constant density on contiguous cells (the prior \f$f_Y\f$ of
/// RPWithPrior, Lemma 3.5 of the RPWithPrior ICLR submission: nodes \f$n_0 < \dots < n_m\f$,
/// density \f$\alpha_i\f$ on \f$[n_i, n_{i+1})\f$).
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

namespace detail {

/// Message "'name' rule, got value (where)" in the shape of fail_parameter(), with a location.
[[noreturn]] inline void fail_parameter_at(std::string_view name, std::string_view rule, double value,
                                           const std::string& where) {
  throw std::invalid_argument("'" + std::string(name) + "' " + std::string(rule) + ", got " + format_number(value) +
                              " (" + where + ")");
}

}  // namespace detail

/// A prior given by a histogram: \f$m\f$ contiguous cells \f$[n_i, n_{i+1})\f$ (the last one
/// closed) with masses \f$w_i \ge 0\f$ summing to 1 and density \f$\alpha_i = w_i/(n_{i+1}-n_i)\f$
/// on cell i, 0 outside \f$[n_0, n_m]\f$ (RPWithPrior, Lemma 3.5).
///
/// Construction validates everything (strictly increasing finite edges, finite non-negative
/// masses, not all 0) and normalizes the masses. Prefix sums of the masses are stored so that
/// the mass of any interval costs O(log m) (O(1) when the cells are known).
///
/// \tparam Scalar floating-point type.
///
/// \code{.cpp}
/// auto prior = labeldp::HistogramPrior<>::from_masses({0.0, 1.0, 3.0}, {30, 70});
/// double f = prior.density(2.0);          // 0.7 / 2 = 0.35
/// double w = prior.mass_between(0.5, 2);  // 0.15 + 0.35 = 0.5
/// \endcode
template <typename Scalar = double>
class HistogramPrior {
 public:
  /// Builds a histogram from m+1 edges and m non-negative masses (probabilities or counts,
  /// normalized here).
  /// \throws std::invalid_argument naming 'edges' or 'mass' and the offending value when there
  ///         are fewer than 2 edges, the sizes disagree, an edge is not finite, the edges are not
  ///         strictly increasing, a mass is negative / NaN / infinite, or all masses are 0.
  static HistogramPrior from_masses(const std::vector<Scalar>& edges, const std::vector<Scalar>& masses) {
    if (edges.size() < 2)
      throw std::invalid_argument("'edges' must hold at least 2 values (one cell), got " +
                                  std::to_string(edges.size()));
    if (masses.size() + 1 != edges.size())
      throw std::invalid_argument("'mass' must hold one value per cell: " + std::to_string(edges.size() - 1) +
                                  " cells, got " + std::to_string(masses.size()) + " masses");
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if (!std::isfinite(edges[i]))
        detail::fail_parameter_at("edges", "must be finite", double(edges[i]), "edge " + std::to_string(i));
      if (i > 0 && !(edges[i] > edges[i - 1]))
        detail::fail_parameter_at(
            "edges", "must be strictly increasing (each lo < hi, cells sorted, not overlapping)", double(edges[i]),
            "edge " + std::to_string(i) + " after " + detail::format_number(double(edges[i - 1])));
    }
    for (std::size_t i = 0; i < masses.size(); ++i)
      if (!std::isfinite(masses[i]) || masses[i] < 0)
        detail::fail_parameter_at("mass", "must be finite and non-negative", double(masses[i]),
                                  "cell " + std::to_string(i));
    HistogramPrior h;
    const Index m = Index(masses.size());
    h.m_edges = Eigen::Map<const Vector<Scalar>>(edges.data(), Index(edges.size()));
    h.m_masses = Eigen::Map<const Vector<Scalar>>(masses.data(), m);
    const Scalar total = h.m_masses.sum();
    if (!(total > 0))
      throw std::invalid_argument("'mass' must not be all 0: at least one cell needs positive mass, got total 0");
    if (!std::isfinite(total)) detail::fail_parameter("mass", "must have a finite sum", double(total));
    h.m_masses /= total;
    h.finish();
    return h;
  }

  /// Builds a histogram from cells given as (lo, hi, mass) triples, as in the CLI contract's
  /// `--hist` file: sorted, contiguous (each lo equals the previous hi), lo < hi.
  /// \throws std::invalid_argument naming 'lo', 'hi' or 'mass' and the cell when a rule fails.
  static HistogramPrior from_cells(const std::vector<Scalar>& lo, const std::vector<Scalar>& hi,
                                   const std::vector<Scalar>& mass) {
    if (lo.empty()) throw std::invalid_argument("'lo' must hold at least one cell, got 0 cells");
    if (lo.size() != hi.size() || lo.size() != mass.size())
      throw std::invalid_argument("'lo', 'hi' and 'mass' must have equal sizes, got " + std::to_string(lo.size()) +
                                  ", " + std::to_string(hi.size()) + ", " + std::to_string(mass.size()));
    std::vector<Scalar> edges{lo[0]};
    for (std::size_t i = 0; i < lo.size(); ++i) {
      const std::string cell = "cell " + std::to_string(i);
      if (!std::isfinite(lo[i])) detail::fail_parameter_at("lo", "must be finite", double(lo[i]), cell);
      if (!std::isfinite(hi[i])) detail::fail_parameter_at("hi", "must be finite", double(hi[i]), cell);
      if (!(lo[i] < hi[i]))
        detail::fail_parameter_at("lo", "must be less than 'hi' = " + detail::format_number(double(hi[i])),
                                  double(lo[i]), cell);
      if (i > 0 && lo[i] != hi[i - 1])
        detail::fail_parameter_at("lo",
                                  "must equal the previous cell's 'hi' = " + detail::format_number(double(hi[i - 1])) +
                                      " (cells sorted and contiguous)",
                                  double(lo[i]), cell);
      edges.push_back(hi[i]);
    }
    return from_masses(edges, mass);
  }

  /// The (non-private) empirical histogram of `labels` on public `edges`. Labels outside
  /// \f$[n_0, n_m]\f$ are clipped into the end cells (as Hist_eps clips its noisy labels).
  /// \throws std::invalid_argument when `labels` is empty, a label is NaN, or `edges` is invalid.
  static HistogramPrior from_labels(const std::vector<Scalar>& labels, const std::vector<Scalar>& edges) {
    if (labels.empty()) throw std::invalid_argument("'labels' must not be empty, got 0 labels");
    std::vector<Scalar> counts(edges.size() > 0 ? edges.size() - 1 : 0, Scalar(0));
    // Validate the edges first (with zero counts the mass check would fire instead).
    if (edges.size() >= 2) {
      std::vector<Scalar> ones(edges.size() - 1, Scalar(1));
      (void)from_masses(edges, ones);
    } else {
      (void)from_masses(edges, counts);
    }
    for (Scalar y : labels) {
      if (std::isnan(y)) detail::fail_parameter("label", "must not be NaN", double(y));
      counts[std::size_t(bin_index(edges, y))] += 1;
    }
    return from_masses(edges, counts);
  }

  /// Number of cells m.
  Index num_cells() const { return m_masses.size(); }
  /// Nodes \f$n_0 < \dots < n_m\f$ (m+1 values).
  const Vector<Scalar>& edges() const { return m_edges; }
  /// Normalized cell masses \f$w_0..w_{m-1}\f$ (sum 1).
  const Vector<Scalar>& masses() const { return m_masses; }
  /// Cell densities \f$\alpha_i = w_i / (n_{i+1} - n_i)\f$.
  const Vector<Scalar>& densities() const { return m_densities; }
  /// Prefix sums \f$P_i = \sum_{l<i} w_l\f$, i = 0..m (\f$P_0 = 0\f$, \f$P_m = 1\f$ up to rounding).
  const Vector<Scalar>& cumulative() const { return m_cumulative; }
  /// \f$n_0\f$.
  Scalar lower() const { return m_edges[0]; }
  /// \f$n_m\f$.
  Scalar upper() const { return m_edges[m_edges.size() - 1]; }

  /// Index of the cell containing x (cells half-open, the last closed); x outside
  /// \f$[n_0, n_m]\f$ is clipped to the end cells.
  Index cell_of(Scalar x) const {
    const Scalar* first = m_edges.data();
    const Index m = num_cells();
    const Index i = Index(std::upper_bound(first, first + m_edges.size(), x) - first) - 1;
    return std::clamp<Index>(i, 0, m - 1);
  }

  /// Density \f$f_Y(x)\f$ (0 outside \f$[n_0, n_m]\f$).
  Scalar density(Scalar x) const {
    if (!(x >= lower() && x <= upper())) return Scalar(0);
    return m_densities[cell_of(x)];
  }

  /// \f$\Pr[Y \le x] = \int_{-\infty}^x f_Y\f$.
  Scalar cdf(Scalar x) const {
    if (!(x > lower())) return Scalar(0);
    if (x >= upper()) return Scalar(1);
    const Index i = cell_of(x);
    return m_cumulative[i] + m_densities[i] * (x - m_edges[i]);
  }

  /// \f$\int_a^b f_Y\f$ for a <= b (0 when a >= b).
  Scalar mass_between(Scalar a, Scalar b) const {
    if (!(b > a)) return Scalar(0);
    return std::max(Scalar(0), cdf(b) - cdf(a));
  }

 private:
  HistogramPrior() = default;

  static Index bin_index(const std::vector<Scalar>& edges, Scalar y) {
    const Index m = Index(edges.size()) - 1;
    const Index i = Index(std::upper_bound(edges.begin(), edges.end(), y) - edges.begin()) - 1;
    return std::clamp<Index>(i, 0, m - 1);
  }

  void finish() {
    const Index m = m_masses.size();
    m_densities.resize(m);
    m_cumulative.resize(m + 1);
    m_cumulative[0] = 0;
    for (Index i = 0; i < m; ++i) {
      m_densities[i] = m_masses[i] / (m_edges[i + 1] - m_edges[i]);
      m_cumulative[i + 1] = m_cumulative[i] + m_masses[i];
    }
  }

  Vector<Scalar> m_edges;
  Vector<Scalar> m_masses;
  Vector<Scalar> m_densities;
  Vector<Scalar> m_cumulative;
};

}  // namespace labeldp
