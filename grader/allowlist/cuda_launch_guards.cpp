// Linked into every CUDA student library (`-Wl,--wrap=__cudaLaunchKernel,...`, grader/CMakeLists.txt):
// each way the allowlist lets student code start a kernel (<<<>>> compiles to __cudaLaunchKernel, or
// its per-thread-stream twin; cudaLaunchKernel and cudaLaunchCooperativeKernel by name) is counted
// for the runner (launch_guards.hpp) and passed on unchanged.
#include <cuda_runtime.h>

#include "launch_guards.hpp"

extern "C" {

cudaError_t __real___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                      cudaStream_t stream);
cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                           cudaStream_t stream);
cudaError_t __real_cudaLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared,
                                    cudaStream_t stream);
cudaError_t __real_cudaLaunchCooperativeKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared,
                                               cudaStream_t stream);

cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                      cudaStream_t stream) {
  gpulab::launch_guards::count_launch();
  return __real___cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                           cudaStream_t stream) {
  gpulab::launch_guards::count_launch();
  return __real___cudaLaunchKernel_ptsz(kernel, grid, block, args, shared, stream);
}

cudaError_t __wrap_cudaLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared,
                                    cudaStream_t stream) {
  gpulab::launch_guards::count_launch();
  return __real_cudaLaunchKernel(function, grid, block, args, shared, stream);
}

cudaError_t __wrap_cudaLaunchCooperativeKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared,
                                               cudaStream_t stream) {
  gpulab::launch_guards::count_launch();
  return __real_cudaLaunchCooperativeKernel(function, grid, block, args, shared, stream);
}

}  // extern "C"
