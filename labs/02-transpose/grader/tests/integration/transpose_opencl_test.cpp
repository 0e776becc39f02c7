// End-to-end behaviour of `gpulab check` on the OpenCL backend (PoCL in CI), shown on the transpose lab's
// kernels: what a student sees for broken kernels and host code. Part of gpulab_integration_tests.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

TEST_CASE("a wrong kernel fails with a mismatch report that names the wrong rows and columns") {
  SourceTree tree("wrong-kernel");
  // Copies instead of transposing: right for 1x1 and single rows or columns, wrong elsewhere.
  tree.replace("02-transpose/transpose.cl", "out[(size_t)col * rows + row] = in[(size_t)row * cols + col]",
               "out[(size_t)row * cols + col] = in[(size_t)row * cols + col]");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose --task naive");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK(run.status("transpose", "naive") == "wrong_result");
  const auto& naive = run.task("transpose", "naive");
  CHECK(naive.at("cases_passed").get<int>() >= 3);
  CHECK(naive.at("cases_passed") < naive.at("cases_total"));
  const std::string details = naive.at("details");
  CHECK(details.find("elements wrong") != std::string::npos);
  CHECK(details.find("expected") != std::string::npos);
  CHECK(details.find("wrong rows:") != std::string::npos);
  CHECK(details.find("wrong columns:") != std::string::npos);
}

TEST_CASE("a kernel that never finishes is killed, reported as timed out, and the next task still runs") {
  SourceTree tree("hanging-kernel");
  tree.append(
      "02-transpose/transpose.cl",
      "__kernel void transpose_hang_kernel(__global const float* in, __global float* out, int rows, int cols) {\n"
      "  volatile __global float* flag = out;  /* waits for a value nobody writes */\n"
      "  while (flag[0] != 12345.0f) {}\n}");
  tree.replace("02-transpose/transpose_opencl.cpp", "lab.kernel(\"transpose_naive_kernel\")",
               "lab.kernel(\"transpose_hang_kernel\")");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose --timeout 4");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "timeout");
  CHECK(run.task("transpose", "naive").at("message").get<std::string>().find("timed out after 4 s") !=
        std::string::npos);
  CHECK(ran_correctly(run.task("transpose", "optimized")));
}

TEST_CASE("a kernel that does not compile is reported with the compiler's file and line") {
  SourceTree tree("kernel-compile-error");
  tree.replace("02-transpose/transpose.cl", "const int col = get_global_id(0);", "const int col = get_global_id(0)");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK(run.status("transpose", "naive") == "compile_error");
  CHECK(run.task("transpose", "naive").at("message").get<std::string>().find("transpose.cl does not compile") !=
        std::string::npos);
  CHECK(run.task("transpose", "naive").at("details").get<std::string>().find("transpose.cl:7:") != std::string::npos);
}

TEST_CASE("host code that does not compile is reported with the compiler's file and line, and other labs still run") {
  SourceTree tree("host-compile-error");
  tree.replace("02-transpose/transpose_opencl.cpp", "gpulab::set_args(kernel, in, out, rows, cols);",
               "gpulab::set_args(kernel, in, out, rows, cols)");
  const auto run = run_check(tree.root(), "--backend opencl");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "compile_error");
  CHECK(run.task("transpose", "naive").at("details").get<std::string>().find("02-transpose/transpose_opencl.cpp:") !=
        std::string::npos);
  CHECK(other_labs_ran_correctly(run, "transpose"));
}

TEST_CASE("a re-check with nothing changed relinks nothing, and an edit to a host file rebuilds the runner") {
  SourceTree tree("relink-only-on-change");
  std::string output;
  REQUIRE(run_build("--backend opencl --lab transpose --source " + tree.root().string(), output) == 0);
  // The runner is build/students/<folder>-<hash of its path>/<lab>/<backend>/runner.
  fs::path runner;
  for (const auto& entry : fs::directory_iterator(fs::path(GPULAB_CLI).parent_path() / "students"))
    if (entry.path().filename().string().rfind("relink-only-on-change-", 0) == 0)
      runner = entry.path() / "02-transpose" / "opencl" / "runner";
  REQUIRE(fs::exists(runner));
  const auto built = fs::last_write_time(runner);
  REQUIRE(run_build("--backend opencl --lab transpose --source " + tree.root().string(), output) == 0);
  CHECK(fs::last_write_time(runner) == built);
  tree.append("02-transpose/transpose_opencl.cpp", "// edited");
  REQUIRE(run_build("--backend opencl --lab transpose --source " + tree.root().string(), output) == 0);
  CHECK(fs::last_write_time(runner) > built);
}

TEST_CASE("a crash in host code is reported as a crash and the other tasks still run") {
  SourceTree tree("host-crash");
  tree.replace("02-transpose/transpose_opencl.cpp", "cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");",
               "cl_kernel kernel = lab.kernel(\"transpose_naive_kernel\");\n  *(volatile int*)nullptr = 1;");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "crashed");
  CHECK(run.task("transpose", "naive").at("message").get<std::string>().find("SIGSEGV") != std::string::npos);
  CHECK(ran_correctly(run.task("transpose", "optimized")));
}

TEST_CASE("a failing OpenCL call in student code is reported with the call's own description") {
  SourceTree tree("bad-launch");
  // A work-group size that contradicts reqd_work_group_size(32, 8, 1) in the kernel.
  tree.replace("02-transpose/transpose_opencl.cpp", "const size_t local[2] = {tile, rows_per_pass};",
               "const size_t local[2] = {tile / 2, rows_per_pass};");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose --task optimized");
  INFO(run.output);
  CHECK(run.status("transpose", "optimized") == "error");
  const std::string message = run.task("transpose", "optimized").at("message");
  CHECK(message.find("launching transpose_tiled_kernel") != std::string::npos);
  CHECK(message.find("CL_INVALID_WORK_GROUP_SIZE") != std::string::npos);
}
