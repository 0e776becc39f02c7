// The CUDA calibration baseline of 07-histogram, compiled by nvcc on its own: CUB's HistogramEven.
#pragma once
#include <memory>

namespace gpulab::labs::histogram_cuda {

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
