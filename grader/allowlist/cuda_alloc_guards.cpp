// Linked into every CUDA student library (`-Wl,--wrap=cudaMalloc,--wrap=cudaFree`, grader/CMakeLists.txt):
// a buffer student code allocates itself gets guard zones like the buffers the harness gives it, so a
// kernel that writes one element past the end (`if (i <= n)`) is found when the buffer is freed, not
// only under compute-sanitizer. A separate archive from cuda_guards.cpp: a lab that allows cudaMemcpy
// outright (hello) still gets these.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpulab/errors.hpp"

// Set by the runner (grader/runner/execute.cpp) for the sanitizer gate, whose memcheck must see an
// access past the end of the allocation itself. Weak: a library linked into anything else keeps its
// guards; and student code cannot reach it (an undefined symbol the allowlist does not name).
extern "C" {
__attribute__((weak)) extern volatile int gpulab_student_guards_off;
}

namespace {

bool guards_on() { return &gpulab_student_guards_off == nullptr || gpulab_student_guards_off == 0; }

constexpr std::size_t kGuard = 4096;
constexpr unsigned char kPattern = 0x7F;  // as kGuardByte (gpulab/device.hpp): huge as a float

struct Allocation {
  void* base;
  std::size_t size;
};

std::mutex& registry_lock() {
  static std::mutex m;
  return m;
}
std::map<void*, Allocation>& registry() {
  static std::map<void*, Allocation> live;
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

}  // namespace

extern "C" {

cudaError_t __real_cudaMalloc(void** pointer, size_t size);
cudaError_t __real_cudaFree(void* pointer);

cudaError_t __wrap_cudaMalloc(void** pointer, size_t size) {
  if (!guards_on()) return __real_cudaMalloc(pointer, size);
  void* base = nullptr;
  if (const cudaError_t e = __real_cudaMalloc(&base, size + 2 * kGuard); e != cudaSuccess) return e;
  char* bytes = static_cast<char*>(base);
  if (const cudaError_t e = cudaMemset(bytes, kPattern, kGuard); e != cudaSuccess) return e;
  if (const cudaError_t e = cudaMemset(bytes + kGuard + size, kPattern, kGuard); e != cudaSuccess) return e;
  *pointer = bytes + kGuard;
  std::lock_guard lock(registry_lock());
  registry()[*pointer] = {base, size};
  return cudaSuccess;
}

cudaError_t __wrap_cudaFree(void* pointer) {
  Allocation a{};
  {
    std::lock_guard lock(registry_lock());
    const auto it = registry().find(pointer);
    if (it == registry().end()) return __real_cudaFree(pointer);
    a = it->second;
    registry().erase(it);
  }
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
