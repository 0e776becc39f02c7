// Lab 06-scan (CUDA), reference solution: inclusive prefix sums of n 32-bit words,
// out[i] = in[0] + ... + in[i], exact modulo 2^32.
#include "gpulab/student/cuda.hpp"

using gpulab::blocks_for;
using gpulab::check;

constexpr int kBlock = 1024;  // threads of a block scan, one word each: the `block` task's largest n

// --8<-- [start:block]
// Hillis-Steele in shared memory: after the step with offset d, word t holds the sum of words
// t-2d+1..t; two buffers, so a step reads only what the previous step wrote (one barrier a step).
// Words past n count as 0; returns the block's scan of word threadIdx.x.
__device__ unsigned block_inclusive_scan(unsigned value) {
  __shared__ unsigned sums[2][kBlock];
  const int t = threadIdx.x;
  int from = 0;
  sums[from][t] = value;
  __syncthreads();
  for (int offset = 1; offset < kBlock; offset <<= 1) {
    unsigned v = sums[from][t];
    if (t >= offset) v += sums[from][t - offset];
    sums[1 - from][t] = v;
    from = 1 - from;
    __syncthreads();
  }
  return sums[from][t];
}

__global__ void scan_block_kernel(const unsigned* in, unsigned* out, int n) {
  const int t = threadIdx.x;
  const unsigned sum = block_inclusive_scan(t < n ? in[t] : 0u);
  if (t < n) out[t] = sum;
}

void scan_block(const unsigned* in, unsigned* out, unsigned*, int n) {
  scan_block_kernel<<<1, kBlock>>>(in, out, n);
  check(cudaGetLastError(), "launching scan_block_kernel");
}
// --8<-- [end:block]

// --8<-- [start:any-n]
// Tiles of 1024 words, as in the skeleton, but 256 threads of 4 consecutive words each: one uint4
// (16 bytes) a thread, so every load and store of a warp moves 512 contiguous bytes. Each thread
// adds up its 4 words in registers (3 additions, no barrier), and the block scans only 256 thread
// totals: warp shuffles, then one pass over the 8 warp totals. The passes then run at the speed of
// DRAM. (Wider spans, 16 words a thread, read 4 vectors 64 bytes apart per thread: each warp access
// is then scattered over 2 KiB, and a benchmark of variants on the H100 measured them slower.)
constexpr int kTileThreads = 256;
constexpr int kTile = kTileThreads * 4;  // words a tile: one uint4 a thread
constexpr int kWarps = kTileThreads / 32;

// Round up to a multiple of 4 words: where a level's tile sums start, so its uint4 loads are aligned.
constexpr int aligned_words(int n) { return (n + 3) / 4 * 4; }

// Words first..first+3 (0 past n): one 16-byte load when all four lie inside n (first is a
// multiple of 4, so the address is 16-byte aligned); the last, partial vector word by word.
// (first <= n - 4, not first + 4 <= n: the sum would overflow an int for n near 2^31.)
__device__ uint4 load_vector(const unsigned* in, int first, int n) {
  if (first <= n - 4) return *reinterpret_cast<const uint4*>(in + first);
  return make_uint4(first < n ? in[first] : 0u, first + 1 < n ? in[first + 1] : 0u, first + 2 < n ? in[first + 2] : 0u,
                    0u);
}

// Stores the words of v that lie inside n.
__device__ void store_vector(unsigned* out, int first, int n, uint4 v) {
  if (first <= n - 4) {
    *reinterpret_cast<uint4*>(out + first) = v;
  } else {
    if (first < n) out[first] = v.x;
    if (first + 1 < n) out[first + 1] = v.y;
    if (first + 2 < n) out[first + 2] = v.z;
  }
}

// The inclusive scan of a vector's 4 words, in registers; .w is their total.
__device__ uint4 scan_vector(uint4 v) {
  v.y += v.x, v.z += v.y, v.w += v.z;
  return v;
}

__device__ uint4 add_to_vector(uint4 v, unsigned offset) {
  return make_uint4(v.x + offset, v.y + offset, v.z + offset, v.w + offset);
}

// Inclusive scan over the 32 lanes of a warp, in registers: no shared memory, no barrier.
__device__ unsigned warp_inclusive_scan(unsigned value) {
  const int lane = threadIdx.x % 32;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const unsigned left = __shfl_up_sync(0xffffffffu, value, offset);
    if (lane >= offset) value += left;
  }
  return value;
}

