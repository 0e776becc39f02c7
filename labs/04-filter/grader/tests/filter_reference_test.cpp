// Lab filter's CPU reference: box, gaussian and median filters against their definitions.
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

namespace {
// The definitions, written the obvious way: the sum of the clamped window, the middle of its sorted values.
Image box_by_definition(const Image& in, int radius) {
  Image out(in.width, in.height);
  const unsigned n = static_cast<unsigned>((2 * radius + 1) * (2 * radius + 1));
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      unsigned sum[4] = {};
      for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx) {
          const Rgba& p = in.at(std::clamp(x + dx, 0, in.width - 1), std::clamp(y + dy, 0, in.height - 1));
          sum[0] += p.r, sum[1] += p.g, sum[2] += p.b, sum[3] += p.a;
        }
      auto mean = [n](unsigned s) { return static_cast<std::uint8_t>((s + n / 2) / n); };
      out.at(x, y) = {mean(sum[0]), mean(sum[1]), mean(sum[2]), mean(sum[3])};
    }
  return out;
}

Image median_by_definition(const Image& in, int radius) {
  Image out(in.width, in.height);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      std::vector<std::uint8_t> v[4];
      for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx) {
          const Rgba& p = in.at(std::clamp(x + dx, 0, in.width - 1), std::clamp(y + dy, 0, in.height - 1));
          v[0].push_back(p.r), v[1].push_back(p.g), v[2].push_back(p.b), v[3].push_back(p.a);
        }
      std::uint8_t m[4];
      for (int c = 0; c < 4; ++c) {
        std::sort(v[c].begin(), v[c].end());
        m[c] = v[c][v[c].size() / 2];
      }
      out.at(x, y) = {m[0], m[1], m[2], m[3]};
    }
  return out;
}

// One pass of the gaussian by its definition: per pixel and channel, the clamped weighted sum, rounded.
Image binomial_pass_by_definition(const Image& in, int radius, bool horizontal) {
  const std::vector<std::uint32_t> w = reference::binomial_weights(radius);
  Image out(in.width, in.height);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      unsigned sum[4] = {};
      for (int k = -radius; k <= radius; ++k) {
        const Rgba& p =
            horizontal ? in.at(std::clamp(x + k, 0, in.width - 1), y) : in.at(x, std::clamp(y + k, 0, in.height - 1));
        const unsigned weight = w[static_cast<std::size_t>(k + radius)];
        sum[0] += weight * p.r, sum[1] += weight * p.g, sum[2] += weight * p.b, sum[3] += weight * p.a;
      }
      auto round = [radius](unsigned s) {
        return static_cast<std::uint8_t>((s + ((1u << 2 * radius) >> 1)) >> 2 * radius);
      };
      out.at(x, y) = {round(sum[0]), round(sum[1]), round(sum[2]), round(sum[3])};
    }
  return out;
}

// Noise with few distinct values (ties in every window) or the full range, and saturated pixels.
Image test_image(int width, int height, std::uint64_t seed, unsigned values) {
  Rng rng(seed);
  Image image(width, height);
  for (Rgba& p : image.pixels) {
    const auto bits = rng.next();
    auto channel = [&](int shift) {
      const unsigned v = static_cast<unsigned>(bits >> shift) % values;
      return static_cast<std::uint8_t>(values == 256 ? v : v * 255 / (values - 1));
    };
    p = {channel(0), channel(8), channel(16), channel(24)};
  }
  return image;
}
}  // namespace

TEST_CASE(
    "the sliding box, the row-wise gaussian and the lane-wise median equal their definitions at every radius, ties "
    "and edges included") {
  for (const auto& [width, height] : {std::pair{1, 1}, {1, 9}, {23, 1}, {37, 29}, {70, 3}}) {
    for (unsigned values : {2u, 5u, 256u}) {
      const Image in = test_image(width, height, static_cast<std::uint64_t>(width * 1000 + height + values), values);
      for (int radius = 0; radius <= reference::kMaxFilterRadius; ++radius) {
        CAPTURE(width);
        CAPTURE(height);
        CAPTURE(values);
        CAPTURE(radius);
        REQUIRE(reference::box_filter(in, radius).pixels == box_by_definition(in, radius).pixels);
        const Image gaussian =
            binomial_pass_by_definition(binomial_pass_by_definition(in, radius, true), radius, false);
        REQUIRE(reference::gaussian_filter(in, radius).pixels == gaussian.pixels);
      }
      for (int radius : {1, 2})
        REQUIRE(reference::median_filter(in, radius).pixels == median_by_definition(in, radius).pixels);
    }
  }
  // A saturated image at the largest radius: 289 * 255 = 73695, more than 16 bits hold.
  const Image white(40, 30, Rgba{255, 255, 255, 255});
  CHECK(reference::box_filter(white, reference::kMaxFilterRadius).pixels == white.pixels);
  CHECK(reference::gaussian_filter(white, reference::kMaxFilterRadius).pixels == white.pixels);
}

TEST_CASE("wrong pixels only along the edges point at clamping, and on an all-edge image at unwritten reads too") {
  const Image expected = noise_image(20, 12, 3);
  Image edges = expected, middle = expected;
  edges.at(0, 5).r ^= 1;    // column 0
  edges.at(19, 11).g ^= 1;  // the bottom-right corner
  CHECK(reference::edge_hint(expected, edges, 2).find("within 2 pixels of an edge") != std::string::npos);
  middle.at(10, 6).b ^= 1;
  CHECK(reference::edge_hint(expected, middle, 2).empty());
  CHECK(reference::edge_hint(expected, expected, 2).empty());
  CHECK(reference::edge_hint(expected, edges, 2).find("barrier") == std::string::npos);
  // A 3x3 image with reach 2 is all edge: a missing barrier shows there as much as a clamp.
  const Image tiny = noise_image(3, 3, 4);
  Image tiny_wrong = tiny;
  tiny_wrong.at(1, 1).a ^= 1;
  const std::string hint = reference::edge_hint(tiny, tiny_wrong, 2);
  CHECK(hint.find("every pixel of this image lies within 2 pixels of an edge") != std::string::npos);
  CHECK(hint.find("a barrier after loading a tile") != std::string::npos);
}
