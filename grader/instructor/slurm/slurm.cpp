// `gpulab grade --slurm`: writing, submitting and following a batch's Slurm jobs (slurm.hpp).
#include "slurm.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "batch.hpp"
#include "files.hpp"
#include "gpulab/text.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

std::string sbatch_script_text(const SbatchScript& s) {
  std::string text = "#!/bin/sh\n";
  auto directive = [&](const std::string& option) {
    if (option.find_first_of(" \t\r\n") != std::string::npos)
      throw std::invalid_argument(fmt::format(
          "the sbatch option '{}' holds whitespace, which an #SBATCH line cannot carry: write it without spaces "
          "(--sbatch-arg=--constraint=h100)",
          option));
    text += "#SBATCH " + option + "\n";
  };
  directive("--job-name=" + s.job_name);
  directive("--output=" + s.log.string());
  if (!s.array.empty()) directive("--array=" + s.array);
  for (const auto& d : s.directives) directive(d);
  text += "# Written by gpulab grade --slurm: the same grader, built once on the shared filesystem.\nexec";
  for (const auto& arg : s.command) text += " " + shell_quote(arg);
  return text + "\n";
}

std::vector<std::string> sbatch_directives(const SlurmOptions& s, const std::string& backend) {
  std::vector<std::string> out;
  if (!s.partition.empty()) out.push_back("--partition=" + s.partition);
  // A CUDA batch needs a GPU; OpenCL may run on a CPU node, so it asks for one only when told to.
  const std::string gres = !s.gres.empty() ? s.gres : backend == "cuda" ? "gpu:1" : "";
  if (!gres.empty() && gres != "none") out.push_back("--gres=" + gres);
  if (!s.time.empty()) out.push_back("--time=" + s.time);
  out.insert(out.end(), s.sbatch_args.begin(), s.sbatch_args.end());
  return out;
}

std::vector<std::string> grade_arguments(const GradeOptions& o) {
  std::vector<std::string> a{"--submissions", fs::absolute(o.submissions).lexically_normal().string(),
                             "--out",         fs::absolute(o.out).lexically_normal().string(),
                             "--backend",     o.backend};
  for (const auto& lab : o.labs) a.insert(a.end(), {"--lab", lab});
  if (!o.device.empty()) a.insert(a.end(), {"--device", o.device});
  if (o.seed) a.insert(a.end(), {"--seed", std::to_string(*o.seed)});
  if (o.idle_timeout_s > 0) a.insert(a.end(), {"--timeout", fmt::format("{}", o.idle_timeout_s)});
  a.insert(a.end(), {"--time-limit", fmt::format("{}", o.lab_time_limit_s), "--memory", fmt::format("{}", o.memory_gib),
                     "--processes", std::to_string(o.processes), "--output-limit", fmt::format("{}", o.output_mib),
                     "--hidden-visibility", o.hidden_visibility});
  if (o.jobs > 0) a.insert(a.end(), {"--jobs", std::to_string(o.jobs)});
  if (!o.deadlines.empty()) a.insert(a.end(), {"--deadlines", fs::absolute(o.deadlines).string()});
  for (const auto& [on, flag] : {std::pair{o.force, "--force"},
                                 {o.sanitize == SanitizeMode::all, "--sanitize"},
                                 {o.sanitize == SanitizeMode::off, "--no-sanitize"},
                                 {o.leaderboard, "--leaderboard"},
                                 {o.quiet, "--quiet"}})
    if (on) a.emplace_back(flag);
  return a;
}

std::vector<std::string> students_to_grade(const fs::path& out,
                                           const std::vector<std::pair<std::string, fs::path>>& entries,
                                           const std::string& grader_version, const std::string& options,
                                           const std::string& calibration, bool force) {
  std::vector<std::string> out_names;
  for (const auto& [name, entry] : entries) {
    const json r = json::parse(read_text(out / "students" / name / "result.json"), nullptr, false);
    const bool current =
        !force && r.is_object() && !r.value("grader_error", false) && r.value("grader_version", "") == grader_version &&
        r.value("selection", "").rfind(options + "|isolation", 0) == 0 && r.value("calibration", "") == calibration &&
        r.value("submission_stamp", "") == submission_stamp(entry);
    if (!current) out_names.push_back(name);
  }
  return out_names;
}

