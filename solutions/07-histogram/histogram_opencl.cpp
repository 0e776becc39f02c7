// Lab 07-histogram (OpenCL host code): launches the kernels of histogram.cl.
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

constexpr int kBins = 256;

// The bins start with garbage (the grader poisons them): zero them on the queue, before the kernel.
void zero_bins(const gpulab::OpenCLLab& lab, cl_mem bins) {
  const cl_uint zero = 0;
  check(clEnqueueFillBuffer(lab.queue(), bins, &zero, sizeof zero, 0, kBins * sizeof(cl_uint), 0, nullptr, nullptr),
        "zeroing the bins");
}

// --8<-- [start:global]
void histogram_global(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  zero_bins(lab, bins);
  cl_kernel kernel = lab.kernel("histogram_global_kernel");
  gpulab::set_args(kernel, bytes, bins, n);
  const size_t local = 256, global = round_up(n, local);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        "launching histogram_global_kernel");
}
// --8<-- [end:global]

// --8<-- [start:shared]
constexpr size_t kThreads = 256;  // THREADS in histogram.cl: one work-item per bin

// `per_unit` work-groups on every compute unit, no more than `wanted`: each group merges its bins
// into the global ones once, after many bytes. OpenCL cannot say how many groups fit a compute unit;
// the callers pass what fits an NVIDIA SM.
size_t resident_groups(const gpulab::OpenCLLab& lab, size_t per_unit, size_t wanted) {
  cl_uint units = 1;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
        "asking for the compute unit count");
  return std::max<size_t>(1, std::min<size_t>(wanted, size_t{units} * per_unit));
}

// `bytes_per_load`: what one work-item reads at a time (WORD_BYTES or VECTOR_BYTES in histogram.cl).
void launch_privatised(const gpulab::OpenCLLab& lab, const char* name, cl_mem bytes, cl_mem bins, int n,
                       size_t bytes_per_load, size_t per_unit) {
  zero_bins(lab, bins);
  cl_kernel kernel = lab.kernel(name);
  gpulab::set_args(kernel, bytes, bins, n);
  const size_t loads = round_up(n, bytes_per_load) / bytes_per_load;
  const size_t groups = resident_groups(lab, per_unit, round_up(loads, kThreads) / kThreads);
  const size_t local = kThreads, global = groups * kThreads;
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        std::string("launching ") + name);
}

// 8 groups of 256 work-items fill an SM (2048 threads); 8 KiB of bins in all.
void histogram_shared(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  launch_privatised(lab, "histogram_shared_kernel", bytes, bins, n, 4, 8);
}
// --8<-- [end:shared]

// --8<-- [start:fast]
// 32 KiB of per-lane bins per group: 4 groups fit the shared memory of an SM of an A100 (164 KiB)
// or an H100 (228 KiB) with room to spare; more would wait for a second wave.
void histogram_fast(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  launch_privatised(lab, "histogram_fast_kernel", bytes, bins, n, 16, 4);
}
// --8<-- [end:fast]
