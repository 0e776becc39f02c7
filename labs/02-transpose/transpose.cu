// Lab 02-transpose (CUDA): out (cols x rows) = transpose of in (rows x cols), both row-major:
// out[c * rows + r] = in[r * cols + c]. Read README.md first, then fill in the TODOs and run
// `make check` in this folder. The grader passes device pointers; keep the two signatures.
#include "gpulab/student/cuda.hpp"

__global__ void transpose_naive_kernel(const float* in, float* out, int rows, int cols) {
  // TODO (2-D indexing): one thread per element. Take col from the x dimension (blockIdx.x,
  // blockDim.x, threadIdx.x) and row from the y dimension, so neighbouring threads of a warp read
  // neighbouring elements of a row. Bounds test: the grid covers whole blocks, so only threads
  // with row < rows and col < cols copy in[row * cols + col] to out[col * rows + row].
  // Compute the indices in size_t: 8192 * 8192 elements overflow nothing, but larger ones would.
}

void transpose_naive(const float* in, float* out, int rows, int cols) {
  // TODO (2-D launch configuration): launch transpose_naive_kernel with 16 x 16 blocks
  // (dim3 block(16, 16)) and a grid of gpulab::blocks_for(cols, 16) x gpulab::blocks_for(rows, 16)
  // blocks, then check cudaGetLastError().
  GPULAB_NOT_IMPLEMENTED("transpose_naive: launch transpose_naive_kernel (see the TODOs above)");
}

constexpr int kTile = 32;        // the tile is kTile x kTile elements
constexpr int kRowsPerPass = 8;  // blocks of kTile x kRowsPerPass threads: each thread moves 4 elements

__global__ void transpose_tiled_kernel(const float* in, float* out, int rows, int cols) {
  // TODO 1 (shared memory): declare a __shared__ float tile of kTile x (kTile + 1). Why + 1? The
  //   README's section on bank conflicts explains; try it without and compare the GB/s.
  // TODO 2 (coalesced loads): this block owns tile (blockIdx.y, blockIdx.x) of `in`. Thread
  //   (threadIdx.x, threadIdx.y) loads in[(row + j) * cols + col] into tile[threadIdx.y + j][threadIdx.x]
  //   for j = 0, 8, 16, 24, with col = blockIdx.x * kTile + threadIdx.x and
  //   row = blockIdx.y * kTile + threadIdx.y, skipping elements outside the matrix.
  // TODO 3 (synchronisation): __syncthreads() so the whole tile is loaded before anyone reads it.
  // TODO 4 (coalesced stores): the tile lands at tile (blockIdx.x, blockIdx.y) of `out`, which has
  //   `rows` columns. With col = blockIdx.y * kTile + threadIdx.x and row = blockIdx.x * kTile + threadIdx.y,
  //   store tile[threadIdx.x][threadIdx.y + j] to out[(row + j) * rows + col], again with a bounds test.
}

void transpose_optimized(const float* in, float* out, int rows, int cols) {
  // TODO (launch): blocks of kTile x kRowsPerPass threads, one block per tile:
  // a grid of gpulab::blocks_for(cols, kTile) x gpulab::blocks_for(rows, kTile). Check the launch.
  GPULAB_NOT_IMPLEMENTED("transpose_optimized: launch transpose_tiled_kernel (see the TODOs above)");
}
