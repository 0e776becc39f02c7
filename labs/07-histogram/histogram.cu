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
  // TODO 4 (grid-stride loop, wide loads): read the input as 32-bit words (a `const unsigned*` to
  //   `bytes`: the grader's buffers are 256-byte aligned), one load for four bytes: for w = global
  //   index; w < n / 4; w += gridDim.x * blockDim.x, take the 4 bytes of word w out by shifts,
  //   (word >> (8 * k)) & 0xFF for k = 0..3, and add 1 to the block's counter of each with atomicAdd
  //   on shared memory (only this block competes). Then the last n % 4 bytes one by one, in the same
  //   grid-stride loop from 4 * (n / 4) + global index. Byte loads cost one load instruction per
  //   atomic: a word keeps the memory busy with a quarter of them.
  // TODO 5 (merge): __syncthreads(), then each thread adds the block's count of its bin to
  //   bins[threadIdx.x] with one global atomicAdd (skip zeros): 256 global atomics per block.
}

void histogram_shared(const unsigned char* bytes, unsigned* bins, int n) {
  // TODO 6 (occupancy): zero the bins; launch histogram_shared_kernel with kThreads threads per
  //   block and as many blocks as the GPU runs at once, but no more than the words need:
  //   min(blocks_for(blocks_for(n, 4), kThreads), SM count x blocks per SM), at least 1. The SM
  //   count: cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) after
  //   cudaGetDevice; the blocks per SM: the occupancy calculator,
  //   cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram_shared_kernel, kThreads, 0).
  //   Fewer blocks mean fewer merges; too few leave SMs idle. Check every call and the launch.
  GPULAB_NOT_IMPLEMENTED("histogram_shared: per-block bins in shared memory (TODO 3-6)");
}

void histogram_fast(const unsigned char* bytes, unsigned* bins, int n) {
  // TODO (bonus, fast): write histogram_fast_kernel (256 threads per block) with three ideas, each
  //   measurable on its own (README, "fast"):
  //   - 16 bytes per load (load width): read the input as uint4 and count its four words as in
  //     TODO 4 (the last n % 16 bytes one by one);
  //   - two loads in flight (latency): load vector v and vector v + stride before counting either,
  //     v += 2 * stride, then the one left without a pair: the 32 KiB of bins below leave fewer
  //     threads per SM, so each keeps more bytes on their way from memory;
  //   - a copy of the bins per lane (bank conflicts): __shared__ unsigned lane_bins[kBins][32]
  //     (32 KiB), lane l = threadIdx.x % 32 counts byte b into lane_bins[b][l]. All of lane l's
  //     counters lie in bank l, so a warp's 32 atomics hit 32 banks: one pass whatever the bytes
  //     (one set of bins takes 3-4 passes on uniform bytes). At the end thread b sums the 32 copies
  //     of bin b starting at copy b % 32, lane_bins[b][(b + l) % 32] (a warp then reads 32 banks, not
  //     one), and adds the sum to bins[b] with one global atomicAdd.
  //   Launch as in TODO 6: blocks for n / 16 vectors, no more than the occupancy calculator allows
  //   for histogram_fast_kernel (its 32 KiB of shared memory limit the blocks per SM).
  GPULAB_NOT_IMPLEMENTED("histogram_fast: 16-byte loads, a copy of the bins per lane (bonus)");
}
