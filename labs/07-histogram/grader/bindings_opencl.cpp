// Calls the student's OpenCL histograms (labs/07-histogram/histogram_opencl.cpp) with buffers; the
// harness's per-lane-bins histogram is the staff calibration (OpenCL has no vendor histogram).
#include <algorithm>

#include "gpulab/backend/opencl.hpp"
#include "histogram_lab.hpp"
#include "lab_contract.hpp"    // the functions lab.toml's [signatures] and tasks declare
#include "opencl_kernels.hpp"  // the harness's kernels, grader/*.cl
#include "lab_driver.hpp"

namespace gpulab::labs {

// Four work-groups of 32 KiB of bins per compute unit, as the reference solution launches.
HistogramLaunch staff_histogram(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, histogram_opencl_kernels::harness_histogram(), "harness_histogram");
  const OpenCLLab& lab = opencl::lab(device);
  cl_uint units = 1;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
        "asking for the compute unit count");
  return [kernel, &lab, units](Buffer& bytes, Buffer& bins, int n) {
    const cl_uint zero = 0;
    check(clEnqueueFillBuffer(lab.queue(), opencl::memory(bins), &zero, sizeof zero, 0, 256 * sizeof zero, 0, nullptr,
                              nullptr),
          "zeroing the bins of the harness's histogram");
    set_args(kernel, opencl::memory(bytes), opencl::memory(bins), n);
    const size_t threads = 256, needed = (static_cast<size_t>(n) / 16 + threads) / threads;
    const size_t groups = std::max<size_t>(1, std::min<size_t>(needed, size_t{units} * 4));
    const size_t global = groups * threads;
    check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &threads, 0, nullptr, nullptr),
          "launching the harness's histogram");
  };
}

HistogramLaunch bind_histogram(Device& device, const std::string& function) {
  const auto f = find_function(contract::histogram_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& bytes, Buffer& bins, int n) { f(lab, opencl::memory(bytes), opencl::memory(bins), n); };
}

std::optional<VendorHistogram> vendor_histogram(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
