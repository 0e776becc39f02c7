// The CUDA backend, for the CLI's device list and the labs' CUDA bindings.
#pragma once
#include <memory>
#include <vector>

#include "gpulab/device.hpp"

namespace gpulab::cuda {

std::vector<DeviceInfo> list_devices();
std::unique_ptr<Device> open_device(const DeviceInfo& info);
void* device_pointer(Buffer& buffer);

template <typename T>
T* pointer(Buffer& buffer) {
  return static_cast<T*>(device_pointer(buffer));
}

}  // namespace gpulab::cuda
