// The CPU reference of lab 04-filter: what the grader checks student results against.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/image.hpp"

namespace gpulab::reference {

// 04-filter: RGBA8 image filters. Every channel (alpha too) is filtered alike, and coordinates
// outside the image are clamped to the nearest edge pixel. Results are exact integers:
// - box, radius r: the mean of the (2r+1)^2 window, rounded half up: (sum + n / 2) / n, n = (2r+1)^2.
// - gaussian, radius r: the binomial weights C(2r, k), k = 0..2r (1 4 6 4 1 for r = 2), which sum
//   to 4^r, applied as a horizontal then a vertical pass; each pass rounds to 8 bits half up:
//   (sum + 4^r / 2) >> 2r. (The second pass filters the first pass's rounded image.)
// - median, radius 1 (3x3) or 2 (5x5): the middle value of the window, per channel.
// Each reference costs a constant (box, median) or O(r) (gaussian) time per pixel and runs on every
// core, so every case, the 4096 x 4096 ones on a GPU too, is compared in full after every launch.
inline constexpr int kMaxFilterRadius = 8;
Image box_filter(const Image& in, int radius);
std::vector<std::uint32_t> binomial_weights(int radius);
Image gaussian_horizontal(const Image& in, int radius);
Image gaussian_vertical(const Image& in, int radius);
Image gaussian_filter(const Image& in, int radius);
Image median_filter(const Image& in, int radius);

// What the place of the wrong pixels tells: when every wrong pixel lies within `reach` of an edge, a
// hint about clamping (on an image that is all edge, also about reading what was not written yet);
// else "".
std::string edge_hint(const Image& expected, const Image& got, int reach);

}  // namespace gpulab::reference
