// Lab 05-reduction (CUDA): out[0] = in[0] + in[1] + ... + in[n - 1].
#include <algorithm>

#include "gpulab/student/cuda.hpp"

// Every thread adds its element to the one sum: the additions into out[0] run one after the other.
__global__ void reduce_atomic_kernel(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

void reduce_atomic(const float* in, float* scratch, float* out, int n) {
  // The harness poisons out[0]: the atomic additions need it to start at zero.
  gpulab::check(cudaMemset(out, 0, sizeof(float)), "zeroing the sum before the atomic additions");
  const int threads = 256;
  reduce_atomic_kernel<<<gpulab::blocks_for(n, threads), threads>>>(in, out, n);
  gpulab::check(cudaGetLastError(), "launching reduce_atomic_kernel");
}

// Weaker tree (for the GPU test): no shared memory, one launch per level of a pairwise tree in
// global memory. Every level writes its sums and the next reads them back: about 2n floats read and
// n written, three times the traffic of one pass, so at most a third of the copy bandwidth.
__global__ void pairwise_kernel(const float* src, float* dst, int count, int width) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < width) dst[i] = src[i] + (i + width < count ? src[i + width] : 0.0f);  // reads only i, i + width
}

void reduce_tree(const float* in, float* scratch, float* out, int n) {
  const float* level = in;
  for (int count = n;;) {
    const int width = (count + 1) / 2;
    float* sums = width == 1 ? out : scratch;  // (n + 1) / 2 floats: the first level fits, the rest in place
    pairwise_kernel<<<gpulab::blocks_for(width, 256), 256>>>(level, sums, count, width);
    gpulab::check(cudaGetLastError(), "launching pairwise_kernel");
    if (width == 1) return;
    level = sums;
    count = width;
  }
}

constexpr int kFastThreads = 256;
constexpr int kWarps = kFastThreads / 32;
constexpr int kBlocksPerMultiprocessor = 8;  // 2048 threads: a full H100 multiprocessor

// The sum of `value` over the 32 threads of a warp, in lane 0: five shuffles, no shared memory, no
// barrier (the lanes of a warp exchange registers directly).
__device__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xFFFFFFFFu, value, offset);
  return value;
}

// A fixed grid walks over the input: each thread adds 16-byte vectors strided by the whole grid
// (coalesced, few instructions per byte, several loads in flight), then warps and the block combine
// their sums, and one atomic addition per block adds the block's sum to out[0].
__global__ void __launch_bounds__(kFastThreads) reduce_fast_kernel(const float* __restrict__ in, float* out, int n) {
  const int stride = gridDim.x * kFastThreads;
  const int first = blockIdx.x * kFastThreads + threadIdx.x;
  const float4* vectors = reinterpret_cast<const float4*>(in);  // the harness aligns `in` to 256 bytes
  const int vector_count = n / 4;
  float sum = 0.0f;
#pragma unroll 4
  for (int v = first; v < vector_count; v += stride) {
    const float4 x = vectors[v];
    sum += (x.x + x.y) + (x.z + x.w);
  }
  for (int i = 4 * vector_count + first; i < n; i += stride) sum += in[i];  // the last n % 4 elements

  __shared__ float warp_sums[kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  sum = warp_sum(sum);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();  // every warp's sum is in shared memory before warp 0 reads them
  if (warp == 0) {
    sum = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
    if (lane == 0) atomicAdd(out, sum);
  }
}

int multiprocessor_count() {
  int device = 0, count = 0;
  gpulab::check(cudaGetDevice(&device), "finding the current device");
  gpulab::check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device),
                "asking for the number of multiprocessors");
  return count;
}

void reduce_fast(const float* in, float* scratch, float* out, int n) {
  static const int multiprocessors = multiprocessor_count();
  // Enough blocks to fill the device, no more than the vectors need: each thread then loops.
  const int needed = gpulab::blocks_for(gpulab::blocks_for(n, 4), kFastThreads);
  const int blocks = std::min(needed, multiprocessors * kBlocksPerMultiprocessor);
  gpulab::check(cudaMemset(out, 0, sizeof(float)), "zeroing the sum the blocks add to");
  reduce_fast_kernel<<<blocks, kFastThreads>>>(in, out, n);
  gpulab::check(cudaGetLastError(), "launching reduce_fast_kernel");
}
