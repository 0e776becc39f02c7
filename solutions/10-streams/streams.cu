// Lab 10-streams (CUDA): out = a * in + b + key over an array that starts and ends in host memory.
#include <algorithm>

#include "gpulab/student/cuda.hpp"

// --8<-- [start:kernel]
__global__ void scale_shift_kernel(const float* in, float* out, int count, float a, float b, cudaTextureObject_t key) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float k = tex1Dfetch<float>(key, 0);  // the grader's key: one float only a kernel can read
  if (i < count) out[i] = a * in[i] + b + k;  // the last block may overhang count
}
// --8<-- [end:kernel]

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

// --8<-- [start:serial]
void stream_serial(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b,
                   cudaTextureObject_t key) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);  // 2 GiB does not fit in an int
  gpulab::check(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice), "copying the input to the device");
  scale_shift_kernel<<<gpulab::blocks_for(n, kThreadsPerBlock), kThreadsPerBlock>>>(d_in, d_out, n, a, b, key);
  gpulab::check(cudaGetLastError(), "launching scale_shift_kernel");
  // cudaMemcpy waits for the kernel (same default stream) and returns when the copy is done.
  gpulab::check(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost), "copying the result back");
}
// --8<-- [end:serial]

// --8<-- [start:pinned]
void stream_pinned(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b,
                   cudaTextureObject_t key) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  Stream stream;
  // From page-locked memory the copy engine reads the host directly (no staging through a driver
  // buffer), and cudaMemcpyAsync returns at once: the host only waits at the end.
  gpulab::check(cudaMemcpyAsync(d_in, in, bytes, cudaMemcpyHostToDevice, stream.get()),
                "copying the input to the device");
  scale_shift_kernel<<<gpulab::blocks_for(n, kThreadsPerBlock), kThreadsPerBlock, 0, stream.get()>>>(d_in, d_out, n, a,
                                                                                                     b, key);
  gpulab::check(cudaGetLastError(), "launching scale_shift_kernel");
  gpulab::check(cudaMemcpyAsync(out, d_out, bytes, cudaMemcpyDeviceToHost, stream.get()), "copying the result back");
  gpulab::check(cudaStreamSynchronize(stream.get()), "waiting for the stream");
}
// --8<-- [end:pinned]

// --8<-- [start:overlap]
constexpr int kStreams = 4;
constexpr int kChunk = 1 << 22;  // floats: 16 MiB, 32 chunks in 512 MiB; a copy takes ~0.3 ms at 50 GB/s

void stream_chunks(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b,
                   cudaTextureObject_t key) {
  Stream streams[kStreams];
  // Chunk k goes in, through the kernel and back on stream k % kStreams: in order within a stream,
  // while the other streams' chunks use the other copy engine and the SMs at the same time.
  for (int start = 0, k = 0; start < n; start += kChunk, ++k) {
    const int count = std::min(kChunk, n - start);
    const size_t bytes = static_cast<size_t>(count) * sizeof(float);
    const cudaStream_t stream = streams[k % kStreams].get();
    gpulab::check(cudaMemcpyAsync(d_in + start, in + start, bytes, cudaMemcpyHostToDevice, stream),
                  "copying a chunk of the input to the device");
    scale_shift_kernel<<<gpulab::blocks_for(count, kThreadsPerBlock), kThreadsPerBlock, 0, stream>>>(
        d_in + start, d_out + start, count, a, b, key);
    gpulab::check(cudaGetLastError(), "launching scale_shift_kernel on a chunk");
    gpulab::check(cudaMemcpyAsync(out + start, d_out + start, bytes, cudaMemcpyDeviceToHost, stream),
                  "copying a chunk of the result back");
  }
  for (const Stream& stream : streams) gpulab::check(cudaStreamSynchronize(stream.get()), "waiting for a stream");
}
// --8<-- [end:overlap]
