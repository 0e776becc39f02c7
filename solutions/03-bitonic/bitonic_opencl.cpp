// Lab 03-bitonic (OpenCL host code): launches the kernels of bitonic.cl.
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

namespace {

constexpr int kChunk = 2048;  // CHUNK in bitonic.cl

int padded_length(int n) {
  int padded = 1;
  while (padded < n) padded <<= 1;
  return padded;
}

void enqueue(const gpulab::OpenCLLab& lab, cl_kernel kernel, size_t global, size_t local, const char* what) {
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr), what);
}

void launch_step(const gpulab::OpenCLLab& lab, cl_mem keys, int n, int k, int j) {
  cl_kernel kernel = lab.kernel("bitonic_step_kernel");
  gpulab::set_args(kernel, keys, n, k, j);
  enqueue(lab, kernel, round_up(padded_length(n) / 2, 256), 256, "launching bitonic_step_kernel");
}

// Chunks sorted in local memory, then per stage the far steps by `far_steps(k, j)` (which returns
// how many steps it did) and the near steps in local memory.
template <typename FarSteps>
void sort_by_chunks(const gpulab::OpenCLLab& lab, cl_mem keys, int n, FarSteps far_steps) {
  const int padded = padded_length(n);
  const size_t threads = kChunk / 2, global = (n + kChunk - 1) / kChunk * threads;
  cl_kernel sort = lab.kernel("bitonic_chunk_sort_kernel");
  gpulab::set_args(sort, keys, n, padded);
  enqueue(lab, sort, global, threads, "launching the chunk sort");
  cl_kernel merge = lab.kernel("bitonic_chunk_merge_kernel");
  for (int k = 2 * kChunk; k <= padded; k <<= 1) {
    for (int j = k / 2; j >= kChunk;) j >>= far_steps(k, j);
    gpulab::set_args(merge, keys, n, k);
    enqueue(lab, merge, global, threads, "launching the chunk merge");
  }
}

}  // namespace

// --8<-- [start:global]
void bitonic_global(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {
  const int padded = padded_length(n);
  for (int k = 2; k <= padded; k <<= 1)
    for (int j = k / 2; j > 0; j >>= 1) launch_step(lab, keys, n, k, j);
}
// --8<-- [end:global]

// --8<-- [start:shared]
void bitonic_shared(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {
  sort_by_chunks(lab, keys, n, [&](int k, int j) {
    launch_step(lab, keys, n, k, j);
    return 1;
  });
}
// --8<-- [end:shared]

// Every kernel treats positions past n as the largest key: any length works as it is.
void bitonic_any_n(const gpulab::OpenCLLab& lab, cl_mem keys, int n) { bitonic_shared(lab, keys, n); }

// --8<-- [start:fast]
constexpr int kItems = 32, kItemBits = 5;         // ITEMS, ITEM_BITS in bitonic.cl: keys per work-item
constexpr int kFastThreads = 256;                 // FAST_THREADS
constexpr int kFastChunk = kItems * kFastThreads;  // FAST_CHUNK: 8192 keys, 32 KiB of local memory
constexpr int kFastChunkBits = 13;

// Far steps of stage k (j = k/2 .. kFastChunk), five per launch: one pass over the keys each.
void enqueue_far_steps(const gpulab::OpenCLLab& lab, cl_mem keys, int n, int k) {
  cl_kernel far = lab.kernel("bitonic_far_kernel");
  const size_t global = padded_length(n) / kItems;
  for (int top = __builtin_ctz(k) - 1, steps; top >= kFastChunkBits; top -= steps) {
    steps = std::min(kItemBits, top - kFastChunkBits + 1);
    gpulab::set_args(far, keys, n, k, top, steps);
    enqueue(lab, far, global, 256, "launching bitonic_far_kernel");
  }
}

void bitonic_fast(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {
  const size_t global = round_up(n, kFastChunk) / kItems;  // one work-group per chunk
  cl_kernel sort = lab.kernel("bitonic_chunk_sort_registers_kernel");
  gpulab::set_args(sort, keys, n);
  enqueue(lab, sort, global, kFastThreads, "launching the chunk sort");
  cl_kernel merge = lab.kernel("bitonic_chunk_merge_registers_kernel");
  for (int k = 2 * kFastChunk; k <= padded_length(n); k <<= 1) {
    enqueue_far_steps(lab, keys, n, k);
    gpulab::set_args(merge, keys, n, k);
    enqueue(lab, merge, global, kFastThreads, "launching the chunk merge");
  }
}
// --8<-- [end:fast]
