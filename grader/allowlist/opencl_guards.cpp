// Linked into every OpenCL student library (`-Wl,--wrap=clCreateBuffer,--wrap=clReleaseMemObject`, and
// the launch calls, grader/CMakeLists.txt): the student's calls reach these functions instead.
// - clEnqueueNDRangeKernel, clEnqueueTask: counted for the runner (launch_guards.hpp).
// - clCreateBuffer: a flag is not a symbol, so the allowlist cannot see CL_MEM_USE_HOST_PTR or
//   CL_MEM_ALLOC_HOST_PTR; a buffer in host memory would let host code read a kernel's results
//   without any read call. Such buffers are refused here, with why.
// - Every buffer student code creates is a sub-buffer between two guard zones, like the buffers the
//   harness gives it; clReleaseMemObject checks them, so a kernel that writes one element past the
//   end (`if (i <= n)`) is found on PoCL too, where nothing faults. A buffer created without contents
//   starts as the harness's poison pattern, so a result never stored reads "never written".
// This file also defines three OpenCL functions outright. A definition in an object of the link
// comes before the OpenCL library's, so the student's calls reach them without a --wrap (which a lab
// that allows a call outright would not get); they call the driver's own through the object's ICD
// dispatch table, the table the OpenCL loader itself calls through.
// - clCreateSubBuffer: every buffer student code holds is already a sub-buffer, of which OpenCL
//   allows none; a sub-buffer of one is made on its guarded parent at the combined offset, so it
//   works as without guards and a write past its end still lands in a guard zone.
// - clCreateCommandQueue(WithProperties): each queue is reported to the runner, which waits for it
//   wherever it synchronises the device (the end of every timed launch included), so work left on
//   a queue of one's own is timed and checked like work on the harness's queue.
#include <CL/cl_icd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "allocation_guards.hpp"
#include "gpulab/compare.hpp"
#include "gpulab/student/opencl.hpp"
#include "launch_guards.hpp"

// Defined by the runner (common/opencl/opencl_device.cpp) and exported to this library; weak, so a
// library linked into anything else has no such hook and its queues are not reported.
extern "C" {
__attribute__((weak)) void gpulab_student_queue_created(cl_command_queue queue);
}

