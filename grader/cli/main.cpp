// gpulab: builds students' lab files against the pristine harness, runs each lab in its own
// process, and reports. `gpulab check --help` lists the options.
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "audit.hpp"
#include "batch.hpp"
#include "calibration_cache.hpp"
#include "files.hpp"
#include "gpulab/device.hpp"
#include "gpulab/random.hpp"
#include "gpulab/text.hpp"
#include "grade.hpp"
#include "history.hpp"
#include "lab_job.hpp"
#include "machine_lock.hpp"
#include "profiler.hpp"
#include "release.hpp"
#include "report.hpp"
#include "sanitizer.hpp"
#include "similarity.hpp"
#include "slurm.hpp"
#include "student_build.hpp"
#include "supervisor.hpp"

namespace fs = std::filesystem;
using namespace gpulab;
using namespace gpulab::cli;

namespace {

fs::path own_directory() { return fs::canonical("/proc/self/exe").parent_path(); }

// Where a source tree's objects and reports go: build/students/labs, .../solutions, or a name
// with a hash of the path for any other folder.
std::string source_key(const Toolchain& tc, const fs::path& source) {
  for (const char* known : {"labs", "solutions"})
    if (fs::exists(tc.repo / known) && fs::equivalent(source, tc.repo / known)) return known;
  return fmt::format("{}-{:08x}", source.filename().string(), std::hash<std::string>{}(source.string()) & 0xffffffffu);
}

std::vector<Manifest> select_labs(const Toolchain& tc, const std::vector<std::string>& wanted) {
  auto all = load_all_manifests(tc.repo / "labs");
  if (wanted.empty()) return all;
  std::vector<Manifest> out;
  for (const auto& w : wanted) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Manifest& m) { return lab_named(m.id, m.name, w); });
    if (it == all.end()) {
      std::string names;
      for (const auto& m : all) names += " " + m.name;
      throw std::invalid_argument(fmt::format("LAB={} matches no lab; the labs are:{}", w, names));
    }
    out.push_back(*it);
  }
  return out;
}

std::string choose_backend(const Toolchain& tc, const std::string& requested) {
  const auto compiled = available_backends();
  if (!requested.empty()) {
    if (std::find(compiled.begin(), compiled.end(), requested) == compiled.end() || !tc.has_backend(requested))
      throw std::invalid_argument(fmt::format(
          "BACKEND={} is not available in this build (available: {}){}", requested, fmt::join(compiled, ", "),
          requested == "cuda"
              ? ": CUDA (nvcc) was not found when the grader was built; install the CUDA Toolkit, "
                "then run `make clean` and `make check` again; meanwhile `make check BACKEND=opencl` runs the OpenCL "
                "labs"
              : ""));
    return requested;
  }
  for (const auto& b : compiled)
    if (tc.has_backend(b) && !list_devices(b).empty()) return b;  // CUDA first, when a GPU is usable
  throw std::runtime_error(
      "no CUDA or OpenCL device found. Without an NVIDIA GPU, install PoCL (sudo apt-get install pocl-opencl-icd) "
      "to run the OpenCL labs on the CPU");
}

// Why this machine cannot run a lab on `backend` and `selector` (no such device), with what to do
// instead; "" when it can. Checked before a run, so the student reads this rather than a runner's
// "no device" error (their files still compiled, which is worth knowing).
std::string no_device_reason(const std::string& backend, const std::string& selector) {
  try {
    find_device(backend, selector);
    return "";
  } catch (const std::exception& e) {
    if (backend == "cuda" && list_devices("cuda").empty())
      return "this machine has no CUDA device: your CUDA files compiled, but they cannot run here. Run `make check "
             "BACKEND=opencl` to run the OpenCL labs on this machine (on a CPU, correctness is graded), or `make "
             "check` on a machine with an NVIDIA GPU";
    return fmt::format("{}; `make devices` lists this machine's devices", e.what());
  }
}

