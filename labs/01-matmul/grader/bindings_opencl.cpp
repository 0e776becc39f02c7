// Calls the student's OpenCL host functions (labs/01-matmul/matmul_opencl.cpp) with buffers; the
// harness's naive kernel is the calibration (OpenCL has no vendor GEMM).
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"    // the functions lab.toml's [signatures] and tasks declare
#include "opencl_kernels.hpp"  // the harness's kernels, grader/*.cl
#include "lab_driver.hpp"
#include "matmul_lab.hpp"

namespace gpulab::labs {

MatmulLaunch bind_matmul(Device& device, const std::string& function) {
  const auto f = find_function(contract::matmul_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& a, Buffer& b, Buffer& c, int m, int n, int k) {
    f(lab, opencl::memory(a), opencl::memory(b), opencl::memory(c), m, n, k);
  };
}

MatmulLaunch harness_naive_matmul(Device& device) {
  cl_kernel kernel =
      opencl::harness_kernel(device, matmul_opencl_kernels::harness_naive_matmul(), "harness_naive_matmul");
  const OpenCLLab& lab = opencl::lab(device);
  return [kernel, &lab](Buffer& a, Buffer& b, Buffer& c, int m, int n, int k) {
    set_args(kernel, opencl::memory(a), opencl::memory(b), opencl::memory(c), m, n, k);
    const size_t local[2] = {16, 16};
    const size_t global[2] = {round_up(n, 16), round_up(m, 16)};
    check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
          "launching the harness's naive matmul kernel");
  };
}

std::optional<VendorGemm> vendor_sgemm(Device&) { return std::nullopt; }

}  // namespace gpulab::labs
