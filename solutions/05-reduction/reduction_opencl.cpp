// Lab 05-reduction (OpenCL host code): launches the kernels of reduction.cl.
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

namespace {

void enqueue(const gpulab::OpenCLLab& lab, cl_kernel kernel, size_t global, size_t local, const char* what) {
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr), what);
}

// The harness poisons out[0]: sums made of atomic additions need it to start at zero.
void zero_sum(const gpulab::OpenCLLab& lab, cl_mem out) {
  const float zero = 0.0f;
  check(clEnqueueFillBuffer(lab.queue(), out, &zero, sizeof zero, 0, sizeof zero, 0, nullptr, nullptr),
        "zeroing the sum before the atomic additions");
}

}  // namespace

// --8<-- [start:atomic]
void reduce_atomic(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n) {
  zero_sum(lab, out);
  cl_kernel kernel = lab.kernel("reduce_atomic_kernel");
  gpulab::set_args(kernel, in, out, n);
  enqueue(lab, kernel, round_up(n, 256), 256, "launching reduce_atomic_kernel");
}
// --8<-- [end:atomic]

// --8<-- [start:tree]
// One launch per level: n elements become ceil(n / 512) partial sums, the same kernel sums those,
// and so on; the level that fits in one work-group writes out[0]. Each level's partials go to their
// own part of scratch, after the ones the level reads.
void reduce_tree(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n) {
  constexpr int threads = 256, elements = 2 * threads;  // TREE_THREADS, TREE_ELEMENTS in reduction.cl
  cl_kernel kernel = lab.kernel("reduce_tree_kernel");
  cl_mem level = in;
  int level_offset = 0, next_offset = 0;
  for (int count = n;;) {
    const int groups = (count + elements - 1) / elements;
    cl_mem sums = groups == 1 ? out : scratch;
    const int sums_offset = groups == 1 ? 0 : next_offset;
    gpulab::set_args(kernel, level, level_offset, count, sums, sums_offset);
    enqueue(lab, kernel, static_cast<size_t>(groups) * threads, threads, "launching reduce_tree_kernel");
    if (groups == 1) return;
    level = scratch;
    level_offset = sums_offset;
    next_offset = sums_offset + groups;
    count = groups;
  }
}
// --8<-- [end:tree]

// --8<-- [start:fast]
void reduce_fast(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n) {
  // Two work-groups per compute unit: enough loads in flight to fill the memory (each work-item has
  // four), and few sums for the atomic addition at the end, which OpenCL 1.2 makes a compare-and-swap
  // loop that the groups retry one after another (on the H100: 8 groups per unit, 64% of copy; 2, 96%).
  constexpr size_t threads = 256, groups_per_unit = 2;  // FAST_THREADS in reduction.cl
  cl_uint units = 1;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
        "asking for the number of compute units");
  // Enough work-groups to fill the device, no more than the vectors need: each work-item then loops.
  const size_t needed = (static_cast<size_t>(n) / 4 + threads - 1) / threads;
  const size_t groups = std::max<size_t>(1, std::min(needed, units * groups_per_unit));
  zero_sum(lab, out);
  cl_kernel kernel = lab.kernel("reduce_fast_kernel");
  gpulab::set_args(kernel, in, out, n);
  enqueue(lab, kernel, groups * threads, threads, "launching reduce_fast_kernel");
}
// --8<-- [end:fast]
