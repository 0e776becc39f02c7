// Lab 01-matmul (CUDA): C (m x n) = A (m x k) * B (k x n), row-major floats.
#include <cstdint>  // uintptr_t

#include "gpulab/student/cuda.hpp"

// --8<-- [start:naive]
// One thread per element of C: 2k loads from global memory for 2k flops.
__global__ void matmul_naive_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int p = 0; p < k; ++p) sum += a[static_cast<size_t>(row) * k + p] * b[static_cast<size_t>(p) * n + col];
  c[static_cast<size_t>(row) * n + col] = sum;
}

void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) {
  const dim3 block(16, 16);
  const dim3 grid(gpulab::blocks_for(n, block.x), gpulab::blocks_for(m, block.y));
  matmul_naive_kernel<<<grid, block>>>(a, b, c, m, n, k);
  gpulab::check(cudaGetLastError(), "launching matmul_naive_kernel");
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
constexpr int kTile = 32;

// Each block computes a kTile x kTile tile of C. Per step it loads one tile of A and one of B into
// shared memory (each element once, coalesced), then every thread reads kTile values of each from
// there: global loads per element of C drop from 2k to 2k / kTile.
__global__ void matmul_tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float sum = 0.0f;
  for (int p0 = 0; p0 < k; p0 += kTile) {
    // Out-of-range elements load as 0, so they add nothing to the sums.
    a_tile[ty][tx] = row < m && p0 + tx < k ? a[static_cast<size_t>(row) * k + p0 + tx] : 0.0f;
    b_tile[ty][tx] = p0 + ty < k && col < n ? b[static_cast<size_t>(p0 + ty) * n + col] : 0.0f;
    __syncthreads();  // the tiles are complete
    for (int p = 0; p < kTile; ++p) sum += a_tile[ty][p] * b_tile[p][tx];
    __syncthreads();  // everyone is done with the tiles before the next step overwrites them
  }
  if (row < m && col < n) c[static_cast<size_t>(row) * n + col] = sum;
}

void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
  const dim3 block(kTile, kTile);
  const dim3 grid(gpulab::blocks_for(n, kTile), gpulab::blocks_for(m, kTile));
  matmul_tiled_kernel<<<grid, block>>>(a, b, c, m, n, k);
  gpulab::check(cudaGetLastError(), "launching matmul_tiled_kernel");
}
// --8<-- [end:tiled]

// --8<-- [start:fast]
// A block of 256 threads computes a 128 x 128 tile of C; each thread 64 elements of it, held in
// registers, so a value read from shared memory feeds 8 multiply-adds instead of 1. Per step of 8
// along k the block stages a 128 x 8 slice of A (transposed: a thread's 8 rows at one p are
// adjacent, two float4 reads) and an 8 x 128 slice of B in shared memory.
constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8;
constexpr int kThreads = 256;
// Warp tiles: the 8 warps cover the block as 4 x 2 pieces of 32 x 64; a warp's 32 threads as 4 x 8
// threads, each owning 2 x 2 sub-blocks of 4 x 4 (rows tm, tm + 16; columns tn, tn + 32). At one p a
// warp then reads B as 8 adjacent float4 (128 bytes, every bank once) and A as 4 float4 (broadcasts).
constexpr int kWarpM = 32, kWarpN = 64, kLanesN = 8;
// A pipeline of slices in shared memory, filled by cp.async (sm_80 and later): copies from global
// to shared memory that bypass the registers, so 3 slices can be in flight while the block computes
// on a fourth. The load latency hides behind 3 x 512 multiply-adds per thread, at no register cost.
constexpr int kStages = 4;
constexpr int kPadM = kBlockM + 4;  // staggers the banks of A's transposed stores, keeps float4 alignment

// cp.async of 4 or 16 bytes; `valid` false copies none and writes zeros (outside the matrices), so
// the edges need no separate path. Without sm_80 (the PTX built where no GPU is) a plain copy.
template <int kBytes>
__device__ void copy_async(float* shared, const float* global, bool valid) {
#if __CUDA_ARCH__ >= 800
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  if constexpr (kBytes == 16)  // .cg: skip L1, the slice is reused from shared memory
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global), "r"(valid ? 16 : 0));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(to), "l"(global), "r"(valid ? 4 : 0));
#else
  for (int i = 0; i < kBytes / 4; ++i) shared[i] = valid ? global[i] : 0.0f;
#endif
}
__device__ void copy_async_commit() {  // closes a group of copies: one slice
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
__device__ void copy_async_wait() {  // waits until at most kStages - 2 groups are still in flight
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2) : "memory");
#endif
}

struct Slices {
  float a[kStages][kBlockK][kPadM];  // a[s][p][i] = A[row0 + i][p0 + p]
  float b[kStages][kBlockK][kBlockN];
};

