// 06-scan: the student's scans and the vendor scan, as the driver calls them on either backend.
// Every scan writes the inclusive prefix sums of `n` 32-bit words of `in` to `out`; `scratch` is
// device memory of n words (at least one) the harness lends for block sums.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

using ScanLaunch = std::function<void(Buffer& in, Buffer& out, Buffer& scratch, int n)>;
ScanLaunch bind_scan(Device& device, const std::string& function);

// The vendor's scan where the backend has one (CUB's DeviceScan::InclusiveSum on CUDA), its
// scratch allocated for `n` words at most.
struct VendorScan {
  std::string name;
  ScanLaunch launch;
};
std::optional<VendorScan> vendor_scan(Device& device, int n);

}  // namespace gpulab::labs