SlurmChunk chunk_from_environment(const fs::path& list, int size) {
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  SlurmChunk c;
  c.list = list;
  c.size = size;
  if (!env("SLURM_ARRAY_JOB_ID").empty() && !env("SLURM_ARRAY_TASK_ID").empty()) {
    c.index = std::atoi(env("SLURM_ARRAY_TASK_ID").c_str());
    c.task_id = env("SLURM_ARRAY_JOB_ID") + "_" + env("SLURM_ARRAY_TASK_ID");
  } else if (!env("SLURM_JOB_ID").empty()) {
    c.task_id = env("SLURM_JOB_ID");
  } else {
    throw std::invalid_argument(
        "--slurm-task is for the jobs that `gpulab grade --slurm` submits (SLURM_JOB_ID is not set): run "
        "`gpulab grade --slurm` to grade on the cluster, or `gpulab grade` without it to grade on this machine");
  }
  return c;
}

namespace {

// sbatch --parsable, and the job id it printed; throws with sbatch's own words when it refused.
std::string sbatch(const fs::path& script, const std::string& dependency) {
  const std::string command =
      fmt::format("sbatch --parsable {}{} 2>&1", dependency.empty() ? "" : "--dependency=" + dependency + " ",
                  shell_quote(script.string()));
  const CommandOutput r = run_command(command);
  std::istringstream lines(r.output);
  std::string id;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) id = line.substr(0, line.find(';'));
  if (r.status != 0 || id.empty())
    throw std::runtime_error(fmt::format("sbatch did not queue {} (exit status {}): {}", script.string(), r.status,
                                         r.output.empty() ? "no output" : r.output));
  return id;
}

// The calibration a record must name to count as current: OUT/calibration.json's, when this grader measured it.
std::string current_calibration(const fs::path& out, const std::string& version) {
  const json c = json::parse(read_text(out / "calibration.json"), nullptr, false);
  return c.is_object() && c.value("grader_version", "") == version ? c.value("measured_at", "") : "";
}

struct SubmissionPlan {
  fs::path dir;
  std::vector<std::string> students;
  int tasks = 0;
};

// OUT/slurm/<id>/: students.txt, the scripts, logs/.
SubmissionPlan write_submission(const Toolchain& tc, const GradeOptions& o, const SlurmOptions& s,
                                const std::vector<std::string>& students) {
  SubmissionPlan plan;
  const std::string id = fmt::format("{:%Y%m%d-%H%M%S}", fmt::gmtime(std::time(nullptr)));
  plan.dir = fs::absolute(o.out).lexically_normal() / "slurm" / id;
  plan.students = students;
  plan.tasks = static_cast<int>((students.size() + s.array_chunk - 1) / s.array_chunk);
  fs::create_directories(plan.dir / "logs");
  write_text_atomically(fmt::format("{}\n", fmt::join(students, "\n")), plan.dir / "students.txt");
  const std::string gpulab = (tc.build_dir / "gpulab").string();
  const auto directives = sbatch_directives(s, o.backend);
  auto command = [&](std::vector<std::string> extra) {
    std::vector<std::string> c{gpulab, "grade"};
    const auto args = grade_arguments(o);
    c.insert(c.end(), args.begin(), args.end());
    c.insert(c.end(), extra.begin(), extra.end());
    return c;
  };
  const std::string chunk = std::to_string(s.array_chunk);
  SbatchScript grade{"gpulab-grade", plan.dir / "logs" / "task-%A_%a.log",
                     fmt::format("0-{}{}", plan.tasks - 1, s.max_running > 0 ? fmt::format("%{}", s.max_running) : ""),
                     directives,
                     command({"--slurm-task", (plan.dir / "students.txt").string(), "--array-chunk", chunk})};
  write_text_atomically(sbatch_script_text(grade), plan.dir / "grade.sbatch");
  // The finishing job reads files only: no GPU.
  std::vector<std::string> light;
  for (const auto& d : directives)
    if (d.rfind("--gres=", 0) != 0) light.push_back(d);
  SbatchScript finish{"gpulab-finish", plan.dir / "logs" / "finish-%j.log", "", light,
                      command({"--slurm-finish", plan.dir.string()})};
  write_text_atomically(sbatch_script_text(finish), plan.dir / "finish.sbatch");
  if (o.calibrate) {
    write_text_atomically("", plan.dir / "nobody.txt");
    SbatchScript calibrate{
        "gpulab-calibrate", plan.dir / "logs" / "calibrate-%j.log", "", directives,
        command({"--calibrate", "--slurm-task", (plan.dir / "nobody.txt").string(), "--array-chunk", "1"})};
    write_text_atomically(sbatch_script_text(calibrate), plan.dir / "calibrate.sbatch");
  }
  return plan;
}

}  // namespace

