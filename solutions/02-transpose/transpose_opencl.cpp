// Lab 02-transpose (OpenCL host code): launches the kernels of transpose.cl.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

// --8<-- [start:naive]
void transpose_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols) {
  cl_kernel kernel = lab.kernel("transpose_naive_kernel");
  gpulab::set_args(kernel, in, out, rows, cols);
  const size_t local[2] = {16, 16};
  const size_t global[2] = {round_up(cols, local[0]), round_up(rows, local[1])};  // x runs along a row
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
        "launching transpose_naive_kernel");
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
void transpose_optimized(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols) {
  constexpr size_t tile = 32, rows_per_pass = 8;  // as TILE and ROWS_PER_PASS in transpose.cl
  cl_kernel kernel = lab.kernel("transpose_tiled_kernel");
  gpulab::set_args(kernel, in, out, rows, cols);
  const size_t local[2] = {tile, rows_per_pass};
  // One work-group per 32 x 32 tile: 32 work-items across, 8 down (each covers 4 rows of the tile).
  const size_t global[2] = {round_up(cols, tile), round_up(rows, tile) / tile * rows_per_pass};
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
        "launching transpose_tiled_kernel");
}
// --8<-- [end:tiled]
