// GPU-only checks: CUDA runs, OpenCL on the GPU, and the thresholds, which must pass for the
// reference solution and fail for the naive kernel, with margin. Skipped (exit 77) without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "cli_harness.hpp"
#include "gpulab/backend/cuda.hpp"

using namespace gpulab::testing;

namespace {

constexpr double kMargin = 1.2;  // the bound must sit 20% away from both the naive and the reference kernel

std::string gpu_args(const std::string& backend) {
  // OpenCL lists GPUs first, so device 0 is the GPU when there is one.
  return "--backend " + backend + " --device 0";
}

bool opencl_gpu_present() {
  const auto run = run_check(repo_path("solutions"), gpu_args("opencl") + " --lab hello");
  return run.report.is_object() && !run.report.at("labs").empty() &&
         run.report.at("labs")[0].at("device").value("class", "") == "gpu";
}

void check_solutions_pass(const std::string& backend) {
  const auto run = run_check(repo_path("solutions"), gpu_args(backend));
  INFO(run.output);
  CHECK(run.exit_code == 0);
  REQUIRE(run.report.is_object());
  for (const auto& lab : run.report.at("labs")) {
    CHECK(lab.at("device").at("class") == "gpu");
    for (const auto& t : lab.at("tasks")) {
      CAPTURE(t.at("task"));
      CHECK(t.at("status") == "passed");
    }
  }
  const auto& optimized = run.task("transpose", "optimized");
  const double ratio = optimized.at("ratio"), bound = optimized.at("threshold");
  MESSAGE(backend << ": reference transpose reaches " << ratio * 100 << "% of copy bandwidth; the bound is "
                  << bound * 100 << "%; naive " << run.task("transpose", "naive").at("ratio").get<double>() * 100 << "%");
  CHECK(ratio >= bound * kMargin);
}

void check_naive_fails_threshold(const std::string& backend) {
  SourceTree tree("naive-as-optimized-" + backend);
  if (backend == "cuda") {
    tree.replace("02-transpose/transpose.cu", "void transpose_optimized(", "void transpose_optimized_unused(")
        .append("02-transpose/transpose.cu",
                "void transpose_optimized(const float* in, float* out, int rows, int cols) {\n"
                "  transpose_naive(in, out, rows, cols);\n}");
  } else {
    tree.replace("02-transpose/transpose_opencl.cpp", "void transpose_optimized(", "void transpose_optimized_unused(")
        .append("02-transpose/transpose_opencl.cpp",
                "void transpose_optimized(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols) {\n"
                "  transpose_naive(lab, in, out, rows, cols);\n}");
  }
  const auto run = run_check(tree.root(), gpu_args(backend) + " --lab transpose --task optimized");
  INFO(run.output);
  CHECK(run.status("transpose", "optimized") == "too_slow");
  const auto& t = run.task("transpose", "optimized");
  const double ratio = t.at("ratio"), bound = t.at("threshold");
  MESSAGE(backend << ": naive transpose submitted as optimized reaches " << ratio * 100 << "%; the bound is "
                  << bound * 100 << "%");
  CHECK(ratio * kMargin <= bound);
}

}  // namespace

TEST_CASE("on CUDA, every reference solution passes every task, the transpose with margin") {
  check_solutions_pass("cuda");
}

TEST_CASE("on CUDA, the naive transpose submitted as the optimized one fails the threshold with margin") {
  check_naive_fails_threshold("cuda");
}

TEST_CASE("on OpenCL on the GPU, every reference solution passes, and the naive transpose fails the threshold") {
  if (!opencl_gpu_present()) {
    MESSAGE("no OpenCL GPU device is registered: skipped (see README, backends)");
    return;
  }
  check_solutions_pass("opencl");
  check_naive_fails_threshold("opencl");
}

TEST_CASE("a CUDA kernel that writes outside its buffer is reported as a kernel fault, and the next task still runs") {
  SourceTree tree("cuda-illegal-address");
  tree.replace("02-transpose/transpose.cu", "out[static_cast<size_t>(col) * rows + row] =",
               "out[(static_cast<size_t>(1) << 40) + row] =");
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

int main(int argc, char** argv) {
  if (gpulab::cuda::list_devices().empty()) {
    std::puts("no CUDA device: the GPU tests are skipped");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
