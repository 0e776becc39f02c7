// Lab 05-reduction (OpenCL host code): launches the kernels of reduction.cl. Read README.md, fill in
// the TODOs, and run `make check BACKEND=opencl` in this folder. The grader passes buffers: `in`
// (n floats, read-only), `scratch` ((n + 1) / 2 floats for partial sums) and `out` (one float).
// Scratch and out hold a poison pattern (NaN) when your function is called: write out[0], and zero
// it first if you add to it. Keep the three signatures; computing the sum on the host is rejected.
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

void reduce_atomic(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n) {
  // TODO (atomics): zero out[0] with clEnqueueFillBuffer (a pattern of one float 0.0f, offset 0,
  // size sizeof(float)) on lab.queue(); then set the arguments of lab.kernel("reduce_atomic_kernel")
  // (in, out, n) and enqueue round_up(n, 256) work-items in work-groups of 256. Check every call.
  GPULAB_NOT_IMPLEMENTED("reduce_atomic: zero out[0], launch reduce_atomic_kernel (see the TODO above)");
}

void reduce_tree(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n) {
  // TODO 4 (a pass per level): launch "reduce_tree_kernel" on (in, 0, n) with one work-group of 256
  // per 512 elements, writing one partial sum per work-group into scratch; then on those partials
  // (scratch at their offset), and so on, until one work-group is enough: that launch writes out[0]
  // (dst = out, dst_offset = 0). Put each level's partials after the ones it reads.
  GPULAB_NOT_IMPLEMENTED("reduce_tree: one reduce_tree_kernel launch per level (TODO 1-4)");
}

void reduce_fast(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n) {
  // TODO (bonus): zero out[0], then one launch of reduce_fast_kernel with work-groups of 256 and
  // min(work-groups the float4 vectors need, 8 x CL_DEVICE_MAX_COMPUTE_UNITS) of them
  // (clGetDeviceInfo on lab.device()).
  GPULAB_NOT_IMPLEMENTED("reduce_fast: vector loads, one launch (bonus)");
}
