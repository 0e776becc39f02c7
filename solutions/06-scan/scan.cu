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
// Tiles of 16 words a thread: each thread scans its words in registers (15 additions, no barrier),
// so a block of 256 threads covers 4096 words with one scan of 256 thread totals. Compared with one
// word a thread, the block sums shrink 4x (phase 2 almost vanishes) and the barrier steps per word
// 48x; every memory access is a 16-byte vector. The passes then run at the speed of DRAM.
constexpr int kTileThreads = 256;
constexpr int kPerThread = 16;  // four uint4 loads
constexpr int kTile = kTileThreads * kPerThread;
constexpr int kVectors = kPerThread / 4;
constexpr int kWarps = kTileThreads / 32;

// Round up to a multiple of 4 words: where a level's tile sums start, so its uint4 loads are aligned.
constexpr int aligned_words(int n) { return (n + 3) / 4 * 4; }

// The kPerThread consecutive words from `first` (0 past n): four uint4 loads when the tile is whole.
__device__ void load_words(const unsigned* in, int first, int n, bool full, unsigned (&words)[kPerThread]) {
  if (full) {
    const uint4* vectors = reinterpret_cast<const uint4*>(in + first);
    for (int k = 0; k < kVectors; ++k) {
      const uint4 v = vectors[k];
      words[4 * k] = v.x, words[4 * k + 1] = v.y, words[4 * k + 2] = v.z, words[4 * k + 3] = v.w;
    }
  } else {
    for (int j = 0; j < kPerThread; ++j) words[j] = first + j < n ? in[first + j] : 0u;
  }
}

__device__ void store_words(unsigned* out, int first, int n, bool full, const unsigned (&words)[kPerThread],
                            unsigned offset) {
  if (full) {
    uint4* vectors = reinterpret_cast<uint4*>(out + first);
    for (int k = 0; k < kVectors; ++k)
      vectors[k] = make_uint4(words[4 * k] + offset, words[4 * k + 1] + offset, words[4 * k + 2] + offset,
                              words[4 * k + 3] + offset);
  } else {
    for (int j = 0; j < kPerThread; ++j)
      if (first + j < n) out[first + j] = words[j] + offset;
  }
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
  __shared__ unsigned warp_sums[kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned inclusive = warp_inclusive_scan(value);
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const unsigned sum = warp_inclusive_scan(lane < kWarps ? warp_sums[lane] : 0u);
    if (lane < kWarps) warp_sums[lane] = sum;
  }
  __syncthreads();
  total = warp_sums[kWarps - 1];
  return (warp > 0 ? warp_sums[warp - 1] : 0u) + inclusive - value;
}

// Tile `tile` of `in`, scanned in registers: returns thread's words scanned from the tile's start.
__device__ unsigned scan_tile(const unsigned* in, int tile, int n, unsigned (&words)[kPerThread], unsigned& total) {
  const int first = tile * kTile + threadIdx.x * kPerThread;
  load_words(in, first, n, (tile + 1) * kTile <= n, words);
  for (int j = 1; j < kPerThread; ++j) words[j] += words[j - 1];
  return tile_exclusive_scan(words[kPerThread - 1], total);  // what the threads before this one add
}

// Phase 1: every block scans its tile into `out` and writes the tile's total to tile_sums.
// `in` may be `out`: a thread writes only the words it read itself.
__global__ void scan_tiles_kernel(const unsigned* in, unsigned* out, unsigned* tile_sums, int n) {
  unsigned words[kPerThread], total;
  const unsigned before = scan_tile(in, blockIdx.x, n, words, total);
  const int first = blockIdx.x * kTile + threadIdx.x * kPerThread;
  store_words(out, first, n, (blockIdx.x + 1) * kTile <= n, words, before);
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;  // words past n added 0
}

// Phase 3: every tile but the first adds the total of all tiles before it. Vectors striped over the
// threads: each load instruction of a warp reads 512 contiguous bytes. The blocks take the tiles
// from the last: phase 1 wrote those last, so many of them are still in the L2 cache.
__global__ void add_tile_offsets_kernel(unsigned* out, const unsigned* scanned_tile_sums, int n) {
  const int tile = gridDim.x - 1 - blockIdx.x;
  if (tile == 0) return;
  const unsigned offset = scanned_tile_sums[tile - 1];
  const int base = tile * kTile;
  if (base + kTile <= n) {
    uint4* vectors = reinterpret_cast<uint4*>(out + base);
    for (int k = 0; k < kVectors; ++k) {
      uint4 v = vectors[k * kTileThreads + threadIdx.x];
      v.x += offset, v.y += offset, v.z += offset, v.w += offset;
      vectors[k * kTileThreads + threadIdx.x] = v;
    }
  } else {
    for (int i = base + threadIdx.x; i < n; i += kTileThreads) out[i] += offset;
  }
}