// Timings are fair only when one run at a time uses a GPU: a check waits for batches and other checks
// on the same GPU (and they for it). A CPU device is shared as it is; no lock folder, no lock.
std::optional<MachineLock> lock_gpu(const std::string& backend, const std::string& selector) {
  try {
    const DeviceInfo device = find_device(backend, selector);
    if (device.device_class != DeviceClass::gpu) return std::nullopt;
    const std::string name = gpu_lock_name(device);
    if (auto lock = MachineLock::try_take(name)) return lock;
    fmt::print(stderr,
               "gpulab: another gpulab run is timing kernels on {}; waiting for it (timings are fair only one at "
               "a time)…\n",
               device.name);
    return MachineLock::take(name);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: running without the GPU lock ({}); another run on this GPU may disturb the timings\n",
               e.what());
    return std::nullopt;
  }
}

struct CheckOptions {
  std::string source, backend, device, json;
  std::string outcome;  // where a check that did not pass says so in one line (write_outcome)
  std::vector<std::string> labs, tasks;
  std::uint64_t seed = 0;
  double timeout = 0;
  bool build_only = false;
  bool sanitize = false;     // the sanitizer gate instead of the check (sanitizer.hpp)
  bool profile = false;      // after each lab, its tasks' timing case under Nsight Compute (profiler.hpp)
  bool recalibrate = false;  // measure calibrations afresh instead of taking the cache's (calibration_cache.hpp)
};

// What one `gpulab check` runs its labs with.
struct CheckPlan {
  const CheckOptions& options;
  const Toolchain& tc;
  fs::path source, work;  // the graded folder; its objects, pictures and report
  std::string backend;
  std::optional<SanitizerGate> gate;
  CheckCalibrations calibrations;
  std::optional<Profiler> profiler = std::nullopt;
};

// Builds one lab and, unless only building, runs its tasks: under the GPU lock, through the
// calibration cache or the sanitizer gate.
LabRun check_lab(CheckPlan& plan, const Manifest& m, const std::vector<std::string>& tasks, std::uint64_t seed) {
  const CheckOptions& o = plan.options;
  LabJob job;
  job.toolchain = &plan.tc, job.manifest = &m, job.backend = plan.backend, job.tasks = tasks;
  job.student_dir = plan.source / m.id;
  job.build_dir = plan.work / m.id / plan.backend;
  RunRequest& req = job.request;
  req.device = o.device;
  req.seed = seed;
  if (o.timeout > 0) req.timeout_s = o.timeout;
  req.work_dir = job.build_dir;
  // Next to the report: build/students/<source>/pictures/<lab>/<backend>/<task>/.
  req.pictures_dir = plan.work / "pictures" / m.id / plan.backend;
  if (!o.build_only)
    job.supervise = [&](const RunRequest& built) {
      fs::remove_all(built.pictures_dir);  // no stale pictures from an earlier run
      if (const auto why = no_device_reason(plan.backend, o.device); !why.empty()) {
        LabRun lab = lab_of(m, plan.backend);
        lab.tasks = all_tasks_failed(m, built.tasks, Status::error, why, "");
        return lab;
      }
      const auto gpu = lock_gpu(plan.backend, o.device);
      if (!plan.gate) {
        LabRun lab = plan.calibrations.supervise(built);
        if (plan.profiler) {
          fmt::print(stderr, "gpulab: {}: profiling the timing case of each task with Nsight Compute…\n", m.id);
          lab.profile = profile_lab(built, *plan.profiler);
        }
        return lab;
      }
      plan.gate->student_files = m.files.at(plan.backend);
      plan.gate->shown_dir = m.id;
      return sanitize_lab(built, *plan.gate);
    };
  LabRun lab = build_and_supervise(job);
  const std::string repo = plan.tc.repo.string() + "/";  // paths relative to the repository read better
  lab.pictures_dir = replace_all(lab.pictures_dir, repo);
  for (auto& t : lab.tasks) {
    t.message = replace_all(t.message, repo);
    t.details = replace_all(t.details, repo);
  }
  return lab;
}

// `gpulab build`: the build failures, or that every lab builds.
int report_build(const RunSummary& run) {
  for (const auto& lab : run.labs)
    for (const auto& t : lab.tasks) fmt::print("{}: {}\n{}\n", lab.id, t.message, t.details);
  fmt::print("{} ({}): {}\n", run.source, run.backend, run.labs.empty() ? "every lab builds" : "build failed");
  return run.labs.empty() ? 0 : 1;
}

