#include "early_exit.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <fmt/format.h>

#include <cstring>

namespace gpulab::cli {

std::string signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV, a segmentation fault";
    case SIGBUS: return "SIGBUS, a bus error";
    case SIGFPE: return "SIGFPE, an arithmetic error such as an integer division by zero";
    case SIGABRT: return "SIGABRT, an abort (an uncaught exception or a failed assert)";
    case SIGILL: return "SIGILL, an illegal instruction";
    case SIGXFSZ: return "SIGXFSZ: it printed or wrote more than the output limit (a print in a loop?)";
    case SIGXCPU: return "SIGXCPU: it used more than its CPU time limit (a busy loop in host code?)";
    case SIGKILL: return "SIGKILL, killed from outside (out of memory?)";
    default: return fmt::format("signal {} ({})", sig, strsignal(sig));
  }
}

namespace {

double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / double(1ull << 30); }

// Where the runner was, as a phrase after what happened: its case, the build of the student's kernels,
// or its start-up before any kernel ran.
std::string place_of(const EarlyExitFacts& f) {
  if (!f.current_case.empty()) return fmt::format(" in case {}", f.current_case);
  if (!f.current_task.empty()) return fmt::format(" in task {}, before its first case", f.current_task);
  switch (f.stage) {
    case RunnerStage::loading:
      return " before it began, while the constructors of global objects ran (no kernel had run)";
    case RunnerStage::opening_device:
    case RunnerStage::device_open: return " while it opened the device, before any kernel ran";
    case RunnerStage::building_kernels:
      return " while the device's compiler (the OpenCL driver) built your kernels, before any of them ran";
    case RunnerStage::ready: break;
  }
  return f.case_begun ? "" : " before any of your kernels ran";
}

// What to look at after a crash, by where it happened: only a crash in a case can be a kernel's
// out-of-bounds access.
std::string crash_hint(const EarlyExitFacts& f) {
  if (!f.current_case.empty() || !f.current_task.empty() || f.case_begun)
    return "on a CPU OpenCL device an out-of-bounds access in a kernel crashes the process: check the bounds test "
           "of every work-item; in host code, check pointers and sizes";
  switch (f.stage) {
    case RunnerStage::loading:
      return "a global (static) object in your files whose constructor fails (an uncaught exception, a failed "
             "assert) crashes the program before it starts: do that work inside the lab's functions";
    case RunnerStage::building_kernels:
      return "the driver itself failed on your .cl file instead of reporting an error: look at the warnings and "
             "errors make check shows for it, and simplify what they point at (a kernel whose build prints "
             "thousands of messages can do this)";
    case RunnerStage::opening_device:
    case RunnerStage::device_open:
    case RunnerStage::ready: break;
  }
  return "if your files start work before the lab's functions are called (a global "
         "object's constructor), move it into them; otherwise the device's driver failed, so tell your instructor";
}

// Killed by the grader: for no progress, past the lab's time, or over a disk or memory limit.
EarlyExit explain_kill(const EarlyExitFacts& f, const std::string& where) {
  const ChildExit& e = f.exit;
  switch (e.killed_for) {
    case KillReason::idle: {
      // Filling gigabytes page by page is slow on a loaded machine: the watchdog can fire before the
      // memory limit does, and then the memory, not a hung kernel, is the likely story.
      const bool holding_memory = f.limits.memory_bytes && e.peak_memory_bytes * 2 > f.limits.memory_bytes;
      const std::string why =
          f.stage == RunnerStage::building_kernels && f.current_task.empty()
              ? "the device's compiler got no further with your .cl file (a loop it unrolls without end, a huge "
                "constant array?)"
          : holding_memory ? fmt::format(
                                 "its processes held {:.1f} GiB of memory (the limit is {:.1f} GiB): a huge or "
                                 "leaking host allocation?",
                                 gib(e.peak_memory_bytes), gib(f.limits.memory_bytes))
                           : "an infinite loop, or a barrier (__syncthreads / barrier) that not every thread of the "
                             "block reaches, e.g. inside an if";
      return {Status::timeout,
              fmt::format("timed out after {:.0f} s without progress{} — {}", f.idle_timeout_s, where, why)};
    }
    case KillReason::timeout:
      return {Status::timeout,
              fmt::format("stopped after {:.0f} s, the time limit of the whole lab{}", f.lab_time_limit_s, where)};
    case KillReason::disk:
      return {Status::crashed, fmt::format("stopped{}: it wrote more than {} MiB of files, the limit — files written "
                                           "in a loop?",
                                           where, f.limits.disk_bytes >> 20)};
    case KillReason::memory:
      return {Status::crashed, fmt::format("stopped{}: its processes used more than {:.1f} GiB of memory, the limit — "
                                           "a huge or leaking host allocation?",
                                           where, gib(f.limits.memory_bytes))};
    case KillReason::none: break;
  }
  return {};
}

// Ended by itself: a signal, a setup error, a sandbox or runner that would not start, or an exit call.
EarlyExit explain_own_end(const EarlyExitFacts& f, const std::string& where) {
  const ChildExit& e = f.exit;
  if (e.signal == SIGXFSZ && f.stage == RunnerStage::building_kernels && f.current_task.empty())
    return {Status::crashed,
            fmt::format("the runner was stopped{}: the driver's build log (its messages about your .cl file) passed "
                        "the output limit of {} MiB per file — fix the warnings and errors make check shows for it",
                        where, f.limits.output_bytes >> 20)};
  if (e.signal == SIGXFSZ || e.signal == SIGXCPU)
    return {Status::crashed, fmt::format("the runner was stopped with {}{}", signal_text(e.signal), where)};
  if (e.signal)
    return {Status::crashed,
            fmt::format("the runner crashed with {}{} — {}", signal_text(e.signal), where, crash_hint(f))};
  if (!f.setup_error.empty()) return {Status::error, f.setup_error};
  if (e.exited_with(ExitStatus::cannot_start))
    return {Status::error, fmt::format("the sandbox could not start the runner: {}", sandbox_complaint(f.output_tail))};
  if (e.exited_with(ExitStatus::cannot_execute))
    return {Status::error, fmt::format("cannot execute the runner {}: {}", f.runner, sandbox_complaint(f.output_tail))};
  if (WIFEXITED(e.status) && !e.exited_with(ExitStatus::device_lost))
    return {Status::crashed, fmt::format("the runner exited with status {}{} before reporting (did student code call "
                                         "exit?)",
                                         WEXITSTATUS(e.status), where)};
  return {};
}

}  // namespace

EarlyExit explain_early_exit(const EarlyExitFacts& f) {
  const std::string where = place_of(f);
  const ChildExit& e = f.exit;
  EarlyExit out = e.killed() ? explain_kill(f, where) : explain_own_end(f, where);
  out.grader_side = e.exited_with(ExitStatus::cannot_start) || e.exited_with(ExitStatus::cannot_execute) ||
                    (e.exited_with(ExitStatus::setup_error) && !f.setup_error.empty());
  // A runner is one process (three inside bubblewrap): many more mean code that forks in a loop.
  if (f.exit.peak_processes > 8)
    out.message += fmt::format(" (it had started {} processes{}: a fork bomb?)", f.exit.peak_processes,
                               f.limits.processes ? fmt::format(", the limit is {}", f.limits.processes) : "");
  return out;
}

}  // namespace gpulab::cli
