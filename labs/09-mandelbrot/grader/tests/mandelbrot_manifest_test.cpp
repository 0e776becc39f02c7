// The Mandelbrot manifest's large and stress cases: what a kernel wrong only on large images meets.
#include <doctest/doctest.h>

#include <filesystem>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

TEST_CASE(
    "on a GPU the mandelbrot cases reach just below 4096 x 4096, with deep zooms and the classic view's "
    "interior among the stress cases; a CPU device needs none") {
  const auto path = fs::path(GPULAB_REPO) / "labs/09-mandelbrot/lab.toml";
  const Manifest m = with_random_cases(load_manifest(path), 11, false, DeviceClass::gpu);
  int near_timing = 0, deep = 0, classic = 0;
  for (const auto& c : m.cases) {
    if (!c.large) continue;
    CAPTURE(c.name);
    const auto width = c.params.at("width").get<std::int64_t>(), height = c.params.at("height").get<std::int64_t>();
    CHECK(width <= 4096);
    CHECK(height <= 4096);
    near_timing += width > 4096 - 64 && height > 4096 - 64;
    if (c.name.rfind("stress", 0) != 0) continue;
    deep += c.params.value("span", 1.0) < 0.001;
    classic += c.params.contains("center") && c.params.value("max_iter", 0) == 256;
  }
  CHECK(near_timing >= 4);  // the first large case and every stress case
  CHECK(deep == 2);
  CHECK(classic == 1);
  const Manifest cpu = with_random_cases(load_manifest(path), 11, false, DeviceClass::cpu);
  CHECK(std::none_of(cpu.cases.begin(), cpu.cases.end(), [](const Case& c) { return c.large; }));
}
