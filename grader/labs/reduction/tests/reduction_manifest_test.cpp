// The reduction manifest's correctness cases: every one tells a sum that misses or repeats one element.
#include <doctest/doctest.h>

#include <filesystem>

#include "gpulab/manifest.hpp"
#include "reduction_reference.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE("in every correctness case of the reduction lab, listed, hidden or random, one element more or less fails") {
  const Manifest listed = load_manifest(fs::path(GPULAB_REPO) / "labs/05-reduction/lab.toml");
  int checked = 0;
  for (std::uint64_t seed : {1u, 42u, 4711u}) {
    for (const auto& c : with_random_cases(listed, seed, true).cases) {
      if (c.timing) continue;
      CAPTURE(c.name);
      const auto n = c.params.at("n").get<std::int64_t>();
      const std::string distribution = c.params.value("distribution", "coarse");
      // The largest sum the distribution can make, and its unit: the worst case for the tolerance.
      reference::ExactSum worst;
      if (distribution == "fine") worst = {2.0 * n, 2.0 * n, 23};
      if (distribution == "coarse") worst = {1.875 * n, 1.875 * n, 3};
      if (distribution == "ones") worst = {1.0 * n, 1.0 * n, 0};
      REQUIRE(worst.sum > 0);
      CHECK(reference::sum_tolerance(n, worst) < 1.0);  // every element is at least 1
      if (distribution != "fine") CHECK(reference::sum_tolerance(n, worst) == 0.0);
      ++checked;
    }
  }
  CHECK(checked > 50);
}
