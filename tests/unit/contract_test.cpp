// The lab's contract (grader/contract/): lab.toml's [signatures] and the tasks' functions, made into
// the declarations and tables a lab's bindings include.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "contract.hpp"
#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

namespace {

fs::path write_lab(const std::string& text) {
  static int calls = 0;  // a folder per call and process: CTest runs test cases in parallel
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("gpulab-contract-test-{}-{}", ::getpid(), ++calls) / "07-example";
  fs::create_directories(dir);
  std::ofstream(dir / "lab.toml") << text;
  return dir / "lab.toml";
}

// A lab with two shapes of function (as the filter lab has); `tasks` are its [[tasks]] blocks.
std::string lab_with(const std::string& signatures, const std::string& tasks) {
  return fmt::format(R"toml(name = "example"
title = "An example lab"

[files]
cuda = ["example.cu"]
opencl = ["example.cl", "example_opencl.cpp"]
{}
{}
[[cases]]
name = "tiny"
n = 3
)toml",
                     signatures, tasks);
}

const char* kTwoSignatures = R"toml(
[signatures.copy]
cuda = "void(const float* in, float* out, int n)"
opencl = "void(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int n)"

[signatures.fill]
cuda = "void(float* out, int n)"
opencl = "void(const gpulab::OpenCLLab& lab, cl_mem out, int n)"
)toml";

const char* kTasks = R"toml(
[[tasks]]
name = "copy"
function = "copy_naive"
signature = "copy"

[[tasks]]
name = "copy-fast"
function = "copy_fast"
signature = "copy"

[[tasks]]
name = "fill"
function = "fill_any"
signature = "fill"
)toml";

std::string error_of(const std::string& text, const std::string& backend = "") {
  try {
    const Manifest m = load_manifest(write_lab(text));
    if (!backend.empty()) contract_header(m, backend);
  } catch (const ManifestError& e) { return e.what(); }
  return "no error";
}

}  // namespace

TEST_CASE("a lab's contract declares each task's function with its signature's type, at the manifest's line") {
  const fs::path path = write_lab(lab_with(kTwoSignatures, kTasks));
  const Manifest m = load_manifest(path);
  const std::string manifest = '"' + fs::absolute(path).lexically_normal().string() + '"';
  const std::string cuda = contract_header(m, "cuda", "out/lab_contract.hpp");
  // The type at the line of its [signatures] entry, each function at the line of its `function`.
  CHECK(cuda.find(fmt::format("#line 9 {}\nusing copy = void(const float* in, float* out, int n);", manifest)) !=
        std::string::npos);
  CHECK(cuda.find(fmt::format("#line 19 {}\ngpulab::contract::copy copy_naive;", manifest)) != std::string::npos);
  CHECK(cuda.find(fmt::format("#line 24 {}\ngpulab::contract::copy copy_fast;", manifest)) != std::string::npos);
  CHECK(cuda.find(fmt::format("#line 29 {}\ngpulab::contract::fill fill_any;", manifest)) != std::string::npos);
  // One table per signature, holding its functions only; after the declarations the lines are the header's own.
  CHECK(cuda.find("inline const std::map<std::string, copy*>& copy_functions()") != std::string::npos);
  CHECK(cuda.find("{\"copy_naive\", ::copy_naive},\n      {\"copy_fast\", ::copy_fast},\n  };") != std::string::npos);
  CHECK(cuda.find("{\"fill_any\", ::fill_any},\n  };") != std::string::npos);
  CHECK(cuda.find("\"out/lab_contract.hpp\"") != std::string::npos);
  CHECK(cuda.find("#include <cuda_runtime.h>") != std::string::npos);

  const std::string opencl = contract_header(m, "opencl");
  CHECK(opencl.find("using fill = void(const gpulab::OpenCLLab& lab, cl_mem out, int n);") != std::string::npos);
  CHECK(opencl.find("#include \"gpulab/student/opencl.hpp\"") != std::string::npos);
}

TEST_CASE("a function two tasks share is declared once, and the only signature of a lab needs no naming") {
  const std::string signature = R"toml(
[signatures.copy]
cuda = "void(const float* in, float* out, int n)"
opencl = "void(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int n)"
)toml";
  const std::string tasks = R"toml(
