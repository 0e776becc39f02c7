#include "sandbox.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "files.hpp"
#include "gpulab/text.hpp"

extern char** environ;

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// What the child keeps of the grader's environment: tools, locale, and the settings that pick and
// configure the GPU and OpenCL drivers.
bool passes_through(const std::string& name) {
  static const char* exact[] = {"PATH",
                                "LANG",
                                "LC_ALL",
                                "LD_LIBRARY_PATH",
                                "CUDA_VISIBLE_DEVICES",
                                "CUDA_HOME",
                                "OCL_ICD_VENDORS",
                                "OCL_ICD_FILENAMES",
                                "OPENCL_VENDOR_PATH",
                                "NO_COLOR"};
  for (const char* e : exact)
    if (name == e) return true;
  return name.rfind("POCL_", 0) == 0 || name.rfind("NVIDIA_", 0) == 0 || name.rfind("GPULAB_", 0) == 0;
}

// The environment the grader started with, split into names and values. Children get this, not the
// live environment: libraries may rewrite theirs in place (the Khronos OpenCL ICD loader splits
// OCL_ICD_FILENAMES on ':' inside environ, so a runner started after the first OpenCL call saw only
// the first of its drivers). Taken before main, when no library has run.
const std::vector<std::pair<std::string, std::string>> startup_environment = [] {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos) env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}();

