// Calls the student's OpenCL host functions (labs/08-nbody/nbody_opencl.cpp) with buffers; the
// harness's naive kernel is the calibration.
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "nbody_lab.hpp"

namespace gpulab::labs {

namespace {
// The same kernel as baselines_cuda.cu's: one work-item per body, global reads, 1 / sqrt.
const char* kHarnessNaive = R"(
__kernel void harness_naive_nbody(__global const float4* bodies, __global float4* accel, int n, float softening2) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float4 me = bodies[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float4 other = bodies[j];
    const float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
    const float dist2 = dx * dx + dy * dy + dz * dz + softening2;
    const float inv_dist = 1.0f / sqrt(dist2);
    const float s = other.w * inv_dist * inv_dist * inv_dist;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  accel[i] = (float4)(ax, ay, az, 0.0f);
}
)";
}  // namespace

NbodyLaunch bind_nbody(Device& device, const std::string& function) {
  const auto f = find_function(contract::nbody_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& bodies, Buffer& accel, int n, float softening2) {
    f(lab, opencl::memory(bodies), opencl::memory(accel), n, softening2);
  };
}

NbodyLaunch harness_naive_nbody(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, kHarnessNaive, "harness_naive_nbody");
  const OpenCLLab& lab = opencl::lab(device);
  return [kernel, &lab](Buffer& bodies, Buffer& accel, int n, float softening2) {
    set_args(kernel, opencl::memory(bodies), opencl::memory(accel), n, softening2);
    const size_t local = 256, global = round_up(static_cast<size_t>(n), local);
    check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
          "launching the harness's naive n-body kernel");
  };
}

}  // namespace gpulab::labs
