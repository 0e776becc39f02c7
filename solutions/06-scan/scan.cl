// Lab 06-scan (OpenCL kernels), reference solution: inclusive prefix sums of n 32-bit words,
// out[i] = in[0] + ... + in[i], exact modulo 2^32. Launched by scan_opencl.cpp. A cl_mem has no
// pointer arithmetic, so the kernels that also run on the scratch take an offset (`_at`, in words)
// with each buffer.

#define BLOCK 1024 /* work-items of a block scan, one word each: the block task's largest n */

// --8<-- [start:block]
// Hillis-Steele in local memory: after the step with offset d, word t holds the sum of words
// t-2d+1..t; two halves of `sums` (2 * BLOCK words), so a step reads only what the previous step
// wrote (one barrier a step). Returns the work-group's scan of word get_local_id(0).
uint block_inclusive_scan(uint value, __local uint* sums) {
  const int t = get_local_id(0);
  int from = 0;
  sums[t] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int offset = 1; offset < BLOCK; offset <<= 1) {
    uint v = sums[from * BLOCK + t];
    if (t >= offset) v += sums[from * BLOCK + t - offset];
    sums[(1 - from) * BLOCK + t] = v;
    from = 1 - from;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return sums[from * BLOCK + t];
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_block_kernel(__global const uint* in, __global uint* out, int n) {
  __local uint sums[2 * BLOCK];
  const int t = get_local_id(0);
  const uint sum = block_inclusive_scan(t < n ? in[t] : 0u, sums);
  if (t < n) out[t] = sum;
}
// --8<-- [end:block]

// --8<-- [start:any-n]
// Phase 1: every work-group scans its BLOCK words and writes its total to block_sums.
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_blocks_kernel(__global const uint* in, int in_at, __global uint* out, int out_at,
                        __global uint* block_sums, int sums_at, int n) {
  __local uint sums[2 * BLOCK];
  const int i = get_global_id(0);
  const uint sum = block_inclusive_scan(i < n ? in[in_at + i] : 0u, sums);
  if (i < n) out[out_at + i] = sum;
  if (get_local_id(0) == BLOCK - 1) block_sums[sums_at + get_group_id(0)] = sum;  // words past n added 0
}

// Phase 3: every work-group but the first adds the total of all blocks before it.
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void add_block_offsets_kernel(__global uint* out, int out_at, __global const uint* scanned_block_sums,
                              int sums_at, int n) {
  const int i = get_global_id(0);
  const int block = get_group_id(0);
  if (block > 0 && i < n) out[out_at + i] += scanned_block_sums[sums_at + block - 1];
}
// --8<-- [end:any-n]

// --8<-- [start:fast]
// Reduce, then scan: phase 1 only sums each tile (reads the input once, writes nothing big), phase 3
// reads it again and writes the scan with the tile's offset: 12 bytes per word instead of 16.
#define TILE_THREADS 256
#define PER_THREAD 16 /* four uint4 loads */
#define TILE (TILE_THREADS * PER_THREAD)
#define VECTORS (PER_THREAD / 4)

// Sum of one value per work-item, by halving in local memory (TILE_THREADS words).
uint tile_total(uint value, __local uint* partial) {
  const int t = get_local_id(0);
  partial[t] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = TILE_THREADS / 2; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return partial[0];
}

// Exclusive scan of one value per work-item (Hillis-Steele, 2 * TILE_THREADS words of local memory).
uint tile_exclusive_scan(uint value, __local uint* sums) {
  const int t = get_local_id(0);
  int from = 0;
  sums[t] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int offset = 1; offset < TILE_THREADS; offset <<= 1) {
    uint v = sums[from * TILE_THREADS + t];
    if (t >= offset) v += sums[from * TILE_THREADS + t - offset];
    sums[(1 - from) * TILE_THREADS + t] = v;
    from = 1 - from;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return sums[from * TILE_THREADS + t] - value;
}

bool tile_is_full(int n) { return (get_group_id(0) + 1) * TILE <= n; }

// Phase 1. A sum needs no order: vectors striped over the work-items, every load coalesced.
// `in_at` is a multiple of 4 (uint4 alignment).
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1)))
void reduce_tiles_kernel(__global const uint* in, int in_at, __global uint* tile_sums, int sums_at, int n) {
  __local uint partial[TILE_THREADS];
  const int base = get_group_id(0) * TILE, t = get_local_id(0);
  uint sum = 0;
  if (tile_is_full(n)) {
    __global const uint4* vectors = (__global const uint4*)(in + in_at + base);
    for (int k = 0; k < VECTORS; ++k) {
      const uint4 v = vectors[k * TILE_THREADS + t];
      sum += v.x + v.y + v.z + v.w;
    }
  } else {
    for (int i = base + t; i < min(n, base + TILE); i += TILE_THREADS) sum += in[in_at + i];
  }
  const uint total = tile_total(sum, partial);
  if (t == 0) tile_sums[sums_at + get_group_id(0)] = total;
}

// Phase 3. Work-item t owns the PER_THREAD consecutive words from base + t * PER_THREAD: it scans
// them in registers, the work-group scans the totals, and each work-item adds what precedes it.
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1)))
void scan_tiles_kernel(__global const uint* in, int in_at, __global uint* out, int out_at,
                       __global const uint* scanned_tile_sums, int sums_at, int n) {
  __local uint sums[2 * TILE_THREADS];
  const int first = get_group_id(0) * TILE + get_local_id(0) * PER_THREAD;
  const bool full = tile_is_full(n);
  uint words[PER_THREAD];
  if (full) {
    __global const uint4* vectors = (__global const uint4*)(in + in_at + first);
    for (int k = 0; k < VECTORS; ++k) {
      const uint4 v = vectors[k];
      words[4 * k] = v.x, words[4 * k + 1] = v.y, words[4 * k + 2] = v.z, words[4 * k + 3] = v.w;
    }
  } else {
    for (int j = 0; j < PER_THREAD; ++j) words[j] = first + j < n ? in[in_at + first + j] : 0u;
  }
  for (int j = 1; j < PER_THREAD; ++j) words[j] += words[j - 1];
  uint offset = tile_exclusive_scan(words[PER_THREAD - 1], sums);
  if (get_group_id(0) > 0) offset += scanned_tile_sums[sums_at + get_group_id(0) - 1];
  if (full) {
    __global uint4* vectors = (__global uint4*)(out + out_at + first);
    for (int k = 0; k < VECTORS; ++k)
      vectors[k] = (uint4)(words[4 * k], words[4 * k + 1], words[4 * k + 2], words[4 * k + 3]) + offset;
  } else {
    for (int j = 0; j < PER_THREAD; ++j)
      if (first + j < n) out[out_at + first + j] = words[j] + offset;
  }
}
// --8<-- [end:fast]
