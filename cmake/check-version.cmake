# ctest cli_version: `labeldp --version` exits 0 and prints exactly "labeldp <EXPECTED>" and a
# newline on stdout, nothing on stderr.
# Usage: cmake -DLABELDP=<program> -DEXPECTED=<version> -P check-version.cmake
execute_process(COMMAND "${LABELDP}" --version RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out STREQUAL "labeldp ${EXPECTED}\n" OR NOT err STREQUAL "")
  message(FATAL_ERROR "labeldp --version: exit status '${status}', stdout '${out}', stderr '${err}'; "
                      "expected status 0 and stdout 'labeldp ${EXPECTED}\\n'")
endif()
message(STATUS "labeldp --version: ${out}")
