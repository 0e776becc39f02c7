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
// Tiles of 1024 words, as in the skeleton, but 256 work-items of 4 consecutive words each: one uint4
// (16 bytes) a work-item, so every access of a warp moves 512 contiguous bytes. Each work-item adds
// up its 4 words in registers (3 additions, no barrier), and the work-group scans only 256 totals
// (8 barrier steps for 1024 words instead of 10). The passes then run at the speed of DRAM.
#define TILE_THREADS 256
#define TILE (TILE_THREADS * 4) /* words a tile: one uint4 a work-item */

// Words first..first+3 (0 past n): one 16-byte load when all four lie inside n (first is a
// multiple of 4 and every level starts at a multiple of 4 words: the address is 16-byte aligned).
// (first <= n - 4, not first + 4 <= n: the sum would overflow an int for n near 2^31.)
uint4 load_vector(__global const uint* in, int first, int n) {
  if (first <= n - 4) return *(__global const uint4*)(in + first);
  return (uint4)(first < n ? in[first] : 0u, first + 1 < n ? in[first + 1] : 0u, first + 2 < n ? in[first + 2] : 0u,
                 0u);
}

// Stores the words of v that lie inside n.
void store_vector(__global uint* out, int first, int n, uint4 v) {
  if (first <= n - 4) {
    *(__global uint4*)(out + first) = v;
  } else {
    if (first < n) out[first] = v.x;
    if (first + 1 < n) out[first + 1] = v.y;
    if (first + 2 < n) out[first + 2] = v.z;
  }
}

// The inclusive scan of a vector's 4 words, in registers; .w is their total.
uint4 scan_vector(uint4 v) {
  v.y += v.x;
  v.z += v.y;
  v.w += v.z;
  return v;
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

// Phase 1: every work-group scans its tile into `out` and writes the tile's total to tile_sums.
// `in` may be `out` (the recursion on the scratch): a work-item writes only the words it read.
// The offsets `_at` are multiples of 4 (uint4 alignment).
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1))) void scan_tiles_kernel(
    __global const uint* in, int in_at, __global uint* out, int out_at, __global uint* tile_sums, int sums_at, int n) {
  __local uint sums[2 * TILE_THREADS];
  const int first = get_group_id(0) * TILE + get_local_id(0) * 4;
  const uint4 words = scan_vector(load_vector(in + in_at, first, n));
  uint total;
  const uint before = tile_exclusive_scan(words.w, &total, sums);  // the work-items before this one
  store_vector(out + out_at, first, n, words + before);
  if (get_local_id(0) == 0) tile_sums[sums_at + get_group_id(0)] = total;  // words past n added 0
}

// Phase 3: every tile but the first adds the total of all tiles before it, one uint4 a work-item.
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1))) void add_tile_offsets_kernel(
    __global uint* out, int out_at, __global const uint* scanned_tile_sums, int sums_at, int n) {
  const int tile = get_group_id(0);
  if (tile == 0) return;
  const int first = tile * TILE + get_local_id(0) * 4;
  const uint offset = scanned_tile_sums[sums_at + tile - 1];
  store_vector(out + out_at, first, n, load_vector(out + out_at, first, n) + offset);
}
// --8<-- [end:any-n]

// --8<-- [start:fast]
// Single pass, decoupled look-back: 8 bytes a word (read once, written once), like a copy. Each tile
// publishes its total as soon as it knows it, then adds up its predecessors' published states from
// the nearest backwards until one carries an inclusive prefix (the sum of everything before it).
//
// A tile is 12 rows of any-n's tiles (12288 words): work-item t holds the uint4 at t of every row, so
// all loads and stores stay coalesced, and 48 words a work-item are in flight at once. The
// work-group then scans the 12 x 256 work-item totals in row order (row 0's work-items, then row
// 1's...): written to local memory by row, read back 12 consecutive ones a work-item (raking), so
// the Hillis-Steele runs over 256 sums, not over 12 x 256 values. A benchmark of variants on the
// H100 (OpenCL, 2^26 words, the scan timed between markers as the grader times a launch, against a
// copy timed by its own events) measured 12 rows at 0.72 of copy, 16 at 0.71, 8 and 14 at 0.69, 10
// at 0.68; a Hillis-Steele over a uint8 of row totals a work-item (8 rows, 8 barrier steps moving 32
// bytes a work-item) reached 0.64: its local-memory traffic, not its barriers, cost the difference
// (a radix-4 Hillis-Steele with half the barriers measured the same).
#define ROWS 12
#define FAST_TILE (ROWS * TILE)
// One spare word after every 32: a warp's work-items reading 12 consecutive totals each meet 2-way
// bank conflicts instead of 4-way (a conflict-free spacing, one word every 96, measured the same).
#define PADDED(i) ((i) + ((i) >> 5))
#define TOTALS_WORDS PADDED(ROWS * TILE_THREADS)

