// Lab 09-mandelbrot (CUDA): the escape count of every pixel of a window of the complex plane, for the
// Mandelbrot set and Julia sets. Read README.md first (it defines the count exactly), then fill in
// the TODOs and run `make check` in this folder. The grader passes a device pointer; keep the two
// signatures. Copying the counts to the host is rejected.
#include <algorithm>

#include "gpulab/student/cuda.hpp"

// The window and the fractal, as the launch functions receive them.
struct Window {
  float x0, y0, dx, dy;  // pixel (px, py) stands for (x0 + px * dx, y0 + py * dy)
  int max_iter;
  int julia;  // 0: Mandelbrot (z = 0, c = the point); 1: Julia (z = the point, c = (cx, cy))
  float cx, cy;
};

// One pixel's orbit in progress: z = (x, y), c = (c_re, c_im), n steps done.
struct Orbit {
  float x, y, c_re, c_im;
  int n;
};

__device__ Orbit start_orbit(const Window& w, int px, int py) {
  // TODO 1 (the contract, exact floats): the pixel's point re = x0 + px * dx, im = y0 + py * dy,
  //   written with __fadd_rn and __fmul_rn: nvcc fuses a * b + c into one FMA (rounded once),
  //   which changes a few counts at the boundary; these two are never fused. Then the orbit's
  //   start: Mandelbrot z = 0, c = (re, im); Julia z = (re, im), c = (cx, cy); n = 0.
  return {0.0f, 0.0f, 0.0f, 0.0f, 0};
}

__device__ bool step(Orbit& o, int max_iter) {
  // TODO 2 (the iteration): return false, changing nothing, when n >= max_iter or when
  //   x2 + y2 > 4 (x2 = x * x, y2 = y * y). Else one step, in this order: xy = x * y;
  //   y = (xy + xy) + c_im; x = (x2 - y2) + c_re; n += 1; return true. Every operation with
  //   __fmul_rn, __fadd_rn, __fsub_rn, as in TODO 1.
  return false;
}

__global__ void mandelbrot_naive_kernel(unsigned* counts, int width, int height, Window w) {
  // TODO 3 (one thread per pixel): px from the x dimension of the grid, py from y; threads outside
  //   the image return. Start the pixel's orbit, step until step() says no more, and store the
  //   count n at counts[py * width + px] (use size_t for the index).
}

void mandelbrot_by_pixel(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy) {
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  // TODO 4: launch mandelbrot_naive_kernel in 16 x 16 blocks covering the image
  //   (gpulab::blocks_for(width, 16) x gpulab::blocks_for(height, 16)) and check the launch.
  GPULAB_NOT_IMPLEMENTED("mandelbrot_by_pixel: one thread per pixel (TODO 1-4)");
}

__global__ void mandelbrot_balanced_kernel(unsigned* counts, int width, int height, Window w) {
  // TODO 5 (bonus; README "balanced"): one thread per pixel, as in TODO 3, with cheaper steps. A
  //   plan that passes the 1.25x bound: start the orbit and keep a copy, `saved`. Unless |c| > 1.99
  //   (c_re * c_re + c_im * c_im > 3.96: the guard), run rounds while n <= max_iter - 16: 16 steps
  //   of step()'s rounded operations (__fmul_rn, ...) with no test and no count, then one test that
  //   also counts inf and NaN as escaped, !(x2 + y2 <= 4). No escape: n += 16, saved = the orbit.
  //   An escape: leave the rounds. Then finish from `saved` with step() until it says no more (at
  //   most 16 steps, or a wide c's whole orbit) and store saved.n. Why may the test wait 16 steps?
  //   Designs that balance (warps refilling their lanes together from a work queue) measured
  //   1.18-1.26x the naive kernel on an H100: their refills cost about what the idle lanes waste.
}

void mandelbrot_balanced(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy) {
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  // TODO 6 (bonus): launch mandelbrot_balanced_kernel as TODO 4 launches the naive kernel (16 x 16
  //   blocks covering the image) and check the launch. A design of your own may launch otherwise.
  GPULAB_NOT_IMPLEMENTED("mandelbrot_balanced: rounds of steps without a test, then the exact count (TODO 5-6)");
}
