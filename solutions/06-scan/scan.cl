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

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void scan_block_kernel(__global const uint* in,
                                                                                   __global uint* out, int n) {
  __local uint sums[2 * BLOCK];
  const int t = get_local_id(0);
  const uint sum = block_inclusive_scan(t < n ? in[t] : 0u, sums);
  if (t < n) out[t] = sum;
}
// --8<-- [end:block]

// --8<-- [start:any-n]
// Tiles of 16 words a work-item: each work-item scans its words in registers (15 additions, no
// barrier), so a work-group of 256 covers 4096 words with one scan of 256 work-item totals.
// Compared with one word a work-item, the block sums shrink 4x (phase 2 almost vanishes), the
// barrier steps per word 32x; every memory access is a 16-byte vector.
#define TILE_THREADS 256
#define PER_THREAD 16 /* four uint4 loads */
#define TILE (TILE_THREADS * PER_THREAD)
#define VECTORS (PER_THREAD / 4)

// The PER_THREAD consecutive words from `first` (0 past n): four uint4 loads when the tile is whole.
// `first` is a multiple of 4 (uint4 alignment) when `full`.
void load_words(__global const uint* in, int first, int n, bool full, uint* words) {
  if (full) {
    __global const uint4* vectors = (__global const uint4*)(in + first);
    for (int k = 0; k < VECTORS; ++k) {
      const uint4 v = vectors[k];
      words[4 * k] = v.x, words[4 * k + 1] = v.y, words[4 * k + 2] = v.z, words[4 * k + 3] = v.w;
    }
  } else {
    for (int j = 0; j < PER_THREAD; ++j) words[j] = first + j < n ? in[first + j] : 0u;
  }
}

void store_words(__global uint* out, int first, int n, bool full, const uint* words, uint offset) {
  if (full) {
    __global uint4* vectors = (__global uint4*)(out + first);
    for (int k = 0; k < VECTORS; ++k)
      vectors[k] = (uint4)(words[4 * k], words[4 * k + 1], words[4 * k + 2], words[4 * k + 3]) + offset;
  } else {
    for (int j = 0; j < PER_THREAD; ++j)
      if (first + j < n) out[first + j] = words[j] + offset;
  }
}

// Exclusive scan of one value per work-item (Hillis-Steele, 2 * TILE_THREADS words of local
// memory), and the work-group's total. (CUDA scans each warp with shuffles instead: OpenCL 1.2 has
// no portable equivalent.)
uint tile_exclusive_scan(uint value, uint* total, __local uint* sums) {
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
  *total = sums[from * TILE_THREADS + TILE_THREADS - 1];
  return sums[from * TILE_THREADS + t] - value;
}

bool tile_is_full(int tile, int n) { return (tile + 1) * TILE <= n; }

// Tile `tile` of `in`, scanned in registers: returns what the work-items before this one add.
uint scan_tile(__global const uint* in, int tile, int n, uint* words, uint* total, __local uint* sums) {
  load_words(in, tile * TILE + get_local_id(0) * PER_THREAD, n, tile_is_full(tile, n), words);
  for (int j = 1; j < PER_THREAD; ++j) words[j] += words[j - 1];
  return tile_exclusive_scan(words[PER_THREAD - 1], total, sums);
}

// Phase 1: every work-group scans its tile into `out` and writes the tile's total to tile_sums.
// `in` may be `out` (the recursion on the scratch): a work-item writes only the words it read.
// The offsets `_at` are multiples of 4 (uint4 alignment).
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1))) void scan_tiles_kernel(
    __global const uint* in, int in_at, __global uint* out, int out_at, __global uint* tile_sums, int sums_at, int n) {
  __local uint sums[2 * TILE_THREADS];
  const int tile = get_group_id(0);
  uint words[PER_THREAD], total;
  const uint before = scan_tile(in + in_at, tile, n, words, &total, sums);
  store_words(out + out_at, tile * TILE + get_local_id(0) * PER_THREAD, n, tile_is_full(tile, n), words, before);
  if (get_local_id(0) == 0) tile_sums[sums_at + tile] = total;  // words past n added 0
}

// Phase 3: every tile but the first adds the total of all tiles before it. Vectors striped over the
// work-items: every load coalesced. The work-groups take the tiles from the last: phase 1 wrote
// those last, so many of them are still in the L2 cache.
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1))) void add_tile_offsets_kernel(
    __global uint* out, int out_at, __global const uint* scanned_tile_sums, int sums_at, int n) {
  const int tile = get_num_groups(0) - 1 - get_group_id(0), t = get_local_id(0);
  if (tile == 0) return;
  const uint offset = scanned_tile_sums[sums_at + tile - 1];
  const int base = tile * TILE;
  if (tile_is_full(tile, n)) {
    __global uint4* vectors = (__global uint4*)(out + out_at + base);
    for (int k = 0; k < VECTORS; ++k) vectors[k * TILE_THREADS + t] += offset;
  } else {
    for (int i = base + t; i < n; i += TILE_THREADS) out[out_at + i] += offset;
  }
}
// --8<-- [end:any-n]

// --8<-- [start:fast]
// Single pass, decoupled look-back: 8 bytes a word (read once, written once), like a copy. Each tile
// publishes its total as soon as it knows it, then adds up its predecessors' published states from
// the nearest backwards until one carries an inclusive prefix (the sum of everything before it).
// A state is one 64-bit word, flag in the high half, sum in the low: one store publishes both, so a
// reader never sees a flag without its sum.
#define AGGREGATE ((ulong)1 << 32)
#define PREFIX ((ulong)2 << 32)
#define FLAGS ((ulong)3 << 32)

// The sum of all tiles before `tile`; one work-item walks back (usually a few steps: tiles start in
// order, so the predecessors are running or done). volatile: every read goes to memory.
uint look_back(__global volatile ulong* states, int tile) {
  uint prefix = 0;
  for (int i = tile - 1;; --i) {
    ulong state;
    do state = states[i];
    while ((state & FLAGS) == 0);  // tile i has not summed its words yet
    prefix += (uint)state;
    if ((state & FLAGS) == PREFIX) return prefix;
  }
}

// scratch: word 0 hands out the tiles (a ticket), the tiles' states follow from word 2 (8-byte
// aligned). Tiles go by ticket, not get_group_id: a work-group only waits for tiles whose
// work-groups already run, never for one the device has not started (which could deadlock).
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1))) void scan_lookback_kernel(__global const uint* in,
                                                                                             __global uint* out,
                                                                                             __global uint* scratch,
                                                                                             int n) {
  __local uint sums[2 * TILE_THREADS];
  __local int ticket;
  __local uint tile_prefix;
  __global volatile ulong* states = (__global volatile ulong*)(scratch + 2);
  const bool alone = get_num_groups(0) == 1;  // n <= TILE: no predecessors, maybe a one-word scratch
  if (get_local_id(0) == 0) ticket = alone ? 0 : (int)atomic_inc(scratch);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int tile = ticket;
  uint words[PER_THREAD], total;
  const uint before = scan_tile(in, tile, n, words, &total, sums);
  if (get_local_id(0) == 0) {
    uint prefix = 0;
    if (tile > 0) {
      states[tile] = AGGREGATE | total;  // successors can go past this tile already
      prefix = look_back(states, tile);
    }
    if (!alone) states[tile] = PREFIX | (prefix + total);
    tile_prefix = prefix;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  store_words(out, tile * TILE + get_local_id(0) * PER_THREAD, n, tile_is_full(tile, n), words, tile_prefix + before);
}
// --8<-- [end:fast]
