// The reduction manifest's cases: every correctness case tells a sum that misses or repeats one
// element, and every large case of the timed tasks is as large as the tests of the tolerance assume.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "gpulab/manifest.hpp"
#include "reduction_reference.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

namespace {

// The largest sum the distribution can make, and its unit: the worst case for the tolerance.
reference::ExactSum worst_case(std::int64_t n, const std::string& distribution) {
  reference::ExactSum worst;
  worst.n = n;
  const double size = static_cast<double>(n);
  if (distribution == "fine") worst = {n, 2.0 * size, 2.0 * size, 4.0 * size, 23};
  if (distribution == "coarse" || distribution == "signed") worst = {n, 1.875 * size, 1.875 * size, 3.75 * size, 3};
  if (distribution == "ones") worst = {n, size, size, size, 0};
  if (distribution == "lowbit") worst = {n, 2.0 * size, 2.0 * size, 4.0 * size, reference::lowbit_unit_bits(n)};
  // Balanced: magnitudes below 2, a sum four standard deviations from 0.
  if (distribution == "precision") worst = {n, 4 * 1.53 * std::sqrt(size), 2.0 * size, 4.0 * size, 23};
  return worst;
}

reference::Inputs inputs_of(const std::string& distribution) {
  return distribution == "precision" ? reference::Inputs::balanced : reference::Inputs::any;
}

}  // namespace

TEST_CASE("in every correctness case of the reduction lab, listed, hidden or random, one element more or less fails") {
  const Manifest listed = load_manifest(fs::path(GPULAB_REPO) / "labs/05-reduction/lab.toml");
  int checked = 0;
  for (std::uint64_t seed : {1u, 42u, 4711u}) {
    for (const auto& c : with_random_cases(listed, seed, true).cases) {
      if (c.timing) continue;
      CAPTURE(c.name);
      const auto n = c.params.at("n").get<std::int64_t>();
      const std::string distribution = c.params.value("distribution", "coarse");
      const reference::ExactSum worst = worst_case(n, distribution);
      REQUIRE(worst.sum_abs > 0);
      CHECK(reference::sum_tolerance(worst, inputs_of(distribution)) < 1.0);  // every element is at least 1
      if (distribution == "coarse" || distribution == "signed" || distribution == "ones" || distribution == "lowbit")
        CHECK(reference::sum_tolerance(worst, inputs_of(distribution)) == 0.0);
      ++checked;
    }
  }
  CHECK(checked > 50);
}

TEST_CASE("the reduction's timing cases and stress cases draw precision inputs, and the timed length changes per run") {
  const Manifest listed = load_manifest(fs::path(GPULAB_REPO) / "labs/05-reduction/lab.toml");
  for (const DeviceClass device : {DeviceClass::gpu, DeviceClass::cpu}) {
    CAPTURE(to_string(device));
    int timing = 0, stress_precision = 0;
    for (const auto& c : with_random_cases(listed, 7, false, device).cases) {
      if (!c.runs_on(device)) continue;
      const std::string distribution = c.params.value("distribution", "coarse");
      if (c.timing) {
        ++timing;
        CHECK(distribution == "precision");
        CHECK(c.params.at("n").get<std::int64_t>() % 4 != 0);  // seed 7 trims a tail past the last float4
      }
      if (c.name.rfind("stress", 0) == 0 && distribution == "precision") ++stress_precision;
    }
    CHECK(timing == 1);
    CHECK(stress_precision == 1);
  }
}
