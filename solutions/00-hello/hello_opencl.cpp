// Lab 00-hello (OpenCL host code): buffers, copies and the launch of hello_kernel (hello.cl).
#include "gpulab/student/opencl.hpp"

using gpulab::check;

// --8<-- [start:host]
void hello(const gpulab::OpenCLLab& lab, const char* text, const int* offsets, char* result, int n) {
  cl_int status = CL_SUCCESS;
  cl_mem d_text = clCreateBuffer(lab.context(), CL_MEM_READ_ONLY, n * sizeof(char), nullptr, &status);
  check(status, "allocating the text on the device");
  cl_mem d_offsets = clCreateBuffer(lab.context(), CL_MEM_READ_ONLY, n * sizeof(int), nullptr, &status);
  check(status, "allocating the offsets on the device");
  cl_mem d_result = clCreateBuffer(lab.context(), CL_MEM_WRITE_ONLY, n * sizeof(char), nullptr, &status);
  check(status, "allocating the result on the device");

  check(clEnqueueWriteBuffer(lab.queue(), d_text, CL_TRUE, 0, n * sizeof(char), text, 0, nullptr, nullptr),
        "copying the text to the device");
  check(clEnqueueWriteBuffer(lab.queue(), d_offsets, CL_TRUE, 0, n * sizeof(int), offsets, 0, nullptr, nullptr),
        "copying the offsets to the device");

  cl_kernel kernel = lab.kernel("hello_kernel");
  gpulab::set_args(kernel, d_text, d_offsets, d_result, n);
  const size_t local = 256;
  const size_t global = gpulab::round_up(n, local);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        "launching hello_kernel");

  // A blocking read on the in-order queue waits for the kernel first.
  check(clEnqueueReadBuffer(lab.queue(), d_result, CL_TRUE, 0, n * sizeof(char), result, 0, nullptr, nullptr),
        "copying the result back");

  check(clReleaseMemObject(d_text), "releasing the text");
  check(clReleaseMemObject(d_offsets), "releasing the offsets");
  check(clReleaseMemObject(d_result), "releasing the result");
}
// --8<-- [end:host]
