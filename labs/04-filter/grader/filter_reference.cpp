#include <algorithm>
#include <array>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "filter_reference.hpp"
#include "gpulab/parallel.hpp"

namespace gpulab::reference {
namespace {

int clamp_to(int v, int size) { return std::clamp(v, 0, size - 1); }

void check_radius(int radius, int max_radius, const char* filter) {
  if (radius < 0 || radius > max_radius)
    throw std::invalid_argument(std::string(filter) + ": the radius must be in 0.." + std::to_string(max_radius));
}

// One 1-D pass along x (horizontal) or y: out = (sum of weights[k] * in[clamped p + k - r] + bias) >> shift,
// per channel. Sums of up to 2r + 1 pixels of 255 with weights up to C(16, 8) fit in 32 bits.
// Row by row, a tap at a time over all the row's bytes (each channel of each pixel a lane, which
// compilers vectorize): the vertical pass adds whole clamped rows, the horizontal one the row padded
// with r clamped pixels on each side, shifted by the tap.
Image weighted_pass(const Image& in, const std::vector<std::uint32_t>& weights, int shift, bool horizontal) {
  const std::uint32_t bias = (1u << shift) >> 1;  // rounds halves up; 0 for r = 0
  const int r = static_cast<int>(weights.size() / 2), width = in.width;
  const std::size_t lanes = static_cast<std::size_t>(width) * sizeof(Rgba);
  Image out(in.width, in.height);
  parallel_ranges(static_cast<std::size_t>(in.height), [&](std::size_t y0, std::size_t y1) {
    std::vector<std::uint32_t> sums(lanes);
    std::vector<Rgba> padded(horizontal ? static_cast<std::size_t>(width + 2 * r) : 0);
    auto bytes_of = [](const Rgba* p) { return reinterpret_cast<const std::uint8_t*>(p); };
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y) {
      std::fill(sums.begin(), sums.end(), 0u);
      const Rgba* row = &in.pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(width)];
      if (horizontal)
        for (int i = 0; i < width + 2 * r; ++i) padded[static_cast<std::size_t>(i)] = row[clamp_to(i - r, width)];
      for (int k = 0; k <= 2 * r; ++k) {
        const std::uint8_t* from =
            horizontal ? bytes_of(padded.data() + k)
                       : bytes_of(&in.pixels[static_cast<std::size_t>(clamp_to(y + k - r, in.height)) * width]);
        const std::uint32_t w = weights[static_cast<std::size_t>(k)];
        for (std::size_t i = 0; i < lanes; ++i) sums[i] += w * from[i];
      }
      auto* to = reinterpret_cast<std::uint8_t*>(&out.pixels[static_cast<std::size_t>(y) * width]);
      for (std::size_t i = 0; i < lanes; ++i) to[i] = static_cast<std::uint8_t>((sums[i] + bias) >> shift);
    }
  });
  return out;
}

}  // namespace

