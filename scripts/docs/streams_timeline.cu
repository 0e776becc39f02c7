// An Nsight-Systems-style timeline of lab 10-streams' pipeline, from CUDA events (Nsight Systems
// is not needed): the same out = a * in + b over page-locked host memory, once on one stream (copy
// in, kernel, copy out) and once in chunks of 2^22 floats on 4 streams, as the lab's reference
// solution does. Events recorded on each chunk's stream before and after each step give when the
// step finished; it started when both its stream had finished the step before and its engine (copy
// to the device, kernels, copy to the host: each runs its work in order) the previous step it ran.
// Prints CSV: run,row,chunk,stream,start_ms,end_ms (scripts/docs/streams_timeline.py draws it).
//
//   nvcc -O2 -o build/streams_timeline scripts/docs/streams_timeline.cu && build/streams_timeline > timeline.csv
//   (scripts/docs/streams-timeline.sh does this and draws the SVG)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "streams_timeline: %s failed: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

constexpr int kCount = 1 << 26;  // 256 MiB: 16 chunks, few enough to tell apart in the picture
constexpr int kChunk = 1 << 22;  // the lab's reference chunk: 16 MiB
constexpr int kStreams = 4;
constexpr int kThreads = 256;

__global__ void scale_shift_kernel(const float* in, float* out, int count, float a, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = a * in[i] + b;
}

// One step of one chunk: the events on its stream just before and just after it.
struct Step {
  int row, chunk, stream;
  cudaEvent_t before, after;
};

struct Pipeline {
  const float* in;
  float* out;
  float* d_in;
  float* d_out;
};

cudaEvent_t new_event(cudaStream_t stream) {
  cudaEvent_t e = nullptr;
  check(cudaEventCreate(&e), "creating an event");
  check(cudaEventRecord(e, stream), "recording an event");
  return e;
}

// Enqueues the whole array in chunks of `chunk` over `streams`, recording events around each step.
std::vector<Step> enqueue(const Pipeline& p, int chunk, const std::vector<cudaStream_t>& streams) {
  std::vector<Step> steps;
  for (int start = 0, k = 0; start < kCount; start += chunk, ++k) {
    const int count = std::min(chunk, kCount - start);
    const size_t bytes = static_cast<size_t>(count) * sizeof(float);
    const int s = k % static_cast<int>(streams.size());
    cudaStream_t stream = streams[s];
    cudaEvent_t e0 = new_event(stream);
    check(cudaMemcpyAsync(p.d_in + start, p.in + start, bytes, cudaMemcpyHostToDevice, stream), "copying in");
    cudaEvent_t e1 = new_event(stream);
    scale_shift_kernel<<<(count + kThreads - 1) / kThreads, kThreads, 0, stream>>>(p.d_in + start, p.d_out + start,
                                                                                   count, 2.0f, 1.0f);
    check(cudaGetLastError(), "launching the kernel");
    cudaEvent_t e2 = new_event(stream);
    check(cudaMemcpyAsync(p.out + start, p.d_out + start, bytes, cudaMemcpyDeviceToHost, stream), "copying out");
    cudaEvent_t e3 = new_event(stream);
    steps.push_back({0, k, s, e0, e1});
    steps.push_back({1, k, s, e1, e2});
    steps.push_back({2, k, s, e2, e3});
  }
  return steps;
}

float ms_between(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, from, to), "reading two events");
  return ms;
}

// Runs one configuration and prints its steps; the first run of each is a warm-up, not printed.
void run(const char* name, const Pipeline& p, int chunk, int stream_count) {
  std::vector<cudaStream_t> streams(stream_count);
  for (auto& s : streams) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a stream");
  for (int pass = 0; pass < 2; ++pass) {
    check(cudaDeviceSynchronize(), "waiting before the run");
    cudaEvent_t origin = new_event(streams[0]);
    std::vector<Step> steps = enqueue(p, chunk, streams);
    check(cudaDeviceSynchronize(), "waiting for the run");
    std::vector<float> engine_free(3, 0.0f);  // when each row last finished a step, in enqueue order
    for (const Step& step : steps) {
      const float end = ms_between(origin, step.after);
      const float start = std::min(end, std::max(ms_between(origin, step.before), engine_free[step.row]));
      engine_free[step.row] = end;
      if (pass == 1) std::printf("%s,%d,%d,%d,%.4f,%.4f\n", name, step.row, step.chunk, step.stream, start, end);
      check(cudaEventDestroy(step.before), "destroying an event");
      if (step.row == 2) check(cudaEventDestroy(step.after), "destroying an event");
    }
    check(cudaEventDestroy(origin), "destroying an event");
  }
  for (auto& s : streams) check(cudaStreamDestroy(s), "destroying a stream");
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "reading the device's properties");
  const size_t bytes = static_cast<size_t>(kCount) * sizeof(float);
  Pipeline p{};
  float* host_in = nullptr;
  check(cudaMallocHost(&host_in, bytes), "allocating pinned input");
  check(cudaMallocHost(&p.out, bytes), "allocating pinned output");
  for (int i = 0; i < kCount; ++i) host_in[i] = static_cast<float>(i % 1024);
  p.in = host_in;
  check(cudaMalloc(&p.d_in, bytes), "allocating the device input");
  check(cudaMalloc(&p.d_out, bytes), "allocating the device output");
  std::printf("# %s, %d MiB each way, chunks of %d MiB\n", prop.name, static_cast<int>(bytes >> 20),
              static_cast<int>((size_t{kChunk} * sizeof(float)) >> 20));
  std::printf("run,row,chunk,stream,start_ms,end_ms\n");
  run("one stream", p, kCount, 1);
  run("4 streams", p, kChunk, kStreams);
  check(cudaFree(p.d_in), "freeing");
  check(cudaFree(p.d_out), "freeing");
  check(cudaFreeHost(host_in), "freeing");
  check(cudaFreeHost(p.out), "freeing");
  return 0;
}
