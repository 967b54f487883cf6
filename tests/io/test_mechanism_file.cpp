// Mechanism files (io/mechanism_file.hpp) and the exact eps check (core/audit.hpp): every
// mechanism kind goes through one generic save / load / compare / sample test, and every
// rejected field has its own tampered file.
#include <catch2/catch.hpp>
#include <cmath>
#include <labeldp/core/audit.hpp>
#include <labeldp/core/concepts.hpp>
#include <labeldp/io/mechanism_file.hpp>
#include <labeldp/mechanisms/optimal_lp.hpp>
#include <labeldp/mechanisms/rr_on_bins.hpp>
#include <labeldp/mechanisms/unbiased.hpp>
#include <string>
#include <vector>

namespace {

using labeldp::AnyMechanism;
using labeldp::FinitePrior;
using labeldp::Index;

FinitePrior<double> small_prior() {
  return FinitePrior<double>::from_weights({0.0, 1.0, 2.0, 5.0, 10.0}, {0.3, 0.25, 0.2, 0.15, 0.1});
}

AnyMechanism rr_on_bins_mechanism(double eps) {
  const auto rr = labeldp::optimal_rr_on_bins(small_prior(), eps);
  const auto exact = rr.mechanism();
  labeldp::Matrix<double> P = exact.probabilities();
  labeldp::cap_to_epsilon(P, eps);
  return AnyMechanism::from_finite("rr-on-bins", eps,
                                   labeldp::FiniteMechanism<double>(exact.inputs(), exact.outputs(), std::move(P)));
}

// One of every kind the library can save.
std::vector<AnyMechanism> every_kind() {
  std::vector<AnyMechanism> all;
  const auto prior = small_prior();
  all.push_back(rr_on_bins_mechanism(1.0));
  labeldp::Vector<double> outputs(4);
  outputs << 0, 2, 5, 10;
  all.push_back(
      AnyMechanism::from_finite("optimal-lp", 1.0, labeldp::optimal_mechanism_lp(prior, 1.0, outputs).mechanism));
  all.push_back(AnyMechanism::from_finite("unbiased", 2.0, labeldp::optimal_unbiased_grid(prior, 2.0, 20).mechanism));
  all.push_back(AnyMechanism(
      "rpwithprior", labeldp::RPWithPrior<double>(1.0, 5.0, 0.5, 1.0, 1.0 / 64, labeldp::OutsideRule::Clamp, 12)));
  for (const std::string& kind : labeldp::baseline_kinds()) {
    labeldp::BaselineSpec s;
    s.kind = kind;
    s.eps = 1.5;
    s.lo = 0;
    s.hi = 10;
    s.clip = kind != "laplace";
    if (kind == "gaussian" || kind == "discrete-gaussian") s.delta = 1e-6;
    if (kind.rfind("discrete-", 0) == 0 || kind == "exponential") s.resolution = 0.5;
    if (kind == "rr" || kind == "rr-with-prior") s.prior = prior;
    all.push_back(labeldp::make_baseline(s));
  }
  return all;
}

}  // namespace

static_assert(labeldp::Mechanism<AnyMechanism>);
static_assert(labeldp::Mechanism<labeldp::RROnBins<double>>);
static_assert(labeldp::Mechanism<labeldp::RPWithPrior<double>>);

TEST_CASE("RR-on-Bins writes its own mechanism file, which loads back with the same rows", "[mechanism_file]") {
  for (double eps : {0.05, 1.0, 4.0}) {
    const auto rr = labeldp::optimal_rr_on_bins(small_prior(), eps);
    const AnyMechanism back = labeldp::io::load_mechanism(rr.to_json(), "bins.json");
    CHECK(back.kind() == "rr-on-bins");
    REQUIRE(back.finite());
    CHECK(labeldp::satisfies_epsilon(back.finite()->probabilities(), eps));
    // The stored rows are Algorithm 1's up to the roundoff cap_to_epsilon() removes.
    CHECK((back.finite()->probabilities() - rr.mechanism().probabilities()).cwiseAbs().maxCoeff() <= 1e-14);
    CHECK(back.finite()->outputs() == rr.outputs());
  }
}

