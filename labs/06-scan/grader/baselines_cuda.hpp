// The CUDA calibration baseline of 06-scan, compiled by nvcc on its own: CUB's inclusive scan.
#pragma once
#include <memory>

namespace gpulab::labs::scan_cuda {

// CUB's DeviceScan::InclusiveSum with its scratch memory allocated once, for up to `capacity` words.
class CubScan {
 public:
  explicit CubScan(int capacity);
  ~CubScan();
  CubScan(const CubScan&) = delete;
  CubScan& operator=(const CubScan&) = delete;
  void scan(const unsigned* in, unsigned* out, int n);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace gpulab::labs::scan_cuda
