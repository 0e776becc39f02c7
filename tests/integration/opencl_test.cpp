// End-to-end behaviour of `gpulab check` on the OpenCL backend (PoCL in CI): what a student and
// an instructor see for correct, unfinished and broken code.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

namespace {
// Whether a task computed every case right. Speed on this CPU is not asserted: CI is a loaded
// 2-core machine, and the GPU test proves the thresholds separate naive from optimized kernels.
bool ran_correctly(const nlohmann::json& task) {
  const std::string status = task.at("status");
  return (status == "passed" || status == "too_slow") && task.at("cases_passed") == task.at("cases_total");
}
}  // namespace

TEST_CASE("every reference solution passes every task on OpenCL") {
  const auto run = run_check(repo_path("solutions"), "--backend opencl");
  INFO(run.output);
  REQUIRE(run.report.is_object());
  bool all_fast_enough = true;
  for (const auto& lab : run.report.at("labs"))
    for (const auto& task : lab.at("tasks")) {
      CAPTURE(task.at("task"));
      CHECK(ran_correctly(task));
      CHECK(!task.contains("finding"));  // no buffer violation, nothing faster than the device
      all_fast_enough &= task.at("status") == "passed";
    }
  if (all_fast_enough) {  // the usual case; a loaded machine may leave a CPU speed bound short
    CHECK(run.exit_code == 0);
    CHECK(run.report.at("passed") == true);
    CHECK(run.report.at("points").get<double>() > run.report.at("max_points").get<double>());  // with the bonus
    CHECK(run.output.find("PASSED") != std::string::npos);
  }
  // The timed transpose was measured against the device's own copy bandwidth.
  const auto& optimized = run.task("transpose", "optimized");
  CHECK(optimized.at("rate").get<double>() > 0);
  CHECK(optimized.at("metric") == "copy_fraction");
  CHECK(optimized.at("ratio").get<double>() > 0);
}

TEST_CASE("a fresh skeleton reports each task as not implemented, naming the file and line of the TODO") {
  const auto run = run_check(repo_path("labs"), "--backend opencl");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  for (const auto& [lab, task, file] : {std::tuple{"hello", "hello", "labs/00-hello/hello_opencl.cpp:"},
                                        std::tuple{"transpose", "naive", "labs/02-transpose/transpose_opencl.cpp:"},
                                        std::tuple{"transpose", "optimized", "labs/02-transpose/transpose_opencl.cpp:"}}) {
    CAPTURE(task);
    CHECK(run.status(lab, task) == "not_implemented");
    CHECK(run.task(lab, task).at("message").get<std::string>().find(file) != std::string::npos);
  }
  CHECK(run.output.find("not implemented") != std::string::npos);
}

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
  tree.append("02-transpose/transpose.cl",
              "__kernel void transpose_hang_kernel(__global const float* in, __global float* out, int rows, int cols) {\n"
              "  volatile __global float* flag = out;  /* waits for a value nobody writes */\n"
              "  while (flag[0] != 12345.0f) {}\n}");
  tree.replace("02-transpose/transpose_opencl.cpp", "lab.kernel(\"transpose_naive_kernel\")",
               "lab.kernel(\"transpose_hang_kernel\")");
  const auto run = run_check(tree.root(), "--backend opencl --lab transpose --timeout 4");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "timeout");
  CHECK(run.task("transpose", "naive").at("message").get<std::string>().find("timed out after 4 s") != std::string::npos);
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
  CHECK(run.status("hello", "hello") == "passed");
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

TEST_CASE("a missing student file is named, with how to restore it") {
  SourceTree tree("missing-file");
  tree.remove("00-hello/hello.cl");
  const auto run = run_check(tree.root(), "--backend opencl --lab hello");
  INFO(run.output);
  CHECK(run.status("hello", "hello") == "compile_error");
  const std::string message = run.task("hello", "hello").at("message");
  CHECK(message.find("missing file") != std::string::npos);
  CHECK(message.find("hello.cl") != std::string::npos);
}

TEST_CASE("a lab is chosen by folder, name or number, and a wrong name lists the labs") {
  for (const char* lab : {"02-transpose", "transpose", "2"}) {
    const auto run = run_check(repo_path("solutions"), std::string("--backend opencl --task naive --lab ") + lab);
    CAPTURE(lab);
    REQUIRE(run.report.is_object());
    REQUIRE(run.report.at("labs").size() == 1);
    CHECK(run.report.at("labs")[0].at("id") == "02-transpose");
  }
  const auto bad = run_check(repo_path("solutions"), "--backend opencl --lab nosuchlab");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("LAB=nosuchlab matches no lab; the labs are:") != std::string::npos);
  CHECK(bad.output.find(" transpose") != std::string::npos);
}

TEST_CASE("the report names the seed, and the same seed gives the same inputs") {
  const auto run = run_check(repo_path("solutions"), "--backend opencl --lab hello --seed 12345");
  CHECK(run.report.at("seed") == 12345);
  CHECK(run.output.find("SEED=12345 reproduces this run") != std::string::npos);
}

TEST_CASE("a student file that uses a forbidden library is rejected with its file and line, and other labs still run") {
  SourceTree tree("forbidden-api");
  tree.replace("01-matmul/matmul_opencl.cpp", "using gpulab::check;", "using gpulab::check;\n#include <clBLAS.h>");
  const auto run = run_check(tree.root(), "--backend opencl --lab matmul --lab hello");
  INFO(run.output);
  CHECK(run.status("matmul", "naive") == "rejected");
  const std::string message = run.task("matmul", "naive").at("message");
  CHECK(message.find("01-matmul/matmul_opencl.cpp:5 uses clblas") != std::string::npos);
  CHECK(run.status("hello", "hello") == "passed");
}

TEST_CASE("a bonus task that is not done costs its points but does not fail the run") {
  SourceTree tree("bonus-open");
  tree.replace("01-matmul/matmul_opencl.cpp", "void matmul_fast(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {",
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

TEST_CASE("an image filter that clamps edges wrongly is told so, with pictures of the input, its output, the reference and the difference") {
  SourceTree tree("filter-wrong-edge");
  // Clamps x to width - 2 instead of width - 1: only pixels near the right edge come out wrong.
  tree.replace("04-filter/filter.cl", "row[clamp_to(x + dx, width)]", "row[clamp_to(x + dx, width - 1)]");
  const auto run = run_check(tree.root(), "--backend opencl --lab filter --task box");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK(run.status("filter", "box") == "wrong_result");
  const std::string details = run.task("filter", "box").at("details");
  CHECK(details.find("within") != std::string::npos);
  CHECK(details.find("of an edge: check how the kernel clamps") != std::string::npos);
  CHECK(details.find("-difference.png") != std::string::npos);
  // The photograph cases have all four pictures, and the difference image of a wrong one exists.
  bool astronaut_pictures = false;
  for (const auto& c : run.task("filter", "box").at("cases")) {
    if (!c.contains("pictures")) continue;
    for (const auto& path : c.at("pictures")) CHECK(fs::exists(path.get<std::string>()));
    if (c.at("name").get<std::string>().starts_with("astronaut")) astronaut_pictures = c.at("pictures").size() == 4;
  }
  CHECK(astronaut_pictures);
  CHECK(run.output.find("pictures (input, yours, reference") != std::string::npos);
}
