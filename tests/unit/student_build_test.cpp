#include <doctest/doctest.h>

#include "gpulab/backend/opencl.hpp"
#include "allowlist.hpp"
#include "student_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gpulab/manifest.hpp"

using namespace gpulab;

TEST_CASE("compiler output is cut to the errors, with repository paths made relative") {
  const std::string output =
      "/repo/labs/02-transpose/transpose.cu(3): warning: unused variable\n"
      "/repo/labs/02-transpose/transpose.cu(12): error: expected a \";\"\n"
      "  int x = 1\n"
      "1 error detected\n";
  const std::string trimmed = cli::trim_compiler_output(output, "/repo/");
  CHECK(trimmed.rfind("labs/02-transpose/transpose.cu(12): error", 0) == 0);
  CHECK(trimmed.find("warning") == std::string::npos);
  CHECK(trimmed.find("1 error detected") != std::string::npos);
}

TEST_CASE("long compiler output is cut with a count of the lines left out") {
  std::string output = "x.cpp:1:1: error: first\n";
  for (int i = 0; i < 50; ++i) output += "note: more\n";
  const std::string trimmed = cli::trim_compiler_output(output, "", 10);
  CHECK(trimmed.find("(41 more lines)") != std::string::npos);
}

TEST_CASE("OpenCL build logs name the student's file instead of the compiler's placeholder") {
  CHECK(opencl::name_source_in_log("<source>:12:5: error: use of undeclared identifier", "transpose.cl") ==
        "transpose.cl:12:5: error: use of undeclared identifier");
  CHECK(opencl::name_source_in_log("<kernel>:3:1: error: x", "hello.cl") == "hello.cl:3:1: error: x");
}

TEST_CASE("forbidden APIs are found in code with their line, case-insensitively, but not in comments") {
  const std::string source =
      "#include <cublas_v2.h>\n"
      "// cublasSgemm would be faster, but we write our own\n"
      "/* thrust::sort\n   is not allowed */\n"
      "void f() { CUBLASSGEMM(); }\n"
      "const char* s = \"// not a comment: thrust\";\n";
  const auto uses = cli::find_forbidden(source, {"cublas", "thrust"});
  REQUIRE(uses.size() == 3);
  CHECK(uses[0].line == 1);
  CHECK(uses[0].what == "cublas");
  CHECK(uses[1].line == 5);
  CHECK(uses[2].line == 6);
  CHECK(uses[2].what == "thrust");
  CHECK(cli::find_forbidden("int x; // cublas\n", {"cublas"}).empty());
}

TEST_CASE("a forbidden name matches where an identifier starts, and whole-word names only as a whole identifier") {
  CHECK(cli::find_forbidden("x = mycublas(1);\n", {"cublas"}).empty());
  CHECK(cli::find_forbidden("cublasSgemm(h);\n", {"cublas"}).size() == 1);
  CHECK(cli::find_forbidden("forklift(); threadIdx.x;\n", {"fork", "std::thread"}, true).empty());
  CHECK(cli::find_forbidden("if (fork() == 0) {}\n", {"fork"}, true).size() == 1);
  CHECK(cli::find_forbidden("throw Error(\"cannot open it\", 'x');\n", {"open"}, true).empty());
  // A digit separator is not a quote, and a raw string ends where it ends: neither hides a call.
  CHECK(cli::find_forbidden("int n = 1'000; system(\"x\");\n", {"system"}, true).size() == 1);
  CHECK(cli::find_forbidden("auto s = R\"x(a \" b)x\"; fork();\n", {"fork"}, true).size() == 1);
  CHECK(cli::find_forbidden("auto s = R\"(fork())\";\n", {"fork"}, true).empty());
}

TEST_CASE("host code that opens files, starts processes or connects is refused in every lab, even when hidden by a namespace") {
  const auto& calls = cli::host_calls_forbidden_everywhere();
  const std::string source =
      "#include <fstream>\n"
      "void launch() {\n"
      "  std::ofstream out(\"/tmp/x\");\n"
      "  ::system(\"curl http://example.org\");\n"
      "  int s = socket(2, 1, 0); connect(s, nullptr, 0);\n"
      "}\n";
  const auto uses = cli::find_forbidden(source, calls, true);
  std::vector<std::string> found;
  for (const auto& u : uses) found.push_back(fmt::format("{}:{}", u.line, u.what));
  CHECK(found == std::vector<std::string>{"1:fstream", "3:ofstream", "4:system", "5:socket", "5:connect"});
}

