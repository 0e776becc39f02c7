// What `gpulab build` refuses or reports, planted in the transpose lab's files: compile and link
// errors, and the allowlist's checks of the compiled code (docs/instructors.md, "What is refused").
// Part of gpulab_integration_tests where the CUDA backend is built.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

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

// ---------------------------------------------------------------- the allowlist (docs/instructors.md)
// Each planted file hides what it uses from the text scan (token pasting, a line splice, a cast), so
// only the checks of the compiled code can refuse it.

namespace {

const char* kPaste = "#define CAT(a, b) a##b\n";

std::string build_output(const SourceTree& tree, const std::string& backend, int& status) {
  std::string output;
  status = run_build("--backend " + backend + " --lab transpose --source " + tree.root().string(), output);
  return output;
}

}  // namespace

TEST_CASE("CUDA driver entry points are refused by symbol, however the source spells them") {
  SourceTree tree("allowlist-cuda-calls");
  tree.replace("02-transpose/transpose.cu", "void transpose_naive(", std::string(kPaste) + "void transpose_naive(")
      .replace("02-transpose/transpose.cu",
               "  gpulab::check(cudaGetLastError(), \"launching transpose_naive_kernel\");",
               "  void* entry = nullptr;\n"
               "  CAT(cudaGetDriver, EntryPointByVersion)(\"cuMemcpyDtoH\", &entry, 12000, 0, nullptr);\n"
               "  CAT(cudaMallocH, ost)(&entry, 64);\n"
               "  gpulab::check(cudaGetLastError(), \"launching transpose_naive_kernel\");");
  int status = 0;
  const std::string output = build_output(tree, "cuda", status);
  INFO(output);
  CHECK(status == 1);
  CHECK(output.find(
            "transpose.cu refers to cudaGetDriverEntryPointByVersion, cudaMallocHost, which a lab file may not use") !=
        std::string::npos);
  CHECK(output.find("grader/allowlist/cuda.txt") != std::string::npos);
}

TEST_CASE(
    "a cudaMemcpy whose direction is cast from a number goes through the guard, which lets only device-to-device "
    "copies through") {
  SourceTree tree("allowlist-cuda-memcpy");
  tree.replace("02-transpose/transpose.cu",
               "  gpulab::check(cudaGetLastError(), \"launching transpose_naive_kernel\");",
               "  gpulab::check(cudaGetLastError(), \"launching transpose_naive_kernel\");\n"
               "  static float peek = 0;\n"
               "  gpulab::check(cudaMemcpy(&peek, out, sizeof peek, (cudaMemcpyKind)2), \"peeking\");");
  int status = 0;
  const std::string output = build_output(tree, "cuda", status);
  INFO(output);
  REQUIRE(status == 0);
  // The student's library holds the guard (local, like everything but the contract functions).
  fs::path library;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(GPULAB_CLI).parent_path() / "students"))
    if (entry.path().filename() == "libstudent.so" && entry.path().parent_path().filename() == "cuda" &&
        entry.path().parent_path().parent_path().filename() == "02-transpose" &&
        (library.empty() || fs::last_write_time(entry.path()) > fs::last_write_time(library)))
      library = entry.path();
  REQUIRE_FALSE(library.empty());
  std::string symbols;
  REQUIRE(run_command("nm '" + library.string() + "'", symbols) == 0);
  CHECK(symbols.find(" t __wrap_cudaMemcpy") != std::string::npos);
  // Where a GPU is, the copy to the host is refused when it is made (the lead's GPU run covers this).
  std::string gpus;
  if (run_command("nvidia-smi -L", gpus) != 0 || gpus.find("GPU 0") == std::string::npos) return;
  const auto run = run_check(tree.root(), "--backend cuda --lab transpose");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "error");
  CHECK(run.task("transpose", "naive").at("message").get<std::string>().find("cudaMemcpyDeviceToDevice") !=
        std::string::npos);
}

