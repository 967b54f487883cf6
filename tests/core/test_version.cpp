// labeldp/version.hpp: the macros agree with each other and with the CMake project version
// (LABELDP_CMAKE_PROJECT_VERSION, defined for this test by CMakeLists.txt). That labeldp.hpp
// includes it is checked by the consumer projects (tests/install_consumer, tests/subproject_consumer).
#include <catch2/catch.hpp>
#include <labeldp/version.hpp>
#include <string>

#ifndef LABELDP_CMAKE_PROJECT_VERSION
#error "LABELDP_CMAKE_PROJECT_VERSION must be defined by the build (CMakeLists.txt)"
#endif

static_assert(LABELDP_VERSION_MAJOR >= 0 && LABELDP_VERSION_MINOR >= 0 && LABELDP_VERSION_PATCH >= 0);
static_assert(LABELDP_VERSION == LABELDP_VERSION_MAJOR * 10000 + LABELDP_VERSION_MINOR * 100 + LABELDP_VERSION_PATCH);

TEST_CASE("version macros equal the CMake project version", "[version]") {
  const std::string parts = std::to_string(LABELDP_VERSION_MAJOR) + "." + std::to_string(LABELDP_VERSION_MINOR) + "." +
                            std::to_string(LABELDP_VERSION_PATCH);
  CHECK(parts == LABELDP_CMAKE_PROJECT_VERSION);
  CHECK(std::string(LABELDP_VERSION_STRING) == LABELDP_CMAKE_PROJECT_VERSION);
}