// Appends this check to build/history.jsonl (`gpulab history`); a failure there only warns: the
// check itself is complete.
void record_history(const Toolchain& tc, const fs::path& source, const std::vector<Manifest>& labs,
                    const RunSummary& run) {
  try {
    std::map<std::string, std::string> hashes;
    for (const auto& m : labs)
      if (m.files.count(run.backend)) hashes[m.id] = lab_files_hash(source / m.id, m.files.at(run.backend));
    append_history(tc.build_dir / "history.jsonl", history_entry(run, hashes, now_utc()));
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: this check was not added to the history ({})\n", e.what());
  }
}

// `--outcome FILE`: the line the Makefile stops a failed `make check` with, instead of make's "Error
// 1", which reads like a failed build. "" removes the file, so no earlier run's line outlives a pass.
// It never changes the exit status: a file that cannot be written is only reported.
void write_outcome(const std::string& file, const std::string& line) {
  if (file.empty()) return;
  try {
    if (line.empty())
      fs::remove(file);
    else
      write_text_atomically(line + "\n", fs::absolute(file));
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: the check's outcome was not written to {} ({})\n", file, e.what());
  }
}

// SOURCE as `gpulab grade` takes a submission: the folder of the lab folders, or a clone's root that
// holds them in labs/ (none of the labs' folders at the top, a labs/ folder with one of them).
fs::path course_labs(const fs::path& source, const std::vector<Manifest>& labs) {
  const auto has_a_lab = [&](const fs::path& dir) {
    return std::any_of(labs.begin(), labs.end(), [&](const Manifest& m) { return fs::is_directory(dir / m.id); });
  };
  if (!has_a_lab(source) && has_a_lab(source / "labs")) return source / "labs";
  return source;
}

int check(const CheckOptions& o) {
  write_outcome(o.outcome, "");
  const Toolchain tc = Toolchain::load(own_directory());
  fs::path source = fs::absolute(o.source.empty() ? tc.repo / "labs" : fs::path(o.source)).lexically_normal();
  if (!fs::is_directory(source)) throw std::invalid_argument(fmt::format("SOURCE={} is not a folder", source.string()));
  const auto labs = select_labs(tc, o.labs);
  source = course_labs(source, labs);
  require_known_tasks(labs, o.tasks);
  const std::string backend = choose_backend(tc, o.backend);
  CheckPlan plan{o,
                 tc,
                 source,
                 tc.build_dir / "students" / source_key(tc, source),
                 backend,
                 std::nullopt,
                 CheckCalibrations(tc, backend, o.device, o.recalibrate)};
  if (o.sanitize && !o.build_only) plan.gate = make_sanitizer_gate(tc, backend);
  // Profiling informs and never grades: where it cannot run, the check runs and says why at the end.
  std::string no_profile;
  if (o.profile && !o.build_only && !o.sanitize) try {
      for (const auto& m : labs) require_known_counters(m.profile, m.id);
      plan.profiler = make_profiler(tc, backend);
    } catch (const std::exception& e) { no_profile = e.what(); }
  RunSummary run;
  run.source = source.string();
  run.backend = backend;
  run.seed = o.seed ? o.seed : fresh_seed();
  for (const auto& m : labs) {
    const auto tasks = m.files.count(backend) ? select_tasks(m, o.tasks) : std::vector<std::string>{};
    if (tasks.empty()) continue;
    if (!o.build_only)
      fmt::print(stderr, "gpulab: {} ({}{})…\n", m.id, backend,
                 plan.gate
                     ? fmt::format(", correctness cases under compute-sanitizer {}", fmt::join(plan.gate->tools, ", "))
                     : "");
    LabRun lab = check_lab(plan, m, tasks, run.seed);
    if (o.build_only && lab.tasks.empty()) {  // it built
      for (const auto& w : lab.warnings) fmt::print(stderr, "warning: {}\n", w);
      continue;
    }
    run.labs.push_back(std::move(lab));
  }
  if (o.build_only) return report_build(run);
  const fs::path json = o.json.empty() ? plan.work / "report.json" : fs::path(o.json);
  write_json_atomically(to_json(run), json);
  if (!o.sanitize) record_history(tc, source, labs, run);
  const bool color = ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  fmt::print("{}", render_report(run, color));
  fmt::print("JSON report: {}\n", json.string());
  if (!no_profile.empty()) fmt::print("profile: not run: {}\n", no_profile);
  std::fflush(stdout);  // the report first, then any complaint about the outcome's file
  write_outcome(o.outcome, render_outcome(run));
  return run.all_passed() ? 0 : 1;
}

