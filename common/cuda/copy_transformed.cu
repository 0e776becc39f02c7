// Device::copy_transformed on CUDA: to[i] = bytes of from[i] reordered, XORed with a mask. Compiled
// by nvcc apart from cuda_device.cpp, which the host compiler builds with the C++20 headers.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace {

__global__ void copy_transformed_kernel(const std::uint32_t* from, std::uint32_t* to, std::size_t words,
                                        std::uint32_t selector, std::uint32_t mask) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride)
    to[i] = __byte_perm(from[i], 0, selector) ^ mask;
}

}  // namespace

namespace gpulab::cuda_kernels {

cudaError_t launch_copy_transformed(const std::uint32_t* from, std::uint32_t* to, std::size_t words,
                                    std::uint32_t selector, std::uint32_t mask) {
  if (words == 0) return cudaSuccess;
  constexpr unsigned kThreads = 256;
  // Enough blocks to fill any current GPU; each thread loops over the rest.
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((words + kThreads - 1) / kThreads, 16384));
  copy_transformed_kernel<<<blocks, kThreads>>>(from, to, words, selector, mask);
  return cudaGetLastError();
}

}  // namespace gpulab::cuda_kernels
