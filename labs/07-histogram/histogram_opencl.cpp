// Lab 07-histogram (OpenCL host code): launches the kernels of histogram.cl. Read README.md, fill
// in the TODOs, and run `make check BACKEND=opencl` in this folder. Keep the three signatures.
//
// The bins start with garbage: the grader fills them with 0xFF bytes before every launch, so each
// launch function must zero them itself before counting (clEnqueueFillBuffer on lab.queue(),
// before the kernel: the queue runs commands in order).
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

constexpr int kBins = 256;

void histogram_global(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  // TODO 1 (the contract): zero the 256 bins: clEnqueueFillBuffer with a cl_uint 0 as the pattern,
  //   kBins * sizeof(cl_uint) bytes. Check the call.
  // TODO 2: set the arguments of lab.kernel("histogram_global_kernel") (bytes, bins, n) and
  //   enqueue one work-item per byte (local size 256, global size round_up(n, 256)).
  GPULAB_NOT_IMPLEMENTED("histogram_global: zero the bins, one work-item per byte (see the TODOs above)");
}

void histogram_shared(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  // TODO 6: zero the bins; enqueue histogram_shared_kernel in work-groups of 256, as many as fill
  //   the device but no more than the bytes need: min(round_up(n, 256) / 256, 8 x the compute
  //   units) (clGetDeviceInfo with CL_DEVICE_MAX_COMPUTE_UNITS on lab.device()), at least 1.
  GPULAB_NOT_IMPLEMENTED("histogram_shared: per-work-group bins in local memory (TODO 3-6)");
}

void histogram_fast(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  // TODO (bonus): vector loads, per-warp bins, merged runs of equal bytes (see the README).
  GPULAB_NOT_IMPLEMENTED("histogram_fast: vector loads, per-warp bins, merged runs (bonus)");
}
