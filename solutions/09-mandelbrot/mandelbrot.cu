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
// Balanced: each warp is a team of 32 lanes sharing one list of pixels, and a lane whose orbit is
// done takes the list's next pixel. The naive kernel's warp runs as long as its slowest pixel while
// the lanes that escaped idle (57% busy on the timing spiral); refilling lanes keep it busy, but a
// refill costs the whole warp (a store, a division, a new orbit), so two things keep it cheap:
// - the warp looks at its lanes only every kSteps steps, which run with no branch at all;
// - it refills only once kRefillAt lanes are done, all of them in one go.
constexpr int kSteps = 8;
constexpr int kRefillAt = 8;
constexpr int kChunk = 32;  // a warp's list: chunks of 32 neighbouring pixels, spread over the image
constexpr unsigned kAllLanes = 0xffffffffu;

// kSteps steps of the orbit without a branch: the same rounded operations as step(), and the same
// escape test, but a lane that escaped goes on computing (on inf and NaN, at no cost to the warp)
// and stops counting. Past max_iter the count runs on: the caller stores min(n, max_iter).
__device__ void lean_steps(Orbit& o, bool& alive) {
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    const float x2 = __fmul_rn(o.x, o.x), y2 = __fmul_rn(o.y, o.y);
    alive = alive & !(__fadd_rn(x2, y2) > 4.0f);  // &, not &&: no branch
    o.n += alive;
    const float xy = __fmul_rn(o.x, o.y), two_xy = __fadd_rn(xy, xy), diff = __fsub_rn(x2, y2);
    o.y = __fadd_rn(two_xy, o.c_im);
    o.x = __fadd_rn(diff, o.c_re);
  }
}

// The pixel at `position` in the list of warp `warp` of `warps` (chunks warp, warp + warps, ...),
// or -1 past the image's end. Chunks interleaved over the image give every warp a similar mix of
// cheap and costly pixels, so the warps finish together.
__device__ long long pixel_of(long long warp, long long warps, long long position, long long pixels) {
  const long long pixel = (warp + position / kChunk * warps) * kChunk + position % kChunk;
  return pixel < pixels ? pixel : -1;
}

__global__ void mandelbrot_balanced_kernel(unsigned* counts, int width, int height, Window w) {
  const int lane = threadIdx.x % 32;
  const long long warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, warps = gridDim.x * blockDim.x / 32;
  const long long pixels = static_cast<long long>(width) * height;
  long long taken = 0;   // pixels the warp has taken from its list: the same in all its lanes
  long long pixel = -1;  // this lane's pixel, -1 when none
  bool alive = false;    // the orbit has not escaped: a lane is done when not alive or at max_iter
  Orbit o{};
  for (;;) {
    const bool done = !alive || o.n >= w.max_iter;
    const unsigned done_lanes = __ballot_sync(kAllLanes, done);  // the same in every lane: no divergence
    const int n_done = __popc(done_lanes);
    if (n_done >= kRefillAt) {
      if (done && pixel >= 0) counts[pixel] = static_cast<unsigned>(min(o.n, w.max_iter));
      if (n_done == 32 && pixel_of(warp, warps, taken, pixels) < 0) return;  // every lane done, list empty
      if (done) {
        // The done lanes take the next n_done pixels of the list, in lane order.
        pixel = pixel_of(warp, warps, taken + __popc(done_lanes & ((1u << lane) - 1)), pixels);
        alive = pixel >= 0;
        if (alive) o = start_orbit(w, static_cast<unsigned>(pixel) % width, static_cast<unsigned>(pixel) / width);
      }
      taken += n_done;
    }
    lean_steps(o, alive);
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
  // A persistent grid: as many threads as the GPU holds at once (a full SM hides the latency of each
  // step's dependent float operations), and no more warps than chunks of pixels.
  const long long chunks = (static_cast<long long>(width) * height + kChunk - 1) / kChunk;
  const long long threads = std::min(chunks * 32, static_cast<long long>(sms) * per_sm);
  const int blocks = static_cast<int>((threads + kBalancedBlock - 1) / kBalancedBlock);
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  mandelbrot_balanced_kernel<<<blocks, kBalancedBlock>>>(counts, width, height, w);
  gpulab::check(cudaGetLastError(), "launching mandelbrot_balanced_kernel");
}
// --8<-- [end:balanced]
