// Lab 02-transpose (OpenCL host code): launches the kernels of transpose.cl. Read README.md, fill
// in the TODOs, and run `make check BACKEND=opencl` in this folder. The grader passes buffers;
// keep the two signatures.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

void transpose_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols) {
  // TODO (2-D NDRange): get lab.kernel("transpose_naive_kernel"), set its arguments with
  // gpulab::set_args(kernel, in, out, rows, cols), and enqueue it on lab.queue() with
  // clEnqueueNDRangeKernel in 2 dimensions: local size {16, 16}, global size
  // {round_up(cols, 16), round_up(rows, 16)} (dimension 0 runs along a row). Check the status.
  GPULAB_NOT_IMPLEMENTED("transpose_naive: launch transpose_naive_kernel (see the TODO above)");
}

void transpose_optimized(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols) {
  // TODO (NDRange for tiles): launch "transpose_tiled_kernel" with work-groups of {32, 8} work-items
  // (TILE x ROWS_PER_PASS in transpose.cl), one work-group per 32 x 32 tile: the global size is
  // {round_up(cols, 32), round_up(rows, 32) / 32 * 8}.
  GPULAB_NOT_IMPLEMENTED("transpose_optimized: launch transpose_tiled_kernel (see the TODO above)");
}
