// Lab 08-nbody (CUDA): one step of an all-pairs gravitational n-body, softened. bodies[j] holds
// (x, y, z, mass); accel[i] must receive (ax, ay, az, 0) with
//   a_i = sum over all j of m_j (r_j - r_i) / (|r_j - r_i|^2 + softening2)^(3/2).
// The term j = i is 0 (r_j - r_i = 0 and softening2 > 0): loop over every j, no test needed.
// Read README.md first, then fill in the TODOs and run `make check` in this folder. The grader
// passes device pointers to n float4 each; keep the three signatures.
#include "gpulab/student/cuda.hpp"

constexpr int kNaiveBlock = 256;

__global__ void nbody_naive_kernel(const float4* bodies, float4* accel, int n, float softening2) {
  // TODO 1 (one thread per body): i = blockIdx.x * blockDim.x + threadIdx.x; threads with i >= n
  //   return. Read your own body once: float4 me = bodies[i].
  // TODO 2 (the formula, read from global memory): for every j < n read bodies[j] and add its term:
  //   dx = other.x - me.x (likewise dy, dz); dist2 = dx*dx + dy*dy + dz*dz + softening2;
  //   inv_dist = 1.0f / sqrtf(dist2); s = other.w * inv_dist^3; ax += dx * s (likewise ay, az).
  //   Accumulate in float registers: 20 flops per interaction, n of them per thread.
  // TODO 3: store accel[i] = make_float4(ax, ay, az, 0.0f) once, at the end.
}

void nbody_naive(const float4* bodies, float4* accel, int n, float softening2) {
  // TODO (launch): blocks of kNaiveBlock threads, gpulab::blocks_for(n, kNaiveBlock) of them; then
  // check cudaGetLastError() with a message that names the kernel.
  GPULAB_NOT_IMPLEMENTED("nbody_naive: launch nbody_naive_kernel (see the TODOs above)");
}

constexpr int kTile = 256;  // bodies per tile = threads per block

__global__ void nbody_tiled_kernel(const float4* bodies, float4* accel, int n, float softening2) {
  // TODO 1 (shared memory): declare __shared__ float4 tile[kTile].
  // TODO 2 (cooperative, coalesced loads): i = blockIdx.x * kTile + threadIdx.x; read your own body
  //   (threads past n use (0, 0, 0, 0)). For each j0 = 0, kTile, 2 kTile, ... < n, thread t loads
  //   bodies[j0 + t] into tile[t]; past n it stores (0, 0, 0, 0): a body of mass 0 adds exactly
  //   0, so the inner loop needs no bounds test.
  // TODO 3 (barrier): __syncthreads() once the tile is loaded...
  // TODO 4 (reuse, rsqrt): ...then add the terms of all kTile bodies of the tile, read from shared
  //   memory. Use inv_dist = rsqrtf(dist2): one hardware instruction instead of a square root and a
  //   division (the README's "Precision" says why it is accurate enough).
  // TODO 5 (second barrier): __syncthreads() before the next iteration overwrites the tile.
  // TODO 6: threads with i < n store their acceleration. Every thread, inside n or not, must take
  //   part in the loads and reach both barriers: no early return in this kernel.
}

void nbody_tiled(const float4* bodies, float4* accel, int n, float softening2) {
  // TODO (launch): blocks of kTile threads, gpulab::blocks_for(n, kTile) of them.
  GPULAB_NOT_IMPLEMENTED("nbody_tiled: launch nbody_tiled_kernel (see the TODOs above)");
}

// Bonus: anything correct that beats the threshold (2.5x the harness's naive kernel on a GPU; the
// tiled kernel reaches about 2.25x). A proven plan (the README's "Several bodies per thread"):
//  - register blocking: each thread computes 4 bodies, 256 threads apart (coalesced), so every
//    float4 read from shared memory feeds 4 interactions and 4 independent sums hide latency;
//  - blocks of 256 threads, each covering 1024 bodies; tiles of 256 bodies in shared memory;
//  - `#pragma unroll` on the loop over the tile and on the loop over the thread's 4 bodies;
//  - fewer instructions per interaction: start the sum of squares with softening2 (three fmaf, no
//    separate multiply and add), and the flush-to-zero reciprocal square root, one instruction,
//    which rsqrtf is not: asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)). Blocking alone,
//    with rsqrtf, reached only 2.1x on the H100.
__global__ void nbody_fast_kernel(const float4* bodies, float4* accel, int n, float softening2) {
  // TODO (register blocking): your fastest kernel.
}

void nbody_fast(const float4* bodies, float4* accel, int n, float softening2) {
  // TODO (launch): the configuration your fast kernel needs.
  GPULAB_NOT_IMPLEMENTED("nbody_fast: write and launch nbody_fast_kernel (bonus)");
}
