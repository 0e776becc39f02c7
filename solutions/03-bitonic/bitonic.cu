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

template <typename Chunk>
__device__ void load_chunk(Chunk chunk, const unsigned* keys, int n) {
  const int base = blockIdx.x * kChunk;
  for (int e = threadIdx.x; e < kChunk; e += blockDim.x) chunk[e] = base + e < n ? keys[base + e] : UINT_MAX;
  __syncthreads();
}

template <typename Chunk>
__device__ void store_chunk(Chunk chunk, unsigned* keys, int n) {
  __syncthreads();
  const int base = blockIdx.x * kChunk;
  for (int e = threadIdx.x; e < kChunk; e += blockDim.x)
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
                    MergeKernel merge = bitonic_chunk_merge_kernel, int threads = kChunkThreads) {
  const int padded = padded_length(n), chunks = gpulab::blocks_for(n, kChunk);
  sort<<<chunks, threads>>>(keys, n, padded);
  gpulab::check(cudaGetLastError(), "launching the chunk sort");
  for (int k = 2 * kChunk; k <= padded; k <<= 1) {
    for (int j = k / 2; j >= kChunk;) j >>= far_steps(k, j);
    merge<<<chunks, threads>>>(keys, n, k);
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
// The keys of the array, read and written with the padding rule: positions past n read as the
// largest key and are never written.
struct GlobalKeys {
  unsigned* keys;
  unsigned n;
  __device__ unsigned load(unsigned i) const { return i < n ? keys[i] : UINT_MAX; }
  __device__ void store(unsigned i, unsigned key) const {
    if (i < n) keys[i] = key;
  }
};

// A chunk in shared memory with a spare word after every 32 keys: the strided groups of the near
// steps (8 keys 1 or 4 apart, say) then spread over the 32 banks instead of queueing on a few.
constexpr int kPaddedChunk = kChunk + kChunk / 32;
struct SharedChunk {
  unsigned* words;
  __device__ unsigned& operator[](unsigned i) const { return words[i + (i >> 5)]; }
  __device__ unsigned load(unsigned i) const { return (*this)[i]; }
  __device__ void store(unsigned i, unsigned key) const { (*this)[i] = key; }
};

// The S consecutive steps (k, j), (k, j/2), ..., (k, j >> (S-1)) on one group of 2^S keys in
// registers. A group is closed under all of the steps' partner masks, so the thread needs nobody
// else: one read and one write of each key instead of S. Group g is the one whose first index is
// g with S zero bits inserted at bit `low`. The keys come from `from` and go to `to`: a launch can
// read them from global memory and leave them in shared memory.
template <int S, typename From, typename To>
__device__ void steps_in_registers(const From& from, const To& to, unsigned group, unsigned k, unsigned j) {
  constexpr int kKeys = 1 << S;
  const int low = __ffs(j) - S;  // the steps use bits low .. log2(j) of the index
  const unsigned first = ((group >> low) << (low + S)) | (group & ((1u << low) - 1));
  unsigned index[kKeys], key[kKeys];
#pragma unroll
  for (int c = 0; c < kKeys; ++c) {
    index[c] = first;
#pragma unroll
    for (int q = 0; q < S; ++q)
      if (c >> q & 1) index[c] ^= q == 0 && j == k / 2 ? k - 1 : j >> q;
    key[c] = from.load(index[c]);
  }
#pragma unroll
  for (int q = 0; q < S; ++q)
#pragma unroll
    for (int c = 0; c < kKeys; ++c) {
      const int d = c | 1 << q;
      if (c >> q & 1) continue;
      const bool c_low = index[c] < index[d];  // the smaller key goes to the lower index
      if (c_low ? key[c] > key[d] : key[d] > key[c]) {
        const unsigned x = key[c];
        key[c] = key[d];
        key[d] = x;
      }
    }
#pragma unroll
  for (int c = 0; c < kKeys; ++c) to.store(index[c], key[c]);
}

// S far steps in one launch: one pass over the array instead of S.
template <int S>
__global__ void bitonic_fused_kernel(unsigned* keys, int n, int k, int j) {
  const GlobalKeys array{keys, static_cast<unsigned>(n)};
  steps_in_registers<S>(array, array, blockIdx.x * blockDim.x + threadIdx.x, k, j);
}

constexpr int kMaxFused = 4;  // far steps per launch: 16 keys per thread

int launch_fused_far_steps(unsigned* keys, int n, int k, int j) {
  const int steps = std::min(kMaxFused, __builtin_ctz(j) - __builtin_ctz(kChunk) + 1);  // down to j = kChunk
  constexpr int threads = 256;
  const int blocks = gpulab::blocks_for(padded_length(n) >> steps, threads);
  switch (steps) {  // the step count is a template argument, so the 2^S keys stay in registers
    case 1: bitonic_fused_kernel<1><<<blocks, threads>>>(keys, n, k, j); break;
    case 2: bitonic_fused_kernel<2><<<blocks, threads>>>(keys, n, k, j); break;
    case 3: bitonic_fused_kernel<3><<<blocks, threads>>>(keys, n, k, j); break;
    default: bitonic_fused_kernel<4><<<blocks, threads>>>(keys, n, k, j); break;
  }
  gpulab::check(cudaGetLastError(), "launching bitonic_fused_kernel");
  return steps;
}

// The near steps run three per barrier: each of the block's threads holds a group of 8 keys.
constexpr int kNearThreads = kChunk / 8;

// Steps j .. 1 of stage k on a chunk: groups of three steps, then the two or one left over.
__device__ void near_steps(const SharedChunk& chunk, int k, int j) {
  for (; j >= 4; j >>= 3) {
    steps_in_registers<3>(chunk, chunk, threadIdx.x, k, j);
    __syncthreads();
  }
  if (j == 2) {
    for (unsigned g = threadIdx.x; g < kChunk / 4; g += kNearThreads) steps_in_registers<2>(chunk, chunk, g, k, 2);
    __syncthreads();
  } else if (j == 1) {
    for (unsigned g = threadIdx.x; g < kChunk / 2; g += kNearThreads) steps_in_registers<1>(chunk, chunk, g, k, 1);
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kNearThreads) bitonic_chunk_sort_fused_kernel(unsigned* keys, int n, int padded) {
  __shared__ unsigned words[kPaddedChunk];
  const SharedChunk chunk{words};
  load_chunk(chunk, keys, n);
  for (int k = 2; k <= min(kChunk, padded); k <<= 1) near_steps(chunk, k, k / 2);
  store_chunk(chunk, keys, n);
}

// The near steps j = kChunk/2 .. 1 of a stage k > kChunk: 11 steps as 3 + 3 + 3 + 2. The first
// three read their keys straight from global memory (coalesced: a group's keys are 256 apart) and
// the last two write them straight back, which saves two barriers and two passes through shared
// memory (6.5 -> 6.8 Gkeys/s on the H100).
static_assert(kChunk == 2048, "bitonic_chunk_merge_fused_kernel splits the 11 near steps of a 2048-key chunk");
__global__ void __launch_bounds__(kNearThreads) bitonic_chunk_merge_fused_kernel(unsigned* keys, int n, int k) {
  __shared__ unsigned words[kPaddedChunk];
  const SharedChunk chunk{words};
  const unsigned base = blockIdx.x * kChunk;
  const GlobalKeys own_keys{keys + base, static_cast<unsigned>(n) - base};
  steps_in_registers<3>(own_keys, chunk, threadIdx.x, k, kChunk / 2);
  __syncthreads();
  steps_in_registers<3>(chunk, chunk, threadIdx.x, k, kChunk / 16);
  __syncthreads();
  steps_in_registers<3>(chunk, chunk, threadIdx.x, k, kChunk / 128);
  __syncthreads();
  for (unsigned g = threadIdx.x; g < kChunk / 4; g += kNearThreads) steps_in_registers<2>(chunk, own_keys, g, k, 2);
}

void bitonic_fast(unsigned* keys, int n) {
  sort_by_chunks(
      keys, n, [&](int k, int j) { return launch_fused_far_steps(keys, n, k, j); }, bitonic_chunk_sort_fused_kernel,
      bitonic_chunk_merge_fused_kernel, kNearThreads);
}
// --8<-- [end:fast]