// Exclusive scan of one value per thread over the block, and the block's total: each warp scans its
// lanes, warp 0 scans the 8 warp totals; two barriers instead of Hillis-Steele's eight.
__device__ unsigned tile_exclusive_scan(unsigned value, unsigned& total) {
  __shared__ unsigned warp_sums[32];  // a slot per lane of warp 0: it writes back without a bounds test
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned inclusive = warp_inclusive_scan(value);
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    warp_sums[lane] = warp_inclusive_scan(lane < kWarps ? warp_sums[lane] : 0u);
  }
  __syncthreads();
  total = warp_sums[kWarps - 1];
  return (warp > 0 ? warp_sums[warp - 1] : 0u) + inclusive - value;
}

// Phase 1: every block scans its tile into `out` and writes the tile's total to tile_sums.
// `in` may be `out`: a thread writes only the words it read itself.
__global__ void scan_tiles_kernel(const unsigned* in, unsigned* out, unsigned* tile_sums, int n) {
  const int first = blockIdx.x * kTile + threadIdx.x * 4;
  const uint4 words = scan_vector(load_vector(in, first, n));
  unsigned total;
  const unsigned before = tile_exclusive_scan(words.w, total);  // the threads before this one
  store_vector(out, first, n, add_to_vector(words, before));
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;  // words past n added 0
}

// Phase 3: every tile but the first adds the total of all tiles before it, one uint4 a thread.
__global__ void add_tile_offsets_kernel(unsigned* out, const unsigned* scanned_tile_sums, int n) {
  if (blockIdx.x == 0) return;
  const int first = blockIdx.x * kTile + threadIdx.x * 4;
  store_vector(out, first, n, add_to_vector(load_vector(out, first, n), scanned_tile_sums[blockIdx.x - 1]));
}

void scan_any_n(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  const int tiles = blocks_for(n, kTile);
  scan_tiles_kernel<<<tiles, kTileThreads>>>(in, out, scratch, n);
  check(cudaGetLastError(), "launching scan_tiles_kernel");
  if (tiles == 1) return;
  // Phase 2: the tile sums are a scan of their own, in place, with the scratch after them for theirs
  // (2^26 words: 65,536 sums, then 64, then 1).
  scan_any_n(scratch, scratch, scratch + aligned_words(tiles), tiles);
  add_tile_offsets_kernel<<<tiles, kTileThreads>>>(out, scratch, n);
  check(cudaGetLastError(), "launching add_tile_offsets_kernel");
}
// --8<-- [end:any-n]

// --8<-- [start:fast]
// Single pass, decoupled look-back: 8 bytes a word (read once, written once), like a copy. Each tile
// publishes its total as soon as it knows it, then adds up its predecessors' published states from
// the nearest backwards until one carries an inclusive prefix (the sum of everything before it).
//
// A tile is 8 rows of any-n's tiles (8192 words): thread t holds the uint4 at t of every row, so all
// loads and stores stay coalesced, and 32 words a thread are in flight at once (a benchmark of
// variants on the H100 measured 8 rows faster than 4 or 6: more words in flight per block, and half
// the tiles to look back over). The block scans the 8 rows together (8 warp scans side by side,
// still two barriers), and every row adds the totals of the rows above it.
constexpr int kRows = 8;
constexpr int kFastTile = kRows * kTile;

// tile_exclusive_scan of the kRows rows at once: on entry values[r] is the thread's total in row r,
// on return the sum of the threads before it in that row; totals[r] is the row's total.
__device__ void rows_exclusive_scan(unsigned (&values)[kRows], unsigned (&totals)[kRows]) {
  __shared__ unsigned warp_sums[kRows][32];  // a slot per lane of warp 0, as in tile_exclusive_scan
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned inclusive[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {  // unrolled: the arrays stay in registers
    inclusive[r] = warp_inclusive_scan(values[r]);
    if (lane == 31) warp_sums[r][warp] = inclusive[r];
  }
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      warp_sums[r][lane] = warp_inclusive_scan(lane < kWarps ? warp_sums[r][lane] : 0u);
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    totals[r] = warp_sums[r][kWarps - 1];
    values[r] = (warp > 0 ? warp_sums[r][warp - 1] : 0u) + inclusive[r] - values[r];
  }
}

// A state is one 64-bit word, flag in the high half, sum in the low: one store publishes both, so a
// reader never sees a flag without its sum, and no memory fence is needed.
constexpr unsigned long long kNothing = 0, kAggregate = 1ull << 32, kPrefix = 2ull << 32;
constexpr unsigned long long kFlags = 3ull << 32;

