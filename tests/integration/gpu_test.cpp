// GPU-only checks: CUDA runs, OpenCL on the GPU, and the thresholds, which must pass for the
// reference solution and fail for the naive kernel, with margin. Skipped (exit 77) without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "cli_harness.hpp"
#include "gpulab/backend/cuda.hpp"

using namespace gpulab::testing;

namespace {

// The bound must sit at least 10% away from both the weaker and the reference kernel; run-to-run
// noise on the GPU is under 1%.
constexpr double kMargin = 1.1;

std::string gpu_args(const std::string& backend) {
  // OpenCL lists GPUs first, so device 0 is the GPU when there is one.
  return "--backend " + backend + " --device 0";
}

bool opencl_gpu_present() {
  const auto run = run_check(repo_path("solutions"), gpu_args("opencl") + " --lab hello");
  return run.report.is_object() && !run.report.at("labs").empty() &&
         run.report.at("labs")[0].at("device").value("class", "") == "gpu";
}

// Every task of every lab passes; where a task has a threshold, the solution clears it with margin.
void check_solutions_pass(const std::string& backend) {
  const auto run = run_check(repo_path("solutions"), gpu_args(backend));
  INFO(run.output);
  CHECK(run.exit_code == 0);
  REQUIRE(run.report.is_object());
  for (const auto& lab : run.report.at("labs")) {
    CHECK(lab.at("device").at("class") == "gpu");
    for (const auto& t : lab.at("tasks")) {
      CAPTURE(lab.at("name"));
      CAPTURE(t.at("task"));
      CHECK(t.at("status") == "passed");
      if (t.contains("rate")) MESSAGE(backend << " " << lab.at("name").get<std::string>() << "/" << t.at("task").get<std::string>()
                                              << ": " << t.at("rate").get<double>() << " " << lab.at("calibration").at("unit").get<std::string>()
                                              << ", ratios " << t.at("ratios").dump());
      if (!t.contains("threshold")) continue;
      const double ratio = t.at("ratio"), bound = t.at("threshold");
      CHECK(ratio >= bound * kMargin);
    }
  }
}

// A task's function replaced by a call to the weaker one (naive as optimized, tiled as fast).
struct Substitution {
  std::string lab, folder, task, function, weaker, cuda_file, opencl_file, params, args;
};

const Substitution kSubstitutions[] = {
    {"transpose", "02-transpose", "optimized", "transpose_optimized", "transpose_naive", "transpose.cu",
     "transpose_opencl.cpp", "float* in, float* out, int rows, int cols", "in, out, rows, cols"},
    {"matmul", "01-matmul", "tiled", "matmul_tiled", "matmul_naive", "matmul.cu", "matmul_opencl.cpp",
     "float* a, float* b, float* c, int m, int n, int k", "a, b, c, m, n, k"},
    {"matmul", "01-matmul", "fast", "matmul_fast", "matmul_tiled", "matmul.cu", "matmul_opencl.cpp",
     "float* a, float* b, float* c, int m, int n, int k", "a, b, c, m, n, k"},
    {"bitonic", "03-bitonic", "shared", "bitonic_shared", "bitonic_global", "bitonic.cu", "bitonic_opencl.cpp",
     "unsigned* keys, int n", "keys, n"},
    {"bitonic", "03-bitonic", "fast", "bitonic_fast", "bitonic_shared", "bitonic.cu", "bitonic_opencl.cpp",
     "unsigned* keys, int n", "keys, n"},
};

// The parameter list of the lab's contract on a backend: const inputs on CUDA, cl_mem on OpenCL.
std::string contract(const Substitution& s, const std::string& backend) {
  if (backend == "cuda") {
    std::string p = s.params;
    for (std::size_t at = 0; (at = p.find("float* ", at)) != std::string::npos;) {
      const bool output = p.compare(at + 7, 3, "out") == 0 || p.compare(at + 7, 2, "c,") == 0;
      if (!output) p.insert(at, "const "), at += 6;
      at += 7;
    }
    return p;
  }
  std::string p = s.params;
  for (const std::string pointer : {"float* ", "unsigned* "})
    for (std::size_t at; (at = p.find(pointer)) != std::string::npos;) p.replace(at, pointer.size(), "cl_mem ");
  return "const gpulab::OpenCLLab& lab, " + p;
}

void check_weaker_fails_threshold(const std::string& backend, const Substitution& s) {
  SourceTree tree("weaker-" + s.task + "-" + s.lab + "-" + backend);
  const std::string file = s.folder + "/" + (backend == "cuda" ? s.cuda_file : s.opencl_file);
  const std::string args = backend == "cuda" ? s.args : "lab, " + s.args;
  // Defined where the original was, so code after it that calls the function still compiles.
  tree.replace(file, "void " + s.function + "(",
               "void " + s.function + "(" + contract(s, backend) + ") {\n  " + s.weaker + "(" + args +
                   ");\n}\n\nvoid " + s.function + "_unused(");
  const auto run = run_check(tree.root(), gpu_args(backend) + " --lab " + s.lab + " --task " + s.task);
  INFO(run.output);
  CHECK(run.status(s.lab, s.task) == "too_slow");
  const auto& t = run.task(s.lab, s.task);
  const double ratio = t.at("ratio"), bound = t.at("threshold");
  MESSAGE(backend << ": " << s.weaker << " submitted as " << s.function << " reaches " << ratio << " (" << t.at("metric")
                  << "); the bound is " << bound);
  CHECK(ratio * kMargin <= bound);
}

// Labs whose weaker versions are whole files, tests/fixtures/weaker/<folder>/ (kernels without
// shared memory, naive sorts): each listed task must fail its threshold with margin.
struct WeakerFiles {
  std::string lab, folder;
  std::vector<std::string> tasks;
};

const WeakerFiles kWeakerFiles[] = {
    {"filter", "04-filter", {"box-tiled", "gaussian", "median", "median5"}},
};

void check_weaker_files_fail(const std::string& backend, const WeakerFiles& w) {
  SourceTree tree("weaker-files-" + w.lab + "-" + backend);
  for (const auto& file : fs::directory_iterator(fs::path(GPULAB_REPO) / "tests/fixtures/weaker" / w.folder))
    if (file.path().extension() != ".md")
      fs::copy_file(file.path(), tree.root() / w.folder / file.path().filename(), fs::copy_options::overwrite_existing);
  std::string args = gpu_args(backend) + " --lab " + w.lab;
  for (const auto& t : w.tasks) args += " --task " + t;
  const auto run = run_check(tree.root(), args);
  INFO(run.output);
  for (const auto& task : w.tasks) {
    CAPTURE(task);
    CHECK(run.status(w.lab, task) == "too_slow");
    const auto& t = run.task(w.lab, task);
    if (!t.contains("ratio")) continue;
    const double ratio = t.at("ratio"), bound = t.at("threshold");
    MESSAGE(backend << ": the weaker " << w.lab << "/" << task << " reaches " << ratio << " (" << t.at("metric")
                    << "); the bound is " << bound);
    CHECK(ratio * kMargin <= bound);
  }
}

void check_thresholds_separate(const std::string& backend) {
  for (const auto& s : kSubstitutions) {
    CAPTURE(s.function);
    check_weaker_fails_threshold(backend, s);
  }
  for (const auto& w : kWeakerFiles) check_weaker_files_fail(backend, w);
}

}  // namespace

TEST_CASE("on CUDA, every reference solution passes every task, and clears every threshold with margin") {
  check_solutions_pass("cuda");
}

TEST_CASE("on CUDA, a weaker kernel submitted for a stronger task fails its threshold with margin") {
  check_thresholds_separate("cuda");
}

TEST_CASE("on OpenCL on the GPU, every reference solution passes, and weaker kernels fail the thresholds") {
  if (!opencl_gpu_present()) {
    MESSAGE("no OpenCL GPU device is registered: skipped (see README, backends)");
    return;
  }
  check_solutions_pass("opencl");
  check_thresholds_separate("opencl");
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
