// 10-streams: the student's functions, and the backend pieces the driver needs, as the driver calls
// them on either backend. Unlike most labs the data starts and ends in host memory: every function
// copies `in` to the device, computes out = a * in + b + key there and copies the result back to `out`.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

// The contract: host `in` and `out` hold n floats (pageable memory for the serial task, page-locked
// for the others); the device buffers `d_in` and `d_out` hold n floats each. When the function
// returns, `out` holds a * in + b + key, and so do d_in (the input) and d_out (the result): the
// grader checks all three. `key` is drawn for each launch's data and put where only a kernel can
// read it, so a result computed on the host, however it was copied, lacks it.
class StreamFunction {
 public:
  virtual ~StreamFunction() = default;
  // Puts the next launch's key in place (outside the timing): CUDA, the device memory behind a
  // texture object the function receives; OpenCL, the last argument of the lab's
  // scale_shift_kernel, which the grader sets and host code never sees.
  virtual void set_key(float key) = 0;
  virtual void call(const float* in, float* out, Buffer& d_in, Buffer& d_out, int n, float a, float b) = 0;
};
std::unique_ptr<StreamFunction> bind_stream(Device& device, const std::string& function);

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
