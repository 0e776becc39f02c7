// Lab 05-reduction (CUDA): out[0] = in[0] + in[1] + ... + in[n - 1], for n >= 1 floats.
// Read README.md first, then fill in the TODOs and run `make check` in this folder. The grader
// passes device pointers: `in` (n floats, aligned to 256 bytes, read-only), `scratch` ((n + 1) / 2
// floats for partial sums) and `out` (one float). Both scratch and out hold a poison pattern (NaN)
// when your function is called: write out[0], and zero it first if you add to it. Keep the three
// signatures. CUB and thrust are rejected, and so is computing the sum on the host.
#include <algorithm>

#include "gpulab/student/cuda.hpp"

__global__ void reduce_atomic_kernel(const float* in, float* out, int n) {
  // TODO (atomics): one thread per element. Thread i < n adds in[i] to out[0] with atomicAdd(out,
  // in[i]). Why is this right, and why slow? Every addition into out[0] waits for the one before.
}

void reduce_atomic(const float* in, float* scratch, float* out, int n) {
  // TODO: zero out[0] with cudaMemset (it holds the poison), then launch reduce_atomic_kernel with
  // 256 threads per block and gpulab::blocks_for(n, 256) blocks; check both calls.
  GPULAB_NOT_IMPLEMENTED("reduce_atomic: zero out[0], launch reduce_atomic_kernel (see the TODOs above)");
}

constexpr int kTreeThreads = 256;
constexpr int kTreeElements = 2 * kTreeThreads;  // each thread adds two elements as it loads them

__global__ void reduce_tree_kernel(const float* in, float* partials, int n) {
  // TODO 1 (first addition while loading): block b owns elements [b * kTreeElements, (b + 1) *
  //   kTreeElements). Thread t loads the element i = b * kTreeElements + t and the one 256 after it
  //   (0 for an index >= n) and stores their sum in a __shared__ float partial[kTreeThreads].
  // TODO 2 (tree in shared memory): for stride = 128, 64, ..., 1: threads t < stride add
  //   partial[t + stride] to partial[t]; __syncthreads() after every step (and after TODO 1), outside
  //   the `if`, so every thread of the block reaches it. Why does t + stride beat 2 * stride * t?
  //   (README: divergence and bank conflicts.)
  // TODO 3: thread 0 writes partial[0] to partials[blockIdx.x].
}

void reduce_tree(const float* in, float* scratch, float* out, int n) {
  // TODO 4 (a pass per level): launch reduce_tree_kernel on the n elements with
  //   gpulab::blocks_for(n, kTreeElements) blocks of kTreeThreads: one partial sum per block, in
  //   scratch. Then sum those partials the same way, and again, until one block is enough: that
  //   launch writes out[0] (out as its `partials`). Give each level's partials a part of scratch
  //   after the ones it reads (scratch + blocks...), so no block overwrites what another still reads.
  GPULAB_NOT_IMPLEMENTED("reduce_tree: one reduce_tree_kernel launch per level (TODO 1-4)");
}

__global__ void reduce_fast_kernel(const float* in, float* out, int n) {
  // TODO (bonus, one launch at the memory's speed):
  // - a grid of a few blocks per multiprocessor walks over the input: thread `first` adds the
  //   float4 vectors first, first + stride, ... (stride = all the grid's threads; reinterpret_cast
  //   `in` to const float4*), then the last n % 4 elements the same way;
  // - the 32 lanes of a warp add their sums with __shfl_down_sync (offsets 16, 8, 4, 2, 1);
  // - lane 0 of each warp puts the warp's sum in shared memory; after __syncthreads(), warp 0 adds
  //   those, and its lane 0 adds the block's sum to out[0] with one atomicAdd.
}

void reduce_fast(const float* in, float* scratch, float* out, int n) {
  // TODO (bonus): zero out[0] (cudaMemset), then one launch of reduce_fast_kernel with 256 threads
  // per block and min(blocks the vectors need, 8 x the multiprocessors) blocks
  // (cudaDeviceGetAttribute with cudaDevAttrMultiProcessorCount).
  GPULAB_NOT_IMPLEMENTED("reduce_fast: vector loads, warp shuffles, one launch (bonus)");
}
