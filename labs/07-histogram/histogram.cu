// Lab 07-histogram (CUDA): bins[b] = how many of the n bytes equal b, for the 256 values of a byte.
// Read README.md first, then fill in the TODOs and run `make check` in this folder. The grader
// passes device pointers; keep the three signatures. thrust and CUB are rejected, and so is
// copying the bytes to the host.
//
// The bins start with garbage: the grader fills them with 0xFF bytes before every launch, so each
// launch function must zero them itself before counting (cudaMemset on the default stream, before
// the kernel: the same stream runs the two in order).
#include <algorithm>

#include "gpulab/student/cuda.hpp"

constexpr int kBins = 256;  // one per value of a byte

__global__ void histogram_global_kernel(const unsigned char* bytes, unsigned* bins, int n) {
  // TODO (atomics): one thread per byte. Thread i (global index) with i < n adds 1 to
  // bins[bytes[i]] with atomicAdd. Why does `bins[bytes[i]]++` lose counts? (README: read-modify-write.)
}

void histogram_global(const unsigned char* bytes, unsigned* bins, int n) {
  // TODO 1 (the contract): zero the 256 bins with cudaMemset and check the call.
  // TODO 2: launch histogram_global_kernel with one thread per byte (256 per block,
  //   gpulab::blocks_for(n, 256) blocks) and check the launch.
  GPULAB_NOT_IMPLEMENTED("histogram_global: zero the bins, launch one thread per byte (see the TODOs above)");
}

constexpr int kThreads = kBins;  // one thread per bin: each zeroes and merges its own

__global__ void histogram_shared_kernel(const unsigned char* __restrict__ bytes, unsigned* bins, int n) {
  // TODO 3 (privatisation): a __shared__ array of kBins counters for this block; each thread
  //   zeroes the one at threadIdx.x; __syncthreads().
  // TODO 4 (grid-stride loop): for i = global index; i < n; i += gridDim.x * blockDim.x, add 1 to
  //   the block's counter of bytes[i] with atomicAdd on shared memory (only this block competes).
  // TODO 5 (merge): __syncthreads(), then each thread adds the block's count of its bin to
  //   bins[threadIdx.x] with one global atomicAdd (skip zeros): 256 global atomics per block.
}

void histogram_shared(const unsigned char* bytes, unsigned* bins, int n) {
  // TODO 6: zero the bins; launch histogram_shared_kernel with kThreads threads per block and
  //   enough blocks to fill the GPU but no more than the bytes need: min(blocks_for(n, kThreads),
  //   8 x the SM count) (cudaDeviceGetAttribute with cudaDevAttrMultiProcessorCount), at least 1.
  //   Fewer blocks mean fewer merges; too few leave SMs idle. Check the launch.
  GPULAB_NOT_IMPLEMENTED("histogram_shared: per-block bins in shared memory (TODO 3-6)");
}

void histogram_fast(const unsigned char* bytes, unsigned* bins, int n) {
  // TODO (bonus, fast): three ideas, each measurable on its own (README, "fast"):
  //   - 16 bytes per load: read the input as uint4 (the grader's buffers are aligned to 256 bytes;
  //     the last n % 16 bytes one by one);
  //   - one sub-histogram per warp in shared memory (8 x 256 counters): warps stop competing;
  //   - merge runs of equal bytes in registers before the atomic (one repeated byte costs one
  //     atomic per thread, not one per byte).
  GPULAB_NOT_IMPLEMENTED("histogram_fast: vector loads, per-warp bins, merged runs (bonus)");
}
