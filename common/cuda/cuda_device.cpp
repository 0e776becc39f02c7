// The CUDA backend: RAII device memory and events, checked calls, event timing, calibration.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "gpulab/device.hpp"
#include "gpulab/stats.hpp"

namespace gpulab::cuda_kernels {
// copy_transformed.cu
cudaError_t launch_copy_transformed(const std::uint32_t* from, std::uint32_t* to, std::size_t words,
                                    std::uint32_t selector, std::uint32_t mask);
}  // namespace gpulab::cuda_kernels

namespace gpulab::cuda {

namespace {

// Errors after which the context is lost: every later CUDA call in this process fails too.
bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown: return true;
    default: return false;
  }
}

void check(cudaError_t status, const std::string& what) {
  if (status == cudaSuccess) return;
  const std::string message = fmt::format("{}: {} ({})", what, cudaGetErrorName(status), cudaGetErrorString(status));
  if (is_sticky(status)) throw DeviceFault("CUDA", status, cudaGetErrorName(status), message);
  throw ApiError("CUDA", status, cudaGetErrorName(status), message);
}

class Event {
 public:
  Event() { check(cudaEventCreate(&event_), "creating a CUDA event for timing"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record() { check(cudaEventRecord(event_, nullptr), "recording a timing event on the default stream"); }
  double ms_since(const Event& start) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.event_, event_), "reading the time between two events");
    return ms;
  }

 private:
  cudaEvent_t event_{};
};

