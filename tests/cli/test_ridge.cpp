// Tests of the ridge regression and one-hot encoding `labeldp compare` evaluates with
// (examples/cli/ridge.hpp): against the normal equations solved independently (Eigen's
// column-pivoting QR of the augmented system, in the original units), an exact linear fit,
// least squares at lambda = 0, the encoding of categorical columns, and cross-validation
// choosing the right end of the penalty grid on constructed data.
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../../examples/cli/ridge.hpp"

namespace ridge = labeldp::cli::ridge;

namespace {

// Random design: n rows, p columns of different scales and offsets.
Eigen::MatrixXd random_design(Eigen::Index n, Eigen::Index p, std::mt19937_64& rng) {
  std::normal_distribution<double> z;
  Eigen::MatrixXd x(n, p);
  for (Eigen::Index j = 0; j < p; ++j)
    for (Eigen::Index i = 0; i < n; ++i) x(i, j) = 3.0 * double(j + 1) + double(j + 1) * z(rng);
  return x;
}

// The ridge problem of ridge.hpp written out independently: minimize |y - b0 - X b|^2 +
// lambda |S b|^2 with S = diag(sd_j) (the penalty on the coefficients of the standardized
// features, b_j sd_j), solved as the augmented least-squares problem
// [1 X; 0 sqrt(lambda) S] [b0; b] = [y; 0] by QR.
Eigen::VectorXd reference_ridge(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, double lambda) {
  const Eigen::Index n = x.rows(), p = x.cols();
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n + p, p + 1);
  a.block(0, 0, n, 1).setOnes();
  a.block(0, 1, n, p) = x;
  for (Eigen::Index j = 0; j < p; ++j) {
    const double sd = std::sqrt((x.col(j).array() - x.col(j).mean()).square().mean());
    a(n + j, 1 + j) = std::sqrt(lambda) * sd;
  }
  Eigen::VectorXd b = Eigen::VectorXd::Zero(n + p);
  b.head(n) = y;
  return a.colPivHouseholderQr().solve(b);
}

}  // namespace

TEST_CASE("ridge: matches the normal equations solved independently", "[ridge]") {
  std::mt19937_64 rng(7);
  const auto x = random_design(40, 4, rng);
  std::normal_distribution<double> z;
  Eigen::VectorXd y(40);
  for (Eigen::Index i = 0; i < 40; ++i) y(i) = 2 - x(i, 0) + 0.5 * x(i, 3) + z(rng);
  const ridge::RidgeSolver solver(x);
  for (double lambda : {0.0, 0.1, 3.0, 100.0, 1e4}) {
    const ridge::Model m = solver.fit(y, lambda);
    const Eigen::VectorXd ref = reference_ridge(x, y, lambda);
    INFO("lambda " << lambda);
    CHECK(m.intercept == Approx(ref(0)).epsilon(1e-9).margin(1e-9));
    for (Eigen::Index j = 0; j < 4; ++j) CHECK(m.coef(j) == Approx(ref(1 + j)).epsilon(1e-9).margin(1e-9));
  }
}

TEST_CASE("ridge: lambda 0 is least squares and an exact linear fit is recovered", "[ridge]") {
  std::mt19937_64 rng(11);
  const auto x = random_design(30, 3, rng);
  const Eigen::VectorXd y = (x * Eigen::Vector3d(1.5, -2, 0.25)).array() + 7;
  const ridge::Model m = ridge::RidgeSolver(x).fit(y, 0);
  CHECK(m.intercept == Approx(7).epsilon(1e-9));
  CHECK(m.coef(0) == Approx(1.5).epsilon(1e-9));
  CHECK(m.coef(1) == Approx(-2).epsilon(1e-9));
  CHECK(m.coef(2) == Approx(0.25).epsilon(1e-9));
  CHECK(ridge::mse(m.predict(x), y) < 1e-18 * y.squaredNorm());
  // A positive penalty shrinks the coefficients (their standardized norm decreases).
  const ridge::Model shrunk = ridge::RidgeSolver(x).fit(y, 50);
  CHECK(std::abs(shrunk.coef(1)) < 2);
  CHECK(ridge::mse(shrunk.predict(x), y) > 1e-6);
}