// Starts the copies of the slices at p0 into stage s. kVector: n % 4 == 0 and B, C 16-byte aligned,
// so a row of B's slice is 32 copies of 16 bytes, each all in or all out of the matrix.
template <bool kVector>
__device__ void load_slices(Slices& sm, int s, const float* a, const float* b, int m, int n, int k, int row0, int col0,
                            int p0) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < kBlockM * kBlockK / kThreads; ++i) {  // 4 elements of A; a warp reads 4 rows x 32 bytes
    const int e = tid + i * kThreads, r = e / kBlockK, p = e % kBlockK;
    const bool valid = row0 + r < m && p0 + p < k;
    copy_async<4>(&sm.a[s][p][r], valid ? a + static_cast<size_t>(row0 + r) * k + p0 + p : a, valid);
  }
  if constexpr (kVector) {  // one float4 of B
    const int p = tid / (kBlockN / 4), c = tid % (kBlockN / 4) * 4;
    const bool valid = p0 + p < k && col0 + c < n;
    copy_async<16>(&sm.b[s][p][c], valid ? b + static_cast<size_t>(p0 + p) * n + col0 + c : b, valid);
  } else {
#pragma unroll
    for (int i = 0; i < kBlockN * kBlockK / kThreads; ++i) {
      const int e = tid + i * kThreads, p = e / kBlockN, c = e % kBlockN;
      const bool valid = p0 + p < k && col0 + c < n;
      copy_async<4>(&sm.b[s][p][c], valid ? b + static_cast<size_t>(p0 + p) * n + col0 + c : b, valid);
    }
  }
}

// acc[i][j] is C[row0 + tm + i / 4 * 16 + i % 4][col0 + tn + j / 4 * 32 + j % 4].
template <bool kVector>
__device__ void store_tile(const float (&acc)[8][8], float* c, int m, int n, int row, int col) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = row + i / 4 * 16 + i % 4;
    if (r >= m) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int c0 = col + half * 32;
      float* to = c + static_cast<size_t>(r) * n + c0;
      if (kVector && c0 < n) {  // all 4 in: n % 4 == 0
        *reinterpret_cast<float4*>(to) =
            make_float4(acc[i][half * 4], acc[i][half * 4 + 1], acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
      } else if (!kVector) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (c0 + j < n) to[j] = acc[i][half * 4 + j];
      }
    }
  }
}

template <bool kVector>
__global__ void __launch_bounds__(kThreads, 2)  // 2 blocks per SM: at most 128 registers per thread
    matmul_fast_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                       int k) {
  __shared__ __align__(16) Slices sm;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tm = warp / (kBlockN / kWarpN) * kWarpM + lane / kLanesN * 4;
  const int tn = warp % (kBlockN / kWarpN) * kWarpN + lane % kLanesN * 4;
  const int row0 = blockIdx.y * kBlockM, col0 = blockIdx.x * kBlockN;
  const int steps = (k + kBlockK - 1) / kBlockK;

  // Fill kStages - 1 stages; a group is committed even when empty, so the count of groups in flight
  // (what copy_async_wait counts) stays in step with the slices.
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) load_slices<kVector>(sm, s, a, b, m, n, k, row0, col0, s * kBlockK);
    copy_async_commit();
  }
  float acc[8][8] = {};
  for (int step = 0; step < steps; ++step) {
    copy_async_wait();  // this thread's copies of slice `step` have landed,
    __syncthreads();    // everyone's have, and everyone is done with slice step - 1, whose stage is refilled now
    const int next = step + kStages - 1;
    if (next < steps) load_slices<kVector>(sm, next % kStages, a, b, m, n, k, row0, col0, next * kBlockK);
    copy_async_commit();
    const int s = step % kStages;
#pragma unroll
    for (int p = 0; p < kBlockK; ++p) {
      float av[8], bv[8];
      *reinterpret_cast<float4*>(&av[0]) = *reinterpret_cast<const float4*>(&sm.a[s][p][tm]);
      *reinterpret_cast<float4*>(&av[4]) = *reinterpret_cast<const float4*>(&sm.a[s][p][tm + 16]);
      *reinterpret_cast<float4*>(&bv[0]) = *reinterpret_cast<const float4*>(&sm.b[s][p][tn]);
      *reinterpret_cast<float4*>(&bv[4]) = *reinterpret_cast<const float4*>(&sm.b[s][p][tn + 32]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }
  store_tile<kVector>(acc, c, m, n, row0 + tm, col0 + tn);
}

void matmul_fast(const float* a, const float* b, float* c, int m, int n, int k) {
  const dim3 grid(gpulab::blocks_for(n, kBlockN), gpulab::blocks_for(m, kBlockM));
  auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (n % 4 == 0 && aligned(b) && aligned(c))
    matmul_fast_kernel<true><<<grid, kThreads>>>(a, b, c, m, n, k);
  else
    matmul_fast_kernel<false><<<grid, kThreads>>>(a, b, c, m, n, k);
  gpulab::check(cudaGetLastError(), "launching matmul_fast_kernel");
}
// --8<-- [end:fast]
