// The nbody manifest: what its driver relies on.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE("every nbody case, listed or random, has a positive softening and a known distribution") {
  const Manifest m = with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/08-nbody/lab.toml"), 7, true);
  std::set<std::string> listed, random;
  std::set<double> random_softenings;
  for (const auto& c : m.cases) {
    CAPTURE(c.name);
    CHECK(c.params.value("softening2", 0.01) > 0);
    const bool drawn = c.name.find("random") != std::string::npos;
    (drawn ? random : listed).insert(c.params.value("distribution", "cube"));
    if (drawn) random_softenings.insert(c.params.at("softening2").get<double>());
  }
  const std::set<std::string> all{"cube", "plummer", "wide"};
  CHECK(listed == all);
  CHECK(random == all);
  CHECK(random_softenings.size() == 2);
}

TEST_CASE("every run of nbody draws bodies of either sign just below the timing size, with either softening") {
  for (const DeviceClass device : {DeviceClass::gpu, DeviceClass::cpu}) {
    const Manifest m =
        with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/08-nbody/lab.toml"), 7, false, device);
    std::set<double> softenings;
    for (const auto& c : m.cases) {
      if (c.params.value("distribution", "cube") != "signed") continue;
      CAPTURE(c.name);
      CHECK(c.name.rfind("stress", 0) == 0);
      CHECK(c.params.at("n").get<std::int64_t>() > (device == DeviceClass::gpu ? 262144 - 32 : 4096 - 32));
      softenings.insert(c.params.at("softening2").get<double>());
    }
    CHECK(softenings.size() == 2);
  }
}

TEST_CASE("each run trims the nbody timing cases by up to 255 bodies, and the CPU one is checked in full") {
  const Manifest m = load_manifest(fs::path(GPULAB_REPO) / "labs/08-nbody/lab.toml");
  int timing = 0;
  for (const auto& c : m.cases) {
    if (!c.timing) continue;
    CAPTURE(c.name);
    const auto n = c.params.at("n").get<std::int64_t>();
    CHECK(n % 512 == 0);  // the listed count; each run takes 0..255 off
    CHECK(c.trim == std::vector<std::pair<std::string, std::int64_t>>{{"n", 255}});
    if (c.devices == std::vector<DeviceClass>{DeviceClass::cpu}) CHECK(n <= 4096);
    ++timing;
  }
  CHECK(timing == 2);  // one for GPUs, one for CPU devices
}
