// The histogram manifest: what its driver relies on.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE("every histogram timing case has a length that is a multiple of 4, as its word-wise input transforms need") {
  const Manifest m = load_manifest(fs::path(GPULAB_REPO) / "labs/07-histogram/lab.toml");
  int timing = 0;
  for (const auto& c : m.cases) {
    if (!c.timing) continue;
    CAPTURE(c.name);
    CHECK(c.params.at("n").get<std::int64_t>() % 4 == 0);
    ++timing;
  }
  CHECK(timing == 2);  // one for GPUs, one for CPU devices
}

TEST_CASE("the listed histogram cases use every distribution, and the random ones draw every distribution") {
  const Manifest m = with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/07-histogram/lab.toml"), 7, true);
  std::set<std::string> listed, random;
  for (const auto& c : m.cases)
    (c.name.find("random") == std::string::npos ? listed : random).insert(c.params.value("distribution", "uniform"));
  const std::set<std::string> all{"uniform", "equal", "skewed", "text"};
  CHECK(listed == all);
  CHECK(random == all);
}
