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