Image box_filter(const Image& in, int radius) {
  check_radius(radius, kMaxFilterRadius, "box filter");
  const int side = 2 * radius + 1, width = in.width;
  const std::uint32_t n = static_cast<std::uint32_t>(side * side);
  Image out(in.width, in.height);
  // Sliding sums, a constant cost per pixel at every radius (a 16-Mpixel image at r = 8 in well under
  // a second on every core): each part of the rows keeps the sums of its columns' 2r + 1 clamped rows,
  // moved down one row at a time, and each row's windows are differences of a prefix sum over those
  // column sums, extended by r clamped columns on each side. Every sum fits in 32 bits: (2r + 1)^2
  // * 255 per window, and the prefix of a row at most (width + 2r) times that.
  parallel_ranges(static_cast<std::size_t>(in.height), [&](std::size_t y0, std::size_t y1) {
    std::vector<std::array<std::uint32_t, 4>> columns(static_cast<std::size_t>(width));
    std::vector<std::array<std::uint32_t, 4>> prefix(static_cast<std::size_t>(width + 2 * radius + 1));
    auto add_row = [&](int y, int sign) {  // sign +1 or -1: modulo 2^32, a subtraction undoes an addition
      const Rgba* row = &in.pixels[static_cast<std::size_t>(clamp_to(y, in.height)) * static_cast<std::size_t>(width)];
      for (std::size_t x = 0; x < columns.size(); ++x) {
        columns[x][0] += static_cast<std::uint32_t>(sign * row[x].r);
        columns[x][1] += static_cast<std::uint32_t>(sign * row[x].g);
        columns[x][2] += static_cast<std::uint32_t>(sign * row[x].b);
        columns[x][3] += static_cast<std::uint32_t>(sign * row[x].a);
      }
    };
    for (int dy = -radius; dy <= radius; ++dy) add_row(static_cast<int>(y0) + dy, 1);
    auto average = [n](std::uint32_t v) { return static_cast<std::uint8_t>((v + n / 2) / n); };
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y) {
      for (int i = 0; i < width + 2 * radius; ++i)
        for (int c = 0; c < 4; ++c)
          prefix[static_cast<std::size_t>(i) + 1][c] =
              prefix[static_cast<std::size_t>(i)][c] +
              columns[static_cast<std::size_t>(clamp_to(i - radius, width))][c];
      for (int x = 0; x < width; ++x) {
        const auto& hi = prefix[static_cast<std::size_t>(x + side)];
        const auto& lo = prefix[static_cast<std::size_t>(x)];
        out.at(x, y) = {average(hi[0] - lo[0]), average(hi[1] - lo[1]), average(hi[2] - lo[2]), average(hi[3] - lo[3])};
      }
      add_row(y + radius + 1, 1);
      add_row(y - radius, -1);
    }
  });
  return out;
}

std::vector<std::uint32_t> binomial_weights(int radius) {
  check_radius(radius, kMaxFilterRadius, "binomial weights");
  std::vector<std::uint32_t> w{1};
  for (int i = 0; i < 2 * radius; ++i) {  // Pascal's triangle, row 2r
    std::vector<std::uint32_t> next(w.size() + 1, 0);
    for (std::size_t k = 0; k < w.size(); ++k) {
      next[k] += w[k];
      next[k + 1] += w[k];
    }
    w = std::move(next);
  }
  return w;
}

Image gaussian_horizontal(const Image& in, int radius) {
  return weighted_pass(in, binomial_weights(radius), 2 * radius, true);  // the weights sum to 2^(2r)
}

Image gaussian_vertical(const Image& in, int radius) {
  return weighted_pass(in, binomial_weights(radius), 2 * radius, false);
}

Image gaussian_filter(const Image& in, int radius) {
  check_radius(radius, kMaxFilterRadius, "gaussian filter");
  return gaussian_vertical(gaussian_horizontal(in, radius), radius);
}

