// 10-streams: the student's functions, and the backend pieces the driver needs, as the driver calls
// them on either backend. Unlike most labs the data starts and ends in host memory: every function
// copies `in` to the device, computes out = a * in + b there and copies the result back to `out`.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

// The contract: host `in` and `out` hold n floats (pageable memory for the serial task, page-locked
// for the others); the device buffers `d_in` and `d_out` hold n floats each. When the function
// returns, `out` holds the result, and so do d_in (the input) and d_out (the result): the grader
// checks all three, so the work cannot skip the device.
using StreamLaunch =
    std::function<void(const float* in, float* out, Buffer& d_in, Buffer& d_out, int n, float a, float b)>;
StreamLaunch bind_stream(Device& device, const std::string& function);

// Page-locked ("pinned") host memory of the backend: CUDA's cudaMallocHost; in OpenCL a buffer
// created with CL_MEM_ALLOC_HOST_PTR and mapped, which the NVIDIA driver backs with pinned memory.
class PinnedMemory {
 public:
  virtual ~PinnedMemory() = default;
  virtual void* data() = 0;
};
std::unique_ptr<PinnedMemory> allocate_pinned(Device& device, std::size_t bytes);

// What one call of HostDeviceCopies::run copies.
enum class Transfer { to_device, to_host, both_ways };

// The calibration's copies of `bytes` between page-locked host memory and device buffers: host to
// device, device to host, or both at once on two streams (CUDA) or queues (OpenCL), the ideal a
// pipeline of chunks approaches. run() returns when the copies are done.
class HostDeviceCopies {
 public:
  virtual ~HostDeviceCopies() = default;
  virtual void run(Transfer transfer) = 0;
};
std::unique_ptr<HostDeviceCopies> make_host_device_copies(Device& device, void* host_from, Buffer& to_device,
                                                          Buffer& from_device, void* host_to, std::size_t bytes);

}  // namespace gpulab::labs
