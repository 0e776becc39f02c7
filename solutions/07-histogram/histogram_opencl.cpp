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

// Work-groups to fill every compute unit (8 each), no more than `wanted`: each group merges its bins
// into the global ones once, after many bytes.
size_t resident_groups(const gpulab::OpenCLLab& lab, size_t wanted) {
  cl_uint units = 1;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
        "asking for the compute unit count");
  return std::max<size_t>(1, std::min<size_t>(wanted, size_t{units} * 8));
}

void launch_privatised(const gpulab::OpenCLLab& lab, const char* name, cl_mem bytes, cl_mem bins, int n,
                       size_t groups) {
  zero_bins(lab, bins);
  cl_kernel kernel = lab.kernel(name);
  gpulab::set_args(kernel, bytes, bins, n);
  const size_t local = kThreads, global = groups * kThreads;
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        std::string("launching ") + name);
}

void histogram_shared(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  const size_t groups = resident_groups(lab, round_up(n, kThreads) / kThreads);
  launch_privatised(lab, "histogram_shared_kernel", bytes, bins, n, groups);
}
// --8<-- [end:shared]

// --8<-- [start:fast]
void histogram_fast(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  constexpr size_t vector_bytes = 16;  // VECTOR_BYTES in histogram.cl
  const size_t vectors = round_up(n, vector_bytes) / vector_bytes;
  const size_t groups = resident_groups(lab, round_up(vectors, kThreads) / kThreads);
  launch_privatised(lab, "histogram_fast_kernel", bytes, bins, n, groups);
}
// --8<-- [end:fast]
