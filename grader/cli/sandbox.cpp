#include "sandbox.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// What the child keeps of the grader's environment: tools, locale, and the settings that pick and
// configure the GPU and OpenCL drivers.
bool passes_through(const std::string& name) {
  static const char* exact[] = {"PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME",
                                "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH", "NO_COLOR"};
  for (const char* e : exact)
    if (name == e) return true;
  return name.rfind("POCL_", 0) == 0 || name.rfind("NVIDIA_", 0) == 0 || name.rfind("GPULAB_", 0) == 0;
}

std::vector<std::string> child_environment(const SandboxSpec& spec) {
  std::map<std::string, std::string> env;
  if (spec.isolation) {
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const auto eq = entry.find('=');
      if (eq != std::string::npos && passes_through(entry.substr(0, eq))) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    if (!spec.scratch.empty()) {
      const std::string home = (spec.scratch / "home").string(), tmp = (spec.scratch / "tmp").string();
      env["HOME"] = home;
      env["TMPDIR"] = tmp;
      env["XDG_CACHE_HOME"] = home + "/.cache";
      env["POCL_CACHE_DIR"] = tmp + "/pocl";
      env["CUDA_CACHE_PATH"] = tmp + "/nv";
    }
  } else {
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const auto eq = entry.find('=');
      if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<std::string> bubblewrap_prefix(const Isolation& iso, const SandboxSpec& spec) {
  std::vector<std::string> a{iso.bubblewrap_path, "--die-with-parent", "--new-session", "--unshare-net",
                             "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "gpulab-sandbox",
                             "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--size", "268435456", "--tmpfs",
                             "/dev/shm", "--proc", "/proc"};
  // A tmpfs that hides a folder is writable and its pages are not in anyone's resident memory: keep
  // it small (shared memory above gets 256 MiB).
  auto add = [&](const char* option, const fs::path& p) {
    if (!fs::is_directory(p)) return;
    if (std::string_view(option) == "--tmpfs") a.insert(a.end(), {"--size", "1048576"});
    a.insert(a.end(), {option, p.string()});
  };
  auto add_bind = [&](const char* option, const fs::path& p) {
    if (fs::exists(p)) a.insert(a.end(), {option, p.string(), p.string()});
  };
  // Other users' files, the instructor's home, sockets (a Docker or X11 socket needs no network).
  for (const char* system : {"/tmp", "/var/tmp", "/home", "/root", "/run"})
    if (!fs::is_symlink(system)) add("--tmpfs", system);
  for (const auto& p : spec.needed) add_bind("--ro-bind", p);
  for (const auto& p : spec.hidden) add("--tmpfs", p);
  for (const auto& p : spec.visible) add_bind("--ro-bind", p);
  for (const auto& p : spec.writable) add_bind("--bind", p);
  if (!spec.scratch.empty()) a.insert(a.end(), {"--bind", spec.scratch.string(), spec.scratch.string(), "--chdir", spec.scratch.string()});
  a.push_back("--");
  return a;
}

struct ProcessInfo {
  pid_t ppid = 0;
  unsigned uid = 0;
  long threads = 1;
  std::uint64_t rss_pages = 0;
};

std::map<pid_t, ProcessInfo> process_table() {
  std::map<pid_t, ProcessInfo> table;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    ProcessInfo info;
    fields >> state >> info.ppid;
    std::string skip;
    for (int field = 5; field <= 23 && fields; ++field) {
      if (field == 20) fields >> info.threads;
      else fields >> skip;
    }
    fields >> info.rss_pages;  // field 24
    struct ::stat st;
    if (::stat(entry.path().c_str(), &st) == 0) info.uid = st.st_uid;
    table[static_cast<pid_t>(std::stoi(name))] = info;
  }
  return table;
}

std::vector<pid_t> descendants(const std::map<pid_t, ProcessInfo>& table, pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (const auto& [pid, info] : table) children[info.ppid].push_back(pid);
  std::vector<pid_t> out{root};
  for (std::size_t i = 0; i < out.size(); ++i)
    for (pid_t c : children[out[i]]) out.push_back(c);
  return out;
}

// RLIMIT_NPROC counts threads: what the grader's user runs already.
long threads_of(unsigned uid) {
  long n = 0;
  for (const auto& [pid, info] : process_table()) n += info.uid == uid ? info.threads : 0;
  return n;
}

int processes_of(unsigned uid, pid_t except = 0) {
  int n = 0;
  for (const auto& [pid, info] : process_table()) n += info.uid == uid && pid != except;
  return n;
}

// The children run_isolated is waiting for; any other child of the grader is an orphan that was
// handed to it as subreaper (a process the command left behind) and is reaped here.
std::mutex children_lock;
std::set<pid_t> waited_children;

void reap_orphans() {
  const pid_t self = ::getpid();
  for (const auto& [pid, info] : process_table()) {
    if (info.ppid != self) continue;
    {
      std::lock_guard lock(children_lock);
      if (waited_children.count(pid)) continue;
    }
    ::waitpid(pid, nullptr, WNOHANG);
  }
}

// Signals every process of `uid` from a child that takes that uid (kill(-1) as that user).
void kill_all_of_user(unsigned uid) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgid(uid) == 0 && ::setuid(uid) == 0)
      for (int round = 0; round < 3; ++round) ::kill(-1, SIGKILL);
    ::_exit(0);
  }
  if (pid > 0) ::waitpid(pid, nullptr, 0);
}

