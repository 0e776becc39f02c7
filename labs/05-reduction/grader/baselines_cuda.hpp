// The CUDA calibrations of 05-reduction, compiled by nvcc on their own: the staff tree and CUB's
// device-wide sum.
#pragma once
#include <memory>

namespace gpulab::labs::reduction_cuda {

// The harness's shared-memory tree (labs::staff_reduce): out[0] = in[0] + ... + in[n - 1], each
// level's block sums in `scratch` ((n + 511) / 512 + ... floats, fewer than n / 256 + 2).
void staff_tree_sum(const float* in, float* scratch, float* out, int n);

// CUB's DeviceReduce::Sum with its scratch memory allocated once, for up to `capacity` floats.
class DeviceSum {
 public:
  explicit DeviceSum(int capacity);
  ~DeviceSum();
  DeviceSum(const DeviceSum&) = delete;
  DeviceSum& operator=(const DeviceSum&) = delete;
  void sum(const float* in, float* out, int n);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace gpulab::labs::reduction_cuda
