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
// The road to cuBLAS (docs/labs/matmul.md measures each step): a block of 256 threads computes a
// 128 x 256 tile of C, each thread 16 x 8 = 128 elements of it held in registers, so a value read
// from shared memory feeds 8 or 16 multiply-adds instead of 1. Per step of 16 along k the block
// stages a 128 x 16 slice of A (transposed: the rows a thread needs at one p are adjacent) and a
// 16 x 256 slice of B in shared memory; 16 rather than 8 halves the barriers and the waits per
// multiply-add (measured: 91% of cuBLAS against 87.5%).
constexpr int kBlockM = 128, kBlockN = 256, kBlockK = 16;
constexpr int kThreads = 256;
// Warp tiles: the 8 warps cover the block as 2 x 4 pieces of 64 x 64; a warp's 32 lanes as 4 x 8
// (CUTLASS's SIMT layout), each lane owning 4 x 2 sub-blocks of 4 x 4 (rows tm + 16 i, columns
// tn + 32 j). At one p a warp reads A as 4 distinct float4 per sub-block row (64 adjacent bytes, each
// broadcast to 8 lanes) and B as 8 distinct float4 per sub-block column (128 adjacent bytes, each
// broadcast to 4 lanes): every shared read is a 16-byte load free of bank conflicts, 6 of them per
// 128 multiply-adds. Measured against lanes as 8 x 4 (as many reads): 1.5% faster; ptxas needs fewer
// registers (213 instead of 255), and 8 lanes' float4 stores of C fill 128 adjacent bytes.
constexpr int kWarpM = 64, kWarpN = 64, kLanesM = 4, kLanesN = 8;
constexpr int kThreadM = kWarpM / kLanesM, kThreadN = kWarpN / kLanesN;  // 16 x 8
// A pipeline of slices in shared memory, filled by cp.async (sm_80 and later): copies from global
// to shared memory that bypass the registers, so 3 slices can be in flight while the block computes
// on a fourth; the load latency hides behind 3 x 2048 multiply-adds per thread, at no register cost.
constexpr int kStages = 4;
constexpr int kPadM = kBlockM + 4;  // staggers the banks of A's transposed stores, keeps float4 alignment
// Blocks launched together share slices of A and B in L2 when their tiles are close: the block order
// runs down groups of 8 block rows, column by column, instead of along whole rows of C.
constexpr int kGroupRows = 8;

struct Stage {
  float a[kBlockK][kPadM];  // a[p][i] = A[row0 + i][p0 + p]
  float b[kBlockK][kBlockN];
};
// 4 stages are 97 KB, more than the 48 KB a static __shared__ array may have: dynamic shared memory,
// allowed per kernel with cudaFuncSetAttribute (an SM has 228 KB; one such block per SM).
constexpr int kSharedBytes = kStages * sizeof(Stage);

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

// One thread's share of the copies of a slice. The addresses are worked out once and advance by a
// slice per step: the main loop spends its instructions on multiply-adds, not on index arithmetic.
// kVector: n % 4 == 0 and B, C 16-byte aligned, so B's slice is copied in float4, each all in or all
// out of the matrix; otherwise one float per copy.
template <bool kVector>
struct SliceCopier {
  static constexpr int kWidthB = kVector ? 4 : 1;
  static constexpr int kCopiesA = kBlockM * kBlockK / kThreads;            // 8, 16 rows apart
  static constexpr int kCopiesB = kBlockK * kBlockN / kWidthB / kThreads;  // 4 or 16
  static constexpr int kRowsApartB = kThreads * kWidthB / kBlockN;         // 4 or 1
  const float *a, *b;     // this thread's first element of the current slice of A and of B
  size_t a_rows, b_rows;  // 32 rows of A, kRowsApartB rows of B
  int pa, pb;             // the slice's column of A and row of B this thread copies (first one)
  int k;
  unsigned rows_in;  // bit i: A's row of copy i is inside the matrix
  bool col_in;       // B's column(s) are inside the matrix

  __device__ SliceCopier(const float* a_, const float* b_, int m, int n, int k_, int row0, int col0) : k(k_) {
    const int tid = threadIdx.x, ra = tid / kBlockK, cb = tid % (kBlockN / kWidthB) * kWidthB;
    pa = tid % kBlockK;
    pb = tid / (kBlockN / kWidthB);
    a_rows = static_cast<size_t>(kThreads / kBlockK) * k;
    b_rows = static_cast<size_t>(kRowsApartB) * n;
    rows_in = 0;
    for (int i = 0; i < kCopiesA; ++i) rows_in |= (row0 + ra + i * kThreads / kBlockK < m ? 1u : 0u) << i;
    col_in = col0 + cb < n;
    a = a_ + static_cast<size_t>(min(row0 + ra, m - 1)) * k + pa;  // clamped: stays a valid address
    b = b_ + static_cast<size_t>(pb) * n + (col_in ? col0 + cb : 0);
  }
  // Starts the copies of the slice at p0 into `stage` and moves on to the next slice.
  __device__ void copy(Stage& stage, int p0, size_t n) {
    const bool a_in = p0 + pa < k;
#pragma unroll
    for (int i = 0; i < kCopiesA; ++i) {
      const bool valid = a_in && (rows_in >> i & 1);
      copy_async<4>(&stage.a[pa][threadIdx.x / kBlockK + i * kThreads / kBlockK], valid ? a + i * a_rows : a, valid);
    }
#pragma unroll
    for (int i = 0; i < kCopiesB; ++i) {
      const bool valid = col_in && p0 + pb + i * kRowsApartB < k;
      copy_async<kWidthB * 4>(&stage.b[pb + i * kRowsApartB][threadIdx.x % (kBlockN / kWidthB) * kWidthB],
                              valid ? b + i * b_rows : b, valid);
    }
    a += kBlockK;
    b += kBlockK * n;
  }
};

