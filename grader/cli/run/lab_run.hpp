// What one lab of one run produced (LabRun) and where its time went (PhaseTimes): the record the
// supervisor fills, the sanitizer gate amends, and the report, the JSON files and the feedback render.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/manifest.hpp"
#include "gpulab/metrics.hpp"
#include "gpulab/results.hpp"

namespace gpulab::cli {

// Where a lab's time went, in seconds: what `gpulab grade` adds up into its per-submission budget.
struct PhaseTimes {
  double compile_s = 0;         // building the student's files and the runner (set by the caller)
  double wait_for_gpu_s = 0;    // waiting for the machine-wide GPU lock (set by the caller)
  double run_s = 0;             // the runner processes of every pass, wall clock
  double hidden_s = 0;          // of run_s: the hidden-case pass
  double calibration_s = 0;     // in the runners: calibrating (preparing the probes only, when rates were given)
  double correctness_s = 0;     // in the runners: the cases without timing, every pass
  double timing_s = 0;          // in the runners: the timing cases (warm-up, timed launches, baselines, checks)
  double timed_launches_s = 0;  // of timing_s: warm-up and timed launches; the rest: inputs, references, checks
  double launches_s = 0;        // of correctness_s and timing_s: every launch, cache flush and interleaved baseline
  double checks_s = 0;          // of correctness_s and timing_s: the outputs, guards and inputs checked after launches
  double sanitize_s = 0;        // the sanitizer gate (set by the caller)
};
PhaseTimes& operator+=(PhaseTimes& total, const PhaseTimes& more);
// Seconds since `start` on the steady clock: how each phase is measured.
double seconds_since(std::chrono::steady_clock::time_point start);
// In seconds rounded to milliseconds, under the field names.
void to_json(nlohmann::json& j, const PhaseTimes& p);
void from_json(const nlohmann::json& j, PhaseTimes& p);

// The profiler feedback (profiler.hpp) of one kernel: each counter the lab names, with its figure and
// a one-line reading for a student.
struct CounterReading {
  std::string counter;   // "global_stores": its name in lab.toml
  std::string label;     // "global stores"
  std::string value;     // "32.0 sectors per request"
  std::string reading;   // "not coalesced: ..."
  bool concern = false;  // the reading points at something to fix
};
struct KernelProfile {
  std::string kernel;  // without its parameters
  int launches = 0;    // profiled launches of it
  double time_ms = 0;  // their duration, together
  std::vector<CounterReading> counters;
};
struct TaskProfile {
  std::string task;
  std::string case_name;  // the timing case, launched once
  std::vector<KernelProfile> kernels;
  std::string note;  // why there are no figures, or what to know about them
};
void to_json(nlohmann::json& j, const CounterReading& c);
void from_json(const nlohmann::json& j, CounterReading& c);
void to_json(nlohmann::json& j, const KernelProfile& k);
void from_json(const nlohmann::json& j, KernelProfile& k);
void to_json(nlohmann::json& j, const TaskProfile& t);
void from_json(const nlohmann::json& j, TaskProfile& t);

struct LabRun {
  std::string id, name, title, backend;
  nlohmann::json device;    // the runner's "device" event, when it got that far
  Calibration calibration;  // empty rates: none was measured
  // Why the runner's calibration event must not be reused by a later run, "" when nothing speaks
  // against it: the progress file is written by the process that runs student code, so an event
  // out of place (after a task began, a second one) may be forged. Unused when rates were given.
  std::string calibration_doubt;
  PhaseTimes phases;
  std::vector<TaskResult> tasks;  // the selected tasks, in manifest order
  std::string output;             // the end of what the student's code printed
  int processes = 0;              // runner processes started (more than 1 after a failure)
  std::string pictures_dir;       // set when the lab wrote pictures there
  // Set when the grader, not the student's code, failed (the runner could not start, open the device
  // or calibrate): the tasks' results say the same, and a batch tries the lab again.
  std::string grader_failure;
  // Advice on the student's files that did not stop the build, "file:line: message" (a barrier that
  // not every thread reaches): the report shows them as warnings.
  std::vector<std::string> warnings;
  // `gpulab check --profile`: each task's timing case under Nsight Compute (profiler.hpp). It informs
  // and never grades.
  std::vector<TaskProfile> profile;
  // Set when `gpulab check` shows this lab's last results again because nothing changed (check_cache.hpp):
  // when it ran and how to run it anew.
  std::string reused;

  double points() const;
  double max_points() const;  // bonus tasks excluded
};

// Every text of `lab` that student code or a tool wrote (messages, details, the program's output, build
// logs, the device's names, profiler readings) made printable (gpulab/text.hpp): no terminal escape
// or other control character reaches a report, a JSON file, a feedback page or the gradebook.
void make_printable(LabRun& lab);
// The same for every string in a JSON value (the device event).
void make_printable(nlohmann::json& value);

// A lab record with the manifest's names and no result yet.
LabRun lab_of(const Manifest& manifest, const std::string& backend);

// Whether LAB=`wanted` names the lab `id` ("02-transpose") called `name` ("transpose"): its folder,
// its name, or its number ("02" or "2").
bool lab_named(const std::string& id, const std::string& name, const std::string& wanted);

// The report's and result.json's form of a lab. The calibration doubt, the grader failure and the
// phases are the grader's own business: a batch writes the phases itself (lab_json, student_record.hpp).
void to_json(nlohmann::json& j, const LabRun& lab);
// Reads a lab back (the feedback of a graded student); a calibration written by an older grader
// keeps its rates, unit and library.
void from_json(const nlohmann::json& j, LabRun& lab);

}  // namespace gpulab::cli