void kill_everything(pid_t child, const SandboxSpec& spec) {
  ::kill(-child, SIGKILL);
  for (int round = 0; round < 3; ++round) {
    const auto table = process_table();
    const auto tree = descendants(table, child);
    if (tree.size() <= 1 && !table.count(child)) break;
    for (pid_t p : tree) ::kill(p, SIGKILL);
  }
  if (spec.user) kill_processes_of_user(*spec.user, child);  // the caller reaps `child` itself
}

[[noreturn]] void exec_child(const std::vector<std::string>& argv, int input_fd, int output_fd, int progress_fd,
                             const Limits& limits, const SandboxSpec& spec, int nproc_limit, pid_t grader) {
  ::setsid();  // its own session and process group: killed as one, no controlling terminal
  const int stdin_fd = input_fd >= 0 ? input_fd : ::open("/dev/null", O_RDONLY);
  if (stdin_fd >= 0) ::dup2(stdin_fd, STDIN_FILENO);
  ::dup2(output_fd, STDOUT_FILENO);
  ::dup2(output_fd, STDERR_FILENO);
  if (progress_fd >= 0) ::dup2(progress_fd, 3);
  // Nothing else of the grader's (other students' files being written, sockets) leaks into it.
  ::close_range(progress_fd >= 0 ? 4 : 3, ~0U, 0);
  auto limit = [](int resource, rlim_t value) {
    const rlimit r{value, value};
    ::setrlimit(resource, &r);
  };
  if (limits.output_bytes) limit(RLIMIT_FSIZE, limits.output_bytes);
  if (limits.cpu_s > 0) {
    const rlimit r{static_cast<rlim_t>(limits.cpu_s), static_cast<rlim_t>(limits.cpu_s) + 5};
    ::setrlimit(RLIMIT_CPU, &r);
  }
  limit(RLIMIT_CORE, 0);
  if (nproc_limit > 0) limit(RLIMIT_NPROC, static_cast<rlim_t>(nproc_limit));

  const Isolation* iso = spec.isolation;
  if (iso && iso->network_off && !iso->bubblewrap && ::unshare(CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "gpulab sandbox: cannot leave the network (%s)\n", std::strerror(errno));
    ::_exit(exit_code(ExitStatus::cannot_start));
  }
  if (spec.user) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(*spec.user) != 0 || ::setuid(*spec.user) != 0) {
      std::fprintf(stderr, "gpulab sandbox: cannot switch to user %u (%s)\n", *spec.user, std::strerror(errno));
      ::_exit(exit_code(ExitStatus::cannot_start));
    }
  }
  // Dies with the grader, even without bubblewrap (set after the user switch, which clears it).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != grader) ::_exit(exit_code(ExitStatus::cannot_start));
  if (!spec.scratch.empty() && ::chdir(spec.scratch.c_str()) != 0) ::_exit(exit_code(ExitStatus::cannot_start));

  std::vector<std::string> full = iso && iso->bubblewrap ? bubblewrap_prefix(*iso, spec) : std::vector<std::string>{};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> args;
  for (auto& a : full) args.push_back(a.data());
  args.push_back(nullptr);
  auto env_strings = child_environment(spec);
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  ::execve(args[0], args.data(), env.data());
  std::fprintf(stderr, "cannot execute %s: %s\n", args[0], std::strerror(errno));
  ::_exit(exit_code(ExitStatus::cannot_execute));
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

// Whether `argv` runs and exits 0, optionally as `uid`; quiet.
bool succeeds(const std::vector<std::string>& argv, std::optional<unsigned> uid, bool new_net = false) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    if (new_net && ::unshare(CLONE_NEWNET) != 0) ::_exit(1);
    if (uid && (::setgroups(0, nullptr) != 0 || ::setgid(*uid) != 0 || ::setuid(*uid) != 0)) ::_exit(1);
    if (::chdir("/") != 0) ::_exit(1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(exit_code(ExitStatus::cannot_execute));
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

constexpr unsigned kProbeUser = 61999;  // a uid without an account, like the job slots' (see grade.cpp)

}  // namespace

