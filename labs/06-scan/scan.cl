// Lab 06-scan (OpenCL kernels): inclusive prefix sums of n 32-bit words, out[i] = in[0] + ... + in[i].
// Launched by scan_opencl.cpp. A cl_mem has no pointer arithmetic, so the kernels that also run on
// the scratch take an offset (`_at`, in words) with each buffer: index in[in_at + i], not in[i].

#define BLOCK 1024 /* work-items of a block scan, one word each: the block task's largest n */

// TODO 1 (block scan in local memory, Hillis-Steele): return the inclusive scan of `value` over the
//   work-group. `sums` holds 2 * BLOCK words: two buffers. For offset = 1, 2, ..., BLOCK/2, work-item
//   t adds the element at t - offset (if t >= offset), reading one buffer and writing the other, with
//   barrier(CLK_LOCAL_MEM_FENCE) after each step. Every work-item must reach every barrier.
uint block_inclusive_scan(uint value, __local uint* sums) {
  return value;
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_block_kernel(__global const uint* in, __global uint* out, int n) {
  __local uint sums[2 * BLOCK];
  // TODO 2: scan one word per work-item (0 past n) and write the sums inside n.
}

// TODO 4 (phase 1): like scan_block_kernel on word get_global_id(0); the last work-item of the group
//   writes the group's total to block_sums[sums_at + get_group_id(0)].
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_blocks_kernel(__global const uint* in, int in_at, __global uint* out, int out_at,
                        __global uint* block_sums, int sums_at, int n) {
  __local uint sums[2 * BLOCK];
}

// TODO 5 (phase 3): every group but the first adds scanned_block_sums[sums_at + group - 1].
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void add_block_offsets_kernel(__global uint* out, int out_at, __global const uint* scanned_block_sums,
                              int sums_at, int n) {}

// Bonus (fast): scan_lookback_kernel, a single pass with decoupled look-back over tiles of 12 rows x 256
// uint4 (work-item t holds the uint4 at t of each row), the row totals raked in local memory, a window
// of 32 states in local memory. See the README.
