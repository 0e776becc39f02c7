// RGBA images and their PNG files (gpulab/image.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpulab/image.hpp"

using namespace gpulab;

TEST_CASE("a PNG written by the harness reads back pixel for pixel, and a broken file is named") {
  const auto dir = std::filesystem::temp_directory_path() / "gpulab-png-test";
  Image noise(13, 7);  // every channel different at every pixel, alpha too
  for (int y = 0; y < noise.height; ++y)
    for (int x = 0; x < noise.width; ++x)
      noise.at(x, y) = {static_cast<std::uint8_t>(x * 19 + y), static_cast<std::uint8_t>(y * 37 + x),
                        static_cast<std::uint8_t>(x * y * 5), static_cast<std::uint8_t>(250 - x - y)};
  write_png(dir / "noise.png", noise);
  const Image back = read_png(dir / "noise.png");
  CHECK(back.width == 13);
  CHECK(back.height == 7);
  CHECK(back.pixels == noise.pixels);
  // The photographs of the lab are RGB: they read as opaque RGBA.
  const Image photo = read_png(std::filesystem::path(GPULAB_IMAGES_DIR) / "chelsea.png");
  CHECK(photo.width == 451);
  CHECK(photo.height == 300);
  CHECK(std::all_of(photo.pixels.begin(), photo.pixels.end(), [](const Rgba& p) { return p.a == 255; }));
  { std::ofstream(dir / "broken.png") << "not a png"; }
  CHECK_THROWS_WITH(read_png(dir / "broken.png"), doctest::Contains("broken.png"));
  CHECK_THROWS_WITH(read_png(dir / "missing.png"), doctest::Contains("missing.png"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a case's name becomes a picture file stem of lower-case letters, digits and single dashes") {
  CHECK(gpulab::picture_file_stem("Lena 512x512, noisy") == "lena-512x512-noisy");
  CHECK(gpulab::picture_file_stem("spiral 4096x4096 (timing)!") == "spiral-4096x4096-timing");
  CHECK(gpulab::picture_file_stem("--") == "");
}

TEST_CASE(
    "a case's pictures are the input where there is one, yours, the reference, and the difference only where they "
    "differ") {
  const auto dir = std::filesystem::temp_directory_path() / "gpulab-case-pictures-test";
  std::filesystem::remove_all(dir);
  Image input(4, 3), got(4, 3), expected(4, 3);
  got.at(1, 2) = {9, 9, 9, 255};
  const auto names = [](const std::vector<std::string>& paths) {
    std::vector<std::string> files;
    for (const auto& p : paths) files.push_back(std::filesystem::path(p).filename().string());
    return files;
  };
  const auto drawn = write_case_pictures(dir, "Spiral 4x3", nullptr, got, expected);
  CHECK(names(drawn) ==
        std::vector<std::string>{"spiral-4x3-yours.png", "spiral-4x3-reference.png", "spiral-4x3-difference.png"});
  CHECK(read_png(drawn.back()).pixels == difference_image(got, expected).pixels);
  const auto filtered = write_case_pictures(dir, "blur", &input, expected, expected);
  CHECK(names(filtered) == std::vector<std::string>{"blur-input.png", "blur-yours.png", "blur-reference.png"});
  for (const auto& p : filtered) CHECK(std::filesystem::exists(p));
  std::filesystem::remove_all(dir);
}
