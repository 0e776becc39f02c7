#include "barrier_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "supervisor.hpp"

namespace gpulab::cli {

namespace {

std::string line_of(const SourceWarning& w) { return fmt::format("{}:{}: {}", w.file, w.line, w.message); }

TaskResult unsafe_result(const Manifest& manifest, const std::string& task,
                         const std::vector<const SourceWarning*>& found) {
  std::string details;
  for (std::size_t i = 1; i < found.size(); ++i) details += "also " + line_of(*found[i]) + "\n";
  details +=
      "Not run (unsafe code): a barrier that not every thread reaches hangs or races on a GPU (and on a CPU usually "
      "shows nothing), so this task scores 0 on every device until the barrier is reached by all.";
  TaskResult r = all_tasks_failed(manifest, {task}, Status::unsafe_code, line_of(*found.front()), details).front();
  r.finding = "divergent_barrier";
  return r;
}

}  // namespace

BarrierVerdicts barrier_verdicts(const Manifest& manifest, const KernelMap& map, const std::vector<std::string>& tasks,
                                 const std::vector<SourceWarning>& findings) {
  BarrierVerdicts out;
  std::vector<bool> graded(findings.size(), false);
  for (const auto& task : tasks) {
    const auto reach = map.tasks.find(task);
    if (reach == map.tasks.end()) continue;
    std::vector<const SourceWarning*> found;
    for (std::size_t i = 0; i < findings.size(); ++i)
      if (findings[i].proven && reach->second.functions.count(findings[i].function)) {
        found.push_back(&findings[i]);
        graded[i] = true;
      }
    if (!found.empty()) out.unsafe[task] = unsafe_result(manifest, task, found);
  }
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (graded[i]) continue;
    SourceWarning w = findings[i];
    if (w.proven)
      w.message += " (not graded: no task of this run launches it, as far as the check can follow the launches)";
    out.warnings.push_back(std::move(w));
  }
  return out;
}

BarrierVerdicts barrier_verdicts(const Manifest& manifest, const std::string& backend,
                                 const std::filesystem::path& student_dir, const std::vector<std::string>& tasks,
                                 const std::vector<SourceWarning>& findings) {
  if (std::none_of(findings.begin(), findings.end(), [](const SourceWarning& w) { return w.proven; }))
    return {{}, findings};  // nothing to attribute: no need to read the files again
  return barrier_verdicts(manifest, map_kernels(manifest, read_lab_sources(manifest, backend, student_dir)), tasks,
                          findings);
}

std::vector<std::string> tasks_to_run(const std::vector<std::string>& tasks, const BarrierVerdicts& verdicts) {
  std::vector<std::string> out;
  for (const auto& t : tasks)
    if (!verdicts.unsafe.count(t)) out.push_back(t);
  return out;
}

void add_unsafe_tasks(LabRun& lab, const std::vector<std::string>& tasks, const BarrierVerdicts& verdicts) {
  if (verdicts.unsafe.empty()) return;
  std::vector<TaskResult> ordered;
  for (const auto& name : tasks) {
    if (const auto u = verdicts.unsafe.find(name); u != verdicts.unsafe.end()) {
      ordered.push_back(u->second);
    } else {
      const auto ran =
          std::find_if(lab.tasks.begin(), lab.tasks.end(), [&](const TaskResult& t) { return t.task == name; });
      if (ran != lab.tasks.end()) ordered.push_back(std::move(*ran));
    }
  }
  lab.tasks = std::move(ordered);
}

}  // namespace gpulab::cli
