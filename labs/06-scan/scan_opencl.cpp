// Lab 06-scan (OpenCL host code): launches the kernels of scan.cl. Read README.md, fill in the
// TODOs, and run `make check BACKEND=opencl` in this folder. Keep the three signatures. `scratch`
// holds n words (at least one) for your block sums.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;
using gpulab::set_args;

constexpr int kBlock = 1024;  // BLOCK in scan.cl

void scan_block(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n) {
  // TODO 3: n <= kBlock: set the arguments of lab.kernel("scan_block_kernel") (in, out, n) and
  //   enqueue one work-group of kBlock work-items (global = local = kBlock); check the call.
  GPULAB_NOT_IMPLEMENTED("scan_block: one work-group, Hillis-Steele in local memory (TODO 1-3)");
}

void scan_any_n(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n) {
  // TODO 6 (three phases, any n): scan_blocks_kernel over round_up(n, kBlock) work-items with the
  //   block totals at scratch offset 0; if there is more than one block, scan the totals in place
  //   (a recursive helper that takes a buffer and an offset for each of in, out and scratch: the
  //   totals' own totals go right after them), then add_block_offsets_kernel.
  GPULAB_NOT_IMPLEMENTED("scan_any_n: scan blocks, scan the block sums, add back (TODO 4-6)");
}

void scan_fast(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n) {
  // TODO (bonus): a single pass with decoupled look-back, 8 bytes a word instead of 16: clear the
  //   ticket and the tile states with clEnqueueFillBuffer, then scan_lookback_kernel (see the README).
  GPULAB_NOT_IMPLEMENTED("scan_fast: a single pass with decoupled look-back (bonus)");
}
