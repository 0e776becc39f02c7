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

// The harness's own histogram of the fast task's design (the staff kernel): 32 copies of the bins per
// block in shared (local) memory, one per lane, so a warp's atomics hit 32 banks whatever the bytes;
// 16-byte loads, two in flight; as many blocks as stay resident. It zeroes the bins itself. fast's
// bound is a fraction of its rate (staff_fraction): shared-memory atomics, not the memory, limit that
// design on an H200 (73 % of copy there, 84 % on the H100), and they limit the staff kernel alike.
HistogramLaunch staff_histogram(Device& device);

// The vendor's histogram where the backend has one (CUB's HistogramEven on CUDA), for `n` bytes at
// most: the library calibration.
struct VendorHistogram {
  std::string name;
  HistogramLaunch launch;
};
std::optional<VendorHistogram> vendor_histogram(Device& device, int n);

}  // namespace gpulab::labs
