// Lab 07-histogram (CUDA): bins[b] = how many of the n bytes equal b, for the 256 values of a byte.
// The grader fills the bins with garbage before every launch: each launch function zeroes them.
#include <algorithm>

#include "gpulab/student/cuda.hpp"

constexpr int kBins = 256;  // one per value of a byte

// --8<-- [start:global]
// One thread per byte, one atomic increment in global memory each: correct, since two threads that
// count the same value cannot lose an update, but every increment of a bin waits for the last one.
__global__ void histogram_global_kernel(const unsigned char* bytes, unsigned* bins, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[bytes[i]], 1u);
}

void histogram_global(const unsigned char* bytes, unsigned* bins, int n) {
  gpulab::check(cudaMemset(bins, 0, kBins * sizeof(unsigned)), "zeroing the bins");
  constexpr int threads = 256;
  histogram_global_kernel<<<gpulab::blocks_for(n, threads), threads>>>(bytes, bins, n);
  gpulab::check(cudaGetLastError(), "launching histogram_global_kernel");
}
// --8<-- [end:global]

// --8<-- [start:shared]
constexpr int kThreads = kBins;  // one thread per bin: each zeroes and merges its own
constexpr int kWordBytes = 4;    // one 32-bit load: four bytes

// As many blocks of `threads` as the GPU runs at once (the runtime's occupancy for `kernel`, on
// every SM) and no more than the bytes need: each block merges its bins into the global ones only
// once, after many bytes, and no block waits for a second wave while the others idle.
int resident_blocks(const void* kernel, int threads, int wanted) {
  int device = 0, sms = 0, per_sm = 0;
  gpulab::check(cudaGetDevice(&device), "asking for the current device");
  gpulab::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "asking for the SM count");
  gpulab::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0),
                "asking how many blocks fit on an SM");
  return std::max(1, std::min(wanted, sms * std::max(1, per_sm)));
}

// Counts the 4 bytes of one 32-bit word into bins[byte * stride] (stride 1: one set of bins). The
// bytes come out of the word by shifts, in registers: one load instead of four.
__device__ void count_word(unsigned* bins, int stride, unsigned word) {
  for (int k = 0; k < 4; ++k) atomicAdd(&bins[((word >> (8 * k)) & 0xFF) * stride], 1u);
}

// Privatisation: a block counts its share of the bytes (grid-stride, a word of 4 bytes per load)
// into its own bins in shared memory, where atomics are fast and only the block's threads compete,
// then adds each of its bins to the global one: 256 global atomics per block instead of one per
// byte. Byte loads would cost a load instruction per atomic; words keep the memory busy with a
// quarter of them (on the H100: 23% of the copy bandwidth with bytes, 60% with words).
__global__ void histogram_shared_kernel(const unsigned char* __restrict__ bytes, unsigned* bins, int n) {
  __shared__ unsigned block_bins[kBins];
  block_bins[threadIdx.x] = 0;
  __syncthreads();  // every bin zeroed before anyone counts into it
  const int stride = gridDim.x * blockDim.x, first = blockIdx.x * blockDim.x + threadIdx.x;
  const int words = n / kWordBytes;  // the harness's buffers start 256-byte aligned
  const unsigned* as_words = reinterpret_cast<const unsigned*>(bytes);
  for (int w = first; w < words; w += stride) count_word(block_bins, 1, as_words[w]);
  for (int i = words * kWordBytes + first; i < n; i += stride) atomicAdd(&block_bins[bytes[i]], 1u);
  __syncthreads();  // every byte of the block counted before the bins are read
  const unsigned count = block_bins[threadIdx.x];
  if (count > 0) atomicAdd(&bins[threadIdx.x], count);
}

