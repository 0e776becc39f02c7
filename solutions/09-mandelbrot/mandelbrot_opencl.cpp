// Lab 09-mandelbrot (OpenCL host code), reference solution: launches the kernels of mandelbrot.cl.
#include <algorithm>

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
constexpr size_t kBalancedGroup = 128;
constexpr size_t kItemsPerUnit = 2048;  // a full NVIDIA SM: enough warps to hide each step's dependent float ops

void mandelbrot_balanced(const gpulab::OpenCLLab& lab, cl_mem counts, int width, int height, float x0, float y0,
                         float dx, float dy, int max_iter, int julia, float cx, float cy) {
  cl_uint units = 1;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
        "asking for the compute unit count");
  // Fewer work-items than pixels, so each has many: their costs even out.
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  const size_t global = round_up(std::min(pixels, size_t{units} * kItemsPerUnit), kBalancedGroup);
  cl_kernel kernel = lab.kernel("mandelbrot_balanced_kernel");
  gpulab::set_args(kernel, counts, width, height, x0, y0, dx, dy, max_iter, julia, cx, cy);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &kBalancedGroup, 0, nullptr, nullptr),
        "launching mandelbrot_balanced_kernel");
}
// --8<-- [end:balanced]
