// Calls the student's CUDA functions (labs/10-streams/streams.cu) with host memory and device
// pointers; page-locked memory and the calibration's copies of the CUDA runtime.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpulab/backend/cuda.hpp"
#include "gpulab/student/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "streams_lab.hpp"

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

// The launch's key where only a kernel can read it: one float of device memory behind a texture
// object. Host code receives the texture object, which no function the lab allows turns back into an
// address (cudaGetTextureObjectResourceDesc is not on the allowlist), so no copy can read the key;
// a kernel reads it with tex1Dfetch.
class KeyTexture {
 public:
  KeyTexture() {
    int device = 0, alignment = 0;
    check(cudaGetDevice(&device), "finding the current device");
    check(cudaDeviceGetAttribute(&alignment, cudaDevAttrTextureAlignment, device), "reading the texture alignment");
    const std::size_t align = static_cast<std::size_t>(std::max(alignment, 4));
    check(cudaMalloc(&memory_, 2 * align), "allocating the launch key");
    key_ = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(memory_) + align - 1) / align * align);
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeLinear;
    resource.res.linear.devPtr = key_;
    resource.res.linear.desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    resource.res.linear.sizeInBytes = sizeof(float);
    cudaTextureDesc texture{};
    texture.readMode = cudaReadModeElementType;
    if (const cudaError_t e = cudaCreateTextureObject(&texture_, &resource, &texture, nullptr); e != cudaSuccess) {
      cudaFree(memory_);
      check(e, "creating the texture object of the launch key");
    }
  }
  ~KeyTexture() {
    cudaDestroyTextureObject(texture_);
    cudaFree(memory_);
  }
  KeyTexture(const KeyTexture&) = delete;
  KeyTexture& operator=(const KeyTexture&) = delete;
  // Synchronously: a kernel on a non-blocking stream of the student's must not run before it lands.
  void write(float key) {
    check(cudaMemcpy(key_, &key, sizeof key, cudaMemcpyHostToDevice), "writing the launch key");
    check(cudaDeviceSynchronize(), "writing the launch key");
  }
  cudaTextureObject_t get() const { return texture_; }

 private:
  void* memory_ = nullptr;
  float* key_ = nullptr;
  cudaTextureObject_t texture_ = 0;
};

class CudaStreamFunction final : public StreamFunction {
 public:
  using Function = contract::streams*;
  explicit CudaStreamFunction(Function f) : f_(f) {}
  void set_key(float key) override { key_.write(key); }
  void call(const float* in, float* out, Buffer& d_in, Buffer& d_out, int n, float a, float b) override {
    f_(in, out, cuda::pointer<float>(d_in), cuda::pointer<float>(d_out), n, a, b, key_.get());
  }

 private:
  Function f_;
  KeyTexture key_;
};

}  // namespace

std::unique_ptr<StreamFunction> bind_stream(Device&, const std::string& function) {
  return std::make_unique<CudaStreamFunction>(find_function(contract::streams_functions(), function));
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