// acc[i][j] is C[row + i / 4 * 16 + i % 4][col + j / 4 * 32 + j % 4]: float4 stores when kVector.
template <bool kVector>
__device__ void store_tile(const float (&acc)[kThreadM][kThreadN], float* c, int m, int n, int row, int col) {
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int r = row + i / 4 * kLanesM * 4 + i % 4;
    if (r >= m) continue;
#pragma unroll
    for (int j = 0; j < kThreadN; j += 4) {
      const int c0 = col + j / 4 * kLanesN * 4;
      float* to = c + static_cast<size_t>(r) * n + c0;
      if (kVector && c0 < n) {  // all 4 in: n % 4 == 0
        *reinterpret_cast<float4*>(to) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else if (!kVector) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          if (c0 + jj < n) to[jj] = acc[i][j + jj];
      }
    }
  }
}

// The block's tile, in grouped order (kGroupRows block rows at a time, column by column).
__device__ int2 block_tile(int blocks_n, int blocks_m) {
  const int id = blockIdx.x, per_group = kGroupRows * blocks_n;
  const int first = id / per_group * kGroupRows, rows = min(blocks_m - first, kGroupRows);
  return make_int2(id % per_group / rows, first + id % per_group % rows);
}

template <bool kVector>
__global__ void __launch_bounds__(kThreads, 1)  // one block per SM: up to 255 registers per thread
    matmul_fast_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                       int k) {
  extern __shared__ __align__(16) unsigned char shared[];
  Stage* stages = reinterpret_cast<Stage*>(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tm = warp / (kBlockN / kWarpN) * kWarpM + lane / kLanesN * 4;
  const int tn = warp % (kBlockN / kWarpN) * kWarpN + lane % kLanesN * 4;
  const int2 tile = block_tile((n + kBlockN - 1) / kBlockN, (m + kBlockM - 1) / kBlockM);
  const int row0 = tile.y * kBlockM, col0 = tile.x * kBlockN;
  const int steps = (k + kBlockK - 1) / kBlockK;
  SliceCopier<kVector> copier(a, b, m, n, k, row0, col0);

  // Fill kStages - 1 stages; a group is committed even when empty, so the count of groups in flight
  // (what copy_async_wait counts) stays in step with the slices.
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) copier.copy(stages[s], s * kBlockK, n);
    copy_async_commit();
  }
  float acc[kThreadM][kThreadN] = {};
  for (int step = 0; step < steps; ++step) {
    copy_async_wait();  // this thread's copies of slice `step` have landed,
    __syncthreads();    // everyone's have, and everyone is done with slice step - 1, whose stage is refilled now
    const int next = step + kStages - 1;
    if (next < steps) copier.copy(stages[next % kStages], next * kBlockK, n);
    copy_async_commit();
    const Stage& st = stages[step % kStages];
#pragma unroll
    for (int p = 0; p < kBlockK; ++p) {
      float av[kThreadM], bv[kThreadN];
#pragma unroll
      for (int i = 0; i < kThreadM; i += 4)
        *reinterpret_cast<float4*>(&av[i]) = *reinterpret_cast<const float4*>(&st.a[p][tm + i / 4 * kLanesM * 4]);
#pragma unroll
      for (int j = 0; j < kThreadN; j += 4)
        *reinterpret_cast<float4*>(&bv[j]) = *reinterpret_cast<const float4*>(&st.b[p][tn + j / 4 * kLanesN * 4]);
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }
  store_tile<kVector>(acc, c, m, n, row0 + tm, col0 + tn);
}

template <bool kVector>
void launch_fast(const float* a, const float* b, float* c, int m, int n, int k) {
  gpulab::check(
      cudaFuncSetAttribute(matmul_fast_kernel<kVector>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes),
      "allowing matmul_fast_kernel its shared memory");
  const int blocks = gpulab::blocks_for(n, kBlockN) * gpulab::blocks_for(m, kBlockM);  // 1D: block_tile orders them
  matmul_fast_kernel<kVector><<<blocks, kThreads, kSharedBytes>>>(a, b, c, m, n, k);
  gpulab::check(cudaGetLastError(), "launching matmul_fast_kernel");
}

void matmul_fast(const float* a, const float* b, float* c, int m, int n, int k) {
  auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (n % 4 == 0 && aligned(b) && aligned(c))
    launch_fast<true>(a, b, c, m, n, k);
  else
    launch_fast<false>(a, b, c, m, n, k);
}
// --8<-- [end:fast]