void scan_any_n(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  const int tiles = blocks_for(n, kTile);
  scan_tiles_kernel<<<tiles, kTileThreads>>>(in, out, scratch, n);
  check(cudaGetLastError(), "launching scan_tiles_kernel");
  if (tiles == 1) return;
  // Phase 2: the tile sums are a scan of their own, in place, with the scratch after them for theirs
  // (2^26 words: 16384 sums, then 4, then 1).
  scan_any_n(scratch, scratch, scratch + aligned_words(tiles), tiles);
  add_tile_offsets_kernel<<<tiles, kTileThreads>>>(out, scratch, n);
  check(cudaGetLastError(), "launching add_tile_offsets_kernel");
}
// --8<-- [end:any-n]

// --8<-- [start:fast]
// Single pass, decoupled look-back: 8 bytes a word (read once, written once), like a copy. Each tile
// publishes its total as soon as it knows it, then adds up its predecessors' published states from
// the nearest backwards until one carries an inclusive prefix (the sum of everything before it).
// A state is one 64-bit word, flag in the high half, sum in the low: one store publishes both, so a
// reader never sees a flag without its sum, and no memory fence is needed.
constexpr unsigned long long kNothing = 0, kAggregate = 1ull << 32, kPrefix = 2ull << 32;
constexpr unsigned long long kFlags = 3ull << 32;

__device__ void publish(unsigned long long* state, unsigned long long flag, unsigned sum) {
  *reinterpret_cast<volatile unsigned long long*>(state) = flag | sum;
}

// The sum of all tiles before `tile`; one thread walks back (usually a few steps: tiles start in
// order, so the predecessors are running or done). volatile: every read goes to memory.
__device__ unsigned look_back(const unsigned long long* states, int tile) {
  unsigned prefix = 0;
  for (int i = tile - 1;; --i) {
    unsigned long long state;
    do state = *reinterpret_cast<const volatile unsigned long long*>(states + i);
    while ((state & kFlags) == kNothing);  // tile i has not summed its words yet
    prefix += static_cast<unsigned>(state);
    if ((state & kFlags) == kPrefix) return prefix;
  }
}

// scratch: word 0 hands out the tiles (a ticket), the tiles' states follow from word 2 (8-byte
// aligned). Tiles go by ticket, not blockIdx.x: a block only waits for tiles whose blocks already
// run, so it cannot wait for one that the GPU has not scheduled yet (a deadlock).
__global__ void scan_lookback_kernel(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  __shared__ int ticket;
  __shared__ unsigned tile_prefix;
  unsigned long long* states = reinterpret_cast<unsigned long long*>(scratch + 2);
  const bool alone = gridDim.x == 1;  // n <= kTile: no predecessors, and a scratch of maybe one word
  if (threadIdx.x == 0) ticket = alone ? 0 : static_cast<int>(atomicAdd(scratch, 1u));
  __syncthreads();
  const int tile = ticket;
  unsigned words[kPerThread], total;
  const unsigned before = scan_tile(in, tile, n, words, total);
  if (threadIdx.x == 0) {
    unsigned prefix = 0;
    if (tile > 0) {
      publish(states + tile, kAggregate, total);  // successors can go past this tile already
      prefix = look_back(states, tile);
    }
    if (!alone) publish(states + tile, kPrefix, prefix + total);
    tile_prefix = prefix;
  }
  __syncthreads();
  const int first = tile * kTile + threadIdx.x * kPerThread;
  store_words(out, first, n, (tile + 1) * kTile <= n, words, tile_prefix + before);
}

// The scratch comes filled with garbage: the ticket and the tile states start at 0 every launch.
__global__ void clear_kernel(unsigned* words, int count) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) words[i] = 0;
}

void scan_fast(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  const int tiles = blocks_for(n, kTile);
  if (tiles > 1) {  // 2 + 2 * tiles words: 128 KiB for 2^26 words
    clear_kernel<<<blocks_for(2 + 2 * tiles, kTileThreads), kTileThreads>>>(scratch, 2 + 2 * tiles);
    check(cudaGetLastError(), "launching clear_kernel");
  }
  scan_lookback_kernel<<<tiles, kTileThreads>>>(in, out, scratch, n);
  check(cudaGetLastError(), "launching scan_lookback_kernel");
}
// --8<-- [end:fast]
