// The OpenCL backend: RAII handles, checked calls, device ordering (GPUs first), program builds
// with their logs, profiling-event timing and calibration.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include <CL/cl_ext.h>

#include "gpulab/backend/opencl.hpp"
#include "gpulab/stats.hpp"

namespace gpulab::opencl {

namespace {

// Errors that a finished command reports for a kernel that crashed: afterwards the context may be
// unusable (NVIDIA), so the runner starts a fresh process for the remaining tasks.
bool is_fault(cl_int status) {
  return status == CL_OUT_OF_RESOURCES || status == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ||
         status == CL_INVALID_COMMAND_QUEUE;
}

void check_finish(cl_int status, const std::string& what) {
  if (status == CL_SUCCESS) return;
  const std::string message = fmt::format("{}: {} ({})", what, cl_status_name(status), status);
  if (is_fault(status)) throw DeviceFault("OpenCL", status, cl_status_name(status), message);
  throw ApiError("OpenCL", status, cl_status_name(status), message);
}

// Owns one OpenCL object and releases it with the matching clRelease* function.
template <typename T, cl_int (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T object) : object_(object) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  T get() const { return object_; }
  T* out() {
    reset();
    return &object_;
  }
  void reset() {
    if (object_) Release(object_);
    object_ = nullptr;
  }

 private:
  T object_ = nullptr;
};
using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Memory = Handle<cl_mem, clReleaseMemObject>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Event = Handle<cl_event, clReleaseEvent>;

std::string device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  clGetDeviceInfo(device, what, 0, nullptr, &size);
  std::string s(size, '\0');
  clGetDeviceInfo(device, what, size, s.data(), nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  clGetPlatformInfo(platform, what, 0, nullptr, &size);
  std::string s(size, '\0');
  clGetPlatformInfo(platform, what, size, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <typename T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  clGetDeviceInfo(device, what, sizeof value, &value, nullptr);
  return value;
}

struct Found {
  DeviceInfo info;
  cl_device_id id;
};

// The device's PCI address where the driver has cl_khr_pci_bus_info (NVIDIA's does; PoCL's CPU
// device has none): which GPU of a machine a batch job ran on.
std::string pci_bus_id(cl_device_id id) {
  if (device_string(id, CL_DEVICE_EXTENSIONS).find("cl_khr_pci_bus_info") == std::string::npos) return {};
  cl_device_pci_bus_info_khr bus{};
  if (clGetDeviceInfo(id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof bus, &bus, nullptr) != CL_SUCCESS) return {};
  return fmt::format("{:04x}:{:02x}:{:02x}.{}", bus.pci_domain, bus.pci_bus, bus.pci_device, bus.pci_function);
}

// The device's OpenCL version without what a driver appends for itself (PoCL: " HSTR: " and its
// host triple), so a device fits on one line of a report.
std::string version_text(cl_device_id id) {
  const std::string version = device_string(id, CL_DEVICE_VERSION);
  return version.substr(0, version.find(" HSTR:"));
}

// How the device's kernels reach the process's pageable host memory through a plain address: a
// CPU device runs them in this process; a device with fine-grained system SVM (OpenCL 2.0) shares its
// address space. Empty otherwise (an NVIDIA GPU with HMM does not say so here: NVML does).
std::string host_memory_access(cl_device_id id, cl_device_type type) {
  if (type & CL_DEVICE_TYPE_CPU) return "OpenCL CPU device: kernels run in the runner process";
  // CL_DEVICE_SVM_CAPABILITIES and CL_DEVICE_SVM_FINE_GRAIN_SYSTEM of OpenCL 2.0 (cl.h declares them
  // only for a target of 2.0 and later; this backend targets 1.2, so an older driver fails the query).
  constexpr cl_device_info kSvmCapabilities = 0x1053;
  constexpr cl_bitfield kFineGrainSystem = 1 << 2;
  cl_bitfield svm = 0;
  if (clGetDeviceInfo(id, kSvmCapabilities, sizeof svm, &svm, nullptr) == CL_SUCCESS && (svm & kFineGrainSystem))
    return "OpenCL fine-grained system SVM: kernels share the process's address space";
  return {};
}

// Every device of every platform, GPUs first, then accelerators, then CPUs.
std::vector<Found> enumerate() {
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0) return {};
  std::vector<cl_platform_id> platforms(platform_count);
  clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  std::vector<Found> out;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> devices(count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr);
    for (cl_device_id id : devices) {
      const auto type = device_value<cl_device_type>(id, CL_DEVICE_TYPE);
      Found f{{}, id};
      f.info.backend = "opencl";
      f.info.name = device_string(id, CL_DEVICE_NAME);
      f.info.platform = platform_string(platform, CL_PLATFORM_NAME);
      f.info.device_class = (type & CL_DEVICE_TYPE_GPU) ? DeviceClass::gpu : DeviceClass::cpu;
      f.info.details = fmt::format(
          "{}, {} compute units, {:.1f} GiB", version_text(id), device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS),
          static_cast<double>(device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE)) / (1 << 30));
      f.info.bus_id = pci_bus_id(id);
      f.info.host_memory_access = host_memory_access(id, type);
      out.push_back(std::move(f));
    }
  }
  auto rank = [](const Found& f) {
    const auto type = device_value<cl_device_type>(f.id, CL_DEVICE_TYPE);
    return (type & CL_DEVICE_TYPE_GPU) ? 0 : (type & CL_DEVICE_TYPE_ACCELERATOR) ? 1 : 2;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Found& a, const Found& b) { return rank(a) < rank(b); });
  for (std::size_t i = 0; i < out.size(); ++i) out[i].info.index = static_cast<int>(i);
  return out;
}

