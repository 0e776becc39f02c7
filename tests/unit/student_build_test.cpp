#include <doctest/doctest.h>

#include "gpulab/backend/opencl.hpp"
#include "student_build.hpp"

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
