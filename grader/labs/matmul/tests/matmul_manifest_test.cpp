// The matmul manifest's random cases: drawn from the seed, named by their shape and inputs.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE("the same seed draws the same random cases, another seed other ones, and names show the shape") {
  const Manifest m = load_manifest(fs::path(GPULAB_REPO) / "labs/01-matmul/lab.toml");
  const auto first = draw_random_cases(m, 7, false), again = draw_random_cases(m, 7, false);
  const auto other = draw_random_cases(m, 8, false);
  REQUIRE(first.size() == again.size());
  bool differs = false;
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].name == again[i].name);
    CHECK(first[i].params == again[i].params);
    differs |= first[i].params != other[i].params;
    const auto& p = first[i].params;
    CHECK(first[i].name == fmt::format("random {}: {}x{}x{} inputs={}", i + 1, p.at("m").get<int>(),
                                       p.at("n").get<int>(), p.at("k").get<int>(), p.at("inputs").get<std::string>()));
  }
  CHECK(differs);
}
