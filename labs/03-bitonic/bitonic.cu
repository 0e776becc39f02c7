// Lab 03-bitonic (CUDA): sort n 32-bit keys in place with Batcher's bitonic network.
// Read README.md first, then fill in the TODOs and run `make check` in this folder. The grader
// passes a device pointer; keep the four signatures. thrust, CUB and std::sort are rejected.
//
// The network in the form this lab uses: stage k = 2, 4, ..., n has steps j = k/2, k/4, ..., 1.
// Step j compares key i with key i ^ j, except the first step of a stage (j = k/2), which compares
// i with its mirror i ^ (k - 1). Every compare-exchange puts the smaller key at the lower index.
#include <algorithm>
#include <climits>

#include "gpulab/student/cuda.hpp"

// Pair t of step j is (i, partner) with i = t with a zero bit inserted at position log2(j):
// each of the n/2 threads of a step then owns exactly one pair.
__host__ __device__ unsigned first_of_pair(unsigned t, unsigned j) { return ((t & ~(j - 1)) << 1) | (t & (j - 1)); }

__global__ void bitonic_step_kernel(unsigned* keys, int n, int k, int j) {
  // TODO (compare-exchange): i = first_of_pair(global thread index, j); its partner is i ^ (k - 1)
  // in the first step of the stage (j == k / 2) and i + j otherwise. If keys[i] > keys[partner],
  // swap them. Threads whose partner is >= n do nothing.
}

void bitonic_global(unsigned* keys, int n) {
  // TODO (one launch per step): n is a power of two here. For k = 2, 4, ..., n and
  // j = k/2, ..., 1, launch bitonic_step_kernel with n/2 threads (256 per block) and check the
  // launch. Why can the steps not run in one kernel? (README: global synchronisation.)
  GPULAB_NOT_IMPLEMENTED("bitonic_global: launch one bitonic_step_kernel per step (see the TODOs above)");
}

constexpr int kChunk = 2048;               // keys one block sorts in shared memory
constexpr int kChunkThreads = kChunk / 2;  // one compare-exchange per thread per step

__global__ void bitonic_chunk_sort_kernel(unsigned* keys, int n) {
  // TODO 1 (shared memory): load this block's kChunk keys (from blockIdx.x * kChunk) into a
  //   __shared__ array, two per thread, coalesced; __syncthreads().
  // TODO 2 (block-local steps): run every step of the stages k = 2 .. min(kChunk, n) on the shared
  //   array, as in bitonic_step_kernel with threadIdx.x as the pair index, with __syncthreads()
  //   after each step. Partners are never more than kChunk apart, so the block needs nobody else.
  // TODO 3: write the sorted chunk back.
}

__global__ void bitonic_chunk_merge_kernel(unsigned* keys, int n, int k) {
  // TODO 4 (the near steps of a stage k > kChunk): load the chunk, run steps j = kChunk/2 .. 1 of
  //   stage k in shared memory (none of them is the mirror step), write it back.
}

void bitonic_shared(unsigned* keys, int n) {
  // TODO 5 (fewer launches): bitonic_chunk_sort_kernel on every chunk; then for each stage
  //   k = 2 kChunk .. n: the far steps j = k/2 .. kChunk as bitonic_step_kernel launches, and the
  //   near ones with one bitonic_chunk_merge_kernel launch. Count the launches before and after.
  GPULAB_NOT_IMPLEMENTED("bitonic_shared: chunk sort, far steps, chunk merges (TODO 1-5)");
}

void bitonic_any_n(unsigned* keys, int n) {
  // TODO (bonus, any length): sort n keys for any n, without a bigger buffer. Hint: with this
  // form of the network, a key past the end behaves like the largest key and never moves down, so
  // positions >= n can be treated as UINT_MAX that are never read or written. Round the stages
  // up to the next power of two.
  GPULAB_NOT_IMPLEMENTED("bitonic_any_n: sort any length (bonus)");
}

void bitonic_fast(unsigned* keys, int n) {
  // TODO (bonus, fewer passes): every far step reads and writes all keys once. A thread that loads
  // 8 keys closed under the partner masks of 3 consecutive steps can run those steps in registers:
  // one pass instead of three. See the README for the index arithmetic. With the shared chunks of
  // 2048 that passes the bound (3.5x naive on the H100, 3.0x needed).
  // Beyond the bound (optional; README, "The reference's fast sort"; the reference reaches 8.0x):
  // - 32 keys per thread (5 steps per pass: 26 launches for 2^24 keys instead of 49);
  // - near steps five per barrier (fewer barriers): chunk kernels of your own in which each thread
  //   takes a group of 32 keys from shared memory, as a far launch takes one from global memory;
  // - the last five steps of every stage (j = 16 .. 1) on the 32 consecutive keys 32t .. 32t + 31,
  //   in registers with no shared memory at all;
  // - bigger chunks (16384 keys: 512 threads x 32): 64 KiB of dynamic shared memory, allowed with
  //   cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...);
  // - no bank conflicts (memory banks): keep key i in word i ^ ((i >> 5) & 31) of the chunk.
  GPULAB_NOT_IMPLEMENTED("bitonic_fast: fuse far steps (bonus)");
}
