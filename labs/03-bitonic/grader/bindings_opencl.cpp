// Calls the student's OpenCL sorts (labs/03-bitonic/bitonic_opencl.cpp) on a buffer; the
// harness's naive bitonic sort is the calibration (OpenCL has no vendor sort).
#include "bitonic_lab.hpp"
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"    // the functions lab.toml's [signatures] and tasks declare
#include "opencl_kernels.hpp"  // the harness's kernels, grader/*.cl
#include "lab_driver.hpp"

namespace gpulab::labs {

SortLaunch bind_sort(Device& device, const std::string& function) {
  const auto f = find_function(contract::bitonic_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& keys, int n) { f(lab, opencl::memory(keys), n); };
}

SortLaunch harness_naive_sort(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, bitonic_opencl_kernels::harness_naive_step(), "harness_naive_step");
  const OpenCLLab& lab = opencl::lab(device);
  return [kernel, &lab](Buffer& keys, int n) {
    int padded = 1;
    while (padded < n) padded <<= 1;
    const size_t local = 256, global = round_up(padded / 2, local);
    for (int k = 2; k <= padded; k <<= 1)
      for (int j = k / 2; j > 0; j >>= 1) {
        set_args(kernel, opencl::memory(keys), n, k, j, static_cast<int>(j == k / 2));
        check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
              "launching the harness's naive bitonic step");
      }
  };
}

std::optional<VendorSort> vendor_sort(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
