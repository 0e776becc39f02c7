// Lab 03-bitonic (CUDA): sort n 32-bit keys in place with Batcher's bitonic network.
//
// The network in the form used throughout: stage k (2, 4, ..., padded length) has steps
// j = k/2, k/4, ..., 1. Step j compares key i with key i ^ j, except the first step of a stage,
// which compares i with its mirror i ^ (k - 1). Every compare-exchange puts the smaller key at the
// lower index. Positions past n act as the largest key and are never read or written: since
// smaller keys only move down, they would stay at the top anyway. That is what makes any n work.
#include <algorithm>
#include <climits>

#include "gpulab/student/cuda.hpp"

namespace {

int padded_length(int n) {
  int padded = 1;
  while (padded < n) padded <<= 1;
  return padded;
}

// Pair t of step j is (i, partner) with i = t with a zero bit inserted at position log2(j).
__host__ __device__ unsigned first_of_pair(unsigned t, unsigned j) { return ((t & ~(j - 1)) << 1) | (t & (j - 1)); }

}  // namespace

// --8<-- [start:global]
// One step of the network, one thread per pair.
__global__ void bitonic_step_kernel(unsigned* keys, int n, int k, int j) {
  const unsigned i = first_of_pair(blockIdx.x * blockDim.x + threadIdx.x, j);
  const unsigned partner = j == k / 2 ? i ^ (k - 1) : i + j;
  if (partner >= static_cast<unsigned>(n)) return;  // the partner is padding: nothing moves
  const unsigned a = keys[i], b = keys[partner];
  if (a > b) {
    keys[i] = b;
    keys[partner] = a;
  }
}

void launch_step(unsigned* keys, int n, int k, int j) {
  constexpr int threads = 256;
  bitonic_step_kernel<<<gpulab::blocks_for(padded_length(n) / 2, threads), threads>>>(keys, n, k, j);
  gpulab::check(cudaGetLastError(), "launching bitonic_step_kernel");
}

// Blocks cannot wait for each other inside a kernel, so every step is a launch of its own: the
// launch boundary is the global barrier between steps.
void bitonic_global(unsigned* keys, int n) {
  const int padded = padded_length(n);
  for (int k = 2; k <= padded; k <<= 1)
    for (int j = k / 2; j > 0; j >>= 1) launch_step(keys, n, k, j);
}
// --8<-- [end:global]

// --8<-- [start:shared]
constexpr int kChunk = 2048;               // keys one block sorts in shared memory
constexpr int kChunkThreads = kChunk / 2;  // one compare-exchange per thread per step

// Steps whose partners are less than kChunk apart stay inside a chunk: a block runs them in
// shared memory with __syncthreads() between steps.
__device__ void chunk_step(unsigned* chunk, int k, int j) {
  const unsigned i = first_of_pair(threadIdx.x, j);
  const unsigned partner = j == k / 2 ? i ^ (k - 1) : i + j;
  const unsigned a = chunk[i], b = chunk[partner];
  if (a > b) {
    chunk[i] = b;
    chunk[partner] = a;
  }
}

__device__ void load_chunk(unsigned* chunk, const unsigned* keys, int n) {
  const int base = blockIdx.x * kChunk;
  for (int e = threadIdx.x; e < kChunk; e += kChunkThreads) chunk[e] = base + e < n ? keys[base + e] : UINT_MAX;
  __syncthreads();
}

__device__ void store_chunk(const unsigned* chunk, unsigned* keys, int n) {
  __syncthreads();
  const int base = blockIdx.x * kChunk;
  for (int e = threadIdx.x; e < kChunk; e += kChunkThreads)
    if (base + e < n) keys[base + e] = chunk[e];
}

// Stages 2 .. kChunk entirely: every chunk comes out sorted.
__global__ void bitonic_chunk_sort_kernel(unsigned* keys, int n, int padded) {
  __shared__ unsigned chunk[kChunk];
  load_chunk(chunk, keys, n);
  for (int k = 2; k <= min(kChunk, padded); k <<= 1)
    for (int j = k / 2; j > 0; j >>= 1) {
      chunk_step(chunk, k, j);
      __syncthreads();
    }
  store_chunk(chunk, keys, n);
}

// The near steps of a stage k > kChunk: j = kChunk / 2 .. 1 (never the mirror, which is at k / 2).
__global__ void bitonic_chunk_merge_kernel(unsigned* keys, int n, int k) {
  __shared__ unsigned chunk[kChunk];
  load_chunk(chunk, keys, n);
  for (int j = kChunk / 2; j > 0; j >>= 1) {
    chunk_step(chunk, k, j);
    __syncthreads();
  }
  store_chunk(chunk, keys, n);
}

// The far steps of each stage run as global launches by `far_steps(k, j_first)`, which returns
// how many steps it did; the near steps run in shared memory, by `merge`.
using SortKernel = void (*)(unsigned*, int, int);
using MergeKernel = void (*)(unsigned*, int, int);
template <typename FarSteps>
void sort_by_chunks(unsigned* keys, int n, FarSteps far_steps, SortKernel sort = bitonic_chunk_sort_kernel,
                    MergeKernel merge = bitonic_chunk_merge_kernel) {
  const int padded = padded_length(n), chunks = gpulab::blocks_for(n, kChunk);
  sort<<<chunks, kChunkThreads>>>(keys, n, padded);
  gpulab::check(cudaGetLastError(), "launching the chunk sort");
  for (int k = 2 * kChunk; k <= padded; k <<= 1) {
    for (int j = k / 2; j >= kChunk;) j >>= far_steps(k, j);
    merge<<<chunks, kChunkThreads>>>(keys, n, k);
    gpulab::check(cudaGetLastError(), "launching the chunk merge");
  }
}

