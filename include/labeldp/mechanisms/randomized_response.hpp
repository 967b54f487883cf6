/// \file
/// Randomized response baselines: k-ary randomized response (Warner 1965; Ghazi et al. 2023,
/// Definition 27) and RRWithPrior / RRTop-k (Ghazi et al., "Deep learning with label
/// differential privacy", NeurIPS 2021, Algorithm 2). Both ignore the numeric distance between
/// labels, which is why RR-on-Bins beats them on regression losses (Ghazi et al. 2023, App. G).
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "labeldp/core/audit.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/validate.hpp"

namespace labeldp {

/// k-ary randomized response on the given values: the true value with probability
/// \f$e^\varepsilon/(e^\varepsilon+k-1)\f$, each other value with \f$1/(e^\varepsilon+k-1)\f$.
/// \param values strictly increasing finite values (k >= 1).
/// \param eps the privacy parameter, finite and > 0.
/// \throws std::invalid_argument for a bad eps or bad values.
template <typename Scalar = double>
FiniteMechanism<Scalar> randomized_response(const Vector<Scalar>& values, double eps) {
  validate_epsilon(eps);
  const Index k = values.size();
  if (k == 0) throw std::invalid_argument("randomized response needs at least one value");
  const Scalar e = std::exp(Scalar(table_epsilon(eps)));
  Matrix<Scalar> P = Matrix<Scalar>::Constant(k, k, Scalar(1) / (e + Scalar(k - 1)));
  for (Index i = 0; i < k; ++i) P(i, i) = e / (e + Scalar(k - 1));
  cap_to_epsilon(P, table_epsilon(eps));  // the two rounded quotients may be e^eps apart plus roundoff
  return FiniteMechanism<Scalar>(values, values, std::move(P));
}

/// The number of top values RRWithPrior keeps: \f$k^* = \arg\max_{k'} \frac{e^\varepsilon}
/// {e^\varepsilon + k' - 1} \sum_{j \le k'} p_{(j)}\f$ with \f$p_{(1)} \ge p_{(2)} \ge \dots\f$ (the
/// probability that the output equals the input). Ties go to the smaller k'.
template <typename Scalar = double>
Index rr_with_prior_top_k(const FinitePrior<Scalar>& prior, double eps) {
  validate_epsilon(eps);
  std::vector<Scalar> sorted(prior.probabilities().data(), prior.probabilities().data() + prior.size());
  std::sort(sorted.begin(), sorted.end(), std::greater<Scalar>());
  const Scalar e = std::exp(Scalar(table_epsilon(eps)));
  Scalar mass = 0, best = -1;
  Index best_k = 1;
  for (Index k = 1; k <= prior.size(); ++k) {
    mass += sorted[std::size_t(k - 1)];
    const Scalar value = e / (e + Scalar(k - 1)) * mass;
    if (value > best) {
      best = value;
      best_k = k;
    }
  }
  return best_k;
}

/// RRWithPrior (RRTop-k): keep the \f$k^*\f$ most probable values (rr_with_prior_top_k());
/// a label among them is answered by \f$k^*\f$-ary randomized response over them, any other label
/// by a uniform draw from them. The outputs are the kept values. eps-DP: every column holds only
/// \f$e^\varepsilon/(e^\varepsilon+k^*-1)\f$ and \f$1/(e^\varepsilon+k^*-1)\f$ (or \f$1/k^*\f$ in
/// between). Ties in probability are broken towards smaller values.
/// \throws std::invalid_argument for a bad eps.
template <typename Scalar = double>
FiniteMechanism<Scalar> rr_with_prior(const FinitePrior<Scalar>& prior, double eps) {
  const Index top = rr_with_prior_top_k(prior, eps);
  const Index k = prior.size();
  std::vector<Index> order(static_cast<std::size_t>(k));
  std::iota(order.begin(), order.end(), Index(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](Index a, Index b) { return prior.probability(a) > prior.probability(b); });
  std::vector<Index> kept(order.begin(), order.begin() + top);
  std::sort(kept.begin(), kept.end());
  Vector<Scalar> outputs(top);
  for (Index j = 0; j < top; ++j) outputs[j] = prior.value(kept[std::size_t(j)]);
  const Scalar e = std::exp(Scalar(table_epsilon(eps)));
  Matrix<Scalar> P(k, top);
  for (Index i = 0; i < k; ++i) {
    const auto it = std::find(kept.begin(), kept.end(), i);
    if (it == kept.end()) {
      P.row(i).setConstant(Scalar(1) / Scalar(top));
    } else {
      P.row(i).setConstant(Scalar(1) / (e + Scalar(top - 1)));
      P(i, Index(it - kept.begin())) = e / (e + Scalar(top - 1));
    }
  }
  cap_to_epsilon(P, table_epsilon(eps));  // the rounded quotients may be e^eps apart plus roundoff
  return FiniteMechanism<Scalar>(prior.values(), std::move(outputs), std::move(P));
}

}  // namespace labeldp
