// Backend dispatch. Compiled once per combination of backends (see common/CMakeLists.txt), so a
// program links only the backends it uses.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpulab/device.hpp"
#include "gpulab/text.hpp"
#if GPULAB_WITH_CUDA
#include "gpulab/backend/cuda.hpp"
#endif
#if GPULAB_WITH_OPENCL
#include "gpulab/backend/opencl.hpp"
#endif

namespace gpulab {

std::vector<std::string> available_backends() {
  std::vector<std::string> out;
#if GPULAB_WITH_CUDA
  out.push_back("cuda");
#endif
#if GPULAB_WITH_OPENCL
  out.push_back("opencl");
#endif
  return out;
}

std::vector<DeviceInfo> list_devices(const std::string& backend) {
#if GPULAB_WITH_CUDA
  if (backend == "cuda") return cuda::list_devices();
#endif
#if GPULAB_WITH_OPENCL
  if (backend == "opencl") return opencl::list_devices();
#endif
  throw Error(fmt::format("backend '{}' is not available in this build (available: {})", backend,
                          fmt::join(available_backends(), ", ")));
}

DeviceInfo find_device(const std::string& backend, const std::string& selector) {
  const auto devices = list_devices(backend);
  if (devices.empty()) throw Error(fmt::format("no {} device found", backend));
  const DeviceInfo* chosen = nullptr;
  if (selector.empty()) {
    chosen = &devices.front();
  } else if (std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto index = std::stoul(selector);
    if (index < devices.size()) chosen = &devices[index];
  } else {
    for (const auto& d : devices)
      if (lower_case(d.name + " " + d.platform).find(lower_case(selector)) != std::string::npos) {
        chosen = &d;
        break;
      }
  }
  if (!chosen) {
    std::string choices;
    for (const auto& d : devices) choices += fmt::format("\n  {}: {} ({})", d.index, d.name, d.platform);
    throw Error(fmt::format("DEVICE={} matches no {} device; choose an index or part of a name:{}", selector, backend,
                            choices));
  }
  return *chosen;
}

std::unique_ptr<Device> open_device(const std::string& backend, const std::string& selector) {
  const DeviceInfo info = find_device(backend, selector);
  const DeviceInfo* chosen = &info;
#if GPULAB_WITH_CUDA
  if (backend == "cuda") return cuda::open_device(*chosen);
#endif
#if GPULAB_WITH_OPENCL
  if (backend == "opencl") return opencl::open_device(*chosen);
#endif
  throw Error("unreachable backend");
}

}  // namespace gpulab