TEST_CASE("Every mechanism kind saves, loads back equal, stays eps-DP exactly, and samples alike", "[mechanism_file]") {
  const auto all = every_kind();
  REQUIRE(all.size() == 4 + labeldp::baseline_kinds().size());
  for (const AnyMechanism& m : all) {
    INFO(m.kind());
    const std::string text = m.to_json();
    const AnyMechanism back = labeldp::io::load_mechanism(text, "saved.json");
    CHECK(back.kind() == m.kind());
    CHECK(back.eps() == m.eps());
    CHECK(back.delta() == m.delta());
    CHECK(back.to_json() == text);
    if (m.finite()) {
      REQUIRE(back.finite());
      CHECK(back.finite()->probabilities() == m.finite()->probabilities());
      CHECK(back.finite()->inputs() == m.finite()->inputs());
      CHECK(labeldp::satisfies_epsilon(back.finite()->probabilities(), back.eps()));
      CHECK(labeldp::audit_epsilon(*back.finite()) <= back.eps());
    }
    // Batch and single sampling agree for a fixed seed, also on labels off the inputs.
    const std::vector<double> labels{0.0, 0.4, 1.0, 2.6, 5.0, 9.9, 10.0, -3.0, 42.0};
    std::vector<double> batch(labels.size());
    labeldp::SeededRandom g1(7), g2(7);
    back.sample(std::span<const double>(labels), std::span<double>(batch), g1);
    for (std::size_t i = 0; i < labels.size(); ++i) CHECK(batch[i] == m.sample(labels[i], g2));
  }
}

TEST_CASE("satisfies_epsilon decides ratios next to e^eps exactly, in the safe direction", "[mechanism_file]") {
  for (double eps : {0.1, 1.0, 3.0, 12.0}) {
    INFO("eps " << eps);
    const double lo = 0.25 / std::exp(eps);
    // exp() is within an ulp of e^eps and the product adds half an ulp: three ulps each way are
    // decisively above / below lo * e^eps.
    double above = lo * std::exp(eps), below = above;
    for (int i = 0; i < 3; ++i) {
      above = std::nextafter(above, 2.0);
      below = std::nextafter(below, 0.0);
    }
    labeldp::Matrix<double> P(2, 1);
    P << above, lo;
    CHECK_FALSE(labeldp::satisfies_epsilon(P, eps));
    CHECK(labeldp::find_epsilon_violation(P, eps).column == 0);
    CHECK(labeldp::find_epsilon_violation(P, eps).high_row == 0);
    P << below, lo;
    CHECK(labeldp::satisfies_epsilon(P, eps));
    P << lo, below;
    CHECK(labeldp::satisfies_epsilon(P, eps));
    // cap_to_epsilon's output always passes.
    P << above, lo;
    labeldp::cap_to_epsilon(P, eps);
    CHECK(labeldp::satisfies_epsilon(P, eps));
  }
  labeldp::Matrix<double> Z(2, 2);
  Z << 0, 0.5, 0, 0.5;  // an all-zero column is fine
  CHECK(labeldp::satisfies_epsilon(Z, 0.01));
  Z << 0.5, 0.5, 0, 1;  // zero and positive in one column: no finite eps
  CHECK_FALSE(labeldp::satisfies_epsilon(Z, 700.0));
}

