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
  // TODO 5 (bonus, load balancing; README "balanced"): a grid of T threads, fewer than the pixels.
  //   Thread t takes pixels t, t + T, t + 2T, ... (pixel p is column p % width, row p / width; use
  //   long long). Do not finish one pixel before looking at the next in a loop of loops: in one
  //   loop, step the current orbit; in the step where it stops, store its count and start the
  //   thread's next pixel. Why does that keep a warp's lanes busy, where the naive kernel's wait?
  //   That alone is slower than the naive kernel on an H100: a refill stalls the whole warp. To beat
  //   it, refill rarely and together, and make the steps cheap (README "balanced": rounds of 16
  //   steps with no test and no count, a warp vote after each, the waiting lanes finished and
  //   refilled once 16 wait, chunks of pixels from an atomicAdd work queue).
}

void mandelbrot_balanced(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy) {
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  // TODO 6 (bonus): launch mandelbrot_balanced_kernel with blocks of 128 threads and enough of them
  //   to fill the GPU, no more: as many threads as the SMs hold (cudaGetDevice, then
  //   cudaDeviceGetAttribute with cudaDevAttrMultiProcessorCount and
  //   cudaDevAttrMaxThreadsPerMultiProcessor), and no more threads than pixels. Check every call.
  GPULAB_NOT_IMPLEMENTED("mandelbrot_balanced: a persistent grid whose lanes refill (TODO 5-6)");
}
