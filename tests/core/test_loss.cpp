#include <catch2/catch.hpp>
#include <labeldp/core/loss.hpp>
#include <random>
#include <vector>

namespace {
// Brute-force minimizer of sum_i w_i loss(o, y_i) over a fine grid plus the values themselves.
template <typename Loss>
double brute_min_value(const Loss& loss, const std::vector<double>& y, const std::vector<double>& w) {
  auto objective = [&](double o) {
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += w[i] * loss(o, y[i]);
    return s;
  };
  double best = std::numeric_limits<double>::infinity();
  const double lo = y.front(), hi = y.back();
  for (int g = 0; g <= 20000; ++g) best = std::min(best, objective(lo + (hi - lo) * g / 20000.0));
  for (double v : y) best = std::min(best, objective(v));
  return best;
}

template <typename Loss>
void check_minimizer(const Loss& loss, bool positive_labels) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> val(positive_labels ? 0.0 : -5.0, 5.0), wt(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> y(1 + gen() % 8), w(y.size());
    for (auto& v : y) v = val(gen);
    std::sort(y.begin(), y.end());
    for (auto& x : w) x = wt(gen);
    const double o = loss.minimize(std::span<const double>(y), std::span<const double>(w));
    double at_o = 0;
    for (std::size_t i = 0; i < y.size(); ++i) at_o += w[i] * loss(o, y[i]);
    INFO(loss.name() << " trial " << trial);
    CHECK(at_o <= brute_min_value(loss, y, w) + 1e-9);
  }
}
}  // namespace

TEST_CASE("Losses: values", "[loss]") {
  CHECK(labeldp::SquaredLoss<>{}(3.0, 1.0) == 4.0);
  CHECK(labeldp::AbsoluteLoss<>{}(-1.0, 2.0) == 3.0);
  CHECK(labeldp::PoissonLogLoss<>{}(2.0, 3.0) == Approx(2.0 - 3.0 * std::log(2.0)));
  CHECK(labeldp::PoissonLogLoss<>{}(2.0, 0.0) == 2.0);
  CHECK(std::isinf(labeldp::PoissonLogLoss<>{}(0.0, 1.0)));
}

TEST_CASE("Losses: minimize() attains the brute-force minimum", "[loss]") {
  check_minimizer(labeldp::SquaredLoss<>{}, false);
  check_minimizer(labeldp::AbsoluteLoss<>{}, false);
  check_minimizer(labeldp::PoissonLogLoss<>{}, true);
}

TEST_CASE("Losses satisfy the NoisyLabelLoss concept", "[loss]") {
  STATIC_REQUIRE(labeldp::NoisyLabelLoss<labeldp::SquaredLoss<>>);
  STATIC_REQUIRE(labeldp::NoisyLabelLoss<labeldp::AbsoluteLoss<>>);
  STATIC_REQUIRE(labeldp::NoisyLabelLoss<labeldp::PoissonLogLoss<>>);
  STATIC_REQUIRE_FALSE(labeldp::NoisyLabelLoss<int>);
}

TEST_CASE("Poisson log loss rejects negative and non-finite labels", "[loss]") {
  labeldp::PoissonLogLoss<> loss;
  REQUIRE_THROWS_WITH(loss.validate_label(-1.0), "Poisson log loss needs labels >= 0, got -1");
  REQUIRE_THROWS_WITH(loss.validate_label(std::numeric_limits<double>::infinity()),
                      "Poisson log loss needs labels >= 0, got inf");
  REQUIRE_NOTHROW(loss.validate_label(0.0));
  REQUIRE_THROWS_WITH(labeldp::SquaredLoss<>{}.validate_label(std::nan("")),
                      Catch::Matchers::Contains("'label' must be finite"));
}
