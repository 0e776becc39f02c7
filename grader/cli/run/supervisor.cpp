#include "supervisor.hpp"

#include "early_exit.hpp"
#include "files.hpp"
#include "runner_progress.hpp"

#include "gpulab/verdict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>

namespace gpulab::cli {

namespace fs = std::filesystem;

std::vector<std::string> select_tasks(const Manifest& manifest, const std::vector<std::string>& requested) {
  std::vector<std::string> out;
  for (const auto& t : manifest.tasks)
    if (requested.empty() || std::find(requested.begin(), requested.end(), t.name) != requested.end())
      out.push_back(t.name);
  return out;
}

void require_known_tasks(const std::vector<Manifest>& labs, const std::vector<std::string>& requested) {
  for (const auto& name : requested) {
    const bool known = std::any_of(labs.begin(), labs.end(), [&](const Manifest& m) { return m.find_task(name); });
    if (known) continue;
    std::vector<std::string> per_lab;
    for (const auto& m : labs) {
      std::vector<std::string> names;
      for (const auto& t : m.tasks) names.push_back(t.name);
      per_lab.push_back(fmt::format("{}: {}", m.id, fmt::join(names, ", ")));
    }
    throw std::invalid_argument(fmt::format("TASK={} is not a task of {}; the tasks are {}", name,
                                            labs.size() == 1 ? labs.front().id : "any selected lab",
                                            fmt::join(per_lab, "; ")));
  }
}

std::vector<TaskResult> all_tasks_failed(const Manifest& manifest, const std::vector<std::string>& tasks, Status status,
                                         const std::string& message, const std::string& details) {
  std::vector<TaskResult> out;
  for (const auto& name : tasks) {
    const Task* t = manifest.find_task(name);
    TaskResult r;
    r.task = name;
    r.function = t ? t->function : "";
    r.max_points = t ? t->points : 0;
    r.bonus = t && t->bonus;
    r.status = status;
    r.message = message;
    r.details = details;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::string tail_of(const fs::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return start > 0 ? "…" + text : text;
}

// The secrets a runner reads on standard input: the seed, which cases, and trusted rates if any.
std::string secrets_for(const RunRequest& req, bool hidden) {
  nlohmann::json j{{"seed", req.seed},
                   {"cases", hidden                 ? "hidden"
                             : req.sanitize_cases   ? "sanitize"
                             : req.correctness_only ? "correctness"
                             : req.profile_cases    ? "profile"
                                                    : "visible"}};
  if (req.calibration && !hidden) j["calibration"] = calibration_to_json(*req.calibration);
  return j.dump() + "\n";
}

// One pass of runner processes over some tasks: what is known between its processes.
struct Pass {
  const RunRequest& req;
  bool hidden = false;
  std::chrono::steady_clock::time_point lab_start;
  std::vector<std::string> pending;
  std::map<std::string, TaskResult> finished;
  LabRun run;
};

// The limits of the next process: the wall-clock limit holds for the whole lab, over every restart.
// Empty when the lab's time is used up (the pending tasks then fail).
std::optional<Limits> limits_for_next_process(Pass& pass) {
  const RunRequest& req = pass.req;
  Limits limits = req.limits;
  limits.idle_s = req.timeout_s.value_or(req.manifest->timeout_s);
  if (limits.wall_s <= 0) return limits;
  limits.wall_s -= seconds_since(pass.lab_start);
  if (limits.wall_s >= 1) return limits;
  const auto message = fmt::format("not run: the lab used up its time limit of {:.0f} s", req.limits.wall_s);
  for (auto& r : all_tasks_failed(*req.manifest, pass.pending, Status::timeout, message, "")) pass.finished[r.task] = r;
  return std::nullopt;
}

std::vector<std::string> runner_argv(const Pass& pass, const fs::path& progress) {
  const RunRequest& req = pass.req;
  std::vector<std::string> argv = req.wrapper;
  argv.insert(argv.end(), {req.runner.string(), "--manifest", req.manifest->path.string(), "--student-dir",
                           req.student_dir.string(), "--backend", req.backend, "--progress",
                           req.sandbox.isolation ? "/dev/fd/3" : progress.string()});
  if (!req.device.empty()) argv.insert(argv.end(), {"--device", req.device});
  if (!req.pictures_dir.empty()) argv.insert(argv.end(), {"--pictures", req.pictures_dir.string()});
  for (const auto& t : pass.pending) argv.insert(argv.end(), {"--task", t});
  return argv;
}

// The class of the device the runner said it opened; empty when it said none it knows.
std::optional<DeviceClass> device_class_of(const nlohmann::json& device) {
  const std::string cls = device.is_object() ? device.value("class", "") : "";
  if (cls == "gpu") return DeviceClass::gpu;
  if (cls == "cpu") return DeviceClass::cpu;
  return std::nullopt;
}

Task without_bounds(Task task) {
  task.threshold.reset();
  task.tier.reset();
  return task;
}

// A process's events into the pass: device, calibration, phases, and the results of pending tasks,
// judged here, once per pending task (gpulab/verdict.hpp): the progress file is written by the
// process that runs student code, so it brings measurements, and the manifest the bounds and points.
void take_progress(Pass& pass, const RunnerProgress& progress) {
  LabRun& run = pass.run;
  if (!progress.device.is_null()) run.device = progress.device;
  run.phases += progress.phases;
  if (!pass.req.calibration) {  // trusted rates were sent: the runner's event only echoes them
    if (progress.calibration) run.calibration = *progress.calibration;
    if (!progress.calibration_doubt.empty()) run.calibration_doubt = progress.calibration_doubt;
  }
  // Passes without the timing case (hidden, sanitizer, correctness only, profiler) grade correctness.
  const RunRequest& req = pass.req;
  const bool bounded = !pass.hidden && !req.sanitize_cases && !req.correctness_only && !req.profile_cases;
  for (TaskResult r : progress.task_results) {
    const Task* task = pass.req.manifest->find_task(r.task);
    if (!task || pass.finished.count(r.task) ||
        std::find(pass.pending.begin(), pass.pending.end(), r.task) == pass.pending.end())
      continue;
    judge_task(r, bounded ? *task : without_bounds(*task), pass.req.backend, device_class_of(run.device),
               pass.req.calibration ? *pass.req.calibration : run.calibration);
    pass.finished[r.task] = r;
  }
  std::erase_if(pass.pending, [&](const std::string& t) { return pass.finished.count(t) > 0; });
}

// After a process that ended before reporting every task: the task it was in fails with the reason
// (false: go on with a fresh process for the rest), or, when it was in none, every pending task does
// (true: the pass is over), unless a lost device after some progress calls for a fresh process.
bool take_early_exit(Pass& pass, const RunnerProgress& progress, const EarlyExit& why, bool device_lost,
                     bool made_progress) {
  const Manifest& m = *pass.req.manifest;
  if (progress.current_task.empty() && device_lost && made_progress) return false;
  if (!progress.current_task.empty()) {
    pass.finished[progress.current_task] =
        all_tasks_failed(m, {progress.current_task}, why.status, why.message, "").front();
    std::erase(pass.pending, progress.current_task);
    return false;
  }
  // Before any task began, nothing of the student's had run but its static constructors: a runner
  // that could not start, open the device or calibrate is the grader's failure, tried again.
  if (!made_progress && why.grader_side && pass.run.grader_failure.empty()) pass.run.grader_failure = why.message;
  const std::string message = why.message.empty() ? "the runner ended without reporting these tasks" : why.message;
  for (auto& r : all_tasks_failed(m, pass.pending, why.status, message, "")) pass.finished[r.task] = r;
  return true;
}

// The runner's sandbox: the request's, with glibc's malloc told to back large blocks with transparent
// huge pages. A GPU's large cases hold GiBs of inputs and references on the host, and faulting them
// in 4 KiB at a time took a quarter of the reduction and scan labs' runs (H200, 2026-11-28: their
// cases 13.5 -> 10.3 s and 22.0 -> 16.9 s). A glibc older than 2.35 ignores the setting.
SandboxSpec runner_sandbox(const SandboxSpec& spec) {
  SandboxSpec runner = spec;
  std::string& tunables = runner.env["GLIBC_TUNABLES"];
  if (const char* own = std::getenv("GLIBC_TUNABLES"); tunables.empty() && own) tunables = own;
  if (tunables.find("glibc.malloc.hugetlb") == std::string::npos)
    tunables += (tunables.empty() ? "" : ":") + std::string("glibc.malloc.hugetlb=1");
  return runner;
}

// Runs one runner process over the pending tasks; true when the pass is over.
bool run_process(Pass& pass, const Limits& limits, const fs::path& output, const std::string& secrets) {
  const RunRequest& req = pass.req;
  ++pass.run.processes;
  const fs::path progress_file =
      req.work_dir / fmt::format("progress-{}{}.jsonl", pass.hidden ? "hidden-" : "", pass.run.processes);
  fs::remove(progress_file);
  const ChildExit exit = run_isolated(runner_argv(pass, progress_file), output, limits, runner_sandbox(req.sandbox),
                                      progress_file, secrets);
  pass.run.phases.run_s += exit.wall_s;
  const RunnerProgress progress = parse_runner_progress(read_text(progress_file));
  const std::size_t finished_before = pass.finished.size();
  take_progress(pass, progress);
  if (pass.pending.empty()) return true;
  const EarlyExitFacts facts{exit,
                             progress.current_case,
                             progress.current_task,
                             progress.stage,
                             progress.case_begun,
                             progress.setup_error,
                             limits.idle_s,
                             req.limits.wall_s,
                             limits,
                             tail_of(output, 300),
                             req.runner.string()};
  return take_early_exit(pass, progress, explain_early_exit(facts), exit.exited_with(ExitStatus::device_lost),
                         pass.finished.size() > finished_before);
}

// One pass of runner processes over `tasks`: the visible cases, or (`hidden`) the hidden ones alone.
// A process that fails in a task is followed by a fresh one for the tasks after it.
LabRun run_pass(const RunRequest& req, bool hidden, const std::vector<std::string>& tasks,
                std::chrono::steady_clock::time_point lab_start) {
  const Manifest& m = *req.manifest;
  Pass pass{req, hidden, lab_start, tasks, {}, lab_of(m, req.backend)};
  fs::create_directories(req.work_dir);
  const fs::path output = req.work_dir / (hidden ? "output-hidden.txt" : "output.txt");
  fs::remove(output);
  const std::string secrets = secrets_for(req, hidden);
  if (req.calibration && !hidden) pass.run.calibration = *req.calibration;
  while (!pass.pending.empty()) {
    const std::optional<Limits> limits = limits_for_next_process(pass);
    if (!limits || run_process(pass, *limits, output, secrets)) break;
  }
  LabRun& run = pass.run;
  for (const auto& name : tasks)
    if (auto it = pass.finished.find(name); it != pass.finished.end()) run.tasks.push_back(it->second);
  run.output = tail_of(output, 4000);
  for (const auto& t : run.tasks)
    for (const auto& c : t.cases)
      if (!c.pictures.empty()) run.pictures_dir = req.pictures_dir.string();
  return run;
}

// A task after its hidden pass: the visible result, unless a hidden case failed; then that failure,
// marked as a hidden case's so that a student's feedback never shows its shape or data.
TaskResult with_hidden(TaskResult visible, const TaskResult& hidden) {
  visible.cases.insert(visible.cases.end(), hidden.cases.begin(), hidden.cases.end());
  for (auto it = visible.cases.end() - static_cast<std::ptrdiff_t>(hidden.cases.size()); it != visible.cases.end();
       ++it)
    it->hidden = true;
  visible.cases_total += hidden.cases_total;
  visible.cases_passed += hidden.cases_passed;
  if (hidden.status == Status::passed) return visible;
  visible.status = hidden.status;
  visible.points = 0;
  visible.failed_in_hidden_case = true;
  visible.message = hidden.message;
  visible.details = hidden.details;
  return visible;
}

}  // namespace

LabRun supervise(const RunRequest& req) {
  const Manifest& m = *req.manifest;
  const auto lab_start = std::chrono::steady_clock::now();
  LabRun run = run_pass(req, false, select_tasks(m, req.tasks), lab_start);
  const bool has_hidden = std::any_of(m.cases.begin(), m.cases.end(), [](const Case& c) { return c.hidden; });
  if (!req.hidden_cases || !has_hidden || !run.grader_failure.empty()) return run;
  // Only a task that earned its points can lose them to a hidden case.
  std::vector<std::string> passed;
  for (const auto& t : run.tasks)
    if (t.status == Status::passed) passed.push_back(t.task);
  if (passed.empty()) return run;
  const LabRun hidden = run_pass(req, true, passed, lab_start);
  run.processes += hidden.processes;
  run.phases.run_s += hidden.phases.run_s;
  run.phases.hidden_s += hidden.phases.run_s;
  run.phases.correctness_s += hidden.phases.correctness_s;
  if (!hidden.grader_failure.empty()) run.grader_failure = hidden.grader_failure;
  for (auto& t : run.tasks)
    for (const auto& h : hidden.tasks)
      if (h.task == t.task) t = with_hidden(t, h);
  return run;
}

std::optional<Calibration> measure_calibration(const RunRequest& req, std::string& why) {
  const Manifest& m = *req.manifest;
  fs::create_directories(req.work_dir);
  const fs::path progress = req.work_dir / "progress-calibration.jsonl",
                 output = req.work_dir / "output-calibration.txt";
  fs::remove(progress);
  fs::remove(output);
  std::vector<std::string> argv{req.runner.string(),      "--manifest", m.path.string(), "--student-dir",
                                req.student_dir.string(), "--backend",  req.backend,     "--progress",
                                progress.string()};
  if (!req.device.empty()) argv.insert(argv.end(), {"--device", req.device});
  Limits limits = req.limits;
  limits.idle_s = req.timeout_s.value_or(m.timeout_s);
  const ChildExit exit = run_isolated(argv, output, limits, runner_sandbox(req.sandbox), progress,
                                      nlohmann::json{{"seed", req.seed}, {"cases", "calibrate"}}.dump() + "\n");
  const RunnerProgress events = parse_runner_progress(read_text(progress));
  if (events.calibration) return events.calibration;
  why = !events.calibration_doubt.empty() ? events.calibration_doubt : events.setup_error;
  if (why.empty())
    why = exit.exited_ok() ? "the runner reported no calibration (the lab has no timing case for this device)"
                           : fmt::format("the runner failed: {}", tail_of(output, 300));
  return std::nullopt;
}

}  // namespace gpulab::cli
