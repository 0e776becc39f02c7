#include "machine_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "sandbox.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// A folder every user may create lock files in, and none may delete another's (mode 1777).
bool usable_lock_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) return false;
  struct ::stat st;
  if (::stat(dir.c_str(), &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 07777) != 01777)
    ::chmod(dir.c_str(), 01777);
  return ::access(dir.c_str(), W_OK | X_OK) == 0;
}

int open_lock_file(const fs::path& file) {
  const mode_t old_mask = ::umask(0);
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  ::umask(old_mask);
  if (fd < 0)
    throw std::runtime_error(
        fmt::format("cannot open the machine-wide lock {}: {} (set GPULAB_LOCK_DIR to a folder "
                    "every grader on this machine can write)",
                    file.string(), std::strerror(errno)));
  return fd;
}

}  // namespace

fs::path machine_lock_dir() {
  if (const char* dir = std::getenv("GPULAB_LOCK_DIR"); dir && *dir) {
    if (!usable_lock_dir(dir))
      throw std::runtime_error(fmt::format("GPULAB_LOCK_DIR={} is not a folder this user can write", dir));
    return dir;
  }
  for (const char* dir : {"/run/lock/gpulab", "/var/lock/gpulab"})
    if (usable_lock_dir(dir)) return dir;
  const fs::path fallback = fs::temp_directory_path() / "gpulab-locks";
  if (!usable_lock_dir(fallback))
    throw std::runtime_error(
        fmt::format("no folder for machine-wide locks (tried /run/lock/gpulab, /var/lock/gpulab, "
                    "{}): set GPULAB_LOCK_DIR",
                    fallback.string()));
  return fallback;
}

std::optional<MachineLock> MachineLock::try_take(const std::string& name) {
  FileDescriptor file(open_lock_file(machine_lock_dir() / (name + ".lock")));
  if (::flock(file.get(), LOCK_EX | LOCK_NB) == 0) return MachineLock(std::move(file), name);
  const int error = errno;
  if (error == EWOULDBLOCK) return std::nullopt;
  throw std::runtime_error(fmt::format("cannot lock {}: {}", name, std::strerror(error)));
}

MachineLock MachineLock::take(const std::string& name) {
  FileDescriptor file(open_lock_file(machine_lock_dir() / (name + ".lock")));
  int status;
  while ((status = ::flock(file.get(), LOCK_EX)) != 0 && errno == EINTR) {}
  if (status != 0) throw std::runtime_error(fmt::format("cannot lock {}: {}", name, std::strerror(errno)));
  return MachineLock(std::move(file), name);
}

UserLease lease_sandbox_user(unsigned first, unsigned count) {
  for (unsigned uid = first; uid < first + count; ++uid) {
    auto lock = MachineLock::try_take(fmt::format("sandbox-user-{}", uid));
    if (!lock) continue;
    // Nobody holds it, so whatever still runs as this uid was left by a grader that died.
    kill_processes_of_user(uid);
    return UserLease{uid, std::move(*lock)};
  }
  throw std::runtime_error(
      fmt::format("all {} sandbox users ({}..{}) are taken by gpulab graders on this machine: "
                  "wait for some to finish, or run fewer jobs",
                  count, first, first + count - 1));
}

std::string gpu_lock_name(const std::string& backend, const std::string& id) {
  std::string name = "gpu-" + backend + "-" + id;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return name;
}

std::string gpu_lock_name(const DeviceInfo& device) {
  if (device.backend != "cuda") return gpu_lock_name(device.backend, fmt::format("{}-{}", device.index, device.name));
  std::vector<std::string> visible;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES"); env && *env) {
    std::stringstream ids(env);
    for (std::string id; std::getline(ids, id, ',');) visible.push_back(id);
  }
  const auto index = static_cast<std::size_t>(device.index);
  return gpu_lock_name("cuda", index < visible.size() ? visible[index] : std::to_string(device.index));
}

}  // namespace gpulab::cli
