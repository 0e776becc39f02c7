// End-to-end behaviour of `gpulab check` on the OpenCL backend (PoCL in CI), shown on the matmul lab's
// forbidden libraries and bonus task. Part of gpulab_integration_tests.
#include <doctest/doctest.h>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"

using namespace gpulab::testing;

TEST_CASE("a student file that uses a forbidden library is rejected with its file and line, and other labs still run") {
  SourceTree tree("forbidden-api");
  tree.replace("01-matmul/matmul_opencl.cpp", "using gpulab::check;", "using gpulab::check;\n#include <clBLAS.h>");
  const std::string other = gpulab::load_all_manifests(repo_path("labs")).front().name;
  REQUIRE(other != "matmul");
  const auto run = run_check(tree.root(), "--backend opencl --lab matmul --lab " + other);
  INFO(run.output);
  CHECK(run.status("matmul", "naive") == "rejected");
  const std::string message = run.task("matmul", "naive").at("message");
  CHECK(message.find("01-matmul/matmul_opencl.cpp:5 uses clblas") != std::string::npos);
  CHECK(other_labs_ran_correctly(run, "matmul"));
}

TEST_CASE("a bonus task that is not done costs its points but does not fail the run") {
  SourceTree tree("bonus-open");
  tree.replace("01-matmul/matmul_opencl.cpp",
               "void matmul_fast(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {",
               "void matmul_fast(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {\n"
               "  GPULAB_NOT_IMPLEMENTED(\"bonus left open\");");
  const auto run = run_check(tree.root(), "--backend opencl --lab matmul");
  INFO(run.output);
  CHECK(run.status("matmul", "fast") == "not_implemented");
  CHECK(run.status("matmul", "tiled") == "passed");
  CHECK(run.exit_code == 0);
  CHECK(run.report.at("passed") == true);
  CHECK(run.report.at("points") == run.report.at("max_points"));
}
