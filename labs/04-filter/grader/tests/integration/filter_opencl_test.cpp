// End-to-end behaviour of `gpulab check` on the OpenCL backend (PoCL in CI), shown on the filter lab's
// image output: what a student sees for a wrong filter. Part of gpulab_integration_tests.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

TEST_CASE(
    "an image filter that clamps edges wrongly is told so, with pictures of the input, its output, the reference and "
    "the difference") {
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
  CHECK(run.output.find("pictures (yours, the reference") != std::string::npos);
}
