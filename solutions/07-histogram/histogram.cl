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
#define WORD_BYTES 4 /* one 32-bit load: four bytes */

// Counts the 4 bytes of one 32-bit word into bins[byte * stride] (stride 1: one set of bins). The
// bytes come out of the word by shifts, in registers: one load instead of four.
void count_word(__local uint* bins, int stride, uint word) {
  for (int k = 0; k < 4; ++k) atomic_inc(&bins[((word >> (8 * k)) & 0xFF) * stride]);
}

// Privatisation: a work-group counts its share of the bytes (a word of 4 bytes per load) into its
// own bins in local memory, then adds each of its bins to the global one: 256 global atomics per
// work-group instead of one per byte.
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void histogram_shared_kernel(__global const uchar* restrict bytes, __global uint* bins, int n) {
  __local uint group_bins[BINS];
  const int lid = get_local_id(0);
  group_bins[lid] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);  // every bin zeroed before anyone counts into it
  const int stride = get_global_size(0), first = get_global_id(0);
  const int words = n / WORD_BYTES;  // the input buffer is aligned to far more than 4 bytes
  __global const uint* as_words = (__global const uint*)bytes;
  for (int w = first; w < words; w += stride) count_word(group_bins, 1, as_words[w]);
  for (int i = words * WORD_BYTES + first; i < n; i += stride) atomic_inc(&group_bins[bytes[i]]);
  barrier(CLK_LOCAL_MEM_FENCE);  // every byte of the group counted before the bins are read
  const uint count = group_bins[lid];
  if (count > 0) atomic_add(&bins[lid], count);
}
// --8<-- [end:shared]

// --8<-- [start:fast]
#define WARP 32 /* the copies of the bins: one per bank of local memory, one per lane of a warp */
#define VECTOR_BYTES 16 /* one uint4 load */

// Counts the 16 bytes of one uint4: four words, one 16-byte load instead of four 4-byte ones.
void count_vector(__local uint* bins, int stride, uint4 vector) {
  count_word(bins, stride, vector.x);
  count_word(bins, stride, vector.y);
  count_word(bins, stride, vector.z);
  count_word(bins, stride, vector.w);
}

// Per-lane bins: 32 copies of the 256 counters, bin b of lane l at lane_bins[b * WARP + l]
// (32 KiB). Local memory is 32 banks of 4-byte words, word w in bank w % 32, so all of lane l's
// counters lie in bank l: the 32 atomics of a warp hit 32 different banks, one pass whatever the
// bytes. With one set of bins, lanes whose bytes share a bank wait for each other.
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void histogram_fast_kernel(__global const uchar* restrict bytes, __global uint* bins, int n) {
  __local uint lane_bins[BINS * WARP];
  const int lid = get_local_id(0);
  for (int i = lid; i < BINS * WARP; i += THREADS) lane_bins[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);  // every counter zeroed before anyone counts into it
  // This lane's copy: its bin b is mine[b * WARP].
  __local uint* mine = lane_bins + lid % WARP;
  const int stride = get_global_size(0), first = get_global_id(0);
  const int vectors = n / VECTOR_BYTES;
  __global const uint4* as_vectors = (__global const uint4*)bytes;
  // Two loads issued before either is counted: 32 bytes per work-item on their way at once.
  int v = first;
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 a = as_vectors[v], b = as_vectors[v + stride];
    count_vector(mine, WARP, a);
    count_vector(mine, WARP, b);
  }
  if (v < vectors) count_vector(mine, WARP, as_vectors[v]);  // the last one, without a pair
  for (int i = vectors * VECTOR_BYTES + first; i < n; i += stride) atomic_inc(&mine[bytes[i] * WARP]);
  barrier(CLK_LOCAL_MEM_FENCE);  // every lane's bins complete before they are summed
  // Work-item b sums the 32 copies of bin b starting at copy b % 32: a warp reads 32 banks at once.
  uint count = 0;
  for (int l = 0; l < WARP; ++l) count += lane_bins[lid * WARP + (lid + l) % WARP];
  if (count > 0) atomic_add(&bins[lid], count);
}
// --8<-- [end:fast]
