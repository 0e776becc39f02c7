#include "lab_job.hpp"

#include <chrono>

namespace gpulab::cli {

LabRun build_and_supervise(const LabJob& job) {
  const Manifest& m = *job.manifest;
  const auto compile_start = std::chrono::steady_clock::now();
  const BuildResult build = build_lab(*job.toolchain, m, job.backend, job.student_dir, job.build_dir, job.compile);
  const double compile_s = seconds_since(compile_start);
  LabRun lab = lab_of(m, job.backend);
  if (!build.ok) {
    const Status status = build.rejected ? Status::rejected : Status::compile_error;
    lab.tasks = all_tasks_failed(m, job.tasks, status, build.message, build.log);
  } else if (job.supervise) {
    RunRequest request = job.request;
    request.runner = build.runner;
    request.manifest = &m;
    request.student_dir = job.student_dir;
    request.backend = job.backend;
    request.tasks = job.tasks;
    lab = job.supervise(request);
  }
  lab.warnings = warning_lines(build.warnings);
  lab.phases.compile_s = compile_s;
  return lab;
}

}  // namespace gpulab::cli
