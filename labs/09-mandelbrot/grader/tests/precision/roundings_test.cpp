// The Mandelbrot check is as wide as the legitimate designs need and no wider: the naive kernel
// with each rounding a compiler may choose (solutions/09-mandelbrot/roundings/: multiply-adds fused
// in either operand order, the point's coordinates fused, the orbit in double) passes every case,
// listed and random, for several seeds; the planted lower-precision kernels of
// solutions/09-mandelbrot/verdicts.toml fail (gpulab_verdict_tests).
// Part of gpulab_precision_tests: OpenCL by default (PoCL in CI); `--backend=cuda` runs the CUDA twins.
#include <doctest/doctest.h>

#include <string>

#include "cli_harness.hpp"
#include "planted_backend.hpp"

using namespace gpulab::testing;

namespace {

// A copy of the solutions whose orbit (start_orbit and step) rounds as `rounding` does.
SourceTree with_rounding(const std::string& rounding) {
  const std::string extension = planted_backend() == "cuda" ? ".cu" : ".cl";
  const std::string file = "09-mandelbrot/mandelbrot" + extension;
  SourceTree tree("roundings-" + planted_backend() + "-" + rounding);
  const std::string text = read_file(tree.root() / file);
  const std::string start = "// --8<-- [start:orbit]\n", end = "// --8<-- [end:orbit]";
  const auto from = text.find(start), to = text.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const std::string orbit = text.substr(from + start.size(), to - from - start.size());
  tree.replace(file, orbit, read_file(repo_path("solutions/09-mandelbrot/roundings/" + rounding + extension)));
  return tree;
}

void check_passes_every_case(const std::string& rounding) {
  const SourceTree tree = with_rounding(rounding);
  for (const int seed : {1, 2}) {
    CAPTURE(seed);
    const auto run = run_check(tree.root(), "--backend " + planted_backend() +
                                                " --lab mandelbrot --task naive --seed " + std::to_string(seed));
    INFO(run.output);
    REQUIRE(run.report.is_object());
    const auto& naive = run.task("mandelbrot", "naive");
    CHECK(naive.at("status") == "passed");
    int random = 0;
    for (const auto& c : naive.at("cases")) random += c.at("name").get<std::string>().rfind("random ", 0) == 0;
    CHECK(random >= 6);
  }
}

}  // namespace

TEST_CASE("a Mandelbrot kernel whose multiply-adds are fused as written passes every case") {
  check_passes_every_case("fused");
}

TEST_CASE("a Mandelbrot kernel whose multiply-adds are fused in the other operand order passes every case") {
  check_passes_every_case("fused-other");
}

TEST_CASE("a Mandelbrot kernel that computes the point's coordinates as one fma each passes every case") {
  check_passes_every_case("fused-coordinates");
}

TEST_CASE("a Mandelbrot kernel that iterates in double precision passes every case") {
  check_passes_every_case("double");
}
