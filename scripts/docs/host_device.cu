// Host-device transfers on this machine's GPU, for the lecture companion's chapter on them
// (docs/host-device.md): pageable versus pinned copies, one stream versus copies overlapped with
// kernels on several streams, unified memory with and without prefetching, and a kernel reading
// pinned host memory directly. Prints a Markdown fragment (docs/measured/host-device.md).
//
//   nvcc -O2 -o build/host_device scripts/docs/host_device.cu && build/host_device > docs/measured/host-device.md
//   (scripts/docs/host-device.sh does this)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "host_device: %s failed: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

constexpr size_t kBytes = size_t{1} << 30;  // 1 GiB: long enough that launch and setup costs vanish
constexpr size_t kCount = kBytes / sizeof(float);
constexpr int kRepeats = 5;

// The work between the copies: a per-element update, light enough that the copies dominate.
__global__ void scale_shift(float* data, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    data[i] = 2.0f * data[i] + 1.0f;
}

void launch_scale_shift(float* data, size_t n, cudaStream_t stream) {
  scale_shift<<<1056, 256, 0, stream>>>(data, n);
  check(cudaGetLastError(), "launching scale_shift");
}

// The median of kRepeats timings of `work` (milliseconds, CUDA events on the legacy stream, after
// a device-wide synchronisation so work on other streams is inside the interval).
template <typename Work>
float median_ms(Work work) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "creating an event");
  check(cudaEventCreate(&stop), "creating an event");
  work();  // warm-up: first-touch costs, lazy module loading
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<float> times;
  for (int r = 0; r < kRepeats; ++r) {
    check(cudaEventRecord(start), "recording the start event");
    work();
    check(cudaDeviceSynchronize(), "waiting for the work");
    check(cudaEventRecord(stop), "recording the stop event");
    check(cudaEventSynchronize(stop), "waiting for the stop event");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "reading the events");
    times.push_back(ms);
  }
  check(cudaEventDestroy(start), "destroying an event");
  check(cudaEventDestroy(stop), "destroying an event");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double gb_per_s(size_t bytes, float ms) { return bytes / (ms * 1e-3) / 1e9; }

void row(const char* what, const char* how, size_t bytes, float ms) {
  std::printf("| %s | %s | %.1f | %.1f |\n", what, how, ms, gb_per_s(bytes, ms));
}

void copies(float* device) {
  std::vector<float> pageable(kCount, 1.0f);
  float* pinned = nullptr;
  check(cudaMallocHost(&pinned, kBytes), "allocating pinned host memory");
  std::memset(pinned, 0, kBytes);
  row("host to device", "pageable (`malloc`), `cudaMemcpy`", kBytes,
      median_ms([&] { check(cudaMemcpy(device, pageable.data(), kBytes, cudaMemcpyHostToDevice), "copying in"); }));
  row("host to device", "pinned (`cudaMallocHost`), `cudaMemcpy`", kBytes,
      median_ms([&] { check(cudaMemcpy(device, pinned, kBytes, cudaMemcpyHostToDevice), "copying in"); }));
  row("device to host", "pageable, `cudaMemcpy`", kBytes,
      median_ms([&] { check(cudaMemcpy(pageable.data(), device, kBytes, cudaMemcpyDeviceToHost), "copying out"); }));
  row("device to host", "pinned, `cudaMemcpy`", kBytes,
      median_ms([&] { check(cudaMemcpy(pinned, device, kBytes, cudaMemcpyDeviceToHost), "copying out"); }));
  // Half the buffer onto the other half: 1 GiB of traffic, read and write counted, as the grader's copy calibration.
  row("device to device", "`cudaMemcpy`, bytes read + written", kBytes,
      median_ms([&] { check(cudaMemcpy(device + kCount / 2, device, kBytes / 2, cudaMemcpyDeviceToDevice), "copying"); }));
  check(cudaFreeHost(pinned), "freeing pinned host memory");
}

