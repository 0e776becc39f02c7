// Linked into every OpenCL student library (`-Wl,--wrap=clCreateBuffer`, grader/CMakeLists.txt):
// the student's calls to clCreateBuffer reach this function instead. A flag is not a symbol, so the
// allowlist cannot see CL_MEM_USE_HOST_PTR or CL_MEM_ALLOC_HOST_PTR; a buffer in host memory would let
// host code read a kernel's results without any read call. Such buffers are refused here, with why.
#include "gpulab/student/opencl.hpp"

extern "C" {

cl_mem __real_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* status);

cl_mem __wrap_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* status) {
  if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR))
    throw gpulab::ApiError("OpenCL", CL_INVALID_VALUE, "CL_INVALID_VALUE",
                           "clCreateBuffer with CL_MEM_USE_HOST_PTR or CL_MEM_ALLOC_HOST_PTR: a lab's buffers live on "
                           "the device (host memory would let host code read the results); use CL_MEM_READ_WRITE, "
                           "and CL_MEM_COPY_HOST_PTR to fill a buffer from the host");
  return __real_clCreateBuffer(context, flags, size, host_ptr, status);
}

}  // extern "C"