TEST_CASE("includes by absolute path or through a parent folder are found with their line") {
  const auto uses = cli::find_escaping_includes(
      "#include \"gpulab/student/cuda.hpp\"\n#include </root/solutions/02-transpose/transpose.cu>\n"
      "  #  include \"../../solutions/x.cu\"\n// #include \"/etc/passwd\"\n#define P \"x.h\"\n#include P\n#embed \"a.bin\"\n");
  REQUIRE(uses.size() == 4);
  CHECK(uses[0].line == 2);
  CHECK(uses[1].line == 3);
  CHECK(uses[2].line == 6);
  CHECK(uses[3].line == 7);
}

TEST_CASE("the skeletons and the reference solutions use nothing the grader refuses") {
  for (const auto& m : load_all_manifests(std::filesystem::path(GPULAB_REPO) / "labs"))
    for (const char* tree : {"labs", "solutions"})
      for (const auto& [backend, files] : m.files)
        for (const auto& f : files) {
          const auto path = std::filesystem::path(GPULAB_REPO) / tree / m.id / f;
          if (!std::filesystem::exists(path)) continue;  // the student repository has no solutions/
          std::ifstream in(path);
          const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          INFO(path.string());
          CHECK(cli::find_forbidden(text, m.forbidden).empty());
          CHECK(cli::find_forbidden(text, cli::host_calls_forbidden_everywhere(), true).empty());
          CHECK(cli::find_escaping_includes(text).empty());
        }
}

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
      "_Z12matmul_naivePKfS0_Pfiii T 0000000000000850 000000000000012e\n"
      "_ZN6gpulab14NotImplementedD0Ev W 0000000000000000 0000000000000020\n"
      "_ZL6helperv t 0000000000000010 0000000000000004\n"
      "cudaMalloc U\n"
      "fork@GLIBC_2.2.5 U\n"
      "__gmon_start__ w\n"
      "g_table B 0000000000000000 0000000000000400\n");
  CHECK(symbols.referenced == std::vector<std::string>{"cudaMalloc", "fork", "__gmon_start__"});
  CHECK(symbols.defined_global == std::vector<std::string>{"_Z12matmul_naivePKfS0_Pfiii", "g_table"});
}

TEST_CASE("the CUDA allowlist keeps launches, device memory, guarded copies, events and errors and refuses every other way back to the host") {
  const auto cuda = repo_allowlist("cuda");
  const auto symbols = cli::parse_nm(undefined(
      {"cudaMalloc", "cudaFree", "__cudaLaunchKernel", "__cudaRegisterFunction", "cudaEventElapsedTime", "cudaGetLastError",
       "_Znwm", "_ZSt20__throw_length_errorPKc", "memcpy", "sqrtf", "cudaMemcpy",  // cudaMemcpy: through its guard
       // refused: other copies, driver entry points, libraries, managed and host memory, streams
       "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpyFromSymbol", "cudaGetDriverEntryPoint",
       "cudaGetDriverEntryPointByVersion", "cuGetProcAddress_v2", "cublasSgemm_v2", "cudaMallocManaged", "cudaMallocHost",
       "cudaHostAlloc", "cudaHostRegister", "cudaStreamCreate", "cudaGraphLaunch", "dlsym", "fopen", "getenv", "write",
       "_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode", "_ZN6gpulab14compare_withinEv",
       "_ZN4toml2v36detail6parserC1Ev", "png_create_read_struct", "_ZN3fmt2v97vformatENS0_17basic_string_viewIcEE"}));
  CHECK(cli::refused_references(symbols, cuda) ==
        std::vector<std::string>{"cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpyFromSymbol",
                                 "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cuGetProcAddress_v2",
                                 "cublasSgemm_v2", "cudaMallocManaged", "cudaMallocHost", "cudaHostAlloc",
                                 "cudaHostRegister", "cudaStreamCreate", "cudaGraphLaunch", "dlsym", "fopen", "getenv",
                                 "write", "_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
                                 "_ZN6gpulab14compare_withinEv", "_ZN4toml2v36detail6parserC1Ev", "png_create_read_struct",
                                 "_ZN3fmt2v97vformatENS0_17basic_string_viewIcEE"});
}

