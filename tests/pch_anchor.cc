// An empty file: the target gpurent_test_pch exists to compile the tests' precompiled header
// (CMakeLists.txt, gpurent_test_target), which every test target reuses.
