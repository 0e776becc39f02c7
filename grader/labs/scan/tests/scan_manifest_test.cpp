// The scan manifest's cases: the block task gets only lengths one block can scan.
#include <doctest/doctest.h>

#include <filesystem>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE("scan cases longer than one block of 1024 go only to the any-n and fast tasks, and some exist") {
  const Manifest m = with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/06-scan/lab.toml"), 42, true);
  int longer = 0;
  for (const auto& c : m.cases) {
    CAPTURE(c.name);
    const auto n = c.params.at("n").get<std::int64_t>();
    CHECK(n >= 1);
    if (n <= 1024) continue;
    ++longer;
    CHECK_FALSE(c.applies_to("block"));
    CHECK(c.applies_to("any-n"));
    CHECK(c.applies_to("fast"));
  }
  CHECK(longer > 0);
}
