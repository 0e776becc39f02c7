// RGBA images of 8-bit channels, the format of the image labs, and their PNG files (libpng).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gpulab {

// One pixel as it lies in memory: 4 bytes, so a kernel moves it with one 32-bit load (uchar4).
struct Rgba {
  std::uint8_t r = 0, g = 0, b = 0, a = 0;
  friend bool operator==(const Rgba&, const Rgba&) = default;
};
static_assert(sizeof(Rgba) == 4);

// Row-major, top row first: pixel (x, y) is pixels[y * width + x].
struct Image {
  int width = 0;
  int height = 0;
  std::vector<Rgba> pixels;

  Image() = default;
  Image(int w, int h, Rgba fill = {}) : width(w), height(h), pixels(static_cast<std::size_t>(w) * h, fill) {}
  Rgba& at(int x, int y) { return pixels[static_cast<std::size_t>(y) * width + x]; }
  const Rgba& at(int x, int y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
  std::size_t bytes() const { return pixels.size() * sizeof(Rgba); }
};

// Reads any PNG (grey, palette, RGB, 16-bit, with or without alpha) as RGBA8; opaque when the
// file has no alpha. Throws std::runtime_error naming the file and what is wrong with it.
Image read_png(const std::filesystem::path& path);
// Writes an RGBA8 PNG, creating the folder; throws std::runtime_error naming the file on failure.
void write_png(const std::filesystem::path& path, const Image& image);

// What a student can see at a glance: |a - b| per colour channel, times `gain` (saturating), on
// black; where only alpha differs the pixel is magenta. Opaque.
Image difference_image(const Image& a, const Image& b, int gain = 16);

// A case's name as the stem of its pictures' file names: lower-case letters and digits, runs of
// anything else as one '-' ("Lena 512x512, noisy" -> "lena-512x512-noisy").
std::string picture_file_stem(const std::string& case_name);

// The pictures of a case, written in parallel (PNG compression is most of a small case's time) as
// `folder`/<stem>-input.png (only where `input` is given: labs that draw from nothing have none),
// -yours.png, -reference.png and, where the two differ, -difference.png. Returns the paths written,
// the difference last; throws std::runtime_error naming the file that could not be written.
std::vector<std::string> write_case_pictures(const std::filesystem::path& folder, const std::string& case_name,
                                             const Image* input, const Image& got, const Image& expected);

// "(r, g, b, a)", for mismatch reports.
std::string show_value(const Rgba& p);

}  // namespace gpulab
