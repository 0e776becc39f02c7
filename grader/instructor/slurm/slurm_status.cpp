// `gpulab grade --slurm --status`: a submission's progress from OUT (the students' records, the array
// tasks' status files) and, where Slurm answers, squeue (which tasks still wait or run, and where).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "batch.hpp"
#include "files.hpp"
#include "slurm.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct QueuedJob {
  std::string state, where;  // "PENDING", "RUNNING"...; the node, or why it waits
};
using Queue = std::optional<std::map<std::string, QueuedJob>>;

const QueuedJob* find_job(const Queue& queue, const std::string& id) {
  if (!queue) return nullptr;
  const auto it = queue->find(id);
  return it == queue->end() ? nullptr : &it->second;
}

// squeue's view of these jobs, each array task on its own ("1234_5"); nullopt when squeue cannot answer.
Queue queued_jobs(const std::vector<std::string>& ids) {
  if (find_program("squeue").empty()) return std::nullopt;
  const CommandOutput r = run_command(fmt::format("squeue -h -r -o '%i|%T|%R' -j {} 2>&1", fmt::join(ids, ",")));
  // A job that has left the queue makes squeue fail with "Invalid job id" for a single id: nothing queued.
  if (r.status != 0 && r.output.find("Invalid job id") == std::string::npos) return std::nullopt;
  std::map<std::string, QueuedJob> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    const auto a = line.find('|'), b = line.rfind('|');
    if (a == std::string::npos || a == b) continue;
    out[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  return out;
}

// Each task of the array: done, running (where), pending, or ended unfinished.
std::map<std::string, std::vector<std::string>> task_states(const fs::path& out, const json& submission,
                                                            const Queue& queue) {
  const std::string array = submission.value("array_job", "");
  std::map<std::string, std::vector<std::string>> by_state;
  for (int t = 0; t < submission.value("tasks", 0); ++t) {
    const std::string id = fmt::format("{}_{}", array, t);
    const json file = json::parse(read_text(out / "slurm" / "tasks" / (id + ".json")), nullptr, false);
    const std::string written = file.is_object() ? file.value("state", "") : "";
    const QueuedJob* queued = find_job(queue, id);
    if (written == "done")
      by_state["done"].push_back(id);
    else if (queued)
      by_state[queued->state == "RUNNING" ? "running" : "pending"].push_back(
          queued->state == "RUNNING" ? fmt::format("{} on {}", id, queued->where) : id);
    else if (find_job(queue, array))  // the whole array still pending, not yet split into tasks
      by_state["pending"].push_back(id);
    else if (!queue)
      by_state[written.empty() ? "not started (squeue is not available here)"
                               : "started (squeue is not available here)"]
          .push_back(id);
    else
      by_state["ended unfinished (cancelled, failed or out of time)"].push_back(id);
  }
  return by_state;
}

// The submission's students: graded by its tasks, failed there, or waiting.
void print_students(const fs::path& out, const fs::path& dir, const json& submission) {
  const std::string prefix = submission.value("array_job", "") + "_";
  std::istringstream list(read_text(dir / "students.txt"));
  int graded = 0, failed = 0, waiting = 0;
  std::vector<std::string> failed_names;
  for (std::string name; std::getline(list, name);) {
    if (name.empty()) continue;
    const json r = json::parse(read_text(out / "students" / name / "result.json"), nullptr, false);
    const bool by_this = r.is_object() && r.value("slurm_job", "").rfind(prefix, 0) == 0;
    if (r.is_object() && r.value("grader_error", false)) {
      ++failed;
      failed_names.push_back(name);
    } else {
      by_this ? ++graded : ++waiting;
    }
  }
  fmt::print(
      "  students: {} graded, {} waiting or being graded, {} not graded (a task ended early or the grader "
      "failed{}{})\n",
      graded, waiting, failed, failed_names.empty() ? "" : ": ",
      fmt::join(failed_names.begin(), failed_names.begin() + std::min<std::size_t>(5, failed_names.size()), ", "));
}

}  // namespace

int print_slurm_status(const GradeOptions& o) {
  const fs::path out = fs::absolute(o.out).lexically_normal();
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / "slurm", ec))
    if (fs::exists(e.path() / "submission.json")) dirs.push_back(e.path());
  if (dirs.empty()) {
    fmt::print("gpulab grade --slurm --status: {} holds no Slurm submission (gpulab grade --slurm makes one)\n",
               out.string());
    return 1;
  }
  std::sort(dirs.begin(), dirs.end());
  const auto entries = submission_entries(fs::absolute(o.submissions));
  int with_record = 0;
  for (const auto& [name, entry] : entries) with_record += fs::exists(out / "students" / name / "result.json");
  fmt::print("gpulab grade --slurm --status: {}: {} of {} students in {} have a record\n", out.string(), with_record,
             entries.size(), o.submissions.string());
  // The newest submission in full; the earlier ones in a line each.
  for (const auto& dir : dirs) {
    const json s = json::parse(read_text(dir / "submission.json"), nullptr, false);
    if (!s.is_object()) continue;
    std::vector<std::string> ids{s.value("array_job", ""), s.value("finish_job", "")};
    const auto queue = queued_jobs(ids);
    fmt::print(
        "submission {} ({}): {} students in {} tasks, array job {}, finishing job {}{}\n", s.value("id", ""),
        s.value("submitted_at", ""), s.value("students", 0), s.value("tasks", 0), ids[0], ids[1],
        s.contains("calibration_job") ? fmt::format(", calibration job {}", s.value("calibration_job", "")) : "");
    if (dir != dirs.back()) continue;
    print_students(out, dir, s);
    for (const auto& [state, tasks] : task_states(out, s, queue))
      fmt::print("  tasks {}: {}\n", state, fmt::join(tasks, ", "));
    const json batch = json::parse(read_text(out / "batch.json"), nullptr, false);
    const bool finished = batch.is_object() && batch.contains("slurm") && batch["slurm"].is_object() &&
                          batch["slurm"].value("array_job", "") == ids[0];
    const QueuedJob* finishing = find_job(queue, ids[1]);
    fmt::print("  gradebook: {}\n", finished ? (out / "grades.csv").string() + " (written)"
                                    : finishing
                                        ? fmt::format("job {} {} ({})", ids[1], finishing->state, finishing->where)
                                        : "not written by this submission");
  }
  return 0;
}

}  // namespace gpulab::cli
