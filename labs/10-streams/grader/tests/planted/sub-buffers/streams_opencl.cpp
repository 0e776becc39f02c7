// Lab 10-streams on sub-buffers (OpenCL): every cl_mem offset with clCreateSubBuffer, as OpenCL
// allows. serial is right; pinned writes one element past the end of a sub-buffer that ends where
// d_out ends; stream_chunks one past the end of a sub-buffer of a buffer of its own. Under the
// grader's guards the first must pass and the other two be found as writes outside a buffer.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpulab/student/opencl.hpp"

using gpulab::check;

constexpr size_t kWorkGroup = 256;

void enqueue_scale_shift(const gpulab::OpenCLLab& lab, cl_command_queue queue, cl_mem d_in, cl_mem d_out, int count,
                         float a, float b) {
  cl_kernel kernel = lab.kernel("scale_shift_kernel");
  gpulab::set_args(kernel, d_in, d_out, 0, count, a, b);
  const size_t global = gpulab::round_up(count, kWorkGroup);
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &kWorkGroup, 0, nullptr, nullptr),
        "launching scale_shift_kernel");
}

cl_mem sub_buffer(cl_mem buffer, size_t origin, size_t bytes) {
  const cl_buffer_region region{origin, bytes};
  cl_int status = CL_SUCCESS;
  cl_mem sub = clCreateSubBuffer(buffer, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
  check(status, "creating a sub-buffer");
  return sub;
}

// Where the second half starts: the middle, rounded down to the device's base address alignment (a
// sub-buffer's origin must be a multiple of it); 0 for arrays too short to split.
size_t split_bytes(const gpulab::OpenCLLab& lab, int n) {
  cl_uint align_bits = 0;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr),
        "reading the base address alignment");
  const size_t align = std::max<size_t>(align_bits / 8, 1);
  return static_cast<size_t>(n) / 2 * sizeof(float) / align * align;
}

// in -> a buffer of our own -> d_in -> kernel -> d_out -> out, each half through sub-buffers of all three.
void stream_serial(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float), split = split_bytes(lab, n);
  cl_int status = CL_SUCCESS;
  cl_mem own = clCreateBuffer(lab.context(), CL_MEM_READ_WRITE, bytes, nullptr, &status);
  check(status, "creating a buffer of our own");
  check(clEnqueueWriteBuffer(lab.queue(), own, CL_TRUE, 0, bytes, in, 0, nullptr, nullptr), "copying the input in");
  for (const auto& [from, size] : {std::pair{size_t{0}, split}, std::pair{split, bytes - split}}) {
    if (size == 0) continue;
    cl_mem own_part = sub_buffer(own, from, size), in_part = sub_buffer(d_in, from, size);
    cl_mem out_part = sub_buffer(d_out, from, size);
    // A sub-buffer of a sub-buffer: OpenCL refuses it, and so must the grader.
    const cl_buffer_region whole{0, size};
    cl_int nested = CL_SUCCESS;
    cl_mem twice = clCreateSubBuffer(in_part, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &whole, &nested);
    if (twice || nested != CL_INVALID_MEM_OBJECT)
      throw std::runtime_error("a sub-buffer of a sub-buffer gave " + std::string(gpulab::cl_status_name(nested)));
    check(clEnqueueCopyBuffer(lab.queue(), own_part, in_part, 0, 0, size, 0, nullptr, nullptr), "copying to d_in");
    enqueue_scale_shift(lab, lab.queue(), in_part, out_part, static_cast<int>(size / sizeof(float)), a, b);
    check(clEnqueueReadBuffer(lab.queue(), out_part, CL_TRUE, 0, size, reinterpret_cast<char*>(out) + from, 0, nullptr,
                              nullptr),
          "copying the result back");
    for (cl_mem m : {own_part, in_part, out_part}) clReleaseMemObject(m);
  }
  clReleaseMemObject(own);
}

// Right, but the kernel runs one element too far on a sub-buffer that ends where d_out ends.
void stream_pinned(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  check(clEnqueueWriteBuffer(lab.queue(), d_in, CL_TRUE, 0, bytes, in, 0, nullptr, nullptr), "copying the input in");
  cl_mem in_all = sub_buffer(d_in, 0, bytes), out_all = sub_buffer(d_out, 0, bytes);
  enqueue_scale_shift(lab, lab.queue(), in_all, out_all, n + 1, a, b);  // one past the end
  check(clEnqueueReadBuffer(lab.queue(), d_out, CL_TRUE, 0, bytes, out, 0, nullptr, nullptr), "copying the result");
  clReleaseMemObject(in_all);
  clReleaseMemObject(out_all);
}

// Right, but the kernel also runs one element too far into a sub-buffer of a buffer of our own.
void stream_chunks(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  stream_serial(lab, in, out, d_in, d_out, n, a, b);
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  cl_int status = CL_SUCCESS;
  cl_mem own = clCreateBuffer(lab.context(), CL_MEM_READ_WRITE, bytes, nullptr, &status);
  check(status, "creating a buffer of our own");
  cl_mem own_all = sub_buffer(own, 0, bytes);
  enqueue_scale_shift(lab, lab.queue(), d_in, own_all, n + 1, a, b);  // one past the end of own
  check(clFinish(lab.queue()), "waiting for the kernel");
  clReleaseMemObject(own_all);
  clReleaseMemObject(own);  // the guard finds the write here
}