TEST_CASE("a lab's own allowance adds to the backend's allowlist, for that lab only") {
  const auto labs = load_all_manifests(std::filesystem::path(GPULAB_REPO) / "labs");
  auto opencl = repo_allowlist("opencl");
  const auto symbols = cli::parse_nm(undefined({"clEnqueueReadBuffer"}));
  CHECK(cli::refused_references(symbols, opencl) == std::vector<std::string>{"clEnqueueReadBuffer"});
  opencl.add({"clEnqueueReadBuffer"});
  CHECK(cli::refused_references(symbols, opencl).empty());
  const auto hello = std::find_if(labs.begin(), labs.end(), [](const Manifest& m) { return m.name == "hello"; });
  REQUIRE(hello != labs.end());
  CHECK(hello->allow == std::vector<std::string>{"cudaMemcpy", "clEnqueueReadBuffer"});
  for (const auto& m : labs)
    if (m.name != "hello") CHECK(m.allow.empty());
}

TEST_CASE("the OpenCL allowlist keeps kernels, NDRanges and device buffers and refuses reads, maps, SVM, images, native kernels and extension lookups") {
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
      "_Z12matmul_naivePKfS0_Pfiii T 0 1\n_Z19matmul_naive_kernelPKfS0_Pfiii T 0 1\n"
      "_Z11matmul_fastPKfS0_Pfiii T 0 1\n_ZN6gpulab14compare_withinEv T 0 1\n");
  CHECK(cli::contract_symbols(symbols, {"matmul_naive", "matmul_fast"}) ==
        std::vector<std::string>{"_Z12matmul_naivePKfS0_Pfiii", "_Z11matmul_fastPKfS0_Pfiii"});
  CHECK(cli::version_script({"_Z1fv"}) == "{\n  global:\n    _Z1fv;\n  local: *;\n};\n");
}

TEST_CASE("the headers of a dependency file are read as the compiler wrote them, line continuations and all") {
  const std::string gcc = "x.o: /src/matmul.cu /usr/include/stdio.h \\\n /usr/local/cuda/include/cub/cub.cuh \\\n  /a\\ b/c.h\n";
  CHECK(cli::included_headers(gcc, "/src/matmul.cu") ==
        std::vector<std::string>{"/a b/c.h", "/usr/include/stdio.h", "/usr/local/cuda/include/cub/cub.cuh"});
  const std::string nvcc = "x.o : /src/t.cu \\\n    /usr/include/stdc-predef.h \\\n";
  CHECK(cli::included_headers(nvcc, "/src/t.cu") == std::vector<std::string>{"/usr/include/stdc-predef.h"});
}

TEST_CASE("a header is refused where a pattern starts a path component, and harness headers other than the student API are refused") {
  const std::vector<std::string> patterns{"cub/", "cublas", "nlohmann/"};
  const std::vector<std::string> headers{
      "/usr/local/cuda/include/cub/device/device_radix_sort.cuh", "/usr/local/cuda/include/cublas_v2.h",
      "/usr/include/nlohmann/json.hpp", "/home/me/mycub/x.h", "/usr/include/stdio.h",
      "/repo/common/include/gpulab/student/cuda.hpp", "/repo/common/include/gpulab/errors.hpp",
      "/repo/common/include/gpulab/compare.hpp", "/repo/common/include/gpulab/student/../device.hpp"};
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
  const auto dir = std::filesystem::temp_directory_path() / "gpulab-allowlist-manifest" / "02-transpose";
  std::filesystem::create_directories(dir);
  std::ifstream in(std::filesystem::path(GPULAB_REPO) / "labs" / "02-transpose" / "lab.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
