// gpulab, the student's command: builds students' lab files against the pristine harness, runs each
// lab in its own process, and reports. `gpulab check --help` lists the options. The instructor's
// commands (grade, audit, similarity, release) are gpulab-instructor's (grader/instructor/main.cpp):
// this command hands them on, so a student's first build compiles none of their code.
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <utility>

#include "calibration_cache.hpp"
#include "check_cache.hpp"
#include "commands.hpp"
#include "files.hpp"
#include "gpulab/device.hpp"
#include "gpulab/random.hpp"
#include "gpulab/text.hpp"
#include "history.hpp"
#include "lab_job.hpp"
#include "machine_lock.hpp"
#include "profiler.hpp"
#include "report.hpp"
#include "sanitizer.hpp"
#include "student_build.hpp"
#include "submit.hpp"
#include "supervisor.hpp"

namespace fs = std::filesystem;
using namespace gpulab;
using namespace gpulab::cli;

namespace {

// Where a source tree's objects and reports go: build/students/labs, .../solutions, or a name
// with a hash of the path for any other folder.
std::string source_key(const Toolchain& tc, const fs::path& source) {
  for (const char* known : {"labs", "solutions"})
    if (fs::exists(tc.repo / known) && fs::equivalent(source, tc.repo / known)) return known;
  return fmt::format("{}-{:08x}", source.filename().string(), std::hash<std::string>{}(source.string()) & 0xffffffffu);
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
  bool reuse = false;        // show a lab's last results again when nothing changed since (check_cache.hpp)
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
  // Where each lab's last results are kept for a check with nothing changed, and the device they are
  // kept for; no device: nothing is kept or reused.
  CheckCache kept;
  std::optional<DeviceInfo> device = std::nullopt;
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

// The device a check's results are kept for (check_cache.hpp): none where it cannot be found, or for
// a check whose results are not the plain check's (build only, the sanitizer gate, profiling).
std::optional<DeviceInfo> device_to_keep_for(const CheckOptions& o, const std::string& backend) {
  if (o.build_only || o.sanitize || o.profile) return std::nullopt;
  try {
    return find_device(backend, o.device);
  } catch (const std::exception&) { return std::nullopt; }
}

// One lab of a check: its last results again when nothing changed since (check_cache.hpp), else built
// and run, its results kept for the next check. `reused_seed`: the seed of the results shown again.
LabRun check_or_reuse(CheckPlan& plan, const Manifest& m, const std::vector<std::string>& tasks, std::uint64_t seed,
                      std::optional<std::uint64_t>& reused_seed) {
  const CheckOptions& o = plan.options;
  std::string key;
  if (plan.device) try {
      key = check_key(plan.tc, m, {plan.backend, plan.source, tasks, o.seed, o.timeout}, *plan.device);
    } catch (const std::exception& e) {
      fmt::print(stderr, "gpulab: {}: results not kept for the next check ({})\n", m.id, e.what());
    }
  if (!key.empty() && o.reuse && !o.recalibrate)
    if (auto kept = plan.kept.find(m.id, key)) {
      fmt::print(stderr, "gpulab: {} ({}): nothing changed since its last check: its results again (FRESH=1 runs it)\n",
                 m.id, plan.backend);
      reused_seed = kept->seed;
      return std::move(kept->lab);
    }
  if (!o.build_only)
    fmt::print(stderr, "gpulab: {} ({}{})…\n", m.id, plan.backend,
               plan.gate
                   ? fmt::format(", correctness cases under compute-sanitizer {}", fmt::join(plan.gate->tools, ", "))
                   : "");
  LabRun lab = check_lab(plan, m, tasks, seed);
  if (!key.empty()) plan.kept.keep(key, lab, seed, now_utc());
  return lab;
}

// `gpulab build`: the build failures, or that every lab builds.
int report_build(const RunSummary& run) {
  for (const auto& lab : run.labs)
    for (const auto& t : lab.tasks) fmt::print("{}: {}\n{}\n", lab.id, t.message, t.details);
  fmt::print("{} ({}): {}\n", run.source, run.backend, run.labs.empty() ? "every lab builds" : "build failed");
  return run.labs.empty() ? 0 : 1;
}

// Appends this check to build/history.jsonl (`gpulab history`): the labs it ran, not those whose
// results it showed again; a failure there only warns: the check itself is complete.
void record_history(const Toolchain& tc, const fs::path& source, const std::vector<Manifest>& labs, RunSummary run) {
  std::erase_if(run.labs, [](const LabRun& lab) { return !lab.reused.empty(); });
  if (run.labs.empty()) return;
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
  const fs::path work = tc.build_dir / "students" / source_key(tc, source);
  CheckPlan plan{o,
                 tc,
                 source,
                 work,
                 backend,
                 std::nullopt,
                 CheckCalibrations(tc, backend, o.device, o.recalibrate),
                 std::nullopt,
                 CheckCache(work / "last-results" / backend),
                 device_to_keep_for(o, backend)};
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
  std::set<std::uint64_t> seeds;  // of the labs' results shown, when every lab's were kept ones
  bool all_reused = true;
  for (const auto& m : labs) {
    const auto tasks = m.files.count(backend) ? select_tasks(m, o.tasks) : std::vector<std::string>{};
    if (tasks.empty()) continue;
    std::optional<std::uint64_t> reused_seed;
    LabRun lab = check_or_reuse(plan, m, tasks, run.seed, reused_seed);
    all_reused = all_reused && reused_seed;
    if (reused_seed) seeds.insert(*reused_seed);
    if (o.build_only && lab.tasks.empty()) {  // it built
      for (const auto& w : lab.warnings) fmt::print(stderr, "warning: {}\n", w);
      continue;
    }
    run.labs.push_back(std::move(lab));
  }
  if (o.build_only) return report_build(run);
  if (all_reused && seeds.size() == 1) run.seed = *seeds.begin();  // SEED= of the results shown reproduces them
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

int devices() {
  for (const auto& backend : available_backends()) {
    const auto list = list_devices(backend);
    fmt::print("{}: {}\n", backend, list.empty() ? "no device" : "");
    for (const auto& d : list)
      fmt::print("  {}: {} · {} · {} ({})\n", d.index, d.name, d.platform, d.details, to_string(d.device_class));
  }
  return 0;
}

// The instructor's commands, and what each does, for `gpulab --help`.
constexpr std::array<std::pair<const char*, const char*>, 6> kInstructorCommands{{
    {"grade", "instructors: batch-grade a folder of submissions (gpulab grade --help)"},
    {"audit", "instructors: the mutation audit of the reference solutions (gpulab audit --help)"},
    {"similarity", "instructors: pairs of students with similar lab files (gpulab similarity --help)"},
    {"release", "instructors: write the repository students clone (gpulab release --help)"},
    {"serve", "instructors: the course server students submit to (gpulab serve --help)"},
    {"roster", "instructors: import the class roster into a server and make the students' tokens"},
}};

bool is_instructor_command(const char* name) {
  for (const auto& [command, what] : kInstructorCommands)
    if (std::strcmp(name, command) == 0) return true;
  return false;
}

// Runs gpulab-instructor, beside this command, with the same arguments; returns only when it cannot.
int hand_on_to_instructor_command(char** argv) {
  const fs::path tool = own_directory() / "gpulab-instructor";
  if (!fs::exists(tool)) {
    fmt::print(stderr,
               "gpulab: `gpulab {}` is an instructor's command, built apart from the student's, and {} is not "
               "built yet: run `make instructor` (make grade, audit, similarity and student-release build it "
               "too)\n",
               argv[1], tool.string());
    return 2;
  }
  ::execv(tool.c_str(), argv);  // argv[0] stays, so its usage lines read `gpulab grade ...`
  fmt::print(stderr, "gpulab: could not start {}: {}\n", tool.string(), std::strerror(errno));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && is_instructor_command(argv[1])) return hand_on_to_instructor_command(argv);
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
  check_cmd->add_flag("--reuse", o.reuse,
                      "show a lab's last results again, without running it, when its files, the grader, the device "
                      "and these options are as they were at its last check (make check does, unless FRESH=1)");
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

  auto* history_cmd = app.add_subcommand("history", "the timeline of your checks, per lab (build/history.jsonl)");
  history_cmd->add_option("--lab", o.labs, "only this lab: its folder, name or number");

  SubmitOptions submit_options;
  std::string submit_source;
  auto* submit_cmd = app.add_subcommand(
      "submit", "send a lab to the course server and wait for its official report (exit status as a check)");
  submit_cmd->add_option("--server", submit_options.server,
                         "the course's server, http(s)://HOST:PORT (default: "
                         ".gpulab-submit's `server = ...`)");
  submit_cmd->add_option("--token", submit_options.token, "your token (default: .gpulab-submit's `token = ...`)");
  submit_cmd->add_option("--lab", submit_options.lab, "the lab: its folder, name or number");
  submit_cmd->add_option("--source", submit_source, "folder with the lab folders (default: labs/ of the repository)");
  submit_cmd->add_flag("--status", submit_options.status, "list your submissions and their scores instead");
  submit_cmd->add_option("--poll", submit_options.poll_s, "seconds between questions to the server")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 600.0));

  for (const auto& [command, what] : kInstructorCommands) app.add_subcommand(command, what)->allow_extras();
  CLI11_PARSE(app, argc, argv);

  try {
    if (submit_cmd->parsed()) {
      submit_options.source = submit_source;
      return submit(submit_options);
    }
    if (app.got_subcommand("devices")) return devices();
    if (app.got_subcommand("history")) return history(o.labs);
    o.build_only = app.got_subcommand("build");
    return check(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: {}\n", e.what());
    write_outcome(o.outcome, "the check did not run: the message above says why");
    return 2;
  }
}
