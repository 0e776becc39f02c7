// Lab 06-scan (CUDA): inclusive prefix sums of n 32-bit words, out[i] = in[0] + ... + in[i].
// Read README.md first, then fill in the TODOs and run `make check` in this folder. The grader
// passes device pointers: `in` (n words, read-only), `out` (n words) and `scratch` (n words, at
// least one, yours to use for block sums); keep the three signatures. Sums wrap modulo 2^32
// (unsigned arithmetic is exact there). CUB, thrust and copies to the host are rejected.
#include "gpulab/student/cuda.hpp"

using gpulab::blocks_for;
using gpulab::check;

constexpr int kBlock = 1024;  // threads of a block scan, one word each: the `block` task's largest n

// TODO 1 (block scan in shared memory, Hillis-Steele): return the inclusive scan of `value` over
//   the block's threads. Put the value in a __shared__ array, __syncthreads(), then for offset =
//   1, 2, 4, ..., kBlock/2: thread t adds the element at t - offset (if t >= offset). Read from one
//   buffer and write to a second, then swap them, with one __syncthreads() a step: why would a
//   single buffer need two? (README: races.)
__device__ unsigned block_inclusive_scan(unsigned value) {
  return value;
}

__global__ void scan_block_kernel(const unsigned* in, unsigned* out, int n) {
  // TODO 2: every thread scans one word (0 past n: every thread must reach the barriers) and
  //   writes its sum if it is inside n.
}

void scan_block(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  // TODO 3: n <= kBlock: launch scan_block_kernel with one block of kBlock threads; check the launch.
  GPULAB_NOT_IMPLEMENTED("scan_block: one block of kBlock threads, Hillis-Steele in shared memory (TODO 1-3)");
}

// TODO 4 (phase 1): like scan_block_kernel on the words blockIdx.x * kBlock + threadIdx.x, and the
//   block's last thread writes the block's total to block_sums[blockIdx.x].
__global__ void scan_blocks_kernel(const unsigned* in, unsigned* out, unsigned* block_sums, int n) {}

// TODO 5 (phase 3): every block but the first adds scanned_block_sums[blockIdx.x - 1] (the sum of
//   all words before the block) to its words.
__global__ void add_block_offsets_kernel(unsigned* out, const unsigned* scanned_block_sums, int n) {}

void scan_any_n(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  // TODO 6 (three phases, any n): blocks = blocks_for(n, kBlock); scan the blocks into `out` with
  //   their totals in scratch[0 .. blocks); if there is more than one block, scan those totals, in
  //   place: they are an input of any length too (a recursive call, with the scratch after them
  //   as theirs); then add them back. Check every launch. How many levels does n = 2^26 need?
  GPULAB_NOT_IMPLEMENTED("scan_any_n: scan blocks, scan the block sums, add back (TODO 4-6)");
}

void scan_fast(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  // TODO (bonus, fewer bytes): any-n writes `out` twice and reads it once more: 16 bytes a word.
  // A single pass with decoupled look-back moves 8: one kernel, tiles of 8 rows x 256 uint4 (thread
  // t holds the uint4 at t of each row: coalesced), a ticket from scratch[0] for the tile index, the
  // tile's total published as a 64-bit state (flag | sum) from scratch + 2, then a look-back over
  // 32 predecessors at a time (warp 0, __ballot_sync) until an inclusive prefix; clear the states
  // with a small kernel first (the scratch comes with garbage). See the README.
  GPULAB_NOT_IMPLEMENTED("scan_fast: a single pass with decoupled look-back (bonus)");
}
