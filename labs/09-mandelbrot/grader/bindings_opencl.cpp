// Calls the student's OpenCL host functions (labs/09-mandelbrot/mandelbrot_opencl.cpp) with a buffer;
// the harness's naive kernel is the calibration.
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"    // the functions lab.toml's [signatures] and tasks declare
#include "opencl_kernels.hpp"  // the harness's kernels, grader/*.cl
#include "lab_driver.hpp"
#include "mandelbrot_lab.hpp"

namespace gpulab::labs {

MandelbrotLaunch bind_mandelbrot(Device& device, const std::string& function) {
  const auto f = find_function(contract::mandelbrot_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& counts, int width, int height, const reference::View& v) {
    f(lab, opencl::memory(counts), width, height, v.x0, v.y0, v.dx, v.dy, v.max_iter, v.julia ? 1 : 0, v.cx, v.cy);
  };
}

MandelbrotLaunch harness_naive_mandelbrot(Device& device) {
  cl_kernel kernel =
      opencl::harness_kernel(device, mandelbrot_opencl_kernels::harness_naive_mandelbrot(), "harness_naive_mandelbrot");
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
