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
  // TODO 4 (grid-stride loop): for i = get_global_id(0); i < n; i += get_global_size(0),
  //   atomic_inc the work-group's counter of bytes[i].
  // TODO 5 (merge): barrier, then each work-item atomic_adds the group's count of its bin to
  //   bins[get_local_id(0)] (skip zeros).
}

// Bonus (fast): a kernel that reads 16 bytes per load (uint4), keeps one sub-histogram per 32
// work-items in local memory and merges runs of equal bytes in registers. See the README.
