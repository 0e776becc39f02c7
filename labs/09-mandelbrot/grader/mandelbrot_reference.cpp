// The CPU reference of lab 09-mandelbrot. Compiled with -ffp-contract=off (lab.cmake): the compiler
// must not fuse a multiply and an add, or the exact counts would depend on the host's instruction set.
#include "mandelbrot_reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "gpulab/parallel.hpp"

namespace gpulab::reference {

Point pixel_point(const View& view, int px, int py) {
  const float re = view.x0 + static_cast<float>(px) * view.dx;
  const float im = view.y0 + static_cast<float>(py) * view.dy;
  return {re, im};
}

namespace {

// The loop of the contract for any number type, each of its three multiply-adds separately rounded
// (0), fused as a direct transcription reads (1: x2 + y2 as fma(x, x, y2), xy + xy as fma(x, y, xy),
// x2 - y2 as fma(x, x, -y2)) or fused in the other operand order (2: fma(y, y, x2), 2 * x * y + c_im
// as fma(x + x, y, c_im), fma(-y, y, x2)): the 27 ways a contracting compiler may round one step.
template <typename T>
std::uint32_t iterate(T x, T y, T c_re, T c_im, int max_iter, Rounding r) {
  int n = 0;
  while (n < max_iter) {
    const T x2 = x * x, y2 = y * y;
    const T radius = r.radius == 1 ? std::fma(x, x, y2) : r.radius == 2 ? std::fma(y, y, x2) : x2 + y2;
    if (radius > T(4)) break;
    const T xy = x * y;
    const T next_y = r.twice_xy == 1   ? std::fma(x, y, xy) + c_im
                     : r.twice_xy == 2 ? std::fma(x + x, y, c_im)
                                       : (xy + xy) + c_im;
    x = (r.difference == 1 ? std::fma(x, x, -y2) : r.difference == 2 ? std::fma(-y, y, x2) : x2 - y2) + c_re;
    y = next_y;
    ++n;
  }
  return static_cast<std::uint32_t>(n);
}

// The contract's own rounding, with nothing to choose per operation: the reference's hot loop.
template <typename T>
std::uint32_t iterate_separately_rounded(T x, T y, T c_re, T c_im, int max_iter) {
  int n = 0;
  while (n < max_iter) {
    const T x2 = x * x, y2 = y * y;
    if (x2 + y2 > T(4)) break;
    const T xy = x * y;
    y = (xy + xy) + c_im;
    x = (x2 - y2) + c_re;
    ++n;
  }
  return static_cast<std::uint32_t>(n);
}

template <typename T>
std::uint32_t count_at(const View& view, T re, T im, Rounding r) {
  const bool separate = r.radius == 0 && r.twice_xy == 0 && r.difference == 0;
  const T x = view.julia ? re : T(0), y = view.julia ? im : T(0);
  const T c_re = view.julia ? T(view.cx) : re, c_im = view.julia ? T(view.cy) : im;
  if (separate) return iterate_separately_rounded<T>(x, y, c_re, c_im, view.max_iter);
  return iterate<T>(x, y, c_re, c_im, view.max_iter, r);
}

constexpr Rounding kSeparate{0, 0, 0}, kFused{1, 1, 1}, kFusedOther{2, 2, 2};

// The point and the four one float step away in re or im: tolerated_range's points.
std::array<Point, 5> near_points(Point p) {
  const float inf = INFINITY;
  return {p,
          Point{std::nextafter(p.re, inf), p.im},
          {std::nextafter(p.re, -inf), p.im},
          {p.re, std::nextafter(p.im, inf)},
          {p.re, std::nextafter(p.im, -inf)}};
}

// Every point a kernel may start a pixel's orbit from: the contract's, its coordinates each as one
// fma (px * dx + x0 rounded once), and the eight float neighbours of the contract's point.
std::vector<Point> start_points(const View& view, int px, int py) {
  const Point p = pixel_point(view, px, py);
  const float fused_re = std::fma(static_cast<float>(px), view.dx, view.x0);
  const float fused_im = std::fma(static_cast<float>(py), view.dy, view.y0);
  std::vector<Point> points{p, {fused_re, p.im}, {p.re, fused_im}, {fused_re, fused_im}};
  const float inf = INFINITY;
  for (const float re : {std::nextafter(p.re, -inf), p.re, std::nextafter(p.re, inf)})
    for (const float im : {std::nextafter(p.im, -inf), p.im, std::nextafter(p.im, inf)})
      if (re != p.re || im != p.im) points.push_back({re, im});
  return points;
}

}  // namespace

std::uint32_t escape_count(const View& view, Point p, Arithmetic arithmetic) {
  switch (arithmetic) {
    case Arithmetic::fused: return count_at<float>(view, p.re, p.im, kFused);
    case Arithmetic::fused_other: return count_at<float>(view, p.re, p.im, kFusedOther);
    case Arithmetic::double_precision: return count_at<double>(view, p.re, p.im, kSeparate);
    case Arithmetic::exact: break;
  }
  return count_at<float>(view, p.re, p.im, kSeparate);
}

std::uint32_t escape_count(const View& view, Point p, Rounding rounding) {
  return count_at<float>(view, p.re, p.im, rounding);
}

CountRange tolerated_range(const View& view, int px, int py) {
  const std::uint32_t exact = escape_count(view, pixel_point(view, px, py));
  CountRange range{exact, exact};
  for (const Point& q : near_points(pixel_point(view, px, py)))
    for (const Arithmetic a :
         {Arithmetic::exact, Arithmetic::fused, Arithmetic::fused_other, Arithmetic::double_precision}) {
      const std::uint32_t n = escape_count(view, q, a);
      range.lo = std::min(range.lo, n);
      range.hi = std::max(range.hi, n);
    }
  return range;
}

bool count_tolerated(const View& view, int px, int py, std::uint32_t got) {
  const Point p = pixel_point(view, px, py);
  const std::uint32_t exact = escape_count(view, p);
  if (got == exact) return true;
  // tolerated_range, stopping as soon as `got` lies between the counts seen so far.
  CountRange seen{exact, exact};
  for (const Point& q : near_points(p))
    for (const Arithmetic a :
         {Arithmetic::fused, Arithmetic::fused_other, Arithmetic::double_precision, Arithmetic::exact}) {
      const std::uint32_t n = escape_count(view, q, a);
      seen.lo = std::min(seen.lo, n);
      seen.hi = std::max(seen.hi, n);
      if (seen.contains(got)) return true;
    }
  // Else one of the roundings a kernel may use gives exactly `got`.
  for (const Point& q : start_points(view, px, py)) {
    if (count_at<double>(view, q.re, q.im, kSeparate) == got) return true;
    for (std::uint8_t radius = 0; radius < 3; ++radius)
      for (std::uint8_t twice_xy = 0; twice_xy < 3; ++twice_xy)
        for (std::uint8_t difference = 0; difference < 3; ++difference)
          if (count_at<float>(view, q.re, q.im, Rounding{radius, twice_xy, difference}) == got) return true;
  }
  return false;
}

std::vector<std::uint32_t> escape_counts(const View& view, int width, int height) {
  std::vector<std::uint32_t> counts(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  // Rows interleaved over the cores: neighbouring rows cost alike, distant ones do not.
  parallel_for(static_cast<std::size_t>(height), [&](std::size_t y) {
    for (int x = 0; x < width; ++x)
      counts[y * static_cast<std::size_t>(width) + x] = escape_count(view, x, static_cast<int>(y));
  });
  return counts;
}

std::vector<std::uint32_t> escape_counts_rows(const View& view, int width, const std::vector<int>& rows) {
  std::vector<std::uint32_t> counts(rows.size() * static_cast<std::size_t>(width));
  const std::size_t w = static_cast<std::size_t>(width);
  // Pixels, not rows, over the cores: a handful of rows would leave most cores idle.
  parallel_for(counts.size(),
               [&](std::size_t i) { counts[i] = escape_count(view, static_cast<int>(i % w), rows[i / w]); });
  return counts;
}

std::uint64_t total_iterations(const std::vector<std::uint32_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}

}  // namespace gpulab::reference
