// The bitonic manifest's random cases: power-of-two lengths where a task requires them.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE(
    "random bitonic cases give power-of-two lengths to the tasks that require them and any length only to any-n") {
  const Manifest m = with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/03-bitonic/lab.toml"), 42, true);
  bool odd_length = false;
  for (const auto& c : m.cases) {
    const auto n = c.params.at("n").get<std::int64_t>();
    if ((n & (n - 1)) == 0) continue;
    odd_length = true;
    CAPTURE(c.name);
    for (const auto& task : m.tasks) CHECK(c.applies_to(task.name) == (task.name == "any-n"));
  }
  CHECK(odd_length);
}

TEST_CASE(
    "on a GPU every bitonic distribution is drawn as a stress case just below the timing size, and large "
    "lengths stay powers of two outside any-n") {
  // Both blocks reach beyond their max on a GPU: up to 2^23 (half the timing case) for the powers
  // of two, up to 255 keys below 2^24 for any-n.
  const std::int64_t timing = 1 << 24;
  const Manifest m =
      with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/03-bitonic/lab.toml"), 7, false, DeviceClass::gpu);
  std::map<std::string, std::vector<std::int64_t>> stressed;  // distribution -> lengths, both blocks
  for (const auto& c : m.cases) {
    if (!c.large) continue;
    const auto n = c.params.at("n").get<std::int64_t>();
    CAPTURE(c.name);
    CHECK(n < timing);
    if ((n & (n - 1)) != 0)
      for (const auto& task : m.tasks) CHECK(c.applies_to(task.name) == (task.name == "any-n"));
    if (c.name.rfind("stress", 0) == 0) stressed[c.params.at("distribution").get<std::string>()].push_back(n);
  }
  for (const char* distribution : {"sorted", "reversed", "equal", "few", "sawtooth", "high-equal"}) {
    CAPTURE(distribution);
    const auto& lengths = stressed[distribution];
    REQUIRE(lengths.size() == 2);
    CHECK(std::find(lengths.begin(), lengths.end(), timing / 2) != lengths.end());
    CHECK(std::any_of(lengths.begin(), lengths.end(), [&](std::int64_t n) { return n > timing - 256; }));
  }
  // A CPU device's timing case (2^18 keys) is the next size after both blocks' random cases: there
  // the random cases draw each distribution, and no large ones are needed.
  const Manifest cpu =
      with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/03-bitonic/lab.toml"), 7, false, DeviceClass::cpu);
  CHECK(std::none_of(cpu.cases.begin(), cpu.cases.end(), [](const Case& c) { return c.large; }));
}
