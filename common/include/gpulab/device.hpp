// The device a lab runs on, behind one interface for CUDA and OpenCL: buffers, synchronisation,
// timing and the copy-bandwidth calibration. Lab drivers see only this.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/errors.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/word_transform.hpp"

namespace gpulab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Student code that does not compile; `log` is the compiler's output with file names and lines.
class CompileError : public Error {
 public:
  CompileError(const std::string& message, std::string log) : Error(message), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

struct DeviceInfo {
  std::string backend;   // "cuda" or "opencl"
  int index = 0;         // position in the backend's device list (what DEVICE=<n> selects)
  std::string name;      // "NVIDIA H100 80GB HBM3"
  std::string platform;  // OpenCL platform, or "CUDA <runtime version>"
  std::string details;   // compute capability / OpenCL version, memory, compute units
  DeviceClass device_class = DeviceClass::gpu;
  std::string bus_id;  // PCI address "0000:19:00.0" of a GPU; empty where the driver does not say
  // How kernels can reach the process's pageable host memory through a plain address (a CPU device,
  // HMM or ATS), so that no API call stands between a kernel and the harness's host data; empty
  // where the backend says they cannot (host_watch.hpp).
  std::string host_memory_access;
};

// An error after which the device cannot be used any more in this process (a CUDA kernel fault
// poisons the context): the runner reports it and a fresh process runs the remaining tasks.
class DeviceFault : public ApiError {
 public:
  using ApiError::ApiError;
};

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual std::size_t size() const = 0;
  virtual void upload(const void* host, std::size_t bytes) = 0;
  virtual void download(void* host, std::size_t bytes) = 0;
  // Copies `bytes` from `offset` on to the host: part of a buffer, for checks by sampling.
  virtual void download_range(void* host, std::size_t offset, std::size_t bytes) = 0;
  // Copies `bytes` from the host to `offset` on: a few words of an input, rewritten between launches.
  virtual void upload_range(const void* host, std::size_t offset, std::size_t bytes) = 0;
  virtual void fill(std::uint8_t byte) = 0;  // every byte of the buffer, synchronously
  // A guarded buffer has kGuardBytes of kGuardByte before and after the region student code gets,
  // so a write past either end lands there and is found; an ordinary buffer has none.
  virtual bool guarded() const { return false; }
  // Copies the front and back guard zones (kGuardBytes each) to the host.
  virtual void read_guards(std::vector<std::uint8_t>& front, std::vector<std::uint8_t>& back);
  // Refills both guard zones with kGuardByte (after damage was reported, or at allocation).
  virtual void reset_guards() {}
};

inline constexpr std::size_t kGuardBytes = 64 * 1024;  // more than a tile row of any lab's data
// 0x7F7F7F7F read as a float is 3.4e38: a kernel that reads past its input (a tile load without its
// bounds test) gets huge terms and wrong results, where 0xA5A5A5A5 (-2.9e-16) vanished in the sum.
inline constexpr std::uint8_t kGuardByte = 0x7F;

// What a launch did to the guard zones of `buffer` (named `name` for the student, elements of
// `element_bytes`): "wrote 4 elements past the end of out, indices 1024..1027"; empty when intact.
std::string describe_guard_damage(Buffer& buffer, const std::string& name, std::size_t element_bytes);

struct LaunchTiming {
  double device_ms = 0;  // between device events recorded around the launch
  double wall_ms = 0;    // host clock around the launch and a device-wide synchronisation
  // What counts: the event time, unless the host clock shows work the events did not see
  // (a kernel on another stream still running at the synchronisation).
  double counted_ms() const;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual std::unique_ptr<Buffer> allocate(std::size_t bytes) = 0;
  // A buffer with guard zones (see Buffer::guarded): what student code receives. With guard zones
  // off, a buffer of exactly `bytes`: under compute-sanitizer, whose memcheck then sees an access
  // one element past the end as out of bounds (in a guard zone it is inside the allocation).
  virtual std::unique_ptr<Buffer> allocate_guarded(std::size_t bytes) = 0;
  void set_guard_zones(bool on) { guard_zones_ = on; }
  bool guard_zones() const { return guard_zones_; }
  // Enqueues a device-to-device copy of `bytes` (the copy calibration, interleaved with timing).
  virtual void copy(Buffer& from, Buffer& to, std::size_t bytes) = 0;
  // Enqueues to = transform(from), word by word over all of `from` (a multiple of 4 bytes, no
  // larger than `to`): new input contents for a timed launch without the host touching them.
  virtual void copy_transformed(Buffer& from, Buffer& to, const WordTransform& transform) = 0;
  // Writes a scratch buffer of twice the device's last-level cache and waits for it, so the next
  // launch finds none of its data in the cache (before every timed launch, outside the timing).
  virtual void flush_caches() = 0;
  // Waits for all work on the device; throws ApiError/DeviceFault for an error of earlier work.
  virtual void synchronize() = 0;
  // Runs `launch` between two device events and synchronises the whole device.
  virtual LaunchTiming time(const std::function<void()>& launch) = 0;
  // Device-to-device copy bandwidth in GB/s, counting bytes read and written; median of `repeats`.
  virtual double copy_bandwidth(std::size_t bytes, int repeats) = 0;
  // Whether `error` (thrown by student code or the harness) left the device unusable.
  virtual bool is_fatal(const ApiError& error) const = 0;
  // Advice for a student who got `error`, e.g. "check the bounds test"; empty when there is none.
  virtual std::string hint(const ApiError& error) const = 0;
  // Estimated peak FP32 rate in GFLOP/s (2 flops per fused multiply-add on every FP32 lane at the
  // peak clock), where the device tells what is needed; empty otherwise.
  virtual std::optional<double> peak_gflops() const { return std::nullopt; }
  // Builds what the lab's student files need at run time (OpenCL: the .cl programs, found in
  // `student_dir`). Throws CompileError with the compiler's log.
  virtual void prepare_lab(const Manifest& manifest, const std::filesystem::path& student_dir) = 0;
  // The region a profiler attached to the process measures (`gpulab check --profile`: Nsight Compute
  // started with --profile-from-start off sees only the student's launches between the two). CUDA
  // only; elsewhere nothing happens.
  virtual void begin_profiled_region() {}
  virtual void end_profiled_region() {}

 private:
  bool guard_zones_ = true;
};

// FP32 lanes per multiprocessor of an NVIDIA GPU of compute capability major.minor (Volta and
// later); empty for an architecture this table does not know.
std::optional<int> nvidia_fp32_lanes(int major, int minor);
// The estimate behind Device::peak_gflops.
std::optional<double> nvidia_peak_gflops(int major, int minor, int multiprocessors, double clock_mhz);

// Devices of a backend, best first: what DEVICE= selects from.
std::vector<DeviceInfo> list_devices(const std::string& backend);
// DEVICE= accepts an index in list_devices() order or a case-insensitive part of the name.
// An empty selector takes the first. Throws gpulab::Error naming the choices when nothing matches.
// The device `selector` names (an index, or part of its name or platform), or the first one; throws
// with the list of choices when none matches.
DeviceInfo find_device(const std::string& backend, const std::string& selector);
std::unique_ptr<Device> open_device(const std::string& backend, const std::string& selector);
// Backends compiled into this program.
std::vector<std::string> available_backends();

}  // namespace gpulab
