// GPU-only checks that use the transpose lab's kernels to plant faults: a CUDA kernel fault and a hung
// kernel are reported, and the next task still runs. Part of gpulab_gpu_tests (skipped, exit 77,
// without a CUDA device).
#include <doctest/doctest.h>

#include "cli_harness.hpp"
#include "gpu_args.hpp"

using namespace gpulab::testing;

TEST_CASE("a CUDA kernel that writes outside its buffer is reported as a kernel fault, and the next task still runs") {
  SourceTree tree("cuda-illegal-address");
  tree.replace("02-transpose/transpose.cu",
               "out[static_cast<size_t>(col) * rows + row] =", "out[(static_cast<size_t>(1) << 40) + row] =");
  const auto run = run_check(tree.root(), gpu_args("cuda") + " --lab transpose");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "kernel_fault");
  const std::string message = run.task("transpose", "naive").at("message");
  CHECK(message.find("cudaErrorIllegalAddress") != std::string::npos);
  CHECK(message.find("bounds test") != std::string::npos);
  CHECK(run.status("transpose", "optimized") == "passed");
}

TEST_CASE("a CUDA kernel that never finishes is killed and reported as timed out, and the next task still runs") {
  SourceTree tree("cuda-hang");
  // Waits for a value nobody writes; reading through volatile global memory keeps the loop alive.
  tree.replace("02-transpose/transpose.cu", "transpose_naive_kernel<<<grid, block>>>(in, out, rows, cols);",
               "spin_kernel<<<grid, block>>>(out);")
      .replace("02-transpose/transpose.cu", "void transpose_naive(const float* in",
               "__global__ void spin_kernel(float* out) {\n  volatile float* flag = out;\n"
               "  while (flag[0] != 12345.0f) {}\n}\n\nvoid transpose_naive(const float* in");
  const auto run = run_check(tree.root(), gpu_args("cuda") + " --lab transpose --timeout 5");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "timeout");
  CHECK(run.status("transpose", "optimized") == "passed");
}
