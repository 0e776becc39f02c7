// What the guards around buffers student code allocates itself share (cuda_alloc_guards.cpp,
// opencl_guards.cpp): whether they are on, their fill byte, and the registry of live guarded buffers.
#pragma once
#include <map>
#include <mutex>
#include <optional>

// Set by the runner (grader/runner/execute.cpp) for the sanitizer gate, whose memcheck must see an
// access past the end of the allocation itself. Weak: a library linked into anything else keeps its
// guards; and student code cannot reach it (an undefined symbol the allowlist does not name).
extern "C" {
__attribute__((weak)) extern volatile int gpulab_student_guards_off;
}

namespace gpulab::allocation_guards {

inline bool on() { return &gpulab_student_guards_off == nullptr || gpulab_student_guards_off == 0; }

inline constexpr unsigned char kPattern = 0x7F;  // as kGuardByte (gpulab/device.hpp): huge as a float

// The live guarded buffers, by the handle student code holds (a device pointer, a cl_mem).
template <typename Handle, typename Guarded>
class Registry {
 public:
  void add(Handle h, const Guarded& g) {
    std::lock_guard lock(mutex_);
    live_[h] = g;
  }
  bool contains(Handle h) {
    std::lock_guard lock(mutex_);
    return live_.count(h) > 0;
  }
  // Removes and returns `h`'s entry when `last_reference(h)` says this release frees it; empty for a
  // buffer not guarded here (or still referenced), which the caller passes on as it is.
  template <typename LastReference>
  std::optional<Guarded> take(Handle h, LastReference last_reference) {
    std::lock_guard lock(mutex_);
    const auto it = live_.find(h);
    if (it == live_.end() || !last_reference(h)) return std::nullopt;
    Guarded g = it->second;
    live_.erase(it);
    return g;
  }

 private:
  std::mutex mutex_;
  std::map<Handle, Guarded> live_;
};

}  // namespace gpulab::allocation_guards
