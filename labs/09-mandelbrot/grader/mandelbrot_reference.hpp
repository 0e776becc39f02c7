// The CPU reference of lab 09-mandelbrot: what the grader checks student escape counts against.
#pragma once
#include <cstdint>
#include <vector>

namespace gpulab::reference {

// 09-mandelbrot: the escape count of every pixel of a window of the complex plane.
// - Pixel (px, py) stands for the point p = (x0 + px * dx, y0 + py * dy): (x0, y0) is the centre of
//   the top-left pixel, and dy < 0 in every case (the top row has the largest imaginary part).
// - Mandelbrot: z = 0, c = p. Julia: z = p, c = (cx, cy).
// - n = 0; while n < max_iter: x2 = x*x, y2 = y*y; stop if x2 + y2 > 4; xy = x*y;
//   y = (xy + xy) + c_im; x = (x2 - y2) + c_re; n += 1. The count is n (max_iter: never escaped).
// - Every operation is one float operation rounded to nearest, none fused (no FMA): this file is
//   compiled with -ffp-contract=off (lab.cmake), the solutions with __fmul_rn/__fadd_rn (CUDA) and
//   `#pragma OPENCL FP_CONTRACT OFF`, so they agree bit for bit.
struct View {
  float x0 = 0, y0 = 0, dx = 0, dy = 0;
  int max_iter = 0;
  bool julia = false;
  float cx = 0, cy = 0;  // Julia's constant
};

// How a count was computed: the contract (exact), with the fused multiply-adds a compiler may form
// (fused: those of a direct transcription; fused_other: the other operand orders, and 2 * x * y + c
// as one), or in double precision from the same float point (double_precision).
enum class Arithmetic { exact, fused, fused_other, double_precision };

// One way to round the step's three multiply-adds, each 0 (two roundings, the contract's), 1 (one
// fma in the order a direct transcription reads) or 2 (one fma, the other operand order): x2 + y2,
// 2 * x * y + c_im and x2 - y2. These 27 are every result a contracting compiler can give.
struct Rounding {
  std::uint8_t radius = 0, twice_xy = 0, difference = 0;
};

struct Point {
  float re, im;
};
Point pixel_point(const View& view, int px, int py);
std::uint32_t escape_count(const View& view, Point p, Arithmetic arithmetic = Arithmetic::exact);
std::uint32_t escape_count(const View& view, Point p, Rounding rounding);
inline std::uint32_t escape_count(const View& view, int px, int py) {
  return escape_count(view, pixel_point(view, px, py));
}

// The counts a kernel may give for a pixel besides the exact one, where that pixel is unstable: the
// smallest and largest count over the exact, fused, fused_other and double arithmetic, each at the
// pixel's point and at the points one float step (ulp) away in each direction of re and im. A pixel
// whose orbit passes near the escape radius for many steps amplifies a rounding difference into
// another count; on a stable pixel every variant gives the exact count, and the range is that count.
struct CountRange {
  std::uint32_t lo, hi;
  bool contains(std::uint32_t n) const { return lo <= n && n <= hi; }
};
CountRange tolerated_range(const View& view, int px, int py);

// Whether `got` is a count a kernel that follows the contract up to its rounding may give for pixel
// (px, py): the exact count, a count within tolerated_range, or the count of one of the roundings a
// compiler may choose (any of the 27 Roundings, or double precision) from any point a kernel may start
// from (the contract's, with its coordinates computed as one fma each, or one float step away in re,
// im or both). Every kernel of those designs passes by construction, on every pixel; nothing else is
// accepted. Evaluated lazily, cheapest first: a few counts for most pixels, up to 336 for the rest.
bool count_tolerated(const View& view, int px, int py, std::uint32_t got);

// The counts of a whole width x height image (row-major, top row first), on every core.
std::vector<std::uint32_t> escape_counts(const View& view, int width, int height);
// The counts of `rows` only (each in 0..height-1), one row after another (rows.size() x width), on
// every core: the timed launches of a large image are checked on a few rows of a new window.
std::vector<std::uint32_t> escape_counts_rows(const View& view, int width, const std::vector<int>& rows);

// The summed counts: the iterations a launch must do (each pixel's loop runs `count` times).
std::uint64_t total_iterations(const std::vector<std::uint32_t>& counts);

}  // namespace gpulab::reference
