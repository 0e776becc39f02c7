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
// Balanced: each warp is a team of 32 lanes, and a lane whose orbit is done takes a new pixel. The
// naive kernel's warp runs as long as its slowest pixel while the lanes that escaped idle (57% busy
// on the timing spiral); refilling lanes keep it busy, but a refill costs the whole warp (a store,
// a division, a new orbit), so three things keep it cheap:
// - the warp looks at its lanes only every kSteps steps, which run with no branch at all;
// - it refills only once kRefillAt lanes are done, all of them in one go;
// - the pixels come from a work queue, in chunks of 32 neighbouring pixels: one atomicAdd a chunk
//   (one lane asks for the warp), and no warp runs out of work while others still hold a long list.
// A benchmark of variants on the H100 (timing spiral): 1.18x the naive kernel with 8 steps, 1.23x
// with 16; on the classic view static lists of chunks (warp w: chunks w, w + warps, ...) fell to
// 0.54x, where the queue kept 0.88x.
constexpr int kSteps = 16;
constexpr int kRefillAt = 8;
constexpr int kChunk = 32;
constexpr unsigned kAllLanes = 0xffffffffu;

// The queue: chunks handed out beyond each warp's first one (warp w starts on chunk w). The launch
// zeroes it; chunk c holds pixels c * kChunk to c * kChunk + 31 (row-major order).
__device__ unsigned long long next_chunk;

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

// Pixel `offset` of chunk `chunk`, or -1 past the image's end.
__device__ long long pixel_in(long long chunk, int offset, long long pixels) {
  const long long pixel = chunk * kChunk + offset;
  return pixel < pixels ? pixel : -1;
}

__global__ void mandelbrot_balanced_kernel(unsigned* counts, int width, int height, Window w) {
  const int lane = threadIdx.x % 32;
  const long long warps = gridDim.x * blockDim.x / 32, pixels = static_cast<long long>(width) * height;
  // The warp's chunk of pixels (its first: the warp's number) and how many of its pixels are taken:
  // the same in all its lanes.
  long long chunk = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int used = 0;
  long long pixel = -1;  // this lane's pixel, -1 when none
  bool alive = false;    // the orbit has not escaped: a lane is done when not alive or at max_iter
  Orbit o{};
  for (;;) {
    const bool done = !alive || o.n >= w.max_iter;
    const unsigned done_lanes = __ballot_sync(kAllLanes, done);  // the same in every lane: no divergence
    const int n_done = __popc(done_lanes);
    if (n_done >= kRefillAt) {
      if (done && pixel >= 0) counts[pixel] = static_cast<unsigned>(min(o.n, w.max_iter));
      if (n_done == 32 && pixel_in(chunk, used, pixels) < 0) return;  // every lane done, no pixel left
      const int room = kChunk - used;                                 // pixels left in `chunk`
      long long next = -1;
      if (n_done >= room) {  // the chunk runs out: lane 0 takes the next one for the warp
        unsigned long long taken = 0;
        if (lane == 0) taken = atomicAdd(&next_chunk, 1ull);
        next = warps + static_cast<long long>(__shfl_sync(kAllLanes, taken, 0));
      }
      if (done) {  // the done lanes take the next n_done pixels, in lane order
        const int rank = __popc(done_lanes & ((1u << lane) - 1));
        pixel = rank < room ? pixel_in(chunk, used + rank, pixels) : pixel_in(next, rank - room, pixels);
        alive = pixel >= 0;
        if (alive) o = start_orbit(w, static_cast<unsigned>(pixel) % width, static_cast<unsigned>(pixel) / width);
      }
      if (n_done >= room) {
        chunk = next;
        used = n_done - room;
      } else {
        used += n_done;
      }
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
  void* queue = nullptr;
  gpulab::check(cudaGetSymbolAddress(&queue, next_chunk), "finding the work queue's counter");
  gpulab::check(cudaMemset(queue, 0, sizeof(unsigned long long)), "zeroing the work queue's counter");
  const Window w{x0, y0, dx, dy, max_iter, julia, cx, cy};
  mandelbrot_balanced_kernel<<<blocks, kBalancedBlock>>>(counts, width, height, w);
  gpulab::check(cudaGetLastError(), "launching mandelbrot_balanced_kernel");
}
// --8<-- [end:balanced]
