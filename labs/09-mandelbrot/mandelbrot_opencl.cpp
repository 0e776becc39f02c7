// Lab 09-mandelbrot (OpenCL host code): launches the kernels of mandelbrot.cl. Read README.md, fill
// in the TODOs, and run `make check BACKEND=opencl` in this folder. Keep the two signatures.
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

void mandelbrot_by_pixel(const gpulab::OpenCLLab& lab, cl_mem counts, int width, int height, float x0, float y0,
                         float dx, float dy, int max_iter, int julia, float cx, float cy) {
  // TODO 4: set the arguments of lab.kernel("mandelbrot_naive_kernel") (counts, width, ..., cy, in
  //   the kernel's order) with gpulab::set_args, and enqueue a 2-D range: local size 16 x 16,
  //   global size round_up(width, 16) x round_up(height, 16). Check the call.
  GPULAB_NOT_IMPLEMENTED("mandelbrot_by_pixel: one work-item per pixel (TODO 1-4)");
}

void mandelbrot_balanced(const gpulab::OpenCLLab& lab, cl_mem counts, int width, int height, float x0, float y0,
                         float dx, float dy, int max_iter, int julia, float cx, float cy) {
  // TODO 5-6 (bonus): write mandelbrot_balanced_kernel in mandelbrot.cl (its comment gives a plan),
  //   then enqueue it as TODO 4 enqueues the naive kernel (a 2-D range in 16 x 16 work-groups).
  //   Check the call.
  GPULAB_NOT_IMPLEMENTED("mandelbrot_balanced: rounds of steps without a test, then the exact count (TODO 5-6)");
}
