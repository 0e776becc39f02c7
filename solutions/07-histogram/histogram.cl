// Lab 07-histogram (OpenCL kernels): bins[b] = how many of the n bytes equal b. Launched by
// histogram_opencl.cpp, which zeroes the bins first.
#define BINS 256    /* one per value of a byte */
#define THREADS 256 /* one work-item per bin in the privatised kernels */

// --8<-- [start:global]
// One work-item per byte, one atomic increment in global memory each.
__kernel void histogram_global_kernel(__global const uchar* bytes, __global uint* bins, int n) {
  const int i = get_global_id(0);
  if (i < n) atomic_inc(&bins[bytes[i]]);
}
// --8<-- [end:global]

// --8<-- [start:shared]
// Privatisation: a work-group counts its share of the bytes into its own bins in local memory,
// then adds each of its bins to the global one: 256 global atomics per work-group.
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void histogram_shared_kernel(__global const uchar* restrict bytes, __global uint* bins, int n) {
  __local uint group_bins[BINS];
  const int lid = get_local_id(0);
  group_bins[lid] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);  // every bin zeroed before anyone counts into it
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) atomic_inc(&group_bins[bytes[i]]);
  barrier(CLK_LOCAL_MEM_FENCE);  // every byte of the group counted before the bins are read
  const uint count = group_bins[lid];
  if (count > 0) atomic_add(&bins[lid], count);
}
// --8<-- [end:shared]

// --8<-- [start:fast]
#define WARP 32 /* the sub-histograms' width: an NVIDIA warp; any size counts right */
#define WARPS (THREADS / WARP)
#define VECTOR_BYTES 16 /* one uint4 load */

// Counts one byte, merged with the bytes before it while they are equal: `run` bytes of value
// `run_byte` are pending, so a run of equal bytes costs one atomic.
void count_byte(__local uint* warp_bins, uint byte, uint* run_byte, uint* run) {
  if (byte == *run_byte) {
    ++*run;
    return;
  }
  if (*run > 0) atomic_add(&warp_bins[*run_byte], *run);
  *run_byte = byte;
  *run = 1;
}

// 16 bytes per work-item per load, one sub-histogram per warp, equal bytes merged in registers,
// the warps' bins summed once at the end.
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void histogram_fast_kernel(__global const uchar* restrict bytes, __global uint* bins, int n) {
  __local uint warp_bins[WARPS * BINS];
  const int lid = get_local_id(0);
  for (int b = lid; b < WARPS * BINS; b += THREADS) warp_bins[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* mine = warp_bins + lid / WARP * BINS;
  uint run_byte = 0, run = 0;
  const int stride = get_global_size(0), first = get_global_id(0);
  const int vectors = n / VECTOR_BYTES;  // the input buffer is aligned to far more than 16 bytes
  __global const uint4* as_vectors = (__global const uint4*)bytes;
  for (int v = first; v < vectors; v += stride) {
    const uint4 vector = as_vectors[v];
    const uint words[4] = {vector.x, vector.y, vector.z, vector.w};
    for (int w = 0; w < 4; ++w)
      for (int k = 0; k < 4; ++k) count_byte(mine, (words[w] >> (8 * k)) & 0xFF, &run_byte, &run);
  }
  for (int i = vectors * VECTOR_BYTES + first; i < n; i += stride) count_byte(mine, bytes[i], &run_byte, &run);
  if (run > 0) atomic_add(&mine[run_byte], run);
  barrier(CLK_LOCAL_MEM_FENCE);  // every warp's bins complete before they are summed
  uint count = 0;
  for (int w = 0; w < WARPS; ++w) count += warp_bins[w * BINS + lid];
  if (count > 0) atomic_add(&bins[lid], count);
}
// --8<-- [end:fast]
