// The CUDA calibration baselines of 03-bitonic, compiled by nvcc on their own: the harness's naive
// bitonic sort and CUB's radix sort.
#pragma once
#include <memory>

namespace gpulab::labs::bitonic_cuda {

// Sorts n keys in place with one launch per step of the network.
void naive_sort(unsigned* keys, int n);

// CUB's device radix sort with its scratch memory allocated once, for up to `capacity` keys. The
// result may land in the second buffer: good for timing, which is all it is used for.
class RadixSort {
 public:
  explicit RadixSort(int capacity);
  ~RadixSort();
  RadixSort(const RadixSort&) = delete;
  RadixSort& operator=(const RadixSort&) = delete;
  void sort(unsigned* keys, int n);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace gpulab::labs::bitonic_cuda
