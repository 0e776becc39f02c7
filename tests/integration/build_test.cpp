// Every CUDA student file of every lab compiles and links against the harness: the skeletons (as
// students get them) and the solutions. Built only where the CUDA backend is.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

TEST_CASE("all skeletons and solutions compile and link for CUDA") {
  for (const char* source : {"labs", "solutions"}) {
    std::string output;
    CAPTURE(source);
    CHECK(run_build(std::string("--backend cuda --source ") + repo_path(source).string(), output) == 0);
    INFO(output);
    CHECK(output.find("every lab builds") != std::string::npos);
  }
}

TEST_CASE("CUDA code that does not compile is reported with nvcc's file and line") {
  SourceTree tree("cuda-compile-error");
  tree.replace("02-transpose/transpose.cu", "const int col = blockIdx.x * blockDim.x + threadIdx.x;",
               "const int col = blockIdx.x * blockDim.x + threadIdx.x");
  std::string output;
  CHECK(run_build("--backend cuda --lab transpose --source " + tree.root().string(), output) == 1);
  INFO(output);
  CHECK(output.find("02-transpose/transpose.cu does not compile") != std::string::npos);
  CHECK(output.find("transpose.cu(9)") != std::string::npos);
}

TEST_CASE("a changed function signature is reported as a link error with a hint") {
  SourceTree tree("cuda-signature");
  tree.replace("02-transpose/transpose.cu", "void transpose_naive(const float* in, float* out, int rows, int cols)",
               "void transpose_naive(float* in, float* out, int rows, int cols)");
  std::string output;
  CHECK(run_build("--backend cuda --lab transpose --source " + tree.root().string(), output) == 1);
  INFO(output);
  CHECK(output.find("do not link") != std::string::npos);
  CHECK(output.find("transpose_naive") != std::string::npos);
  CHECK(output.find("did you rename a function or change its parameters?") != std::string::npos);
}
