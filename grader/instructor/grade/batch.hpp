// What the jobs of one `gpulab grade` batch share (grade_batch.cpp sets it up, grade_student.cpp
// grades one student with it). Internal to the grade command.
#pragma once
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "deadlines.hpp"
#include "grade.hpp"
#include "lab_run.hpp"
#include "sanitizer.hpp"
#include "student_outputs.hpp"
#include "student_record.hpp"

namespace gpulab::cli {

// One grading job: its index among the batch's jobs (which GPU it uses) and, when the grader is root,
// the sandbox user it holds machine-wide (machine_lock.hpp): a uid without an account, so a submission
// can write nowhere but its scratch folder and its processes are its own.
struct Slot {
  int index = 0;
  std::optional<unsigned> user;
};

struct Batch {
  Batch(const Toolchain& t, const std::vector<Manifest>& l, const std::string& be, const GradeOptions& opt)
      : tc(t), labs(l), backend(be), o(opt) {}
  const Toolchain& tc;
  const std::vector<Manifest>& labs;
  const std::string& backend;
  const GradeOptions& o;
  std::filesystem::path out, submissions;
  std::filesystem::path scratch;  // this run's half-done work: OUT/.scratch/local, or slurm-<task> for a Slurm task
  std::string version;
  Isolation isolation;
  Limits run_limits, compile_limits;
  std::vector<std::filesystem::path> needed;  // what its compilers and runners read (the harness, drivers)
  std::vector<std::filesystem::path> hidden;  // what a submission must not see
  nlohmann::json calibration;                 // reference ratios on this machine (OUT/calibration.json), when known
  std::vector<std::string> gpus;              // CUDA_VISIBLE_DEVICES value per GPU
  std::vector<std::string> gpu_lock_names;    // machine-wide: one run per GPU at a time
  int jobs = 1;                               // students graded at once
  int cpu_threads_per_job = 1;
  // The sanitizer gate's tool and tools, when it runs in this batch (GradeOptions::sanitize); none:
  // off, OpenCL, or compute-sanitizer missing (sanitizer_note says which, once, in the batch's header).
  std::optional<SanitizerGate> sanitizer;
  std::string sanitizer_note;
  DeviceClass device_class = DeviceClass::gpu;
  // (GPU slot, lab id) -> calibration measured once for the batch (calibrate_batch): every student's
  // runner on that GPU is given it and measures no rates of its own.
  std::map<std::pair<int, std::string>, Calibration> device_calibrations;
  std::vector<PhaseTimes> budgets;     // per graded student, for the batch's budget line
  std::optional<Deadlines> deadlines;  // --deadlines, read before any student is graded
  std::mutex print_lock;
};

struct StudentJob {
  std::filesystem::path entry;
  std::string name;
  std::string conflict;  // why the student is refused unopened: several entries are this student
};

enum class Outcome { graded, skipped, refused };

// The grader's own failure, not the student's: a killed compiler, a sandbox that would not start, a
// device that would not open. The lab is tried again; if it persists, the student is "not graded".
class GraderFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Everything besides the files and the grader that changes a result: a rerun with other labs, other
// limits or another isolation grades again.
std::string selection_key(const Batch& b);
// A job's sandbox: the batch's isolation, `box` writable, the job's user and GPU, PoCL's share of cores.
SandboxSpec sandbox_for(const Batch& b, const std::filesystem::path& box, const Slot& slot);
// The limits of a run of lab `m`: the batch's, with at least the host memory the lab's manifest says
// its runs need (memory_gib), so a correct submission is never killed for memory the lab hands it.
Limits run_limits_for(const Batch& b, const Manifest& m);
// The points a submission can reach without bonus tasks, over the labs this batch grades.
double max_score_of(const Batch& b);
// The batch's presentation options for each student's outputs.
GradescopeOptions gradescope_options(const GradeOptions& o);
// The reference solution's results for a lab's tasks on this machine, by task (empty: not calibrated).
std::map<std::string, ReferenceResult> references_for(const Batch& b, const std::string& lab);

// Grades one student in `slot`: unpacks, hashes, skips an unchanged submission, builds and runs each
// lab, and writes OUT/students/<name>/. Throws when the grader itself failed for this student.
Outcome grade_student(Batch& b, const StudentJob& job, const Slot& slot);

}  // namespace gpulab::cli
