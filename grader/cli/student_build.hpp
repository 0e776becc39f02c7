// Compiles a student's files for one lab and backend and links them with the prebuilt harness,
// giving the lab's runner executable. Uses the compilers and libraries CMake recorded in
// toolchain.json, so a submission compiles only its own files.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "files.hpp"
#include "gpulab/manifest.hpp"

namespace gpulab::cli {

struct Toolchain {
  std::filesystem::path repo;       // the pristine course repository (labs/ manifests, common/)
  std::filesystem::path build_dir;  // where toolchain.json and the harness libraries are
  nlohmann::json config;

  static Toolchain load(const std::filesystem::path& build_dir);
  bool has_backend(const std::string& backend) const;
};

// Something in a student file that is worth fixing but does not stop the build: a barrier that
// not every thread reaches (barrier_check.hpp).
struct SourceWarning {
  std::string file;  // as the student names it: "02-transpose/transpose.cu"
  int line = 0;
  std::string message;
};

struct BuildResult {
  bool ok = false;
  bool rejected = false;         // refused by a scan or the allowlist, not a compiler error
  std::filesystem::path runner;  // the executable, when ok
  std::string message;           // one line: what failed
  std::string log;               // the compiler's output, trimmed to the errors
  std::vector<SourceWarning> warnings;  // found before compiling; set whether or not the build succeeds
};

// Runs a shell command line and returns its exit status (0: success) and what it printed
// (run_command, files.hpp, unless a test or the batch's sandbox gives another).
using CommandRunner = std::function<CommandOutput(const std::string& shell_command)>;

// `student_dir` holds the lab's student files; objects go under `work_dir`. Compilers run through
// `run` (batch grading passes its sandbox), or directly when it is empty.
BuildResult build_lab(const Toolchain& toolchain, const Manifest& manifest, const std::string& backend,
                      const std::filesystem::path& student_dir, const std::filesystem::path& work_dir,
                      const CommandRunner& run = {});

// The barrier check of the lab's kernel files (.cu, .cl) among `files`, each named `<lab id>/<file>`.
std::vector<SourceWarning> find_source_warnings(const Manifest& manifest, const std::vector<std::string>& files,
                                                const std::filesystem::path& student_dir);
// "02-transpose/transpose.cu:41: __syncthreads() under ...": one line each, as LabRun::warnings carries them.
std::vector<std::string> warning_lines(const std::vector<SourceWarning>& warnings);

struct ForbiddenUse {
  int line;
  std::string what;  // the manifest's pattern that matched
};
// Where `source` mentions a forbidden pattern outside comments (case-insensitive), in line order. A
// pattern matches where an identifier starts (cublas: cublasSgemm, not mycublas); with
// `whole_words` it must also end there (fork, not forklift), and string literals do not count
// ("cannot open it" is a message, not a call).
std::vector<ForbiddenUse> find_forbidden(const std::string& source, const std::vector<std::string>& patterns,
                                         bool whole_words = false);

// What no lab file may call, whatever the lab: files, processes, threads, the network, dynamic loading.
// A first, friendlier net with line numbers; the compiled objects are then held to the allowlist
// (allowlist.hpp, grader/allowlist/), which refuses everything it does not name.
const std::vector<std::string>& host_calls_forbidden_everywhere();

// `#include` lines that reach outside the lab's own folder and the harness (absolute paths, "..").
std::vector<ForbiddenUse> find_escaping_includes(const std::string& source);

// Keeps the lines of compiler output that matter (errors and their context), at most `max_lines`,
// with absolute paths under `strip_prefix` made relative.
std::string trim_compiler_output(const std::string& output, const std::string& strip_prefix, std::size_t max_lines = 30);

}  // namespace gpulab::cli
