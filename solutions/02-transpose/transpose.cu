// Lab 02-transpose (CUDA): out (cols x rows) = transpose of in (rows x cols), both row-major.
#include "gpulab/student/cuda.hpp"

// --8<-- [start:naive]
// Neighbouring threads read neighbouring elements of a row (coalesced), but write elements a
// whole column apart: every warp's store touches 32 different memory segments.
__global__ void transpose_naive_kernel(const float* in, float* out, int rows, int cols) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) out[static_cast<size_t>(col) * rows + row] = in[static_cast<size_t>(row) * cols + col];
}

void transpose_naive(const float* in, float* out, int rows, int cols) {
  const dim3 block(16, 16);
  const dim3 grid(gpulab::blocks_for(cols, block.x), gpulab::blocks_for(rows, block.y));
  transpose_naive_kernel<<<grid, block>>>(in, out, rows, cols);
  gpulab::check(cudaGetLastError(), "launching transpose_naive_kernel");
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
constexpr int kTile = 32;         // a 32 x 32 tile: one warp covers a tile row
constexpr int kRowsPerPass = 8;   // 32 x 8 threads, each moving 4 elements: more work per thread

// A block stages a 32 x 32 tile in shared memory: it reads the tile's rows from `in` and writes
// the tile's columns as rows of `out`, so both global accesses are coalesced.
__global__ void transpose_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  // One padding column: a tile column then spans all 32 banks instead of hitting one bank 32 times.
  __shared__ float tile[kTile][kTile + 1];

  int col = blockIdx.x * kTile + threadIdx.x;
  int row = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRowsPerPass)
    if (col < cols && row + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];

  __syncthreads();  // the whole tile must be loaded before any thread reads another thread's element

  // Tile (blockIdx.y, blockIdx.x) of `in` is tile (blockIdx.x, blockIdx.y) of `out`.
  col = blockIdx.y * kTile + threadIdx.x;
  row = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRowsPerPass)
    if (col < rows && row + j < cols) out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
}

void transpose_optimized(const float* in, float* out, int rows, int cols) {
  const dim3 block(kTile, kRowsPerPass);
  const dim3 grid(gpulab::blocks_for(cols, kTile), gpulab::blocks_for(rows, kTile));
  transpose_tiled_kernel<<<grid, block>>>(in, out, rows, cols);
  gpulab::check(cudaGetLastError(), "launching transpose_tiled_kernel");
}
// --8<-- [end:tiled]