void histogram_shared(const unsigned char* bytes, unsigned* bins, int n) {
  gpulab::check(cudaMemset(bins, 0, kBins * sizeof(unsigned)), "zeroing the bins");
  const int wanted = gpulab::blocks_for(gpulab::blocks_for(n, kWordBytes), kThreads);
  const int blocks = resident_blocks(reinterpret_cast<const void*>(histogram_shared_kernel), kThreads, wanted);
  histogram_shared_kernel<<<blocks, kThreads>>>(bytes, bins, n);
  gpulab::check(cudaGetLastError(), "launching histogram_shared_kernel");
}
// --8<-- [end:shared]

// --8<-- [start:fast]
constexpr int kWarpSize = 32;
constexpr int kVectorBytes = 16;  // one uint4 load

// Counts the 16 bytes of one uint4: four words, one 16-byte load instead of four 4-byte ones.
__device__ void count_vector(unsigned* bins, int stride, uint4 vector) {
  count_word(bins, stride, vector.x);
  count_word(bins, stride, vector.y);
  count_word(bins, stride, vector.z);
  count_word(bins, stride, vector.w);
}

// Per-lane bins: 32 copies of the 256 counters, bin b of lane l at lane_bins[b][l] (32 KiB).
// Shared memory is 32 banks of 4-byte words, word w in bank w % 32, so all of lane l's counters lie
// in bank l: the 32 atomics of a warp hit 32 different banks, one pass whatever the bytes. With
// one set of bins, lanes whose bytes share a bank wait for each other: 3-4 passes a warp on uniform
// bytes, 32 when all bytes are equal. The copies are summed once at the end.
__global__ void histogram_fast_kernel(const unsigned char* __restrict__ bytes, unsigned* bins, int n) {
  __shared__ unsigned lane_bins[kBins][kWarpSize];
  for (int i = threadIdx.x; i < kBins * kWarpSize; i += blockDim.x) lane_bins[i / kWarpSize][i % kWarpSize] = 0;
  __syncthreads();  // every counter zeroed before anyone counts into it
  // This lane's copy: its bin b is mine[b * kWarpSize].
  unsigned* mine = &lane_bins[0][threadIdx.x % kWarpSize];
  const int stride = gridDim.x * blockDim.x, first = blockIdx.x * blockDim.x + threadIdx.x;
  const int vectors = n / kVectorBytes;  // the harness's buffers start 256-byte aligned
  const uint4* as_vectors = reinterpret_cast<const uint4*>(bytes);
  // Two loads issued before either is counted: 32 bytes per thread on their way from memory at
  // once, so fewer threads keep the memory busy while the others count.
  int v = first;
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 a = as_vectors[v], b = as_vectors[v + stride];
    count_vector(mine, kWarpSize, a);
    count_vector(mine, kWarpSize, b);
  }
  if (v < vectors) count_vector(mine, kWarpSize, as_vectors[v]);  // the last one, without a pair
  for (int i = vectors * kVectorBytes + first; i < n; i += stride) atomicAdd(&mine[bytes[i] * kWarpSize], 1u);
  __syncthreads();  // every lane's bins complete before they are summed
  // Thread b sums the 32 copies of bin b starting at copy b % 32: a warp's 32 threads read 32 banks.
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
    unsigned count = 0;
    for (int l = 0; l < kWarpSize; ++l) count += lane_bins[b][(b + l) % kWarpSize];
    if (count > 0) atomicAdd(&bins[b], count);
  }
}

void histogram_fast(const unsigned char* bytes, unsigned* bins, int n) {
  gpulab::check(cudaMemset(bins, 0, kBins * sizeof(unsigned)), "zeroing the bins");
  const int wanted = gpulab::blocks_for(gpulab::blocks_for(n, kVectorBytes), kThreads);
  const int blocks = resident_blocks(reinterpret_cast<const void*>(histogram_fast_kernel), kThreads, wanted);
  histogram_fast_kernel<<<blocks, kThreads>>>(bytes, bins, n);
  gpulab::check(cudaGetLastError(), "launching histogram_fast_kernel");
}
// --8<-- [end:fast]
