/// \file
/// The labeldp version as macros (usable in `#if`). Kept in sync with
/// `project(labeldp VERSION ...)` in CMakeLists.txt: configuring fails when they differ, and
/// tests/core/test_version.cpp checks them against the CMake project version.
#pragma once

#define LABELDP_VERSION_MAJOR 0
#define LABELDP_VERSION_MINOR 1
#define LABELDP_VERSION_PATCH 0
/// "MAJOR.MINOR.PATCH".
#define LABELDP_VERSION_STRING "0.1.0"
/// MAJOR * 10000 + MINOR * 100 + PATCH, for comparisons in `#if`.
#define LABELDP_VERSION (LABELDP_VERSION_MAJOR * 10000 + LABELDP_VERSION_MINOR * 100 + LABELDP_VERSION_PATCH)
