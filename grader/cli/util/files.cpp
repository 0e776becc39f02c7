#include "files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {
std::string read_all(std::ifstream& in) {
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

ScratchFolder::ScratchFolder(const std::string& prefix) {
  std::string name = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(name.data())) throw std::runtime_error(fmt::format("cannot create a temporary folder {}", name));
  path_ = name;
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (fs::is_regular_file(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

void FileDescriptor::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return read_all(in);
}

std::string read_text_or_throw(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  return read_all(in);
}

void write_text_atomically(const std::string& text, const fs::path& path) {
  fs::create_directories(path.parent_path());
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("cannot write {} (disk full?)", temporary.string()));
  }
  fs::rename(temporary, path);
}

CommandOutput run_command(const std::string& command) {
  CommandOutput c;
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return c;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) c.output.append(buffer.data(), n);
  c.status = ::pclose(pipe);
  return c;
}

FileLock::FileLock(const std::filesystem::path& file, Kind kind, bool wait)
    : file_(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
  if (!file_.valid())
    throw std::runtime_error(fmt::format("cannot open the lock {}: {}", file.string(), std::strerror(errno)));
  held_ = ::flock(file_.get(), (kind == Kind::shared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB)) == 0;
}

std::string now_utc() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown host";
  return name;
}

}  // namespace gpulab::cli
