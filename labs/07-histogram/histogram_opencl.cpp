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
  // TODO 6 (occupancy): zero the bins; enqueue histogram_shared_kernel in work-groups of 256, as
  //   many as the device runs at once but no more than the words need: min(groups for the
  //   round_up(n, 4) / 4 words, 8 x the compute units), at least 1 (clGetDeviceInfo with
  //   CL_DEVICE_MAX_COMPUTE_UNITS on lab.device()). OpenCL has no occupancy calculator: 8 groups of
  //   256 work-items fill an NVIDIA SM (2048 threads). Global size = groups x 256.
  GPULAB_NOT_IMPLEMENTED("histogram_shared: per-work-group bins in local memory (TODO 3-6)");
}

void histogram_fast(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n) {
  // TODO (bonus): launch your histogram_fast_kernel (histogram.cl) as in TODO 6, with groups for the
  //   round_up(n, 16) / 16 vectors and 4 groups per compute unit: each holds 32 KiB of per-lane bins,
  //   and 4 fit the shared memory of an SM of an A100 or an H100 (see the README).
  GPULAB_NOT_IMPLEMENTED("histogram_fast: 16-byte loads, a copy of the bins per lane (bonus)");
}
