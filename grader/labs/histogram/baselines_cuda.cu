#include "baselines_cuda.hpp"

#include <cub/device/device_histogram.cuh>

#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::histogram_cuda {

namespace {
// 257 levels, lower 0 and upper 256: bin b holds the bytes b <= x < b + 1, that is x == b.
constexpr int kLevels = 257, kLower = 0, kUpper = 256;
}  // namespace

struct VendorHistogram::Scratch {
  void* temp = nullptr;
  size_t temp_bytes = 0;
};

VendorHistogram::VendorHistogram(int capacity) : scratch_(std::make_unique<Scratch>()) {
  check(cub::DeviceHistogram::HistogramEven(nullptr, scratch_->temp_bytes, static_cast<const unsigned char*>(nullptr),
                                            static_cast<unsigned*>(nullptr), kLevels, kLower, kUpper, capacity),
        "sizing CUB's histogram scratch memory");
  check(cudaMalloc(&scratch_->temp, scratch_->temp_bytes), "allocating CUB's histogram scratch memory");
}

VendorHistogram::~VendorHistogram() { cudaFree(scratch_->temp); }

void VendorHistogram::count(const unsigned char* bytes, unsigned* bins, int n) {
  size_t temp_bytes = scratch_->temp_bytes;
  check(cub::DeviceHistogram::HistogramEven(scratch_->temp, temp_bytes, bytes, bins, kLevels, kLower, kUpper, n),
        "running CUB's HistogramEven");
}

}  // namespace gpulab::labs::histogram_cuda
