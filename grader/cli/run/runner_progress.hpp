// What a lab runner process reported in its progress file, one JSON event per line (grader/runner):
// read by the supervisor after the process ended. The file is written by the process that runs
// student code, so an event counts only by its kind and its place, and a malformed one is ignored.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/metrics.hpp"
#include "gpulab/results.hpp"
#include "lab_run.hpp"

namespace gpulab::cli {

// How far a runner process got before its tasks: its events say, in this order.
enum class RunnerStage {
  loading,           // no event: the program was loading, global objects' constructors running
  opening_device,    // "start": main began; the device is not open yet
  device_open,       // "device": opened; the student's kernels are not being built yet
  building_kernels,  // "build_begin" without "build_end": the device's compiler is building them
  ready,             // "build_end", or a calibrating runner past the device: calibrating or in its tasks
};

struct RunnerProgress {
  nlohmann::json device;                   // the "device" event without its "event" key; null when none
  std::optional<Calibration> calibration;  // the last well-formed "calibration" event
  // Why that event may be forged, "" when nothing speaks against it: one per process, before any task.
  std::string calibration_doubt;
  std::vector<TaskResult> task_results;    // the "task_end" events, in order, as the runner wrote them
  std::string current_task, current_case;  // where the process was when the file ends; "" between them
  RunnerStage stage = RunnerStage::loading;
  bool case_begun = false;  // a case began: the student's kernels may have run
  std::string setup_error;  // an "error" event's message: the runner could not set up
  // Of the runner's own clock: calibration_s, correctness_s, timing_s, timed_launches_s, launches_s and checks_s.
  PhaseTimes phases;
};

// The events of one runner process (the progress file's text), in order.
RunnerProgress parse_runner_progress(const std::string& text);

}  // namespace gpulab::cli
