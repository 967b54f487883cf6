// Built against the installed labeldp package only (find_package or pkg-config): includes the
// umbrella header, runs the optimal RR-on-Bins end to end, and fails (non-zero exit) if anything is
// off, including a version other than LABELDP_EXPECTED_VERSION (the package's, when defined).
#include <cmath>
#include <cstring>
#include <iostream>
#include <labeldp/labeldp.hpp>

int main() {
#ifdef LABELDP_EXPECTED_VERSION
  if (std::strcmp(LABELDP_VERSION_STRING, LABELDP_EXPECTED_VERSION) != 0) {
    std::cerr << "headers say labeldp " << LABELDP_VERSION_STRING << ", the package " << LABELDP_EXPECTED_VERSION
              << "\n";
    return 1;
  }
#endif
  std::cout << "labeldp " << LABELDP_VERSION_STRING << ": ";
  const auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  const auto rr = labeldp::optimal_rr_on_bins(prior, 0.5);
  labeldp::SecureRandom gen;
  const double noisy = rr.sample(1.0, gen);
  const double eps = labeldp::audit_epsilon(rr.mechanism());
  std::cout << "bins " << rr.num_outputs() << ", noisy label " << noisy << ", audited eps " << eps << ", loss "
            << rr.expected_loss(prior) << "\n";
  // Ghazi et al. (2023) / Badanidiyuru et al. (2023): Phi(0) ~ 0.396, Phi(1) = Phi(2) ~ 0.720.
  const bool ok = rr.num_outputs() == 2 && std::abs(rr.phi(0) - 0.396) < 5e-4 && std::abs(rr.phi(2) - 0.720) < 5e-4 &&
                  eps <= 0.5 * (1 + 1e-12) && (noisy == rr.outputs()[0] || noisy == rr.outputs()[1]);
  return ok ? 0 : 1;
}