namespace {

using namespace gpulab::allocation_guards;

// The driver's own functions for `object` (a context, a buffer): every OpenCL object starts with a
// pointer to its ICD dispatch table. Calls through it skip the definitions in this file.
const cl_icd_dispatch& driver(const void* object) { return **static_cast<cl_icd_dispatch* const*>(object); }

// A queue for the guards' own transfers, on the driver directly: not the student's, so not reported.
cl_command_queue own_queue(cl_context context, cl_device_id device, cl_int* status) {
  return driver(context).clCreateCommandQueue(context, device, 0, status);
}

constexpr std::size_t kGuardAtLeast = 4096;

struct Guarded {
  cl_mem parent;
  std::size_t size, guard;
};

Registry<cl_mem, Guarded>& registry() {
  static Registry<cl_mem, Guarded> live;
  return live;
}

// Sub-buffers student code made with clCreateSubBuffer: OpenCL allows no sub-buffer of one of
// these, and the guard refuses one whatever the driver would do.
Registry<cl_mem, bool>& own_sub_buffers() {
  static Registry<cl_mem, bool> live;
  return live;
}

template <typename T>
T memory_info(cl_mem memory, cl_mem_info what) {
  T value{};
  clGetMemObjectInfo(memory, what, sizeof value, &value, nullptr);
  return value;
}

// The flags of a sub-buffer of a buffer with flags `parent`, asked with `asked`: the access and host
// access asked for, or the parent's where none is; none where they contradict the parent's, for
// which OpenCL answers CL_INVALID_VALUE. Flags about host memory go to the driver, which refuses them.
std::optional<cl_mem_flags> sub_buffer_flags(cl_mem_flags asked, cl_mem_flags parent) {
  constexpr cl_mem_flags kAccess = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  constexpr cl_mem_flags kHost = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
  const cl_mem_flags access = (asked & kAccess) ? asked & kAccess : parent & kAccess;
  const cl_mem_flags host = (asked & kHost) ? asked & kHost : parent & kHost;
  if (((parent & CL_MEM_READ_ONLY) && access != CL_MEM_READ_ONLY) ||
      ((parent & CL_MEM_WRITE_ONLY) && access != CL_MEM_WRITE_ONLY) ||
      ((parent & CL_MEM_HOST_NO_ACCESS) && host != CL_MEM_HOST_NO_ACCESS) ||
      ((parent & CL_MEM_HOST_READ_ONLY) && (host & CL_MEM_HOST_WRITE_ONLY)) ||
      ((parent & CL_MEM_HOST_WRITE_ONLY) && (host & CL_MEM_HOST_READ_ONLY)))
    return std::nullopt;
  return (asked & ~(kAccess | kHost)) | access | host;
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

// A queue of our own on the device of `memory`'s context; null when none can be made.
cl_command_queue own_queue_for(cl_mem memory) {
  cl_context context = nullptr;
  clGetMemObjectInfo(memory, CL_MEM_CONTEXT, sizeof(context), &context, nullptr);
  cl_int status = CL_SUCCESS;
  cl_command_queue queue = own_queue(context, first_device(context), &status);
  return status == CL_SUCCESS ? queue : nullptr;
}

// The pattern in both guard zones of `parent` (`guard` bytes, then `size` of the buffer, then `guard`).
bool write_guard_zones(cl_command_queue queue, cl_mem parent, std::size_t size, std::size_t guard) {
  const std::vector<unsigned char> pattern(guard, kPattern);
  return clEnqueueWriteBuffer(queue, parent, CL_TRUE, 0, guard, pattern.data(), 0, nullptr, nullptr) == CL_SUCCESS &&
         clEnqueueWriteBuffer(queue, parent, CL_TRUE, guard + size, guard, pattern.data(), 0, nullptr, nullptr) ==
             CL_SUCCESS;
}

// Writes both guard zones of `parent`, and between them `contents` or else the poison pattern, on a
// queue of our own; false when the device cannot (the allocation failed on first use).
bool fill_guards(cl_mem parent, std::size_t size, std::size_t guard, const void* contents) {
  cl_command_queue queue = own_queue_for(parent);
  if (!queue) return false;
  bool ok = write_guard_zones(queue, parent, size, guard);
  const unsigned char poison = gpulab::kPoisonByte;
  if (ok)
    ok = (contents ? clEnqueueWriteBuffer(queue, parent, CL_TRUE, guard, size, contents, 0, nullptr, nullptr)
                   : clEnqueueFillBuffer(queue, parent, &poison, 1, guard, size, 0, nullptr, nullptr)) == CL_SUCCESS &&
         clFinish(queue) == CL_SUCCESS;
  clReleaseCommandQueue(queue);
  return ok;
}

// Both guard zones written with the pattern again, on a queue of our own.
void restore_guards(const Guarded& g) {
  cl_command_queue queue = own_queue_for(g.parent);
  if (!queue) return;
  write_guard_zones(queue, g.parent, g.size, g.guard);
  clReleaseCommandQueue(queue);
}

// Both guard zones, read on a queue of our own (the student's in-order queue finished the kernels
// that wrote the buffer when their code read the results back).
std::string damage_of(const Guarded& g) {
  cl_command_queue queue = own_queue_for(g.parent);
  if (!queue) return {};
  std::vector<unsigned char> front(g.guard), back(g.guard);
  const bool read =
      clEnqueueReadBuffer(queue, g.parent, CL_TRUE, 0, g.guard, front.data(), 0, nullptr, nullptr) == CL_SUCCESS &&
      clEnqueueReadBuffer(queue, g.parent, CL_TRUE, g.guard + g.size, g.guard, back.data(), 0, nullptr, nullptr) ==
          CL_SUCCESS;
  clReleaseCommandQueue(queue);
  return read ? gpulab::guard_damage(front.data(), back.data(), g.guard, g.size, kPattern) : std::string{};
}

// Every live guarded buffer's guards, for the runner after a launch's full check
// (allocation_guards.hpp): a buffer kept across calls (a static cl_mem) is never released.
int live_buffers_damaged(char* out, unsigned long size) {
  return first_damage(registry(), damage_of, restore_guards,
                      "a buffer your code created with clCreateBuffer and kept: ", out, size);
}

[[maybe_unused]] const bool offered = (offer_live_check(live_buffers_damaged), true);

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
  // What the student asked of the buffer's use, by kernels and by the host; not where its memory is.
  const cl_mem_flags use = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY | CL_MEM_HOST_WRITE_ONLY |
                                    CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS);
  cl_mem buffer = driver(parent).clCreateSubBuffer(parent, use, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (status) *status = err;
  if (err != CL_SUCCESS) {
    __real_clReleaseMemObject(parent);
    return nullptr;
  }
  registry().add(buffer, {parent, size, guard});
  return buffer;
}

cl_int __real_clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* offset,
                                     const size_t* global, const size_t* local, cl_uint waits,
                                     const cl_event* wait_list, cl_event* event);
