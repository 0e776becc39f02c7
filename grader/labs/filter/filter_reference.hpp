// The CPU reference of lab 04-filter: what the grader checks student results against.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpulab/image.hpp"
#include "gpulab/random.hpp"

namespace gpulab::reference {

// 04-filter: RGBA8 image filters. Every channel (alpha too) is filtered alike, and coordinates
// outside the image are clamped to the nearest edge pixel. Results are exact integers:
// - box, radius r: the mean of the (2r+1)^2 window, rounded half up: (sum + n / 2) / n, n = (2r+1)^2.
// - gaussian, radius r: the binomial weights C(2r, k), k = 0..2r (1 4 6 4 1 for r = 2), which sum
//   to 4^r, applied as a horizontal then a vertical pass; each pass rounds to 8 bits half up:
//   (sum + 4^r / 2) >> 2r. (The second pass filters the first pass's rounded image.)
// - median, radius 1 (3x3) or 2 (5x5): the middle value of the window, per channel.
inline constexpr int kMaxFilterRadius = 8;
Image box_filter(const Image& in, int radius);
std::vector<std::uint32_t> binomial_weights(int radius);
Image gaussian_horizontal(const Image& in, int radius);
Image gaussian_vertical(const Image& in, int radius);
Image gaussian_filter(const Image& in, int radius);
Image median_filter(const Image& in, int radius);
// The median on `rows` only (each in 0..height-1), the other rows zero: what reference_rows gives
// for the medians, without filtering the rows around each.
Image median_filter_rows(const Image& in, int radius, const std::vector<int>& rows);

// Large images (the filter lab's timing cases) get their reference on sampled rows only:
// - sampled_rows: the rows within `reach` of the top and bottom edges and `pairs` random rows,
//   each with its mirror height - 1 - y (so a top-bottom mirror of the image maps known rows onto
//   known rows), sorted, without repeats;
// - reference_rows: `reference` (any filter above that reads at most `reach` rows up and down) on
//   those rows, the other rows zero. Each row's strip of 2 * reach + 1 input rows (clamped as the
//   filters clamp) is stacked into one image and the filter runs on that once: a strip's middle
//   row sees exactly the rows the filter reads for it in the whole image.
std::vector<int> sampled_rows(Rng& rng, int height, int reach, int pairs);

// What the place of the wrong pixels tells: when every wrong pixel lies within `reach` of an edge, a
// hint about clamping (on an image that is all edge, also about reading what was not written yet);
// else "". `rows`: the rows of the whole image (`height` rows) that the compared images hold, when they
// hold only some; empty: all of them.
std::string edge_hint(const Image& expected, const Image& got, int reach, int height,
                      const std::vector<int>& rows = {});
Image reference_rows(const std::function<Image(const Image&)>& reference, const Image& in, int reach,
                     const std::vector<int>& rows);

}  // namespace gpulab::reference
