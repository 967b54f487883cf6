# CPack (top-level builds only): `cpack -G DEB` makes labeldp-dev_<version>_all.deb from the
# install component "dev" (headers, CMake package, pkg-config file, copyright), and
# `cpack --config CPackSourceConfig.cmake` (or the package_source target) a source tarball,
# labeldp-<version>.tar.gz, that builds with a compiler, CMake and Eigen only.
set(LABELDP_PACKAGE_MAINTAINER "Seed 6d480e9f maintainers <maintainers@users.noreply.a-seed-6d480e9f.example>"
    CACHE STRING "Maintainer field of the .deb")

set(CPACK_PACKAGE_NAME labeldp)
set(CPACK_PACKAGE_VENDOR "labeldp")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_CONTACT "${LABELDP_PACKAGE_MAINTAINER}")

# Binary package: only the headers-only "dev" component (not the labeldp program, component "cli").
set(CPACK_GENERATOR DEB)
set(CPACK_COMPONENTS_ALL dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME labeldp-dev)
set(CPACK_DEBIAN_DEV_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libeigen3-dev (>= 3.4)")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${LABELDP_PACKAGE_MAINTAINER}")
# The extended description (CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY on the first line).
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
       "Optimal label-differential-privacy mechanisms for regression: RR-on-Bins, the\n"
       "optimal LP mechanism, optimal unbiased randomizers, RPWithPrior and additive\n"
       "baselines, with exact privacy audits and exact sampling. Header-only C++20 on\n"
       "Eigen 3.4; license Apache-2.0. Use it with find_package(labeldp) in CMake or\n"
       "with pkg-config --cflags labeldp.")

# Source package: the tree without build directories, VCS data or editor files.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_PACKAGE_FILE_NAME labeldp-${PROJECT_VERSION})
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/\\\\.git$" "^${PROJECT_SOURCE_DIR}/build[^/]*/"
    "^${PROJECT_SOURCE_DIR}/out/" "/__pycache__/" "\\\\.swp$" "~$")

include(CPack)
