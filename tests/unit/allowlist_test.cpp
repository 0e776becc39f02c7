// What compiled student objects may reference, define and include (allowlist.hpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "allowlist.hpp"
#include "gpulab/manifest.hpp"
#include "made_up_lab.hpp"

using namespace gpulab;

namespace {

cli::SymbolAllowlist repo_allowlist(const std::string& backend) {
  return cli::SymbolAllowlist::load(std::filesystem::path(GPULAB_REPO) / "grader" / "allowlist" / (backend + ".txt"));
}

// nm -P lines for undefined symbols.
std::string undefined(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* n : names) out += fmt::format("{} U\n", n);
  return out;
}

}  // namespace

TEST_CASE("nm's POSIX output is split into referenced symbols and strong global definitions") {
  const auto symbols = cli::parse_nm(
      "_Z11saxpy_naivePKfS0_Pfiii T 0000000000000850 000000000000012e\n"
      "_ZN6gpulab14NotImplementedD0Ev W 0000000000000000 0000000000000020\n"
      "_ZL6helperv t 0000000000000010 0000000000000004\n"
      "cudaMalloc U\n"
      "fork@GLIBC_2.2.5 U\n"
      "__gmon_start__ w\n"
      "g_table B 0000000000000000 0000000000000400\n");
  CHECK(symbols.referenced == std::vector<std::string>{"cudaMalloc", "fork", "__gmon_start__"});
  CHECK(symbols.defined_global == std::vector<std::string>{"_Z11saxpy_naivePKfS0_Pfiii", "g_table"});
}

TEST_CASE(
    "the CUDA allowlist keeps launches, device memory, guarded copies, events and errors and refuses every other way "
    "back to the host") {
  const auto cuda = repo_allowlist("cuda");
  const auto symbols = cli::parse_nm(
      undefined({"cudaMalloc", "cudaFree", "__cudaLaunchKernel", "__cudaRegisterFunction", "cudaEventElapsedTime",
                 "cudaGetLastError", "_Znwm", "_ZSt20__throw_length_errorPKc", "memcpy", "sqrtf",
                 "cudaMemcpy",  // cudaMemcpy: through its guard
                 // refused: other copies, driver entry points, libraries, managed and host memory, streams
                 "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpyFromSymbol", "cudaGetDriverEntryPoint",
                 "cudaGetDriverEntryPointByVersion", "cuGetProcAddress_v2", "cublasSgemm_v2", "cudaMallocManaged",
                 "cudaMallocHost", "cudaHostAlloc", "cudaHostRegister", "cudaStreamCreate", "cudaGraphLaunch", "dlsym",
                 "fopen", "getenv", "write", "_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
                 "_ZN6gpulab14compare_withinEv", "_ZN4toml2v36detail6parserC1Ev", "png_create_read_struct",
                 "_ZN3fmt2v97vformatENS0_17basic_string_viewIcEE"}));
  CHECK(cli::refused_references(symbols, cuda) ==
        std::vector<std::string>{"cudaMemcpyAsync",
                                 "cudaMemcpy2D",
                                 "cudaMemcpyFromSymbol",
                                 "cudaGetDriverEntryPoint",
                                 "cudaGetDriverEntryPointByVersion",
                                 "cuGetProcAddress_v2",
                                 "cublasSgemm_v2",
                                 "cudaMallocManaged",
                                 "cudaMallocHost",
                                 "cudaHostAlloc",
                                 "cudaHostRegister",
                                 "cudaStreamCreate",
                                 "cudaGraphLaunch",
                                 "dlsym",
                                 "fopen",
                                 "getenv",
                                 "write",
                                 "_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
                                 "_ZN6gpulab14compare_withinEv",
                                 "_ZN4toml2v36detail6parserC1Ev",
                                 "png_create_read_struct",
                                 "_ZN3fmt2v97vformatENS0_17basic_string_viewIcEE"});
}

TEST_CASE("a lab's own allowance adds to the backend's allowlist, for that lab only") {
  auto opencl = repo_allowlist("opencl");
  const auto symbols = cli::parse_nm(undefined({"clEnqueueReadBuffer"}));
  CHECK(cli::refused_references(symbols, opencl) == std::vector<std::string>{"clEnqueueReadBuffer"});
  opencl.add({"clEnqueueReadBuffer"});
  CHECK(cli::refused_references(symbols, opencl).empty());
  CHECK(cli::refused_references(symbols, repo_allowlist("opencl")) == std::vector<std::string>{"clEnqueueReadBuffer"});
}

TEST_CASE(
    "the OpenCL allowlist keeps kernels, NDRanges and device buffers and refuses reads, maps, SVM, images, native "
    "kernels and extension lookups") {
  const auto opencl = repo_allowlist("opencl");
  const auto symbols = cli::parse_nm(undefined(
      {"clSetKernelArg", "clEnqueueNDRangeKernel", "clCreateBuffer", "clEnqueueCopyBuffer", "clFinish",
       "clEnqueueReadBuffer", "clEnqueueReadBufferRect", "clEnqueueMapBuffer", "clSVMAlloc", "clEnqueueSVMMemcpy",
       "clCreateImage", "clEnqueueReadImage", "clEnqueueNativeKernel", "clGetExtensionFunctionAddress",
       "clGetExtensionFunctionAddressForPlatform", "clCreateCommandQueue", "clCreateContext", "clGetPlatformIDs"}));
  CHECK(cli::refused_references(symbols, opencl) ==
        std::vector<std::string>{"clEnqueueReadBuffer", "clEnqueueReadBufferRect", "clEnqueueMapBuffer", "clSVMAlloc",
                                 "clEnqueueSVMMemcpy", "clCreateImage", "clEnqueueReadImage", "clEnqueueNativeKernel",
                                 "clGetExtensionFunctionAddress", "clGetExtensionFunctionAddressForPlatform",
                                 "clCreateCommandQueue", "clCreateContext", "clGetPlatformIDs"});
}

