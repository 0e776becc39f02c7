#include "lab_job.hpp"

#include <chrono>

#include "barrier_verdict.hpp"

namespace gpulab::cli {

LabRun build_and_supervise(const LabJob& job) {
  const Manifest& m = *job.manifest;
  const auto compile_start = std::chrono::steady_clock::now();
  const BuildResult build = build_lab(*job.toolchain, m, job.backend, job.student_dir, job.build_dir, job.compile);
  const double compile_s = seconds_since(compile_start);
  LabRun lab = lab_of(m, job.backend);
  std::vector<SourceWarning> warnings = build.warnings;
  if (!build.ok) {
    const Status status = build.rejected ? Status::rejected : Status::compile_error;
    lab.tasks = all_tasks_failed(m, job.tasks, status, build.message, build.log);
  } else if (job.supervise) {
    const BarrierVerdicts verdicts = barrier_verdicts(m, job.backend, job.student_dir, job.tasks, build.warnings);
    RunRequest request = job.request;
    request.runner = build.runner;
    request.manifest = &m;
    request.student_dir = job.student_dir;
    request.backend = job.backend;
    request.tasks = tasks_to_run(job.tasks, verdicts);
    if (!request.tasks.empty()) lab = job.supervise(request);
    add_unsafe_tasks(lab, job.tasks, verdicts);
    warnings = verdicts.warnings;
  }
  lab.warnings = warning_lines(warnings);
  lab.phases.compile_s = compile_s;
  make_printable(lab);  // what student code and the tools wrote, before any report shows it
  return lab;
}

}  // namespace gpulab::cli
