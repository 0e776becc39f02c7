// 07-histogram: the student's histograms and the vendor histogram, as the driver calls them on
// either backend. Every histogram counts the `n` bytes of `bytes` into 256 32-bit `bins`.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

using HistogramLaunch = std::function<void(Buffer& bytes, Buffer& bins, int n)>;
HistogramLaunch bind_histogram(Device& device, const std::string& function);

// The vendor's histogram where the backend has one (CUB's HistogramEven on CUDA), for `n` bytes at
// most: the library calibration.
struct VendorHistogram {
  std::string name;
  HistogramLaunch launch;
};
std::optional<VendorHistogram> vendor_histogram(Device& device, int n);

}  // namespace gpulab::labs
