#include "baselines_cuda.hpp"

#include <cub/device/device_reduce.cuh>

#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::reduction_cuda {

namespace {

constexpr int kStaffThreads = 256;
constexpr int kStaffElements = 2 * kStaffThreads;  // each thread adds two elements as it loads them

// Block b sums elements [b * 512, b * 512 + 512) into sums[b]: a pairwise tree in shared memory with
// sequential addressing, the design the lab's tree task teaches.
__global__ void staff_tree_kernel(const float* in, float* sums, int n) {
  __shared__ float partial[kStaffThreads];
  const int t = threadIdx.x;
  const int i = blockIdx.x * kStaffElements + t;
  float sum = i < n ? in[i] : 0.0f;
  if (i + kStaffThreads < n) sum += in[i + kStaffThreads];
  partial[t] = sum;
  __syncthreads();
  for (int stride = kStaffThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = partial[0];
}

}  // namespace

void staff_tree_sum(const float* in, float* scratch, float* out, int n) {
  const float* level = in;
  float* next = scratch;
  for (int count = n;;) {
    const int blocks = blocks_for(count, kStaffElements);
    float* sums = blocks == 1 ? out : next;
    staff_tree_kernel<<<blocks, kStaffThreads>>>(level, sums, count);
    check(cudaGetLastError(), "launching the harness's tree reduction");
    if (blocks == 1) return;
    level = sums;
    next = sums + blocks;
    count = blocks;
  }
}

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