TEST_CASE("A finite mechanism eps-DP as stored but not as the sampler realizes it is refused, and capped",
          "[mechanism_file]") {
  // Column 0's ratio is e^eps (1 - 1e-12) as stored, but row 0 sums to 1 - 1e-10 and the sampler
  // draws it as if divided by its sum: realized, the ratio is e^eps (1 + ~1e-10).
  const double eps = 1.0, c = 0.2, a = c * std::exp(eps) * (1 - 1e-12);
  labeldp::Matrix<double> P(2, 2);
  P << a, 1 - 1e-10 - a, c, 1 - c;
  labeldp::Vector<double> v(2);
  v << 0, 1;
  REQUIRE(labeldp::satisfies_epsilon(P, eps));
  const labeldp::FiniteMechanism<double> m(v, v, P);
  CHECK_FALSE(labeldp::satisfies_epsilon(m.realized_probabilities(), eps));
  CHECK_THROWS_WITH(AnyMechanism::from_finite("finite", eps, m), Catch::Matchers::Contains("realized probabilities"));
  // cap_to_epsilon caps what is realized too: afterwards both tables pass and it loads.
  labeldp::Matrix<double> Q = P;
  const double removed = labeldp::cap_to_epsilon(Q, eps);
  CHECK(removed > 0);
  CHECK(removed < 1e-9);
  const labeldp::FiniteMechanism<double> capped(v, v, Q);
  CHECK(labeldp::satisfies_epsilon(Q, eps));
  CHECK(labeldp::satisfies_epsilon(capped.realized_probabilities(), eps));
  CHECK_NOTHROW(AnyMechanism::from_finite("finite", eps, capped));
}

TEST_CASE("A file whose realized table passes in doubles but not in the sampler's integer weights is refused",
          "[mechanism_file]") {
  // Found by tests/fuzz/fuzz_mechanism_json: an `unbiased` file with one probability raised by
  // 6.5e-15 (row 1 then sums to 1 + 6.5e-15). Stored, every ratio is within e^2; realized as
  // doubles (64-bit weights rounded to 53 bits) too; but the sampler's integer table exceeds
  // e^2 (realized_satisfies_epsilon), so the loader used to accept it.
  const std::string text =
      R"({"format":"labeldp-mechanism","version":1,"mechanism":"unbiased","eps":2,"inputs":[0,1,2],)"
      R"("outputs":[-0.46955292824899691,0.7900638673930005,1.2099361326069995,2.469552928248997],"probabilities":[)"
      R"([0.78698604216159818,0.053253489459600033,0.053253489459600636,0.10650697891920076],)"
      R"([0.10650697891920086,0.39349302108079415,0.39349302108079859,0.10650697891920731],)"
      R"([0.10650697891920081,0.053253489459600047,0.05325348945960065,0.78698604216159529]]})";
  CHECK_THROWS_WITH(labeldp::io::load_mechanism(text, "m.json"),
                    Catch::Matchers::Contains("m.json:") && Catch::Matchers::Contains("integer weights"));
  // The file as written (probability ...083) loads, and its integer table is eps-DP exactly.
  std::string as_written = text;
  as_written.replace(as_written.find("0.10650697891920731"), 19, "0.10650697891920083");
  const AnyMechanism m = labeldp::io::load_mechanism(as_written, "m.json");
  CHECK(labeldp::realized_satisfies_epsilon(*m.finite(), 2.0));
}