bool ChildExit::exited_ok() const { return exited_with(ExitStatus::ok); }

bool ChildExit::exited_with(ExitStatus s) const {
  return !killed() && WIFEXITED(status) && WEXITSTATUS(status) == exit_code(s);
}

std::string Isolation::describe(const Limits& limits) const {
  std::string what;
  if (bubblewrap)
    what = "bubblewrap: no network, read-only view of the machine except its scratch folder, own PID namespace";
  else
    what = fmt::format("no bubblewrap ({}): {}", why_no_bubblewrap,
                       network_off ? "own network namespace (no network)" : "network NOT isolated");
  what += own_user ? "; a user of its own per job" : "; runs as the grader's user (files NOT protected)";
  std::vector<std::string> l;
  if (limits.wall_s > 0) l.push_back(fmt::format("{:.0f} s wall clock", limits.wall_s));
  if (limits.cpu_s > 0) l.push_back(fmt::format("{:.0f} s CPU", limits.cpu_s));
  if (limits.memory_bytes) l.push_back(fmt::format("{:.1f} GiB memory", limits.memory_bytes / double(1ull << 30)));
  if (limits.processes) l.push_back(fmt::format("{} processes", limits.processes));
  if (limits.output_bytes) l.push_back(fmt::format("{} MiB per output file", limits.output_bytes >> 20));
  if (limits.disk_bytes) l.push_back(fmt::format("{} MiB of files in its folder", limits.disk_bytes >> 20));
  return fmt::format("{}; limits: {}", what, fmt::join(l, ", "));
}

Isolation detect_isolation() {
  // Processes a command leaves behind become the grader's children, so they can be reaped and
  // never count against a job's process limit (a container's init may not reap them).
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  Isolation iso;
  const bool root = ::geteuid() == 0;
  iso.bubblewrap_path = find_program("bwrap");
  if (iso.bubblewrap_path.empty()) {
    iso.why_no_bubblewrap = "bwrap is not installed (Debian package bubblewrap)";
  } else {
    const std::vector<std::string> probe{iso.bubblewrap_path, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev",
                                         "--proc", "/proc", "--unshare-net", "--unshare-pid", "--die-with-parent",
                                         "--", "/bin/true"};
    if (root && succeeds(probe, kProbeUser)) {
      iso.bubblewrap = iso.own_user = true;
    } else if (succeeds(probe, std::nullopt)) {
      iso.bubblewrap = true;
    } else {
      iso.why_no_bubblewrap = "bwrap cannot create namespaces here (unprivileged user namespaces disabled?)";
    }
  }
  if (iso.bubblewrap) {
    iso.network_off = true;
    return iso;
  }
  if (root) {
    iso.own_user = succeeds({"/bin/true"}, kProbeUser);
    iso.network_off = succeeds({"/bin/true"}, std::nullopt, true);
  }
  return iso;
}

