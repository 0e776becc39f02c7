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
// a new orbit), so the kernel makes refills rare and the steps between them cheap:
// - rounds: the warp runs kSteps steps with no test and no count at all (7 rounded operations a
//   step, not step()'s 10 and two branches), then tests each orbit once. An orbit that escaped in
//   the round is not stepped again: it waits for its exact finish (below);
// - the warp finishes and refills only once kFinishAt lanes wait, all of them in one go: each
//   redoes its last round step by step, counted, from the state saved before it, and stores;
// - the pixels come from a work queue, in chunks of 32 neighbouring pixels: one atomicAdd a chunk
//   (one lane asks for the warp), and no warp runs out of work while others still hold a long list.
// A benchmark of variants on the H100: 1.48x the naive kernel on the timing spiral (1.34x at
// max_iter 8192), 1.10x on the classic view, 1.46x inside the set; counting every step instead
// (teams of 16 steps refilling at 8) reached 1.23x on the spiral.
//
// Why a round's final state shows an escape inside it (for |c| <= 1.99): once the computed
// x^2 + y^2 > 4, |z| >= 2 - 1e-6 (float rounding), and then |z_next| >= |z|^2 - |c| (less a few
// roundings) >= 2.009; from |z| >= 2.009 on, |z_next| >= |z| * 2.009 - 1.99 >= |z| + 0.01: the
// orbit grows at every step until it overflows to inf, and inf only leads to inf and NaN. So the
// final test, which counts NaN and inf as escaped, sees every escape of the round. For |c| > 1.99
// the orbit may come back (c = -2.1, z = 2.0025: |z_next| is about 1.91), so such a pixel (every pixel of
// a Julia set with |c| > 1.99) skips the rounds and takes the counted steps from its start.
constexpr int kSteps = 16;
constexpr int kFinishAt = 16;
constexpr int kChunk = 32;
constexpr unsigned kAllLanes = 0xffffffffu;

// The queue: chunks handed out beyond each warp's first one (warp w starts on chunk w). The launch
// zeroes it; chunk c holds pixels c * kChunk to c * kChunk + 31 (row-major order).
__device__ unsigned long long next_chunk;

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

// The exact finish: steps counted one by one with step()'s two tests (max_iter, escape), but
// without a branch, kSteps at a time, until the orbit escapes or reaches max_iter. From a round's
// saved state that is one pass (the escape lies within the round, or max_iter less than a round
// away); for a wide c, the whole orbit.
__device__ void counted_steps(Orbit& o, int max_iter) {
  bool alive = o.n < max_iter;
  while (alive) {
#pragma unroll
    for (int i = 0; i < kSteps; ++i) {
      const float x2 = __fmul_rn(o.x, o.x), y2 = __fmul_rn(o.y, o.y);
      alive = alive & (o.n < max_iter) & !(__fadd_rn(x2, y2) > 4.0f);  // &, not &&: no branch
      o.n += alive;
      const float xy = __fmul_rn(o.x, o.y), two_xy = __fadd_rn(xy, xy), diff = __fsub_rn(x2, y2);
      o.y = __fadd_rn(two_xy, o.c_im);
      o.x = __fadd_rn(diff, o.c_re);
    }
  }
}

// Pixel `offset` of chunk `chunk`, or -1 past the image's end.
__device__ long long pixel_in(long long chunk, int offset, long long pixels) {
  const long long pixel = chunk * kChunk + offset;
  return pixel < pixels ? pixel : -1;
}

// The lane's next pixel (-1: none left) and its orbit, with the state the rounds start from saved.
__device__ void start_pixel(long long pixel, int width, const Window& w, Orbit& o, float& sx, float& sy,
                            bool& waiting) {
  if (pixel < 0) return;  // the lane stays waiting, with no pixel
  o = start_orbit(w, static_cast<unsigned>(pixel) % width, static_cast<unsigned>(pixel) / width);
  sx = o.x;
  sy = o.y;
  waiting = wide_c(o) || kSteps > w.max_iter;  // no round may pass max_iter
}

__global__ void mandelbrot_balanced_kernel(unsigned* counts, int width, int height, Window w) {
  const int lane = threadIdx.x % 32;
  const long long warps = gridDim.x * blockDim.x / 32, pixels = static_cast<long long>(width) * height;
  // The warp's chunk of pixels (its first: the warp's number) and how many of its pixels are taken:
  // the same in all its lanes.
  long long chunk = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int used = 0;
  long long pixel = -1;        // this lane's pixel, -1 when none
  bool waiting = true;         // for the exact finish (or no pixel): the lane is done with the rounds
  Orbit o{};                   // o.n: the steps of the rounds that did not escape
  float sx = 0.0f, sy = 0.0f;  // z after those o.n steps: where the finish starts
  for (;;) {
    const unsigned waiting_lanes = __ballot_sync(kAllLanes, waiting);  // the same in every lane
    const int n_waiting = __popc(waiting_lanes);
    if (n_waiting >= kFinishAt) {
      if (waiting && pixel >= 0) {
        o.x = sx;
        o.y = sy;
        counted_steps(o, w.max_iter);
        counts[pixel] = static_cast<unsigned>(o.n);
      }
      if (n_waiting == 32 && pixel_in(chunk, used, pixels) < 0) return;  // every lane done, no pixel left
      const int room = kChunk - used;                                    // pixels left in `chunk`
      long long next = -1;
      if (n_waiting >= room) {  // the chunk runs out: lane 0 takes the next one for the warp
        unsigned long long taken = 0;
        if (lane == 0) taken = atomicAdd(&next_chunk, 1ull);
        next = warps + static_cast<long long>(__shfl_sync(kAllLanes, taken, 0));
      }
      if (waiting) {  // the waiting lanes take the next n_waiting pixels, in lane order
        const int rank = __popc(waiting_lanes & ((1u << lane) - 1));
        pixel = rank < room ? pixel_in(chunk, used + rank, pixels) : pixel_in(next, rank - room, pixels);
        start_pixel(pixel, width, w, o, sx, sy, waiting);
      }
      if (n_waiting >= room) {
        chunk = next;
        used = n_waiting - room;
      } else {
        used += n_waiting;
      }
    }
    blind_steps(o);
    if (!waiting) {
      if (escaped(o)) {
        waiting = true;  // the escape lies within this round: finish from (sx, sy)
      } else {
        o.n += kSteps;
        sx = o.x;
        sy = o.y;
        waiting = o.n > w.max_iter - kSteps;  // no round may pass max_iter
      }
    }
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
