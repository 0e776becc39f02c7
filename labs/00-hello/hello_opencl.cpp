// Lab 00-hello (OpenCL host code): buffers, copies and the launch of hello_kernel (hello.cl).
// Read README.md first. Then fill in the TODOs and run `make check BACKEND=opencl` in this folder.
#include "gpulab/student/opencl.hpp"

using gpulab::check;

// Called by the grader with host memory: text and offsets hold n values each, result has room for
// n characters. `lab` gives the context, the in-order queue and the kernels of hello.cl.
// Keep this signature.
void hello(const gpulab::OpenCLLab& lab, const char* text, const int* offsets, char* result, int n) {
  // TODO 1 (device memory): create three buffers in lab.context() with clCreateBuffer: the text
  //   (n chars, CL_MEM_READ_ONLY), the offsets (n ints, CL_MEM_READ_ONLY) and the result (n chars,
  //   CL_MEM_WRITE_ONLY). clCreateBuffer returns its status through its last argument: check it,
  //   e.g. check(status, "allocating the text on the device").
  // TODO 2 (host-to-device copies): copy text and offsets with clEnqueueWriteBuffer on lab.queue()
  //   (blocking: CL_TRUE).
  // TODO 3 (kernel arguments and NDRange): get the kernel with lab.kernel("hello_kernel"), set its
  //   four arguments with gpulab::set_args(kernel, ...) (it calls clSetKernelArg for each), and
  //   launch it with clEnqueueNDRangeKernel: 1 dimension, a local size of 256 and a global size of
  //   gpulab::round_up(n, 256). Check the status.
  // TODO 4 (device-to-host copy): read the result back with a blocking clEnqueueReadBuffer.
  // TODO 5 (cleanup): release the three buffers with clReleaseMemObject.
  GPULAB_NOT_IMPLEMENTED("hello: create buffers, copy in, launch hello_kernel, read back, release (TODO 1-5)");
}
