#include "supervisor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

namespace gpulab::cli {

namespace fs = std::filesystem;

std::vector<std::string> select_tasks(const Manifest& manifest, const std::vector<std::string>& requested) {
  std::vector<std::string> out;
  for (const auto& t : manifest.tasks)
    if (requested.empty() || std::find(requested.begin(), requested.end(), t.name) != requested.end()) out.push_back(t.name);
  return out;
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

std::vector<nlohmann::json> read_events(const fs::path& progress) {
  std::vector<nlohmann::json> events;
  std::ifstream in(progress);
  for (std::string line; std::getline(in, line);) {
    auto event = nlohmann::json::parse(line, nullptr, false);
    if (!event.is_discarded()) events.push_back(std::move(event));  // a line cut short by a crash
  }
  return events;
}

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

std::string signal_text(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV, a segmentation fault";
    case SIGBUS:
      return "SIGBUS, a bus error";
    case SIGFPE:
      return "SIGFPE, an arithmetic error such as an integer division by zero";
    case SIGABRT:
      return "SIGABRT, an abort (an uncaught exception or a failed assert)";
    case SIGILL:
      return "SIGILL, an illegal instruction";
    case SIGXFSZ:
      return "SIGXFSZ: it printed or wrote more than the output limit (a print in a loop?)";
    case SIGXCPU:
      return "SIGXCPU: it used more than its CPU time limit (a busy loop in host code?)";
    case SIGKILL:
      return "SIGKILL, killed from outside (out of memory?)";
    default:
      return fmt::format("signal {} ({})", sig, strsignal(sig));
  }
}

}  // namespace

