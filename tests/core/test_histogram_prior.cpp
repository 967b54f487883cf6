// Tests of labeldp/core/histogram_prior.hpp: construction, CDF / mass against direct sums,
// the histogram file of the CLI contract (`--hist`, io::read_histogram_csv), and one test per rejected value.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <labeldp/core/histogram_prior.hpp>
#include <labeldp/io/csv.hpp>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using labeldp::HistogramPrior;
using labeldp::Index;

namespace {
HistogramPrior<> parse(const std::string& text) {
  std::istringstream in(text);
  return labeldp::io::read_histogram_csv(in, "hist.csv");
}
}  // namespace

TEST_CASE("HistogramPrior: masses, densities and prefix sums", "[histogram_prior]") {
  const auto h = HistogramPrior<>::from_masses({0, 1, 3, 3.5}, {2, 6, 2});
  REQUIRE(h.num_cells() == 3);
  CHECK(h.masses()[0] == Approx(0.2));
  CHECK(h.masses()[1] == Approx(0.6));
  CHECK(h.densities()[1] == Approx(0.3));
  CHECK(h.densities()[2] == Approx(0.4));
  CHECK(h.cumulative()[3] == Approx(1.0));
  CHECK(h.lower() == 0);
  CHECK(h.upper() == 3.5);
  CHECK(h.density(-1) == 0);
  CHECK(h.density(3.5) == Approx(0.4));  // last cell closed
  CHECK(h.density(3.6) == 0);
  CHECK(h.cell_of(1.0) == 1);
  CHECK(h.cell_of(0.999) == 0);
}

TEST_CASE("HistogramPrior: cdf and mass_between equal direct integration", "[histogram_prior]") {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> edges{-3 + unit(rng)}, masses;
    const int m = 1 + int(unit(rng) * 20);
    for (int i = 0; i < m; ++i) {
      edges.push_back(edges.back() + 0.1 + unit(rng));
      masses.push_back(unit(rng) < 0.2 ? 0.0 : unit(rng));
    }
    masses[0] += 0.01;
    const auto h = HistogramPrior<>::from_masses(edges, masses);
    for (int s = 0; s < 20; ++s) {
      const double a = edges.front() - 1 + (edges.back() - edges.front() + 2) * unit(rng);
      const double b = a + unit(rng) * 3;
      // Midpoint sums of the (piecewise constant) density, fine enough to be exact to 1e-9.
      double direct = 0;
      const int N = 20000;
      for (int k = 0; k < N; ++k) direct += h.density(a + (b - a) * (k + 0.5) / N) * (b - a) / N;
      INFO("trial " << trial << " a " << a << " b " << b);
      CHECK(h.mass_between(a, b) == Approx(direct).margin(2 * h.densities().maxCoeff() * (b - a) / N + 1e-12));
      CHECK(h.cdf(b) - h.cdf(a) == Approx(h.mass_between(a, b)).margin(1e-15));
    }
    CHECK(h.cdf(edges.back()) == 1);
    CHECK(h.cdf(edges.front()) == 0);
  }
}

TEST_CASE("HistogramPrior: from_cells and from_labels", "[histogram_prior]") {
  const auto a = HistogramPrior<>::from_cells({0, 1, 2}, {1, 2, 4}, {1, 1, 2});
  CHECK(a.edges().size() == 4);
  CHECK(a.edges()[3] == 4);
  CHECK(a.masses()[2] == Approx(0.5));
  // Labels outside the edges are clipped into the end cells.
  const auto b = HistogramPrior<>::from_labels({-10, 0.5, 1.5, 1.7, 2.0, 99}, {0, 1, 2});
  CHECK(b.masses()[0] == Approx(2.0 / 6));
  CHECK(b.masses()[1] == Approx(4.0 / 6));
}

TEST_CASE("read_histogram_csv: the contract's format", "[histogram_prior][csv]") {
  const auto h = parse("lo,hi,mass\n0,1,2\n1,2.5,6\r\n2.5,3,2\n\n");
  REQUIRE(h.num_cells() == 3);
  CHECK(h.edges()[2] == 2.5);
  CHECK(h.masses()[1] == Approx(0.6));  // normalized
  const auto g = parse(" lo , hi , mass \n-1e-3,+2E1,0.5\n");
  CHECK(g.lower() == -1e-3);
  CHECK(g.upper() == 20);
}

