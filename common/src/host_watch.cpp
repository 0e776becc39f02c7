#include "gpulab/host_watch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <string_view>

#include "gpulab/parallel.hpp"

namespace gpulab {

namespace {

std::uint64_t hash_bytes(const void* data, std::size_t bytes) {
  // The standard library's byte hash (MurmurHash on libstdc++): as fast as one core reads memory.
  return std::hash<std::string_view>{}(std::string_view(static_cast<const char*>(data), bytes));
}

// Pieces of a large region hashed on every core at once: a GPU's timing case holds hundreds of MiB
// of inputs and references, hashed after every launch.
constexpr std::size_t kPieceBytes = 4 << 20;
// A region this large that the previous take() had at the same place keeps its checksum (see take).
constexpr std::size_t kKeptFrom = 1 << 20;

}  // namespace

std::uint64_t host_checksum(const void* data, std::size_t bytes) {
  if (bytes <= 2 * kPieceBytes) return hash_bytes(data, bytes);
  const auto* from = static_cast<const char*>(data);
  std::vector<std::uint64_t> pieces((bytes + kPieceBytes - 1) / kPieceBytes);
  parallel_for(pieces.size(), [&](std::size_t i) {
    pieces[i] = hash_bytes(from + i * kPieceBytes, std::min(kPieceBytes, bytes - i * kPieceBytes));
  });
  return hash_bytes(pieces.data(), pieces.size() * sizeof(std::uint64_t));
}

void HostWatch::take(std::vector<HostRegion> regions) {
  const std::vector<HostRegion> before = std::move(regions_);
  const std::vector<std::uint64_t> before_sums = std::move(sums_);
  regions_.clear();
  sums_.clear();
  for (HostRegion& r : regions) {
    // One region per address, the first named: a lab's input sets often share one copy of the input.
    const bool seen =
        std::any_of(regions_.begin(), regions_.end(), [&](const HostRegion& o) { return o.data == r.data; });
    if (!r.data || r.bytes == 0 || seen) continue;
    // A large region watched before keeps its checksum, which changed() found intact after the last
    // launch: the harness's copies of inputs and its references stay as they are for a whole case,
    // so one hash per launch is enough. Small ones (the patched words a case redraws between
    // launches) are taken afresh.
    const auto kept = std::find_if(before.begin(), before.end(), [&](const HostRegion& o) {
      return r.bytes >= kKeptFrom && o.data == r.data && o.bytes == r.bytes;
    });
    sums_.push_back(kept != before.end() ? before_sums[kept - before.begin()] : host_checksum(r.data, r.bytes));
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
