// 05-reduction: the student's sums and the vendor's, as the driver calls them on either backend.
// Every sum reads n floats from `in` and leaves their sum in out[0]; `scratch` holds (n + 1) / 2
// floats for partial sums (the harness poisons it and `out` before every launch).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

using ReduceLaunch = std::function<void(Buffer& in, Buffer& scratch, Buffer& out, int n)>;
ReduceLaunch bind_reduce(Device& device, const std::string& function);

// The harness's own reduction of the tree task's design (the staff kernel): 256 threads a block, two
// elements added as they are loaded, a shared-memory tree with sequential addressing, one launch per
// level, each level's sums in `scratch`. The tree's bound is a fraction of its rate (staff_fraction):
// a tree is limited by its barriers and launches, not by the memory, so its fraction of copy falls on
// a GPU whose memory is faster (62 % on the H100, 45 % on the H200), its fraction of this kernel does not.
ReduceLaunch staff_reduce(Device& device);

// The vendor's reduction where the backend has one (CUB's DeviceReduce::Sum on CUDA), for `n`
// floats at most; it needs no scratch from the caller.
struct VendorReduce {
  std::string name;
  std::function<void(Buffer& in, Buffer& out, int n)> launch;
};
std::optional<VendorReduce> vendor_reduce(Device& device, int n);

}  // namespace gpulab::labs
