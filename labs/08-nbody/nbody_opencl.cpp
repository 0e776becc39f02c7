// Lab 08-nbody (OpenCL host code): launches the kernels of nbody.cl. Read README.md, fill in the
// TODOs, and run `make check BACKEND=opencl` in this folder. Keep the three signatures.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

namespace {
// The kernels of this lab all take (bodies, accel, n, softening2) and run on a 1-D NDRange.
void launch(const gpulab::OpenCLLab& lab, const char* name, cl_mem bodies, cl_mem accel, int n, float softening2,
            size_t local, size_t global) {
  cl_kernel kernel = lab.kernel(name);
  gpulab::set_args(kernel, bodies, accel, n, softening2);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        std::string("launching ") + name);
}
}  // namespace

void nbody_naive(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  // TODO (NDRange): local size 256, a global size covering n work-items rounded up to whole
  // work-groups (round_up(n, 256)); then launch(lab, "nbody_naive_kernel", bodies, accel, n,
  // softening2, local, global).
  GPULAB_NOT_IMPLEMENTED("nbody_naive: launch nbody_naive_kernel (see the TODO above)");
}

void nbody_tiled(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  // TODO (NDRange for tiles): local size TILE = 256 (nbody.cl's reqd_work_group_size), global round_up(n, 256).
  GPULAB_NOT_IMPLEMENTED("nbody_tiled: launch nbody_tiled_kernel (see the TODO above)");
}

void nbody_fast(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  // TODO (bonus): launch your nbody_fast_kernel with the NDRange it needs.
  GPULAB_NOT_IMPLEMENTED("nbody_fast: write and launch nbody_fast_kernel (bonus)");
}
