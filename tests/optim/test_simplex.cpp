#include <catch2/catch.hpp>

#include "labeldp/optim/simplex.hpp"
#include "oracles/glpk_oracle.hpp"

using namespace labeldp::optim;

TEST_CASE("simplex: compiles against GLPK oracle", "[simplex]") {
  LinearProgram lp;
  lp.A = Eigen::MatrixXd{{1, 1}};
  lp.b = Eigen::VectorXd::Ones(1);
  lp.row_types = {RowType::GreaterEqual};
  lp.c = Eigen::Vector2d(1, 2);
  RevisedSimplex s(lp);
  auto r = s.solve();
  auto g = labeldp::test::solve_with_glpk(lp);
  REQUIRE(r.status == SolveStatus::Optimal);
  REQUIRE(g.status == SolveStatus::Optimal);
  REQUIRE(r.objective == Approx(g.objective));
}
