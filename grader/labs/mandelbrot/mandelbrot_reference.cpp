// The CPU reference of lab 09-mandelbrot. Compiled with -ffp-contract=off (lab.cmake): the compiler
// must not fuse a multiply and an add, or the exact counts would depend on the host's instruction set.
#include "mandelbrot_reference.hpp"

#include <algorithm>
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

// The loop of the contract for any number type; `fused` forms the multiply-adds a contracting
// compiler would: x2 + y2, x2 - y2 and xy + xy each with one product unrounded.
template <typename T>
std::uint32_t iterate(T x, T y, T c_re, T c_im, int max_iter, bool fused) {
  int n = 0;
  while (n < max_iter) {
    const T x2 = x * x, y2 = y * y;
    const T radius = fused ? std::fma(x, x, y2) : x2 + y2;
    if (radius > T(4)) break;
    const T xy = x * y;
    const T twice_xy = fused ? std::fma(x, y, xy) : xy + xy;
    y = twice_xy + c_im;
    x = (fused ? std::fma(x, x, -y2) : x2 - y2) + c_re;
    ++n;
  }
  return static_cast<std::uint32_t>(n);
}

template <typename T>
std::uint32_t count_at(const View& view, T re, T im, bool fused) {
  if (view.julia) return iterate<T>(re, im, T(view.cx), T(view.cy), view.max_iter, fused);
  return iterate<T>(T(0), T(0), re, im, view.max_iter, fused);
}

}  // namespace

std::uint32_t escape_count(const View& view, Point p, Arithmetic arithmetic) {
  switch (arithmetic) {
    case Arithmetic::fused: return count_at<float>(view, p.re, p.im, true);
    case Arithmetic::double_precision: return count_at<double>(view, p.re, p.im, false);
    case Arithmetic::exact: break;
  }
  return count_at<float>(view, p.re, p.im, false);
}

CountRange tolerated_range(const View& view, int px, int py) {
  const Point p = pixel_point(view, px, py);
  const std::uint32_t exact = escape_count(view, p);
  CountRange range{exact, exact};
  const float inf = INFINITY;
  const Point points[] = {p,
                          {std::nextafter(p.re, inf), p.im},
                          {std::nextafter(p.re, -inf), p.im},
                          {p.re, std::nextafter(p.im, inf)},
                          {p.re, std::nextafter(p.im, -inf)}};
  for (const Point& q : points)
    for (const Arithmetic a : {Arithmetic::exact, Arithmetic::fused, Arithmetic::double_precision}) {
      const std::uint32_t n = escape_count(view, q, a);
      range.lo = std::min(range.lo, n);
      range.hi = std::max(range.hi, n);
    }
  return range;
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
