#include "gpulab/verdict.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpulab {

void decide_status(TaskResult& r, const Calibration& calibration) {
  if (!r.finding.empty()) {
    // A finding is a result of its own: scores zero, and the gradebook flags it for the instructor.
    r.status = r.finding == "faster_than_device" ? Status::impossible_speed : Status::buffer_violation;
  } else if (r.cases_passed < r.cases_total) {
    r.status = Status::wrong_result;
    std::vector<std::string> failed;
    for (const auto& c : r.cases)
      if (!c.passed) failed.push_back(c.hidden ? c.name + " (hidden case)" : c.name);
    r.details += fmt::format("\nwrong in {} of {} cases: {}", failed.size(), r.cases_total, fmt::join(failed, ", "));
  } else if (r.threshold && !r.ratio) {
    r.status = Status::error;
    r.message = fmt::format(
        "the threshold needs the '{}' calibration and a timing case for this device class, "
        "and this run has no such measurement (fix the manifest)",
        r.metric);
  } else if (r.threshold && *r.ratio < *r.threshold) {
    const Metric& m = *find_metric(r.metric);
    r.status = Status::too_slow;
    r.message =
        fmt::format("correct, but reached {}; the threshold is {}{}",
                    describe_ratio(m, *r.ratio, calibration, r.threshold), format_ratio(m, *r.threshold, r.ratio),
                    r.borderline ? " (borderline: measured again, interleaved with the calibration, and still "
                                   "below; a loaded machine can cause this, so run it again to be sure)"
                                 : "");
  } else {
    r.status = Status::passed;
  }
}

bool runner_may_stop_with(Status s) {
  return s == Status::not_implemented || s == Status::error || s == Status::kernel_fault || s == Status::compile_error;
}

namespace {

// The task's threshold and bonus tier for the device, as the manifest sets them; the ratio of the
// threshold's metric among the measured ones.
void bounds_from_manifest(TaskResult& r, const Task& task, const std::string& backend,
                          std::optional<DeviceClass> device) {
  r.threshold.reset();
  r.tier_threshold.reset();
  r.tier_points = 0;
  r.ratio.reset();
  r.metric = task.threshold ? task.threshold->metric : "";
  if (task.threshold && find_metric(r.metric)) {
    if (auto it = r.ratios.find(r.metric); it != r.ratios.end()) r.ratio = it->second;
    if (device) r.threshold = task.threshold->bound(backend, *device);
  }
  if (task.tier && r.threshold && device) {
    r.tier_threshold = task.tier->bounds.bound(backend, *device);
    if (r.tier_threshold) r.tier_points = task.tier->points;
  }
}

}  // namespace

void judge_task(TaskResult& r, const Task& task, const std::string& backend, std::optional<DeviceClass> device,
                const Calibration& calibration) {
  r.function = task.function;
  r.max_points = task.points;
  r.bonus = task.bonus;
  bounds_from_manifest(r, task, backend, device);
  if (r.cases_complete && task.threshold && !device) {
    // Without the device's class no bound can be chosen, and none is not the same as passing it.
    r.status = Status::error;
    r.message =
        "the runner did not say which class of device it ran on, so the task's threshold cannot be chosen "
        "(a fault of the grader, or output forged by the lab's code)";
  } else if (r.cases_complete) {
    r.cases_passed =
        static_cast<int>(std::count_if(r.cases.begin(), r.cases.end(), [](const CaseResult& c) { return c.passed; }));
    r.cases_total = std::max(r.cases_total, static_cast<int>(r.cases.size()));
    for (const auto& c : r.cases)
      if (r.finding.empty() && !c.finding.empty()) r.finding = c.finding;
    decide_status(r, calibration);
  } else if (!runner_may_stop_with(r.status)) {
    r.message = fmt::format(
        "the runner reported '{}' for this task without running all its cases: a verdict is the grader's to "
        "decide, so the result is not taken (a fault of the grader, or output forged by the lab's code)",
        to_string(r.status));
    r.status = Status::error;
  }
  r.points = points_earned(r, task.points);
}

}  // namespace gpulab
