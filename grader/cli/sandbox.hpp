// Starts a child process (a lab runner, a compiler) under limits, and, when grading submissions,
// isolated: bubblewrap when it works here (no network, a read-only view of the machine with only
// the scratch folder writable, own PID namespace), a user of its own per job slot when the grader
// runs as root (so file permissions, the process limit and a final kill apply to it alone), and
// resource limits and timeouts always. `describe()` says in words what was in force.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/exit_status.hpp"

namespace gpulab::cli {

struct Limits {
  double wall_s = 0;                         // whole run; 0: none
  double idle_s = 0;                         // without growth of `progress_file`; 0: none
  double cpu_s = 0;                          // RLIMIT_CPU; 0: none
  std::uint64_t memory_bytes = 0;            // resident memory of all its processes; 0: none
  int processes = 0;                         // RLIMIT_NPROC beyond what the user runs already; 0: none
  std::uint64_t output_bytes = 64ull << 20;  // RLIMIT_FSIZE: no file (stdout included) grows past it
  std::uint64_t disk_bytes = 0;              // all files in its scratch folder together; 0: none
};

struct Isolation {
  bool bubblewrap = false;   // namespaces and the read-only view
  bool own_user = false;     // runs as a user of its own (the grader is root)
  bool network_off = false;  // own network namespace (bubblewrap, or unshare as root)
  std::string bubblewrap_path;
  std::string why_no_bubblewrap;  // when it is not used
  // One line for reports: which isolation was in force.
  std::string describe(const Limits& limits) const;
};

// How to run one command isolated; default-constructed: no isolation, only limits. Under bubblewrap
// the command sees the machine read-only, without /tmp, /home, /root and /run (where other users'
// files and sockets live), with `needed` shown again, `hidden` empty, `visible` read-only, and only
// `scratch` and `writable` writable.
struct SandboxSpec {
  const Isolation* isolation = nullptr;         // null: the check command's plain child process
  std::filesystem::path scratch;                // writable; HOME, TMPDIR and the working folder
  std::vector<std::filesystem::path> writable;  // more writable folders (a compiler's output)
  std::vector<std::filesystem::path> needed;    // shown read-only under the hidden system folders (the harness)
  std::vector<std::filesystem::path> hidden;    // shown empty (solutions, other students, results)
  std::vector<std::filesystem::path> visible;   // shown read-only inside hidden ones (the student's files, runner)
  std::optional<unsigned> user;                 // the uid of the job slot (root grader only)
  std::map<std::string, std::string> env;       // set on top of the passed-through environment
};

// Why the grader killed a child: it ran past its wall-clock limit, reported no progress for too
// long, used more memory or wrote more to its folder than allowed.
enum class KillReason { none, timeout, idle, memory, disk };

struct ChildExit {
  int status = 0;  // from waitpid
  int signal = 0;  // the signal that ended the command (bubblewrap reports it as exit 128 + signal)
  KillReason killed_for = KillReason::none;
  double wall_s = 0;
  std::uint64_t peak_memory_bytes = 0;
  int peak_processes = 0;
  bool killed() const { return killed_for != KillReason::none; }
  bool exited_ok() const;  // exited with status 0 and was not killed
  // Exited by itself (not killed by the grader) with `s`.
  bool exited_with(ExitStatus s) const;
};

// Finds out once which isolation this machine allows (bubblewrap actually tried, root or not).
Isolation detect_isolation();

// Runs `argv` with stdout and stderr appended to `output`, waits, and enforces `limits`; kills
// every process the command started when it ends or is killed. The grader opens `output` and
// `progress_file` itself (never through a link); an isolated command gets the progress file as
// descriptor 3 (/dev/fd/3), so it needs no path to it. `input` (at most 4 KiB) is the command's standard
// input, read from a pipe (how the runner gets its seed: never in argv or the environment); empty:
// /dev/null.
ChildExit run_isolated(const std::vector<std::string>& argv, const std::filesystem::path& output, const Limits& limits,
                       const SandboxSpec& spec, const std::filesystem::path& progress_file = {},
                       const std::string& input = {});

// Kills every process `uid` runs (but `except`, which the caller reaps) and waits until none is left.
// Only for a sandbox user this grader holds (machine_lock.hpp): it is the one place that kills by user.
void kill_processes_of_user(unsigned uid, int except = 0);

// Gives `path` and everything under it to `uid` (the job slot's user), so it can write there.
void give_to_user(const std::filesystem::path& path, unsigned uid);

}  // namespace gpulab::cli
