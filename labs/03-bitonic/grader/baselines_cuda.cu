#include "baselines_cuda.hpp"

#include <cub/device/device_radix_sort.cuh>

#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::bitonic_cuda {

namespace {

// One compare-exchange per thread; pair t of step (k, j) is (i, i ^ j), or (i, i ^ (k - 1)) for
// the mirrored first step of a stage, with i = t with a zero bit inserted at j.
__global__ void naive_step_kernel(unsigned* keys, int n, int k, int j, bool mirror) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned i = ((t & ~(j - 1u)) << 1) | (t & (j - 1u));
  const unsigned partner = mirror ? i ^ (k - 1u) : i + j;
  if (partner >= static_cast<unsigned>(n)) return;
  const unsigned a = keys[i], b = keys[partner];
  if (a > b) {
    keys[i] = b;
    keys[partner] = a;
  }
}

}  // namespace

void naive_sort(unsigned* keys, int n) {
  int padded = 1;
  while (padded < n) padded <<= 1;
  const int pairs = padded / 2, threads = 256;
  for (int k = 2; k <= padded; k <<= 1)
    for (int j = k / 2; j > 0; j >>= 1) {
      naive_step_kernel<<<blocks_for(pairs, threads), threads>>>(keys, n, k, j, j == k / 2);
      check(cudaGetLastError(), "launching the harness's naive bitonic step");
    }
}

struct RadixSort::Scratch {
  unsigned* alternate = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
};

RadixSort::RadixSort(int capacity) : scratch_(std::make_unique<Scratch>()) {
  check(cudaMalloc(&scratch_->alternate, capacity * sizeof(unsigned)), "allocating the radix sort's second buffer");
  cub::DoubleBuffer<unsigned> buffers(scratch_->alternate, scratch_->alternate);
  check(cub::DeviceRadixSort::SortKeys(nullptr, scratch_->temp_bytes, buffers, capacity),
        "sizing the radix sort's scratch memory");
  check(cudaMalloc(&scratch_->temp, scratch_->temp_bytes), "allocating the radix sort's scratch memory");
}

RadixSort::~RadixSort() {
  cudaFree(scratch_->temp);
  cudaFree(scratch_->alternate);
}

void RadixSort::sort(unsigned* keys, int n) {
  cub::DoubleBuffer<unsigned> buffers(keys, scratch_->alternate);
  check(cub::DeviceRadixSort::SortKeys(scratch_->temp, scratch_->temp_bytes, buffers, n), "running CUB's radix sort");
}

}  // namespace gpulab::labs::bitonic_cuda
