// Lab 10-streams (CUDA): out = a * in + b + key over an array that starts and ends in host memory.
// Read README.md first. Then fill in the TODOs and run `make check` in this folder.
#include <algorithm>

#include "gpulab/student/cuda.hpp"

// Runs on the GPU, once per thread: element i of a chunk of `count` elements. `key` is the grader's:
// one float that only a kernel can read, with tex1Dfetch<float>(key, 0).
__global__ void scale_shift_kernel(const float* in, float* out, int count, float a, float b, cudaTextureObject_t key) {
  // TODO (the kernel): compute the global index i; only if i < count, store a * in[i] + b + k into
  // out[i], where k = tex1Dfetch<float>(key, 0). The copies are this lab's work: the kernel is the
  // short part in the middle.
}

constexpr int kThreadsPerBlock = 256;

// A CUDA stream, destroyed when it goes out of scope (also when a check throws).
class Stream {
 public:
  Stream() { gpulab::check(cudaStreamCreate(&stream_), "creating a stream"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// The three functions below share this contract (keep the signatures):
// - in and out are host memory of n floats: pageable (malloc'd) for stream_serial, page-locked
//   (allocated by the grader with cudaMallocHost) for stream_pinned and stream_chunks;
// - d_in and d_out are device buffers of n floats each, already allocated;
// - key holds a number the grader draws for every launch, readable only in a kernel: pass it on to
//   scale_shift_kernel;
// - when the function returns, out holds a * in + b + key, d_in the input and d_out the result (the
//   grader checks all three: the work is done on the device).

void stream_serial(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b,
                   cudaTextureObject_t key) {
  // TODO 1 (blocking copies): copy the n floats of `in` to d_in with cudaMemcpy
  //   (cudaMemcpyHostToDevice). Count bytes in size_t: 2^29 floats would be 2^31 bytes, past an int.
  // TODO 2 (launch): run scale_shift_kernel on all n elements, from d_in into d_out (with a, b and
  //   key), with kThreadsPerBlock threads per block, and check cudaGetLastError().
  // TODO 3 (copy back): copy d_out into `out` with cudaMemcpy (cudaMemcpyDeviceToHost). It waits for
  //   the kernel, and returns when the copy is done: why may your function return right after it?
  GPULAB_NOT_IMPLEMENTED("stream_serial: copy in, launch scale_shift_kernel, copy out (TODO 1-3)");
}

void stream_pinned(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b,
                   cudaTextureObject_t key) {
  // TODO 4 (a stream and asynchronous copies): the same three steps, each on one stream of your own
  //   (Stream stream; stream.get()): cudaMemcpyAsync(..., cudaMemcpyHostToDevice, stream.get()), the
  //   kernel with <<<blocks, threads, 0, stream.get()>>>, cudaMemcpyAsync back. The calls return at
  //   once; the stream runs them in order.
  // TODO 5 (synchronisation): wait for the stream with cudaStreamSynchronize before returning: `out`
  //   is not written until the last copy has run. (What would the grader read without it?)
  GPULAB_NOT_IMPLEMENTED("stream_pinned: asynchronous copies and the kernel on one stream, then wait (TODO 4-5)");
}

constexpr int kStreams = 4;
constexpr int kChunk = 1 << 22;  // floats: 16 MiB, 32 chunks in 512 MiB; a copy takes ~0.3 ms at 50 GB/s

void stream_chunks(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b,
                   cudaTextureObject_t key) {
  // TODO 6 (chunks on several streams): create kStreams streams (Stream streams[kStreams];). Cut the
  //   array into chunks of kChunk floats (the last one shorter); for chunk k starting at element
  //   `start`, on stream k % kStreams: copy in + start to d_in + start, run the kernel on that chunk
  //   (d_in + start into d_out + start, `count` elements, a, b, key), copy d_out + start back to
  //   out + start.
  //   Within one stream the three run in order; chunks on other streams run at the same time, so
  //   one chunk's copy in overlaps an earlier chunk's copy out and a kernel.
  // TODO 7 (synchronisation): wait for every stream before returning.
  GPULAB_NOT_IMPLEMENTED("stream_chunks: chunks in, through the kernel and out on kStreams streams (TODO 6-7)");
}
