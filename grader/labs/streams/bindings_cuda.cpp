// Calls the student's CUDA functions (labs/10-streams/streams.cu) with host memory and device
// pointers; page-locked memory and the calibration's copies of the CUDA runtime.
#include <cuda_runtime.h>

#include "gpulab/backend/cuda.hpp"
#include "gpulab/student/cuda.hpp"
#include "lab_driver.hpp"
#include "streams_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void stream_serial(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b);
void stream_pinned(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b);
void stream_chunks(const float* in, float* out, float* d_in, float* d_out, int n, float a, float b);

namespace gpulab::labs {
namespace {

class CudaPinned final : public PinnedMemory {
 public:
  explicit CudaPinned(std::size_t bytes) {
    check(cudaMallocHost(&data_, bytes), "allocating page-locked host memory (cudaMallocHost)");
  }
  ~CudaPinned() override { cudaFreeHost(data_); }
  CudaPinned(const CudaPinned&) = delete;
  CudaPinned& operator=(const CudaPinned&) = delete;
  void* data() override { return data_; }

 private:
  void* data_ = nullptr;
};

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "calibrating: creating a stream"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// One stream per direction, so the two copies run at once on the GPU's two copy engines.
class CudaCopies final : public HostDeviceCopies {
 public:
  CudaCopies(void* host_from, void* to_device, const void* from_device, void* host_to, std::size_t bytes)
      : host_from_(host_from), to_device_(to_device), from_device_(from_device), host_to_(host_to), bytes_(bytes) {}
  void run(Transfer transfer) override {
    if (transfer != Transfer::to_host)
      check(cudaMemcpyAsync(to_device_, host_from_, bytes_, cudaMemcpyHostToDevice, up_.get()),
            "calibrating: copying page-locked host memory to the device");
    if (transfer != Transfer::to_device)
      check(cudaMemcpyAsync(host_to_, from_device_, bytes_, cudaMemcpyDeviceToHost, down_.get()),
            "calibrating: copying device memory to page-locked host memory");
    check(cudaStreamSynchronize(up_.get()), "calibrating: waiting for the copy to the device");
    check(cudaStreamSynchronize(down_.get()), "calibrating: waiting for the copy to the host");
  }

 private:
  void* host_from_;
  void* to_device_;
  const void* from_device_;
  void* host_to_;
  std::size_t bytes_;
  Stream up_, down_;
};

}  // namespace

StreamLaunch bind_stream(Device&, const std::string& function) {
  using Function = void (*)(const float*, float*, float*, float*, int, float, float);
  static const std::map<std::string, Function> functions{
      {"stream_serial", stream_serial}, {"stream_pinned", stream_pinned}, {"stream_chunks", stream_chunks}};
  const Function f = find_function(functions, function);
  return [f](const float* in, float* out, Buffer& d_in, Buffer& d_out, int n, float a, float b) {
    f(in, out, cuda::pointer<float>(d_in), cuda::pointer<float>(d_out), n, a, b);
  };
}

std::unique_ptr<PinnedMemory> allocate_pinned(Device&, std::size_t bytes) {
  return std::make_unique<CudaPinned>(bytes);
}

std::unique_ptr<HostDeviceCopies> make_host_device_copies(Device&, void* host_from, Buffer& to_device,
                                                          Buffer& from_device, void* host_to, std::size_t bytes) {
  return std::make_unique<CudaCopies>(host_from, cuda::pointer<float>(to_device), cuda::pointer<float>(from_device),
                                      host_to, bytes);
}

}  // namespace gpulab::labs
