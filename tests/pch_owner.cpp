// Owner of the shared precompiled header of the test programs (LABELDP_TEST_PCH in
// tests/CMakeLists.txt): compiling this empty file builds it once.
