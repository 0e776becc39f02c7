// The scans of a student's files before they compile (source_scan.hpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"
#include "source_scan.hpp"

using namespace gpulab;

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

TEST_CASE(
    "host code that opens files, starts processes or connects is refused in every lab, even when hidden by a "
    "namespace") {
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
      "#include \"gpulab/student/cuda.hpp\"\n#include </root/solutions/01-saxpy/saxpy.cu>\n"
      "  #  include \"../../solutions/x.cu\"\n// #include \"/etc/passwd\"\n#define P \"x.h\"\n#include P\n#embed "
      "\"a.bin\"\n");
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
          const auto path = gpulab::testing::tree_path(tree) / m.id / f;
          if (!std::filesystem::exists(path)) continue;  // the student repository has no solutions/
          std::ifstream in(path);
          const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          INFO(path.string());
          CHECK(cli::find_forbidden(text, m.forbidden).empty());
          CHECK(cli::find_forbidden(text, cli::host_calls_forbidden_everywhere(), true).empty());
          CHECK(cli::find_escaping_includes(text).empty());
        }
}