void kill_processes_of_user(unsigned uid, pid_t except) {
  // Killed processes count against the user's process limit until they are reaped: wait until none
  // is left, or the next command of this user could not even start.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    kill_all_of_user(uid);
    reap_orphans();
    if (processes_of(uid, except) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
}

void give_to_user(const fs::path& path, unsigned uid) {
  std::error_code ec;
  if (::lchown(path.c_str(), uid, uid) != 0) return;
  if (!fs::is_directory(fs::symlink_status(path))) return;
  for (auto it = fs::recursive_directory_iterator(path, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
    ::lchown(it->path().c_str(), uid, uid);
}

// A pipe holding `input`, to be the child's standard input; -1 for none. Written whole before the
// child starts (it fits the pipe's buffer), so the grader never blocks on, or is signalled by, a child
// that does not read it.
int input_pipe(const std::string& input) {
  if (input.empty()) return -1;
  if (input.size() > 4096) throw std::invalid_argument("a child's input is limited to 4096 bytes");
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
  const bool written = ::write(ends[1], input.data(), input.size()) == static_cast<ssize_t>(input.size());
  ::close(ends[1]);
  if (!written) {
    ::close(ends[0]);
    throw std::runtime_error("cannot write a child's input to its pipe");
  }
  return ends[0];
}

ChildExit run_isolated(const std::vector<std::string>& argv, const fs::path& output, const Limits& limits,
                       const SandboxSpec& spec, const fs::path& progress_file, const std::string& input) {
  int nproc_limit = 0;
  if (limits.processes > 0)
    nproc_limit = spec.user ? limits.processes : static_cast<int>(threads_of(::geteuid())) + limits.processes;
  if (!spec.scratch.empty()) {
    fs::create_directories(spec.scratch / "home");
    fs::create_directories(spec.scratch / "tmp");
    if (spec.user) give_to_user(spec.scratch, *spec.user);
  }

  // Opened here, never through a link; a command with its own user may write them, nothing more.
  const int input_fd = input_pipe(input);
  const int output_fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (output_fd < 0) {
    if (input_fd >= 0) ::close(input_fd);
    throw std::runtime_error(fmt::format("cannot write {}: {}", output.string(), std::strerror(errno)));
  }
  int progress_fd = -1;
  if (!progress_file.empty() && spec.isolation) {
    progress_fd = ::open(progress_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (progress_fd < 0) {
      ::close(output_fd);
      if (input_fd >= 0) ::close(input_fd);
      throw std::runtime_error(fmt::format("cannot write {}: {}", progress_file.string(), std::strerror(errno)));
    }
  }
  if (spec.user) {
    if (::fchown(output_fd, *spec.user, *spec.user) != 0 ||
        (progress_fd >= 0 && ::fchown(progress_fd, *spec.user, *spec.user) != 0))
      std::fprintf(stderr, "gpulab sandbox: cannot give the output files to user %u\n", *spec.user);
  }

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const pid_t grader = ::getpid();
  pid_t pid;
  {
    std::lock_guard lock(children_lock);  // registered before any reaper can see it
    pid = ::fork();
    if (pid == 0) exec_child(argv, input_fd, output_fd, progress_fd, limits, spec, nproc_limit, grader);
    if (pid > 0) waited_children.insert(pid);
  }
  ::close(output_fd);
  if (progress_fd >= 0) ::close(progress_fd);
  if (input_fd >= 0) ::close(input_fd);
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start a process: {}", std::strerror(errno)));

  ChildExit exit;
  auto last_progress = start;
  std::uintmax_t last_size = 0;
  auto last_memory_check = start - std::chrono::seconds(1), last_disk_check = start;
  const long page = ::sysconf(_SC_PAGESIZE);
  for (;;) {
    if (::waitpid(pid, &exit.status, WNOHANG) == pid) break;
    const auto now = clock::now();
    if (!progress_file.empty()) {
      std::error_code ec;
      const auto size = fs::file_size(progress_file, ec);
      if (!ec && size != last_size) last_size = size, last_progress = now;
    }
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (limits.wall_s > 0 && elapsed > limits.wall_s) exit.killed_for = KillReason::timeout;
    if (limits.idle_s > 0 && std::chrono::duration<double>(now - last_progress).count() > limits.idle_s) exit.killed_for = KillReason::idle;
    if (!exit.killed() && now - last_memory_check > std::chrono::milliseconds(200)) {
      last_memory_check = now;
      const auto table = process_table();
      const auto tree = descendants(table, pid);
      std::uint64_t rss = 0;
      for (pid_t p : tree)
        if (auto it = table.find(p); it != table.end()) rss += it->second.rss_pages * static_cast<std::uint64_t>(page);
      exit.peak_memory_bytes = std::max(exit.peak_memory_bytes, rss);
      exit.peak_processes = std::max(exit.peak_processes, static_cast<int>(tree.size()));
      if (limits.memory_bytes && rss > limits.memory_bytes) exit.killed_for = KillReason::memory;
    }
    if (!exit.killed() && limits.disk_bytes && !spec.scratch.empty() &&
        now - last_disk_check > std::chrono::milliseconds(500)) {
      last_disk_check = now;
      std::uintmax_t used = 0;
      std::error_code ec;
      for (auto it = fs::recursive_directory_iterator(spec.scratch, fs::directory_options::skip_permission_denied, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (it->is_regular_file(ec)) used += it->file_size(ec);
      }
      if (used > limits.disk_bytes) exit.killed_for = KillReason::disk;
    }
    if (exit.killed()) {
      kill_everything(pid, spec);
      ::waitpid(pid, &exit.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    std::lock_guard lock(children_lock);
    waited_children.erase(pid);
  }
  kill_everything(pid, spec);  // whatever it left behind
  if (WIFSIGNALED(exit.status))
    exit.signal = WTERMSIG(exit.status);
  else if (spec.isolation && spec.isolation->bubblewrap && WIFEXITED(exit.status) && WEXITSTATUS(exit.status) > 128 &&
           WEXITSTATUS(exit.status) < 128 + 65)
    exit.signal = WEXITSTATUS(exit.status) - 128;
  exit.wall_s = std::chrono::duration<double>(clock::now() - start).count();
  return exit;
}

}  // namespace gpulab::cli
