// Built against the installed labeldp package only: includes the umbrella header, runs a
// mechanism end to end, and fails (non-zero exit) if anything is off.
#include <cmath>
#include <iostream>

#include <labeldp/labeldp.hpp>

int main() {
  const auto prior = labeldp::FinitePrior<>::from_probabilities({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  labeldp::Matrix<> P(3, 3);
  const double e = std::exp(1.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) P(i, j) = (i == j ? e : 1.0) / (e + 2);
  labeldp::FiniteMechanism<> rr(prior.values(), prior.values(), P);
  labeldp::SecureRandom gen;
  const double noisy = rr.sample(1.0, gen);
  const double eps = labeldp::audit_epsilon(rr);
  std::cout << "noisy label " << noisy << ", audited eps " << eps << ", loss " << rr.expected_loss(prior) << "\n";
  return std::abs(eps - 1.0) < 1e-12 && (noisy == 0.0 || noisy == 1.0 || noisy == 2.0) ? 0 : 1;
}
