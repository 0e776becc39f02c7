// Runs a lab's runner in child processes under a progress timeout, and turns crashes, hangs and
// device faults into task results, starting a fresh process for the tasks after a failure.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/manifest.hpp"
#include "gpulab/metrics.hpp"
#include "gpulab/results.hpp"
#include "sandbox.hpp"

namespace gpulab::cli {

struct LabRun {
  std::string id, name, title, backend;
  nlohmann::json device;              // the runner's "device" event, when it got that far
  Calibration calibration;            // empty rates: none was measured
  std::vector<TaskResult> tasks;      // the selected tasks, in manifest order
  std::string output;                 // the end of what the student's code printed
  int processes = 0;                  // runner processes started (more than 1 after a failure)
  std::string pictures_dir;           // set when the lab wrote pictures there
  // Set when the grader, not the student's code, failed (the runner could not start, open the device
  // or calibrate): the tasks' results say the same, and a batch tries the lab again.
  std::string grader_failure;
  // Advice on the student's files that did not stop the build, "file:line: message" (a barrier that
  // not every thread reaches): the report shows them as warnings.
  std::vector<std::string> warnings;
};

struct RunRequest {
  std::filesystem::path runner;
  const Manifest* manifest = nullptr;
  std::filesystem::path student_dir;
  std::string backend;
  std::string device;
  std::uint64_t seed = 0;
  std::vector<std::string> tasks;     // empty: all
  std::optional<double> timeout_s;    // overrides the manifest's
  std::filesystem::path work_dir;     // progress and output files
  std::filesystem::path pictures_dir; // where image labs write their PNGs
  bool hidden_cases = false;          // run the manifest's hidden cases too (instructor grading)
  // The sanitizer gate (sanitizer.hpp): only the visible correctness cases, without guard zones, in
  // a runner started through `wrapper` (compute-sanitizer and its options).
  bool sanitize_cases = false;
  bool correctness_only = false;      // only the visible correctness cases: no timing, no thresholds
  std::vector<std::string> wrapper;
  Limits limits;                      // on top of the progress timeout; idle_s is set from it
  SandboxSpec sandbox;                // default: a plain child process
};

LabRun supervise(const RunRequest& request);

// A result for every selected task when the runner could not even be built or started.
std::vector<TaskResult> all_tasks_failed(const Manifest& manifest, const std::vector<std::string>& tasks, Status status,
                                         const std::string& message, const std::string& details);

// The task names to run: `requested` validated against the manifest, or all of them.
std::vector<std::string> select_tasks(const Manifest& manifest, const std::vector<std::string>& requested);

}  // namespace gpulab::cli
