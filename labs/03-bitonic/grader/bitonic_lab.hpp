// 03-bitonic: the student's sorts, the harness's naive sort and the vendor sort, as the driver
// calls them on either backend. Every sort works in place on `n` 32-bit keys.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

using SortLaunch = std::function<void(Buffer& keys, int n)>;
SortLaunch bind_sort(Device& device, const std::string& function);

// The harness's own bitonic sort, one launch per step: the naive_speedup baseline.
SortLaunch harness_naive_sort(Device& device);

// The vendor's sort where the backend has one (CUB radix sort on CUDA), for `n` keys at most.
struct VendorSort {
  std::string name;
  SortLaunch launch;
};
std::optional<VendorSort> vendor_sort(Device& device, int n);

}  // namespace gpulab::labs
