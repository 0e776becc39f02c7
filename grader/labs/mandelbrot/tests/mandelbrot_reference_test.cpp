// Lab mandelbrot's CPU reference: the counts of the contract, and which pixels rounding may move.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mandelbrot_reference.hpp"

using namespace gpulab::reference;

namespace {
// A width x height window centred on (re, im), `span` wide, square pixels, rows going down.
View window(double re, double im, double span, int width, int height, int max_iter) {
  const double step = span / width;
  View v;
  v.dx = static_cast<float>(step);
  v.dy = static_cast<float>(-step);
  v.x0 = static_cast<float>(re - (width - 1) / 2.0 * step);
  v.y0 = static_cast<float>(im + (height - 1) / 2.0 * step);
  v.max_iter = max_iter;
  return v;
}
}  // namespace

TEST_CASE("a point inside the set runs max_iter steps, one far outside escapes after its first step") {
  const View v = window(0, 0, 1, 1, 1, 300);
  CHECK(escape_count(v, Point{-0.1f, 0.1f}) == 300);  // in the main cardioid
  CHECK(escape_count(v, Point{3.0f, 0.0f}) == 1);     // z1 = c, |c|^2 = 9 > 4
  CHECK(escape_count(v, Point{-2.0f, 0.0f}) == 300);  // z stays at 2: |z|^2 = 4 is not > 4
  // c = 1: z = 0, 1, 2, 5: |z|^2 = 25 > 4 is seen after three steps.
  CHECK(escape_count(v, Point{1.0f, 0.0f}) == 3);
}

TEST_CASE("a Julia count starts from the point itself, so a point beyond radius 2 counts 0 steps") {
  View v = window(0, 0, 1, 1, 1, 50);
  v.julia = true;
  v.cx = -0.8f;
  v.cy = 0.156f;
  CHECK(escape_count(v, Point{2.5f, 0.0f}) == 0);
  CHECK(escape_count(v, Point{0.0f, 0.0f}) > 0);
}

TEST_CASE("pixel (0, 0) is the centre of the top-left pixel and rows go down in the imaginary part") {
  const View v = window(-0.5, 0.25, 2.0, 4, 2, 10);
  const Point first = pixel_point(v, 0, 0), below = pixel_point(v, 0, 1), right = pixel_point(v, 1, 0);
  CHECK(first.re == doctest::Approx(-1.25));
  CHECK(first.im == doctest::Approx(0.5));
  CHECK(below.im < first.im);
  CHECK(right.re == doctest::Approx(-0.75));
}

TEST_CASE("an image counts each pixel at its point, row by row, and sampled rows give the same counts") {
  const View v = window(-0.745, 0.11, 0.03, 37, 23, 500);
  const auto all = escape_counts(v, 37, 23);
  REQUIRE(all.size() == 37u * 23u);
  CHECK(all[5 * 37 + 11] == escape_count(v, 11, 5));
  const std::vector<int> rows{0, 7, 22};
  const auto some = escape_counts_rows(v, 37, rows);
  for (std::size_t r = 0; r < rows.size(); ++r)
    CHECK(std::equal(some.begin() + r * 37, some.begin() + (r + 1) * 37, all.begin() + rows[r] * 37));
  CHECK(total_iterations(all) > total_iterations(some));
}

TEST_CASE("fused or double arithmetic changes counts only on pixels whose tolerated range is wider than one count") {
  const View v = window(-0.745, 0.11, 0.03, 160, 120, 1024);
  int moved = 0, outside_range = 0;
  for (int py = 0; py < 120; ++py)
    for (int px = 0; px < 160; ++px) {
      const Point p = pixel_point(v, px, py);
      const std::uint32_t exact = escape_count(v, p);
      const std::uint32_t fused = escape_count(v, p, Arithmetic::fused);
      const std::uint32_t wide = escape_count(v, p, Arithmetic::double_precision);
      if (fused == exact && wide == exact) continue;
      ++moved;
      const CountRange range = tolerated_range(v, px, py);
      outside_range += range.lo == range.hi || !range.contains(fused) || !range.contains(wide);
    }
  CHECK(moved > 0);  // the boundary of the seahorse valley: rounding moves some counts
  CHECK(outside_range == 0);
}

TEST_CASE("a count off by one everywhere, or an image shifted by half a pixel, changes many stable pixels") {
  const View v = window(-0.75, 0.15, 3.5, 127, 61, 256);
  View shifted = v;
  shifted.x0 += v.dx / 2;
  shifted.y0 += v.dy / 2;
  int stable = 0, off_by_one = 0, half_pixel = 0;
  for (int py = 0; py < 61; ++py)
    for (int px = 0; px < 127; ++px) {
      const CountRange range = tolerated_range(v, px, py);
      if (range.lo != range.hi) continue;
      ++stable;
      off_by_one += !range.contains(escape_count(v, px, py) + 1);
      half_pixel += !range.contains(escape_count(shifted, px, py));
    }
  CHECK(off_by_one == stable);
  // The grader allows one stable pixel in 500 to differ: these are far beyond.
  CHECK(half_pixel > 127 * 61 / 50);
}
