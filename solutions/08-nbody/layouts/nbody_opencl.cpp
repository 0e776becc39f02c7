// Lab 08-nbody, SoA experiment (OpenCL host code): copies the bodies into four arrays (kept from
// one launch to the next), then launches the SoA kernels of nbody.cl.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

namespace {

// The four arrays of n floats, grown when n grows; the last ones live until the process ends.
struct Soa {
  cl_mem x = nullptr, y = nullptr, z = nullptr, m = nullptr;
};

Soa soa_of(const gpulab::OpenCLLab& lab, cl_mem bodies, int n) {
  static Soa soa;
  static int capacity = 0;
  if (n > capacity) {
    for (cl_mem array : {soa.x, soa.y, soa.z, soa.m})
      if (array) check(clReleaseMemObject(array), "releasing an SoA array");
    for (cl_mem* array : {&soa.x, &soa.y, &soa.z, &soa.m}) {
      cl_int status = CL_SUCCESS;
      *array = clCreateBuffer(lab.context(), CL_MEM_READ_WRITE, static_cast<size_t>(n) * sizeof(float), nullptr,
                              &status);
      check(status, "allocating an SoA array");
    }
    capacity = n;
  }
  cl_kernel kernel = lab.kernel("to_soa_kernel");
  gpulab::set_args(kernel, bodies, soa.x, soa.y, soa.z, soa.m, n);
  const size_t local = 256, global = round_up(n, local);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        "launching to_soa_kernel");
  return soa;
}

void launch_soa(const gpulab::OpenCLLab& lab, const char* name, const Soa& soa, cl_mem accel, int n,
                float softening2, size_t local, size_t global) {
  cl_kernel kernel = lab.kernel(name);
  gpulab::set_args(kernel, soa.x, soa.y, soa.z, soa.m, accel, n, softening2);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        std::string("launching ") + name);
}

}  // namespace

void nbody_naive(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  cl_kernel kernel = lab.kernel("nbody_naive_kernel");
  gpulab::set_args(kernel, bodies, accel, n, softening2);
  const size_t local = 256, global = round_up(n, local);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        "launching nbody_naive_kernel");
}

void nbody_tiled(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  launch_soa(lab, "nbody_tiled_kernel", soa_of(lab, bodies, n), accel, n, softening2, 256, round_up(n, 256));
}

void nbody_fast(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  const size_t groups = round_up(n, 512) / 512;  // 128 work-items of 4 bodies each per group
  launch_soa(lab, "nbody_fast_kernel", soa_of(lab, bodies, n), accel, n, softening2, 128, groups * 128);
}