namespace {

// The secrets a runner reads on standard input: the seed, which cases, and trusted rates if any.
std::string secrets_for(const RunRequest& req, bool hidden) {
  nlohmann::json j{{"seed", req.seed},
                   {"cases", hidden                 ? "hidden"
                             : req.sanitize_cases   ? "sanitize"
                             : req.correctness_only ? "correctness"
                                                    : "visible"}};
  if (req.calibration && !hidden) j["calibration"] = calibration_to_json(*req.calibration);
  return j.dump() + "\n";
}

// What one runner process's events said about its calibration and where its time went.
struct ProcessClock {
  bool task_begun = false, calibrated = false;
  double case_began_at = 0;
};

// A "calibration" event: its time into the phases; its rates into the lab unless trusted rates were
// sent (then the event only echoes them). A forged event cannot be told from a real one by its
// content, only by its place: one per process, before any task began, or the lab notes a doubt.
void take_calibration(LabRun& run, const RunRequest& req, const nlohmann::json& e, ProcessClock& clock) {
  run.phases.calibration_s += e.value("took_s", 0.0);
  if (req.calibration) return;
  if (clock.task_begun) run.calibration_doubt = "a calibration event after a task began";
  if (clock.calibrated) run.calibration_doubt = "two calibration events from one runner";
  clock.calibrated = true;
  try {
    run.calibration = calibration_from_json(e);
  } catch (const std::invalid_argument& bad) {
    run.calibration_doubt = fmt::format("a malformed calibration event ({})", bad.what());
  }
}

// A case's time (from its case_begin to its case_end, on the runner's clock) into the phases.
void take_case_time(LabRun& run, const nlohmann::json& e, const ProcessClock& clock) {
  const double took = std::max(0.0, e.value("at_s", 0.0) - clock.case_began_at);
  const bool timed = e.contains("result") && e["result"].contains("timing");
  (timed ? run.phases.timing_s : run.phases.correctness_s) += took;
  if (timed) run.phases.timed_launches_s += std::clamp(e["result"].value("timed_s", 0.0), 0.0, took);
}

// One pass of runner processes over `tasks`: the visible cases, or (`hidden`) the hidden ones alone.
// A process that fails in a task is followed by a fresh one for the tasks after it.
LabRun run_pass(const RunRequest& req, bool hidden, const std::vector<std::string>& tasks,
                std::chrono::steady_clock::time_point lab_start) {
  const Manifest& m = *req.manifest;
  LabRun run;
  run.id = m.id;
  run.name = m.name;
  run.title = m.title;
  run.backend = req.backend;
  const double timeout = req.timeout_s.value_or(m.timeout_s);
  fs::create_directories(req.work_dir);
  const fs::path output = req.work_dir / (hidden ? "output-hidden.txt" : "output.txt");
  fs::remove(output);
  const std::string secrets = secrets_for(req, hidden);
  if (req.calibration && !hidden) run.calibration = *req.calibration;

  std::vector<std::string> pending = tasks;
  std::map<std::string, TaskResult> finished;
  while (!pending.empty()) {
    Limits limits = req.limits;  // the wall-clock limit holds for the whole lab, over every restart
    if (limits.wall_s > 0) {
      limits.wall_s -= std::chrono::duration<double>(std::chrono::steady_clock::now() - lab_start).count();
      if (limits.wall_s < 1) {
        const auto message = fmt::format("not run: the lab used up its time limit of {:.0f} s", req.limits.wall_s);
        for (auto& r : all_tasks_failed(m, pending, Status::timeout, message, "")) finished[r.task] = r;
        break;
      }
    }
    ++run.processes;
    const fs::path progress = req.work_dir / fmt::format("progress-{}{}.jsonl", hidden ? "hidden-" : "", run.processes);
    fs::remove(progress);
    std::vector<std::string> argv = req.wrapper;
    argv.insert(argv.end(), {req.runner.string(), "--manifest", m.path.string(), "--student-dir", req.student_dir.string(),
                             "--backend", req.backend, "--progress", req.sandbox.isolation ? "/dev/fd/3" : progress.string()});
    if (!req.device.empty()) argv.insert(argv.end(), {"--device", req.device});
    if (!req.pictures_dir.empty()) argv.insert(argv.end(), {"--pictures", req.pictures_dir.string()});
    for (const auto& t : pending) argv.insert(argv.end(), {"--task", t});

    limits.idle_s = timeout;
    const ChildExit exit = run_isolated(argv, output, limits, req.sandbox, progress, secrets);
    run.phases.run_s += exit.wall_s;

    std::string current_task, current_case, setup_error;
    const std::size_t finished_before = finished.size();
    ProcessClock clock;
    for (const auto& e : read_events(progress)) try {
      const std::string kind = e.value("event", "");
      if (kind == "device") {
        run.device = e;
        run.device.erase("event");
      } else if (kind == "calibration") {
        take_calibration(run, req, e, clock);
      } else if (kind == "task_begin") {
        current_task = e.at("task");
        current_case.clear();
        clock.task_begun = true;
      } else if (kind == "case_begin") {
        current_case = e.at("case");
        clock.case_began_at = e.value("at_s", 0.0);
      } else if (kind == "case_end") {
        take_case_time(run, e, clock);
      } else if (kind == "task_end") {
        TaskResult r = e.at("result").get<TaskResult>();
        // Points and the maximum come from the manifest, once per pending task: the progress file
        // is written by the process that runs student code.
        const Task* task = m.find_task(r.task);
        if (task && !finished.count(r.task) && std::find(pending.begin(), pending.end(), r.task) != pending.end()) {
          r.function = task->function;
          r.max_points = task->points;
          r.bonus = task->bonus;
          r.points = r.status == Status::passed ? task->points : 0;
          finished[r.task] = r;
        }
        current_task.clear();
      } else if (kind == "error") {
        setup_error = e.value("message", "");
      }
    } catch (const std::exception&) {
      // A malformed event (a line cut short, or written by student code) is ignored.
    }
    std::erase_if(pending, [&](const std::string& t) { return finished.count(t) > 0; });
    if (pending.empty()) break;

    // The runner ended before reporting every task: say why, for the task it was in.
    const std::string where = current_case.empty() ? "" : fmt::format(" in case {}", current_case);
    Status status = Status::crashed;
    std::string message;
    if (exit.killed_for == KillReason::idle) {
      status = Status::timeout;
      // Filling gigabytes page by page is slow on a loaded machine: the watchdog can fire before the
      // memory limit does, and then the memory, not a hung kernel, is the likely story.
      const bool holding_memory = limits.memory_bytes && exit.peak_memory_bytes * 2 > limits.memory_bytes;
      message = fmt::format("timed out after {:.0f} s without progress{} — {}", timeout, where,
                            holding_memory
                                ? fmt::format("its processes held {:.1f} GiB of memory (the limit is {:.1f} GiB): a huge "
                                              "or leaking host allocation?",
                                              exit.peak_memory_bytes / double(1ull << 30), limits.memory_bytes / double(1ull << 30))
                                : "an infinite loop, or a barrier (__syncthreads / barrier) that not every thread of the "
                                  "block reaches, e.g. inside an if");
    } else if (exit.killed_for == KillReason::timeout) {
      status = Status::timeout;
      message = fmt::format("stopped after {:.0f} s, the time limit of the whole lab{}", req.limits.wall_s, where);
    } else if (exit.killed_for == KillReason::disk) {
      message = fmt::format("stopped{}: it wrote more than {} MiB of files, the limit — files written in a loop?", where,
                            limits.disk_bytes >> 20);
    } else if (exit.killed_for == KillReason::memory) {
      message = fmt::format("stopped{}: its processes used more than {:.1f} GiB of memory, the limit — a huge or "
                            "leaking host allocation?",
                            where, limits.memory_bytes / double(1ull << 30));
    } else if (exit.signal == SIGXFSZ || exit.signal == SIGXCPU) {
      message = fmt::format("the runner was stopped with {}{}", signal_text(exit.signal), where);
    } else if (exit.signal) {
      message = fmt::format("the runner crashed with {}{} — on a CPU OpenCL device an out-of-bounds access in a "
                            "kernel crashes the process: check the bounds test of every work-item; in host code, "
                            "check pointers and sizes",
                            signal_text(exit.signal), where);
    } else if (!setup_error.empty()) {
      status = Status::error;
      message = setup_error;
    } else if (exit.exited_with(ExitStatus::cannot_start)) {
      status = Status::error;
      message = fmt::format("the sandbox could not start the runner: {}", tail_of(output, 300));
    } else if (exit.exited_with(ExitStatus::cannot_execute)) {
      status = Status::error;
      message = fmt::format("cannot execute the runner {}", req.runner.string());
    } else if (WIFEXITED(exit.status) && !exit.exited_with(ExitStatus::device_lost)) {
      message = fmt::format("the runner exited with status {}{} before reporting (did student code call exit?)",
                            WEXITSTATUS(exit.status), where);
    }
    // A runner is one process (three inside bubblewrap): many more mean code that forks in a loop.
    if (exit.peak_processes > 8)
      message += fmt::format(" (it had started {} processes{}: a fork bomb?)", exit.peak_processes,
                             limits.processes ? fmt::format(", the limit is {}", limits.processes) : "");
    const bool device_lost = exit.exited_with(ExitStatus::device_lost);
    // The faulting task reported itself: rerun the rest, as long as each run gets further.
    if (current_task.empty() && device_lost && finished.size() > finished_before) continue;
    // Before any task began, nothing of the student's had run but its static constructors: a runner
    // that could not start, open the device or calibrate is the grader's failure, tried again.
    const bool grader_side = exit.exited_with(ExitStatus::cannot_start) || exit.exited_with(ExitStatus::cannot_execute) ||
                             (exit.exited_with(ExitStatus::setup_error) && !setup_error.empty());
    if (current_task.empty() && finished.size() == finished_before && grader_side && run.grader_failure.empty())
      run.grader_failure = message;
    if (current_task.empty()) {
      if (message.empty()) message = "the runner ended without reporting these tasks";
      // Nothing started (setup failed): every pending task gets the message, no rerun.
      for (auto& r : all_tasks_failed(m, pending, status, message, "")) finished[r.task] = r;
      break;
    }
    auto failed = all_tasks_failed(m, {current_task}, status, message, "");
    finished[current_task] = failed.front();
    std::erase(pending, current_task);
  }

  for (const auto& name : tasks)
    if (auto it = finished.find(name); it != finished.end()) run.tasks.push_back(it->second);
  run.output = tail_of(output, 4000);
  for (const auto& t : run.tasks)
    for (const auto& c : t.cases)
      if (!c.pictures.empty()) run.pictures_dir = req.pictures_dir.string();
  return run;
}

// A task after its hidden pass: the visible result, unless a hidden case failed; then that failure,
// marked so that a student's feedback never shows the hidden case's shape or data.
TaskResult with_hidden(TaskResult visible, const TaskResult& hidden) {
  visible.cases.insert(visible.cases.end(), hidden.cases.begin(), hidden.cases.end());
  for (auto it = visible.cases.end() - static_cast<std::ptrdiff_t>(hidden.cases.size()); it != visible.cases.end(); ++it)
    it->hidden = true;
  visible.cases_total += hidden.cases_total;
  visible.cases_passed += hidden.cases_passed;
  if (hidden.status == Status::passed) return visible;
  visible.status = hidden.status;
  visible.points = 0;
  const std::string prefix = "(hidden case) ";
  visible.message = hidden.message.rfind(prefix, 0) == 0 ? hidden.message : prefix + hidden.message;
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
  const fs::path progress = req.work_dir / "progress-calibration.jsonl", output = req.work_dir / "output-calibration.txt";
  fs::remove(progress);
  fs::remove(output);
  std::vector<std::string> argv{req.runner.string(), "--manifest", m.path.string(), "--student-dir",
                                req.student_dir.string(), "--backend", req.backend, "--progress", progress.string()};
  if (!req.device.empty()) argv.insert(argv.end(), {"--device", req.device});
  Limits limits = req.limits;
  limits.idle_s = req.timeout_s.value_or(m.timeout_s);
  const ChildExit exit = run_isolated(argv, output, limits, req.sandbox, progress,
                                      nlohmann::json{{"seed", req.seed}, {"cases", "calibrate"}}.dump() + "\n");
  for (const auto& e : read_events(progress)) try {
      if (e.value("event", "") == "calibration") return calibration_from_json(e);
      if (e.value("event", "") == "error") why = e.value("message", "");
    } catch (const std::exception& bad) {
      why = fmt::format("a malformed calibration event ({})", bad.what());
      return std::nullopt;
    }
  if (why.empty())
    why = exit.exited_ok() ? "the runner reported no calibration (the lab has no timing case for this device)"
                           : fmt::format("the runner failed: {}", tail_of(output, 300));
  return std::nullopt;
}

}  // namespace gpulab::cli