cl_int __real_clEnqueueTask(cl_command_queue queue, cl_kernel kernel, cl_uint waits, const cl_event* wait_list,
                            cl_event* event);

// Counted for the runner (launch_guards.hpp), passed on unchanged.
cl_int __wrap_clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* offset,
                                     const size_t* global, const size_t* local, cl_uint waits,
                                     const cl_event* wait_list, cl_event* event) {
  gpulab::launch_guards::count_launch();
  return __real_clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local, waits, wait_list, event);
}

cl_int __wrap_clEnqueueTask(cl_command_queue queue, cl_kernel kernel, cl_uint waits, const cl_event* wait_list,
                            cl_event* event) {
  gpulab::launch_guards::count_launch();
  return __real_clEnqueueTask(queue, kernel, waits, wait_list, event);
}

cl_int __wrap_clReleaseMemObject(cl_mem memory) {
  auto last_reference = [](cl_mem m) { return memory_info<cl_uint>(m, CL_MEM_REFERENCE_COUNT) <= 1; };
  own_sub_buffers().take(memory, last_reference);  // its handle may be reused for a guarded buffer
  const auto guarded = registry().take(memory, last_reference);
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

// A sub-buffer of a buffer student code holds (one it created, or one the harness gave it: both
// are sub-buffers between guard zones) is made on the guarded parent, at the buffer's own offset
// plus the one asked for: it works as it would without guards, and a write past its end lands in
// the buffer's guard zone (or in the rest of the buffer), where it is found as for the buffer.
cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type, const void* info,
                         cl_int* status) {
  auto fail = [status](cl_int error) -> cl_mem {
    if (status) *status = error;
    return nullptr;
  };
  // OpenCL allows no sub-buffer of a sub-buffer (CL_INVALID_MEM_OBJECT). NVIDIA's driver (580)
  // makes one anyway; the grader answers as the standard does on every device, so code that leans
  // on one driver's leniency fails here as it would on the next.
  if (!buffer || own_sub_buffers().contains(buffer)) return fail(CL_INVALID_MEM_OBJECT);
  const cl_mem parent = memory_info<cl_mem>(buffer, CL_MEM_ASSOCIATED_MEMOBJECT);
  if (!parent || type != CL_BUFFER_CREATE_TYPE_REGION || !info)
    return driver(buffer).clCreateSubBuffer(buffer, flags, type, info, status);  // as without guards
  const auto& asked = *static_cast<const cl_buffer_region*>(info);
  const auto size = memory_info<std::size_t>(buffer, CL_MEM_SIZE);
  if (asked.size == 0) return fail(CL_INVALID_BUFFER_SIZE);
  if (asked.origin > size || asked.size > size - asked.origin) return fail(CL_INVALID_VALUE);
  const auto use = sub_buffer_flags(flags, memory_info<cl_mem_flags>(buffer, CL_MEM_FLAGS));
  if (!use) return fail(CL_INVALID_VALUE);
  // The buffer's offset is a multiple of the base address alignment, so the driver finds a
  // misaligned origin (CL_MISALIGNED_SUB_BUFFER_OFFSET) as it would in the buffer itself.
  const cl_buffer_region combined{memory_info<std::size_t>(buffer, CL_MEM_OFFSET) + asked.origin, asked.size};
  cl_mem sub = driver(parent).clCreateSubBuffer(parent, *use, type, &combined, status);
  if (sub) own_sub_buffers().add(sub, true);
  return sub;
}

// Student code's own queues, reported to the runner (gpulab_student_queue_created), which waits for
// them whenever it synchronises the device.
cl_command_queue clCreateCommandQueue(cl_context context, cl_device_id device, cl_command_queue_properties properties,
                                      cl_int* status) {
  if (!context) {
    if (status) *status = CL_INVALID_CONTEXT;
    return nullptr;
  }
  cl_command_queue queue = driver(context).clCreateCommandQueue(context, device, properties, status);
  if (queue && gpulab_student_queue_created) gpulab_student_queue_created(queue);
  return queue;
}

// OpenCL 2.0 (this file is compiled for 1.2, whose headers do not declare it).
cl_command_queue clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                    const cl_properties* properties, cl_int* status) {
  using Create = cl_command_queue(CL_API_CALL*)(cl_context, cl_device_id, const cl_properties*, cl_int*);
  const auto create = context ? reinterpret_cast<Create>(driver(context).clCreateCommandQueueWithProperties) : nullptr;
  if (!create) {
    if (status) *status = context ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
    return nullptr;
  }
  cl_command_queue queue = create(context, device, properties, status);
  if (queue && gpulab_student_queue_created) gpulab_student_queue_created(queue);
  return queue;
}

}  // extern "C"