// Copy in, update, copy out: all on one stream, then in chunks spread over streams so that the
// copies in both directions and the kernels of different chunks overlap.
void pipeline(float* device) {
  float* host = nullptr;
  check(cudaMallocHost(&host, kBytes), "allocating pinned host memory");
  std::fill(host, host + kCount, 1.0f);
  const float serial = median_ms([&] {
    check(cudaMemcpyAsync(device, host, kBytes, cudaMemcpyHostToDevice, 0), "copying in");
    launch_scale_shift(device, kCount, 0);
    check(cudaMemcpyAsync(host, device, kBytes, cudaMemcpyDeviceToHost, 0), "copying out");
  });
  const float kernel = median_ms([&] { launch_scale_shift(device, kCount, 0); });
  std::printf("| one stream: copy in, kernel, copy out | 1 | %.1f | 1.00× |\n", serial);
  for (int streams : {2, 4}) {
    for (int chunks : {8, 32}) {
      std::vector<cudaStream_t> s(streams);
      for (auto& st : s) check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "creating a stream");
      const size_t chunk = kCount / chunks;
      const float ms = median_ms([&] {
        for (int c = 0; c < chunks; ++c) {
          cudaStream_t st = s[c % streams];
          float* d = device + c * chunk;
          float* h = host + c * chunk;
          check(cudaMemcpyAsync(d, h, chunk * sizeof(float), cudaMemcpyHostToDevice, st), "copying a chunk in");
          launch_scale_shift(d, chunk, st);
          check(cudaMemcpyAsync(h, d, chunk * sizeof(float), cudaMemcpyDeviceToHost, st), "copying a chunk out");
        }
      });
      std::printf("| %d streams, %d chunks | %d | %.1f | %.2f× |\n", streams, chunks, streams, ms, serial / ms);
      for (auto& st : s) check(cudaStreamDestroy(st), "destroying a stream");
    }
  }
  std::printf("| the kernel alone, data on the device | — | %.1f | |\n", kernel);
  check(cudaFreeHost(host), "freeing pinned host memory");
}

// Unified memory: the kernel touches pages the host wrote last, with and without a prefetch; and
// a kernel that reads pinned host memory over the bus (zero-copy).
void unified_and_mapped(int device_id) {
  float* managed = nullptr;
  check(cudaMallocManaged(&managed, kBytes), "allocating managed memory");
  cudaMemLocation on_device{};
  on_device.type = cudaMemLocationTypeDevice;
  on_device.id = device_id;
  const float faulting = median_ms([&] {
    std::fill(managed, managed + kCount, 1.0f);  // the pages move back to the host
    check(cudaDeviceSynchronize(), "host writes");
    launch_scale_shift(managed, kCount, 0);
  });
  const float prefetched = median_ms([&] {
    std::fill(managed, managed + kCount, 1.0f);
    check(cudaMemPrefetchAsync(managed, kBytes, on_device, 0, 0), "prefetching to the device");
    launch_scale_shift(managed, kCount, 0);
  });
  const float resident = median_ms([&] { launch_scale_shift(managed, kCount, 0); });
  check(cudaFree(managed), "freeing managed memory");
  float* mapped = nullptr;
  check(cudaHostAlloc(&mapped, kBytes, cudaHostAllocMapped), "allocating mapped pinned memory");
  std::fill(mapped, mapped + kCount, 1.0f);
  float* mapped_on_device = nullptr;
  check(cudaHostGetDevicePointer(&mapped_on_device, mapped, 0), "mapping pinned memory");
  const float zero_copy = median_ms([&] { launch_scale_shift(mapped_on_device, kCount, 0); });
  check(cudaFreeHost(mapped), "freeing mapped memory");
  // Host writes are inside the first two timings: they are the part a program pays for too.
  std::printf("| managed, pages on the host, kernel faults them over | %.1f |\n", faulting);
  std::printf("| managed, `cudaMemPrefetchAsync` before the kernel | %.1f |\n", prefetched);
  std::printf("| managed, pages already on the device | %.1f |\n", resident);
  std::printf("| pinned host memory read and written by the kernel (zero-copy) | %.1f |\n", zero_copy);
}

}  // namespace

int main() {
  int device_id = 0;
  check(cudaGetDevice(&device_id), "selecting the device");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device_id), "reading the device's properties");
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "reading the driver version");
  check(cudaRuntimeGetVersion(&runtime), "reading the runtime version");
  float* device = nullptr;
  check(cudaMalloc(&device, kBytes), "allocating device memory");

  std::printf("Measured by `scripts/docs/host-device.sh` on %s (compute capability %d.%d, %d copy engines, "
              "CUDA driver %d.%d, runtime %d.%d), 1 GiB of floats, the median of %d runs.\n\n",
              prop.name, prop.major, prop.minor, prop.asyncEngineCount, driver / 1000, driver % 1000 / 10,
              runtime / 1000, runtime % 1000 / 10, kRepeats);
  std::printf("| copy | host memory, call | ms | GB/s |\n| --- | --- | ---: | ---: |\n");
  copies(device);
  std::printf("\n| 1 GiB: copy in, `2x + 1`, copy out | streams | ms | speedup |\n| --- | ---: | ---: | ---: |\n");
  pipeline(device);
  std::printf("\n| 1 GiB, the same kernel | ms |\n| --- | ---: |\n");
  unified_and_mapped(device_id);
  check(cudaFree(device), "freeing device memory");
  return 0;
}
