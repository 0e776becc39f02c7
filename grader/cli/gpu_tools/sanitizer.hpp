// The sanitizer gate (`gpulab check --sanitize`, `gpulab grade`, CUDA): every task's visible
// correctness cases (up to the manifest's sanitize_max_size) run again under NVIDIA's
// compute-sanitizer, once per tool (memcheck, racecheck, synccheck, initcheck), in runners of their
// own without guard zones, no timing and no calibration. `gpulab grade` runs it by default, with
// racecheck and synccheck, for the tasks whose kernels use shared memory or barriers (plan_sanitizer).
// What a tool reports in the student's code becomes a result of its own (Status::unsafe_code) that
// names the kind of error, the kernel, the student's file:line and the concept to look at: a race
// that gives the right answer on today's GPU gives a wrong one on next year's.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernel_map.hpp"
#include "student_build.hpp"
#include "supervisor.hpp"

namespace gpulab::cli {

struct SanitizerFinding {
  std::string tool;    // memcheck, racecheck, synccheck, initcheck
  std::string kind;    // "out-of-bounds global write", "shared-memory read-after-write hazard", ...
  std::string report;  // the tool's own first line
  std::string kernel;  // the kernel's name, without its parameters
  std::string file;    // where the access is, as the tool names it (a path)
  int line = 0;
  std::string other_file;  // a race's second access
  int other_line = 0;
  std::string thread;  // "thread (32,0,0) in block (3,0,0)", when the tool says
  std::string advice;  // what to look at, for a student
};

// The findings in a compute-sanitizer log (its --log-file), in order, one per distinct place.
std::vector<SanitizerFinding> parse_sanitizer_log(const std::string& log, const std::string& tool);

// Whether a finding is in the student's code: its file is one of `student_files` (compared by path
// below `student_dir`, or by name when the tool printed a relative one), or, without a file, its
// kernel is defined in one of them.
bool in_student_code(const SanitizerFinding& finding, const std::filesystem::path& student_dir,
                     const std::vector<std::string>& student_files);

// "out-of-bounds global write in kernel hello_kernel at 00-hello/hello.cu:25 (memcheck)": where
// paths under `student_dir` are shown as `shown_dir`/file.
std::string describe(const SanitizerFinding& finding, const std::filesystem::path& student_dir,
                     const std::string& shown_dir);

struct SanitizerGate {
  std::string sanitizer;  // compute-sanitizer's path
  std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
  std::vector<std::string> student_files;  // the lab's files for the backend, relative to the lab folder
  std::string shown_dir;                   // how reports name the lab folder ("02-transpose")
  int parallel = 4;                        // sanitizer runs at once (each is one runner process)
  // Set: one run per tool for all the tasks, each finding going to the tasks that reach its kernel
  // (to all of them when none does, as far as the map can follow). Empty: one run per task and tool.
  std::optional<KernelMap> kernels;
};

// The tools `gpulab grade` runs by default: the two that see what a GPU hides and guard zones cannot
// (races on shared memory, barriers not every thread reaches). memcheck and initcheck come with --sanitize.
const std::vector<std::string>& default_sanitizer_tools();

// How a batch uses the gate: by default (automatic) on CUDA, the default tools for the tasks whose
// kernels use shared memory or barriers; `all` (--sanitize) every tool for every task; `off`
// (--no-sanitize) never. On OpenCL there is no compute-sanitizer: automatic does nothing there.
enum class SanitizeMode { automatic, all, off };

struct SanitizerPlan {
  std::vector<std::string> tasks;  // the tasks to run under the gate, in the order given
  std::vector<std::string> tools;
  std::vector<std::string>
      left_out;  // the tasks not run under it: none of their kernels uses shared memory or barriers
};

// Which of `passed` (the tasks that passed: the gate only ever takes points away) one lab's gate
// runs, and with which tools. A task whose kernels the map cannot find counts as using both.
SanitizerPlan plan_sanitizer(SanitizeMode mode, const std::string& backend, const KernelMap& kernels,
                             const std::vector<std::string>& passed);

// The gate for `backend` with this toolchain's compute-sanitizer; throws a message naming the fix
// when the backend is not CUDA or the tool is missing.
SanitizerGate make_sanitizer_gate(const Toolchain& toolchain, const std::string& backend);

// Runs the gate over `base.tasks` (every task when empty) with `base`'s runner, manifest, seed and
// limits. Each task's result: passed (every case right, no finding), unsafe_code (findings, listed
// in its details), or the failure of the cases themselves under the sanitizer.
LabRun sanitize_lab(const RunRequest& base, const SanitizerGate& gate);

// A graded lab after its gate: a task that passed and has findings loses its points to them.
void apply_sanitizer_gate(LabRun& graded, const LabRun& gate);

}  // namespace gpulab::cli
