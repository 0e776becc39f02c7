// The scans of a student's lab files before they compile: forbidden libraries and host calls, includes
// that leave the lab, inline assembly (each refuses the build, with file:line), and the barrier check
// (warnings that do not). A first, friendlier net: the compiled objects are then held to the allowlist.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/manifest.hpp"

namespace gpulab::cli {

// Something in a student file that is worth fixing but does not stop the build: a barrier that
// not every thread reaches (barrier_check.hpp). A proven one fails the tasks that run it as unsafe
// code (barrier_verdict.hpp); the others stay warnings.
struct SourceWarning {
  std::string file;  // as the student names it: "02-transpose/transpose.cu"
  int line = 0;
  std::string message;
  std::string function;  // the kernel or helper it is in
  bool proven = false;   // BarrierFinding::proven
};

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

// Why the scans refuse a lab's files: one line naming the first use and why, and every use as
// "file:line: forbidden: what".
struct ScanRefusal {
  std::string message, log;
};
// The scans of `files` (the lab's student files, under `student_dir`), in file order; none: they pass.
std::optional<ScanRefusal> scan_sources(const Manifest& manifest, const std::vector<std::string>& files,
                                        const std::filesystem::path& student_dir);

// The barrier check of the lab's kernel files (.cu, .cl) among `files`, each named `<lab id>/<file>`.
std::vector<SourceWarning> find_source_warnings(const Manifest& manifest, const std::vector<std::string>& files,
                                                const std::filesystem::path& student_dir);
// "02-transpose/transpose.cu:41: __syncthreads() under ...": one line each, as LabRun::warnings carries them.
std::vector<std::string> warning_lines(const std::vector<SourceWarning>& warnings);

}  // namespace gpulab::cli
