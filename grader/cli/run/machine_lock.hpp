// Locks that every gpulab process on this machine respects: two batches, two courses, several Slurm
// array tasks on one node, or a batch and a student's `make check`. Each is an flock() on a file in
// one machine-wide folder, so it is released when its holder dies, however it dies.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "files.hpp"
#include "gpulab/device.hpp"

namespace gpulab::cli {

// The folder of the lock files: $GPULAB_LOCK_DIR, or /run/lock/gpulab (node-local, also under Slurm's
// private /tmp), or /var/lock/gpulab, or the system temporary folder; created world-writable and sticky
// (like /tmp) so graders run by different users share it.
std::filesystem::path machine_lock_dir();

// One held lock file; moves, never copies. Destroying it releases the lock.
class MachineLock {
 public:
  MachineLock() = default;

  // Takes `name` in machine_lock_dir() if no process holds it; empty when one does. Throws when the
  // lock file cannot be opened (an unwritable lock folder is the machine's problem, not a student's).
  static std::optional<MachineLock> try_take(const std::string& name);
  // Waits until `name` is free and takes it.
  static MachineLock take(const std::string& name);

  bool held() const { return file_.valid(); }
  const std::string& name() const { return name_; }

 private:
  MachineLock(FileDescriptor file, std::string name) : file_(std::move(file)), name_(std::move(name)) {}
  FileDescriptor file_;  // closing the last descriptor of the lock file releases the flock
  std::string name_;
};

// A sandbox user (a uid without an account) held for as long as the lease lives: no other gpulab
// process on the machine runs anything as it meanwhile.
struct UserLease {
  unsigned uid = 0;
  MachineLock lock;
};

// The first free uid of [first, first + count); processes that uid still runs (left by a grader that
// died) are killed before it is handed out. Throws when every one is taken.
UserLease lease_sandbox_user(unsigned first = 62000, unsigned count = 2000);

// The lock that gives one run at a time a GPU, for fair timings: `id` is the GPU's CUDA_VISIBLE_DEVICES
// entry (CUDA) or its index and name (OpenCL). The DeviceInfo form maps a CUDA index through
// CUDA_VISIBLE_DEVICES, so `gpulab check` and `gpulab grade` take the same lock for the same GPU.
std::string gpu_lock_name(const std::string& backend, const std::string& id);
std::string gpu_lock_name(const DeviceInfo& device);

}  // namespace gpulab::cli
