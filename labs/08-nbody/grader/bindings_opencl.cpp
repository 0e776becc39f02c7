// Calls the student's OpenCL host functions (labs/08-nbody/nbody_opencl.cpp) with buffers; the
// harness's naive kernel is the calibration.
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"    // the functions lab.toml's [signatures] and tasks declare
#include "opencl_kernels.hpp"  // the harness's kernels, grader/*.cl
#include "lab_driver.hpp"
#include "nbody_lab.hpp"

namespace gpulab::labs {

NbodyLaunch bind_nbody(Device& device, const std::string& function) {
  const auto f = find_function(contract::nbody_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& bodies, Buffer& accel, int n, float softening2) {
    f(lab, opencl::memory(bodies), opencl::memory(accel), n, softening2);
  };
}

NbodyLaunch harness_naive_nbody(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, nbody_opencl_kernels::harness_naive_nbody(), "harness_naive_nbody");
  const OpenCLLab& lab = opencl::lab(device);
  return [kernel, &lab](Buffer& bodies, Buffer& accel, int n, float softening2) {
    set_args(kernel, opencl::memory(bodies), opencl::memory(accel), n, softening2);
    const size_t local = 256, global = round_up(static_cast<size_t>(n), local);
    check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
          "launching the harness's naive n-body kernel");
  };
}

}  // namespace gpulab::labs
