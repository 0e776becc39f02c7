// How the grader's own child processes say what happened through their exit status: the lab
// runner (grader/runner/main.cpp) and a sandboxed child that could not start (grader/cli/run/sandbox.cpp),
// read by the supervisor and the batch (grader/cli/).
#pragma once

namespace gpulab {

enum class ExitStatus : int {
  ok = 0,
  setup_error = 2,      // the runner could not begin (request, manifest, device): it says why on stderr
  device_lost = 3,      // a task's launch lost the device: the task is reported, the rest were not run
  cannot_start = 126,   // the sandbox could not set the child up (namespaces, limits, working folder)
  cannot_execute = 127  // exec failed: the program is missing or not executable
};

constexpr int exit_code(ExitStatus s) { return static_cast<int>(s); }

}  // namespace gpulab
