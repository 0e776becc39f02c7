// Lab 10-streams (OpenCL host code): copies, launches of scale_shift_kernel (streams.cl) and queues.
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

// A command queue of our own, released when it goes out of scope (also when a check throws).
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

// --8<-- [start:serial]
void stream_serial(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);  // 2 GiB does not fit in an int
  check(clEnqueueWriteBuffer(lab.queue(), d_in, CL_TRUE, 0, bytes, in, 0, nullptr, nullptr),
        "copying the input to the device");
  enqueue_scale_shift(lab, lab.queue(), d_in, d_out, 0, n, a, b);
  // A blocking read on the in-order queue waits for the kernel, then for the copy.
  check(clEnqueueReadBuffer(lab.queue(), d_out, CL_TRUE, 0, bytes, out, 0, nullptr, nullptr),
        "copying the result back");
}
// --8<-- [end:serial]

// --8<-- [start:pinned]
void stream_pinned(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  // Non-blocking: the calls return at once and the in-order queue runs them one after the other;
  // the host waits once, at clFinish.
  check(clEnqueueWriteBuffer(lab.queue(), d_in, CL_FALSE, 0, bytes, in, 0, nullptr, nullptr),
        "copying the input to the device");
  enqueue_scale_shift(lab, lab.queue(), d_in, d_out, 0, n, a, b);
  check(clEnqueueReadBuffer(lab.queue(), d_out, CL_FALSE, 0, bytes, out, 0, nullptr, nullptr),
        "copying the result back");
  check(clFinish(lab.queue()), "waiting for the queue");
}
// --8<-- [end:pinned]

// --8<-- [start:overlap]
constexpr int kQueues = 4;
constexpr int kChunk = 1 << 22;  // floats: 16 MiB, 32 chunks in 512 MiB; a copy takes ~0.3 ms at 50 GB/s

void stream_chunks(const gpulab::OpenCLLab& lab, const float* in, float* out, cl_mem d_in, cl_mem d_out, int n, float a,
                   float b) {
  Queue q0(lab), q1(lab), q2(lab), q3(lab);
  const Queue* queues[kQueues] = {&q0, &q1, &q2, &q3};
  // Chunk k goes in, through the kernel and back on queue k % kQueues: in order within a queue,
  // while the other queues' chunks copy the other way and compute at the same time.
  for (int start = 0, k = 0; start < n; start += kChunk, ++k) {
    const int count = std::min(kChunk, n - start);
    const size_t offset = static_cast<size_t>(start) * sizeof(float),
                 bytes = static_cast<size_t>(count) * sizeof(float);
    const cl_command_queue queue = queues[k % kQueues]->get();
    check(clEnqueueWriteBuffer(queue, d_in, CL_FALSE, offset, bytes, in + start, 0, nullptr, nullptr),
          "copying a chunk of the input to the device");
    enqueue_scale_shift(lab, queue, d_in, d_out, start, count, a, b);
    check(clEnqueueReadBuffer(queue, d_out, CL_FALSE, offset, bytes, out + start, 0, nullptr, nullptr),
          "copying a chunk of the result back");
    check(clFlush(queue), "submitting a chunk's commands");  // start them now, not at clFinish
  }
  for (const Queue* queue : queues) check(clFinish(queue->get()), "waiting for a queue");
}
// --8<-- [end:overlap]