// `gpulab history`: the timeline of this build folder's checks, of one lab or of all.
int history(const std::vector<std::string>& labs) {
  const Toolchain tc = Toolchain::load(own_directory());
  const auto entries = read_history(tc.build_dir / "history.jsonl");
  if (labs.empty()) fmt::print("{}", render_history(entries, ""));
  for (const auto& lab : labs) fmt::print("{}", render_history(entries, lab));
  fmt::print("history: {}\n", (tc.build_dir / "history.jsonl").string());
  return 0;
}

// OUT/index.html, the summary page of a batch, drawn by a Python script with matplotlib; false (the
// script said why) when it could not be written. The grades are complete without it.
bool write_summary_page(const Toolchain& tc, const fs::path& out) {
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string command =
      fmt::format("{} {} {}", shell_quote(python), shell_quote((tc.repo / "scripts" / "grade" / "summary.py").string()),
                  shell_quote(out.string()));
  if (std::system(command.c_str()) != 0) return false;
  fmt::print("summary: {}\n", (out / "index.html").string());
  return true;
}

// The backend a Slurm submission grades with when none is named: the login node that submits it may
// have no GPU, so CUDA whenever the grader was built with it (the array's jobs ask for a GPU).
std::string slurm_backend(const Toolchain& tc, const std::string& requested) {
  if (!requested.empty()) return choose_backend(tc, requested);
  return tc.has_backend("cuda") ? "cuda" : "opencl";
}

// The end of a batch, of a Slurm array task, or of a Slurm submission's finishing job, in words.
int report_batch(const Toolchain& tc, const GradeOptions& g, const BatchSummary& s) {
  const fs::path out = fs::absolute(g.out);
  if (g.chunk) {
    fmt::print("task {}: graded {} of {} submissions ({} refused, {} unchanged and skipped) in {:.0f} s\n",
               g.chunk->task_id, s.graded, s.submissions, s.refused, s.skipped_unchanged, s.wall_s);
    return s.failed > 0 ? 1 : 0;
  }
  if (!g.finish.empty())
    fmt::print("the Slurm submission ended after {:.0f} s: {} of {} students graded ({} refused)\n", s.wall_s, s.graded,
               s.submissions, s.refused);
  else
    fmt::print("graded {} of {} submissions ({} refused, {} unchanged and skipped) in {:.0f} s{}\n", s.graded,
               s.submissions, s.refused, s.skipped_unchanged, s.wall_s,
               s.graded > 0 ? fmt::format(": {:.0f} submissions per hour", s.graded / (s.wall_s / 3600)) : "");
  fmt::print("gradebook: {}\n", (out / "grades.csv").string());
  if (s.failed > 0 && !g.finish.empty())
    fmt::print(stderr,
               "gpulab grade: {} student{} not graded (a task was cancelled, failed or ran out of time, or the "
               "grader failed): run the same gpulab grade --slurm again to grade them\n",
               s.failed, s.failed > 1 ? "s are" : " is");
  else if (s.failed > 0)
    fmt::print(stderr, "gpulab grade: the grader failed for {} submission{} (see above); run again to grade them\n",
               s.failed, s.failed > 1 ? "s" : "");
  if (!write_summary_page(tc, out))
    fmt::print(stderr,
               "gpulab grade: the summary page was not written (see above; it needs python3-matplotlib); the "
               "grades are complete\n");
  return s.failed > 0 ? 1 : 0;
}

int grade(const CheckOptions& c, GradeOptions g, const SlurmOptions& slurm) {
  const Toolchain tc = Toolchain::load(own_directory());
  const auto labs = select_labs(tc, c.labs);
  g.labs = c.labs;
  g.device = c.device;
  if (c.seed) g.seed = c.seed;
  if (c.timeout > 0) g.idle_timeout_s = c.timeout;
  if (slurm.status) return print_slurm_status(g);
  g.backend = slurm.submit ? slurm_backend(tc, c.backend) : choose_backend(tc, c.backend);
  if (slurm.submit) return submit_slurm_batch(tc, labs, g.backend, g, slurm);
  if (!slurm.task_list.empty()) g.chunk = chunk_from_environment(slurm.task_list, slurm.array_chunk);
  g.finish = slurm.finish;
  return report_batch(tc, g, grade_batch(tc, labs, g.backend, g));
}

