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
