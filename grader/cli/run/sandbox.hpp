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

// The limit that stopped a command that wrote `output_size` bytes to its output file, as a phrase
// after "stopped" ("after 300 s, the time limit"; "when its messages reached 16 MiB, the output limit
// per file"); "" when it ended by itself. A compiler that fills the output file dies of SIGXFSZ or
// fails writing, so a full file counts as stopped whatever its status.
std::string limit_that_stopped(const ChildExit& exit, std::uintmax_t output_size, const Limits& limits);

// What a command that could not start said about it (the sandbox's or bubblewrap's complaint, the end
// of its output), on one line; "it gave no reason" when it said nothing.
std::string sandbox_complaint(const std::string& output);

// Kills every process `uid` runs (but `except`, which the caller reaps) and waits until none is left.
// Only for a sandbox user this grader holds (machine_lock.hpp): it is the one place that kills by user.
void kill_processes_of_user(unsigned uid, int except = 0);

// Gives `path` and everything under it to `uid` (the job slot's user), so it can write there.
void give_to_user(const std::filesystem::path& path, unsigned uid);

// A uid without an account, like the job slots' (lease_sandbox_user, machine_lock.hpp): what it may
// reach, they may; a batch asks as it before it starts.
inline constexpr unsigned kProbeUser = 61999;

// Why `uid` cannot access `path` in `mode` (access(2): R_OK, W_OK, X_OK, or F_OK to reach it), or ""
// when it can. Asked by a child that takes the uid without supplementary groups, as a sandbox user
// runs, so permission bits, ACLs and the file system's own rules (root squash) all count.
std::string access_denied(const std::filesystem::path& path, unsigned uid, int mode);

// Something the sandbox users must reach for a batch to grade anyone.
struct SandboxNeed {
  std::filesystem::path path;
  int mode = 0;                          // access(2) mode: R_OK, X_OK...
  std::string what;                      // "the scratch folder, where each submission is built and run"
  std::string alternative;               // another fix than opening the folder: "give --out a folder outside it"
  std::filesystem::path made_by_grader;  // the outermost folder on the way the grader made itself, if any
  std::filesystem::path shown;           // what a message names, when not `path` (a probe made inside it)
};

// Where a sandbox user is stopped on its way to a need: the folder it cannot enter, or the need itself.
struct AccessProblem {
  SandboxNeed need;
  std::filesystem::path blocked_at;  // the first folder on the way it cannot enter, or need.path
  unsigned mode = 0;                 // of blocked_at: its permission bits
  std::string owner;                 // of blocked_at: a user name, or the uid
  std::string reason;                // the error access(2) gave
  std::string umask;                 // the grader's ("0077") when blocked_at is a folder the grader made
  unsigned uid = 0;                  // who was asked
};

// The first of `needs` that `uid` cannot meet, with where it is blocked; empty when it meets them all.
std::optional<AccessProblem> first_unmet_need(const std::vector<SandboxNeed>& needs, unsigned uid);

// The refusal of a batch that its sandbox users could not work in: the folder, its mode and owner,
// and the fix.
std::string describe(const AccessProblem& problem);

}  // namespace gpulab::cli
