// Linked into every OpenCL student library (`-Wl,--wrap=clCreateBuffer,--wrap=clReleaseMemObject`,
// grader/CMakeLists.txt): the student's calls reach these functions instead.
// - clCreateBuffer: a flag is not a symbol, so the allowlist cannot see CL_MEM_USE_HOST_PTR or
//   CL_MEM_ALLOC_HOST_PTR; a buffer in host memory would let host code read a kernel's results
//   without any read call. Such buffers are refused here, with why.
// - Every buffer student code creates is a sub-buffer between two guard zones, like the buffers the
//   harness gives it; clReleaseMemObject checks them, so a kernel that writes one element past the
//   end (`if (i <= n)`) is found on PoCL too, where nothing faults. A buffer created without contents
//   starts as the harness's poison pattern, so a result never stored reads "never written".
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "allocation_guards.hpp"
#include "gpulab/compare.hpp"
#include "gpulab/student/opencl.hpp"

namespace {

using namespace gpulab::allocation_guards;

constexpr std::size_t kGuardAtLeast = 4096;

struct Guarded {
  cl_mem parent;
  std::size_t size, guard;
};

Registry<cl_mem, Guarded>& registry() {
  static Registry<cl_mem, Guarded> live;
  return live;
}

cl_device_id first_device(cl_context context) {
  cl_device_id device = nullptr;
  clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof(device), &device, nullptr);
  return device;
}

// A sub-buffer's origin must be a multiple of the device's base address alignment (in bits).
std::size_t guard_bytes(cl_context context) {
  cl_uint align_bits = 0;
  if (clGetDeviceInfo(first_device(context), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, nullptr) !=
      CL_SUCCESS)
    align_bits = 8;
  const std::size_t align = std::max<std::size_t>(align_bits / 8, 1);
  return (kGuardAtLeast + align - 1) / align * align;
}

// Writes both guard zones of `parent`, and between them `contents` or else the poison pattern, on a
// queue of our own; false when the device cannot (the allocation failed on first use).
bool fill_guards(cl_mem parent, std::size_t size, std::size_t guard, const void* contents) {
  cl_context context = nullptr;
  clGetMemObjectInfo(parent, CL_MEM_CONTEXT, sizeof(context), &context, nullptr);
  cl_int status = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(context, first_device(context), 0, &status);
  if (status != CL_SUCCESS) return false;
  const std::vector<unsigned char> pattern(guard, kPattern);
  bool ok = clEnqueueWriteBuffer(queue, parent, CL_TRUE, 0, guard, pattern.data(), 0, nullptr, nullptr) == CL_SUCCESS &&
            clEnqueueWriteBuffer(queue, parent, CL_TRUE, guard + size, guard, pattern.data(), 0, nullptr, nullptr) ==
                CL_SUCCESS;
  const unsigned char poison = gpulab::kPoisonByte;
  if (ok)
    ok = (contents ? clEnqueueWriteBuffer(queue, parent, CL_TRUE, guard, size, contents, 0, nullptr, nullptr)
                   : clEnqueueFillBuffer(queue, parent, &poison, 1, guard, size, 0, nullptr, nullptr)) == CL_SUCCESS &&
         clFinish(queue) == CL_SUCCESS;
  clReleaseCommandQueue(queue);
  return ok;
}

// Both guard zones, read on a queue of our own (the student's in-order queue finished the kernels
// that wrote the buffer when their code read the results back).
std::string damage_of(const Guarded& g) {
  cl_context context = nullptr;
  clGetMemObjectInfo(g.parent, CL_MEM_CONTEXT, sizeof(context), &context, nullptr);
  cl_int status = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(context, first_device(context), 0, &status);
  if (status != CL_SUCCESS) return {};
  std::vector<unsigned char> front(g.guard), back(g.guard);
  const bool read =
      clEnqueueReadBuffer(queue, g.parent, CL_TRUE, 0, g.guard, front.data(), 0, nullptr, nullptr) == CL_SUCCESS &&
      clEnqueueReadBuffer(queue, g.parent, CL_TRUE, g.guard + g.size, g.guard, back.data(), 0, nullptr, nullptr) ==
          CL_SUCCESS;
  clReleaseCommandQueue(queue);
  return read ? gpulab::guard_damage(front.data(), back.data(), g.guard, g.size, kPattern) : std::string{};
}

}  // namespace

extern "C" {

cl_mem __real_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* status);
cl_int __real_clReleaseMemObject(cl_mem memory);

cl_mem __wrap_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* status) {
  if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR))
    throw gpulab::ApiError("OpenCL", CL_INVALID_VALUE, "CL_INVALID_VALUE",
                           "clCreateBuffer with CL_MEM_USE_HOST_PTR or CL_MEM_ALLOC_HOST_PTR: a lab's buffers live on "
                           "the device (host memory would let host code read the results); use CL_MEM_READ_WRITE, "
                           "and CL_MEM_COPY_HOST_PTR to fill a buffer from the host");
  if (size == 0 || ((flags & CL_MEM_COPY_HOST_PTR) && !host_ptr) || !on())
    return __real_clCreateBuffer(context, flags, size, host_ptr, status);  // its error, as the student would get it
  const std::size_t guard = guard_bytes(context);
  // The guards and the student's initial contents are written on the device: a huge request fails
  // as it would without guards, never as a host allocation of its size.
  cl_int err = CL_SUCCESS;
  cl_mem parent = __real_clCreateBuffer(context, CL_MEM_READ_WRITE, size + 2 * guard, nullptr, &err);
  if (err != CL_SUCCESS || !fill_guards(parent, size, guard, (flags & CL_MEM_COPY_HOST_PTR) ? host_ptr : nullptr)) {
    if (parent) __real_clReleaseMemObject(parent);
    return __real_clCreateBuffer(context, flags, size, host_ptr, status);  // its own error, as without guards
  }
  const cl_buffer_region region{guard, size};
  const cl_mem_flags access = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY);
  cl_mem buffer = clCreateSubBuffer(parent, access, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (status) *status = err;
  if (err != CL_SUCCESS) {
    __real_clReleaseMemObject(parent);
    return nullptr;
  }
  registry().add(buffer, {parent, size, guard});
  return buffer;
}

cl_int __wrap_clReleaseMemObject(cl_mem memory) {
  const auto guarded = registry().take(memory, [](cl_mem m) {
    cl_uint references = 0;
    clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof(references), &references, nullptr);
    return references <= 1;
  });
  if (!guarded) return __real_clReleaseMemObject(memory);
  const Guarded g = *guarded;
  const std::string damage = damage_of(g);
  const cl_int released = __real_clReleaseMemObject(memory);
  __real_clReleaseMemObject(g.parent);
  if (!damage.empty())
    throw gpulab::BufferOverrun("a kernel wrote outside a buffer your code created with clCreateBuffer: " + damage +
                                " changed. Check the bounds test of every work-item (if (i < n), not <=): the NDRange "
                                "is rounded up to whole work-groups, so the last group has items past the end");
  return released;
}

}  // extern "C"
