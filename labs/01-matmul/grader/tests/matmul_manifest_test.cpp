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
    const std::string shape =
        fmt::format("random {}: {}x{}x{}", i + 1, p.at("m").get<int>(), p.at("n").get<int>(), p.at("k").get<int>());
    const std::string inputs = fmt::format(" inputs={}", p.at("inputs").get<std::string>());
    CHECK(first[i].name.starts_with(shape));  // the residue cases say which class each size is in between
    CHECK(first[i].name.ends_with(inputs));
  }
  CHECK(differs);
}

TEST_CASE("matmul is timed on no-cancel inputs, and every run draws no-cancel inputs just below the timing size") {
  for (const DeviceClass device : {DeviceClass::gpu, DeviceClass::cpu}) {
    const Manifest m =
        with_random_cases(load_manifest(fs::path(GPULAB_REPO) / "labs/01-matmul/lab.toml"), 7, false, device);
    const int top = device == DeviceClass::gpu ? 4096 : 512;
    int timing = 0, stress = 0;
    for (const auto& c : m.cases) {
      CAPTURE(c.name);
      if (c.timing && c.runs_on(device)) {
        CHECK(c.params.at("inputs") == "no-cancel");
        ++timing;
      }
      if (c.name.rfind("stress", 0) != 0) continue;
      ++stress;
      CHECK(c.params.at("inputs") == "no-cancel");
      for (const char* dim : {"m", "n", "k"}) {
        const int size = c.params.at(dim).get<int>();
        CHECK(size < top);
        CHECK(size > top - 8);
      }
    }
    CHECK(timing == 1);
    CHECK(stress == 1);
  }
}