[[tasks]]
name = "small"
function = "copy_any"

[[tasks]]
name = "large"
function = "copy_any"
)toml";
  const Manifest m = load_manifest(write_lab(lab_with(signature, tasks)));
  REQUIRE(m.tasks.size() == 2);
  CHECK(m.tasks[0].signature == "copy");
  const std::string cuda = contract_header(m, "cuda");
  const auto first = cuda.find("gpulab::contract::copy copy_any;");
  REQUIRE(first != std::string::npos);
  CHECK(cuda.find("gpulab::contract::copy copy_any;", first + 1) == std::string::npos);
}

TEST_CASE("mistakes in a lab's signatures are refused with the manifest's line and the fix") {
  // Several signatures, and a task that names none.
  std::string tasks = kTasks;
  tasks.erase(tasks.find("signature = \"fill\"\n"), 19);
  CHECK(error_of(lab_with(kTwoSignatures, tasks)).find(":27: task 'fill' needs 'signature'") != std::string::npos);
  // A signature that is not declared.
  tasks = kTasks;
  tasks.replace(tasks.find("signature = \"fill\""), 18, "signature = \"fil\"");
  CHECK(error_of(lab_with(kTwoSignatures, tasks)).find(":30: task 'fill': 'signature' must name a table") !=
        std::string::npos);
  // A backend [files] lists without a type, and one it does not list.
  std::string signatures = kTwoSignatures;
  signatures.erase(signatures.find("opencl = \"void(const gpulab::OpenCLLab& lab, cl_mem out, int n)\"\n"), 66);
  CHECK(error_of(lab_with(signatures, kTasks)).find("[signatures.fill] has no opencl type") != std::string::npos);
  signatures = std::string(kTwoSignatures) + "hip = \"void(float* out, int n)\"\n";
  CHECK(error_of(lab_with(signatures, kTasks)).find(":15: [signatures.fill] names backend 'hip'") != std::string::npos);
  // A type that is not a function type, and a function that is not a C++ name.
  signatures = kTwoSignatures;
  signatures.replace(signatures.find("\"void(float* out, int n)\""), 25, "\"float* out, int n\"");
  CHECK(error_of(lab_with(signatures, kTasks)).find(":13: [signatures.fill] cuda must be a C++ function type") !=
        std::string::npos);
  tasks = kTasks;
  tasks.replace(tasks.find("\"fill_any\""), 10, "\"fill-any\"");
  CHECK(error_of(lab_with(kTwoSignatures, tasks)).find(":29: task 'fill': function 'fill-any' is not a C++ name") !=
        std::string::npos);
}

TEST_CASE("a function two tasks name with different signatures, or a lab without signatures, makes no contract") {
  std::string tasks = kTasks;
  tasks.replace(tasks.find("\"fill_any\""), 10, "\"copy_fast\"");
  CHECK(error_of(lab_with(kTwoSignatures, tasks), "cuda")
            .find(":29: tasks 'copy-fast' and 'fill' name function "
                  "'copy_fast' with different signatures") != std::string::npos);
  const std::string none = error_of(lab_with("", "[[tasks]]\nname = \"copy\"\nfunction = \"copy_naive\"\n"), "opencl");
  CHECK(none.find("lab.toml: no [signatures]: declare the student functions' types there") != std::string::npos);
}

TEST_CASE("every lab of the course declares its tasks' functions for each backend it has files for") {
  for (const Manifest& m : load_all_manifests(fs::path(GPULAB_REPO) / "labs")) {
    CAPTURE(m.id);
    REQUIRE_FALSE(m.signatures.empty());
    for (const auto& [backend, files] : m.files) {
      const std::string header = contract_header(m, backend);
      for (const auto& task : m.tasks) {
        CAPTURE(task.name);
        CHECK(header.find(fmt::format(" {};\n", task.function)) != std::string::npos);
        CHECK(header.find(fmt::format("{{\"{}\", ::{}}}", task.function, task.function)) != std::string::npos);
      }
    }
  }
}
