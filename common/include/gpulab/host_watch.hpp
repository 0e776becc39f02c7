// Where a device's kernels can reach the runner's pageable host memory through a plain address
// (a CPU device such as PoCL, whose kernels run in the runner process; a GPU with HMM or ATS), no API
// call stands between a kernel and the harness's host data: the allowlist and the call guards see
// nothing. The harness's data that a forged result would have to change (its copies of the inputs,
// the expected outputs) is checksummed before every call of student code and compared after it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/device.hpp"

namespace gpulab {

// A piece of the harness's host memory that student code must leave alone.
struct HostRegion {
  const void* data = nullptr;
  std::size_t bytes = 0;
  std::string what;  // "the harness's copy of input in", for the report
};

// Checksums of regions taken at one moment, compared with their contents later.
class HostWatch {
 public:
  // Checksums `regions` as they are now (regions at the same address are taken once). A region of
  // 1 MiB or more that the previous take had at the same address and size keeps its checksum
  // instead: such regions (inputs' copies, references) must not change during a case, so that one
  // hash per launch suffices; a lab whose solution then fails with a host write breaks that rule.
  void take(std::vector<HostRegion> regions);
  // The `what` of every region whose contents differ from those at take(); empty when none does.
  std::vector<std::string> changed() const;
  bool empty() const { return regions_.empty(); }

 private:
  std::vector<HostRegion> regions_;
  std::vector<std::uint64_t> sums_;
};

// A fast checksum of `bytes` at `data`, on every core for a large region (a change of any byte
// changes it, but a writer who knows the function can forge one: this detects, it does not
// authenticate).
std::uint64_t host_checksum(const void* data, std::size_t bytes);

// "case x: the expected contents of output out changed in host memory during the launch: ..." text
// for a run whose watch found `changed` regions.
std::string describe_host_write(const std::vector<std::string>& changed);

// How this device's kernels can reach the runner's pageable host memory, empty when they cannot
// (as far as the driver says): from the device itself, or from NVML's addressing mode ("HMM", "ATS")
// where the backend cannot tell (NVIDIA's OpenCL).
std::string host_memory_access(const DeviceInfo& info, const std::string& nvml_addressing_mode);

// What a device that reaches host memory cannot enforce, in one line for the report.
inline constexpr const char* kHostMemoryNote =
    "the harness checksums its copies of the inputs and its expected outputs around every launch, but cannot stop "
    "a kernel reading the runner's memory or writing what is not checksummed";

}  // namespace gpulab
