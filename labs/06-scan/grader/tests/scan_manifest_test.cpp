// The scan manifest's cases: the block task gets only lengths one block can scan.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

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

TEST_CASE(
    "every run draws scan stress cases of words near 2^32 and of ones just below the timing size, and trims the "
    "timed length") {
  const Manifest listed = load_manifest(fs::path(GPULAB_REPO) / "labs/06-scan/lab.toml");
  for (const DeviceClass device : {DeviceClass::gpu, DeviceClass::cpu}) {
    CAPTURE(to_string(device));
    const Manifest m = with_random_cases(listed, 3, false, device);
    std::int64_t timing = 0;
    std::set<std::string> stress;
    for (const auto& c : m.cases) {
      if (!c.runs_on(device)) continue;
      if (c.timing) timing = c.params.at("n").get<std::int64_t>();
      if (c.large && c.name.rfind("stress", 0) == 0) {
        CHECK(c.applies_to("fast"));
        stress.insert(c.params.value("values", "uniform"));
      }
    }
    CHECK(timing > 0);
    CHECK(timing % 4 != 0);  // seed 3 trims a tail past the last uint4
    CHECK(stress == std::set<std::string>{"wrap", "ones"});
  }
}
