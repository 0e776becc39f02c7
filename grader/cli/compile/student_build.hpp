// Builds a student's files for one lab and backend: the scans first (source_scan.hpp), then each file
// compiled with the compilers CMake recorded (toolchain.hpp) and held to the allowlist, and linked with
// the prebuilt harness into the lab's runner executable.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "files.hpp"
#include "gpulab/manifest.hpp"
#include "source_scan.hpp"
#include "toolchain.hpp"

namespace gpulab::cli {

struct BuildResult {
  bool ok = false;
  bool rejected = false;                // refused by a scan or the allowlist, not a compiler error
  std::filesystem::path runner;         // the executable, when ok
  std::string message;                  // one line: what failed
  std::string log;                      // the compiler's output, trimmed to the errors
  std::vector<SourceWarning> warnings;  // found before compiling; set whether or not the build succeeds
};

// What a compiler (or nm, objdump, the linker) run for a build gave: its exit status (0: success),
// what it printed, and the limit the grader stopped it at, as a phrase ("when its messages reached
// 16 MiB, the output limit per file"), "" when it ended by itself.
struct BuildCommandOutput {
  int status = -1;
  std::string output;
  std::string stopped_by;
  BuildCommandOutput() = default;
  BuildCommandOutput(CommandOutput c) : status(c.status), output(std::move(c.output)) {}  // NOLINT: unstopped
};

// Runs a shell command line for a build (run_command, files.hpp, unless a test or the batch's
// sandbox gives another).
using CommandRunner = std::function<BuildCommandOutput(const std::string& shell_command)>;

// `student_dir` holds the lab's student files; objects go under `work_dir`. Compilers run through
// `run` (batch grading passes its sandbox), or directly when it is empty.
BuildResult build_lab(const Toolchain& toolchain, const Manifest& manifest, const std::string& backend,
                      const std::filesystem::path& student_dir, const std::filesystem::path& work_dir,
                      const CommandRunner& run = {});

// The message of a compile that failed: "FILE does not compile", or, when the grader stopped the
// compiler at a limit (BuildCommandOutput::stopped_by), which limit and what to fix.
std::string compile_failure_message(const std::string& file, const BuildCommandOutput& compile);

// Keeps the lines of compiler output that matter (errors and their context), at most `max_lines`,
// with absolute paths under `strip_prefix` made relative.
std::string trim_compiler_output(const std::string& output, const std::string& strip_prefix,
                                 std::size_t max_lines = 30);

}  // namespace gpulab::cli
