#include "runner_progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace gpulab::cli {

using nlohmann::json;

namespace {

struct ProcessClock {
  bool task_begun = false, calibrated = false;
  double case_began_at = 0;
};

// A "calibration" event. A forged event cannot be told from a real one by its content, only by its
// place: one per process, before any task began, or the run notes a doubt.
void take_calibration(RunnerProgress& p, const json& e, ProcessClock& clock) {
  p.phases.calibration_s += e.value("took_s", 0.0);
  if (clock.task_begun) p.calibration_doubt = "a calibration event after a task began";
  if (clock.calibrated) p.calibration_doubt = "two calibration events from one runner";
  clock.calibrated = true;
  try {
    p.calibration = calibration_from_json(e);
  } catch (const std::invalid_argument& bad) {
    p.calibration_doubt = fmt::format("a malformed calibration event ({})", bad.what());
  }
}

// A case's time (from its case_begin to its case_end, on the runner's clock) into the phases.
void take_case_time(RunnerProgress& p, const json& e, const ProcessClock& clock) {
  const double took = std::max(0.0, e.value("at_s", 0.0) - clock.case_began_at);
  const bool timed = e.contains("result") && e["result"].contains("timing");
  (timed ? p.phases.timing_s : p.phases.correctness_s) += took;
  if (!e.contains("result") || !e["result"].is_object()) return;
  const json& result = e["result"];
  if (timed) p.phases.timed_launches_s += std::clamp(result.value("timed_s", 0.0), 0.0, took);
  // Diagnostics from the runner's own report of the case: clamped to the case's time like timed_s.
  const double launches = std::clamp(result.value("launches_s", 0.0), 0.0, took);
  p.phases.launches_s += launches;
  p.phases.checks_s += std::clamp(result.value("checks_s", 0.0), 0.0, took - launches);
}

void take_event(RunnerProgress& p, const json& e, ProcessClock& clock) {
  const std::string kind = e.value("event", "");
  if (kind == "start") {
    p.stage = std::max(p.stage, RunnerStage::opening_device);
  } else if (kind == "build_begin") {
    p.stage = std::max(p.stage, RunnerStage::building_kernels);
  } else if (kind == "build_end") {
    p.stage = RunnerStage::ready;
  } else if (kind == "device") {
    p.device = e;
    p.device.erase("event");
    p.stage = std::max(p.stage, RunnerStage::device_open);
  } else if (kind == "calibration") {
    take_calibration(p, e, clock);
    p.stage = std::max(p.stage, RunnerStage::ready);
  } else if (kind == "task_begin") {
    p.current_task = e.at("task");
    p.current_case.clear();
    p.stage = RunnerStage::ready;
    clock.task_begun = true;
  } else if (kind == "case_begin") {
    p.current_case = e.at("case");
    p.stage = RunnerStage::ready;
    p.case_begun = true;
    clock.case_began_at = e.value("at_s", 0.0);
  } else if (kind == "case_end") {
    take_case_time(p, e, clock);
  } else if (kind == "task_end") {
    p.task_results.push_back(e.at("result").get<TaskResult>());
    p.current_task.clear();
  } else if (kind == "error") {
    p.setup_error = e.value("message", "");
  }
}

}  // namespace

RunnerProgress parse_runner_progress(const std::string& text) {
  RunnerProgress progress;
  ProcessClock clock;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const json event = json::parse(line, nullptr, false);
    if (event.is_discarded()) continue;  // a line cut short by a crash
    try {
      take_event(progress, event, clock);
    } catch (const std::exception&) {
      // A malformed event (written by student code) is ignored.
    }
  }
  return progress;
}

}  // namespace gpulab::cli
