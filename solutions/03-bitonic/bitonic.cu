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
  for (int e = threadIdx.x; e < kChunk; e += blockDim.x) chunk[e] = base + e < n ? keys[base + e] : UINT_MAX;
  __syncthreads();
}

__device__ void store_chunk(const unsigned* chunk, unsigned* keys, int n) {
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
// how many steps it did; the near steps run in shared memory.
template <typename FarSteps>
void sort_by_chunks(unsigned* keys, int n, FarSteps far_steps) {
  const int padded = padded_length(n), chunks = gpulab::blocks_for(n, kChunk);
  bitonic_chunk_sort_kernel<<<chunks, kChunkThreads>>>(keys, n, padded);
  gpulab::check(cudaGetLastError(), "launching the chunk sort");
  for (int k = 2 * kChunk; k <= padded; k <<= 1) {
    for (int j = k / 2; j >= kChunk;) j >>= far_steps(k, j);
    bitonic_chunk_merge_kernel<<<chunks, kChunkThreads>>>(keys, n, k);
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
// Each thread keeps 32 keys in registers; a block of 512 threads sorts a chunk of 16384 keys. The
// bigger the chunk, the more steps of every stage stay on chip: far steps (over global memory) are
// only those with j >= kFastChunk. 16384 keys are 64 KiB of shared memory, more than a static
// array may take (48 KiB): the chunk kernels take it as dynamic shared memory.
constexpr int kItems = 32;  // keys per thread
constexpr int kItemBits = 5;
constexpr int kFastThreads = 512;
constexpr int kFastChunk = kItems * kFastThreads;
constexpr int kFastChunkBits = 14;
constexpr int kFastChunkBytes = kFastChunk * sizeof(unsigned);
static_assert(kFastChunk == 1 << kFastChunkBits && kItems == 1 << kItemBits);
constexpr int kFarThreads = 256;

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

// A chunk in shared memory, XOR-swizzled: key i lives in word i ^ (bits 5..9 of i), so bank
// (i ^ i >> 5) % 32. When the 32 lanes of a warp differ in five consecutive index bits (as every
// step here has them), they read 32 different banks (the padded chunk of before could not do that
// for keys 32 apart), and the chunk needs no spare words. Other bit sets can collide.
struct SharedChunk {
  unsigned* words;
  __device__ unsigned load(unsigned i) const { return words[i ^ (i >> 5 & 31)]; }
  __device__ void store(unsigned i, unsigned key) const { words[i ^ (i >> 5 & 31)] = key; }
};

// One compare-exchange: the smaller key to `low`. Two instructions (min, max), no branch.
__device__ void order(unsigned& low, unsigned& high) {
  const unsigned a = low;
  low = min(a, high);
  high = max(a, high);
}

// The steps (k, 2^top), (k, 2^(top-1)), ... (`steps` of them, at most 5) on the 32 keys of group
// `group`: the keys whose indices differ only in bits top-4 .. top. The group is closed under
// every step's partner mask, so the thread needs nobody else: one load and one store of each key
// for up to five steps. Slot c holds index first | c << low; after a mirror step (the first of
// the stage) the upper half of the slots holds its indices mirrored, i ^ (k - 1), and there the
// smaller key goes to the higher slot.
template <bool kMirror, typename From, typename To>
__device__ void group_steps(const From& from, const To& to, unsigned group, unsigned k, int top, int steps) {
  const int low = top - (kItemBits - 1);
  const unsigned first = ((group >> low) << (top + 1)) | (group & ((1u << low) - 1));
  const unsigned mirrored = kMirror ? (k - 1) ^ (1u << top) : 0;  // the bits below top, for slots c >= 16
  unsigned key[kItems];
#pragma unroll
  for (int c = 0; c < kItems; ++c) key[c] = from.load((first | c << low) ^ (c >= kItems / 2 ? mirrored : 0));
#pragma unroll
  for (int q = 0; q < kItemBits; ++q) {
    if (q >= steps) break;
    const int bit = kItemBits - 1 - q;  // step q works on slot bit `bit`
#pragma unroll
    for (int c = 0; c < kItems; ++c) {
      if (c >> bit & 1) continue;
      const int d = c | 1 << bit;
      if (kMirror && q > 0 && c >= kItems / 2) {
        order(key[d], key[c]);
      } else {
        order(key[c], key[d]);
      }
    }
  }
  // The same indices as the loads (first has zeros in bits low .. top), written as a sum: the
  // compiler then recomputes them instead of holding 32 more registers across the exchanges. That
  // fits the chunk kernels into 64 registers (two blocks of 512 threads per SM) with a few words
  // spilled, instead of 80 to 90 registers and one block per SM.
#pragma unroll
  for (int c = 0; c < kItems; ++c) to.store((first + (c << low)) ^ (c >= kItems / 2 ? mirrored : 0), key[c]);
}

template <typename From, typename To>
__device__ void group_steps(const From& from, const To& to, unsigned group, unsigned k, int top, int steps) {
  if (2u << top == k) {  // the mirror step is a compile-time case: no extra selects in the exchanges
    group_steps<true>(from, to, group, k, top, steps);
  } else {
    group_steps<false>(from, to, group, k, top, steps);
  }
}

// Up to five far steps of stage k in one launch: one pass over the array instead of five.
__global__ void __launch_bounds__(kFarThreads) bitonic_far_kernel(unsigned* keys, int n, int k, int top, int steps) {
  const GlobalKeys array{keys, static_cast<unsigned>(n)};
  group_steps(array, array, blockIdx.x * blockDim.x + threadIdx.x, k, top, steps);
}
// The 32 consecutive keys t * 32 .. t * 32 + 31 of thread t. Steps j <= 16 stay inside such a run:
// the last five steps of every stage, and all of the stages 2 .. 32, need no shared memory.
// kSort: stages 2 .. 32; otherwise the steps 16 .. 1 of a larger stage (never a mirror step).
template <bool kSort>
__device__ void run_steps(const SharedChunk& chunk) {
  const unsigned first = threadIdx.x * kItems;
  unsigned key[kItems];
#pragma unroll
  for (int c = 0; c < kItems; ++c) key[c] = chunk.load(first + c);
#pragma unroll
  for (int k = kSort ? 2 : kItems; k <= kItems; k <<= 1) {
    if (kSort) {
#pragma unroll
      for (int c = 0; c < kItems; ++c)
        if (!(c & k / 2)) order(key[c], key[c ^ (k - 1)]);  // the mirror step
    }
#pragma unroll
    for (int j = kSort ? k / 4 : k / 2; j > 0; j >>= 1)
#pragma unroll
      for (int c = 0; c < kItems; ++c)
        if (!(c & j)) order(key[c], key[c | j]);
  }
#pragma unroll
  for (int c = 0; c < kItems; ++c) chunk.store(first + c, key[c]);
}

// The steps 2^top .. 32 of stage k on the chunk, five per barrier (the last group may be shorter).
__device__ void chunk_group_steps(const SharedChunk& chunk, unsigned k, int top) {
  for (int steps; top >= kItemBits; top -= steps) {
    steps = min(kItemBits, top - kItemBits + 1);
    group_steps(chunk, chunk, threadIdx.x, k, top, steps);
    __syncthreads();
  }
}

// The chunk in and out of shared memory: consecutive threads, consecutive keys (coalesced).
__device__ void copy_in(const GlobalKeys& own, const SharedChunk& chunk) {
  for (unsigned e = threadIdx.x; e < kFastChunk; e += kFastThreads) chunk.store(e, own.load(e));
  __syncthreads();
}

__device__ void copy_out(const SharedChunk& chunk, const GlobalKeys& own) {
  for (unsigned e = threadIdx.x; e < kFastChunk; e += kFastThreads) own.store(e, chunk.load(e));
}

// Stages 2 .. kFastChunk: a stage k is ceil((log2(k) - 5) / 5) groups in shared memory and one
// run in registers, so 3 barriers at most instead of log2(k).
__global__ void __launch_bounds__(kFastThreads, 2) bitonic_chunk_sort_registers_kernel(unsigned* keys, int n) {
  extern __shared__ unsigned words[];
  const SharedChunk chunk{words};
  const unsigned base = blockIdx.x * kFastChunk;
  const GlobalKeys own{keys + base, static_cast<unsigned>(n) - base};
  copy_in(own, chunk);
  run_steps<true>(chunk);
  __syncthreads();
  for (unsigned k = 2 * kItems; k <= kFastChunk; k <<= 1) {
    chunk_group_steps(chunk, k, __ffs(k) - 2);
    run_steps<false>(chunk);
    __syncthreads();
  }
  copy_out(chunk, own);
}

// The 14 near steps j = 8192 .. 1 of a stage k > kFastChunk: 5 + 4 in shared memory, 5 in
// registers. The first group comes straight from global memory (its 32 keys are 512 apart, so the
// lanes of a warp read consecutive keys) into shared memory: no copy_in pass, one barrier less.
__global__ void __launch_bounds__(kFastThreads, 2) bitonic_chunk_merge_registers_kernel(unsigned* keys, int n, int k) {
  extern __shared__ unsigned words[];
  const SharedChunk chunk{words};
  const unsigned base = blockIdx.x * kFastChunk;
  const GlobalKeys own{keys + base, static_cast<unsigned>(n) - base};
  group_steps(own, chunk, threadIdx.x, k, kFastChunkBits - 1, kItemBits);
  __syncthreads();
  chunk_group_steps(chunk, k, kFastChunkBits - 1 - kItemBits);
  run_steps<false>(chunk);
  __syncthreads();
  copy_out(chunk, own);
}

// Far steps of stage k (j = k/2 .. kFastChunk), five per launch: 1 to 10 steps, 1 or 2 launches.
void launch_far_steps(unsigned* keys, int n, int k) {
  const int threads = padded_length(n) / kItems;
  for (int top = __builtin_ctz(k) - 1, steps; top >= kFastChunkBits; top -= steps) {
    steps = std::min(kItemBits, top - kFastChunkBits + 1);
    bitonic_far_kernel<<<threads / kFarThreads, kFarThreads>>>(keys, n, k, top, steps);
    gpulab::check(cudaGetLastError(), "launching bitonic_far_kernel");
  }
}

void bitonic_fast(unsigned* keys, int n) {
  static const bool big_chunks_allowed = [] {  // once: 64 KiB of dynamic shared memory per block
    for (const void* kernel : {reinterpret_cast<const void*>(bitonic_chunk_sort_registers_kernel),
                               reinterpret_cast<const void*>(bitonic_chunk_merge_registers_kernel)})
      gpulab::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kFastChunkBytes),
                    "allowing 64 KiB of shared memory per chunk");
    return true;
  }();
  (void)big_chunks_allowed;
  const int padded = padded_length(n), chunks = gpulab::blocks_for(n, kFastChunk);
  bitonic_chunk_sort_registers_kernel<<<chunks, kFastThreads, kFastChunkBytes>>>(keys, n);
  gpulab::check(cudaGetLastError(), "launching the chunk sort");
  for (int k = 2 * kFastChunk; k <= padded; k <<= 1) {
    launch_far_steps(keys, n, k);
    bitonic_chunk_merge_registers_kernel<<<chunks, kFastThreads, kFastChunkBytes>>>(keys, n, k);
    gpulab::check(cudaGetLastError(), "launching the chunk merge");
  }
}
// --8<-- [end:fast]
