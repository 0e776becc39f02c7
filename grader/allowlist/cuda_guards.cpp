// Linked into a CUDA student library where the lab does not allow cudaMemcpy itself
// (`-Wl,--wrap=cudaMemcpy`, see guards in grader/CMakeLists.txt and student_build.cpp): the student's
// calls to cudaMemcpy reach this function instead. The direction of a copy is a run-time value (a
// cast such as (cudaMemcpyKind)2 hides it from any scan), so it is checked here: device-to-device
// only (said so, or cudaMemcpyDefault), between two pointers the runtime knows as device memory.
#include <cuda_runtime.h>

#include <string>

#include "gpulab/errors.hpp"

namespace {

bool on_device(const void* pointer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer is host memory; leave no sticky error behind
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice;
}

}  // namespace

extern "C" {

cudaError_t __real_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);

cudaError_t __wrap_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  // cudaMemcpyDefault lets the runtime tell the direction from the pointers: between two device
  // buffers it is a device-to-device copy, as legal as one that says so.
  const bool device_kind = kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault;
  if (!device_kind || !on_device(dst) || !on_device(src))
    throw gpulab::ApiError("CUDA", cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
                           "cudaMemcpy other than cudaMemcpyDeviceToDevice between two device buffers: in this lab "
                           "the data stays on the device (the grader gives your function device buffers)");
  return __real_cudaMemcpy(dst, src, count, kind);
}

}  // extern "C"