// Device memory; a guarded buffer allocates kGuardBytes more on each side and hands out the
// pointer to the region between them.
class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::size_t bytes, bool guarded) : size_(bytes), guard_(guarded ? kGuardBytes : 0) {
    check(cudaMalloc(&base_, std::max<std::size_t>(bytes + 2 * guard_, 1)),
          fmt::format("allocating {} bytes of device memory", bytes));
    reset_guards();
  }
  ~CudaBuffer() override { cudaFree(base_); }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  std::size_t size() const override { return size_; }
  void upload(const void* host, std::size_t bytes) override {
    check(cudaMemcpy(ptr(), host, bytes, cudaMemcpyHostToDevice), "copying input to the device");
  }
  void download(void* host, std::size_t bytes) override {
    check(cudaMemcpy(host, ptr(), bytes, cudaMemcpyDeviceToHost), "copying the result back from the device");
  }
  void download_range(void* host, std::size_t offset, std::size_t bytes) override {
    check(cudaMemcpy(host, static_cast<char*>(ptr()) + offset, bytes, cudaMemcpyDeviceToHost),
          "copying part of a buffer back from the device");
  }
  void upload_range(const void* host, std::size_t offset, std::size_t bytes) override {
    check(cudaMemcpy(static_cast<char*>(ptr()) + offset, host, bytes, cudaMemcpyHostToDevice),
          "copying part of an input to the device");
  }
  void fill(std::uint8_t byte) override {
    check(cudaMemset(ptr(), byte, size_), "filling an output buffer with the poison pattern");
    check(cudaDeviceSynchronize(), "waiting for the poison fill");
  }
  bool guarded() const override { return guard_ > 0; }
  void read_guards(std::vector<std::uint8_t>& front, std::vector<std::uint8_t>& back) override {
    front.resize(guard_);
    back.resize(guard_);
    if (!guard_) return;
    check(cudaMemcpy(front.data(), base_, guard_, cudaMemcpyDeviceToHost), "reading the guard zone before a buffer");
    check(cudaMemcpy(back.data(), static_cast<char*>(ptr()) + size_, guard_, cudaMemcpyDeviceToHost),
          "reading the guard zone after a buffer");
  }
  void reset_guards() override {
    if (!guard_) return;
    check(cudaMemset(base_, kGuardByte, guard_), "filling the guard zone before a buffer");
    check(cudaMemset(static_cast<char*>(ptr()) + size_, kGuardByte, guard_), "filling the guard zone after a buffer");
    check(cudaDeviceSynchronize(), "waiting for the guard fill");
  }
  void* ptr() const { return static_cast<char*>(base_) + guard_; }

 private:
  void* base_ = nullptr;
  std::size_t size_;
  std::size_t guard_;
};

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(DeviceInfo info) : info_(std::move(info)) {
    check(cudaSetDevice(info_.index), fmt::format("selecting CUDA device {}", info_.index));
    check(cudaFree(nullptr), "creating the CUDA context");
  }

  const DeviceInfo& info() const override { return info_; }
  std::unique_ptr<Buffer> allocate(std::size_t bytes) override { return std::make_unique<CudaBuffer>(bytes, false); }
  std::unique_ptr<Buffer> allocate_guarded(std::size_t bytes) override {
    return std::make_unique<CudaBuffer>(bytes, guard_zones());
  }
  void copy(Buffer& from, Buffer& to, std::size_t bytes) override {
    check(cudaMemcpyAsync(dynamic_cast<CudaBuffer&>(to).ptr(), dynamic_cast<CudaBuffer&>(from).ptr(), bytes,
                          cudaMemcpyDeviceToDevice, nullptr),
          "calibrating: device-to-device copy");
  }
  void copy_transformed(Buffer& from, Buffer& to, const WordTransform& transform) override {
    if (from.size() % 4 != 0 || from.size() > to.size())
      throw std::invalid_argument("copy_transformed: the source must be whole words and fit the destination");
    check(
        cuda_kernels::launch_copy_transformed(static_cast<const std::uint32_t*>(dynamic_cast<CudaBuffer&>(from).ptr()),
                                              static_cast<std::uint32_t*>(dynamic_cast<CudaBuffer&>(to).ptr()),
                                              from.size() / 4, transform.selector(), transform.xor_mask),
        "loading new input contents on the device (harness kernel)");
  }
  void flush_caches() override {
    if (!flush_) {
      int l2 = 0;
      check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, info_.index), "reading the L2 cache size");
      flush_ = std::make_unique<CudaBuffer>(std::max<std::size_t>(2 * static_cast<std::size_t>(l2), 8u << 20), false);
    }
    // A different value each time, so no cache can keep the old lines as already written.
    check(cudaMemset(flush_->ptr(), ++flush_value_, flush_->size()), "flushing the cache");
    check(cudaDeviceSynchronize(), "waiting for the cache flush");
  }

  void begin_profiled_region() override {
    check(cudaProfilerStart(), "starting the profiled region (cudaProfilerStart)");
  }
  void end_profiled_region() override { check(cudaProfilerStop(), "ending the profiled region (cudaProfilerStop)"); }

  void synchronize() override {
    check(cudaGetLastError(), "launching the kernel");
    check(cudaDeviceSynchronize(), "running the kernel (reported at the next synchronisation)");
  }

  LaunchTiming time(const std::function<void()>& launch) override {
    synchronize();
    Event start, stop;
    const auto t0 = std::chrono::steady_clock::now();
    start.record();
    launch();
    stop.record();
    synchronize();  // device-wide: also waits for work the student put on other streams
    const auto t1 = std::chrono::steady_clock::now();
    return {stop.ms_since(start), std::chrono::duration<double, std::milli>(t1 - t0).count()};
  }

  double copy_bandwidth(std::size_t bytes, int repeats) override {
    CudaBuffer from(bytes, false), to(bytes, false);
    from.fill(0x5a);
    std::vector<double> ms;
    for (int i = 0; i < repeats + 2; ++i) {
      Event start, stop;
      start.record();
      check(cudaMemcpy(to.ptr(), from.ptr(), bytes, cudaMemcpyDeviceToDevice), "calibrating: device-to-device copy");
      stop.record();
      synchronize();
      if (i >= 2) ms.push_back(stop.ms_since(start));  // the first copies warm up clocks and TLBs
    }
    return 2.0 * static_cast<double>(bytes) / (summarize(ms).median * 1e-3) / 1e9;
  }

  bool is_fatal(const ApiError& error) const override {
    return error.api() == "CUDA" && is_sticky(static_cast<cudaError_t>(error.code()));
  }

  std::string hint(const ApiError& error) const override {
    if (error.api() != "CUDA") return {};
    switch (static_cast<cudaError_t>(error.code())) {
      case cudaErrorIllegalAddress:
        return "a thread read or wrote outside its buffers. Check: the bounds test of every thread (the last block "
               "often has threads past the end of the data); the index formula (row * width + column: which "
               "dimension is contiguous, and its stride); the sizes you allocated (n * sizeof(float), not n); and "
               "that every pointer given to a kernel is device memory (cudaMalloc or the harness's), not a host array";
      case cudaErrorMisalignedAddress:
        return "a load or store was not aligned to the size of its type: check pointer casts and vector loads";
      case cudaErrorLaunchFailure:
        return "the kernel crashed: often an out-of-bounds access (bounds test, index formula, allocated sizes), a "
               "host pointer passed to a kernel, or a null device pointer";
      case cudaErrorInvalidConfiguration:
        return "the launch configuration is impossible: at most 1024 threads per block, no zero-sized grid or block, "
               "and shared memory within the device's limit";
      case cudaErrorInvalidValue:
        return "a call got an invalid argument: check sizes (in bytes), pointers and copy directions";
      case cudaErrorMemoryAllocation:
        return "the device is out of memory: check the sizes you allocate (in bytes, not elements) and free what you "
               "allocate";
      case cudaErrorInvalidDevicePointer:
        return "a pointer is not device memory: was it allocated with cudaMalloc, and is it the device copy?";
      case cudaErrorAssert: return "a device-side assert failed";
      default: return {};
    }
  }

  void prepare_lab(const Manifest&, const std::filesystem::path&) override {}  // compiled ahead of time

  std::optional<double> peak_gflops() const override {
    int major = 0, minor = 0, sms = 0, khz = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, info_.index) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, info_.index) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, info_.index) != cudaSuccess ||
        cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, info_.index) != cudaSuccess)
      return std::nullopt;
    return nvidia_peak_gflops(major, minor, sms, khz / 1000.0);
  }

 private:
  DeviceInfo info_;
  std::unique_ptr<CudaBuffer> flush_;
  unsigned char flush_value_ = 0;
};

