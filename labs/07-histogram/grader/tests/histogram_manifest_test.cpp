// The histogram manifest: what its driver relies on.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE(
    "every run draws histogram stress cases of one repeated byte just below the timing size, where a block's "
    "16-bit counters overflow, on GPUs and CPU devices") {
  const Manifest listed = load_manifest(fs::path(GPULAB_REPO) / "labs/07-histogram/lab.toml");
  for (const DeviceClass device : {DeviceClass::gpu, DeviceClass::cpu}) {
    CAPTURE(to_string(device));
    const Manifest m = with_random_cases(listed, 11, false, device);
    std::int64_t timing = 0, equal = 0;
    for (const auto& c : m.cases) {
      if (!c.runs_on(device)) continue;
      if (c.timing) timing = c.params.at("n").get<std::int64_t>();
      if (c.large && c.params.value("distribution", "") == "equal" && c.name.rfind("stress", 0) == 0)
        equal = c.params.at("n").get<std::int64_t>();
    }
    REQUIRE(timing > 0);
    CHECK(equal > timing - 16);
    CHECK(equal % 16 != 0);  // a tail past the last 16-byte vector
    // 8 blocks of 256 threads per compute unit (the reference's shared kernel): on PoCL's two units,
    // 16 blocks; on an H100, 1056. Each counts n / blocks bytes of the one value.
    CHECK(equal / (device == DeviceClass::cpu ? 16 : 1056) > 65535);
  }
}

TEST_CASE("the listed histogram cases use every distribution, and the random ones draw every distribution") {
  const Manifest m = with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/07-histogram/lab.toml"), 7, true);
  std::set<std::string> listed, random;
  for (const auto& c : m.cases)
    (c.name.find("random") == std::string::npos ? listed : random).insert(c.params.value("distribution", "uniform"));
  const std::set<std::string> all{"uniform", "equal", "skewed", "text", "periodic"};
  CHECK(listed == all);
  CHECK(random == all);
}
