// What a run produces: per-case and per-task results, written by the runner as JSON lines and read
// back by the CLI for the report, the JSON file and (later) the gradebook.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/stats.hpp"
#include "gpulab/telemetry.hpp"

namespace gpulab {

enum class Status {
  passed,
  wrong_result,      // a case's output differs from the reference
  too_slow,          // correct, but below the performance threshold
  not_implemented,   // a TODO is still open
  compile_error,     // the student's code did not compile or link
  kernel_fault,      // the device reported an illegal access or similar during the task
  timeout,           // no progress within the lab's time limit: the runner was killed
  crashed,           // the runner process died (e.g. a segmentation fault in host code)
  error,             // an API call failed (bad launch configuration, allocation, ...)
  not_run,           // skipped because of an earlier failure that prevents it
  rejected,          // the student's files use something the lab forbids (a vendor library)
  buffer_violation,  // wrote outside a buffer it was given, or changed an input
  impossible_speed,  // timed faster than the device can do the work: the timed launch did not compute it
  unsafe_code,       // a race, an out-of-bounds access, a barrier not every thread reaches or a read of
                     // uninitialised memory: found by compute-sanitizer in a run with right results, or a
                     // barrier the static check proves divergent (the task is then not run at all)
};
const char* to_string(Status s);
Status status_from_string(const std::string& s);
// What the report prints: "wrong result", "not implemented", ...
const char* describe(Status s);

struct CaseResult {
  std::string name;
  bool passed = false;
  bool hidden = false;                  // a hidden case (instructor grading): reports name it as such, nothing more
  std::string message;                  // one line when it failed
  std::string details;                  // several lines: the mismatch report
  std::optional<TimingSummary> timing;  // for timed cases, over the timed launches
  double work = 0;                      // what one launch must do, in the lab's unit: bytes moved, flops, keys
  std::vector<std::string> pictures;    // image labs: the PNGs written for this case
  // Set when the case failed for a reason of its own kind rather than a mismatch:
  // "buffer_violation" (guard zones or inputs), "faster_than_device" (speed of light).
  std::string finding;
  // The threshold's calibration, measured interleaved with this case's timed launches (its rate).
  std::optional<double> baseline_rate;
  bool borderline = false;  // the ratio ended within a few percent of the bound (re-measured)
  // Host seconds in the warm-up and timed launches (with their sampled checks and the interleaved
  // baseline): the rest of a timing case's time is its inputs, reference and first, fully checked launch.
  double timed_s = 0;
  // Host seconds of every launch of the case, by what they did: the driver's prepare and loads with
  // the fresh-contents rule and, on a CPU device, the host-memory checksums (prepare_s), the launches with their cache flushes and the interleaved
  // baseline (launches_s), the checks of outputs, guards and inputs after them (checks_s). The rest
  // of `seconds` is the case's inputs and reference.
  double prepare_s = 0, launches_s = 0, checks_s = 0;
  // Parts of those: the host-memory checksums before and after each launch (watch_s, of prepare_s
  // and checks_s; only where the device reaches host memory), the guards and inputs checked after
  // each launch (buffers_s, of checks_s). checks_s less both is the outputs' check.
  double watch_s = 0, buffers_s = 0;
  // Host seconds of the whole case: drawing its inputs, its reference, every launch and check. For
  // instructors (`make bench-grader`, the JSON report): which cases a lab's run spends its time on.
  double seconds = 0;
  // The GPU's clocks, temperature, power and throttle reasons over the timed launches (NVML), and
  // whether throttling made the runner time them again; empty without NVML or without timing.
  std::optional<TimingTelemetry> telemetry;
  // Set by the framework when the lab's driver, not the student's code, broke a rule of timing (a
  // timed launch given the contents of its previous one): the run is the grader's failure. Not in
  // the JSON: the runner stops with it instead of reporting the case.
  std::string driver_fault;
  // Work per second, in units of 1e9 (GB/s, GFLOP/s, Gkeys/s, Giter/s), from the median time.
  std::optional<double> rate() const;
};

struct TaskResult {
  std::string task;
  std::string function;
  Status status = Status::not_run;
  std::string message;
  std::string details;
  // The failure that message and details describe happened in a hidden case (instructor grading):
  // reports say so, and a student's feedback shows neither the case nor its data.
  bool failed_in_hidden_case = false;
  int cases_passed = 0;
  int cases_total = 0;
  // The runner ran every case of the task (no failure stopped it): what `gpulab` needs to judge it
  // (gpulab/verdict.hpp). A runner reports measurements; the status is decided by the parent.
  bool cases_complete = false;
  std::optional<double> time_ms;         // median of the timed case
  std::optional<double> rate;            // of the timed case, in the lab's unit
  std::map<std::string, double> ratios;  // every metric the calibrations allow
  std::string metric;                    // the one the threshold bounds
  std::optional<double> ratio;           // its value
  std::optional<double> threshold;       // its bound for this device class
  std::optional<double> tier_threshold;  // the task's bonus tier on this device class (manifest `tier`)
  double tier_points = 0;                // what reaching it adds
  double points = 0;
  double max_points = 0;
  bool bonus = false;
  // For the instructor: "faster_than_device" or "buffer_violation" (see CaseResult::finding),
  // "sanitizer" (compute-sanitizer) or "divergent_barrier" (the static barrier check).
  std::string finding;
  bool borderline = false;  // the ratio was within a few percent of the threshold
  // The timed case's telemetry (CaseResult::telemetry).
  std::optional<TimingTelemetry> telemetry;
  std::vector<CaseResult> cases;
};

// Whether a task's ratio reached its bonus tier.
bool tier_reached(const TaskResult& t);
// The points a result earns: none unless it passed; the task's, plus the tier's where it reached it.
double points_earned(const TaskResult& t, double task_points);

void to_json(nlohmann::json& j, const TimingSummary& t);
void from_json(const nlohmann::json& j, TimingSummary& t);
void to_json(nlohmann::json& j, const CaseResult& c);
void from_json(const nlohmann::json& j, CaseResult& c);
void to_json(nlohmann::json& j, const TaskResult& t);
void from_json(const nlohmann::json& j, TaskResult& t);

}  // namespace gpulab