TEST_CASE("ridge: one-hot encoding of categorical columns, first level as reference", "[ridge]") {
  const std::vector<std::string> names{"age", "region", "smsa"};
  const std::vector<std::vector<std::string>> cols{
      {"30", "41.5", "25", "60"}, {"west", "north", "south", "north"}, {"yes", "no", "yes", "yes"}};
  const ridge::Encoder enc(names, cols);
  REQUIRE(enc.columns().size() == 3);
  CHECK(enc.columns()[0].numeric);
  CHECK_FALSE(enc.columns()[1].numeric);
  CHECK(enc.columns()[1].levels == std::vector<std::string>{"north", "south", "west"});
  CHECK(enc.width() == 1 + 2 + 1);
  const Eigen::MatrixXd x = enc.encode(cols);
  Eigen::MatrixXd expected(4, 4);
  // age, region=south, region=west, smsa=yes
  expected << 30, 0, 1, 1,  //
      41.5, 0, 0, 0,        //
      25, 1, 0, 1,          //
      60, 0, 0, 1;
  CHECK(x == expected);
  // A level not seen when the encoder was built is the reference (all zeros); a column with a
  // non-number anywhere is categorical.
  const Eigen::MatrixXd y = enc.encode({{"1"}, {"east"}, {"no"}});
  CHECK(y.row(0).tail(3).isZero());
  const ridge::Encoder mixed({"c"}, {{"1", "2", "x"}});
  CHECK_FALSE(mixed.columns()[0].numeric);
  CHECK(mixed.width() == 2);
}

TEST_CASE("ridge: a categorical effect is fitted exactly through the one-hot columns", "[ridge]") {
  std::vector<std::vector<std::string>> cols(1);
  Eigen::VectorXd y(60);
  const char* level[] = {"a", "b", "c"};
  const double effect[] = {10, -5, 2};
  for (int i = 0; i < 60; ++i) {
    cols[0].push_back(level[i % 3]);
    y(i) = effect[i % 3];
  }
  const ridge::Encoder enc({"g"}, cols);
  const ridge::Model m = ridge::RidgeSolver(enc.encode(cols)).fit(y, 0);
  const Eigen::VectorXd pred = m.predict(enc.encode({{"a", "b", "c"}}));
  CHECK(pred(0) == Approx(10).epsilon(1e-9));
  CHECK(pred(1) == Approx(-5).epsilon(1e-9));
  CHECK(pred(2) == Approx(2).epsilon(1e-9));
}

TEST_CASE("ridge: cross-validation picks the penalty the data call for", "[ridge]") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> z;
  SECTION("noise-free linear labels: the smallest penalty (0)") {
    const auto x = random_design(100, 5, rng);
    const Eigen::VectorXd y = x * Eigen::VectorXd::LinSpaced(5, -1, 1);
    const ridge::RidgeCV cv(x, 5);
    const auto err = cv.cv_errors(y);
    CHECK(err.front() < 1e-12);
    CHECK(cv.fit(y).lambda == 0);
  }
  SECTION("labels independent of many features, few rows: a large penalty") {
    const auto x = random_design(30, 20, rng);
    Eigen::VectorXd y(30);
    for (Eigen::Index i = 0; i < 30; ++i) y(i) = z(rng);
    const ridge::RidgeCV cv(x, 5);
    const ridge::Model m = cv.fit(y);
    // One of the two largest penalties of the grid (the ideal one is infinite: the labels are noise).
    CHECK(m.lambda >= cv.lambdas()[cv.lambdas().size() - 2]);
    // Far better in validation than least squares, which interpolates 20 noise features.
    const auto err = cv.cv_errors(y);
    CHECK(err.back() < 0.5 * err.front());
  }
  SECTION("the chosen penalty minimizes the validation error computed fold by fold here") {
    const auto x = random_design(50, 3, rng);
    Eigen::VectorXd y(50);
    for (Eigen::Index i = 0; i < 50; ++i) y(i) = x(i, 0) + 4 * z(rng);
    const ridge::RidgeCV cv(x, 5);
    const auto err = cv.cv_errors(y);
    for (std::size_t l = 0; l < cv.lambdas().size(); ++l) {
      double sum = 0;
      for (int f = 0; f < 5; ++f) {
        std::vector<Eigen::Index> tr, te;
        for (Eigen::Index i = 0; i < 50; ++i) (i % 5 == f ? te : tr).push_back(i);
        const Eigen::MatrixXd xt = x(tr, Eigen::all);
        const Eigen::VectorXd ref = reference_ridge(xt, y(tr), cv.lambdas()[l]);
        const Eigen::MatrixXd xv = x(te, Eigen::all);
        const Eigen::VectorXd pred = (xv * ref.tail(3)).array() + ref(0);
        const Eigen::VectorXd yv = y(te);
        sum += (pred - yv).squaredNorm();
      }
      INFO("lambda " << cv.lambdas()[l]);
      CHECK(err[l] == Approx(sum / 50).epsilon(1e-9));
    }
  }
}
