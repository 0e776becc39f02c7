// Calls the student's OpenCL host functions (labs/10-streams/streams_opencl.cpp) with host memory
// and buffers; page-locked memory and the calibration's copies of OpenCL.
#include <fmt/format.h>

#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "streams_lab.hpp"

namespace gpulab::labs {
namespace {

// OpenCL has no call for page-locked memory: a buffer the driver allocates in host memory
// (CL_MEM_ALLOC_HOST_PTR), mapped once, is pinned memory on NVIDIA's driver and plain memory on PoCL.
class ClPinned final : public PinnedMemory {
 public:
  ClPinned(const OpenCLLab& lab, std::size_t bytes) : queue_(lab.queue()) {
    cl_int status = CL_SUCCESS;
    buffer_ = clCreateBuffer(lab.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &status);
    check(status, "allocating page-locked host memory (clCreateBuffer with CL_MEM_ALLOC_HOST_PTR)");
    data_ = clEnqueueMapBuffer(queue_, buffer_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr,
                               &status);
    if (status != CL_SUCCESS) clReleaseMemObject(buffer_);
    check(status, "mapping page-locked host memory (clEnqueueMapBuffer)");
  }
  ~ClPinned() override {
    clEnqueueUnmapMemObject(queue_, buffer_, data_, 0, nullptr, nullptr);
    clFinish(queue_);
    clReleaseMemObject(buffer_);
  }
  ClPinned(const ClPinned&) = delete;
  ClPinned& operator=(const ClPinned&) = delete;
  void* data() override { return data_; }

 private:
  cl_command_queue queue_;
  cl_mem buffer_ = nullptr;
  void* data_ = nullptr;
};

class Queue {
 public:
  explicit Queue(const OpenCLLab& lab) {
    cl_int status = CL_SUCCESS;
    queue_ = clCreateCommandQueue(lab.context(), lab.device(), 0, &status);
    check(status, "calibrating: creating a command queue");
  }
  ~Queue() { clReleaseCommandQueue(queue_); }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  cl_command_queue get() const { return queue_; }

 private:
  cl_command_queue queue_ = nullptr;
};

// One queue per direction, so the two copies can run at once.
class ClCopies final : public HostDeviceCopies {
 public:
  ClCopies(const OpenCLLab& lab, void* host_from, cl_mem to_device, cl_mem from_device, void* host_to,
           std::size_t bytes)
      : host_from_(host_from),
        to_device_(to_device),
        from_device_(from_device),
        host_to_(host_to),
        bytes_(bytes),
        up_(lab),
        down_(lab) {}
  void run(Transfer transfer) override {
    if (transfer != Transfer::to_host)
      check(clEnqueueWriteBuffer(up_.get(), to_device_, CL_FALSE, 0, bytes_, host_from_, 0, nullptr, nullptr),
            "calibrating: copying page-locked host memory to the device");
    if (transfer != Transfer::to_device)
      check(clEnqueueReadBuffer(down_.get(), from_device_, CL_FALSE, 0, bytes_, host_to_, 0, nullptr, nullptr),
            "calibrating: copying device memory to page-locked host memory");
    check(clFlush(up_.get()), "calibrating: starting the copy to the device");
    check(clFlush(down_.get()), "calibrating: starting the copy to the host");
    check(clFinish(up_.get()), "calibrating: waiting for the copy to the device");
    check(clFinish(down_.get()), "calibrating: waiting for the copy to the host");
  }

 private:
  void* host_from_;
  cl_mem to_device_, from_device_;
  void* host_to_;
  std::size_t bytes_;
  Queue up_, down_;
};

// The launch's key is the last argument of the lab's kernel, set here on the kernel object the
// student's code gets from lab.kernel(): arguments are captured when a launch is enqueued, and OpenCL
// has no call that reads one back, so host code never learns the key; only the kernel has it.
class ClStreamFunction final : public StreamFunction {
 public:
  using Function = contract::streams*;
  ClStreamFunction(const OpenCLLab& lab, Function f) : lab_(lab), f_(f) {}
  void set_key(float key) override {
    cl_kernel kernel = lab_.kernel(kKernel);
    cl_uint parameters = 0;
    check(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof parameters, &parameters, nullptr),
          "counting the parameters of scale_shift_kernel");
    if (parameters != kParameters)
      throw ApiError("OpenCL", CL_INVALID_KERNEL_ARGS, cl_status_name(CL_INVALID_KERNEL_ARGS),
                     fmt::format("scale_shift_kernel in streams.cl has {} parameters; the lab's has {}: in, out, "
                                 "offset, count, a, b and key, which the grader sets before every call (keep the "
                                 "kernel's signature)",
                                 parameters, kParameters));
    check(clSetKernelArg(kernel, kParameters - 1, sizeof key, &key), "setting the key of scale_shift_kernel");
  }
  void call(const float* in, float* out, Buffer& d_in, Buffer& d_out, int n, float a, float b) override {
    f_(lab_, in, out, opencl::memory(d_in), opencl::memory(d_out), n, a, b);
  }

 private:
  static constexpr const char* kKernel = "scale_shift_kernel";
  static constexpr cl_uint kParameters = 7;
  const OpenCLLab& lab_;
  Function f_;
};

}  // namespace

std::unique_ptr<StreamFunction> bind_stream(Device& device, const std::string& function) {
  return std::make_unique<ClStreamFunction>(opencl::lab(device),
                                            find_function(contract::streams_functions(), function));
}

std::unique_ptr<PinnedMemory> allocate_pinned(Device& device, std::size_t bytes) {
  return std::make_unique<ClPinned>(opencl::lab(device), bytes);
}

std::unique_ptr<HostDeviceCopies> make_host_device_copies(Device& device, void* host_from, Buffer& to_device,
                                                          Buffer& from_device, void* host_to, std::size_t bytes) {
  return std::make_unique<ClCopies>(opencl::lab(device), host_from, opencl::memory(to_device),
                                    opencl::memory(from_device), host_to, bytes);
}

}  // namespace gpulab::labs
