// Lab 04-filter (OpenCL host code): launches the kernels of filter.cl. Read README.md, fill in the
// TODOs, and run `make check BACKEND=opencl` in this folder. The grader passes buffers of
// width x height uchar4 pixels; keep the five signatures.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

void box_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height, int radius) {
  // TODO (2-D NDRange): set the arguments of lab.kernel("box_naive_kernel") with
  // gpulab::set_args(kernel, in, out, width, height, radius) and enqueue it on lab.queue() in 2
  // dimensions: local size {32, 8}, global size {round_up(width, 32), round_up(height, 8)}.
  GPULAB_NOT_IMPLEMENTED("box_naive: launch box_naive_kernel (see the TODO above)");
}

void box_tiled(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height, int radius) {
  // TODO (launch): as box_naive, with "box_tiled_kernel" (its work-group size must be 32 x 8).
  GPULAB_NOT_IMPLEMENTED("box_tiled: launch box_tiled_kernel (see the TODO above)");
}

void gaussian(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem temp, cl_mem out, int width, int height, int radius) {
  // TODO (two launches, one queue): "gaussian_rows_kernel" from in into temp, then
  // "gaussian_columns_kernel" from temp into out, with the work-group and global sizes your kernels
  // assume. The queue is in order: the second starts when the first has finished.
  GPULAB_NOT_IMPLEMENTED("gaussian: write and launch the two passes (see the TODOs in filter.cl)");
}

void median3(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height) {
  // TODO (launch): "median3_kernel" with arguments (in, out, width, height), as box_tiled. If your
  //   work-items filter several pixels (filter.cl's TODO 4: 4 pixels of 8 rows), the global size
  //   covers work-items, not pixels: round_up((width + 3) / 4, local x) x round_up((height + 7) / 8,
  //   local y), with the work-group size the kernel requires.
  GPULAB_NOT_IMPLEMENTED("median3: launch median3_kernel (see the TODOs in filter.cl)");
}

void median5(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height) {
  // TODO (bonus): "median5_kernel", as median3 (a work-item per 2x2 block of outputs: (width + 1) / 2
  //   x (height + 1) / 2 work-items, rounded up to the work-group).
  GPULAB_NOT_IMPLEMENTED("median5 (bonus): launch median5_kernel (see the TODO in filter.cl)");
}
