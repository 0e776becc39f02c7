// Lab 09-mandelbrot (CUDA), reference solution: the escape count of every pixel of a window of the
// complex plane, for the Mandelbrot set and Julia sets.
#include "gpulab/student/cuda.hpp"

// --8<-- [start:orbit]
// The window and the fractal, as the launch functions receive them.
struct Window {
  float x0, y0, dx, dy;  // pixel (px, py) stands for (x0 + px * dx, y0 + py * dy)
  int max_iter;
  int julia;  // 0: Mandelbrot (z = 0, c = the point); 1: Julia (z = the point, c = (cx, cy))
  float cx, cy;
};

// One pixel's orbit in progress.
struct Orbit {
  float x, y, c_re, c_im;
  int n;
};

// __fmul_rn and __fadd_rn round each operation on its own: nvcc never fuses them into an FMA, so
// the counts equal the CPU reference's bit for bit.
__device__ Orbit start_orbit(const Window& w, int px, int py) {
  const float re = __fadd_rn(w.x0, __fmul_rn(static_cast<float>(px), w.dx));
  const float im = __fadd_rn(w.y0, __fmul_rn(static_cast<float>(py), w.dy));
  if (w.julia) return {re, im, w.cx, w.cy, 0};
  return {0.0f, 0.0f, re, im, 0};
}

// One step of z = z^2 + c; false (and no step) once the orbit has escaped or reached max_iter.
__device__ bool step(Orbit& o, int max_iter) {
  if (o.n >= max_iter) return false;
  const float x2 = __fmul_rn(o.x, o.x), y2 = __fmul_rn(o.y, o.y);
  if (__fadd_rn(x2, y2) > 4.0f) return false;
  const float xy = __fmul_rn(o.x, o.y);
  o.y = __fadd_rn(__fadd_rn(xy, xy), o.c_im);
  o.x = __fadd_rn(__fsub_rn(x2, y2), o.c_re);
  ++o.n;
  return true;
}
// --8<-- [end:orbit]

// --8<-- [start:naive]
__global__ void mandelbrot_naive_kernel(unsigned* counts, int width, int height, Window w) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x;
  const int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= width || py >= height) return;
  Orbit o = start_orbit(w, px, py);
  while (step(o, w.max_iter)) {}
  counts[static_cast<size_t>(py) * width + px] = static_cast<unsigned>(o.n);
}

void mandelbrot_by_pixel(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy) {
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  const dim3 block(16, 16);
  const dim3 grid(gpulab::blocks_for(width, 16), gpulab::blocks_for(height, 16));
  mandelbrot_naive_kernel<<<grid, block>>>(counts, width, height, w);
  gpulab::check(cudaGetLastError(), "launching mandelbrot_naive_kernel");
}
// --8<-- [end:naive]

// --8<-- [start:balanced]
// The naive kernel's warp runs as long as its slowest pixel while the lanes that escaped idle: 57%
// of the lanes are busy on the timing spiral. Refilling idle lanes with new pixels (per lane, or a
// warp's lanes together after a vote, from a work queue) keeps them busy, but on the H100 the
// refills cost about what they save (a benchmark of variants: 0.69x the naive kernel refilling
// per lane, 1.26x refilling in teams of 32). What pays more is making every step cheaper, so that
// the idle lanes waste less: rounds of kSteps steps with no test and no count (7 rounded operations
// a step, not step()'s 10 and two branches), one escape test a round, then the exact count from the
// state saved before the round that escaped: 1.51x on the spiral (1.63x at max_iter 8192), 1.64x on
// the classic view, 1.70x inside the set. (Teams with these rounds reached 1.38-1.46x: their votes,
// queue and shuffles cost more than the idle lanes they fill.)
//
// Why a round's final state shows an escape inside it (for |c| <= 1.99): once the computed
// x^2 + y^2 > 4, |z| >= 2 - 1e-6 (float rounding), and then |z_next| >= |z|^2 - |c| (less a few
// roundings) >= 2.009; from |z| >= 2.009 on, |z_next| >= |z| * 2.009 - 1.99 >= |z| + 0.01: the
// orbit grows at every step until it overflows to inf, and inf only leads to inf and NaN. So the
// final test, which counts NaN and inf as escaped, sees every escape of the round. For |c| > 1.99
// the orbit may come back (c = -2.1, z = 2.0025: |z_next| is about 1.91), so such a pixel (every
// pixel of a Julia set with |c| > 1.99) skips the rounds and counts every step from its start.
constexpr int kSteps = 16;

// kSteps steps of the orbit, the same rounded operations as step(), with no test and no count.
__device__ void blind_steps(Orbit& o) {
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    const float x2 = __fmul_rn(o.x, o.x), y2 = __fmul_rn(o.y, o.y), xy = __fmul_rn(o.x, o.y);
    o.y = __fadd_rn(__fadd_rn(xy, xy), o.c_im);
    o.x = __fadd_rn(__fsub_rn(x2, y2), o.c_re);
  }
}

// The round's one test: NaN and inf count as escaped (every comparison with NaN is false).
__device__ bool escaped(const Orbit& o) { return !(__fadd_rn(__fmul_rn(o.x, o.x), __fmul_rn(o.y, o.y)) <= 4.0f); }

// Too large a c for the rounds (|c|^2 > 3.96, |c| > 1.99): any rounding of this test is far from
// 1.99^2 = 3.9601, so it need not be exact.
__device__ bool wide_c(const Orbit& o) { return o.c_re * o.c_re + o.c_im * o.c_im > 3.96f; }

__global__ void mandelbrot_balanced_kernel(unsigned* counts, int width, int height, Window w) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x;
  const int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= width || py >= height) return;
  Orbit o = start_orbit(w, px, py);
  Orbit saved = o;  // after the rounds that did not escape: where the exact count goes on
  if (!wide_c(o)) {
    while (o.n <= w.max_iter - kSteps) {  // no round may pass max_iter
      blind_steps(o);
      if (escaped(o)) break;  // the escape lies within this round
      o.n += kSteps;
      saved = o;
    }
  }
  while (step(saved, w.max_iter)) {}  // the exact finish: at most kSteps steps, or a wide c's whole orbit
  counts[static_cast<size_t>(py) * width + px] = static_cast<unsigned>(saved.n);
}

void mandelbrot_balanced(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy) {
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  const dim3 block(16, 16);
  const dim3 grid(gpulab::blocks_for(width, 16), gpulab::blocks_for(height, 16));
  mandelbrot_balanced_kernel<<<grid, block>>>(counts, width, height, w);
  gpulab::check(cudaGetLastError(), "launching mandelbrot_balanced_kernel");
}
// --8<-- [end:balanced]