TEST_CASE("read_histogram_csv: reads a file", "[histogram_prior][csv]") {
  const std::string path = "test_histogram_prior_tmp.csv";
  {
    std::ofstream out(path);
    out << "lo,hi,mass\n0,1,1\n1,2,3\n";
  }
  const auto h = labeldp::io::read_histogram_csv(path);
  std::remove(path.c_str());
  CHECK(h.masses()[1] == Approx(0.75));
}

TEST_CASE("read_histogram_csv reads what every CSV file may hold: BOM, CRLF, quoted fields, blanks",
          "[histogram_prior][csv]") {
  const auto h = parse("\xEF\xBB\xBFlo,hi,mass\r\n\"0\", 1 ,\"1\"\r\n1,\"2\",3\r\n\r\n");
  REQUIRE(h.num_cells() == 2);
  CHECK(h.edges()[2] == 2);
  CHECK(h.masses()[1] == Approx(0.75));
  // The same reader as the prior file: a blank line inside the data is an error, as there.
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,1\n\n1,2,1\n"), Catch::Contains("hist.csv:3: blank line inside the data"));
}

// --- bad input: one test per rejected value -------------------------------------------------

TEST_CASE("read_histogram_csv rejects a missing file", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(labeldp::io::read_histogram_csv("/nonexistent/h.csv"), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::io::read_histogram_csv("/nonexistent/h.csv"),
                      Catch::Contains("/nonexistent/h.csv: cannot open file"));
}
TEST_CASE("read_histogram_csv rejects a wrong header", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("value,prob\n0,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("value,prob\n0,1\n"),
                      Catch::Contains("hist.csv:1: header must be 'lo,hi,mass', got 'value,prob'"));
}
TEST_CASE("read_histogram_csv rejects an empty file", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse(""), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse(""), Catch::Contains("hist.csv: empty histogram file"));
}
TEST_CASE("read_histogram_csv rejects a header without rows", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n"), Catch::Contains("hist.csv: no histogram rows"));
}
TEST_CASE("read_histogram_csv rejects a row with 2 fields", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1,1\n1,2\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,1\n1,2\n"),
                      Catch::Contains("hist.csv:3: expected 3 fields (lo,hi,mass), got 2: '1,2'"));
}
TEST_CASE("read_histogram_csv rejects a non-numeric value", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1,abc\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,abc\n"), Catch::Contains("hist.csv:2: mass 'abc' is not a number"));
}
TEST_CASE("read_histogram_csv rejects a trailing garbage number", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1x,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1x,1\n"), Catch::Contains("hist.csv:2: hi '1x' is not a number"));
}
TEST_CASE("read_histogram_csv rejects an empty field", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n,1,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n,1,1\n"), Catch::Contains("hist.csv:2: lo '' is not a number"));
}
TEST_CASE("read_histogram_csv rejects a negative mass", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1,1\n1,2,-0.1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,1\n1,2,-0.1\n"),
                      Catch::Contains("hist.csv:3: mass -0.10000000000000001 is negative"));
}
TEST_CASE("read_histogram_csv rejects an infinite mass", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1,inf\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,inf\n"), Catch::Contains("hist.csv:2: mass inf is not finite"));
}
TEST_CASE("read_histogram_csv rejects a NaN mass", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1,nan\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,nan\n"), Catch::Contains("hist.csv:2: mass nan is not finite"));
}
TEST_CASE("read_histogram_csv rejects an overflowing value", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1e999,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1e999,1\n"), Catch::Contains("hist.csv:2: hi 1e999 is not finite"));
}
TEST_CASE("read_histogram_csv rejects lo == hi", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n1,1,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n1,1,1\n"), Catch::Contains("hist.csv:2: lo 1 is not less than hi 1"));
}
TEST_CASE("read_histogram_csv rejects lo > hi", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n2,1,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n2,1,1\n"), Catch::Contains("hist.csv:2: lo 2 is not less than hi 1"));
}
TEST_CASE("read_histogram_csv rejects overlapping rows", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,2,1\n1,3,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,2,1\n1,3,1\n"),
                      Catch::Contains("hist.csv:3: lo 1 overlaps the previous row's hi 2"));
}
TEST_CASE("read_histogram_csv rejects unsorted rows", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n1,2,1\n0,1,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n1,2,1\n0,1,1\n"),
                      Catch::Contains("hist.csv:3: lo 0 overlaps the previous row's hi 2"));
}
TEST_CASE("read_histogram_csv rejects a gap between rows", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1,1\n1.5,2,1\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,1\n1.5,2,1\n"),
                      Catch::Contains("hist.csv:3: lo 1.5 leaves a gap after the previous row's hi 1"));
}
TEST_CASE("read_histogram_csv rejects all-zero masses", "[histogram_prior][csv][validation]") {
  REQUIRE_THROWS_AS(parse("lo,hi,mass\n0,1,0\n1,2,0\n"), std::invalid_argument);
  REQUIRE_THROWS_WITH(parse("lo,hi,mass\n0,1,0\n1,2,0\n"), Catch::Contains("hist.csv:2-3: masses are all 0"));
}
TEST_CASE("from_masses rejects a negative mass", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, 1, 2}, {1, -1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_masses({0, 1, 2}, {1, -1}),
                      Catch::Contains("'mass' must be finite and non-negative, got -1 (cell 1)"));
}
TEST_CASE("from_masses rejects a NaN mass", "[histogram_prior][validation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, 1}, {nan}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_masses({0, 1}, {nan}),
                      Catch::Contains("'mass' must be finite and non-negative, got nan (cell 0)"));
}
TEST_CASE("from_masses rejects an infinite mass", "[histogram_prior][validation]") {
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, 1}, {inf}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_masses({0, 1}, {inf}),
                      Catch::Contains("'mass' must be finite and non-negative, got inf (cell 0)"));
}
TEST_CASE("from_masses rejects all-zero masses", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, 1, 2}, {0, 0}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_masses({0, 1, 2}, {0, 0}), Catch::Contains("'mass' must not be all 0"));
}
TEST_CASE("from_masses rejects equal edges (lo >= hi)", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, 1, 1}, {1, 1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(
      HistogramPrior<>::from_masses({0, 1, 1}, {1, 1}),
      Catch::Contains(
          "'edges' must be strictly increasing (each lo < hi, cells sorted, not overlapping), got 1 (edge 2 after 1)"));
}
TEST_CASE("from_masses rejects decreasing edges", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, 2, 1}, {1, 1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(
      HistogramPrior<>::from_masses({0, 2, 1}, {1, 1}),
      Catch::Contains(
          "'edges' must be strictly increasing (each lo < hi, cells sorted, not overlapping), got 1 (edge 2 after 2)"));
}
TEST_CASE("from_masses rejects an infinite edge", "[histogram_prior][validation]") {
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, inf}, {1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_masses({0, inf}, {1}),
                      Catch::Contains("'edges' must be finite, got inf (edge 1)"));
}
TEST_CASE("from_masses rejects a single edge", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0}, {}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_masses({0}, {}),
                      Catch::Contains("'edges' must hold at least 2 values (one cell), got 1"));
}
TEST_CASE("from_masses rejects a size mismatch", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_masses({0, 1, 2}, {1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_masses({0, 1, 2}, {1}),
                      Catch::Contains("'mass' must hold one value per cell: 2 cells, got 1 masses"));
}
TEST_CASE("from_cells rejects lo >= hi", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_cells({0, 1}, {1, 1}, {1, 1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_cells({0, 1}, {1, 1}, {1, 1}),
                      Catch::Contains("'lo' must be less than 'hi' = 1, got 1 (cell 1)"));
}
TEST_CASE("from_cells rejects overlapping cells", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_cells({0, 0.5}, {1, 2}, {1, 1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(
      HistogramPrior<>::from_cells({0, 0.5}, {1, 2}, {1, 1}),
      Catch::Contains("'lo' must equal the previous cell's 'hi' = 1 (cells sorted and contiguous), got 0.5 (cell 1)"));
}
TEST_CASE("from_cells rejects a negative mass", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_cells({0}, {1}, {-2}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_cells({0}, {1}, {-2}),
                      Catch::Contains("'mass' must be finite and non-negative, got -2 (cell 0)"));
}
TEST_CASE("from_labels rejects a NaN label", "[histogram_prior][validation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_AS(HistogramPrior<>::from_labels({0.5, nan}, {0, 1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_labels({0.5, nan}, {0, 1}),
                      Catch::Contains("'label' must not be NaN, got nan"));
}
TEST_CASE("from_labels rejects no labels", "[histogram_prior][validation]") {
  REQUIRE_THROWS_AS(HistogramPrior<>::from_labels({}, {0, 1}), std::invalid_argument);
  REQUIRE_THROWS_WITH(HistogramPrior<>::from_labels({}, {0, 1}),
                      Catch::Contains("'labels' must not be empty, got 0 labels"));
}
