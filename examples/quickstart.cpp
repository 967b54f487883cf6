// labeldp in one page: a prior, the optimal eps-DP RR-on-Bins for it, an exact privacy audit,
// and a few privatized labels.
#include <cstdio>
#include <labeldp/labeldp.hpp>
#include <vector>

int main() {
  // 1. A prior over the label values (public, or estimated privately: see two_stage.hpp).
  const auto prior = labeldp::FinitePrior<>::from_weights({0.0, 1.0, 2.0}, {0.6, 0.25, 0.15});

  // 2. The eps-DP mechanism with the least expected squared error (Ghazi et al. 2023, Alg. 2).
  const double eps = 0.5;
  const auto rr = labeldp::optimal_rr_on_bins(prior, eps);
  std::printf("bins: %lld, expected squared error %.6f\n", static_cast<long long>(rr.num_outputs()),
              rr.expected_loss(prior));
  for (labeldp::Index i = 0; i < prior.size(); ++i)
    std::printf("  label %g -> output %.6f\n", prior.value(i), rr.phi(i));

  // 3. Exact privacy audit of the probability matrix the sampler realizes.
  std::printf("audited epsilon: %.17g (requested %g)\n", labeldp::audit_epsilon(rr.realized_probabilities()), eps);

  // 4. Privatize labels with the default, cryptographically secure generator.
  labeldp::SecureRandom gen;
  for (double y : std::vector<double>{0, 0, 1, 2, 2}) std::printf("  %g -> %.6f\n", y, rr.sample(y, gen));
  return 0;
}