// Fills `bytes` at `offset` with `byte`, in pattern units as wide as offset and size allow: PoCL
// copies the pattern one unit at a time, so a 1-byte pattern is many times slower than 128 bytes.
void fill_bytes(cl_command_queue queue, cl_mem memory, std::uint8_t byte, std::size_t offset, std::size_t bytes,
                const char* what) {
  std::size_t unit = 128;
  while (unit > 1 && (offset % unit != 0 || bytes % unit != 0)) unit /= 2;
  std::uint8_t pattern[128];
  std::fill(std::begin(pattern), std::end(pattern), byte);
  check(clEnqueueFillBuffer(queue, memory, pattern, unit, offset, bytes, 0, nullptr, nullptr), what);
}

// Device memory. A guarded buffer is a parent buffer with kGuardBytes (rounded up to the device's
// base-address alignment, which clCreateSubBuffer requires of the origin) on each side, and student
// code gets the sub-buffer between the guards: both guards are real, as on CUDA.
class ClBuffer final : public Buffer {
 public:
  ClBuffer(cl_context context, cl_command_queue queue, std::size_t bytes, std::size_t guard = 0)
      : queue_(queue), size_(bytes), guard_(guard) {
    cl_int status = CL_SUCCESS;
    parent_ = Memory(
        clCreateBuffer(context, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes + 2 * guard, 1), nullptr, &status));
    check(status, fmt::format("allocating {} bytes of device memory", bytes));
    if (guard_) {
      const cl_buffer_region region{guard_, std::max<std::size_t>(bytes, 1)};
      inner_ =
          Memory(clCreateSubBuffer(parent_.get(), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &status));
      check(status, fmt::format("creating the guarded region of {} bytes", bytes));
      reset_guards();
    }
  }
  std::size_t size() const override { return size_; }
  void upload(const void* host, std::size_t bytes) override {
    check_finish(clEnqueueWriteBuffer(queue_, parent_.get(), CL_TRUE, guard_, bytes, host, 0, nullptr, nullptr),
                 "copying input to the device");
  }
  void download(void* host, std::size_t bytes) override {
    check_finish(clEnqueueReadBuffer(queue_, parent_.get(), CL_TRUE, guard_, bytes, host, 0, nullptr, nullptr),
                 "copying the result back from the device");
  }
  void download_range(void* host, std::size_t offset, std::size_t bytes) override {
    check_finish(clEnqueueReadBuffer(queue_, parent_.get(), CL_TRUE, guard_ + offset, bytes, host, 0, nullptr, nullptr),
                 "copying part of a buffer back from the device");
  }
  void upload_range(const void* host, std::size_t offset, std::size_t bytes) override {
    check_finish(
        clEnqueueWriteBuffer(queue_, parent_.get(), CL_TRUE, guard_ + offset, bytes, host, 0, nullptr, nullptr),
        "copying part of an input to the device");
  }
  void fill(std::uint8_t byte) override {
    if (size_ == 0) return;
    fill_bytes(queue_, parent_.get(), byte, guard_, size_, "filling an output buffer with the poison pattern");
    check_finish(clFinish(queue_), "waiting for the poison fill");
  }
  bool guarded() const override { return guard_ > 0; }
  void read_guards(std::vector<std::uint8_t>& front, std::vector<std::uint8_t>& back) override {
    front.resize(guard_);
    back.resize(guard_);
    if (!guard_) return;
    check_finish(clEnqueueReadBuffer(queue_, parent_.get(), CL_TRUE, 0, guard_, front.data(), 0, nullptr, nullptr),
                 "reading the guard zone before a buffer");
    check_finish(
        clEnqueueReadBuffer(queue_, parent_.get(), CL_TRUE, guard_ + size_, guard_, back.data(), 0, nullptr, nullptr),
        "reading the guard zone after a buffer");
  }
  void reset_guards() override {
    if (!guard_) return;
    fill_bytes(queue_, parent_.get(), kGuardByte, 0, guard_, "filling the guard zone before a buffer");
    fill_bytes(queue_, parent_.get(), kGuardByte, guard_ + size_, guard_, "filling the guard zone after a buffer");
    check_finish(clFinish(queue_), "waiting for the guard fill");
  }
  // What kernels get: the region between the guards.
  cl_mem get() const { return guard_ ? inner_.get() : parent_.get(); }
  // The whole allocation and where the region starts in it (for harness copies).
  cl_mem whole() const { return parent_.get(); }
  std::size_t offset() const { return guard_; }

 private:
  cl_command_queue queue_;
  Memory parent_, inner_;
  std::size_t size_;
  std::size_t guard_;
};

