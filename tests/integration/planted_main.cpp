// gpulab_precision_tests: planted kernels graded like submissions (the shapes whitelist here, each lab's
// labs/NN-<name>/grader/tests/precision/*_test.cpp: roundings the contract allows). OpenCL by default; `--backend=cuda` runs the CUDA
// twins and exits 77 (skipped) without a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "cli_harness.hpp"
#include "planted_backend.hpp"

std::string& gpulab::testing::planted_backend() {
  static std::string backend = "opencl";
  return backend;
}

int main(int argc, char** argv) {
  using gpulab::testing::planted_backend;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--backend=", 0) == 0) planted_backend() = std::string(argv[i]).substr(10);
  if (planted_backend() == "cuda") {
    std::string output;
    gpulab::testing::run_command(std::string("'") + GPULAB_CLI + "' devices", output);
    if (output.find("cuda: no device") != std::string::npos || output.find("cuda:") == std::string::npos) {
      std::puts("no CUDA device: the CUDA planted-fault tests are skipped");
      return 77;
    }
  }
  doctest::Context context(argc, argv);
  return context.run();
}
