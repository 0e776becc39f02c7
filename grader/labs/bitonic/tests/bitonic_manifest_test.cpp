// The bitonic manifest's random cases: power-of-two lengths where a task requires them.
#include <doctest/doctest.h>

#include <filesystem>

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
