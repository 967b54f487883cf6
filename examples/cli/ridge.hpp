// Evaluation tooling of `labeldp compare` (not a mechanism): the design matrix of a CSV's feature
// columns (numeric as they are, anything else one-hot) and ridge regression whose penalty is
// chosen by k-fold cross-validation on the training labels only.
//
// Ridge: minimize sum_i (y_i - b0 - x_i.b)^2 + lambda |b|^2, the intercept b0 unpenalized
// (centered data), numeric columns standardized on the training rows so that one lambda fits
// features of any unit. Every label-independent part (the centered Gram matrix's
// eigendecomposition per fold) is computed once per training set, so fitting one label vector
// with cross-validation over the whole lambda grid costs O(n p) plus O(p^2) per lambda: compare
// fits thousands of noisy label vectors against the same features.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace labeldp::cli::ridge {

/// Parses a whole field as a finite double (no leading or trailing text).
inline bool parse_finite(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

/// How one feature column enters the design matrix.
struct FeatureColumn {
  std::string name;
  bool numeric = false;
  std::vector<std::string> levels;  // categorical: every level, sorted; the first is the reference
};

/// Columns of the design matrix built from raw feature columns: a column whose every value is a
/// finite number is numeric (one column), any other is categorical, one-hot with its first
/// (sorted) level dropped as the reference (so the centered design has no exact collinearity).
class Encoder {
 public:
  /// \param names the feature columns' names; \param columns their values, row by row
  ///        (columns[j][i]: column j of row i; every column as long as the first).
  Encoder(std::vector<std::string> names, const std::vector<std::vector<std::string>>& columns) {
    if (names.size() != columns.size()) throw std::invalid_argument("ridge: one name per feature column");
    for (std::size_t j = 0; j < columns.size(); ++j) {
      FeatureColumn c;
      c.name = names[j];
      double v = 0;
      c.numeric =
          std::all_of(columns[j].begin(), columns[j].end(), [&](const std::string& s) { return parse_finite(s, v); });
      if (!c.numeric) {
        c.levels = columns[j];
        std::sort(c.levels.begin(), c.levels.end());
        c.levels.erase(std::unique(c.levels.begin(), c.levels.end()), c.levels.end());
      }
      m_columns.push_back(std::move(c));
    }
  }

  const std::vector<FeatureColumn>& columns() const { return m_columns; }

  /// Number of design columns (without the intercept).
  Eigen::Index width() const {
    Eigen::Index p = 0;
    for (const auto& c : m_columns) p += c.numeric ? 1 : Eigen::Index(c.levels.size()) - 1;
    return p;
  }

  /// The design matrix of `columns` (same layout as the constructor's), rows in order.
  Eigen::MatrixXd encode(const std::vector<std::vector<std::string>>& columns) const {
    const Eigen::Index n = columns.empty() ? 0 : Eigen::Index(columns[0].size());
    Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, width());
    Eigen::Index at = 0;
    for (std::size_t j = 0; j < m_columns.size(); ++j) {
      const auto& c = m_columns[j];
      if (c.numeric) {
        for (Eigen::Index i = 0; i < n; ++i) {
          double v = 0;
          if (!parse_finite(columns[j][std::size_t(i)], v))
            throw std::invalid_argument("ridge: column '" + c.name + "' is not numeric in every row");
          x(i, at) = v;
        }
        ++at;
      } else {
        for (Eigen::Index i = 0; i < n; ++i) {
          const auto it = std::lower_bound(c.levels.begin(), c.levels.end(), columns[j][std::size_t(i)]);
          if (it != c.levels.end() && *it == columns[j][std::size_t(i)] && it != c.levels.begin())
            x(i, at + Eigen::Index(it - c.levels.begin()) - 1) = 1;
        }
        at += Eigen::Index(c.levels.size()) - 1;
      }
    }
    return x;
  }

 private:
  std::vector<FeatureColumn> m_columns;
};

/// A fitted ridge model: prediction = intercept + x.coef.
struct Model {
  double intercept = 0;
  Eigen::VectorXd coef;
  double lambda = 0;

  Eigen::VectorXd predict(const Eigen::MatrixXd& x) const { return (x * coef).array() + intercept; }
};

/// Ridge on a fixed design matrix for any number of label vectors. Columns are centered and
/// scaled to unit standard deviation (constant columns left at 0) on the given rows; the
/// solution comes from the eigendecomposition of the scaled Gram matrix, so every lambda >= 0
/// costs O(p^2) once X^T y is known (lambda = 0 with a singular Gram: the minimum-norm least
/// squares solution).
class RidgeSolver {
 public:
  explicit RidgeSolver(const Eigen::MatrixXd& x) {
    const Eigen::Index n = x.rows(), p = x.cols();
    if (n < 1) throw std::invalid_argument("ridge: no rows");
    m_mean = x.colwise().mean().transpose();
    m_scale = Eigen::VectorXd::Ones(p);
    Eigen::MatrixXd z = x.rowwise() - m_mean.transpose();
    for (Eigen::Index j = 0; j < p; ++j) {
      const double sd = std::sqrt(z.col(j).squaredNorm() / double(n));
      m_scale(j) = sd > 0 ? 1 / sd : 0;
    }
    z = z * m_scale.asDiagonal();
    m_z = z;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(z.transpose() * z);
    m_values = eig.eigenvalues();
    m_vectors = eig.eigenvectors();
  }