// The mutation audit of each selected lab's reference solution (audit.hpp); exit 1 when a mutant
// survived that its lab's mutants.toml does not explain.
int audit(const CheckOptions& c, bool correctness_only, int jobs) {
  const Toolchain tc = Toolchain::load(own_directory());
  if (!fs::is_directory(tc.repo / "solutions"))
    throw std::invalid_argument(
        "the audit mutates the reference solutions (solutions/), which the student repository "
        "does not have; run it in the instructor repository");
  AuditOptions o;
  o.backend = choose_backend(tc, c.backend);
  o.device = c.device;
  o.seed = c.seed ? c.seed : fresh_seed();
  o.timing = !correctness_only && find_device(o.backend, c.device).device_class == DeviceClass::gpu;
  o.sanitize = c.sanitize;
  o.jobs = std::max(1, jobs);  // correctness runs at once; timed runs one at a time
  const bool color = ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  fmt::print("gpulab audit: {} ({}), seed {}{}\n", o.backend,
             o.timing ? "cases, thresholds and guards" : "correctness cases and guards, no timing", o.seed,
             o.sanitize ? ", with the sanitizer gate" : "");
  bool all_explained = true;
  for (const auto& m : select_labs(tc, c.labs)) {
    if (!m.files.count(o.backend)) continue;
    fmt::print(stderr, "gpulab audit: {}…\n", m.id);
    const auto verdicts = audit_lab(tc, m, tc.repo / "solutions" / m.id, tc.build_dir / "audit" / m.id / o.backend, o);
    fmt::print("{}", render_audit(m, o.backend, verdicts, color));
    std::fflush(stdout);
    for (const auto& v : verdicts)
      all_explained &= v.outcome != MutantVerdict::Outcome::survived && v.outcome != MutantVerdict::Outcome::invalid;
  }
  return all_explained ? 0 : 1;
}

// The release compiles the harness's CUDA kernels with the course build's nvcc and host compiler.
CudaKernels cuda_kernels_of(const Toolchain& tc, const std::vector<std::string>& archs) {
  CudaKernels cuda;
  if (!archs.empty()) cuda.archs = archs;
  const auto& entry = tc.config.value("cuda", nlohmann::json());
  if (!entry.is_object()) return cuda;
  cuda.nvcc = entry.value("nvcc", "");
  const auto flags = entry.value("flags", std::vector<std::string>{});
  for (std::size_t i = 0; i + 1 < flags.size(); ++i)
    if (flags[i] == "-ccbin") cuda.host_compiler = flags[i + 1];
  return cuda;
}

int release(const std::string& out, const std::vector<std::string>& cuda_archs) {
  const Toolchain tc = Toolchain::load(own_directory());
  const CudaKernels cuda = cuda_kernels_of(tc, cuda_archs);
  if (!cuda.nvcc.empty())
    fmt::print(stderr, "gpulab release: compiling the harness's CUDA kernels for {} (a few minutes)…\n",
               fmt::join(cuda.archs, ", "));
  fmt::print("{}", describe(write_student_release(tc.repo, fs::absolute(out), cuda)));
  return 0;
}

int devices() {
  for (const auto& backend : available_backends()) {
    const auto list = list_devices(backend);
    fmt::print("{}: {}\n", backend, list.empty() ? "no device" : "");
    for (const auto& d : list)
      fmt::print("  {}: {} · {} · {} ({})\n", d.index, d.name, d.platform, d.details, to_string(d.device_class));
  }
  return 0;
}

// `gpulab grade`'s options: the batch's (GradeOptions) and where its submissions and results are.
struct GradeCommand {
  GradeOptions options;
  SlurmOptions slurm;
  std::string submissions, out = "results";
  bool sanitize_all = false, no_sanitize = false;  // --sanitize, --no-sanitize: GradeOptions::sanitize
};