// How kernels on device `index` reach pageable host memory through a plain pointer (no cudaMalloc,
// no registration): HMM (the driver mirrors the host's page tables) or ATS (the GPU uses them, e.g.
// Grace Hopper). Empty where they cannot.
std::string pageable_memory_access(int index) {
  int pageable = 0, host_tables = 0;
  if (cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, index) != cudaSuccess || !pageable) {
    cudaGetLastError();
    return {};
  }
  cudaDeviceGetAttribute(&host_tables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, index);
  return host_tables ? "CUDA pageable memory access through the host's page tables (ATS)"
                     : "CUDA pageable memory access (HMM)";
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: an empty list, not an error
    return {};
  }
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.backend = "cuda";
    d.index = i;
    d.name = p.name;
    d.platform = fmt::format("CUDA runtime {}.{}, driver {}.{}", runtime / 1000, runtime % 1000 / 10, driver / 1000,
                             driver % 1000 / 10);
    d.details = fmt::format("compute capability {}.{}, {} SMs, {:.1f} GiB", p.major, p.minor, p.multiProcessorCount,
                            static_cast<double>(p.totalGlobalMem) / (1 << 30));
    d.bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    d.device_class = DeviceClass::gpu;
    d.host_memory_access = pageable_memory_access(i);
    out.push_back(std::move(d));
  }
  return out;
}

std::unique_ptr<Device> open_device(const DeviceInfo& info) { return std::make_unique<CudaDevice>(info); }

void* device_pointer(Buffer& buffer) { return dynamic_cast<CudaBuffer&>(buffer).ptr(); }

}  // namespace gpulab::cuda
