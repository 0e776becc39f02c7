// The student's OpenCL helpers (gpulab/student/opencl.hpp): set_args takes buffers and values, and a
// host pointer in its place does not compile (a kernel cannot read host memory).
#include <doctest/doctest.h>

#include "gpulab/student/opencl.hpp"

using gpulab::kIsKernelArgument;

TEST_CASE("set_args accepts buffers, samplers and values, and refuses host pointers at compile time") {
  static_assert(kIsKernelArgument<cl_mem> && kIsKernelArgument<cl_sampler>);
  static_assert(kIsKernelArgument<int> && kIsKernelArgument<float> && kIsKernelArgument<cl_uint2>);
  static_assert(!kIsKernelArgument<float*> && !kIsKernelArgument<const int*> && !kIsKernelArgument<void*>);
  static_assert(!kIsKernelArgument<const char*> && !kIsKernelArgument<cl_mem*>);
  CHECK(kIsKernelArgument<cl_mem>);
  CHECK_FALSE(kIsKernelArgument<float*>);
}
