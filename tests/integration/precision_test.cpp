// The matmul bound catches lost precision: planted naive kernels (tests/fixtures/precision/) that round
// their inputs to half or bfloat16, keep their sums in half precision or drop a term fail every case
// with no-cancel inputs, listed and random, small and large, for several seeds.
// OpenCL by default (PoCL in CI); `--backend=cuda` runs the CUDA twins and exits 77 (skipped) without
// a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "cli_harness.hpp"

using namespace gpulab::testing;

namespace {

std::string g_backend = "opencl";

// A copy of the solutions whose naive matmul kernel is the planted one.
SourceTree planted(const std::string& fault) {
  const std::string extension = g_backend == "cuda" ? ".cu" : ".cl";
  const std::string file = "01-matmul/matmul" + extension;
  SourceTree tree("precision-" + g_backend + "-" + fault);
  const std::string text = read_file(tree.root() / file);
  const std::string start = "// --8<-- [start:naive]\n", end = "// --8<-- [end:naive]";
  const auto from = text.find(start), to = text.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const std::string naive = text.substr(from + start.size(), to - from - start.size());
  tree.replace(file, naive, read_file(repo_path("tests/fixtures/precision/" + fault + extension)));
  return tree;
}

void check_fails_every_no_cancel_case(const std::string& fault) {
  const SourceTree tree = planted(fault);
  for (const int seed : {1, 2}) {
    CAPTURE(seed);
    const auto run = run_check(tree.root(), "--backend " + g_backend + " --lab matmul --task naive --seed " +
                                                std::to_string(seed));
    INFO(run.output);
    REQUIRE(run.report.is_object());
    const auto& naive = run.task("matmul", "naive");
    CHECK(naive.at("status") == "wrong_result");
    int no_cancel = 0, random = 0;
    for (const auto& c : naive.at("cases")) {
      const std::string name = c.at("name");
      if (name.find("no-cancel") == std::string::npos) continue;
      CAPTURE(name);
      ++no_cancel;
      random += name.rfind("random ", 0) == 0;
      CHECK(c.at("passed") == false);
    }
    CHECK(no_cancel >= 6);  // three listed (k = 17, 257, 4099), three random
    CHECK(random >= 3);
  }
}

}  // namespace

TEST_CASE("a matmul kernel that rounds its inputs to half precision fails every no-cancel case") {
  check_fails_every_no_cancel_case("half-inputs");
}

TEST_CASE("a matmul kernel that rounds its inputs to bfloat16 fails every no-cancel case") {
  check_fails_every_no_cancel_case("bfloat16-inputs");
}

TEST_CASE("a matmul kernel that keeps its sums in half precision fails every no-cancel case") {
  check_fails_every_no_cancel_case("half-sums");
}

TEST_CASE("a matmul kernel that drops the last of the k terms fails every no-cancel case") {
  check_fails_every_no_cancel_case("dropped-term");
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--backend=", 0) == 0) g_backend = std::string(argv[i]).substr(10);
  if (g_backend == "cuda") {
    std::string output;
    run_command(std::string("'") + GPULAB_CLI + "' devices", output);
    if (output.find("cuda: no device") != std::string::npos || output.find("cuda:") == std::string::npos) {
      std::puts("no CUDA device: the CUDA precision tests are skipped");
      return 77;
    }
  }
  doctest::Context context(argc, argv);
  return context.run();
}
