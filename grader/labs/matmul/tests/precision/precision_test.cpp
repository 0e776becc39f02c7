// The matmul bound catches lost precision: planted naive kernels (solutions/01-matmul/precision/) that
// round their inputs to half or bfloat16, keep their sums in half precision or drop a term fail every
// case with no-cancel inputs, listed and random, small and large, for several seeds.
// Part of gpulab_precision_tests: OpenCL by default (PoCL in CI); `--backend=cuda` runs the CUDA twins.
#include <doctest/doctest.h>

#include <string>

#include "cli_harness.hpp"
#include "planted_backend.hpp"

using namespace gpulab::testing;

namespace {

// A copy of the solutions whose naive matmul kernel is the planted one.
SourceTree planted(const std::string& fault) {
  const std::string extension = planted_backend() == "cuda" ? ".cu" : ".cl";
  const std::string file = "01-matmul/matmul" + extension;
  SourceTree tree("precision-" + planted_backend() + "-" + fault);
  const std::string text = read_file(tree.root() / file);
  const std::string start = "// --8<-- [start:naive]\n", end = "// --8<-- [end:naive]";
  const auto from = text.find(start), to = text.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const std::string naive = text.substr(from + start.size(), to - from - start.size());
  tree.replace(file, naive, read_file(repo_path("solutions/01-matmul/precision/" + fault + extension)));
  return tree;
}

void check_fails_every_no_cancel_case(const std::string& fault) {
  const SourceTree tree = planted(fault);
  for (const int seed : {1, 2}) {
    CAPTURE(seed);
    const auto run = run_check(
        tree.root(), "--backend " + planted_backend() + " --lab matmul --task naive --seed " + std::to_string(seed));
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
