// Calls the student's OpenCL host functions (labs/04-filter/filter_opencl.cpp) with buffers; the
// harness's staff kernels are the calibrations of the staff_fraction bounds.
#include "filter_lab.hpp"
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"    // the functions lab.toml's [signatures] and tasks declare
#include "opencl_kernels.hpp"  // the harness's kernels, grader/*.cl
#include "lab_driver.hpp"

namespace gpulab::labs {

FilterLaunch bind_filter(Device& device, const std::string& function) {
  const OpenCLLab& lab = opencl::lab(device);
  // One shape for all: the harness passes what a function needs and drops the rest.
  if (auto* f = lookup_function(contract::box_functions(), function))
    return [f, &lab](Buffer& in, Buffer&, Buffer& out, int width, int height, int radius) {
      f(lab, opencl::memory(in), opencl::memory(out), width, height, radius);
    };
  if (auto* f = lookup_function(contract::median_functions(), function))
    return [f, &lab](Buffer& in, Buffer&, Buffer& out, int width, int height, int) {
      f(lab, opencl::memory(in), opencl::memory(out), width, height);
    };
  const auto f = find_function(contract::gaussian_functions(), function);
  return [f, &lab](Buffer& in, Buffer& temp, Buffer& out, int width, int height, int radius) {
    f(lab, opencl::memory(in), opencl::memory(temp), opencl::memory(out), width, height, radius);
  };
}

}  // namespace gpulab::labs

namespace gpulab::labs {

StaffLaunch staff_filter(Device& device, const std::string& function) {
  const OpenCLLab& lab = opencl::lab(device);
  if (function == "box_tiled") {
    cl_kernel kernel = opencl::harness_kernel(device, filter_opencl_kernels::staff_box_tiled(), "staff_box_tiled");
    return [kernel, &lab](Buffer& in, Buffer& out, int width, int height, int radius) {
      set_args(kernel, opencl::memory(in), opencl::memory(out), width, height, radius);
      const size_t local[2] = {32, 8}, global[2] = {round_up(width, 32), round_up(height, 8)};
      check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
            "launching the harness's tiled box filter");
    };
  }
  if (function == "median5") {
    cl_kernel kernel = opencl::harness_kernel(device, filter_opencl_kernels::staff_median5(), "staff_median5");
    return [kernel, &lab](Buffer& in, Buffer& out, int width, int height, int) {
      set_args(kernel, opencl::memory(in), opencl::memory(out), width, height);
      const size_t local[2] = {32, 4};
      const size_t global[2] = {round_up((width + 1) / 2, 32), round_up((height + 1) / 2, 4)};
      check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
            "launching the harness's 5x5 median");
    };
  }
  throw std::invalid_argument("the filter lab has no staff kernel for '" + function + "'");
}

}  // namespace gpulab::labs