// --slurm and its options (slurm.hpp), and the options its jobs give themselves.
void add_slurm_options(CLI::App* grade_cmd, SlurmOptions& s) {
  auto* slurm =
      grade_cmd->add_flag("--slurm", s.submit,
                          "grade on a Slurm cluster: submit a job array (chunks of students, one grader on the "
                          "shared filesystem, results into OUT as here) and a job that writes the gradebook");
  grade_cmd->add_flag("--status", s.status, "with --slurm: the progress of OUT's submission (graded, running, failed)")
      ->needs(slurm);
  grade_cmd->add_option("--partition", s.partition, "with --slurm: the partition of the jobs")->needs(slurm);
  grade_cmd->add_option("--gres", s.gres, "with --slurm: the resources of each task (default: gpu:1 with CUDA; none)")
      ->needs(slurm);
  grade_cmd->add_option("--time", s.time, "with --slurm: each task's time limit (sbatch --time, e.g. 2:00:00)")
      ->needs(slurm);
  grade_cmd->add_option("--array-chunk", s.array_chunk, "with --slurm: students per array task")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  grade_cmd->add_option("--max-running", s.max_running, "with --slurm: array tasks at once (default: no limit)")
      ->needs(slurm);
  grade_cmd
      ->add_option("--sbatch-arg", s.sbatch_args,
                   "with --slurm: one more sbatch option (repeatable), e.g. "
                   "--sbatch-arg=--account=gpu-course")
      ->needs(slurm);
  // Written by --slurm into the jobs' scripts; not for instructors.
  grade_cmd->add_option("--slurm-task", s.task_list, "")->group("")->excludes(slurm);
  grade_cmd->add_option("--slurm-finish", s.finish, "")->group("")->excludes(slurm);
}

void add_grade_command(CLI::App& app, CheckOptions& o, GradeCommand& c) {
  auto* grade_cmd = app.add_subcommand(
      "grade",
      "batch-grade submissions: every entry of SUBMISSIONS (a folder, .zip or .tar.gz in the course layout) is "
      "one student; results, gradebook and reports go to OUT. Rerunning skips unchanged students.");
  grade_cmd->add_option("--submissions", c.submissions, "folder with one entry per student")->required();
  grade_cmd->add_option("--out", c.out, "results folder (default: results)");
  grade_cmd->add_option("--lab", o.labs, "grade only this lab (repeatable; default: every lab)");
  grade_cmd->add_option("--backend", o.backend, "cuda or opencl (default: CUDA when a CUDA device is usable)");
  grade_cmd->add_option("--device", o.device, "device index or part of its name");
  grade_cmd
      ->add_option("--jobs", c.options.jobs,
                   "submissions graded at once; each gets its own GPU when there are several (default: CUDA 3 per "
                   "GPU, at most one per 4 cores; OpenCL 1)")
      ->check(CLI::Range(1, 256));
  grade_cmd->add_flag("--force", c.options.force, "regrade students whose submission and grader are unchanged");
  grade_cmd->add_flag("--calibrate", c.options.calibrate,
                      "first run the reference solutions here and record their ratios (OUT/calibration.json)");
  grade_cmd->add_option("--seed", o.seed, "one seed for every student (default: a fresh seed each, recorded)");
  grade_cmd->add_option("--timeout", o.timeout,
                        "seconds without progress before a lab is killed (default: the manifest's)");
  grade_cmd->add_option("--time-limit", c.options.lab_time_limit_s, "seconds one lab of one student may run in all")
      ->capture_default_str();
  grade_cmd->add_option("--memory", c.options.memory_gib, "GiB of memory a submission's processes may use")
      ->capture_default_str();
  grade_cmd->add_option("--processes", c.options.processes, "processes and threads a submission may start")
      ->capture_default_str();
  grade_cmd->add_option("--output-limit", c.options.output_mib, "MiB a submission may print or write to one file")
      ->capture_default_str();
  grade_cmd->add_flag("--quiet", c.options.quiet, "print only the summary");
  grade_cmd->add_flag("--leaderboard", c.options.leaderboard,
                      "each task that passed without an integrity finding adds its rate to results.json's Gradescope "
                      "leaderboard, and OUT/index.html shows the best under pseudonyms (off by default)");
  grade_cmd
      ->add_option("--hidden-visibility", c.options.hidden_visibility,
                   "Gradescope visibility of the grade of a task graded on hidden cases: after_due_date, "
                   "after_published, hidden or visible (its visible cases' verdict is always shown)")
      ->capture_default_str();
  grade_cmd->add_option(
      "--deadlines", c.options.deadlines,
      "CSV of due dates, extensions and late penalties (student,due,grace_hours,penalty_per_day,"
      "max_late_days,submitted; a row * for everyone): grades.csv gains the lateness and final score");
  auto* sanitize = grade_cmd->add_flag(
      "--sanitize", c.sanitize_all,
      "CUDA: every task that passed also runs its correctness cases under every compute-sanitizer tool "
      "(memcheck, racecheck, synccheck, initcheck); a finding scores the task zero. Without it, grading runs "
      "racecheck and synccheck by default, for the tasks whose kernels use shared memory or barriers");
  grade_cmd
      ->add_flag("--no-sanitize", c.no_sanitize,
                 "no sanitizer gate at all (on OpenCL there is none anyway: compute-sanitizer needs CUDA); a barrier "
                 "the static check proves divergent still scores its task zero")
      ->excludes(sanitize);
  add_slurm_options(grade_cmd, c.slurm);
}

