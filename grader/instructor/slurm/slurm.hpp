// `gpulab grade --slurm`: a batch as a Slurm job array. The submitting command (on a login node)
// lists the students that need grading into OUT/slurm/<id>/students.txt, writes the array's script
// (each task grades a chunk of the list with the same grader, `gpulab grade --slurm-task`, into the
// same OUT, each student claimed and written atomically as in any batch) and the finishing job's
// (afterany: grades.csv, batch.json, index.html from every record), and submits both with sbatch;
// with --calibrate, a first job measures the reference solutions on a node of the partition.
// `--slurm --status` summarises a submission's progress from OUT and squeue.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "grade.hpp"

namespace gpulab::cli {

struct SlurmOptions {
  bool submit = false;  // --slurm
  bool status = false;  // --slurm --status
  std::string partition, gres, time;
  int array_chunk = 10;  // students per array task
  int max_running = 0;   // tasks at once (the array's %N throttle); 0: as many as Slurm gives
  std::vector<std::string> sbatch_args;
  // Set on the jobs' own command lines, not by instructors: an array task's list of students, and
  // the finishing job's submission folder.
  std::string task_list, finish;
};

// A job's script: its #SBATCH lines and the command it runs.
struct SbatchScript {
  std::string job_name;
  std::filesystem::path log;            // %A, %a: the array job and task
  std::string array;                    // e.g. "0-11%4"; "" for a single job
  std::vector<std::string> directives;  // sbatch options, e.g. "--partition=gpu"
  std::vector<std::string> command;     // argv
};
// Throws when an option cannot be written as an #SBATCH line (whitespace or a newline in it).
std::string sbatch_script_text(const SbatchScript& s);

// The sbatch options every job of a submission gets from SlurmOptions (partition, gres, time, the
// instructor's own), in the order sbatch reads them.
std::vector<std::string> sbatch_directives(const SlurmOptions& s, const std::string& backend);

// `gpulab grade`'s options again, as arguments for the jobs' command lines (absolute paths).
std::vector<std::string> grade_arguments(const GradeOptions& o);

// The students a submission sends to the array: those whose record is missing or failed, was made by
// another grader, for other options or another calibration, or whose files changed since (their
// stamp); every one with `force`. `entries`: name and path of each submission.
std::vector<std::string> students_to_grade(const std::filesystem::path& out,
                                           const std::vector<std::pair<std::string, std::filesystem::path>>& entries,
                                           const std::string& grader_version, const std::string& options,
                                           const std::string& calibration, bool force);

// The array task this process is, from Slurm's environment (SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID;
// a job that is no array, such as the calibration job, is task 0 of itself). Throws outside Slurm.
SlurmChunk chunk_from_environment(const std::filesystem::path& list, int size);

// Submits the batch; 0 when its jobs are queued (or nothing needed grading).
int submit_slurm_batch(const Toolchain& tc, const std::vector<Manifest>& labs, const std::string& backend,
                       const GradeOptions& o, const SlurmOptions& s);

// Prints the progress of OUT's Slurm submissions: students graded, waiting and failed; each task's
// state (done, running where, pending, ended unfinished) from its status file and squeue.
int print_slurm_status(const GradeOptions& o);

}  // namespace gpulab::cli
