// Lab 07-histogram (OpenCL kernels): bins[b] = how many of the n bytes equal b. Launched by
// histogram_opencl.cpp, which zeroes the bins first.
#define BINS 256    /* one per value of a byte */
#define THREADS 256 /* one work-item per bin in the privatised kernels */

__kernel void histogram_global_kernel(__global const uchar* bytes, __global uint* bins, int n) {
  // TODO (atomics): one work-item per byte: work-item i = get_global_id(0) with i < n adds 1 to
  // bins[bytes[i]] with atomic_inc. Why does `bins[bytes[i]]++` lose counts? (README.)
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void histogram_shared_kernel(__global const uchar* restrict bytes, __global uint* bins, int n) {
  // TODO 3 (privatisation): a __local array of BINS counters; each work-item zeroes the one at
  //   get_local_id(0); barrier(CLK_LOCAL_MEM_FENCE).
  // TODO 4 (grid-stride loop, wide loads): read the input as 32-bit words (a
  //   `__global const uint*` to `bytes`: the buffer is aligned to far more than 4 bytes), one load
  //   for four bytes: for w = get_global_id(0); w < n / 4; w += get_global_size(0), take the 4
  //   bytes of word w out by shifts, (word >> (8 * k)) & 0xFF for k = 0..3, and atomic_inc the
  //   work-group's counter of each. Then the last n % 4 bytes one by one, in the same grid-stride
  //   loop from 4 * (n / 4) + get_global_id(0). Byte loads cost one load per atomic.
  // TODO 5 (merge): barrier, then each work-item atomic_adds the group's count of its bin to
  //   bins[get_local_id(0)] (skip zeros).
}

// Bonus (fast): add histogram_fast_kernel (work-groups of THREADS) with three ideas (README, "fast"):
// - 16 bytes per load (load width): read the input as uint4 through a `__global const uint4*` and
//   count its four words as in TODO 4 (the last n % 16 bytes one by one);
// - two loads in flight (latency): load vector v and vector v + stride before counting either,
//   v += 2 * stride, then the one left without a pair;
// - a copy of the bins per lane (bank conflicts): __local uint lane_bins[BINS * 32] (32 KiB), lane
//   l = get_local_id(0) % 32 counts byte b into lane_bins[b * 32 + l]. All of lane l's counters lie
//   in bank l, so the 32 atomics of a warp hit 32 banks: one pass whatever the bytes. At the end
//   work-item b sums the 32 copies of bin b starting at copy b % 32, lane_bins[b * 32 + (b + l) % 32]
//   (32 banks at once, not one), and atomic_adds the sum to bins[b].