struct AuditCommand {
  bool correctness_only = false;
  int jobs = 2;
};

void add_audit_command(CLI::App& app, CheckOptions& o, AuditCommand& a) {
  auto* audit_cmd = app.add_subcommand(
      "audit",
      "mutation audit: grade mutants of each lab's reference solution (plausible mistakes) and list survivors");
  audit_cmd->add_option("--lab", o.labs, "audit only this lab (repeatable; default: every lab)");
  audit_cmd->add_option("--backend", o.backend, "cuda or opencl (default: CUDA when a CUDA device is usable)");
  audit_cmd->add_option("--device", o.device, "device index or part of its name");
  audit_cmd->add_option("--seed", o.seed, "seed of the random inputs, to reproduce a run");
  audit_cmd->add_flag("--sanitize", o.sanitize, "CUDA: each surviving mutant also goes through the sanitizer gate");
  audit_cmd->add_flag("--correctness-only", a.correctness_only,
                      "no timing cases or thresholds (the default on a CPU device; mutants that only timing kills are "
                      "then listed as not detectable)");
  audit_cmd
      ->add_option("--jobs", a.jobs,
                   "mutants graded at once (default 2; their timed runs still take the device one at a time)")
      ->check(CLI::Range(1, 64));
}

struct SimilarityCommand {
  SimilarityOptions options;
  std::string submissions, out = "results";
};