TEST_CASE("an allowlist entry is a glob on the whole mangled name, not a prefix") {
  const cli::SymbolAllowlist list({"cudaMalloc", "_ZSt[0-9]*__throw_*"});
  CHECK(list.allows("cudaMalloc"));
  CHECK_FALSE(list.allows("cudaMallocManaged"));
  CHECK(list.allows("_ZSt20__throw_length_errorPKc"));
  CHECK_FALSE(list.allows("_ZN4evil5std__throw_Ev"));
}

TEST_CASE("the contract functions are found among an object's definitions by their demangled name and parameters") {
  const auto symbols = cli::parse_nm(
      "_Z11saxpy_naivePKfS0_Pfiii T 0 1\n_Z18saxpy_naive_kernelPKfS0_Pfiii T 0 1\n"
      "_Z10saxpy_fastPKfS0_Pfiii T 0 1\n_ZN6gpulab14compare_withinEv T 0 1\n");
  CHECK(cli::contract_symbols(symbols, {"saxpy_naive", "saxpy_fast"}) ==
        std::vector<std::string>{"_Z11saxpy_naivePKfS0_Pfiii", "_Z10saxpy_fastPKfS0_Pfiii"});
  CHECK(cli::version_script({"_Z1fv"}) == "{\n  global:\n    _Z1fv;\n  local: *;\n};\n");
}

TEST_CASE("the headers of a dependency file are read as the compiler wrote them, line continuations and all") {
  const std::string gcc =
      "x.o: /src/saxpy.cu /usr/include/stdio.h \\\n /usr/local/cuda/include/cub/cub.cuh \\\n  /a\\ b/c.h\n";
  CHECK(cli::included_headers(gcc, "/src/saxpy.cu") ==
        std::vector<std::string>{"/a b/c.h", "/usr/include/stdio.h", "/usr/local/cuda/include/cub/cub.cuh"});
  const std::string nvcc = "x.o : /src/t.cu \\\n    /usr/include/stdc-predef.h \\\n";
  CHECK(cli::included_headers(nvcc, "/src/t.cu") == std::vector<std::string>{"/usr/include/stdc-predef.h"});
}

TEST_CASE(
    "a header is refused where a pattern starts a path component, and harness headers other than the student API are "
    "refused") {
  const std::vector<std::string> patterns{"cub/", "cublas", "nlohmann/"};
  const std::vector<std::string> headers{"/usr/local/cuda/include/cub/device/device_radix_sort.cuh",
                                         "/usr/local/cuda/include/cublas_v2.h",
                                         "/usr/include/nlohmann/json.hpp",
                                         "/home/me/mycub/x.h",
                                         "/usr/include/stdio.h",
                                         "/repo/common/include/gpulab/student/cuda.hpp",
                                         "/repo/common/include/gpulab/errors.hpp",
                                         "/repo/common/include/gpulab/compare.hpp",
                                         "/repo/common/include/gpulab/student/../device.hpp"};
  std::vector<std::string> refused;
  for (const auto& r : cli::refused_headers(headers, patterns, "/repo/common/include")) refused.push_back(r.header);
  CHECK(refused == std::vector<std::string>{"/usr/local/cuda/include/cub/device/device_radix_sort.cuh",
                                            "/usr/local/cuda/include/cublas_v2.h", "/usr/include/nlohmann/json.hpp",
                                            "/repo/common/include/gpulab/compare.hpp",
                                            "/repo/common/include/gpulab/student/../device.hpp"});
}

TEST_CASE("system call instructions are found in a disassembly, calls to functions named like them are not") {
  const std::string objdump =
      "0000000000000000 <_Z1fv>:\n"
      "   0:\tmov    $0x39,%eax\n"
      "   5:\tsyscall\n"
      "   7:\tint    $0x80\n"
      "   9:\tcall   e <_Z7syscallv>\n"
      "   e:\tret\n";
  CHECK(cli::system_call_instructions(objdump) == std::vector<std::string>{"syscall", "int    $0x80"});
}

TEST_CASE("a lab's manifest may add forbidden headers and allowed symbols, as lists of strings") {
  const auto dir = std::filesystem::temp_directory_path() / "gpulab-allowlist-manifest" / "05-saxpy";
  std::filesystem::create_directories(dir);
  std::string text = gpulab::testing::kSaxpyManifest;
  const auto files = text.find("\n[files]");
  REQUIRE(files != std::string::npos);
  text.insert(files + 1, "forbidden_headers = [\"cuda/std/\"]\nallow = [\"clEnqueueCopyBufferRect\"]\n\n");
  std::ofstream(dir / "lab.toml") << text;
  const Manifest m = load_manifest(dir / "lab.toml");
  CHECK(m.forbidden_headers == std::vector<std::string>{"cuda/std/"});
  CHECK(m.allow == std::vector<std::string>{"clEnqueueCopyBufferRect"});

  const std::string list = "forbidden_headers = [\"cuda/std/\"]";
  text.replace(text.find(list), list.size(), "forbidden_headers = \"cuda/std/\"");  // a string, not a list
  std::ofstream(dir / "lab.toml") << text;
  CHECK_THROWS(load_manifest(dir / "lab.toml"));
  std::filesystem::remove_all(dir.parent_path());
}
