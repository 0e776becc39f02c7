// The CUDA calibration of 05-reduction, compiled by nvcc on its own: CUB's device-wide sum.
#pragma once
#include <memory>

namespace gpulab::labs::reduction_cuda {

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