void add_similarity_command(CLI::App& app, CheckOptions& o, SimilarityCommand& c) {
  auto* cmd = app.add_subcommand(
      "similarity",
      "pairs of students whose lab files are similar (skeleton text excluded), ranked: OUT/similarity/index.html, "
      "a side-by-side page per pair, pairs.json (needs sim_c++: similarity-tester)");
  cmd->add_option("submissions,--submissions", c.submissions, "folder with one entry per student")->required();
  cmd->add_option("--out", c.out, "results folder (default: results)");
  // One value per --lab and --backend, so the SUBMISSIONS positional after them is not taken as another.
  cmd->add_option("--lab", o.labs, "only this lab (repeatable; default: every lab)")->allow_extra_args(false);
  cmd->add_option("--backend", c.options.backends, "only this backend: cuda or opencl (repeatable; default: both)")
      ->allow_extra_args(false);
  cmd->add_option("--min-percent", c.options.min_percent, "leave out pairs less similar than this")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--min-run", c.options.min_run_tokens, "shortest matching run, in tokens (sim's -r)")
      ->capture_default_str()
      ->check(CLI::Range(8, 1000));
  cmd->add_option("--max-pages", c.options.max_pages,
                  "pairs per lab and backend with a side-by-side page and a row in index.html")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--quiet", c.options.quiet, "print only where the report is");
}

// The similarity report; a batch's summary page in the same OUT is drawn again, to link it.
int similarity(const CheckOptions& o, SimilarityCommand& c) {
  const Toolchain tc = Toolchain::load(own_directory());
  c.options.submissions = c.submissions;
  c.options.out = c.out;
  c.options.labs = select_labs(tc, o.labs);
  const int status = run_similarity(c.options);
  const fs::path out = fs::absolute(c.out);
  if (fs::exists(out / "batch.json") && !write_summary_page(tc, out))
    fmt::print(stderr, "gpulab similarity: the batch's summary page could not be drawn again to link the report\n");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpulab: build, run and grade GPU programming labs"};
  app.require_subcommand(1);
  CheckOptions o;
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("--source", o.source, "folder with the lab folders to grade (default: labs/ of the repository)");
    sub->add_option("--lab", o.labs,
                    "lab to run: its folder (02-transpose), name (transpose) or number (2); default: all");
    sub->add_option("--backend", o.backend, "cuda or opencl (default: CUDA when a CUDA device is usable)");
  };
  auto* check_cmd = app.add_subcommand("check", "build the labs, run every task and report");
  add_common(check_cmd);
  check_cmd->add_option("--task", o.tasks, "only this task (repeatable)");
  check_cmd->add_option("--device", o.device, "device index or part of its name (see `gpulab devices`)");
  check_cmd->add_option("--seed", o.seed, "seed of the random inputs, to reproduce a run");
  check_cmd->add_option("--timeout", o.timeout,
                        "seconds without progress before a lab is killed (default: the manifest's)");
  check_cmd->add_option("--json", o.json, "where to write the JSON report");
  check_cmd->add_option("--outcome", o.outcome,
                        "when the check does not pass, write why in one line to this file (`make check` ends "
                        "with it); when it passes, remove the file");
  check_cmd->add_flag("--recalibrate", o.recalibrate,
                      "measure the calibrations afresh instead of taking those cached in the last 10 minutes");
  check_cmd->add_flag(
      "--sanitize", o.sanitize,
      "CUDA: run each task's correctness cases under compute-sanitizer (memcheck, racecheck, synccheck, "
      "initcheck) instead of the check: races, out-of-bounds accesses, barriers not every thread reaches");
  check_cmd->add_flag(
      "--profile", o.profile,
      "CUDA: after each lab, run each task's timing case once under Nsight Compute (ncu) and show the "
      "counters of the lab's lesson (coalescing, bank conflicts, occupancy, DRAM throughput), explained; "
      "for information, never graded");
  auto* build_cmd = app.add_subcommand("build", "only compile and link the student files");
  add_common(build_cmd);
  app.add_subcommand("devices", "list the CUDA and OpenCL devices");

  GradeCommand grade_command;
  add_grade_command(app, o, grade_command);
  AuditCommand audit_command;
  add_audit_command(app, o, audit_command);
  SimilarityCommand similarity_command;
  add_similarity_command(app, o, similarity_command);

  auto* history_cmd = app.add_subcommand("history", "the timeline of your checks, per lab (build/history.jsonl)");
  history_cmd->add_option("--lab", o.labs, "only this lab: its folder, name or number");

  std::string release_out;
  auto* release_cmd =
      app.add_subcommand("release", "write the repository students clone: no solutions, no hidden cases");
  release_cmd->add_option("--out", release_out, "an empty or new folder")->required();
  std::vector<std::string> release_cuda_archs;
  release_cmd->add_option("--cuda-arch", release_cuda_archs,
                          "compile the harness's CUDA kernels for this architecture (sm_90; repeat it); default: "
                          "sm_75 to sm_120");
  CLI11_PARSE(app, argc, argv);

  try {
    if (app.got_subcommand("devices")) return devices();
    if (app.got_subcommand("history")) return history(o.labs);
    if (app.got_subcommand("release")) return release(release_out, release_cuda_archs);
    if (app.got_subcommand("audit")) return audit(o, audit_command.correctness_only, audit_command.jobs);
    if (app.got_subcommand("similarity")) return similarity(o, similarity_command);
    if (app.got_subcommand("grade")) {
      grade_command.options.submissions = grade_command.submissions;
      grade_command.options.out = grade_command.out;
      grade_command.options.sanitize = grade_command.sanitize_all  ? SanitizeMode::all
                                       : grade_command.no_sanitize ? SanitizeMode::off
                                                                   : SanitizeMode::automatic;
      return grade(o, grade_command.options, grade_command.slurm);
    }
    o.build_only = app.got_subcommand("build");
    return check(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: {}\n", e.what());
    write_outcome(o.outcome, "the check did not run: the message above says why");
    return 2;
  }
}
