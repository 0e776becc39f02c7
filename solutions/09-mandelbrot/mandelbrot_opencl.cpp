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
constexpr size_t kTeam = 32;          // work-items per work-group: the team of mandelbrot.cl, one warp on NVIDIA
constexpr size_t kTeamsPerUnit = 32;  // the most work-groups an NVIDIA SM holds: 1024 work-items
constexpr size_t kChunk = 32;         // CHUNK of mandelbrot.cl

void mandelbrot_balanced(const gpulab::OpenCLLab& lab, cl_mem counts, int width, int height, float x0, float y0,
                         float dx, float dy, int max_iter, int julia, float cx, float cy) {
  cl_uint units = 1;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
        "asking for the compute unit count");
  // A persistent grid: as many teams as the device holds at once, and no more than chunks of pixels.
  const size_t chunks = (static_cast<size_t>(width) * static_cast<size_t>(height) + kChunk - 1) / kChunk;
  const size_t global = std::min(chunks, size_t{units} * kTeamsPerUnit) * kTeam;
  cl_kernel kernel = lab.kernel("mandelbrot_balanced_kernel");
  gpulab::set_args(kernel, counts, width, height, x0, y0, dx, dy, max_iter, julia, cx, cy);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &kTeam, 0, nullptr, nullptr),
        "launching mandelbrot_balanced_kernel");
}
// --8<-- [end:balanced]
