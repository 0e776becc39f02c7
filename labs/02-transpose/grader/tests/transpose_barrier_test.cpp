// A barrier moved into the bounds test is found: the barrier check (grader/cli/checks/barrier_check.hpp) on
// this lab's reference solution, planted with the mistake.
#include <doctest/doctest.h>

#include "barrier_check.hpp"
#include "barrier_findings.hpp"

using namespace gpulab;
namespace fs = std::filesystem;
using gpulab::testing::all_findings;
using gpulab::testing::read_file;
using gpulab::testing::replaced;

namespace {
const std::string kCondition = "barrier under a thread-dependent condition";
}  // namespace

TEST_CASE("the transpose solution with its barrier moved into the bounds test is found, CUDA and OpenCL" *
          doctest::skip(!gpulab::testing::instructor_repository())) {
  const fs::path lab = fs::path(GPULAB_REPO) / "solutions" / "02-transpose";
  const std::string cuda = replaced(
      read_file(lab / "transpose.cu"),
      "tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];\n\n  __syncthreads();",
      "{\n      tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];\n"
      "      __syncthreads();\n    }\n");
  auto found = cli::find_divergent_barriers(cuda);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].kind == kCondition);
  CHECK(found[0].kernel == "transpose_tiled_kernel");
  CHECK(found[0].condition == "col < cols && row + j < rows");

  const std::string opencl =
      replaced(read_file(lab / "transpose.cl"),
               "tile[ty + j][tx] = in[(size_t)(row + j) * cols + col];\n\n  barrier(CLK_LOCAL_MEM_FENCE);",
               "{ tile[ty + j][tx] = in[(size_t)(row + j) * cols + col]; barrier(CLK_LOCAL_MEM_FENCE); }");
  found = cli::find_divergent_barriers(opencl);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].condition == "col < cols && row + j < rows");
}
