// The verdict on a task, decided once by `gpulab` (the parent, which links no student code) from what
// the runner measured. The runner reports each case's result, the timed case's rate and ratios,
// its findings, and whether every case ran (TaskResult::cases_complete), or the failure that stopped
// the task; the status, the threshold, the bonus tier and the points come from here and the manifest.
#pragma once
#include <optional>
#include <string>

#include "gpulab/manifest.hpp"
#include "gpulab/metrics.hpp"
#include "gpulab/results.hpp"

namespace gpulab {

// The status of a task whose cases all ran: a finding, wrong cases, or the threshold decides it.
// Reads r.finding, r.cases, r.cases_passed and r.cases_total, r.threshold, r.ratio and
// r.borderline; `calibration` only words the message of a task that is too slow.
void decide_status(TaskResult& r, const Calibration& calibration);

// Whether a runner may end a task with `s` without running every case: the failures it observes
// itself (a TODO left, a failed API call, a lost device, the student's code not compiling).
bool runner_may_stop_with(Status s);

// Judges what a runner reported of `task`, run with `backend` on a device of class `device` (empty:
// the runner never said which): names, points and bounds from the manifest, the ratio its metric
// names, the cases passed counted from the cases, then the status (decide_status) and the points.
// A result that claims a verdict without its measurements (not every case ran, and no failure of
// the kind a runner reports) is an error of the run, said so in its message.
void judge_task(TaskResult& r, const Task& task, const std::string& backend, std::optional<DeviceClass> device,
                const Calibration& calibration);

}  // namespace gpulab
