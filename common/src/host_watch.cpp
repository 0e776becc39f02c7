#include "gpulab/host_watch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <string_view>

namespace gpulab {

std::uint64_t host_checksum(const void* data, std::size_t bytes) {
  // The standard library's byte hash (MurmurHash on libstdc++): as fast as memory on one core
  // (about 5 GB/s), which is what matters for hundreds of MiB after every launch.
  return std::hash<std::string_view>{}(std::string_view(static_cast<const char*>(data), bytes));
}

void HostWatch::take(std::vector<HostRegion> regions) {
  regions_.clear();
  sums_.clear();
  for (HostRegion& r : regions) {
    // One region per address, the first named: a lab's input sets often share one copy of the input.
    const bool seen =
        std::any_of(regions_.begin(), regions_.end(), [&](const HostRegion& o) { return o.data == r.data; });
    if (!r.data || r.bytes == 0 || seen) continue;
    sums_.push_back(host_checksum(r.data, r.bytes));
    regions_.push_back(std::move(r));
  }
}

std::vector<std::string> HostWatch::changed() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < regions_.size(); ++i)
    if (host_checksum(regions_[i].data, regions_[i].bytes) != sums_[i]) out.push_back(regions_[i].what);
  return out;
}

std::string describe_host_write(const std::vector<std::string>& changed) {
  return fmt::format(
      "{} changed in host memory during a launch: student code (a kernel through a host address, or the host "
      "code) wrote the runner's own host memory, which the lab never hands out; only the device buffers passed "
      "to the function are yours",
      fmt::join(changed, ", "));
}

std::string host_memory_access(const DeviceInfo& info, const std::string& nvml_addressing_mode) {
  if (!info.host_memory_access.empty()) return info.host_memory_access;
  if (nvml_addressing_mode == "HMM")
    return "the GPU reaches pageable host memory through HMM (NVML's addressing mode), whatever the API";
  if (nvml_addressing_mode == "ATS")
    return "the GPU reaches pageable host memory through ATS (NVML's addressing mode), whatever the API";
  return {};
}

}  // namespace gpulab