// The command queues student code created (the guard around clCreateCommandQueue in
// grader/allowlist/opencl_guards.cpp reports each one to gpulab_student_queue_created below). Work
// on them is the student's as much as work on the harness's queue: synchronising the device, and so
// the end of every timed launch, waits for them too. Each is retained here, so a queue the student
// released with commands still pending stays valid until the harness has waited for it.
class StudentQueues {
 public:
  void add(cl_command_queue queue) {
    std::lock_guard lock(mutex_);
    if (clRetainCommandQueue(queue) == CL_SUCCESS) queues_.push_back(queue);
  }
  // Flushes every queue before waiting for any (a command may wait for an event of another queue,
  // which must have been submitted), waits for each, then lets go of the queues student code has
  // released. Throws the first error a queue reported.
  void finish() {
    std::lock_guard lock(mutex_);
    if (queues_.empty()) return;
    for (cl_command_queue q : queues_) clFlush(q);
    cl_int failed = CL_SUCCESS;
    for (cl_command_queue q : queues_)
      if (const cl_int status = clFinish(q); status != CL_SUCCESS && failed == CL_SUCCESS) failed = status;
    std::erase_if(queues_, [](cl_command_queue q) {
      cl_uint references = 0;
      clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof references, &references, nullptr);
      if (references > 1) return false;
      clReleaseCommandQueue(q);
      return true;
    });
    check_finish(failed, "running the work your code put on a command queue of its own (reported at clFinish)");
  }
  // Before the context goes: waits for and releases every queue still held.
  void release_all() {
    std::lock_guard lock(mutex_);
    for (cl_command_queue q : queues_) {
      clFinish(q);
      clReleaseCommandQueue(q);
    }
    queues_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<cl_command_queue> queues_;
};

StudentQueues& student_queues() {
  static StudentQueues queues;
  return queues;
}

double profiled_ms(cl_event start, cl_profiling_info start_point, cl_event end) {
  cl_ulong t0 = 0, t1 = 0;
  check(clGetEventProfilingInfo(start, start_point, sizeof t0, &t0, nullptr), "reading a profiling event");
  check(clGetEventProfilingInfo(end, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr), "reading a profiling event");
  return static_cast<double>(t1 - t0) * 1e-6;
}

// Device::copy_transformed: to[i] = bytes of from[i] reordered (nibble k of `selector` names the
// source byte of result byte k, as CUDA's __byte_perm), XORed with `mask`.
constexpr const char* kCopyTransformedSource = R"(
__kernel void gpulab_copy_transformed(__global const uint* from, __global uint* to, uint words, uint selector,
                                      uint mask) {
  const size_t i = get_global_id(0);
  if (i >= words) return;
  const uint w = from[i];
  uint out = 0;
  for (uint k = 0; k < 4; ++k) out |= ((w >> (8 * ((selector >> (4 * k)) & 3))) & 0xFFu) << (8 * k);
  to[i] = out ^ mask;
}
)";

