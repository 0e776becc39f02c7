// Lab 08-nbody (OpenCL host code): launches the kernels of nbody.cl.
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

// --8<-- [start:naive]
void nbody_naive(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  constexpr size_t local = 256;
  launch(lab, "nbody_naive_kernel", bodies, accel, n, softening2, local, round_up(n, local));
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
void nbody_tiled(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  constexpr size_t tile = 256;  // TILE in nbody.cl: one work-item per body of a tile
  launch(lab, "nbody_tiled_kernel", bodies, accel, n, softening2, tile, round_up(n, tile));
}
// --8<-- [end:tiled]

// --8<-- [start:fast]
void nbody_fast(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  constexpr size_t items = 256, bodies_per_item = 4;  // FAST_THREADS and BODIES_PER_ITEM in nbody.cl
  // One work-group of 256 work-items per 1024 bodies.
  const size_t groups = round_up(n, items * bodies_per_item) / (items * bodies_per_item);
  launch(lab, "nbody_fast_kernel", bodies, accel, n, softening2, items, groups * items);
}
// --8<-- [end:fast]
