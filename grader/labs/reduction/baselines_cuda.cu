#include "baselines_cuda.hpp"

#include <cub/device/device_reduce.cuh>

#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::reduction_cuda {

struct DeviceSum::Scratch {
  void* temp = nullptr;
  size_t temp_bytes = 0;
};

DeviceSum::DeviceSum(int capacity) : scratch_(std::make_unique<Scratch>()) {
  check(cub::DeviceReduce::Sum(nullptr, scratch_->temp_bytes, static_cast<const float*>(nullptr),
                               static_cast<float*>(nullptr), capacity),
        "sizing CUB's reduction scratch memory");
  check(cudaMalloc(&scratch_->temp, scratch_->temp_bytes), "allocating CUB's reduction scratch memory");
}

DeviceSum::~DeviceSum() { cudaFree(scratch_->temp); }

void DeviceSum::sum(const float* in, float* out, int n) {
  check(cub::DeviceReduce::Sum(scratch_->temp, scratch_->temp_bytes, in, out, n), "running CUB's DeviceReduce::Sum");
}

}  // namespace gpulab::labs::reduction_cuda
