// The record of one graded student (OUT/students/<name>/result.json): what `gpulab grade` writes, and
// what the student's feedback, the Gradescope results and the gradebook are rendered from.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab_run.hpp"

namespace gpulab::cli {

// The reference solution's result for a task on the grading machine (OUT/calibration.json).
struct ReferenceResult {
  std::string status;
  std::map<std::string, double> ratios;
  std::string metric;
  std::optional<double> ratio;
};
void to_json(nlohmann::json& j, const ReferenceResult& r);
void from_json(const nlohmann::json& j, ReferenceResult& r);

struct GradedLab {
  LabRun run;
  std::map<std::string, ReferenceResult> references;  // by task, when the batch was calibrated
};

struct StudentRecord {
  std::string student, submission;  // the name, and the folder or archive it came from
  std::string grader_version, selection, backend, isolation;
  std::string error;               // why the submission was refused, or why the grader failed
  bool grader_error = false;       // not graded: the grader failed; graded again on the next run
  std::vector<std::string> notes;  // per lab: files that were missing
  std::vector<GradedLab> labs;
  std::optional<double> score;  // none when not graded
  double max_score = 0;
  std::uint64_t seed = 0;
  std::string calibration;  // when OUT/calibration.json was measured, "" without one
  std::string gpu;          // CUDA_VISIBLE_DEVICES of the job, "" when not CUDA
  std::string node;         // the host that graded it (a cluster's node; labs[].device names its GPU)
  std::string slurm_job;    // the Slurm array task that graded it ("<array job>_<task>"), "" outside Slurm
  // The submission's file names, sizes and times as received: a cheap test of "unchanged" that lets
  // `gpulab grade --slurm` leave graded students out of the array before any node unpacks them.
  std::string submission_stamp;
  std::string content_hash;  // what decides whether a rerun may skip this student
  std::string graded_at;
  double duration_s = 0;
  std::optional<PhaseTimes> phases;  // over the labs, when they ran
  // The student's own `make check` history when the submission holds it (history.jsonl, at its top
  // or in build/): the lines of the graded labs, the newest kHistoryLines. Written by the student's
  // machine, so it informs and never grades.
  std::vector<nlohmann::json> history;
  // How many gradings of the student OUT/students/<name>/attempts/ keeps (this one included); set when the
  // gradebook is written, not part of result.json.
  int attempts = 0;

  bool refused() const { return !error.empty() && !grader_error; }
};

// result.json's form: each lab with its score, maximum, phases and the tasks' references.
void to_json(nlohmann::json& j, const StudentRecord& r);
void from_json(const nlohmann::json& j, StudentRecord& r);

}  // namespace gpulab::cli
