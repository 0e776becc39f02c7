// Lab 06-scan (CUDA), weaker any-n (the block sums added up by one thread, for the GPU test): inclusive prefix sums of n 32-bit words,
// out[i] = in[0] + ... + in[i], exact modulo 2^32.
#include "gpulab/student/cuda.hpp"

using gpulab::blocks_for;
using gpulab::check;

constexpr int kBlock = 1024;  // threads of a block scan, one word each: the `block` task's largest n

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

// Phase 1: every block scans its kBlock words and writes its total to block_sums.
__global__ void scan_blocks_kernel(const unsigned* in, unsigned* out, unsigned* block_sums, int n) {
  const int i = blockIdx.x * kBlock + threadIdx.x;
  const unsigned sum = block_inclusive_scan(i < n ? in[i] : 0u);
  if (i < n) out[i] = sum;
  if (threadIdx.x == kBlock - 1) block_sums[blockIdx.x] = sum;  // words past n added 0
}

// Phase 3: every block but the first adds the total of all blocks before it.
__global__ void add_block_offsets_kernel(unsigned* out, const unsigned* scanned_block_sums, int n) {
  const int i = blockIdx.x * kBlock + threadIdx.x;
  if (blockIdx.x > 0 && i < n) out[i] += scanned_block_sums[blockIdx.x - 1];
}

// Phase 2, serially: one thread walks all the block sums.
__global__ void scan_block_sums_serially_kernel(unsigned* block_sums, int count) {
  unsigned running = 0;
  for (int b = 0; b < count; ++b) block_sums[b] = running += block_sums[b];
}

void scan_any_n(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  const int blocks = blocks_for(n, kBlock);
  scan_blocks_kernel<<<blocks, kBlock>>>(in, out, scratch, n);
  check(cudaGetLastError(), "launching scan_blocks_kernel");
  if (blocks == 1) return;
  scan_block_sums_serially_kernel<<<1, 1>>>(scratch, blocks);
  check(cudaGetLastError(), "launching scan_block_sums_serially_kernel");
  add_block_offsets_kernel<<<blocks, kBlock>>>(out, scratch, n);
  check(cudaGetLastError(), "launching add_block_offsets_kernel");
}

// Reduce, then scan: phase 1 only sums each tile (reads the input once, writes nothing big), phase 3
// reads it again and writes the scan with the tile's offset: 12 bytes per word instead of 16.
constexpr int kTileThreads = 256;
constexpr int kPerThread = 16;  // four uint4 loads
constexpr int kTile = kTileThreads * kPerThread;
constexpr int kVectors = kPerThread / 4;

// Sum of one value per thread of the block, by halving in shared memory; valid in thread 0.
__device__ unsigned tile_total(unsigned value) {
  __shared__ unsigned partial[kTileThreads];
  const int t = threadIdx.x;
  partial[t] = value;
  __syncthreads();
  for (int stride = kTileThreads / 2; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  return partial[0];
}

// Exclusive scan of one value per thread (Hillis-Steele on kTileThreads values).
__device__ unsigned tile_exclusive_scan(unsigned value) {
  __shared__ unsigned sums[2][kTileThreads];
  const int t = threadIdx.x;
  int from = 0;
  sums[from][t] = value;
  __syncthreads();
  for (int offset = 1; offset < kTileThreads; offset <<= 1) {
    unsigned v = sums[from][t];
    if (t >= offset) v += sums[from][t - offset];
    sums[1 - from][t] = v;
    from = 1 - from;
    __syncthreads();
  }
  return sums[from][t] - value;
}

__device__ bool tile_is_full(int n) { return (blockIdx.x + 1) * kTile <= n; }

// Phase 1. A sum needs no order: vectors striped over the threads, every load fully coalesced.
__global__ void reduce_tiles_kernel(const unsigned* in, unsigned* tile_sums, int n) {
  const int base = blockIdx.x * kTile;
  unsigned sum = 0;
  if (tile_is_full(n)) {
    const uint4* vectors = reinterpret_cast<const uint4*>(in + base);
    for (int k = 0; k < kVectors; ++k) {
      const uint4 v = vectors[k * kTileThreads + threadIdx.x];
      sum += v.x + v.y + v.z + v.w;
    }
  } else {
    for (int i = base + threadIdx.x; i < min(n, base + kTile); i += kTileThreads) sum += in[i];
  }
  const unsigned total = tile_total(sum);
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// Phase 3. Thread t owns the kPerThread consecutive words from base + t * kPerThread: it scans them
// in registers, the block scans the threads' totals, and each thread adds what precedes it.
__global__ void scan_tiles_kernel(const unsigned* in, unsigned* out, const unsigned* scanned_tile_sums, int n) {
  const int first = blockIdx.x * kTile + threadIdx.x * kPerThread;
  const bool full = tile_is_full(n);
  unsigned words[kPerThread];
  if (full) {
    const uint4* vectors = reinterpret_cast<const uint4*>(in + first);
    for (int k = 0; k < kVectors; ++k) {
      const uint4 v = vectors[k];
      words[4 * k] = v.x, words[4 * k + 1] = v.y, words[4 * k + 2] = v.z, words[4 * k + 3] = v.w;
    }
  } else {
    for (int j = 0; j < kPerThread; ++j) words[j] = first + j < n ? in[first + j] : 0u;
  }
  for (int j = 1; j < kPerThread; ++j) words[j] += words[j - 1];
  unsigned offset = tile_exclusive_scan(words[kPerThread - 1]);
  if (blockIdx.x > 0) offset += scanned_tile_sums[blockIdx.x - 1];
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

void scan_fast(const unsigned* in, unsigned* out, unsigned* scratch, int n) {
  const int tiles = blocks_for(n, kTile);
  if (tiles > 1) {
    reduce_tiles_kernel<<<tiles, kTileThreads>>>(in, scratch, n);
    check(cudaGetLastError(), "launching reduce_tiles_kernel");
    // The tile sums' own scan, in place; theirs start at a multiple of 4 words, for the uint4 loads.
    scan_fast(scratch, scratch, scratch + (tiles + 3) / 4 * 4, tiles);
  }
  scan_tiles_kernel<<<tiles, kTileThreads>>>(in, out, scratch, n);
  check(cudaGetLastError(), "launching scan_tiles_kernel");
}
