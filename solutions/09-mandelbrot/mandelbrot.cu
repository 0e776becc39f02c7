// Lab 09-mandelbrot (CUDA), reference solution: the escape count of every pixel of a window of the
// complex plane, for the Mandelbrot set and Julia sets.
#include <algorithm>

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
// A persistent grid, as many threads as the GPU holds at once: thread t takes pixels t, t + T,
// t + 2T, ... (T threads in all), and starts its next pixel in the very step its orbit escapes. In
// the naive kernel a warp runs as long as its slowest pixel while the other lanes idle; here every
// lane keeps iterating until its whole list is done, and lists of many pixels spread over the image
// cost about the same. A lane that refills holds up its warp, so the refill is kept short: the next
// pixel's column and row follow from the stride's, computed once, with no division per pixel.
__global__ void mandelbrot_balanced_kernel(unsigned* counts, int width, int height, Window w) {
  const int threads = gridDim.x * blockDim.x;
  const int first = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride_x = threads % width, stride_y = threads / width;
  int px = first % width, py = first / width;
  if (py >= height) return;
  Orbit o = start_orbit(w, px, py);
  for (;;) {
    if (step(o, w.max_iter)) continue;
    counts[static_cast<size_t>(py) * width + px] = static_cast<unsigned>(o.n);
    px += stride_x;
    py += stride_y;
    if (px >= width) px -= width, ++py;
    if (py >= height) break;
    o = start_orbit(w, px, py);
  }
}

constexpr int kBalancedBlock = 128;

void mandelbrot_balanced(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy) {
  int device = 0, sms = 1, per_sm = 1;
  gpulab::check(cudaGetDevice(&device), "asking for the current device");
  gpulab::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "asking for the SM count");
  gpulab::check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device),
                "asking for the threads an SM holds");
  // A full GPU hides the latency of each step's dependent float operations; fewer threads than
  // pixels, so each has many and their costs even out.
  const long long pixels = static_cast<long long>(width) * height;
  const int threads = static_cast<int>(std::min<long long>(pixels, static_cast<long long>(sms) * per_sm));
  const int blocks = (threads + kBalancedBlock - 1) / kBalancedBlock;
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  mandelbrot_balanced_kernel<<<blocks, kBalancedBlock>>>(counts, width, height, w);
  gpulab::check(cudaGetLastError(), "launching mandelbrot_balanced_kernel");
}
// --8<-- [end:balanced]
