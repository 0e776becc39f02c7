// Linked into every CUDA student library (`-Wl,--wrap=cudaMalloc,--wrap=cudaFree`, grader/CMakeLists.txt):
// a buffer student code allocates itself gets guard zones like the buffers the harness gives it, so a
// kernel that writes one element past the end (`if (i <= n)`) is found when the buffer is freed, not
// only under compute-sanitizer. Its contents start as the poison pattern the harness checks for, so a
// result the kernel never stored reads "never written", not as random bytes. A separate archive from
// cuda_guards.cpp: a lab that allows cudaMemcpy outright (hello) still gets these.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "allocation_guards.hpp"
#include "gpulab/compare.hpp"
#include "gpulab/errors.hpp"

namespace {

using namespace gpulab::allocation_guards;

constexpr std::size_t kGuard = 4096;

struct Allocation {
  void* base;
  std::size_t size;
};

Registry<void*, Allocation>& registry() {
  static Registry<void*, Allocation> live;
  return live;
}

// Both guard zones of `a`, copied to the host after the device finished its work.
std::string damage_of(const Allocation& a) {
  std::vector<unsigned char> front(kGuard), back(kGuard);
  char* base = static_cast<char*>(a.base);
  if (cudaMemcpyAsync(front.data(), base, kGuard, cudaMemcpyDeviceToHost, nullptr) != cudaSuccess ||
      cudaMemcpyAsync(back.data(), base + kGuard + a.size, kGuard, cudaMemcpyDeviceToHost, nullptr) != cudaSuccess ||
      cudaStreamSynchronize(nullptr) != cudaSuccess)
    return {};  // the device failed: the error reaches the student's next call
  return gpulab::guard_damage(front.data(), back.data(), kGuard, a.size, kPattern);
}

// Every live allocation's guards, for the runner after a launch's full check (allocation_guards.hpp).
int live_buffers_damaged(char* out, unsigned long size) {
  if (cudaDeviceSynchronize() != cudaSuccess) return 0;  // the runner reports the device's error itself
  const auto restore = [](const Allocation& a) {
    char* base = static_cast<char*>(a.base);
    cudaMemset(base, kPattern, kGuard);
    cudaMemset(base + kGuard + a.size, kPattern, kGuard);
    cudaDeviceSynchronize();
  };
  return first_damage(registry(), damage_of, restore, "a buffer your code allocated with cudaMalloc and kept: ", out,
                      size);
}

// Offered when the library is loaded: a buffer kept across calls (a static pointer) is never freed.
[[maybe_unused]] const bool offered = (offer_live_check(live_buffers_damaged), true);

}  // namespace

extern "C" {

cudaError_t __real_cudaMalloc(void** pointer, size_t size);
cudaError_t __real_cudaFree(void* pointer);

cudaError_t __wrap_cudaMalloc(void** pointer, size_t size) {
  if (!on()) return __real_cudaMalloc(pointer, size);
  const cudaError_t pending = cudaPeekAtLastError();  // a failed launch the student has not checked yet
  void* base = nullptr;
  if (const cudaError_t e = __real_cudaMalloc(&base, size + 2 * kGuard); e != cudaSuccess) {
    // The guards' 8 KiB may be what does not fit: an allocation that fits without them must succeed,
    // so it is made unguarded, and the failed attempt's error is not left for cudaGetLastError
    // (unless an error of the student's was pending, which its next cudaGetLastError must report).
    if (e != cudaErrorMemoryAllocation) return e;
    if (pending == cudaSuccess) cudaGetLastError();
    return __real_cudaMalloc(pointer, size);
  }
  char* bytes = static_cast<char*>(base);
  if (const cudaError_t e = cudaMemset(bytes, kPattern, kGuard); e != cudaSuccess) return e;
  if (const cudaError_t e = cudaMemset(bytes + kGuard + size, kPattern, kGuard); e != cudaSuccess) return e;
  if (const cudaError_t e = cudaMemset(bytes + kGuard, gpulab::kPoisonByte, size); e != cudaSuccess) return e;
  *pointer = bytes + kGuard;
  registry().add(*pointer, {base, size});
  return cudaSuccess;
}

cudaError_t __wrap_cudaFree(void* pointer) {
  const auto guarded = registry().take(pointer, [](void*) { return true; });
  if (!guarded) return __real_cudaFree(pointer);
  const Allocation a = *guarded;
  // cudaFree waits for the device anyway; a kernel error is returned as cudaFree would.
  if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return e;
  const std::string damage = damage_of(a);
  const cudaError_t freed = __real_cudaFree(a.base);
  if (!damage.empty())
    throw gpulab::BufferOverrun("a kernel wrote outside a buffer your code allocated with cudaMalloc: " + damage +
                                " changed. Check the bounds test of every thread (if (i < n), not <=): the grid is "
                                "rounded up to whole blocks, so the last block has threads past the end");
  return freed;
}

}  // extern "C"