  Eigen::Index rows() const { return m_z.rows(); }
  /// The scaled Gram matrix's trace (sets the scale of lambda).
  double trace() const { return m_values.sum(); }

  /// Fits labels `y` (one per row) with penalty `lambda` >= 0 on the standardized features.
  Model fit(const Eigen::VectorXd& y, double lambda) const { return fit_projected(project(y), y.mean(), lambda); }

  /// The label-dependent part of a fit: V^T Z^T (y - mean y) (mean first, for fit_projected()).
  Eigen::VectorXd project(const Eigen::VectorXd& y) const {
    return m_vectors.transpose() * (m_z.transpose() * (y.array() - y.mean()).matrix());
  }

  Model fit_projected(const Eigen::VectorXd& projected, double y_mean, double lambda) const {
    const double cut = 1e-12 * std::max(1.0, m_values.size() ? m_values.maxCoeff() : 0.0);
    Eigen::VectorXd w(projected.size());
    for (Eigen::Index j = 0; j < projected.size(); ++j) {
      const double d = m_values(j) + lambda;
      w(j) = m_values(j) > cut && d > 0 ? projected(j) / d : 0;
    }
    Model m;
    m.lambda = lambda;
    m.coef = m_scale.asDiagonal() * (m_vectors * w);
    m.intercept = y_mean - m_mean.dot(m.coef);
    return m;
  }

 private:
  Eigen::VectorXd m_mean, m_scale, m_values;
  Eigen::MatrixXd m_z, m_vectors;
};

/// The default penalty grid, relative to trace(Z^T Z)/p of the standardized features (= n):
/// 0 and 10^-6 ... 10^1 times it.
inline std::vector<double> default_relative_lambdas() {
  std::vector<double> r{0};
  for (int e = -6; e <= 1; ++e) r.push_back(std::pow(10.0, e));
  return r;
}

/// Ridge with its penalty chosen by k-fold cross-validation on the rows it is given: row i is in
/// fold i mod k (shuffle the rows first). The penalty with the least mean validation squared
/// error over the folds wins (ties: the larger penalty); the model is then refitted on all rows.
class RidgeCV {
 public:
  /// \param x the training design matrix. \param folds k >= 2 (at most the number of rows).
  /// \param relative_lambdas penalties in units of trace(Z^T Z)/p of the standardized features.
  RidgeCV(const Eigen::MatrixXd& x, int folds = 5, std::vector<double> relative_lambdas = default_relative_lambdas())
      : m_all(x) {
    const Eigen::Index n = x.rows();
    if (folds < 2 || n < folds) throw std::invalid_argument("ridge: cross-validation needs at least 2 rows per fold");
    const double unit = x.cols() > 0 ? m_all.trace() / double(x.cols()) : 1.0;
    for (double r : relative_lambdas) m_lambdas.push_back(r * (unit > 0 ? unit : 1.0));
    for (int f = 0; f < folds; ++f) {
      Fold fold;
      for (Eigen::Index i = 0; i < n; ++i) (i % folds == f ? fold.test : fold.train).push_back(i);
      fold.x_test = x(fold.test, Eigen::all);
      fold.solver.emplace_back(Eigen::MatrixXd(x(fold.train, Eigen::all)));
      m_folds.push_back(std::move(fold));
    }
  }

  const std::vector<double>& lambdas() const { return m_lambdas; }

  /// Mean validation squared error of each lambda (lambdas() order) for labels `y`.
  std::vector<double> cv_errors(const Eigen::VectorXd& y) const {
    std::vector<double> err(m_lambdas.size(), 0);
    double count = 0;
    for (const auto& f : m_folds) {
      const Eigen::VectorXd yt = y(f.train), yv = y(f.test);
      const auto& s = f.solver.front();
      const Eigen::VectorXd proj = s.project(yt);
      for (std::size_t l = 0; l < m_lambdas.size(); ++l)
        err[l] += (s.fit_projected(proj, yt.mean(), m_lambdas[l]).predict(f.x_test) - yv).squaredNorm();
      count += double(yv.size());
    }
    for (double& e : err) e /= count;
    return err;
  }

  /// The model for labels `y`: penalty by cross-validation, refitted on every row.
  Model fit(const Eigen::VectorXd& y) const {
    const auto err = cv_errors(y);
    std::size_t best = 0;
    for (std::size_t l = 1; l < err.size(); ++l)
      if (err[l] <= err[best]) best = l;
    return m_all.fit(y, m_lambdas[best]);
  }

 private:
  struct Fold {
    std::vector<Eigen::Index> train, test;
    Eigen::MatrixXd x_test;
    std::vector<RidgeSolver> solver;  // one element (RidgeSolver has no default constructor)
  };
  RidgeSolver m_all;
  std::vector<double> m_lambdas;
  std::vector<Fold> m_folds;
};

/// Mean squared difference of two vectors of the same length.
inline double mse(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).squaredNorm() / double(a.size());
}

}  // namespace labeldp::cli::ridge
