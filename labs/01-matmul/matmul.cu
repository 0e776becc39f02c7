// Lab 01-matmul (CUDA): C (m x n) = A (m x k) * B (k x n), all row-major floats:
// C[row * n + col] = sum over p of A[row * k + p] * B[p * n + col].
// Read README.md first, then fill in the TODOs and run `make check` in this folder. The grader
// passes device pointers; keep the three signatures. cuBLAS, CUTLASS, thrust and CUB are rejected.
#include "gpulab/student/cuda.hpp"

__global__ void matmul_naive_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  // TODO (one thread per output): col from the x dimension, row from the y dimension (so a warp
  // reads a row of B coalesced). Threads outside C (row >= m or col >= n) return. Accumulate the
  // dot product of row `row` of A and column `col` of B in a float register, then store it once.
  // Index in size_t: row * k overflows an int for large matrices.
}

void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) {
  // TODO (launch): 16 x 16 blocks and a grid of gpulab::blocks_for(n, 16) x gpulab::blocks_for(m, 16)
  // blocks; then check cudaGetLastError().
  GPULAB_NOT_IMPLEMENTED("matmul_naive: launch matmul_naive_kernel (see the TODOs above)");
}

constexpr int kTile = 32;

__global__ void matmul_tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  // TODO 1 (shared memory): declare two __shared__ float tiles of kTile x kTile, one for A, one for B.
  // TODO 2 (cooperative, coalesced loads): for each step p0 = 0, kTile, 2 kTile, ... < k, thread
  //   (tx, ty) loads A[row][p0 + tx] and B[p0 + ty][col] into the tiles, with row = blockIdx.y * kTile + ty
  //   and col = blockIdx.x * kTile + tx. Elements outside A or B load as 0.0f (they then add nothing),
  //   which handles every size that is not a multiple of kTile.
  // TODO 3 (barrier): __syncthreads() once the tiles are loaded...
  // TODO 4 (reuse): ...then accumulate sum += a_tile[ty][p] * b_tile[p][tx] for p < kTile...
  // TODO 5 (second barrier): ...and __syncthreads() again before the next step overwrites the tiles.
  //   The README asks why this second barrier is needed.
  // TODO 6: after the last step, threads inside C store their sum. Every thread, inside C or not,
  //   must take part in the loads and reach both barriers: no early return in this kernel.
}

void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
  // TODO (launch): kTile x kTile blocks, a grid of blocks_for(n, kTile) x blocks_for(m, kTile).
  GPULAB_NOT_IMPLEMENTED("matmul_tiled: launch matmul_tiled_kernel (see the TODOs above)");
}

// Bonus: anything correct that beats the threshold (see the README). A proven plan:
//  - each block computes a 128 x 128 tile of C with 256 threads, each thread an 8 x 8 block of it in
//    registers (register tiling: every value loaded from shared memory feeds 8 multiply-adds);
//  - per step of 16 along k, stage a 128 x 16 slice of A (stored transposed) and a 16 x 128 slice of
//    B in shared memory; read them as float4;
//  - fetch the next slices into registers while computing on the current ones (double buffering).
// On an H100 this plan reaches about 5x naive (the bound is 3.0x). The road beyond it, to 91% of
// cuBLAS (warp tiles, a cp.async pipeline, 128 x 256 tiles), is in docs/labs/matmul.md.
__global__ void matmul_fast_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  // TODO (register tiling): your fastest kernel.
}

void matmul_fast(const float* a, const float* b, float* c, int m, int n, int k) {
  // TODO (launch): the configuration your fast kernel needs.
  GPULAB_NOT_IMPLEMENTED("matmul_fast: write and launch matmul_fast_kernel (bonus)");
}