TEST_CASE("a vendor library declared by hand and called under a pasted name is refused by its symbol") {
  SourceTree tree("allowlist-cuda-library");
  tree.replace("02-transpose/transpose.cu", "void transpose_naive(",
               std::string(kPaste) + "extern \"C\" int CAT(cubl, asCreate_v2)(void** handle);\nvoid transpose_naive(")
      .replace("02-transpose/transpose.cu", "  const dim3 block(16, 16);",
               "  void* handle = nullptr;\n  CAT(cubl, asCreate_v2)(&handle);\n  const dim3 block(16, 16);");
  int status = 0;
  const std::string output = build_output(tree, "cuda", status);
  INFO(output);
  CHECK(status == 1);
  CHECK(output.find("refers to cublasCreate_v2") != std::string::npos);
}

TEST_CASE("a header-only library included through a line splice is refused by the headers the compiler included") {
  SourceTree tree("allowlist-cuda-header");
  tree.replace("02-transpose/transpose.cu", "void transpose_naive(",
               "#include <cu\\\nb/cub.cuh>\nvoid transpose_naive(");
  int status = 0;
  const std::string output = build_output(tree, "cuda", status);
  INFO(output);
  CHECK(status == 1);
  CHECK(output.find("transpose.cu includes") != std::string::npos);
  CHECK(output.find("/cub/") != std::string::npos);
  CHECK(output.find("a header no lab file may include") != std::string::npos);
}

TEST_CASE(
    "OpenCL reads, SVM, images, native kernels and extension look-ups are refused by symbol, however the source spells "
    "them") {
  SourceTree tree("allowlist-opencl-calls");
  tree.replace("02-transpose/transpose_opencl.cpp", "#include \"gpulab/student/opencl.hpp\"",
               "#undef CL_TARGET_OPENCL_VERSION\n#define CL_TARGET_OPENCL_VERSION 300\n"
               "#include \"gpulab/student/opencl.hpp\"\n" +
                   std::string(kPaste))
      .replace("02-transpose/transpose_opencl.cpp", "        \"launching transpose_naive_kernel\");",
               "        \"launching transpose_naive_kernel\");\n"
               "  float peek = 0;\n"
               "  CAT(clEnqueue, ReadBuffer)(lab.queue(), out, CL_TRUE, 0, sizeof peek, &peek, 0, nullptr, nullptr);\n"
               "  CAT(clSVM, Alloc)(lab.context(), CL_MEM_READ_WRITE, 64, 0);\n"
               "  CAT(clEnqueueNative, Kernel)(lab.queue(), nullptr, nullptr, 0, 0, nullptr, nullptr, 0, nullptr, "
               "nullptr);\n"
               "  CAT(clGetExtensionFunctionAddress, ForPlatform)(nullptr, \"clIcdGetPlatformIDsKHR\");\n"
               "  const cl_image_format format{CL_RGBA, CL_FLOAT};\n"
               "  const cl_image_desc desc{CL_MEM_OBJECT_IMAGE2D, 4, 4};\n"
               "  CAT(clCreate, Image)(lab.context(), CL_MEM_READ_ONLY, &format, &desc, nullptr, nullptr);");
  int status = 0;
  const std::string output = build_output(tree, "opencl", status);
  INFO(output);
  CHECK(status == 1);
  CHECK(output.find("transpose_opencl.cpp refers to clCreateImage, clEnqueueNativeKernel, clEnqueueReadBuffer, "
                    "clGetExtensionFunctionAddressForPlatform, clSVMAlloc, which a lab file may not use") !=
        std::string::npos);
  CHECK(output.find("grader/allowlist/opencl.txt") != std::string::npos);
}

TEST_CASE(
    "inline assembly in host code is refused in the source, and a system call assembled by macros in the compiled "
    "code") {
  SourceTree plain("allowlist-asm-plain");
  plain.replace("02-transpose/transpose_opencl.cpp", "  cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");",
                "  asm volatile(\"nop\");\n  cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");");
  int status = 0;
  std::string output = build_output(plain, "opencl", status);
  INFO(output);
  CHECK(status == 1);
  CHECK(output.find("transpose_opencl.cpp:9 uses asm, inline assembly") != std::string::npos);

  SourceTree pasted("allowlist-asm-pasted");
  pasted
      .replace("02-transpose/transpose_opencl.cpp", "using gpulab::check;",
               std::string(kPaste) + "using gpulab::check;")
      .replace("02-transpose/transpose_opencl.cpp", "  cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");",
               "  CAT(__as, m__) volatile(\"syscall\");\n  cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");");
  output = build_output(pasted, "opencl", status);
  INFO(output);
  CHECK(status == 1);
  CHECK(output.find("contains the instruction 'syscall' in its host code") != std::string::npos);
}