namespace {

// The error message of loading `text`, or "" when it loads.
std::string load_error(const std::string& text) {
  try {
    (void)labeldp::io::load_mechanism(text, "m.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// `text` with `what` inserted at `pos` (std::string::insert trips g++ 12's -Wrestrict here).
std::string splice(const std::string& text, std::size_t pos, const std::string& what) {
  return text.substr(0, pos) + what + text.substr(pos);
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("Tampered finite mechanism files are rejected, naming the field", "[mechanism_file]") {
  const std::string good = rr_on_bins_mechanism(1.0).to_json();
  REQUIRE(load_error(good).empty());
  using Catch::Matchers::Contains;
  CHECK_THAT(load_error(replace(good, "\"labeldp-mechanism\"", "\"other\"")), Contains("'format'"));
  CHECK_THAT(load_error(replace(good, "\"version\":1", "\"version\":2")), Contains("'version'"));
  CHECK_THAT(load_error(replace(good, "\"version\":1", "\"version\":\"1\"")), Contains("'version'"));
  CHECK_THAT(load_error(replace(good, "\"rr-on-bins\"", "\"rr-on-pins\"")), Contains("'mechanism'"));
  // A smaller eps than the probabilities meet.
  CHECK_THAT(load_error(replace(good, "\"eps\":1,", "\"eps\":0.99,")), Contains("-DP: output"));
  CHECK_THAT(load_error(replace(good, "\"eps\":1,", "\"eps\":-1,")), Contains("'eps'"));
  CHECK_THAT(load_error(replace(good, "\"eps\":1,", "\"eps\":1,\"eps\":1,")), Contains("duplicate key 'eps'"));
  CHECK_THAT(load_error(replace(good, "\"eps\":1,", "")), Contains("'eps': missing"));
  CHECK_THAT(load_error(replace(good, "\"delta\":0,", "\"delta\":0.1,")), Contains("'delta'"));
  CHECK_THAT(load_error(replace(good, "\"delta\":0,", "\"delta\":0,\"seed\":5,")), Contains("'seed': unknown field"));
  CHECK_THAT(load_error(replace(good, "\"inputs\":[0,", "\"inputs\":[3,")), Contains("strictly increasing"));
  CHECK_THAT(load_error(replace(good, "\"inputs\":[0,", "\"inputs\":[")), Contains("'probabilities'"));
  CHECK_THAT(load_error(good.substr(0, good.size() / 2)), Contains("m.json:1:"));
  CHECK_THAT(load_error(good + "{}"), Contains("trailing"));
  // One probability changed: the row no longer sums to 1; a negative one; a string.
  const auto pos = good.find("\"probabilities\":[[") + 18;
  const auto end = good.find(',', pos);
  std::string sum = good;
  sum.replace(pos, end - pos, good.substr(pos, end - pos) == "0.5" ? "0.25" : "0.5");
  CHECK_THAT(load_error(sum), Contains("'probabilities'"));
  CHECK_THAT(load_error(sum), Contains("sums to"));
  const std::string neg = splice(good, pos, "-");
  CHECK_THAT(load_error(neg), Contains("'probabilities'"));
  const std::string str = splice(splice(good, pos, "\""), end + 1, "\"");
  CHECK_THAT(load_error(str), Contains("expected a number"));
}

TEST_CASE("Tampered unbiased, RPWithPrior and baseline files are rejected, naming the field", "[mechanism_file]") {
  using Catch::Matchers::Contains;
  const auto prior = small_prior();
  labeldp::UnbiasedOptions o;
  o.max_bias = 0.5;
  const auto r = labeldp::optimal_unbiased_continuous(prior, 1.0, o);
  std::string unbiased = AnyMechanism::from_finite("unbiased", 1.0, r.mechanism).to_json();
  unbiased = replace(unbiased, "\"delta\":0,", "\"delta\":0,\"max_bias\":0.25,");
  CHECK_THAT(load_error(unbiased), Contains("'max_bias'"));

  for (const AnyMechanism& m : every_kind()) {
    if (m.finite()) continue;
    INFO(m.kind());
    const std::string good = m.to_json();
    REQUIRE(load_error(good).empty());
    // Every derived number of the file is checked against the rebuilt mechanism.
    for (const char* field : {"\"scale\":", "\"sigma\":", "\"gamma\":", "\"granularity\":", "\"sensitivity\":"}) {
      const auto at = good.find(field);
      // RPWithPrior's granularity defines it (any value is a valid mechanism); elsewhere derived.
      if (at == std::string::npos || (m.kind() == "rpwithprior" && std::string(field) == "\"granularity\":")) continue;
      const std::string name = std::string(field).substr(1, std::string(field).size() - 3);
      const std::string bad = splice(good, at + std::string(field).size(), "1");  // 0.41 -> 10.41
      CHECK_THAT(load_error(bad), Contains("'" + name + "'"));
    }
    CHECK_THAT(load_error(replace(good, "\"format\"", "\"extra\":true,\"format\"")), Contains("'extra'"));
  }
}

TEST_CASE("An unbiased file applied to labels between its inputs stays unbiased (URR, not nearest rounding)",
          "[mechanism_file]") {
  const auto prior = small_prior();
  const auto loaded = labeldp::io::load_mechanism(
      AnyMechanism::from_finite("unbiased", 2.0, labeldp::optimal_unbiased_continuous(prior, 2.0).mechanism).to_json(),
      "u.json");
  // Exact: E[M(y)] = y at the inputs (the LP's constraint) and, by URR, in between.
  const auto& finite = std::get<labeldp::FiniteLabelMechanism>(loaded.variant()).finite();
  const labeldp::UnbiasedRandomizedRounding<double> urr(finite.inputs());
  for (const double y : {0.0, 0.5, 1.0, 3.7, 9.99, 10.0}) {
    const labeldp::Vector<double> mixture = finite.probabilities().transpose() * urr.probabilities(y);
    CHECK(mixture.dot(finite.outputs()) == Approx(y).margin(1e-9));
  }
  // Sampled: the mean of n draws for y = 0.5 is within 6 standard errors of 0.5; nearest
  // rounding (to 1, ties up) would give mean 1, about 40 standard errors away.
  labeldp::SeededRandom gen(11);
  const int n = 200000;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double v = loaded.sample(0.5, gen);
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / n, sd = std::sqrt((sum2 / n - mean * mean) / n);
  INFO("mean " << mean << " standard error " << sd);
  CHECK(std::abs(mean - 0.5) < 6 * sd);
  CHECK(std::abs(1.0 - 0.5) > 30 * sd);  // the test can tell the two roundings apart
}

TEST_CASE(
    "Gaussian files: 'noise': 'table' loads the audited table; a file without it (written before the table) "
    "loads CKS 2020's exact sampler and its exact delta; another value is refused",
    "[mechanism_file]") {
  using Catch::Matchers::Contains;
  labeldp::BaselineSpec s;
  s.eps = 1;
  s.delta = 1e-5;
  s.lo = 0;
  s.hi = 10;
  for (const char* kind : {"gaussian", "discrete-gaussian"}) {
    INFO(kind);
    s.kind = kind;
    s.resolution = std::string(kind) == "discrete-gaussian" ? std::optional<double>(0.5) : std::nullopt;
    const AnyMechanism tabled = labeldp::make_baseline(s);
    const std::string table_json = tabled.to_json();
    CHECK_THAT(table_json, Contains("\"noise\":\"table\""));
    CHECK(labeldp::io::load_mechanism(table_json, "t.json").to_json() == table_json);
    s.gaussian_noise = labeldp::GaussianNoise::exact;
    const std::string exact_json = labeldp::make_baseline(s).to_json();
    s.gaussian_noise = labeldp::GaussianNoise::table;
    CHECK(exact_json.find("\"noise\"") == std::string::npos);
    CHECK(exact_json != table_json);  // realized_delta: the table's bound is above the exact delta
    CHECK(labeldp::io::load_mechanism(exact_json, "e.json").to_json() == exact_json);
    CHECK_THAT(load_error(replace(table_json, "\"noise\":\"table\"", "\"noise\":\"exact\"")), Contains("'noise'"));
    // A file claiming the table's delta without the field does not load (its realized_delta is not the exact one).
    CHECK_THAT(load_error(replace(table_json, ",\"noise\":\"table\"", "")), Contains("'realized_delta'"));
  }
  // Files written before the table (as in tests/fuzz/corpus/mechanism_json) load, with the exact sampler.
  for (
      const char* old :
      {R"({"format":"labeldp-mechanism","version":1,"mechanism":"gaussian","eps":1,"delta":1.0000000000000001e-05,"sensitivity":10,"lo":0,"hi":10,"clip":false,"sigma":37.306316432040553,"analytic_sigma":37.306316348159463,"grid_step":0.001953125,"sigma2_numerator":364841860,"sigma2_log2_denominator":0,"realized_delta":9.999999621717338e-06})",
       R"({"format":"labeldp-mechanism","version":1,"mechanism":"discrete-gaussian","eps":1,"delta":1.0000000000000001e-05,"sensitivity":10,"lo":0,"hi":10,"clip":false,"resolution":0.5,"sigma":37.306522369796475,"sigma2_numerator":11401434,"sigma2_log2_denominator":11,"realized_delta":9.9999969535654362e-06})"}) {
    INFO(old);
    CHECK(load_error(old).empty());
    CHECK(labeldp::io::load_mechanism(old, "old.json").to_json() == old);
  }
}
