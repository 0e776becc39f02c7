// `gpulab grade`: the instructor's batch. Every entry of the submissions folder is one student (a
// folder or an archive); each is unpacked safely, its lab files taken into a scratch copy, scanned,
// built and run isolated, and recorded as OUT/students/<name>/{result.json, results.json (Gradescope),
// feedback.txt, feedback.html} (student_record.hpp, student_outputs.hpp); then OUT/grades.csv,
// OUT/batch.json and OUT/index.html. A batch that is stopped and started again skips students whose
// submission and grader are unchanged. grade_batch.cpp runs the batch, grade_student.cpp one student.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sandbox.hpp"
#include "sanitizer.hpp"
#include "student_build.hpp"
#include "submission.hpp"

namespace gpulab::cli {

// Submissions graded at once by default: with CUDA, three per GPU (a GPU runs one lab of one
// student at a time; the other jobs compile meanwhile, and compiling a submission takes about twice
// as long as running it), at most one per 4 cores; with OpenCL or a chosen device, 1 (PoCL's timings
// are only fair alone, and one GPU lock serialises everything else).
int default_jobs(const std::string& backend, const std::string& device, int cuda_gpus, unsigned cores);

// One array task of a Slurm submission (slurm.hpp): it grades the students on lines
// [index * size, (index + 1) * size) of `list` beside the other tasks, and leaves the batch's own
// files (grades.csv, batch.json, index.html) to the job that finishes the submission.
struct SlurmChunk {
  std::filesystem::path list;
  int index = 0, size = 1;
  std::string task_id;  // "<array job>_<task>" (or the job's id): its status file and scratch folder
};

struct GradeOptions {
  std::filesystem::path submissions;
  std::filesystem::path out = "results";
  std::vector<std::string> labs;  // empty: every lab
  std::string backend;
  std::string device;
  int jobs = 0;            // 0: default_jobs()
  bool force = false;      // regrade students whose submission is unchanged
  bool calibrate = false;  // first grade the reference solutions on this machine
  // The sanitizer gate after each lab (sanitizer.hpp), CUDA only; a finding scores the task zero. By
  // default racecheck and synccheck for the tasks whose kernels use shared memory or barriers;
  // --sanitize: every tool, every task; --no-sanitize: off.
  SanitizeMode sanitize = SanitizeMode::automatic;
  std::optional<std::uint64_t> seed;  // default: a fresh seed per student, recorded
  double idle_timeout_s = 0;          // 0: the manifest's
  double lab_time_limit_s = 900;
  double memory_gib = 8;
  int processes = 256;
  double output_mib = 64;
  bool quiet = false;
  // Presentation (student_outputs.hpp): each graded task's rate in the Gradescope leaderboard, and
  // the visibility of results that include hidden cases.
  bool leaderboard = false;
  std::string hidden_visibility = "after_due_date";
  std::filesystem::path deadlines;  // due dates and late penalties (deadlines.hpp); empty: none
  // Slurm (slurm.hpp): an array task's share of the students, or the finishing job's submission
  // folder (OUT/slurm/<id>: no grading, the batch's files from every student's record).
  std::optional<SlurmChunk> chunk;
  std::filesystem::path finish;
};

struct BatchSummary {
  int submissions = 0, graded = 0, skipped_unchanged = 0, refused = 0;
  int failed = 0;  // the grader itself failed for these (written as error records, regraded next time)
  double wall_s = 0;
};

// What the instructor chose that changes a result (backend, labs, device, limits, sanitizer gate): a
// record's selection starts with it, followed by the isolation the grading machine found.
std::string options_key(const std::vector<Manifest>& labs, const std::string& backend, const GradeOptions& o);

// StudentRecord::submission_stamp of a submission (a folder or an archive): its files' names, sizes
// and modification times, hashed.
std::string submission_stamp(const std::filesystem::path& entry);

BatchSummary grade_batch(const Toolchain& toolchain, const std::vector<Manifest>& labs, const std::string& backend,
                         const GradeOptions& options);

}  // namespace gpulab::cli
