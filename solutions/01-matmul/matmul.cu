// Lab 01-matmul (CUDA): C (m x n) = A (m x k) * B (k x n), row-major floats.
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
// A block of 256 threads computes a 128 x 128 tile of C; each thread an 8 x 8 block of it, held in
// registers. Per step of 16 along k, the block stages a 128 x 16 slice of A (transposed) and a
// 16 x 128 slice of B in shared memory; each thread then does 8 x 8 x 16 multiply-adds from 16 + 16
// values per k, loaded as float4. The next slices are fetched into registers while the current ones
// are used, and shared memory is double-buffered, so one barrier per step suffices.
constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16;
constexpr int kThreadM = 8, kThreadN = 8;
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
constexpr int kLoads = kBlockM * kBlockK / kThreads;                    // 8 elements of A and of B per thread
constexpr int kPadM = kBlockM + 4;  // staggers the banks of the transposed stores, keeps float4 alignment

__global__ void __launch_bounds__(kThreads) matmul_fast_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                                               float* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(16) float a_slice[2][kBlockK][kPadM];  // a_slice[.][p][i] = A[row0 + i][p0 + p]
  __shared__ __align__(16) float b_slice[2][kBlockK][kBlockN];
  const int tid = threadIdx.x;
  const int tx = tid % (kBlockN / kThreadN), ty = tid / (kBlockN / kThreadN);
  const int row0 = blockIdx.y * kBlockM, col0 = blockIdx.x * kBlockN;

  float a_next[kLoads], b_next[kLoads];
  auto fetch = [&](int p0) {  // global -> registers, zero outside the matrices
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int e = tid + i * kThreads;
      const int ar = row0 + e / kBlockK, ap = p0 + e % kBlockK;
      a_next[i] = ar < m && ap < k ? a[static_cast<size_t>(ar) * k + ap] : 0.0f;
      const int bp = p0 + e / kBlockN, bc = col0 + e % kBlockN;
      b_next[i] = bp < k && bc < n ? b[static_cast<size_t>(bp) * n + bc] : 0.0f;
    }
  };
  auto stage = [&](int buffer) {  // registers -> shared memory
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int e = tid + i * kThreads;
      a_slice[buffer][e % kBlockK][e / kBlockK] = a_next[i];
      b_slice[buffer][e / kBlockN][e % kBlockN] = b_next[i];
    }
  };

  float acc[kThreadM][kThreadN] = {};
  fetch(0);
  stage(0);
  __syncthreads();
  int buffer = 0;
  for (int p0 = 0; p0 < k; p0 += kBlockK) {
    const bool more = p0 + kBlockK < k;
    if (more) fetch(p0 + kBlockK);  // in flight while we compute
#pragma unroll
    for (int p = 0; p < kBlockK; ++p) {
      float av[kThreadM], bv[kThreadN];
      *reinterpret_cast<float4*>(&av[0]) = *reinterpret_cast<const float4*>(&a_slice[buffer][p][ty * kThreadM]);
      *reinterpret_cast<float4*>(&av[4]) = *reinterpret_cast<const float4*>(&a_slice[buffer][p][ty * kThreadM + 4]);
      *reinterpret_cast<float4*>(&bv[0]) = *reinterpret_cast<const float4*>(&b_slice[buffer][p][tx * kThreadN]);
      *reinterpret_cast<float4*>(&bv[4]) = *reinterpret_cast<const float4*>(&b_slice[buffer][p][tx * kThreadN + 4]);
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] += av[i] * bv[j];
    }
    if (more) {
      stage(buffer ^ 1);  // the other buffer: nobody reads it during this step
      __syncthreads();
      buffer ^= 1;
    }
  }

#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int row = row0 + ty * kThreadM + i;
    if (row >= m) break;
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) {
      const int col = col0 + tx * kThreadN + j;
      if (col < n) c[static_cast<size_t>(row) * n + col] = acc[i][j];
    }
  }
}

void matmul_fast(const float* a, const float* b, float* c, int m, int n, int k) {
  const dim3 grid(gpulab::blocks_for(n, kBlockN), gpulab::blocks_for(m, kBlockM));
  matmul_fast_kernel<<<grid, kThreads>>>(a, b, c, m, n, k);
  gpulab::check(cudaGetLastError(), "launching matmul_fast_kernel");
}
// --8<-- [end:fast]