namespace {

// Median selection on the bytes of kBlock pixels' channels at once (every channel of every pixel is
// one byte lane; min and max per lane, which compilers vectorize): the forgetful selection of the
// median of kCount values. Hold kCount / 2 + 2 of them; take in the others one at a time, each time
// moving the smallest held to v[0] and the largest to v[last] and dropping both (with kCount / 2 + 2
// held, neither can be the median of all), the new value taking v[0]'s place; the middle of the last
// three is the median. `values[k]` points at the kBlock lanes of window position k.
constexpr std::size_t kLanes = 64;

template <int kCount>
void select_medians(const std::array<const std::uint8_t*, kCount>& values, std::uint8_t* out, std::size_t lanes) {
  constexpr int kHeld = kCount / 2 + 2;
  std::array<std::array<std::uint8_t, kLanes>, kHeld> v;
  auto order = [&](int a, int b) {
    for (std::size_t i = 0; i < kLanes; ++i) {
      const std::uint8_t low = std::min(v[a][i], v[b][i]);
      v[b][i] = std::max(v[a][i], v[b][i]);
      v[a][i] = low;
    }
  };
  for (int k = 0; k < kHeld; ++k) std::copy_n(values[k], lanes, v[k].begin());
  for (int next = kHeld, last = kHeld - 1; next < kCount; ++next, --last) {
    for (int i = 1; i <= last; ++i) order(0, i);
    for (int i = 1; i < last; ++i) order(i, last);
    std::copy_n(values[next], lanes, v[0].begin());
  }
  for (std::size_t i = 0; i < lanes; ++i) {  // the median of v[0], v[1], v[2]
    const std::uint8_t a = v[0][i], b = v[1][i], c = v[2][i];
    out[i] = std::max(std::min(a, b), std::min(std::max(a, b), c));
  }
}

// The medians of row y: the window's rows, each padded with `radius` clamped pixels on both sides,
// give window position (dx, dy) as the padded row dy from pixel dx on.
template <int kRadius>
void median_row(const Image& in, int y, Rgba* out_row, std::vector<std::vector<Rgba>>& padded) {
  constexpr int kSide = 2 * kRadius + 1;
  const int width = in.width;
  for (int dy = 0; dy < kSide; ++dy) {
    const Rgba* row = &in.pixels[static_cast<std::size_t>(clamp_to(y + dy - kRadius, in.height)) * width];
    auto& p = padded[static_cast<std::size_t>(dy)];
    p.resize(static_cast<std::size_t>(width + 2 * kRadius));
    for (int i = 0; i < width + 2 * kRadius; ++i) p[static_cast<std::size_t>(i)] = row[clamp_to(i - kRadius, width)];
  }
  const std::size_t bytes = static_cast<std::size_t>(width) * sizeof(Rgba);
  std::array<const std::uint8_t*, kSide * kSide> values;
  for (std::size_t at = 0; at < bytes; at += kLanes) {
    for (int dy = 0; dy < kSide; ++dy)
      for (int dx = 0; dx < kSide; ++dx)
        values[static_cast<std::size_t>(dy * kSide + dx)] =
            reinterpret_cast<const std::uint8_t*>(padded[static_cast<std::size_t>(dy)].data() + dx) + at;
    select_medians<kSide * kSide>(values, reinterpret_cast<std::uint8_t*>(out_row) + at, std::min(kLanes, bytes - at));
  }
}

}  // namespace

Image median_filter(const Image& in, int radius) {
  if (radius != 1 && radius != 2) throw std::invalid_argument("median filter: the radius must be 1 (3x3) or 2 (5x5)");
  Image out(in.width, in.height);
  parallel_ranges(static_cast<std::size_t>(in.height), [&](std::size_t y0, std::size_t y1) {
    std::vector<std::vector<Rgba>> padded(5);
    for (std::size_t y = y0; y < y1; ++y) {
      Rgba* row = &out.pixels[y * static_cast<std::size_t>(in.width)];
      if (radius == 1)
        median_row<1>(in, static_cast<int>(y), row, padded);
      else
        median_row<2>(in, static_cast<int>(y), row, padded);
    }
  });
  return out;
}

std::string edge_hint(const Image& expected, const Image& got, int reach) {
  std::size_t wrong = 0, wrong_near_edge = 0, near_edge = 0, pixels = 0;
  for (int y = 0; y < expected.height; ++y)
    for (int x = 0; x < expected.width; ++x) {
      const bool edge = x < reach || y < reach || x >= expected.width - reach || y >= expected.height - reach;
      ++pixels;
      near_edge += edge;
      if (expected.at(x, y) == got.at(x, y)) continue;
      ++wrong;
      wrong_near_edge += edge;
    }
  if (wrong == 0 || reach <= 0 || wrong_near_edge < wrong) return "";
  if (near_edge == pixels)  // a tiny image: the place of the wrong pixels says little
    return fmt::format(
        "every pixel of this image lies within {} pixels of an edge: check how the kernel clamps coordinates "
        "that fall outside the image (x < 0 reads column 0, x >= width reads column width - 1), and that "
        "every value it reads was written first (a barrier after loading a tile)",
        reach);
  return fmt::format(
      "every wrong pixel lies within {} pixels of an edge: check how the kernel clamps coordinates "
      "that fall outside the image (x < 0 reads column 0, x >= width reads column width - 1)",
      reach);
}

}  // namespace gpulab::reference