int submit_slurm_batch(const Toolchain& tc, const std::vector<Manifest>& labs, const std::string& backend,
                       const GradeOptions& o, const SlurmOptions& s) {
  if (find_program("sbatch").empty())
    throw std::runtime_error(
        "--slurm: sbatch is not on PATH: run it on a node of the Slurm cluster (a login node), or grade on this "
        "machine with `gpulab grade` without --slurm");
  if (s.array_chunk < 1) throw std::invalid_argument("--array-chunk must be 1 or more students per task");
  const fs::path out = fs::absolute(o.out).lexically_normal();
  fs::create_directories(out / "slurm" / "tasks");
  const std::string version = grader_version(tc, labs, backend);
  const auto entries = submission_entries(fs::absolute(o.submissions));
  const auto students = students_to_grade(out, entries, version, options_key(labs, backend, o),
                                          current_calibration(out, version), o.force || o.calibrate);
  if (students.empty()) {
    fmt::print(
        "gpulab grade --slurm: nothing to submit: all {} students in {} are graded by this grader and "
        "unchanged (--force grades them again; `gpulab grade` without --slurm rewrites the gradebook)\n",
        entries.size(), o.submissions.string());
    return 0;
  }
  const SubmissionPlan plan = write_submission(tc, o, s, students);
  json record{{"id", plan.dir.filename().string()},
              {"submitted_at", now_utc()},
              {"submitted_epoch", static_cast<double>(std::time(nullptr))},
              {"students", students.size()},
              {"students_in_folder", entries.size()},
              {"array_chunk", s.array_chunk},
              {"tasks", plan.tasks},
              {"backend", backend}};
  std::string after;
  if (o.calibrate) {
    record["calibration_job"] = sbatch(plan.dir / "calibrate.sbatch", "");
    after = "afterok:" + record["calibration_job"].get<std::string>();
  }
  record["array_job"] = sbatch(plan.dir / "grade.sbatch", after);
  // Written before the finishing job is queued: it reads the array's id from here.
  write_text_atomically(record.dump(2) + "\n", plan.dir / "submission.json");
  record["finish_job"] = sbatch(plan.dir / "finish.sbatch", "afterany:" + record["array_job"].get<std::string>());
  write_text_atomically(record.dump(2) + "\n", plan.dir / "submission.json");
  fmt::print(
      "gpulab grade --slurm: {} of {} students to grade in {} array task{} of up to {} (job {}{}), then job {} "
      "writes the gradebook\n  scripts and logs: {}\n  progress: gpulab grade --slurm --status --submissions {} "
      "--out {}\n",
      students.size(), entries.size(), plan.tasks, plan.tasks > 1 ? "s" : "", s.array_chunk,
      record["array_job"].get<std::string>(),
      o.calibrate ? fmt::format(", after the calibration job {}", record["calibration_job"].get<std::string>()) : "",
      record["finish_job"].get<std::string>(), plan.dir.string(), shell_quote(o.submissions.string()),
      shell_quote(out.string()));
  return 0;
}

}  // namespace gpulab::cli
