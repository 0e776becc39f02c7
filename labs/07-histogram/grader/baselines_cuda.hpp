// The CUDA calibration baselines of 07-histogram, compiled by nvcc on their own: the staff kernel and
// CUB's HistogramEven.
#pragma once
#include <memory>

namespace gpulab::labs::histogram_cuda {

// The harness's per-lane-bins histogram (labs::staff_histogram): zeroes `bins`, then counts.
void staff_histogram(const unsigned char* bytes, unsigned* bins, int n);

// CUB's 256-bin device histogram of bytes, with its scratch memory allocated once, for up to
// `capacity` bytes.
class VendorHistogram {
 public:
  explicit VendorHistogram(int capacity);
  ~VendorHistogram();
  VendorHistogram(const VendorHistogram&) = delete;
  VendorHistogram& operator=(const VendorHistogram&) = delete;
  void count(const unsigned char* bytes, unsigned* bins, int n);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace gpulab::labs::histogram_cuda
