// Lab 03-bitonic (OpenCL host code): launches the kernels of bitonic.cl. Read README.md, fill in
// the TODOs, and run `make check BACKEND=opencl` in this folder. Keep the four signatures.
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

void bitonic_global(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {
  // TODO (one launch per step): for k = 2 .. n and j = k/2 .. 1, set the arguments of
  // lab.kernel("bitonic_step_kernel") (keys, n, k, j) and enqueue n/2 work-items (local size 256,
  // global size round_up(n / 2, 256)).
  GPULAB_NOT_IMPLEMENTED("bitonic_global: enqueue one bitonic_step_kernel per step (see the TODO above)");
}

void bitonic_shared(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {
  // TODO 5 (fewer launches): bitonic_chunk_sort_kernel on every chunk (work-groups of 1024, one per
  // 2048 keys); then per stage k = 4096 .. n the far steps j = k/2 .. 2048 as bitonic_step_kernel
  // launches and one bitonic_chunk_merge_kernel launch for the near steps.
  GPULAB_NOT_IMPLEMENTED("bitonic_shared: chunk sort, far steps, chunk merges (TODO 1-5)");
}

void bitonic_any_n(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {
  // TODO (bonus): any length; positions >= n behave like UINT_MAX (see the README).
  GPULAB_NOT_IMPLEMENTED("bitonic_any_n: sort any length (bonus)");
}

void bitonic_fast(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {
  // TODO (bonus): fuse far steps, 3 per launch (see the README). Beyond the bound: 5 per launch
  // with 32 keys per work-item, and chunks of 8192 keys whose kernels run five steps per barrier
  // (1 chunk sort + 18 far launches + 11 merges for 2^24 keys).
  GPULAB_NOT_IMPLEMENTED("bitonic_fast: fuse far steps (bonus)");
}
