// Lab filter's CPU reference: box, gaussian and median filters, and the reference on sampled rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "filter_reference.hpp"
#include "gpulab/image.hpp"
#include "gpulab/random.hpp"

using namespace gpulab;

namespace {
Image noise_image(int width, int height, std::uint64_t seed) {
  Rng rng(seed);
  Image image(width, height);
  for (Rgba& p : image.pixels) {
    const auto bits = rng.next();
    p = {std::uint8_t(bits), std::uint8_t(bits >> 8), std::uint8_t(bits >> 16), std::uint8_t(bits >> 24)};
  }
  return image;
}
}  // namespace

TEST_CASE("the box reference is the rounded mean of the clamped window, and radius 0 copies the image") {
  const Image noise = noise_image(7, 5, 1);
  CHECK(reference::box_filter(noise, 0).pixels == noise.pixels);
  // A 1 x 1 image: every clamped coordinate reads the one pixel, so the mean is the pixel.
  const Image one = noise_image(1, 1, 2);
  CHECK(reference::box_filter(one, 8).pixels == one.pixels);
  // Corner (0, 0), radius 1, of a 2 x 1 image with red values 0 and 10: the clamped window holds
  // 0 six times and 10 three times: (30 + 4) / 9 = 3.
  Image two(2, 1);
  two.at(0, 0) = {0, 0, 0, 0};
  two.at(1, 0) = {10, 20, 255, 1};
  const Image box = reference::box_filter(two, 1);
  CHECK(box.at(0, 0) == Rgba{3, 7, 85, 0});  // (60 + 4) / 9 = 7, (765 + 4) / 9 = 85, (3 + 4) / 9 = 0
  CHECK(box.at(1, 0) == Rgba{7, 13, 170, 1});
}

TEST_CASE("the gaussian reference spreads one bright pixel into the binomial weights, rounding after each pass") {
  CHECK(reference::binomial_weights(2) == std::vector<std::uint32_t>{1, 4, 6, 4, 1});
  CHECK(reference::binomial_weights(0) == std::vector<std::uint32_t>{1});
  Image dot(9, 9, Rgba{0, 0, 0, 255});
  dot.at(4, 4) = {255, 255, 255, 255};
  const Image h = reference::gaussian_horizontal(dot, 2);
  // Row 4 after the horizontal pass: 255 * (1 4 6 4 1) / 16, rounded half up.
  const std::uint8_t row[5] = {16, 64, 96, 64, 16};  // 15.9, 63.75, 95.6, 63.75, 15.9
  for (int k = 0; k < 5; ++k) CHECK(h.at(2 + k, 4).r == row[k]);
  const Image g = reference::gaussian_filter(dot, 2);
  CHECK(g.at(4, 4).r == (96 * 6 + 8) / 16);  // the centre: the vertical pass of the rounded row
  CHECK(g.at(0, 0).r == 0);
  CHECK(g.at(4, 4).a == 255);  // a constant channel stays constant
  CHECK(reference::gaussian_filter(dot, 0).pixels == dot.pixels);
}

TEST_CASE("the median reference removes an isolated pixel and keeps edges of flat regions") {
  Image image(6, 6, Rgba{10, 20, 30, 40});
  image.at(3, 2) = {255, 0, 255, 0};
  CHECK(reference::median_filter(image, 1).pixels == Image(6, 6, Rgba{10, 20, 30, 40}).pixels);
  // Left half dark, right half bright: a 3 x 3 or 5 x 5 median keeps the step where it is.
  Image step(8, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 8; ++x) step.at(x, y) = x < 4 ? Rgba{0, 0, 0, 0} : Rgba{200, 200, 200, 200};
  CHECK(reference::median_filter(step, 1).pixels == step.pixels);
  CHECK(reference::median_filter(step, 2).pixels == step.pixels);
  CHECK_THROWS(reference::median_filter(step, 3));
}

TEST_CASE("a filter's reference on sampled rows equals its full reference on those rows, edges included") {
  Rng rng(2024);
  Image in(97, 61);
  for (Rgba& p : in.pixels)
    p = {static_cast<std::uint8_t>(rng.next()), static_cast<std::uint8_t>(rng.next()),
         static_cast<std::uint8_t>(rng.next()), static_cast<std::uint8_t>(rng.next())};
  const std::vector<std::pair<int, std::function<Image(const Image&)>>> filters = {
      {3, [](const Image& i) { return reference::box_filter(i, 3); }},
      {8, [](const Image& i) { return reference::box_filter(i, 8); }},
      {2, [](const Image& i) { return reference::gaussian_filter(i, 2); }},
      {7, [](const Image& i) { return reference::gaussian_filter(i, 7); }},
      {1, [](const Image& i) { return reference::median_filter(i, 1); }},
      {2, [](const Image& i) { return reference::median_filter(i, 2); }}};
  for (const auto& [reach, filter] : filters) {
    const std::vector<int> rows = reference::sampled_rows(rng, in.height, reach, 6);
    for (int y = 0; y <= reach; ++y) {  // the edge rows, whose strips clamp
      CHECK(std::binary_search(rows.begin(), rows.end(), y));
      CHECK(std::binary_search(rows.begin(), rows.end(), in.height - 1 - y));
    }
    for (int y : rows) CHECK(std::binary_search(rows.begin(), rows.end(), in.height - 1 - y));  // mirror-closed
    const Image full = filter(in), sampled = reference::reference_rows(filter, in, reach, rows);
    for (int y : rows)
      for (int x = 0; x < in.width; ++x) REQUIRE(sampled.at(x, y) == full.at(x, y));
  }
  for (int radius : {1, 2}) {  // the medians' own row version
    const std::vector<int> rows = reference::sampled_rows(rng, in.height, radius, 6);
    const Image full = reference::median_filter(in, radius), sampled = reference::median_filter_rows(in, radius, rows);
    for (int y : rows)
      for (int x = 0; x < in.width; ++x) REQUIRE(sampled.at(x, y) == full.at(x, y));
  }
}

TEST_CASE("wrong pixels only along the edges point at clamping, and on an all-edge image at unwritten reads too") {
  const Image expected = noise_image(20, 12, 3);
  Image edges = expected, middle = expected;
  edges.at(0, 5).r ^= 1;    // column 0
  edges.at(19, 11).g ^= 1;  // the bottom-right corner
  CHECK(reference::edge_hint(expected, edges, 2, 12).find("within 2 pixels of an edge") != std::string::npos);
  middle.at(10, 6).b ^= 1;
  CHECK(reference::edge_hint(expected, middle, 2, 12).empty());
  CHECK(reference::edge_hint(expected, expected, 2, 12).empty());
  CHECK(reference::edge_hint(expected, edges, 2, 12).find("barrier") == std::string::npos);
  // A 3x3 image with reach 2 is all edge: a missing barrier shows there as much as a clamp.
  const Image tiny = noise_image(3, 3, 4);
  Image tiny_wrong = tiny;
  tiny_wrong.at(1, 1).a ^= 1;
  const std::string hint = reference::edge_hint(tiny, tiny_wrong, 2, 3);
  CHECK(hint.find("every pixel of this image lies within 2 pixels of an edge") != std::string::npos);
  CHECK(hint.find("a barrier after loading a tile") != std::string::npos);
}
