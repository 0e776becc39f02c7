// Lab 09-mandelbrot (OpenCL host code), reference solution: launches the kernels of mandelbrot.cl.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

// --8<-- [start:naive]
void mandelbrot_by_pixel(const gpulab::OpenCLLab& lab, cl_mem counts, int width, int height, float x0, float y0,
                         float dx, float dy, int max_iter, int julia, float cx, float cy) {
  cl_kernel kernel = lab.kernel("mandelbrot_naive_kernel");
  gpulab::set_args(kernel, counts, width, height, x0, y0, dx, dy, max_iter, julia, cx, cy);
  const size_t local[2] = {16, 16};
  const size_t global[2] = {round_up(width, 16), round_up(height, 16)};
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
        "launching mandelbrot_naive_kernel");
}
// --8<-- [end:naive]

// --8<-- [start:balanced]
// The kernel of mandelbrot.cl (one work-item per pixel, rounds of cheaper steps: it says why no
// lanes are refilled), in the naive kernel's 16 x 16 work-groups.
void mandelbrot_balanced(const gpulab::OpenCLLab& lab, cl_mem counts, int width, int height, float x0, float y0,
                         float dx, float dy, int max_iter, int julia, float cx, float cy) {
  cl_kernel kernel = lab.kernel("mandelbrot_balanced_kernel");
  gpulab::set_args(kernel, counts, width, height, x0, y0, dx, dy, max_iter, julia, cx, cy);
  const size_t local[2] = {16, 16};
  const size_t global[2] = {round_up(width, 16), round_up(height, 16)};
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
        "launching mandelbrot_balanced_kernel");
}
// --8<-- [end:balanced]