TEST_CASE("the harness's headers and its libraries' headers are refused in a lab file, a splice or not") {
  SourceTree tree("allowlist-harness-header");
  tree.replace("02-transpose/transpose_opencl.cpp", "using gpulab::check;",
               "#include <nlohmann/js\\\non.hpp>\n#include \"gpulab/compare.hpp\"\nusing gpulab::check;");
  int status = 0;
  const std::string output = build_output(tree, "opencl", status);
  INFO(output);
  CHECK(status == 1);
  CHECK(output.find("nlohmann/json.hpp (matches nlohmann/)") != std::string::npos);
  CHECK(output.find("gpulab/compare.hpp (the harness's own header)") != std::string::npos);
}

TEST_CASE("a student definition of a harness, runtime or C++ library function serves only the student's own calls") {
  // The harness times launches with OpenCL profiling events and the host clock, and allocates with
  // operator new: a student's own versions, faking a time of zero, must not reach it.
  SourceTree tree("allowlist-interpose");
  tree.append(
      "02-transpose/transpose_opencl.cpp",
      "#include <chrono>\n#include <cstdlib>\n#include <cstring>\n#include <new>\n#include <string>\n"
      "extern \"C\" cl_int clGetEventProfilingInfo(cl_event, cl_profiling_info, size_t size, void* value, size_t*) {\n"
      "  std::memset(value, 0, size);\n  return CL_SUCCESS;\n}\n"
      "namespace std::chrono::_V2 {\n"
      "steady_clock::time_point steady_clock::now() noexcept { return steady_clock::time_point{}; }\n}\n"
      "void* operator new(std::size_t n) { return std::malloc(n ? n : 1); }\n"
      "namespace gpulab { std::string show_value(float) { return \"faked\"; } }\n");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose");
  INFO(run.output);
  // Correct, and timed by the harness's own clock and events: a zero time would mean the student's won.
  CHECK(run.status("transpose", "naive") == "passed");
  CHECK(run.task("transpose", "naive").at("time_ms").get<double>() > 0);

  // The student's library exports the two contract functions and nothing else (the newest one built).
  fs::path library;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(GPULAB_CLI).parent_path() / "students"))
    if (entry.path().filename() == "libstudent.so" && entry.path().parent_path().filename() == "opencl" &&
        (library.empty() || fs::last_write_time(entry.path()) > fs::last_write_time(library)))
      library = entry.path();
  REQUIRE_FALSE(library.empty());
  std::string exported;
  REQUIRE(run_command("nm -D --defined-only -C '" + library.string() + "'", exported) == 0);
  INFO(exported);
  CHECK(exported.find("transpose_naive(") != std::string::npos);
  CHECK(exported.find("transpose_optimized(") != std::string::npos);
  for (const char* hidden : {"clGetEventProfilingInfo", "steady_clock", "operator new", "show_value"})
    CHECK(exported.find(hidden) == std::string::npos);
}

TEST_CASE("an OpenCL buffer in host memory is refused when it is created, with why, since a flag is not a symbol") {
  SourceTree tree("allowlist-host-buffer");
  tree.replace("02-transpose/transpose_opencl.cpp", "  cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");",
               "  static float shadow[16];\n  cl_int status = CL_SUCCESS;\n"
               "  cl_mem mirror = clCreateBuffer(lab.context(), CL_MEM_USE_HOST_PTR, sizeof shadow, shadow, &status);\n"
               "  check(status, \"a buffer over host memory\");\n  clReleaseMemObject(mirror);\n"
               "  cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "error");
  CHECK(run.task("transpose", "naive").at("message").get<std::string>().find("CL_MEM_USE_HOST_PTR") !=
        std::string::npos);
}

TEST_CASE("a folder whose name matches a refused header pattern does not refuse the student files in it") {
  SourceTree tree("allowlist-folder-named-cub/npp");
  int status = 0;
  std::string output;
  status = run_build("--backend opencl --lab transpose --source " + tree.root().string(), output);
  INFO(output);
  CHECK(status == 0);
}
