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
#include "lab_run.hpp"
#include "sandbox.hpp"

namespace gpulab::cli {

struct RunRequest {
  std::filesystem::path runner;
  const Manifest* manifest = nullptr;
  std::filesystem::path student_dir;
  std::string backend;
  std::string device;
  std::uint64_t seed = 0;
  std::vector<std::string> tasks;      // empty: all
  std::optional<double> timeout_s;     // overrides the manifest's
  std::filesystem::path work_dir;      // progress and output files
  std::filesystem::path pictures_dir;  // where image labs write their PNGs
  bool hidden_cases = false;           // run the manifest's hidden cases too (instructor grading)
  // The sanitizer gate (sanitizer.hpp): only the visible correctness cases, without guard zones, in
  // a runner started through `wrapper` (compute-sanitizer and its options).
  bool sanitize_cases = false;
  bool correctness_only = false;  // only the visible correctness cases: no timing, no thresholds
  // The profiler (profiler.hpp): the timing case alone, launched once inside the profiled region, in
  // a runner started through `wrapper` (Nsight Compute and its options).
  bool profile_cases = false;
  std::vector<std::string> wrapper;
  // Rates measured earlier by a process the CLI trusts (gpulab check's cache, a batch's calibration
  // runner): sent to the runner with the seed, so it prepares its probes but measures no rates, and
  // reported as the lab's calibration whatever the runner's event says.
  std::optional<Calibration> calibration;
  Limits limits;        // on top of the progress timeout; idle_s is set from it
  SandboxSpec sandbox;  // default: a plain child process
};

LabRun supervise(const RunRequest& request);

// Runs `request.runner` once to calibrate alone: it opens the device, measures and reports the
// calibrations, and runs no task and none of its student files' device code (a batch runs a runner
// built from the pristine skeletons this way). The calibration, or empty with `why` set.
std::optional<Calibration> measure_calibration(const RunRequest& request, std::string& why);

// A result for every selected task when the runner could not even be built or started.
std::vector<TaskResult> all_tasks_failed(const Manifest& manifest, const std::vector<std::string>& tasks, Status status,
                                         const std::string& message, const std::string& details);

// The task names to run: `requested` validated against the manifest, or all of them.
std::vector<std::string> select_tasks(const Manifest& manifest, const std::vector<std::string>& requested);
// Throws std::invalid_argument, naming every selected lab's tasks, when a requested task (TASK=) is a
// task of none of `labs`: a misspelt name must not run nothing and pass.
void require_known_tasks(const std::vector<Manifest>& labs, const std::vector<std::string>& requested);

}  // namespace gpulab::cli
