// What a build shows of the compilers' output (student_build.hpp, and the OpenCL runtime build log).
#include <doctest/doctest.h>

#include "gpulab/backend/opencl.hpp"
#include "student_build.hpp"

using namespace gpulab;

TEST_CASE("compiler output is cut to the errors, with repository paths made relative") {
  const std::string output =
      "/repo/labs/01-saxpy/saxpy.cu(3): warning: unused variable\n"
      "/repo/labs/01-saxpy/saxpy.cu(12): error: expected a \";\"\n"
      "  int x = 1\n"
      "1 error detected\n";
  const std::string trimmed = cli::trim_compiler_output(output, "/repo/");
  CHECK(trimmed.rfind("labs/01-saxpy/saxpy.cu(12): error", 0) == 0);
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
  CHECK(opencl::name_source_in_log("<source>:12:5: error: use of undeclared identifier", "saxpy.cl") ==
        "saxpy.cl:12:5: error: use of undeclared identifier");
  CHECK(opencl::name_source_in_log("<kernel>:3:1: error: x", "saxpy.cl") == "saxpy.cl:3:1: error: x");
}

TEST_CASE("a compiler stopped by a limit is not called a compile error of the code: the limit and the fix are named") {
  cli::BuildCommandOutput c;
  c.status = 1;
  c.output = "x.cpp:3:1: error: invalid conversion\n";
  CHECK(cli::compile_failure_message("labs/02-transpose/x.cpp", c) == "labs/02-transpose/x.cpp does not compile");
  c.stopped_by = "when its messages reached 16 MiB, the output limit per file";
  const std::string stopped = cli::compile_failure_message("labs/02-transpose/x.cpp", c);
  CHECK(stopped.rfind("labs/02-transpose/x.cpp could not be compiled: the compiler was stopped when its messages "
                      "reached 16 MiB, the output limit per file — fix the first errors below",
                      0) == 0);
  CHECK(stopped.find("does not compile") == std::string::npos);
  c.stopped_by = "after 300 s, the time limit";
  CHECK(cli::compile_failure_message("x.cu", c).find("stopped after 300 s, the time limit — something in the file "
                                                     "makes the compiler work without end") != std::string::npos);
}
