// Whole-file reads and writes shared by the gpulab command, an owned file descriptor, and running a
// shell command for its output.
#pragma once
#include <filesystem>
#include <string>
#include <utility>

namespace gpulab::cli {

// The file's bytes, or "" when it cannot be read.
std::string read_text(const std::filesystem::path& path);
// The file's bytes; throws "cannot read PATH" when it cannot be read.
std::string read_text_or_throw(const std::filesystem::path& path);
// Writes via a temporary file and a rename, so a reader never sees half a file; throws when the
// disk refuses.
void write_text_atomically(const std::string& text, const std::filesystem::path& path);

// A file descriptor that is closed when its owner goes (-1: none). Move-only.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1);  // closes the descriptor held, then holds `fd`

 private:
  int fd_ = -1;
};

// An flock on `file` (created when missing), held until its owner goes, however the process ends.
// A shared lock admits other shared holders; with `wait`, it waits for the holders to go, without it
// it is not held when another holds it. Throws, naming the file, when the file cannot be opened.
class FileLock {
 public:
  enum class Kind { exclusive, shared };
  FileLock(const std::filesystem::path& file, Kind kind, bool wait);
  bool held() const { return held_; }

 private:
  FileDescriptor file_;
  bool held_ = false;
};

// A new folder of its own under the system's temporary folder ("<prefix>-XXXXXX"), removed with
// everything in it when its owner goes. Throws when it cannot be created.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& prefix);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Now, in UTC, as ISO 8601 to the second ("2026-11-28T09:30:00Z"): the time of a record.
std::string now_utc();

// This machine's host name ("unknown host" when the system will not say).
std::string host_name();

// The executable `name` in a folder of PATH (/usr/bin:/bin when unset), or "" when there is none.
std::string find_program(const std::string& name);

// What a shell command line printed (stdout and stderr together) and its exit status (0: success;
// -1: it could not be started).
struct CommandOutput {
  int status = -1;
  std::string output;
};
CommandOutput run_command(const std::string& shell_command);

}  // namespace gpulab::cli