void bitonic_shared(unsigned* keys, int n) {
  sort_by_chunks(keys, n, [&](int k, int j) {
    launch_step(keys, n, k, j);
    return 1;
  });
}
// --8<-- [end:shared]

// --8<-- [start:any_n]
// Nothing to add: every kernel above treats positions past n as the largest key, and launches
// cover the padded length.
void bitonic_any_n(unsigned* keys, int n) { bitonic_shared(keys, n); }
// --8<-- [end:any_n]

// --8<-- [start:fast]
constexpr int kMaxFused = 4;  // far steps per launch: 16 keys per thread, in registers

// `steps` consecutive far steps (k, j), (k, j/2), ... in one launch. The 2^steps keys a thread
// loads are closed under all of the steps' partner masks, so it can run the steps one after the
// other in registers: one read and one write of the array instead of `steps` of each.
__global__ void bitonic_fused_kernel(unsigned* keys, int n, int k, int j, int steps) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const int low = __ffs(j) - steps;  // the steps use bits low .. log2(j) of the index
  const unsigned first = ((t >> low) << (low + steps)) | (t & ((1u << low) - 1));
  unsigned index[1 << kMaxFused], key[1 << kMaxFused];
#pragma unroll
  for (int c = 0; c < (1 << kMaxFused); ++c) {
    index[c] = first;
#pragma unroll
    for (int q = 0; q < kMaxFused; ++q)
      if (q < steps && (c >> q & 1)) index[c] ^= q == 0 && j == k / 2 ? k - 1u : static_cast<unsigned>(j) >> q;
    key[c] = c < (1 << steps) && index[c] < static_cast<unsigned>(n) ? keys[index[c]] : UINT_MAX;
  }
#pragma unroll
  for (int q = 0; q < kMaxFused; ++q)
#pragma unroll
    for (int c = 0; c < (1 << kMaxFused); ++c) {
      const int d = c | 1 << q;
      if (q >= steps || d >= (1 << steps) || (c >> q & 1)) continue;
      const bool c_low = index[c] < index[d];  // the smaller key goes to the lower index
      if (c_low ? key[c] > key[d] : key[d] > key[c]) {
        const unsigned x = key[c];
        key[c] = key[d];
        key[d] = x;
      }
    }
#pragma unroll
  for (int c = 0; c < (1 << kMaxFused); ++c)
    if (c < (1 << steps) && index[c] < static_cast<unsigned>(n)) keys[index[c]] = key[c];
}

__device__ void order(unsigned& low, unsigned& high) {
  if (low > high) {
    const unsigned x = low;
    low = high;
    high = x;
  }
}

// Steps j .. 1 of stage k inside a chunk, two per barrier: a thread holds the keys i, i ^ h, i ^ m
// and i ^ m ^ h (m the partner mask of step j, h = j/2) in registers and runs steps j and j/2 on
// them: half the barriers and shared-memory round trips of one step at a time.
__device__ void near_steps(unsigned* chunk, int k, int j) {
  for (; j >= 2; j >>= 2) {
    if (threadIdx.x < kChunk / 4) {
      const unsigned t = threadIdx.x, h = j / 2;
      const unsigned i = ((t & ~(h - 1)) << 2) | (t & (h - 1));  // zero bits at log2(h) and log2(j)
      const bool mirror = j == k / 2;
      const unsigned m = mirror ? k - 1 : j;
      unsigned a = chunk[i], b = chunk[i ^ h], c = chunk[i ^ m], d = chunk[i ^ m ^ h];
      order(a, c);  // step j: i and i ^ h have the lower indices
      order(b, d);
      order(a, b);  // step j/2: the mirror also flips bit log2(h), so i ^ m ^ h is below i ^ m
      if (mirror) order(d, c);
      else order(c, d);
      chunk[i] = a;
      chunk[i ^ h] = b;
      chunk[i ^ m] = c;
      chunk[i ^ m ^ h] = d;
    }
    __syncthreads();
  }
  if (j == 1) {  // an odd number of steps leaves one
    chunk_step(chunk, k, 1);
    __syncthreads();
  }
}

__global__ void bitonic_chunk_sort_fused_kernel(unsigned* keys, int n, int padded) {
  __shared__ unsigned chunk[kChunk];
  load_chunk(chunk, keys, n);
  for (int k = 2; k <= min(kChunk, padded); k <<= 1) near_steps(chunk, k, k / 2);
  store_chunk(chunk, keys, n);
}

// The near steps j = kChunk/2 .. 1 of a stage k > kChunk.
__global__ void bitonic_chunk_merge_fused_kernel(unsigned* keys, int n, int k) {
  __shared__ unsigned chunk[kChunk];
  load_chunk(chunk, keys, n);
  near_steps(chunk, k, kChunk / 2);
  store_chunk(chunk, keys, n);
}

void bitonic_fast(unsigned* keys, int n) {
  sort_by_chunks(keys, n, [&](int k, int j) {
    const int steps = std::min(kMaxFused, __builtin_ctz(j) - __builtin_ctz(kChunk) + 1);  // down to j = kChunk
    constexpr int threads = 256;
    bitonic_fused_kernel<<<gpulab::blocks_for(padded_length(n) >> steps, threads), threads>>>(keys, n, k, j, steps);
    gpulab::check(cudaGetLastError(), "launching bitonic_fused_kernel");
    return steps;
  }, bitonic_chunk_sort_fused_kernel, bitonic_chunk_merge_fused_kernel);
}
// --8<-- [end:fast]
