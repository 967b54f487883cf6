// Built by a project that adds labeldp as a subproject (tests/subproject_consumer/CMakeLists.txt):
// the optimal RR-on-Bins on a three-value prior, its exact audit, and the version macros; exits
// non-zero if anything is off.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <labeldp/core/audit.hpp>
#include <labeldp/mechanisms/rr_on_bins.hpp>
#include <labeldp/version.hpp>

int main() {
  const auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});
  const auto rr = labeldp::optimal_rr_on_bins(prior, 0.5);
  const double eps = labeldp::audit_epsilon(rr.mechanism());
  std::printf("labeldp %s as a subproject: %lld bins, audited eps %.17g\n", LABELDP_VERSION_STRING,
              static_cast<long long>(rr.num_outputs()), eps);
  const bool ok = std::strcmp(LABELDP_VERSION_STRING, LABELDP_EXPECTED_VERSION) == 0 && rr.num_outputs() == 2 &&
                  std::abs(rr.phi(0) - 0.396) < 5e-4 && eps <= 0.5 * (1 + 1e-12);
  return ok ? 0 : 1;
}
