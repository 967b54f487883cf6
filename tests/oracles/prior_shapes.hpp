// The prior shapes the solver tests sweep (issue "solvers that never stall": every shape, not
// the papers' prior), and their names for test messages. Each test builds its own priors of
// these shapes; the names are shared.
#pragma once

namespace labeldp::test {

enum class Shape { NearUniform, Spiky, HeavyTailed, WithZeros };

inline const char* shape_name(Shape s) {
  switch (s) {
    case Shape::NearUniform:
      return "near-uniform";
    case Shape::Spiky:
      return "spiky";
    case Shape::HeavyTailed:
      return "heavy-tailed";
    case Shape::WithZeros:
      return "with-zeros";
  }
  return "?";
}

}  // namespace labeldp::test
