// "Build, then supervise one lab": the student's files compiled against the harness, and on success the
// runner run by the caller's supervisor (`gpulab check`'s cached calibrations or sanitizer gate, a
// batch's GPU lock and sandbox). A build that fails becomes every selected task's result; a task whose
// kernel has a barrier the static check proves divergent is not run and fails as unsafe code
// (barrier_verdict.hpp).
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "lab_run.hpp"
#include "student_build.hpp"
#include "supervisor.hpp"

namespace gpulab::cli {

struct LabJob {
  const Toolchain* toolchain = nullptr;
  const Manifest* manifest = nullptr;
  std::string backend;
  std::filesystem::path student_dir;  // the lab's student files
  std::filesystem::path build_dir;    // objects and the runner
  std::vector<std::string> tasks;     // the selected tasks (select_tasks)
  CommandRunner compile;              // empty: the compilers run directly
  // The run's settings (device, seed, limits, work folder, sandbox...); runner, manifest, student
  // folder, backend and tasks are filled in from the job.
  RunRequest request;
  // Runs the built runner; empty: only build (the lab then has no tasks when the build succeeded).
  std::function<LabRun(const RunRequest&)> supervise;
};

// The lab's run, with the build's warnings and its compile time (PhaseTimes::compile_s).
LabRun build_and_supervise(const LabJob& job);

}  // namespace gpulab::cli
