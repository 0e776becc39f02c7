// The OpenCL CPU device (PoCL) that unit tests run made-up cases on through the runner's execute().
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::testing {

inline std::optional<DeviceInfo> opencl_cpu_device() {
  for (const DeviceInfo& d : list_devices("opencl"))
    if (d.device_class == DeviceClass::cpu) return d;
  return std::nullopt;
}

// That device opened, or null where there is none (the test then says it skipped).
inline std::unique_ptr<Device> open_opencl_cpu_device() {
  const auto info = opencl_cpu_device();
  return info ? open_device("opencl", std::to_string(info->index)) : nullptr;
}

}  // namespace gpulab::testing