// before[r]: on entry, this work-item's total of row r; on return, the sum of every total before it
// in row order (all of rows 0..r-1, and the work-items before it in row r). Returns the tile's total.
uint tile_rows_exclusive_scan(uint* before, __local uint* totals, __local uint* sums) {
  const int t = get_local_id(0);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) totals[PADDED(r * TILE_THREADS + t)] = before[r];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint sum = 0;  // of the 12 consecutive totals this work-item rakes
#pragma unroll
  for (int k = 0; k < ROWS; ++k) sum += totals[PADDED(t * ROWS + k)];
  uint tile_total;
  uint running = tile_exclusive_scan(sum, &tile_total, sums);  // its barriers: every rake is summed
  // The totals are read again rather than kept: with 48 registers already holding the rows, 12 more
  // a work-item measured 0.67 of copy instead of 0.72 (fewer work-groups fit on a multiprocessor).
#pragma unroll
  for (int k = 0; k < ROWS; ++k) {
    const uint own = totals[PADDED(t * ROWS + k)];
    totals[PADDED(t * ROWS + k)] = running;
    running += own;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) before[r] = totals[PADDED(r * TILE_THREADS + t)];
  return tile_total;
}

// A state is one 64-bit word, flag in the high half, sum in the low: one store publishes both, so a
// reader never sees a flag without its sum.
#define AGGREGATE ((ulong)1 << 32)
#define PREFIX ((ulong)2 << 32)
#define FLAGS ((ulong)3 << 32)

// The sum of all tiles before `tile`, by the whole work-group (it meets barriers): work-items 0..31
// read the states of the 32 tiles before `end` into a window in local memory, so one round trip to
// memory covers 32 predecessors (tiles run in order, so the nearest ones are usually just
// aggregates: walking back one at a time would pay a round trip for each). Each waits until its
// tile has published something; then every work-item adds the window up to the nearest inclusive
// prefix. With none, it moves to the 32 before. volatile: every read goes to memory.
uint look_back(__global volatile ulong* states, int tile, __local ulong* window) {
  const int t = get_local_id(0);
  uint prefix = 0;
  bool found = false;
  for (int end = tile; !found; end -= 32) {
    if (t < 32) {
      const int i = end - 1 - t;
      ulong state = PREFIX;  // before tile 0: a prefix of 0
      if (i >= 0) {
        do state = states[i];
        while ((state & FLAGS) == 0);  // tile i has not summed its words yet
      }
      window[t] = state;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int l = 0; l < 32 && !found; ++l) {
      prefix += (uint)window[l];
      found = (window[l] & FLAGS) == PREFIX;
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // all have read the window before the next round overwrites it
  }
  return prefix;
}

// scratch: word 0 hands out the tiles (a ticket), the tiles' states follow from word 2 (8-byte
// aligned). Tiles go by ticket, not get_group_id: a work-group only waits for tiles whose
// work-groups already run, never for one the device has not started (which could deadlock).
__kernel __attribute__((reqd_work_group_size(TILE_THREADS, 1, 1))) void scan_lookback_kernel(__global const uint* in,
                                                                                             __global uint* out,
                                                                                             __global uint* scratch,
                                                                                             int n) {
  __local uint totals[TOTALS_WORDS];
  __local uint sums[2 * TILE_THREADS];
  __local ulong window[32];
  __local int ticket;
  __global volatile ulong* states = (__global volatile ulong*)(scratch + 2);
  const bool alone = get_num_groups(0) == 1;  // n <= FAST_TILE: no predecessors, maybe a one-word scratch
  if (get_local_id(0) == 0) ticket = alone ? 0 : (int)atomic_inc(scratch);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int tile = ticket;
  // Indices count from the tile's first word: tile * FAST_TILE + r * TILE could pass 2^31 for the
  // largest n (12288 does not divide 2^31), the tile's first word cannot (it is below n).
  const int base = tile * FAST_TILE, left = n - base;  // left: the words from there on
  in += base;
  out += base;
  // All 12 loads first: they are in flight together, before anything waits.
  const int first = get_local_id(0) * 4;
  uint4 rows[ROWS];
  uint before[ROWS];  // this work-item's row totals, then what comes before it in the tile
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    rows[r] = scan_vector(load_vector(in, first + r * TILE, left));
    before[r] = rows[r].w;
  }
  const uint total = tile_rows_exclusive_scan(before, totals, sums);
  uint prefix = 0;
  if (tile > 0) {  // the same for the whole work-group: look_back meets barriers
    if (get_local_id(0) == 0) states[tile] = AGGREGATE | total;  // successors can go past this tile
    prefix = look_back(states, tile, window);
  }
  if (get_local_id(0) == 0 && !alone) states[tile] = PREFIX | (prefix + total);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) store_vector(out, first + r * TILE, left, rows[r] + (prefix + before[r]));
}
// --8<-- [end:fast]
