// Which of a lab's student functions each task runs: from the task's launch function (lab.toml's
// `function`) to the helpers it calls and the kernels it launches, and from those kernels to their
// device functions. Read from the sources with the barrier check's lexer (barrier_check.hpp), not
// from the compiled code, so it also works where the build failed or no GPU is there.
//
// A name in a body reaches every function of that name in the files of the same language (.cu and
// the OpenCL host .cpp are one, .cl the other); an OpenCL kernel is reached by a string literal in
// the host code that is its name, or the start of it ("gaussian_rows_r" + std::to_string(radius)).
// Dispatch the lexer cannot follow (a table of function pointers, a name built from pieces that are
// not literals) leaves a task reaching no kernel: `kernels_known` is then false, and each use of the
// map says what it assumes.
//
// Two uses: a barrier that the check proves divergent fails the tasks that reach it
// (barrier_verdict.hpp), and the sanitizer gate runs by default for the tasks whose kernels use
// shared memory or barriers (sanitizer.hpp, plan_sanitizer).
#pragma once
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "barrier_check.hpp"
#include "gpulab/manifest.hpp"

namespace gpulab::cli {

struct TaskReach {
  bool found = false;               // its launch function is defined in the lab's files
  bool kernels_known = false;       // and it reaches at least one kernel
  std::set<std::string> functions;  // every function it reaches, its own included
  bool shared_or_barrier = false;   // one of them uses shared memory or a barrier (or a macro could)
};

struct KernelMap {
  std::map<std::string, TaskReach> tasks;  // by task name
  // Shared memory or a barrier outside every function body of a device file (a macro, file scope).
  bool shared_or_barrier_elsewhere = false;
};

// The lab's source files for `backend` by name ("transpose.cu") and their text; a file missing or
// unreadable is left out.
std::map<std::string, std::string> read_lab_sources(const Manifest& manifest, const std::string& backend,
                                                    const std::filesystem::path& student_dir);

// The map of `sources` (file name -> text) for the manifest's tasks.
KernelMap map_kernels(const Manifest& manifest, const std::map<std::string, std::string>& sources);

}  // namespace gpulab::cli
