// Lab 10-streams (OpenCL host code): copies, launches of scale_shift_kernel (streams.cl) and queues.
// Read README.md first. Then fill in the TODOs and run `make check BACKEND=opencl` in this folder.
#include <algorithm>

#include "gpulab/student/opencl.hpp"

using gpulab::check;

constexpr size_t kWorkGroup = 256;

// Enqueues scale_shift_kernel on `queue` for elements [offset, offset + count). Its last argument,
// key, is already set: the grader sets it on lab.kernel("scale_shift_kernel") before every call.
void enqueue_scale_shift(const gpulab::OpenCLLab& lab, cl_command_queue queue, cl_mem d_in, cl_mem d_out, int offset,
                         int count, float a, float b) {
  cl_kernel kernel = lab.kernel("scale_shift_kernel");
  gpulab::set_args(kernel, d_in, d_out, offset, count, a, b);  // captured now: the kernel can be reused at once
  const size_t global = gpulab::round_up(count, kWorkGroup);
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &kWorkGroup, 0, nullptr, nullptr),
        "launching scale_shift_kernel");
}

// A command queue of your own, released when it goes out of scope (also when a check throws).
class Queue {
 public:
  explicit Queue(const gpulab::OpenCLLab& lab) {
    cl_int status = CL_SUCCESS;
    queue_ = clCreateCommandQueue(lab.context(), lab.device(), 0, &status);
    check(status, "creating a command queue");
  }
  ~Queue() { clReleaseCommandQueue(queue_); }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  cl_command_queue get() const { return queue_; }

 private:
  cl_command_queue queue_ = nullptr;
};

// The three functions below share this contract (keep the signatures):
// - in and out are host memory of n floats: pageable (malloc'd) for stream_serial, page-locked for
//   stream_pinned and stream_chunks (a CL_MEM_ALLOC_HOST_PTR buffer the grader mapped);
// - d_in and d_out are device buffers of n floats each, already created;
// - when the function returns, out holds a * in + b + key, d_in the input and d_out the result (the
//   grader checks all three: the work is done on the device; the key is only in the kernel).

void stream_serial(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  // TODO 1 (blocking copies): copy the n floats of `in` to d_in with a blocking clEnqueueWriteBuffer
  //   on lab.queue(). Count bytes in size_t: 2^29 floats would be 2^31 bytes, past an int.
  // TODO 2 (launch): enqueue_scale_shift(lab, lab.queue(), d_in, d_out, 0, n, a, b).
  // TODO 3 (copy back): read d_out into `out` with a blocking clEnqueueReadBuffer. On the in-order
  //   queue it waits for the kernel: why may your function return right after it?
  GPULAB_NOT_IMPLEMENTED("stream_serial: copy in, launch scale_shift_kernel, copy out (TODO 1-3)");
}

void stream_pinned(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  // TODO 4 (non-blocking copies): the same three steps on lab.queue(), with the copies non-blocking
  //   (CL_FALSE): the calls return at once and the in-order queue runs them one after the other.
  // TODO 5 (synchronisation): clFinish(lab.queue()) before returning: `out` is not written until the
  //   read has run. (What would the grader read without it?)
  GPULAB_NOT_IMPLEMENTED("stream_pinned: non-blocking copies and the kernel on the queue, then wait (TODO 4-5)");
}

constexpr int kQueues = 4;
constexpr int kChunk = 1 << 22;  // floats: 16 MiB, 32 chunks in 512 MiB; a copy takes ~0.3 ms at 50 GB/s

void stream_chunks(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  // TODO 6 (chunks on several queues): create kQueues queues of your own (Queue q0(lab), q1(lab),
  //   ...). Cut the array into chunks of kChunk floats (the last one shorter); for chunk k starting
  //   at element `start`, on queue k % kQueues: a non-blocking write of in + start to d_in at byte
  //   offset start * sizeof(float), enqueue_scale_shift on that chunk, a non-blocking read of d_out
  //   at that offset into out + start; then clFlush the queue so its commands start now. Within a
  //   queue the three run in order; other queues' chunks run at the same time.
  // TODO 7 (synchronisation): clFinish every queue before returning.
  GPULAB_NOT_IMPLEMENTED("stream_chunks: chunks in, through the kernel and out on kQueues queues (TODO 6-7)");
}