// volatile: every access goes to memory (the L2), where the other blocks' stores arrive.
__device__ void publish(unsigned long long* state, unsigned long long flag, unsigned sum) {
  *reinterpret_cast<volatile unsigned long long*>(state) = flag | sum;
}

__device__ unsigned long long read_state(const unsigned long long* state) {
  return *reinterpret_cast<const volatile unsigned long long*>(state);
}

__device__ unsigned warp_sum(unsigned value) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The sum of all tiles before `tile`, by warp 0: lane l reads the state of tile end-1-l, so one
// round trip to memory covers 32 predecessors (tiles run in order, so the nearest ones are usually
// just aggregates: one thread walking back one at a time would pay a round trip for each). The
// warp waits until all 32 have published something, finds the nearest inclusive prefix, and adds
// it and the aggregates after it; with none, it adds all 32 aggregates and reads the 32 before.
__device__ unsigned look_back(const unsigned long long* states, int tile) {
  const int lane = threadIdx.x % 32;
  unsigned prefix = 0;
  for (int end = tile;; end -= 32) {
    const int i = end - 1 - lane;
    unsigned long long state;
    do state = i >= 0 ? read_state(states + i) : kPrefix;  // before tile 0: a prefix of 0
    while (__any_sync(0xffffffffu, (state & kFlags) == kNothing));
    const unsigned prefixes = __ballot_sync(0xffffffffu, (state & kFlags) == kPrefix);
    const int nearest = prefixes ? __ffs(prefixes) - 1 : 31;  // lane of the nearest prefix
    prefix += warp_sum(lane <= nearest ? static_cast<unsigned>(state) : 0u);
    if (prefixes) return prefix;
  }
}

// scratch: word 0 hands out the tiles (a ticket), the tiles' states follow from word 2 (8-byte
// aligned). Tiles go by ticket, not blockIdx.x: a block only waits for tiles whose blocks already
// run, so it cannot wait for one that the GPU has not scheduled yet (a deadlock).
__global__ void scan_lookback_kernel(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  __shared__ int ticket;
  __shared__ unsigned tile_prefix;
  unsigned long long* states = reinterpret_cast<unsigned long long*>(scratch + 2);
  const bool alone = gridDim.x == 1;  // n <= kFastTile: no predecessors, and a scratch of maybe one word
  if (threadIdx.x == 0) ticket = alone ? 0 : static_cast<int>(atomicAdd(scratch, 1u));
  __syncthreads();
  const int tile = ticket;
  // All 8 loads first: they are in flight together, before anything waits.
  const int first = tile * kFastTile + threadIdx.x * 4;
  uint4 rows[kRows];
  unsigned before[kRows], totals[kRows];  // the threads before this one in each row, the rows' totals
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    rows[r] = scan_vector(load_vector(in, first + r * kTile, n));
    before[r] = rows[r].w;
  }
  rows_exclusive_scan(before, totals);
  unsigned total = 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r) total += totals[r];
  if (threadIdx.x < 32) {
    unsigned prefix = 0;
    if (tile > 0) {
      if (threadIdx.x == 0) publish(states + tile, kAggregate, total);  // successors can go past this tile
      prefix = look_back(states, tile);
    }
    if (threadIdx.x == 0) {
      if (!alone) publish(states + tile, kPrefix, prefix + total);
      tile_prefix = prefix;
    }
  }
  __syncthreads();
  unsigned offset = tile_prefix;  // the tiles before, then also the rows above
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    store_vector(out, first + r * kTile, n, add_to_vector(rows[r], offset + before[r]));
    offset += totals[r];
  }
}

// The scratch comes filled with garbage: the ticket and the tile states start at 0 every launch.
__global__ void clear_kernel(unsigned* words, int count) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) words[i] = 0;
}

void scan_fast(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  const int tiles = blocks_for(n, kFastTile);
  if (tiles > 1) {  // 2 + 2 * tiles words: 64 KiB for 2^26 words
    clear_kernel<<<blocks_for(2 + 2 * tiles, kTileThreads), kTileThreads>>>(scratch, 2 + 2 * tiles);
    check(cudaGetLastError(), "launching clear_kernel");
  }
  scan_lookback_kernel<<<tiles, kTileThreads>>>(in, out, scratch, n);
  check(cudaGetLastError(), "launching scan_lookback_kernel");
}
// --8<-- [end:fast]
