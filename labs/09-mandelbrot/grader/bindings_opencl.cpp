// Calls the student's OpenCL host functions (labs/09-mandelbrot/mandelbrot_opencl.cpp) with a buffer;
// the harness's naive kernel is the calibration.
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "mandelbrot_lab.hpp"

namespace gpulab::labs {

namespace {
// The contract's arithmetic: no multiply and add fused, so the counts equal the CPU reference's.
const char* kHarnessNaive = R"(
#pragma OPENCL FP_CONTRACT OFF
__kernel void harness_naive_mandelbrot(__global uint* counts, int width, int height, float x0, float y0,
                                       float dx, float dy, int max_iter, int julia, float cx, float cy) {
  const int px = get_global_id(0), py = get_global_id(1);
  if (px >= width || py >= height) return;
  const float re = x0 + (float)px * dx, im = y0 + (float)py * dy;
  float x = julia ? re : 0.0f, y = julia ? im : 0.0f;
  const float c_re = julia ? cx : re, c_im = julia ? cy : im;
  int n = 0;
  while (n < max_iter) {
    const float x2 = x * x, y2 = y * y;
    if (x2 + y2 > 4.0f) break;
    const float xy = x * y;
    y = (xy + xy) + c_im;
    x = (x2 - y2) + c_re;
    ++n;
  }
  counts[(size_t)py * width + px] = (uint)n;
}
)";
}  // namespace

MandelbrotLaunch bind_mandelbrot(Device& device, const std::string& function) {
  const auto f = find_function(contract::mandelbrot_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& counts, int width, int height, const reference::View& v) {
    f(lab, opencl::memory(counts), width, height, v.x0, v.y0, v.dx, v.dy, v.max_iter, v.julia ? 1 : 0, v.cx, v.cy);
  };
}

MandelbrotLaunch harness_naive_mandelbrot(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, kHarnessNaive, "harness_naive_mandelbrot");
  const OpenCLLab& lab = opencl::lab(device);
  return [kernel, &lab](Buffer& counts, int width, int height, const reference::View& v) {
    set_args(kernel, opencl::memory(counts), width, height, v.x0, v.y0, v.dx, v.dy, v.max_iter, v.julia ? 1 : 0, v.cx,
             v.cy);
    const size_t local[2] = {16, 16};
    const size_t global[2] = {round_up(width, 16), round_up(height, 16)};
    check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
          "launching the harness's naive mandelbrot kernel");
  };
}

}  // namespace gpulab::labs
