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

// Enough blocks to fill every SM (8 blocks of 256 threads each), and no more than the bytes need:
// each block then merges its bins into the global ones only once, after many bytes.
int resident_blocks(int wanted) {
  int device = 0, sms = 0;
  gpulab::check(cudaGetDevice(&device), "asking for the current device");
  gpulab::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "asking for the SM count");
  return std::max(1, std::min(wanted, sms * 8));
}

// Privatisation: a block counts its share of the bytes (grid-stride) into its own bins in shared
// memory, where atomics are fast and only the block's threads compete, then adds each of its
// bins to the global one: 256 global atomics per block instead of one per byte.
__global__ void histogram_shared_kernel(const unsigned char* __restrict__ bytes, unsigned* bins, int n) {
  __shared__ unsigned block_bins[kBins];
  block_bins[threadIdx.x] = 0;
  __syncthreads();  // every bin zeroed before anyone counts into it
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&block_bins[bytes[i]], 1u);
  __syncthreads();  // every byte of the block counted before the bins are read
  const unsigned count = block_bins[threadIdx.x];
  if (count > 0) atomicAdd(&bins[threadIdx.x], count);
}

void histogram_shared(const unsigned char* bytes, unsigned* bins, int n) {
  gpulab::check(cudaMemset(bins, 0, kBins * sizeof(unsigned)), "zeroing the bins");
  const int blocks = resident_blocks(gpulab::blocks_for(n, kThreads));
  histogram_shared_kernel<<<blocks, kThreads>>>(bytes, bins, n);
  gpulab::check(cudaGetLastError(), "launching histogram_shared_kernel");
}
// --8<-- [end:shared]

// --8<-- [start:fast]
constexpr int kWarpSize = 32;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kVectorBytes = 16;  // one uint4 load

// Counts one byte into `warp_bins`, merged with the bytes before it while they are equal: `run`
// bytes of value `run_byte` are pending. A run of equal bytes (one repeated byte, text's double
// letters) then costs one atomic instead of one per byte.
__device__ void count_byte(unsigned* warp_bins, unsigned byte, unsigned& run_byte, unsigned& run) {
  if (byte == run_byte) {
    ++run;
    return;
  }
  if (run > 0) atomicAdd(&warp_bins[run_byte], run);
  run_byte = byte;
  run = 1;
}

// 16 bytes per thread per load (uint4: one 512-byte access per warp, a quarter of the load
// instructions of 4-byte words), one sub-histogram per warp (warps no longer compete for a bin),
// equal bytes merged in registers (count_byte), and the warps' bins summed once at the end.
__global__ void histogram_fast_kernel(const unsigned char* __restrict__ bytes, unsigned* bins, int n) {
  __shared__ unsigned warp_bins[kWarps][kBins];
  for (int b = threadIdx.x; b < kWarps * kBins; b += blockDim.x) warp_bins[b / kBins][b % kBins] = 0;
  __syncthreads();
  unsigned* mine = warp_bins[threadIdx.x / kWarpSize];
  unsigned run_byte = 0, run = 0;
  const int stride = gridDim.x * blockDim.x, first = blockIdx.x * blockDim.x + threadIdx.x;
  const int vectors = n / kVectorBytes;  // the harness's buffers start 256-byte aligned
  const uint4* as_vectors = reinterpret_cast<const uint4*>(bytes);
  for (int v = first; v < vectors; v += stride) {
    const uint4 vector = as_vectors[v];
    const unsigned words[4] = {vector.x, vector.y, vector.z, vector.w};
    for (int w = 0; w < 4; ++w)
      for (int k = 0; k < 4; ++k) count_byte(mine, (words[w] >> (8 * k)) & 0xFF, run_byte, run);
  }
  for (int i = vectors * kVectorBytes + first; i < n; i += stride) count_byte(mine, bytes[i], run_byte, run);
  if (run > 0) atomicAdd(&mine[run_byte], run);
  __syncthreads();  // every warp's bins complete before they are summed
  unsigned count = 0;
  for (int w = 0; w < kWarps; ++w) count += warp_bins[w][threadIdx.x];
  if (count > 0) atomicAdd(&bins[threadIdx.x], count);
}

void histogram_fast(const unsigned char* bytes, unsigned* bins, int n) {
  gpulab::check(cudaMemset(bins, 0, kBins * sizeof(unsigned)), "zeroing the bins");
  const int blocks = resident_blocks(gpulab::blocks_for(gpulab::blocks_for(n, kVectorBytes), kThreads));
  histogram_fast_kernel<<<blocks, kThreads>>>(bytes, bins, n);
  gpulab::check(cudaGetLastError(), "launching histogram_fast_kernel");
}
// --8<-- [end:fast]
