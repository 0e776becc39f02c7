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
Image weighted_pass(const Image& in, const std::vector<std::uint32_t>& weights, int shift, bool horizontal) {
  const std::uint32_t bias = (1u << shift) >> 1;  // rounds halves up; 0 for r = 0
  const int r = static_cast<int>(weights.size() / 2);
  Image out(in.width, in.height);
  parallel_ranges(static_cast<std::size_t>(in.height), [&](std::size_t y0, std::size_t y1) {
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y)
      for (int x = 0; x < in.width; ++x) {
        std::array<std::uint32_t, 4> sum{};
        for (int k = -r; k <= r; ++k) {
          const Rgba& p = horizontal ? in.at(clamp_to(x + k, in.width), y) : in.at(x, clamp_to(y + k, in.height));
          const std::uint32_t w = weights[static_cast<std::size_t>(k + r)];
          sum[0] += w * p.r;
          sum[1] += w * p.g;
          sum[2] += w * p.b;
          sum[3] += w * p.a;
        }
        auto finish = [&](std::uint32_t s) { return static_cast<std::uint8_t>((s + bias) >> shift); };
        out.at(x, y) = {finish(sum[0]), finish(sum[1]), finish(sum[2]), finish(sum[3])};
      }
  });
  return out;
}

}  // namespace

Image box_filter(const Image& in, int radius) {
  check_radius(radius, kMaxFilterRadius, "box filter");
  const int side = 2 * radius + 1;
  Image out(in.width, in.height);
  const std::uint32_t n = static_cast<std::uint32_t>(side * side);
  parallel_ranges(static_cast<std::size_t>(in.height), [&](std::size_t y0, std::size_t y1) {
    std::vector<std::array<std::uint32_t, 4>> row_sums(static_cast<std::size_t>(in.width));
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y) {
      std::fill(row_sums.begin(), row_sums.end(), std::array<std::uint32_t, 4>{});
      for (int dy = -radius; dy <= radius; ++dy) {
        const int sy = clamp_to(y + dy, in.height);
        for (int x = 0; x < in.width; ++x)
          for (int dx = -radius; dx <= radius; ++dx) {
            const Rgba& p = in.at(clamp_to(x + dx, in.width), sy);
            auto& s = row_sums[static_cast<std::size_t>(x)];
            s[0] += p.r;
            s[1] += p.g;
            s[2] += p.b;
            s[3] += p.a;
          }
      }
      for (int x = 0; x < in.width; ++x) {
        const auto& s = row_sums[static_cast<std::size_t>(x)];
        auto avg = [n](std::uint32_t v) { return static_cast<std::uint8_t>((v + n / 2) / n); };
        out.at(x, y) = {avg(s[0]), avg(s[1]), avg(s[2]), avg(s[3])};
      }
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

Image median_filter(const Image& in, int radius) {
  std::vector<int> every_row(static_cast<std::size_t>(std::max(in.height, 0)));
  std::iota(every_row.begin(), every_row.end(), 0);
  return median_filter_rows(in, radius, every_row);
}

Image median_filter_rows(const Image& in, int radius, const std::vector<int>& rows) {
  if (radius != 1 && radius != 2) throw std::invalid_argument("median filter: the radius must be 1 (3x3) or 2 (5x5)");
  const int side = 2 * radius + 1, count = side * side;
  Image out(in.width, in.height);
  parallel_ranges(rows.size(), [&](std::size_t i0, std::size_t i1) {
    std::array<std::array<std::uint8_t, 25>, 4> values{};
    for (std::size_t i = i0; i < i1; ++i)
      for (int x = 0, y = rows[i]; x < in.width; ++x) {
        int i = 0;
        for (int dy = -radius; dy <= radius; ++dy)
          for (int dx = -radius; dx <= radius; ++dx, ++i) {
            const Rgba& p = in.at(clamp_to(x + dx, in.width), clamp_to(y + dy, in.height));
            values[0][i] = p.r;
            values[1][i] = p.g;
            values[2][i] = p.b;
            values[3][i] = p.a;
          }
        std::array<std::uint8_t, 4> m{};
        for (int c = 0; c < 4; ++c) {
          auto* v = values[c].data();
          std::nth_element(v, v + count / 2, v + count);
          m[c] = v[count / 2];
        }
        out.at(x, y) = {m[0], m[1], m[2], m[3]};
      }
  });
  return out;
}

std::vector<int> sampled_rows(Rng& rng, int height, int reach, int pairs) {
  std::vector<int> rows;
  for (int y = 0; y <= reach && y < height; ++y) rows.insert(rows.end(), {y, height - 1 - y});
  for (int i = 0; i < pairs; ++i) {
    const int y = static_cast<int>(rng.integer(0, height - 1));
    rows.insert(rows.end(), {y, height - 1 - y});
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

Image reference_rows(const std::function<Image(const Image&)>& reference, const Image& in, int reach,
                     const std::vector<int>& rows) {
  const int side = 2 * reach + 1;
  Image strips(in.width, side * static_cast<int>(rows.size()));
  const auto w = static_cast<std::size_t>(in.width);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int d = 0; d < side; ++d) {
      const int from = clamp_to(rows[i] + d - reach, in.height);
      std::copy_n(&in.pixels[static_cast<std::size_t>(from) * w], w, &strips.pixels[(i * side + d) * w]);
    }
  const Image filtered = reference(strips);
  Image out(in.width, in.height);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy_n(&filtered.pixels[(i * side + reach) * w], w, &out.pixels[static_cast<std::size_t>(rows[i]) * w]);
  return out;
}

std::string edge_hint(const Image& expected, const Image& got, int reach, int height, const std::vector<int>& rows) {
  std::size_t wrong = 0, wrong_near_edge = 0, near_edge = 0, pixels = 0;
  for (int y = 0; y < expected.height; ++y)
    for (int x = 0; x < expected.width; ++x) {
      const int image_y = rows.empty() ? y : rows[static_cast<std::size_t>(y)];
      const bool edge = x < reach || image_y < reach || x >= expected.width - reach || image_y >= height - reach;
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
