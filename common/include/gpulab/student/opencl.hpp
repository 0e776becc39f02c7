// What a student's OpenCL host file includes: the OpenCL API, the lab handle, error checking and
// the TODO marker.
#pragma once
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "gpulab/errors.hpp"

namespace gpulab {

// The device, context and in-order command queue the harness set up, and the kernels of the lab's
// .cl file, already built. Launch your kernels on queue(); the harness times and synchronises it
// (and, in a lab that allows queues of your own, those too: it waits for every queue you create).
class OpenCLLab {
 public:
  virtual ~OpenCLLab() = default;
  virtual cl_context context() const = 0;
  virtual cl_command_queue queue() const = 0;
  virtual cl_device_id device() const = 0;
  // The kernel of that name from the lab's .cl file. The harness owns it: do not release it.
  virtual cl_kernel kernel(const char* name) const = 0;
};

// The symbolic name of an OpenCL status code, e.g. "CL_INVALID_WORK_GROUP_SIZE".
inline const char* cl_status_name(cl_int status) {
  switch (status) {
#define GPULAB_CL_STATUS(name) \
  case name: return #name;
    GPULAB_CL_STATUS(CL_SUCCESS)
    GPULAB_CL_STATUS(CL_DEVICE_NOT_FOUND)
    GPULAB_CL_STATUS(CL_DEVICE_NOT_AVAILABLE)
    GPULAB_CL_STATUS(CL_COMPILER_NOT_AVAILABLE)
    GPULAB_CL_STATUS(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    GPULAB_CL_STATUS(CL_OUT_OF_RESOURCES)
    GPULAB_CL_STATUS(CL_OUT_OF_HOST_MEMORY)
    GPULAB_CL_STATUS(CL_PROFILING_INFO_NOT_AVAILABLE)
    GPULAB_CL_STATUS(CL_MEM_COPY_OVERLAP)
    GPULAB_CL_STATUS(CL_IMAGE_FORMAT_MISMATCH)
    GPULAB_CL_STATUS(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    GPULAB_CL_STATUS(CL_BUILD_PROGRAM_FAILURE)
    GPULAB_CL_STATUS(CL_MAP_FAILURE)
    GPULAB_CL_STATUS(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    GPULAB_CL_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    GPULAB_CL_STATUS(CL_COMPILE_PROGRAM_FAILURE)
    GPULAB_CL_STATUS(CL_LINKER_NOT_AVAILABLE)
    GPULAB_CL_STATUS(CL_LINK_PROGRAM_FAILURE)
    GPULAB_CL_STATUS(CL_INVALID_VALUE)
    GPULAB_CL_STATUS(CL_INVALID_DEVICE_TYPE)
    GPULAB_CL_STATUS(CL_INVALID_PLATFORM)
    GPULAB_CL_STATUS(CL_INVALID_DEVICE)
    GPULAB_CL_STATUS(CL_INVALID_CONTEXT)
    GPULAB_CL_STATUS(CL_INVALID_QUEUE_PROPERTIES)
    GPULAB_CL_STATUS(CL_INVALID_COMMAND_QUEUE)
    GPULAB_CL_STATUS(CL_INVALID_HOST_PTR)
    GPULAB_CL_STATUS(CL_INVALID_MEM_OBJECT)
    GPULAB_CL_STATUS(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    GPULAB_CL_STATUS(CL_INVALID_IMAGE_SIZE)
    GPULAB_CL_STATUS(CL_INVALID_SAMPLER)
    GPULAB_CL_STATUS(CL_INVALID_BINARY)
    GPULAB_CL_STATUS(CL_INVALID_BUILD_OPTIONS)
    GPULAB_CL_STATUS(CL_INVALID_PROGRAM)
    GPULAB_CL_STATUS(CL_INVALID_PROGRAM_EXECUTABLE)
    GPULAB_CL_STATUS(CL_INVALID_KERNEL_NAME)
    GPULAB_CL_STATUS(CL_INVALID_KERNEL_DEFINITION)
    GPULAB_CL_STATUS(CL_INVALID_KERNEL)
    GPULAB_CL_STATUS(CL_INVALID_ARG_INDEX)
    GPULAB_CL_STATUS(CL_INVALID_ARG_VALUE)
    GPULAB_CL_STATUS(CL_INVALID_ARG_SIZE)
    GPULAB_CL_STATUS(CL_INVALID_KERNEL_ARGS)
    GPULAB_CL_STATUS(CL_INVALID_WORK_DIMENSION)
    GPULAB_CL_STATUS(CL_INVALID_WORK_GROUP_SIZE)
    GPULAB_CL_STATUS(CL_INVALID_WORK_ITEM_SIZE)
    GPULAB_CL_STATUS(CL_INVALID_GLOBAL_OFFSET)
    GPULAB_CL_STATUS(CL_INVALID_EVENT_WAIT_LIST)
    GPULAB_CL_STATUS(CL_INVALID_EVENT)
    GPULAB_CL_STATUS(CL_INVALID_OPERATION)
    GPULAB_CL_STATUS(CL_INVALID_GL_OBJECT)
    GPULAB_CL_STATUS(CL_INVALID_BUFFER_SIZE)
    GPULAB_CL_STATUS(CL_INVALID_MIP_LEVEL)
    GPULAB_CL_STATUS(CL_INVALID_GLOBAL_WORK_SIZE)
    GPULAB_CL_STATUS(CL_INVALID_PROPERTY)
#undef GPULAB_CL_STATUS
    default: return "unknown OpenCL status";
  }
}

// Checks the status of an OpenCL call; on failure throws with `what` (say what you were doing),
// for example: check(clSetKernelArg(k, 0, sizeof(cl_mem), &in), "setting argument 0 (in)").
inline void check(cl_int status, const std::string& what) {
  if (status == CL_SUCCESS) return;
  throw ApiError("OpenCL", status, cl_status_name(status),
                 what + ": " + cl_status_name(status) + " (" + std::to_string(status) + ")");
}

// Sets every argument of `kernel` in order, checking each: set_args(k, in, out, rows, cols) is
// clSetKernelArg(k, 0, sizeof in, &in), clSetKernelArg(k, 1, sizeof out, &out), ... For a __local
// buffer, call clSetKernelArg(k, index, bytes, nullptr) yourself.
// A kernel cannot read host memory, so a host pointer (float*, const int*...) as an argument does not
// compile: pass the cl_mem buffer that holds the data.
template <typename Arg>
inline constexpr bool kIsKernelArgument =
    !std::is_pointer_v<Arg> || std::is_same_v<Arg, cl_mem> || std::is_same_v<Arg, cl_sampler>;

template <typename... Args>
void set_args(cl_kernel kernel, const Args&... args) {
  static_assert((kIsKernelArgument<Args> && ...),
                "set_args: an argument is a host pointer (e.g. float*); a kernel cannot read host memory: pass the "
                "cl_mem buffer that holds the data (clCreateBuffer, or the buffer the harness gave you)");
  cl_uint index = 0;
  auto set = [&](const auto& arg) {
    check(clSetKernelArg(kernel, index, sizeof arg, &arg), "setting kernel argument " + std::to_string(index));
    ++index;
  };
  (set(args), ...);
}

// Rounds `n` up to a multiple of `multiple`: an NDRange's global size must be a multiple of the
// work-group size in OpenCL 1.2, so kernels get a bounds test for the extra work-items.
constexpr size_t round_up(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

}  // namespace gpulab