std::vector<std::string> child_environment(const SandboxSpec& spec) {
  std::map<std::string, std::string> env;
  for (const auto& [name, value] : startup_environment)
    if (!spec.isolation || passes_through(name)) env[name] = value;
  if (spec.isolation && !spec.scratch.empty()) {
    const std::string home = (spec.scratch / "home").string(), tmp = (spec.scratch / "tmp").string();
    env["HOME"] = home;
    env["TMPDIR"] = tmp;
    env["XDG_CACHE_HOME"] = home + "/.cache";
    env["POCL_CACHE_DIR"] = tmp + "/pocl";
    env["CUDA_CACHE_PATH"] = tmp + "/nv";
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<std::string> bubblewrap_prefix(const Isolation& iso, const SandboxSpec& spec) {
  std::vector<std::string> a{iso.bubblewrap_path,
                             "--die-with-parent",
                             "--new-session",
                             "--unshare-net",
                             "--unshare-pid",
                             "--unshare-ipc",
                             "--unshare-uts",
                             "--hostname",
                             "gpulab-sandbox",
                             "--ro-bind",
                             "/",
                             "/",
                             "--dev-bind",
                             "/dev",
                             "/dev",
                             "--size",
                             "268435456",
                             "--tmpfs",
                             "/dev/shm",
                             "--proc",
                             "/proc"};
  // A tmpfs that hides a folder is writable and its pages are not in anyone's resident memory: keep
  // it small (shared memory above gets 256 MiB).
  std::error_code ec;  // a path the grader cannot see is left out, as a missing one is
  auto add = [&](const char* option, const fs::path& p) {
    if (!fs::is_directory(p, ec)) return;
    if (std::string_view(option) == "--tmpfs") a.insert(a.end(), {"--size", "1048576"});
    a.insert(a.end(), {option, p.string()});
  };
  auto add_bind = [&](const char* option, const fs::path& p) {
    if (fs::exists(p, ec)) a.insert(a.end(), {option, p.string(), p.string()});
  };
  // Other users' files, the instructor's home, sockets (a Docker or X11 socket needs no network).
  for (const char* system : {"/tmp", "/var/tmp", "/home", "/root", "/run"})
    if (!fs::is_symlink(system, ec)) add("--tmpfs", system);
  for (const auto& p : spec.needed) add_bind("--ro-bind", p);
  for (const auto& p : spec.hidden) add("--tmpfs", p);
  for (const auto& p : spec.visible) add_bind("--ro-bind", p);
  for (const auto& p : spec.writable) add_bind("--bind", p);
  if (!spec.scratch.empty())
    a.insert(a.end(), {"--bind", spec.scratch.string(), spec.scratch.string(), "--chdir", spec.scratch.string()});
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
      if (field == 20)
        fields >> info.threads;
      else
        fields >> skip;
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

// The descriptors a child gets: its standard input (a pipe; -1: /dev/null), the output file, and
// the progress file (-1: none). The grader closes its copies once the child has started.
struct ChildFiles {
  FileDescriptor input, output, progress;
};

// What the forked child needs to become the command, all of it made before the fork: the child of a
// grader with threads may only make system calls (another thread may have held the allocator's
// lock), and must never throw back into the grader's code.
struct ChildSetup {
  std::vector<char*> argv;         // the command as executed (bubblewrap's options first), null-ended
  std::vector<char*> environment;  // null-ended
  const ChildFiles& files;
  const Limits& limits;
  const SandboxSpec& spec;
  int nproc_limit = 0;  // RLIMIT_NPROC; 0: none
  pid_t grader = 0;     // the parent, which the child must not outlive
};

void redirect_descriptors(const ChildFiles& files) {
  const int stdin_fd = files.input.valid() ? files.input.get() : ::open("/dev/null", O_RDONLY);
  if (stdin_fd >= 0) ::dup2(stdin_fd, STDIN_FILENO);
  ::dup2(files.output.get(), STDOUT_FILENO);
  ::dup2(files.output.get(), STDERR_FILENO);
  if (files.progress.valid()) ::dup2(files.progress.get(), 3);
  // Nothing else of the grader's (other students' files being written, sockets) leaks into it.
  ::close_range(files.progress.valid() ? 4 : 3, ~0U, 0);
}

void set_resource_limits(const Limits& limits, int nproc_limit) {
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
}

// Leaves the network (without bubblewrap) and takes the job slot's user; exits the child when it cannot.
void enter_isolation(const SandboxSpec& spec, pid_t grader) {
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
  if (::getppid() != grader) {
    std::fprintf(stderr, "gpulab sandbox: the grader ended while the command was starting\n");
    ::_exit(exit_code(ExitStatus::cannot_start));
  }
  if (!spec.scratch.empty() && ::chdir(spec.scratch.c_str()) != 0) {
    std::fprintf(stderr, "gpulab sandbox: cannot enter the scratch folder %s as user %d (%s)\n", spec.scratch.c_str(),
                 static_cast<int>(::geteuid()), std::strerror(errno));
    ::_exit(exit_code(ExitStatus::cannot_start));
  }
}

// The command line as executed: bubblewrap's options first when it isolates; the strings `argv` of a
// ChildSetup points into.
std::vector<std::string> full_command(const std::vector<std::string>& argv, const SandboxSpec& spec) {
  const Isolation* iso = spec.isolation;
  std::vector<std::string> full = iso && iso->bubblewrap ? bubblewrap_prefix(*iso, spec) : std::vector<std::string>{};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

std::vector<char*> null_ended(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the forked child: becomes the command, or exits with a status that says why it could not, its
// reason on the command's standard error (the output file).
[[noreturn]] void exec_child(const ChildSetup& setup) {
  ::setsid();  // its own session and process group: killed as one, no controlling terminal
  redirect_descriptors(setup.files);
  set_resource_limits(setup.limits, setup.nproc_limit);
  enter_isolation(setup.spec, setup.grader);
  ::execve(setup.argv[0], setup.argv.data(), setup.environment.data());
  std::fprintf(stderr, "cannot execute %s: %s\n", setup.argv[0], std::strerror(errno));
  ::_exit(exit_code(ExitStatus::cannot_execute));
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
    const std::vector<std::string> probe{iso.bubblewrap_path,
                                         "--ro-bind",
                                         "/",
                                         "/",
                                         "--dev-bind",
                                         "/dev",
                                         "/dev",
                                         "--proc",
                                         "/proc",
                                         "--unshare-net",
                                         "--unshare-pid",
                                         "--die-with-parent",
                                         "--",
                                         "/bin/true"};
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

namespace {

// A pipe holding `input`, to be the child's standard input; -1 for none. Written whole before the
// child starts (it fits the pipe's buffer), so the grader never blocks on, or is signalled by, a child
// that does not read it.
int input_pipe(const std::string& input) {
  if (input.empty()) return -1;
  if (input.size() > 4096) throw std::invalid_argument("a child's input is limited to 4096 bytes");
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
  const bool written = ::write(ends[1], input.data(), input.size()) == static_cast<ssize_t>(input.size());
  ::close(ends[1]);
  if (!written) {
    ::close(ends[0]);
    throw std::runtime_error("cannot write a child's input to its pipe");
  }
  return ends[0];
}

// RLIMIT_NPROC for the command: its own user's limit, or what the grader's user runs already and more.
int process_limit(const Limits& limits, const SandboxSpec& spec) {
  if (limits.processes <= 0) return 0;
  return spec.user ? limits.processes : static_cast<int>(threads_of(::geteuid())) + limits.processes;
}

void prepare_scratch(const SandboxSpec& spec) {
  if (spec.scratch.empty()) return;
  fs::create_directories(spec.scratch / "home");
  fs::create_directories(spec.scratch / "tmp");
  if (spec.user) give_to_user(spec.scratch, *spec.user);
}

// Opened here, never through a link; a command with its own user may write them, nothing more.
void open_child_files(ChildFiles& files, const fs::path& output, const fs::path& progress_file,
                      const std::string& input, const SandboxSpec& spec) {
  files.input.reset(input_pipe(input));
  files.output.reset(::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!files.output.valid())
    throw std::runtime_error(fmt::format("cannot write {}: {}", output.string(), std::strerror(errno)));
  if (!progress_file.empty() && spec.isolation) {
    files.progress.reset(::open(progress_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!files.progress.valid())
      throw std::runtime_error(fmt::format("cannot write {}: {}", progress_file.string(), std::strerror(errno)));
  }
  if (spec.user) {
    if (::fchown(files.output.get(), *spec.user, *spec.user) != 0 ||
        (files.progress.valid() && ::fchown(files.progress.get(), *spec.user, *spec.user) != 0))
      std::fprintf(stderr, "gpulab sandbox: cannot give the output files to user %u\n", *spec.user);
  }
}

struct StartedChild {
  pid_t pid;
  std::chrono::steady_clock::time_point start;  // of its wall clock, just before the fork
};

// Forks the command; the grader's copies of its descriptors are closed once it has them.
StartedChild start_child(const std::vector<std::string>& argv, const fs::path& output, const Limits& limits,
                         const SandboxSpec& spec, const fs::path& progress_file, const std::string& input) {
  const int nproc_limit = process_limit(limits, spec);
  prepare_scratch(spec);
  ChildFiles files;
  open_child_files(files, output, progress_file, input, spec);
  std::vector<std::string> command = full_command(argv, spec), environment = child_environment(spec);
  const ChildSetup setup{null_ended(command), null_ended(environment), files, limits, spec, nproc_limit, ::getpid()};
  const auto start = std::chrono::steady_clock::now();
  std::lock_guard lock(children_lock);  // registered before any reaper can see it
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(setup);
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start a process: {}", std::strerror(errno)));
  waited_children.insert(pid);
  return {pid, start};
}

// Bytes of all regular files under `folder`.
std::uintmax_t bytes_under(const fs::path& folder) {
  std::uintmax_t used = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec)) used += it->file_size(ec);
  }
  return used;
}

// The watch over a running command: every poll checks it against its limits, and records its peaks.
class ChildWatch {
 public:
  using clock = std::chrono::steady_clock;

  ChildWatch(pid_t pid, const Limits& limits, const SandboxSpec& spec, const fs::path& progress_file,
             clock::time_point start)
      : pid_(pid),
        limits_(limits),
        spec_(spec),
        progress_file_(progress_file),
        start_(start),
        last_progress_(start),
        last_memory_check_(start - std::chrono::seconds(1)),
        last_disk_check_(start) {}

  // Sets exit.killed_for when the command broke a limit by `now`.
  void poll(clock::time_point now, ChildExit& exit) {
    note_progress(now);
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (limits_.wall_s > 0 && elapsed > limits_.wall_s) exit.killed_for = KillReason::timeout;
    if (limits_.idle_s > 0 && std::chrono::duration<double>(now - last_progress_).count() > limits_.idle_s)
      exit.killed_for = KillReason::idle;
    if (!exit.killed() && now - last_memory_check_ > std::chrono::milliseconds(200)) {
      last_memory_check_ = now;
      check_memory(exit);
    }
    if (!exit.killed() && limits_.disk_bytes && !spec_.scratch.empty() &&
        now - last_disk_check_ > std::chrono::milliseconds(500)) {
      last_disk_check_ = now;
      if (bytes_under(spec_.scratch) > limits_.disk_bytes) exit.killed_for = KillReason::disk;
    }
  }

 private:
  void note_progress(clock::time_point now) {
    if (progress_file_.empty()) return;
    std::error_code ec;
    const auto size = fs::file_size(progress_file_, ec);
    if (!ec && size != last_size_) last_size_ = size, last_progress_ = now;
  }

  // The resident memory of the command's whole process tree.
  void check_memory(ChildExit& exit) const {
    static const long page = ::sysconf(_SC_PAGESIZE);
    const auto table = process_table();
    const auto tree = descendants(table, pid_);
    std::uint64_t rss = 0;
    for (pid_t p : tree)
      if (auto it = table.find(p); it != table.end()) rss += it->second.rss_pages * static_cast<std::uint64_t>(page);
    exit.peak_memory_bytes = std::max(exit.peak_memory_bytes, rss);
    exit.peak_processes = std::max(exit.peak_processes, static_cast<int>(tree.size()));
    if (limits_.memory_bytes && rss > limits_.memory_bytes) exit.killed_for = KillReason::memory;
  }

  pid_t pid_;
  const Limits& limits_;
  const SandboxSpec& spec_;
  const fs::path& progress_file_;
  clock::time_point start_, last_progress_, last_memory_check_, last_disk_check_;
  std::uintmax_t last_size_ = 0;
};

// Waits for the command, killing it (and all it started) when it breaks a limit.
ChildExit wait_within_limits(pid_t pid, ChildWatch& watch, const SandboxSpec& spec) {
  ChildExit exit;
  for (;;) {
    if (::waitpid(pid, &exit.status, WNOHANG) == pid) break;
    watch.poll(ChildWatch::clock::now(), exit);
    if (exit.killed()) {
      kill_everything(pid, spec);
      ::waitpid(pid, &exit.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exit;
}

// The signal that ended the command; bubblewrap reports its command's signal as exit status 128 + signal.
int ending_signal(int status, const SandboxSpec& spec) {
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  if (spec.isolation && spec.isolation->bubblewrap && WIFEXITED(status) && WEXITSTATUS(status) > 128 &&
      WEXITSTATUS(status) < 128 + 65)
    return WEXITSTATUS(status) - 128;
  return 0;
}

}  // namespace

ChildExit run_isolated(const std::vector<std::string>& argv, const fs::path& output, const Limits& limits,
                       const SandboxSpec& spec, const fs::path& progress_file, const std::string& input) {
  const auto [pid, start] = start_child(argv, output, limits, spec, progress_file, input);
  ChildWatch watch(pid, limits, spec, progress_file, start);
  ChildExit exit = wait_within_limits(pid, watch, spec);
  {
    std::lock_guard lock(children_lock);
    waited_children.erase(pid);
  }
  kill_everything(pid, spec);  // whatever it left behind
  exit.signal = ending_signal(exit.status, spec);
  exit.wall_s = std::chrono::duration<double>(ChildWatch::clock::now() - start).count();
  return exit;
}

std::string limit_that_stopped(const ChildExit& e, std::uintmax_t output_size, const Limits& limits) {
  switch (e.killed_for) {
    case KillReason::timeout: return fmt::format("after {:.0f} s, the time limit", limits.wall_s);
    case KillReason::idle: return fmt::format("after {:.0f} s without progress, the time limit", limits.idle_s);
    case KillReason::memory:
      return fmt::format("when it used more than {:.1f} GiB of memory, the memory limit",
                         static_cast<double>(limits.memory_bytes) / double(1ull << 30));
    case KillReason::disk: return fmt::format("when its files passed {} MiB, the disk limit", limits.disk_bytes >> 20);
    case KillReason::none: break;
  }
  if (e.signal == SIGXFSZ || (limits.output_bytes && output_size >= limits.output_bytes))
    return fmt::format("when its messages reached {} MiB, the output limit per file", limits.output_bytes >> 20);
  if (e.signal == SIGXCPU) return fmt::format("after {:.0f} s of CPU time, the CPU limit", limits.cpu_s);
  return {};
}

std::string sandbox_complaint(const std::string& output) {
  std::string lines = printable(output);
  std::replace(lines.begin(), lines.end(), '\n', ' ');
  const auto first = lines.find_first_not_of(" \t"), last = lines.find_last_not_of(" \t");
  if (first == std::string::npos) return "it gave no reason";
  lines = lines.substr(first, last - first + 1);
  return lines.size() > 300 ? "…" + lines.substr(lines.size() - 300) : lines;
}

std::string access_denied(const fs::path& path, unsigned uid, int mode) {
  const pid_t pid = ::fork();
  if (pid == 0) {  // system calls only: the grader may have threads
    if (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(255);
    ::_exit(::access(path.c_str(), mode) == 0 ? 0 : errno & 0xff);
  }
  if (pid < 0) return fmt::format("cannot start a process to try ({})", std::strerror(errno));
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return "the process that tried it failed";
  const int code = WEXITSTATUS(status);
  if (code == 255) return fmt::format("cannot switch to user {} to try it", uid);
  return code == 0 ? "" : std::strerror(code);
}

namespace {

std::string owner_of(unsigned uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[1024];
  if (::getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found) return found->pw_name;
  return fmt::format("uid {}", uid);
}

// The grader's umask as /proc says it ("0022"), "" when it does not say.
std::string own_umask() {
  std::istringstream status(read_text("/proc/self/status"));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 6));
  return {};
}

}  // namespace

std::optional<AccessProblem> first_unmet_need(const std::vector<SandboxNeed>& needs, unsigned uid) {
  for (const auto& need : needs) {
    const std::string reason = access_denied(need.path, uid, need.mode);
    if (reason.empty()) continue;
    AccessProblem p{need, need.path, 0, "", reason, "", uid};
    // The first folder on the way that it cannot enter; when there is none, the need itself.
    fs::path on_the_way;
    for (const auto& part : need.path.parent_path()) {
      on_the_way /= part;
      if (!access_denied(on_the_way, uid, X_OK).empty()) {
        p.blocked_at = on_the_way;
        break;
      }
    }
    struct stat st {};
    if (::stat(p.blocked_at.c_str(), &st) == 0) {
      p.mode = st.st_mode & 07777;
      p.owner = owner_of(st.st_uid);
      // Folders the grader made itself have the mode its umask left them.
      const auto made = need.made_by_grader.lexically_normal().string();
      if (!made.empty() && p.blocked_at.lexically_normal().string().rfind(made, 0) == 0) p.umask = own_umask();
    }
    return p;
  }
  return std::nullopt;
}

std::string describe(const AccessProblem& p) {
  const bool on_the_way = p.blocked_at != p.need.path;
  std::string fix = on_the_way
                        ? fmt::format("let other users pass through {} without listing it: chmod o+x {}",
                                      p.blocked_at.string(), shell_quote(p.blocked_at.string()))
                        : fmt::format("let other users read it: chmod -R o+rX {}", shell_quote(p.need.path.string()));
  if (!p.need.alternative.empty()) fix += "; or " + p.need.alternative;
  if (!p.umask.empty() && p.umask != "0022" && p.umask != "0002")
    fix = fmt::format("run gpulab with umask 022 (it is {} now, so the folders it makes are private); or {}", p.umask,
                      fix);
  return fmt::format(
      "the sandbox users (uids without an account, one per job, such as {}) cannot reach {} {} ({}): {} is mode "
      "{:04o}, owner {}. Nothing was graded. Fix: {}",
      p.uid, p.need.what, (p.need.shown.empty() ? p.need.path : p.need.shown).string(), p.reason, p.blocked_at.string(),
      p.mode, p.owner, fix);
}

}  // namespace gpulab::cli