class ClDevice final : public Device, public OpenCLLab {
 public:
  ClDevice(DeviceInfo info, cl_device_id id) : info_(std::move(info)), id_(id) {
    cl_int status = CL_SUCCESS;
    context_ = Context(clCreateContext(nullptr, 1, &id_, nullptr, nullptr, &status));
    check(status, fmt::format("creating an OpenCL context on {}", info_.name));
    queue_ = Queue(clCreateCommandQueue(context_.get(), id_, CL_QUEUE_PROFILING_ENABLE, &status));
    check(status, "creating an in-order command queue with profiling");
  }

  ~ClDevice() override { student_queues().release_all(); }  // before the context is released

  // Device
  const DeviceInfo& info() const override { return info_; }
  std::unique_ptr<Buffer> allocate(std::size_t bytes) override {
    return std::make_unique<ClBuffer>(context_.get(), queue_.get(), bytes);
  }
  std::unique_ptr<Buffer> allocate_guarded(std::size_t bytes) override {
    if (!guard_zones()) return allocate(bytes);
    // CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits; a sub-buffer's origin must be a multiple of it.
    const std::size_t align = std::max<std::size_t>(device_value<cl_uint>(id_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8, 1);
    const std::size_t guard = (kGuardBytes + align - 1) / align * align;
    return std::make_unique<ClBuffer>(context_.get(), queue_.get(), bytes, guard);
  }
  void copy(Buffer& from, Buffer& to, std::size_t bytes) override {
    auto& f = dynamic_cast<ClBuffer&>(from);
    auto& t = dynamic_cast<ClBuffer&>(to);
    check(clEnqueueCopyBuffer(queue_.get(), f.whole(), t.whole(), f.offset(), t.offset(), bytes, 0, nullptr, nullptr),
          "calibrating: device-to-device copy");
  }
  void copy_transformed(Buffer& from, Buffer& to, const WordTransform& transform) override {
    if (from.size() % 4 != 0 || from.size() > to.size())
      throw std::invalid_argument("copy_transformed: the source must be whole words and fit the destination");
    const cl_uint words = static_cast<cl_uint>(from.size() / 4);
    if (words == 0) return;
    if (from.size() / 4 != words) throw std::invalid_argument("copy_transformed: more than 2^32 words");
    cl_kernel k = harness_kernel(kCopyTransformedSource, "gpulab_copy_transformed");
    const cl_mem f = dynamic_cast<ClBuffer&>(from).get(), t = dynamic_cast<ClBuffer&>(to).get();
    const cl_uint selector = transform.selector(), mask = transform.xor_mask;
    const char* what = "loading new input contents on the device (harness kernel)";
    check(clSetKernelArg(k, 0, sizeof f, &f), what);
    check(clSetKernelArg(k, 1, sizeof t, &t), what);
    check(clSetKernelArg(k, 2, sizeof words, &words), what);
    check(clSetKernelArg(k, 3, sizeof selector, &selector), what);
    check(clSetKernelArg(k, 4, sizeof mask, &mask), what);
    const std::size_t local = 256, global = (words + local - 1) / local * local;
    check(clEnqueueNDRangeKernel(queue_.get(), k, 1, nullptr, &global, &local, 0, nullptr, nullptr), what);
  }
  void flush_caches() override {
    if (!flush_) {
      // NVIDIA's driver reports its L1s here (4 MiB on an H100), not the 50 MiB L2, and OpenCL has no
      // query for the L2: on a GPU, flush at least 256 MiB, twice the largest L2 of current GPUs.
      const auto cache = device_value<cl_ulong>(id_, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
      const bool gpu = device_value<cl_device_type>(id_, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU;
      const std::size_t bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(cache), gpu ? 256u << 20 : 8u << 20);
      flush_ = std::make_unique<ClBuffer>(context_.get(), queue_.get(), (bytes + 127) / 128 * 128);
    }
    flush_->fill(++flush_value_);  // a different value each time: no line stays valid as already written
  }
  // Device-wide, as on CUDA: the harness's queue, then every queue student code created.
  void synchronize() override {
    check_finish(clFinish(queue_.get()), "running the kernel (reported at clFinish)");
    student_queues().finish();
  }

  LaunchTiming time(const std::function<void()>& launch) override {
    synchronize();
    Event start, stop;
    const auto t0 = std::chrono::steady_clock::now();
    check(clEnqueueMarkerWithWaitList(queue_.get(), 0, nullptr, start.out()), "enqueueing the start marker");
    launch();
    check(clEnqueueMarkerWithWaitList(queue_.get(), 0, nullptr, stop.out()), "enqueueing the stop marker");
    synchronize();
    const auto t1 = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double, std::milli>(t1 - t0).count();
    double device = wall;  // where markers carry no profiling data, the host clock is all there is
    cl_ulong begin = 0, end = 0;
    if (clGetEventProfilingInfo(start.get(), CL_PROFILING_COMMAND_END, sizeof begin, &begin, nullptr) == CL_SUCCESS &&
        clGetEventProfilingInfo(stop.get(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) == CL_SUCCESS &&
        end > begin)
      device = static_cast<double>(end - begin) * 1e-6;
    return {device, wall};
  }

  double copy_bandwidth(std::size_t bytes, int repeats) override {
    ClBuffer from(context_.get(), queue_.get(), bytes), to(context_.get(), queue_.get(), bytes);
    from.fill(0x5a);
    to.fill(0);
    std::vector<double> ms;
    for (int i = 0; i < repeats + 2; ++i) {
      Event copy;
      check(clEnqueueCopyBuffer(queue_.get(), from.get(), to.get(), 0, 0, bytes, 0, nullptr, copy.out()),
            "calibrating: device-to-device copy");
      synchronize();
      if (i >= 2) ms.push_back(profiled_ms(copy.get(), CL_PROFILING_COMMAND_START, copy.get()));
    }
    return 2.0 * static_cast<double>(bytes) / (summarize(ms).median * 1e-3) / 1e9;
  }

  bool is_fatal(const ApiError& error) const override { return error.api() == "OpenCL" && is_fault(error.code()); }

  // Readable on NVIDIA's driver, whose cl_nv_device_attribute_query gives the compute capability.
  std::optional<double> peak_gflops() const override {
    if (device_string(id_, CL_DEVICE_EXTENSIONS).find("cl_nv_device_attribute_query") == std::string::npos)
      return std::nullopt;
    const auto major = device_value<cl_uint>(id_, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
    const auto minor = device_value<cl_uint>(id_, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
    return nvidia_peak_gflops(static_cast<int>(major), static_cast<int>(minor),
                              static_cast<int>(device_value<cl_uint>(id_, CL_DEVICE_MAX_COMPUTE_UNITS)),
                              device_value<cl_uint>(id_, CL_DEVICE_MAX_CLOCK_FREQUENCY));
  }

  std::string hint(const ApiError& error) const override {
    if (error.api() != "OpenCL") return {};
    switch (error.code()) {
      case CL_OUT_OF_RESOURCES:
        return "on a GPU this usually means the kernel crashed, often by an out-of-bounds access: check the bounds "
               "test of every work-item; otherwise the work-group needs more registers or local memory than there are";
      case CL_INVALID_WORK_GROUP_SIZE:
        return "the global size must be a multiple of the local size (OpenCL 1.2; use gpulab::round_up), the local "
               "size must not exceed the device's maximum, and it must match any reqd_work_group_size";
      case CL_INVALID_WORK_ITEM_SIZE: return "a local size is larger than the device allows in that dimension";
      case CL_INVALID_KERNEL_ARGS:
        return "an argument of the kernel was not set: call clSetKernelArg for every parameter";
      case CL_INVALID_ARG_SIZE:
        return "clSetKernelArg got the wrong size: sizeof(cl_mem) for buffers, sizeof(cl_int) for ints, and "
               "the size in bytes for __local arguments";
      case CL_INVALID_ARG_INDEX: return "the argument index is past the kernel's last parameter";
      case CL_INVALID_MEM_OBJECT:
        return "a cl_mem that is not a valid buffer here: to clSetKernelArg pass the address of the cl_mem "
               "(&buffer, sizeof(cl_mem)); use no buffer after releasing it; a sub-buffer of a sub-buffer is not "
               "allowed (make the second one on the first's buffer)";
      case CL_INVALID_KERNEL_NAME:
        return "no kernel of that name in the .cl file: check the spelling and the __kernel qualifier";
      case CL_INVALID_BUFFER_SIZE: return "a buffer of size 0, or larger than the device allows";
      case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        return "the device is out of memory: check the sizes you allocate (in bytes) and release what you create";
      default: return {};
    }
  }

  void prepare_lab(const Manifest& manifest, const std::filesystem::path& student_dir) override {
    for (const auto& file : manifest.files_with_extension("opencl", ".cl")) {
      std::ifstream in(student_dir / file, std::ios::binary);
      if (!in) throw CompileError(fmt::format("cannot read {}", (student_dir / file).string()), "");
      std::stringstream text;
      text << in.rdbuf();
      programs_.push_back(build(text.str(), file));
    }
  }

  cl_kernel harness_kernel(const std::string& source, const char* name) {
    const std::string key = std::string("harness:") + name;
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second.get();
    harness_programs_.push_back(build(source, "<harness>"));
    cl_int status = CL_SUCCESS;
    Kernel k(clCreateKernel(harness_programs_.back().get(), name, &status));
    check(status, fmt::format("creating the harness kernel {}", name));
    return kernels_.emplace(key, std::move(k)).first->second.get();
  }

  // OpenCLLab
  cl_context context() const override { return context_.get(); }
  cl_command_queue queue() const override { return queue_.get(); }
  cl_device_id device() const override { return id_; }
  cl_kernel kernel(const char* name) const override {
    if (auto it = kernels_.find(name); it != kernels_.end()) return it->second.get();
    for (const auto& program : programs_) {
      cl_int status = CL_SUCCESS;
      Kernel k(clCreateKernel(program.get(), name, &status));
      if (status == CL_SUCCESS) return kernels_.emplace(name, std::move(k)).first->second.get();
    }
    throw ApiError("OpenCL", CL_INVALID_KERNEL_NAME, cl_status_name(CL_INVALID_KERNEL_NAME),
                   fmt::format("creating kernel '{}': the lab's .cl file has no __kernel of that name", name));
  }

 private:
  Program build(const std::string& source, const std::string& file) {
    const char* sources[] = {source.c_str()};
    const std::size_t lengths[] = {source.size()};
    cl_int status = CL_SUCCESS;
    Program program(clCreateProgramWithSource(context_.get(), 1, sources, lengths, &status));
    check(status, fmt::format("creating the program from {}", file));
    const cl_int built = clBuildProgram(program.get(), 1, &id_, "", nullptr, nullptr);
    std::size_t size = 0;
    clGetProgramBuildInfo(program.get(), id_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program.get(), id_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    if (built != CL_SUCCESS)
      throw CompileError(fmt::format("{} does not compile for {} ({})", file, info_.name, cl_status_name(built)),
                         name_source_in_log(log, file));
    return program;
  }

  DeviceInfo info_;
  cl_device_id id_;
  Context context_;
  Queue queue_;
  std::vector<Program> programs_;
  std::vector<Program> harness_programs_;
  mutable std::map<std::string, Kernel, std::less<>> kernels_;
  std::unique_ptr<ClBuffer> flush_;
  std::uint8_t flush_value_ = 0;
};

}  // namespace

std::string name_source_in_log(const std::string& log, const std::string& file) {
  static const std::regex placeholder(
      R"((<source>|<kernel>|<stdin>|<built-in>|input\.cl|[^\s:]*/pocl[^\s:]*\.cl):(\d+))");
  return std::regex_replace(log, placeholder, file + ":$2");
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  for (auto& f : enumerate()) out.push_back(std::move(f.info));
  return out;
}

std::unique_ptr<Device> open_device(const DeviceInfo& info) {
  for (auto& f : enumerate())
    if (f.info.index == info.index) return std::make_unique<ClDevice>(std::move(f.info), f.id);
  throw Error(fmt::format("OpenCL device {} has disappeared", info.index));
}

cl_mem memory(Buffer& buffer) { return dynamic_cast<ClBuffer&>(buffer).get(); }

const OpenCLLab& lab(Device& device) { return dynamic_cast<const OpenCLLab&>(device); }

cl_kernel harness_kernel(Device& device, const std::string& source, const char* name) {
  return dynamic_cast<ClDevice&>(device).harness_kernel(source, name);
}

}  // namespace gpulab::opencl

// Called by the guard around clCreateCommandQueue and clCreateCommandQueueWithProperties, linked
// into the student's library (grader/allowlist/opencl_guards.cpp), for every queue student code
// creates. Exported from the runner because that library refers to it; student code itself cannot
// name it (the allowlist refuses the symbol).
extern "C" __attribute__((visibility("default"))) void gpulab_student_queue_created(cl_command_queue queue) {
  gpulab::opencl::student_queues().add(queue);
}
