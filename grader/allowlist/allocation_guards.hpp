// What the guards around buffers student code allocates itself share (cuda_alloc_guards.cpp,
// opencl_guards.cpp): whether they are on, their fill byte, and the registry of live guarded buffers.
#pragma once
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>

// Set by the runner (grader/runner/execute.cpp) for the sanitizer gate, whose memcheck must see an
// access past the end of the allocation itself. Weak: a library linked into anything else keeps its
// guards; and student code cannot reach it (an undefined symbol the allowlist does not name).
extern "C" {
__attribute__((weak)) extern volatile int gpulab_student_guards_off;
// Where the guards put their check of every live buffer, for the runner to call after a launch's
// full check (a buffer kept across calls, never freed, is otherwise never checked). It writes what
// changed into `out` (at most `size` bytes, NUL-terminated) and returns whether anything did.
// Exported by the runner (execute.cpp); weak, as above.
__attribute__((weak)) extern int (*gpulab_student_live_buffers_damaged)(char* out, unsigned long size);
}

namespace gpulab::allocation_guards {

inline bool on() { return &gpulab_student_guards_off == nullptr || gpulab_student_guards_off == 0; }

inline constexpr unsigned char kPattern = 0x7F;  // as kGuardByte (gpulab/device.hpp): huge as a float

// Hands `check` to the runner (see gpulab_student_live_buffers_damaged), when there is one.
inline void offer_live_check(int (*check)(char*, unsigned long)) {
  if (&gpulab_student_live_buffers_damaged != nullptr) gpulab_student_live_buffers_damaged = check;
}

// The first damage `damage_of` finds among `live`'s buffers, written into out[0..size); 0: none.
// Each damaged buffer's guards are `restore`d, so the launch that did it is the one blamed.
template <typename Registry, typename DamageOf, typename Restore>
int first_damage(Registry& live, DamageOf damage_of, Restore restore, const char* what, char* out, unsigned long size) {
  std::string found;
  live.each([&](const auto& guarded) {
    std::string damage = damage_of(guarded);
    if (damage.empty()) return;
    restore(guarded);
    if (found.empty()) found = std::move(damage);
  });
  if (found.empty() || size == 0) return 0;
  const std::string message = std::string(what) + found + " changed";
  const std::size_t n = std::min<std::size_t>(message.size(), size - 1);
  message.copy(out, n);
  out[n] = '\0';
  return 1;
}

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
  // Calls f(guarded) for every live buffer.
  template <typename F>
  void each(F f) {
    std::lock_guard lock(mutex_);
    for (const auto& [handle, guarded] : live_) f(guarded);
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
