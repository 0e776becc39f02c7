// Calls the student's OpenCL host functions (labs/05-reduction/reduction_opencl.cpp) with buffers; the
// harness's tree is the staff calibration (OpenCL has no vendor reduction).
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"    // the functions lab.toml's [signatures] and tasks declare
#include "opencl_kernels.hpp"  // the harness's kernels, grader/*.cl
#include "lab_driver.hpp"
#include "reduction_lab.hpp"

namespace gpulab::labs {

ReduceLaunch bind_reduce(Device& device, const std::string& function) {
  const auto f = find_function(contract::reduction_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& scratch, Buffer& out, int n) {
    f(lab, opencl::memory(in), opencl::memory(scratch), opencl::memory(out), n);
  };
}

ReduceLaunch staff_reduce(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, reduction_opencl_kernels::harness_tree(), "harness_tree");
  const OpenCLLab& lab = opencl::lab(device);
  return [kernel, &lab](Buffer& in, Buffer& scratch, Buffer& out, int n) {
    constexpr int threads = 256, elements = 2 * threads;
    cl_mem level = opencl::memory(in);
    int level_offset = 0, next_offset = 0;
    for (int count = n;;) {
      const int groups = (count + elements - 1) / elements;
      cl_mem sums = groups == 1 ? opencl::memory(out) : opencl::memory(scratch);
      const int sums_offset = groups == 1 ? 0 : next_offset;
      set_args(kernel, level, level_offset, count, sums, sums_offset);
      const size_t global = static_cast<size_t>(groups) * threads, local = threads;
      check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
            "launching the harness's tree reduction");
      if (groups == 1) return;
      level = opencl::memory(scratch);
      level_offset = sums_offset;
      next_offset = sums_offset + groups;
      count = groups;
    }
  };
}

std::optional<VendorReduce> vendor_reduce(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
