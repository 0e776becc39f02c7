#include "grade.hpp"
#include "sanitizer.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "files.hpp"
#include "gpulab/device.hpp"
#include "machine_lock.hpp"
#include "gpulab/random.hpp"
#include "supervisor.hpp"

#ifndef GPULAB_VERSION
#define GPULAB_VERSION "0"
#endif

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One grading job: its index among the batch's jobs (which GPU it uses) and, when the grader is root,
// the sandbox user it holds machine-wide (machine_lock.hpp): a uid without an account, so a submission
// can write nowhere but its scratch folder and its processes are its own.
struct Slot {
  int index = 0;
  std::optional<unsigned> user;
};

std::string now_utc() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  return out;
}

std::string csv_cell(const std::string& s) {
  // Quoted when needed; a leading = + - @ would be a formula in a spreadsheet.
  std::string v = s;
  if (!v.empty() && std::string("=+-@").find(v.front()) != std::string::npos &&
      v.find_first_not_of("0123456789.-") != std::string::npos)
    v = "'" + v;
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string points_text(double p) { return fmt::format("{:g}", std::round(p * 100) / 100); }

// A RunSummary again, from a result record: the console report's renderer makes the feedback.
RunSummary summary_of(const json& result) {
  RunSummary run;
  run.source = result.value("submission", "");
  run.backend = result.value("backend", "");
  run.seed = result.value("seed", std::uint64_t{0});
  for (const auto& l : result.value("labs", json::array())) {
    LabRun lab;
    lab.id = l.value("id", "");
    lab.name = l.value("name", "");
    lab.title = l.value("title", "");
    lab.backend = l.value("backend", "");
    lab.device = l.value("device", json());
    if (l.contains("calibration")) try {
        lab.calibration = calibration_from_json(l["calibration"]);
      } catch (const std::invalid_argument&) {  // a record written by an older grader: the rates alone
        lab.calibration.unit = l["calibration"].value("unit", "");
        lab.calibration.library = l["calibration"].value("library", "");
        lab.calibration.rates = l["calibration"].value("rates", std::map<std::string, double>{});
      }
    lab.tasks = l.value("tasks", std::vector<TaskResult>{});
    lab.output = l.value("output", "");
    lab.warnings = l.value("warnings", std::vector<std::string>{});
    run.labs.push_back(std::move(lab));
  }
  return run;
}

// What a student may see of a record: the shapes of hidden cases are the instructor's, so their
// names become "hidden case N" in every message (result.json keeps them for the instructor).
json redacted_for_student(json result) {
  for (auto& l : result["labs"]) {
    bool ran_hidden = false;
    for (auto& t : l["tasks"])
      for (const auto& c : t["cases"]) ran_hidden = ran_hidden || c.value("hidden", false);
    // The program's own prints may show a hidden case's sizes.
    if (ran_hidden && !l.value("output", "").empty()) l["output"] = "(not shown: it includes cases the course does not publish)";
    for (auto& t : l["tasks"])
      if (t.value("message", "").rfind("(hidden case)", 0) == 0) {
        t["message"] = fmt::format("{} in a case the course does not publish: test your kernel on more shapes (odd "
                                   "sizes, primes, single rows and columns, large inputs)",
                                   describe(status_from_string(t.value("status", "error"))));
        t["details"] = "";
      }
  }
  for (auto& l : result["labs"])
    for (auto& t : l["tasks"]) {
      int n = 0;
      for (auto& c : t["cases"]) {
        if (!c.value("hidden", false)) continue;
        const std::string name = c.value("name", ""), alias = fmt::format("hidden case {}", ++n);
        c["name"] = alias;
        for (const char* field : {"message", "details"}) {
          std::string text = t.value(field, "");
          for (std::size_t at; !name.empty() && (at = text.find(name)) != std::string::npos;) text.replace(at, name.size(), alias);
          t[field] = text;
        }
        c["message"] = c["details"] = "";
      }
    }
  return result;
}

struct Batch {
  Batch(const Toolchain& t, const std::vector<Manifest>& l, const std::string& be, const GradeOptions& opt)
      : tc(t), labs(l), backend(be), o(opt) {}
  const Toolchain& tc;
  const std::vector<Manifest>& labs;
  const std::string& backend;
  const GradeOptions& o;
  fs::path out, submissions;
  std::string version;
  Isolation isolation;
  Limits run_limits, compile_limits;
  std::vector<fs::path> needed;       // what its compilers and runners read (the harness, drivers)
  std::vector<fs::path> hidden;       // what a submission must not see
  json calibration;                   // reference ratios on this machine, when known
  std::vector<std::string> gpus;      // CUDA_VISIBLE_DEVICES value per GPU
  std::vector<std::string> gpu_lock_names;  // machine-wide: one run per GPU at a time
  int cpu_threads_per_job = 1;
  SanitizerGate sanitizer;            // with --sanitize: compute-sanitizer's path
  DeviceClass device_class = DeviceClass::gpu;
  // (GPU slot, lab id) -> calibration measured once for the batch (calibrate_batch): every student's
  // runner on that GPU is given it and measures no rates of its own.
  std::map<std::pair<int, std::string>, Calibration> device_calibrations;
  std::vector<PhaseTimes> budgets;    // per graded student, for the batch's budget line
  std::mutex print_lock;
};

// Everything besides the files and the grader that changes a result: a rerun with other labs, other
// limits or another isolation grades again.
std::string selection_key(const Batch& b) {
  std::vector<std::string> ids;
  for (const auto& m : b.labs) ids.push_back(m.id);
  const Isolation& i = b.isolation;
  return fmt::format("{}:{}|device {}|timeout {}|limit {} s, {} GiB, {} processes, {} MiB|isolation {}{}{}{}", b.backend,
                     fmt::join(ids, ","), b.o.device, b.o.idle_timeout_s, b.o.lab_time_limit_s, b.o.memory_gib,
                     b.o.processes, b.o.output_mib, i.bubblewrap ? "bubblewrap " : "", i.own_user ? "user " : "",
                     i.network_off ? "no-network" : "", b.o.sanitize ? "|sanitizer gate" : "");
}

SandboxSpec sandbox_for(const Batch& b, const fs::path& box, const Slot& slot) {
  SandboxSpec spec;
  spec.isolation = &b.isolation;
  spec.scratch = box;
  spec.needed = b.needed;
  spec.hidden = b.hidden;
  spec.user = slot.user;
  if (!b.gpus.empty()) spec.env["CUDA_VISIBLE_DEVICES"] = b.gpus[static_cast<std::size_t>(slot.index) % b.gpus.size()];
  // PoCL's CPU device: the cores are shared among the jobs.
  spec.env["POCL_CPU_MAX_CU_NUM"] = std::to_string(b.cpu_threads_per_job);
  spec.env["POCL_MAX_PTHREAD_COUNT"] = std::to_string(b.cpu_threads_per_job);
  return spec;
}

json reference_for(const Batch& b, const std::string& lab, const std::string& task) {
  if (!b.calibration.contains("labs") || !b.calibration["labs"].contains(lab) || !b.calibration["labs"][lab].contains(task))
    return nullptr;
  return b.calibration["labs"][lab][task];
}

// Where a lab's or a student's time went (PhaseTimes), in seconds rounded to milliseconds.
json phases_json(const PhaseTimes& p) {
  auto ms = [](double s) { return std::round(s * 1000) / 1000; };
  return {{"compile_s", ms(p.compile_s)},         {"wait_for_gpu_s", ms(p.wait_for_gpu_s)},
          {"run_s", ms(p.run_s)},                 {"hidden_s", ms(p.hidden_s)},
          {"calibration_s", ms(p.calibration_s)}, {"correctness_s", ms(p.correctness_s)},
          {"timing_s", ms(p.timing_s)},           {"timed_launches_s", ms(p.timed_launches_s)},
          {"sanitize_s", ms(p.sanitize_s)}};
}

PhaseTimes& operator+=(PhaseTimes& total, const PhaseTimes& p) {
  total.compile_s += p.compile_s, total.wait_for_gpu_s += p.wait_for_gpu_s, total.run_s += p.run_s;
  total.hidden_s += p.hidden_s, total.calibration_s += p.calibration_s, total.correctness_s += p.correctness_s;
  total.timing_s += p.timing_s, total.timed_launches_s += p.timed_launches_s, total.sanitize_s += p.sanitize_s;
  return total;
}

json lab_json(const Batch& b, const LabRun& lab) {
  RunSummary one;
  one.labs.push_back(lab);
  json l = to_json(one)["labs"][0];
  double score = 0, max_score = 0;
  for (auto& t : l["tasks"]) {
    score += t.value("points", 0.0);
    if (!t.value("bonus", false)) max_score += t.value("max_points", 0.0);
    if (const json ref = reference_for(b, lab.id, t.value("task", "")); !ref.is_null()) t["reference"] = ref;
  }
  l["score"] = score;
  l["max_score"] = max_score;
  l["phases"] = phases_json(lab.phases);
  return l;
}

// The points a submission can reach without bonus tasks, over the labs this batch grades.
double max_score_of(const Batch& b) {
  double max_score = 0;
  for (const auto& m : b.labs)
    for (const auto& t : m.tasks)
      if (!t.bonus && m.files.count(b.backend)) max_score += t.points;
  return max_score;
}

struct StudentJob {
  fs::path entry;
  std::string name;
};

enum class Outcome { graded, skipped, refused };

// The grader's own failure, not the student's: a killed compiler, a sandbox that would not start, a
// device that would not open. The lab is tried again; if it persists, the student is "not graded".
class GraderFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Why a compile ended by the grader's fault rather than the student's, or "": the sandbox could not
// start it, it could not be executed, something outside the grader killed it, or it failed without a
// word (a compiler rejecting code always says why). Limits the grader enforces are the student's.
std::string compile_failure_of_grader(const ChildExit& e, const std::string& output) {
  if (e.killed()) return {};
  if (e.signal == SIGKILL || e.signal == SIGTERM || e.signal == SIGHUP || e.signal == SIGINT)
    return fmt::format("the compiler was killed by signal {} from outside the grader", e.signal);
  if (e.exited_with(ExitStatus::cannot_start))
    return fmt::format("the sandbox could not start the compiler: {}", output.substr(0, 300));
  if (e.exited_with(ExitStatus::cannot_execute)) return "the compiler could not be executed";
  if (!e.exited_ok() && output.find_first_not_of(" \t\r\n") == std::string::npos)
    return fmt::format("the compiler failed (exit status {}) without printing any diagnostic",
                       WIFEXITED(e.status) ? WEXITSTATUS(e.status) : -1);
  return {};
}

// Where one student's labs are built and run.
struct LabPlace {
  fs::path scratch, box, logs;
  SandboxSpec sandbox;  // the student's sandbox, without the lab's own folders
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs one built lab of one student under the GPU lock: its visible and hidden passes, and the
// sanitizer gate. The whole of it holds the lock, the correctness-only hidden pass and sanitizer too:
// they use the GPU, and any GPU work beside another submission's timed launches would slow them (the
// interleaved baseline only partly makes up for a load that comes and goes).
LabRun run_lab(Batch& b, const Manifest& m, RunRequest req, const Slot& slot) {
  const int gpu_slot = slot.index % std::max<int>(1, static_cast<int>(b.gpus.size()));
  if (auto it = b.device_calibrations.find({gpu_slot, m.id}); it != b.device_calibrations.end()) req.calibration = it->second;
  // Timings are only fair when one run at a time uses a GPU: this lock is machine-wide, so other
  // batches and students' `make check` wait too.
  const auto wait_start = std::chrono::steady_clock::now();
  std::optional<MachineLock> gpu;
  if (!b.gpu_lock_names.empty()) gpu = MachineLock::take(b.gpu_lock_names[slot.index % b.gpu_lock_names.size()]);
  const double waited_s = seconds_since(wait_start);
  LabRun lab = supervise(req);
  lab.phases.wait_for_gpu_s = waited_s;
  if (b.o.sanitize && lab.grader_failure.empty() &&
      std::any_of(lab.tasks.begin(), lab.tasks.end(), [](const TaskResult& t) { return t.status == Status::passed; })) {
    const auto sanitize_start = std::chrono::steady_clock::now();
    SanitizerGate gate = b.sanitizer;
    gate.student_files = m.files.at(b.backend);
    gate.shown_dir = m.id;
    gate.parallel = 1;  // the batch's jobs already share the machine's cores
    apply_sanitizer_gate(lab, sanitize_lab(req, gate));
    lab.phases.sanitize_s = seconds_since(sanitize_start);
  }
  return lab;
}

// Builds and runs one lab of one student. Throws GraderFailure when the grader, not the submission,
// failed; LabRun::grader_failure says the same of the run.
LabRun grade_lab(Batch& b, const Manifest& m, const LabFiles& files, const LabPlace& place, const Slot& slot,
                 std::uint64_t seed) {
  const auto tasks = select_tasks(m, {});
  const fs::path lab_dir = place.scratch / "labs" / m.id, build_dir = place.scratch / "build" / m.id;
  LabRun lab;
  lab.id = m.id, lab.name = m.name, lab.title = m.title, lab.backend = b.backend;
  if (!files.complete()) {
    lab.tasks = all_tasks_failed(m, tasks, Status::compile_error, fmt::format("{}", fmt::join(files.missing, "; ")), "");
    return lab;
  }
  const CommandRunner compile = [&](const std::string& command) {
    SandboxSpec spec = place.sandbox;
    spec.visible = {lab_dir};
    spec.writable = {build_dir};
    const fs::path log = place.logs / "compile.log";
    fs::remove(log);
    const ChildExit e = run_isolated({"/bin/sh", "-c", command}, log, b.compile_limits, spec);
    CommandOutput c;
    c.output = read_text(log);
    if (const std::string why = compile_failure_of_grader(e, c.output); !why.empty()) throw GraderFailure(why);
    c.status = e.exited_ok() ? 0 : 1;
    if (e.killed_for == KillReason::timeout)
      c.output += fmt::format("\nerror: the compiler was stopped after {:.0f} s (the compile time limit)", b.compile_limits.wall_s);
    else if (e.killed_for == KillReason::memory)
      c.output += fmt::format("\nerror: the compiler was stopped: it used more than {:.1f} GiB of memory",
                              b.compile_limits.memory_bytes / double(1ull << 30));
    return c;
  };
  fs::remove_all(build_dir);  // always built afresh: nothing from an earlier run is trusted
  fs::create_directories(build_dir);
  if (slot.user) give_to_user(build_dir, *slot.user);
  const auto compile_start = std::chrono::steady_clock::now();
  const BuildResult build = build_lab(b.tc, m, b.backend, lab_dir, build_dir, compile);
  const double compile_s = seconds_since(compile_start);
  if (slot.user) give_to_user(build_dir, 0);  // the runner cannot be replaced by the code it runs
  lab.warnings = warning_lines(build.warnings);
  lab.phases.compile_s = compile_s;
  if (!build.ok) {
    lab.tasks = all_tasks_failed(m, tasks, build.rejected ? Status::rejected : Status::compile_error, build.message, build.log);
    return lab;
  }
  RunRequest req;
  req.runner = build.runner;
  req.manifest = &m;
  req.student_dir = lab_dir;
  req.backend = b.backend;
  req.device = b.o.device;
  req.seed = seed;
  req.tasks = tasks;
  if (b.o.idle_timeout_s > 0) req.timeout_s = b.o.idle_timeout_s;
  req.work_dir = place.scratch / "run" / m.id;  // pictures are not kept: no --pictures
  req.hidden_cases = true;
  req.limits = b.run_limits;
  req.sandbox = place.sandbox;
  req.sandbox.visible = {lab_dir, build_dir};
  LabRun ran = run_lab(b, m, req, slot);
  ran.warnings = std::move(lab.warnings);
  ran.phases.compile_s = compile_s;
  return ran;
}

// A lab, tried up to three times while the grader itself fails; then GraderFailure.
LabRun grade_lab_with_retries(Batch& b, const Manifest& m, const LabFiles& files, const LabPlace& place,
                              const Slot& slot, std::uint64_t seed) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    std::string failure;
    try {
      LabRun lab = grade_lab(b, m, files, place, slot, seed);
      if (lab.grader_failure.empty()) return lab;
      failure = lab.grader_failure;
    } catch (const GraderFailure& e) {
      failure = e.what();
    }
    if (attempt == kAttempts)
      throw GraderFailure(fmt::format("{}: {} (tried {} times)", m.id, failure, kAttempts));
    {
      std::lock_guard lock(b.print_lock);
      fmt::print(stderr, "  {}: the grader failed ({}); trying again\n", m.id, failure);
    }
    std::this_thread::sleep_for(std::chrono::seconds(attempt));
  }
}

Outcome grade_student(Batch& b, const StudentJob& job, const Slot& slot) {
  const auto started = std::chrono::steady_clock::now();
  const fs::path student_out = b.out / "students" / job.name;
  const fs::path scratch = b.out / ".scratch" / job.name;
  fs::remove_all(scratch);
  fs::create_directories(scratch);

  json result{{"student", job.name},
              {"submission", job.entry.filename().string()},
              {"grader_version", b.version},
              {"selection", selection_key(b)},
              {"backend", b.backend},
              {"isolation", b.isolation.describe(b.run_limits)},
              {"error", ""},
              {"notes", json::array()},
              {"labs", json::array()},
              {"score", 0.0},
              {"max_score", 0.0}};
  const double max_score = max_score_of(b);
  result["max_score"] = max_score;
  const std::uint64_t seed = b.o.seed ? *b.o.seed : fresh_seed();
  result["seed"] = seed;
  result["calibration"] = b.calibration.is_object() ? b.calibration.value("measured_at", "") : "";
  // Which GPU of the machine graded this student (each job has its own; labs[].device has its PCI address).
  if (!b.gpus.empty()) result["gpu"] = b.gpus[static_cast<std::size_t>(slot.index) % b.gpus.size()];

  SubmissionFiles files;
  try {
    files = open_submission(job.entry, scratch / "unpacked");
  } catch (const SubmissionError& e) {
    result["error"] = e.what();
  } catch (const std::exception& e) {  // e.g. an archive whose file and folder share a name
    result["error"] = fmt::format("{}: cannot be unpacked ({}); make the archive again from the course folder",
                                  job.entry.filename().string(), e.what());
  }

  // The files each lab grades, and their hash: what decides whether a rerun may skip this student.
  std::map<std::string, LabFiles> taken;
  Sha256 hash;
  hash.update(selection_key(b));
  if (result["error"].get<std::string>().empty()) {
    for (const auto& m : b.labs) {
      if (!m.files.count(b.backend)) continue;
      try {
        taken[m.id] = take_lab_files(files, m, b.backend, scratch / "labs" / m.id);
      } catch (const std::exception& e) {  // a file that cannot be read or copied
        taken[m.id].missing.push_back(fmt::format("its files cannot be read ({})", e.what()));
      }
      for (const auto& f : taken[m.id].taken) {
        hash.update(m.id + "/" + f);
        hash.update("\n", 1);
        hash.update_file(scratch / "labs" / m.id / f);
        hash.update("\n", 1);
      }
      for (const auto& missing : taken[m.id].missing) result["notes"].push_back(fmt::format("{}: {}", m.id, missing));
    }
    std::size_t found = 0;
    for (const auto& [id, t] : taken) found += t.taken.size();
    if (found == 0) {
      std::vector<std::string> some(files.files.begin(), files.files.begin() + std::min<std::size_t>(files.files.size(), 5));
      // A misnamed file is the likeliest reason: say which ("found Transpose.cu, expected transpose.cu").
      std::vector<std::string> near;
      for (const auto& [id, t] : taken)
        for (const auto& line : t.near_misses) near.push_back(fmt::format("{}: {}", id, line));
      result["error"] = fmt::format("{}: none of the lab files is there (it holds: {}){}; a submission holds the course "
                                    "layout, e.g. labs/02-transpose/transpose.cu",
                                    job.entry.filename().string(), some.empty() ? "nothing" : fmt::format("{}", fmt::join(some, ", ")),
                                    near.empty() ? "" : fmt::format("; {}", fmt::join(near, "; ")));
    }
  } else {
    if (fs::is_regular_file(job.entry)) hash.update_file(job.entry);  // a refused archive: all of it
  }
  result["content_hash"] = "sha256:" + hash.hex();

  // Resume: the same files, graded by the same grader with the same selection, need no second run.
  const fs::path record = student_out / "result.json";
  if (!b.o.force && fs::exists(record)) {
    const json old = json::parse(read_text(record), nullptr, false);
    if (!old.is_discarded() && old.value("content_hash", "") == result["content_hash"].get<std::string>() &&
        old.value("grader_version", "") == b.version && old.value("selection", "") == result["selection"].get<std::string>() &&
        old.value("calibration", "") == result["calibration"].get<std::string>()) {
      fs::remove_all(scratch);
      return Outcome::skipped;
    }
  }

  const bool refused = !result["error"].get<std::string>().empty();
  PhaseTimes phases;  // over the student's labs
  if (!refused) {
    // The scratch folder belongs to the grader; the submission's code may write only in box/ (its
    // home) and, while it compiles, in its build folder. Logs, progress and output files live in
    // folders it cannot write, so it cannot swap them for links or plant a runner.
    const LabPlace place{scratch, scratch / "box", scratch / "logs", sandbox_for(b, scratch / "box", slot)};
    fs::create_directories(place.box);
    fs::create_directories(place.logs);
    for (const auto& m : b.labs) {
      if (!m.files.count(b.backend)) continue;
      LabRun lab = grade_lab_with_retries(b, m, taken[m.id], place, slot, seed);
      phases += lab.phases;
      // Paths in messages: the scratch folder means nothing to a student.
      const std::string scratch_prefix = scratch.string() + "/";
      for (auto& task : lab.tasks) {
        for (std::string* text : {&task.message, &task.details})
          for (std::size_t at; (at = text->find(scratch_prefix)) != std::string::npos;) text->erase(at, scratch_prefix.size());
        for (auto& c : task.cases) c.pictures.clear();  // pictures stay in the scratch folder, not in reports
      }
      result["labs"].push_back(lab_json(b, lab));
    }
  }
  double score = 0;
  for (const auto& l : result["labs"]) score += l.value("score", 0.0);
  result["score"] = score;
  result["graded_at"] = now_utc();
  result["duration_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!refused) {
    result["phases"] = phases_json(phases);
    std::lock_guard lock(b.print_lock);
    b.budgets.push_back(phases);
  }

  // The record last: a student counts as graded only once every file of theirs is complete.
  write_text_atomically(gradescope_results(result).dump(2, ' ', false, json::error_handler_t::replace) + "\n",
                        student_out / "results.json");
  write_text_atomically(feedback_text(result), student_out / "feedback.txt");
  write_text_atomically(feedback_html(result), student_out / "feedback.html");
  write_text_atomically(result.dump(2, ' ', false, json::error_handler_t::replace) + "\n", record);
  fs::remove_all(scratch);

  if (!b.o.quiet) {
    std::lock_guard lock(b.print_lock);
    if (refused)
      fmt::print("  {}: refused: {}\n", job.name, result["error"].get<std::string>());
    else
      fmt::print("  {}: {} / {} points ({:.0f} s)\n", job.name, points_text(score), points_text(max_score),
                 result["duration_s"].get<double>());
    std::fflush(stdout);
  }
  return refused ? Outcome::refused : Outcome::graded;
}

// The skeleton runner's request for one lab on the GPU of `gpu_slot`: the pristine harness and the
// course's own skeleton files, no sandbox (nothing of a student's runs), the students' environment
// (their GPU, PoCL's share of the cores) so the rates are those their runs would measure.
RunRequest skeleton_request(Batch& b, const Manifest& m, const BuildResult& build, const fs::path& dir, int gpu_slot) {
  RunRequest req;
  req.runner = build.runner;
  req.manifest = &m;
  req.student_dir = b.tc.repo / "labs" / m.id;
  req.backend = b.backend;
  req.device = b.o.device;
  req.seed = b.o.seed ? *b.o.seed : fresh_seed();
  if (b.o.idle_timeout_s > 0) req.timeout_s = b.o.idle_timeout_s;
  req.work_dir = dir / fmt::format("run-{}", gpu_slot);
  req.limits = b.run_limits;
  req.sandbox.env = sandbox_for(b, dir, Slot{gpu_slot, std::nullopt}).env;
  return req;
}

// The batch's calibrations, measured once per lab and GPU before any student (issue #15): by a runner
// built from the pristine skeletons (labs/), which calibrates and exits before any task, so no student
// code runs in it. Each student's runner is then given these rates (RunRequest::calibration) and only
// measures the baseline interleaved with its timed launches; a student's runner never supplies the
// calibration a report shows. A lab that cannot be calibrated here is calibrated by each runner.
void calibrate_batch(Batch& b) {
  const int gpus = std::max<int>(1, static_cast<int>(b.gpus.size()));
  for (const auto& m : b.labs) {
    const auto cases = m.cases_for(b.device_class);
    if (!m.files.count(b.backend) || std::none_of(cases.begin(), cases.end(), [](const Case* c) { return c->timing; }))
      continue;
    const fs::path dir = b.out / ".scratch" / "_calibration" / m.id;
    const BuildResult build = build_lab(b.tc, m, b.backend, b.tc.repo / "labs" / m.id, dir / "build");
    for (int g = 0; g < gpus; ++g) {
      std::string why = build.ok ? "" : "the skeleton did not build: " + build.message;
      std::optional<Calibration> c;
      if (build.ok) {
        std::optional<MachineLock> lock;
        if (!b.gpu_lock_names.empty()) lock = MachineLock::take(b.gpu_lock_names[g % b.gpu_lock_names.size()]);
        c = measure_calibration(skeleton_request(b, m, build, dir, g), why);
      }
      if (c) {
        c->origin = "batch";
        b.device_calibrations[{g, m.id}] = *c;
      } else {
        fmt::print(stderr, "gpulab grade: {}: no batch calibration ({}); each submission's runner measures its own\n",
                   m.id, why);
      }
    }
  }
}

// "budget per submission (mean of 4): compile 2.1 s, waiting for the GPU 0.0 s, run 3.4 s = ...": where
// a graded submission's time went, from each lab's PhaseTimes (the runners' own clocks split run_s).
std::string budget_line(const std::vector<PhaseTimes>& budgets) {
  PhaseTimes sum;
  for (const auto& p : budgets) sum += p;
  const double n = static_cast<double>(std::max<std::size_t>(1, budgets.size()));
  const double rest = sum.run_s - sum.correctness_s - sum.timing_s - sum.calibration_s;
  return fmt::format("budget per submission (mean of {}): compile {:.1f} s, waiting for the GPU {:.1f} s, run {:.1f} s "
                     "= correctness cases {:.1f} s + timing cases {:.1f} s (timed and warm-up launches {:.1f} s, inputs, "
                     "references and full checks {:.1f} s) + calibration {:.1f} s + the rest {:.1f} s "
                     "(runner start-up, device, kernel builds); the hidden pass alone {:.1f} s of the run{}",
                     budgets.size(), sum.compile_s / n, sum.wait_for_gpu_s / n, sum.run_s / n, sum.correctness_s / n,
                     sum.timing_s / n, sum.timed_launches_s / n, (sum.timing_s - sum.timed_launches_s) / n,
                     sum.calibration_s / n, rest / n, sum.hidden_s / n,
                     sum.sanitize_s > 0 ? fmt::format("; sanitizer {:.1f} s", sum.sanitize_s / n) : "");
}

// batch.json's record of the batch's own calibrations and of where the graded students' time went.
void add_calibrations_and_budget(json& batch, const Batch& b) {
  batch["device_calibrations"] = json::array();
  for (const auto& [where, c] : b.device_calibrations)
    batch["device_calibrations"].push_back({{"gpu_slot", where.first}, {"lab", where.second}, {"calibration", calibration_to_json(c)}});
  PhaseTimes total;
  for (const auto& p : b.budgets) total += p;
  batch["phases_total"] = phases_json(total);
  batch["phases_students"] = b.budgets.size();
}

// Grades one student as job `index` of the batch, as a sandbox user held machine-wide for the time.
Outcome grade_in_slot(Batch& b, const StudentJob& job, int index) {
  Slot slot{index, std::nullopt};
  std::optional<UserLease> lease;
  if (b.isolation.own_user) {
    lease = lease_sandbox_user();
    slot.user = lease->uid;
  }
  return grade_student(b, job, slot);
}

// Holds OUT/.lock for the batch: two batches writing one OUT would overwrite each other.
class BatchLock {
 public:
  explicit BatchLock(const fs::path& out) : fd_(::open((out / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX | LOCK_NB) != 0)
      throw std::runtime_error(fmt::format("another gpulab grade is writing {}: wait for it, or choose another OUT", out.string()));
  }
  ~BatchLock() { ::close(fd_); }

 private:
  int fd_;
};

std::vector<StudentJob> list_submissions(const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw std::invalid_argument(fmt::format("SUBMISSIONS={} is not a folder: it must hold one folder or archive per student",
                                            dir.string()));
  std::vector<StudentJob> jobs;
  std::map<std::string, fs::path> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    if (file.empty() || file.front() == '.') continue;
    StudentJob job{e.path(), student_name(e.path())};
    if (auto it = names.find(job.name); it != names.end())
      throw std::invalid_argument(fmt::format("{} and {} are the same student ({}): keep one of them", it->second.filename().string(),
                                              file, job.name));
    names[job.name] = e.path();
    jobs.push_back(job);
  }
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return jobs;
}

}  // namespace

std::string grader_version(const Toolchain& tc, const std::vector<Manifest>& labs, const std::string& backend) {
  Sha256 h;
  h.update(GPULAB_VERSION);
  h.update_file(fs::canonical("/proc/self/exe"));
  h.update_file(tc.build_dir / "toolchain.json");
  // What student code may use: a changed list regrades everyone.
  std::vector<fs::path> lists;
  for (const auto& e : fs::directory_iterator(tc.repo / "grader" / "allowlist")) lists.push_back(e.path());
  std::sort(lists.begin(), lists.end());
  for (const auto& list : lists) h.update_file(list);
  for (const auto& m : labs) {
    h.update_file(m.path);
    const std::string key = m.name + "/" + backend;
    if (tc.config["labs"].contains(key))
      for (const auto& lib : tc.config["labs"][key]) h.update_file(lib.get<std::string>());
  }
  return fmt::format("{}+{}", GPULAB_VERSION, h.hex().substr(0, 12));
}

json gradescope_results(const json& record) {
  const json result = redacted_for_student(record);
  json tests = json::array();
  for (const auto& l : result.value("labs", json::array()))
    for (const auto& t : l.value("tasks", json::array())) {
      std::string output = t.value("message", "");
      if (!t.value("details", "").empty()) output += "\n" + t.value("details", "");
      if (t.contains("ratio") && t.contains("threshold"))
        output += fmt::format("\n{}: {:.3f} (needed {:.3f})", t.value("metric", ""), t["ratio"].get<double>(),
                              t["threshold"].get<double>());
      const std::string status = t.value("status", "");
      tests.push_back({{"name", fmt::format("{} / {} ({}){}", l.value("id", ""), t.value("task", ""), t.value("function", ""),
                                            t.value("bonus", false) ? " [bonus]" : "")},
                       {"score", t.value("points", 0.0)},
                       {"max_score", t.value("max_points", 0.0)},
                       {"status", status == "passed" ? "passed" : "failed"},
                       {"output", status == "passed" && output.empty() ? "passed" : output},
                       {"visibility", "visible"}});
    }
  std::string output;
  if (!result.value("error", "").empty()) output = "Your submission could not be graded: " + result.value("error", "");
  for (const auto& n : result.value("notes", json::array())) output += (output.empty() ? "" : "\n") + n.get<std::string>();
  return {{"score", result.value("score", 0.0)},
          {"max_score", result.value("max_score", 0.0)},
          {"execution_time", static_cast<int>(result.value("duration_s", 0.0))},
          {"output", output},
          {"tests", tests}};
}

std::string feedback_text(const json& record) {
  const json result = redacted_for_student(record);
  std::string text = fmt::format("gpulab grade: {} ({})\nsubmission content: {}\ngrader: {}\nisolation: {}\n\n",
                                 result.value("student", ""), result.value("submission", ""),
                                 result.value("content_hash", ""), result.value("grader_version", ""),
                                 result.value("isolation", ""));
  if (!result.value("error", "").empty())
    text += fmt::format("Your submission could not be graded:\n  {}\n\nScore: 0 / {}\n", result.value("error", ""),
                        points_text(result.value("max_score", 0.0)));
  if (!result.value("notes", json::array()).empty()) {
    text += "Notes:\n";
    for (const auto& n : result["notes"]) text += "  " + n.get<std::string>() + "\n";
    text += "\n";
  }
  if (!result.value("labs", json::array()).empty()) {
    text += render_report(summary_of(result), false);
    for (const auto& l : result["labs"])
      for (const auto& t : l.value("tasks", json::array()))
        if (t.contains("reference") && t["reference"].contains("ratio") && t.contains("ratio"))
          text += fmt::format("{} {}: your {} {:.3f}; the reference solution on this machine {:.3f}\n", l.value("id", ""),
                              t.value("task", ""), t.value("metric", ""), t["ratio"].get<double>(),
                              t["reference"]["ratio"].get<double>());
  }
  return text;
}

std::string feedback_html(const json& result) {
  const double score = result.value("score", 0.0), max = result.value("max_score", 0.0);
  return fmt::format(R"(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gpulab feedback: {0}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:70em}}pre{{background:#f6f6f6;padding:1em;overflow-x:auto;
white-space:pre-wrap}}.score{{font-size:1.4em;font-weight:bold}}</style></head>
<body><h1>Feedback for {0}</h1><p class="score">{1} / {2} points</p>
<p>This is what <code>make check</code> shows for the files you submitted, graded on the course's machine
(including cases you do not see when you run it yourself).</p>
<pre>{3}</pre></body></html>
)",
                     html_escape(result.value("student", "")), points_text(score), points_text(max),
                     html_escape(feedback_text(result)));
}

// What the instructor should look at in a record: each task's finding (buffer violation, impossible
// speed, sanitizer) and each warning of the static barrier check, separated by "; ".
std::string findings_of(const json& record) {
  std::vector<std::string> found;
  for (const auto& l : record.value("labs", json::array())) {
    for (const auto& t : l.value("tasks", json::array()))
      if (const std::string f = t.value("finding", ""); !f.empty())
        found.push_back(fmt::format("{}/{}: {}", l.value("id", ""), t.value("task", ""), f));
    for (const auto& w : l.value("warnings", json::array()))
      if (w.is_string()) found.push_back(w.get<std::string>().substr(0, w.get<std::string>().find(" — ")));
  }
  return fmt::format("{}", fmt::join(found, "; "));
}

std::string gradebook_csv(const std::vector<json>& results, const std::vector<Manifest>& labs) {
  std::vector<std::pair<std::string, std::string>> columns;  // lab id, task
  for (const auto& m : labs)
    for (const auto& t : m.tasks) columns.emplace_back(m.id, t.name);
  std::string csv = "student,submission";
  for (const auto& [lab, task] : columns) csv += "," + csv_cell(lab + "/" + task);
  csv += ",score,max_score,status,error,findings\n";
  for (const auto& r : results) {
    csv += csv_cell(r.value("student", "")) + "," + csv_cell(r.value("submission", ""));
    if (r.value("grader_error", false)) {
      // Not the student's zero: no points at all until a later run grades them.
      csv += std::string(columns.size(), ',') + ",," + points_text(r.value("max_score", 0.0)) + ",not graded," +
             csv_cell(r.value("error", "")) + ",\n";
      continue;
    }
    const std::string status = r.value("error", "").empty() ? "graded" : "refused";
    for (const auto& [lab, task] : columns) {
      double points = 0;
      for (const auto& l : r.value("labs", json::array()))
        if (l.value("id", "") == lab)
          for (const auto& t : l.value("tasks", json::array()))
            if (t.value("task", "") == task) points = t.value("points", 0.0);
      csv += "," + points_text(points);
    }
    std::string error = r.value("error", "");
    csv += "," + points_text(r.value("score", 0.0)) + "," + points_text(r.value("max_score", 0.0)) + "," + status + "," +
           csv_cell(error) + "," + csv_cell(findings_of(r)) + "\n";
  }
  return csv;
}

int default_jobs(const std::string& backend, const std::string& device, int cuda_gpus, unsigned cores) {
  if (backend != "cuda" || !device.empty() || cuda_gpus < 1) return 1;
  return std::max(1, std::min(3 * cuda_gpus, static_cast<int>(cores / 4)));
}

BatchSummary grade_batch(const Toolchain& tc, const std::vector<Manifest>& labs, const std::string& backend,
                         const GradeOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  const std::string started_at = now_utc();
  Batch b(tc, labs, backend, o);
  b.out = fs::absolute(o.out).lexically_normal();
  b.submissions = fs::absolute(o.submissions).lexically_normal();
  auto jobs = list_submissions(b.submissions);
  fs::create_directories(b.out / "students");
  BatchLock lock(b.out);
  fs::remove_all(b.out / ".scratch");  // what a killed batch left half done
  fs::create_directories(b.out / ".scratch");

  b.version = grader_version(tc, labs, backend);
  b.isolation = detect_isolation();
  // Timings are only fair when one submission at a time runs on a GPU: with CUDA each job gets a GPU
  // of its own (CUDA_VISIBLE_DEVICES) and a lock per GPU; a chosen device, or OpenCL on a GPU, has one lock.
  const DeviceInfo device = find_device(backend, o.device);
  if (backend == "cuda" && o.device.empty()) {
    const auto gpus = list_devices("cuda");
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::vector<std::string> ids;
    if (visible && *visible) {
      std::stringstream s(visible);
      for (std::string id; std::getline(s, id, ',');) ids.push_back(id);
    }
    for (std::size_t i = 0; i < gpus.size(); ++i) b.gpus.push_back(i < ids.size() ? ids[i] : std::to_string(i));
    for (const auto& id : b.gpus) b.gpu_lock_names.push_back(gpu_lock_name("cuda", id));
    if (b.gpus.empty()) b.gpu_lock_names.push_back(gpu_lock_name(device));
  } else if (device.device_class == DeviceClass::gpu) {
    b.gpu_lock_names.push_back(gpu_lock_name(device));
  }
  b.device_class = device.device_class;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int jobs_n = o.jobs > 0 ? o.jobs : default_jobs(backend, o.device, static_cast<int>(b.gpus.size()), cores);
  b.cpu_threads_per_job = std::max(1, static_cast<int>(cores) / jobs_n);
  b.run_limits.wall_s = o.lab_time_limit_s;
  b.run_limits.cpu_s = o.lab_time_limit_s * b.cpu_threads_per_job;
  b.run_limits.memory_bytes = static_cast<std::uint64_t>(o.memory_gib * double(1ull << 30));
  b.run_limits.processes = o.processes;
  b.run_limits.output_bytes = static_cast<std::uint64_t>(o.output_mib * double(1ull << 20));
  b.run_limits.disk_bytes = 4 * b.run_limits.output_bytes;  // a few outputs' worth in its own folder
  b.compile_limits = b.run_limits;
  b.compile_limits.wall_s = std::min(300.0, o.lab_time_limit_s);
  b.compile_limits.cpu_s = b.compile_limits.wall_s * 2;
  // A submission sees neither the solutions, nor the course's tests and history, nor other students.
  // The build folder keeps test copies of the solutions, other runs' reports and the docs site (which
  // quotes the solutions): only the harness libraries there are needed.
  for (const char* p : {"solutions", "tests", ".git"}) b.hidden.push_back(tc.repo / p);
  for (const char* p : {"students", "tests", "site", "bench"}) b.hidden.push_back(tc.build_dir / p);
  b.hidden.push_back(b.submissions);
  b.hidden.push_back(b.out);
  b.needed = {tc.repo, tc.build_dir};
  if (const char* vendors = std::getenv("OCL_ICD_VENDORS"); vendors && fs::is_directory(vendors)) b.needed.emplace_back(vendors);
  if (o.sanitize) b.sanitizer = make_sanitizer_gate(tc, backend);
  if (fs::exists(b.out / "calibration.json") && !o.calibrate) {
    b.calibration = json::parse(read_text(b.out / "calibration.json"), nullptr, false);
    if (b.calibration.is_discarded() || b.calibration.value("grader_version", "") != b.version) {
      fmt::print(stderr, "gpulab grade: {} was measured by another grader version and is ignored; --calibrate measures "
                         "again\n",
                 (b.out / "calibration.json").string());
      b.calibration = json();
    }
  }

  if (!o.quiet) {
    fmt::print("gpulab grade: {} submissions from {} into {} ({}, {} job{}, grader {})\nisolation: {}\n", jobs.size(),
               b.submissions.string(), b.out.string(), backend, jobs_n, jobs_n > 1 ? "s" : "", b.version,
               b.isolation.describe(b.run_limits));
    std::fflush(stdout);
  }

  calibrate_batch(b);
  if (!o.quiet && !b.device_calibrations.empty())
    fmt::print("  device calibrations: measured once for the batch, by the skeletons' runners, for {} lab{}\n",
               b.device_calibrations.size(), b.device_calibrations.size() > 1 ? "s" : "");

  if (o.calibrate) {
    // The reference solutions, graded like a student, give the ratios this machine reaches.
    Batch& ref = b;
    StudentJob job{tc.repo / "solutions", "_reference-solution"};
    fs::remove(b.out / "students" / job.name / "result.json");
    grade_in_slot(ref, job, 0);
    const json r = json::parse(read_text(b.out / "students" / job.name / "result.json"));
    json cal{{"grader_version", b.version}, {"measured_at", now_utc()}, {"labs", json::object()}};
    for (const auto& l : r["labs"]) {
      if (l.contains("device")) cal["device"] = l["device"];
      for (const auto& t : l["tasks"]) {
        json entry{{"status", t.value("status", "")}, {"ratios", t.value("ratios", json::object())}};
        if (t.contains("ratio")) entry["ratio"] = t["ratio"], entry["metric"] = t.value("metric", "");
        cal["labs"][l.value("id", "")][t.value("task", "")] = entry;
      }
    }
    write_text_atomically(cal.dump(2) + "\n", b.out / "calibration.json");
    fs::remove_all(b.out / "students" / job.name);
    b.calibration = cal;
    b.budgets.clear();  // the budget line is the students'
    if (!o.quiet) fmt::print("  calibration: the reference solutions' ratios on this machine are in {}\n", (b.out / "calibration.json").string());
  }

  BatchSummary summary;
  summary.submissions = static_cast<int>(jobs.size());
  std::atomic<std::size_t> next{0};
  std::mutex count_lock;
  auto worker = [&](int slot) {
    for (std::size_t i; (i = next++) < jobs.size();) {
      Outcome outcome;
      try {
        outcome = grade_in_slot(b, jobs[i], slot);
      } catch (const std::exception& e) {
        // The grader's own failure for this student (disk full, ...): a record that says so, without a
        // content hash, so the next run grades this student again; the batch goes on.
        {
          std::lock_guard lock(b.print_lock);
          fmt::print(stderr, "  {}: not graded, the grader failed: {}\n", jobs[i].name, e.what());
        }
        try {
          const json record{{"student", jobs[i].name}, {"submission", jobs[i].entry.filename().string()},
                            {"grader_version", b.version}, {"content_hash", ""}, {"labs", json::array()},
                            {"notes", json::array()}, {"score", nullptr}, {"max_score", max_score_of(b)}, {"grader_error", true},
                            {"error", fmt::format("not graded: the grader failed ({}); it is graded again on the next "
                                                  "run",
                                                  e.what())}};
          write_text_atomically(record.dump(2) + "\n", b.out / "students" / jobs[i].name / "result.json");
        } catch (const std::exception&) {
        }
        std::lock_guard lock(count_lock);
        ++summary.failed;
        continue;
      }
      std::lock_guard lock(count_lock);
      if (outcome == Outcome::skipped) ++summary.skipped_unchanged;
      else ++summary.graded, summary.refused += outcome == Outcome::refused;
    }
  };
  std::vector<std::thread> workers;
  for (int s = 0; s < jobs_n; ++s) workers.emplace_back(worker, s);
  for (auto& w : workers) w.join();
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::vector<json> results;
  for (const auto& job : jobs) {
    const fs::path record = b.out / "students" / job.name / "result.json";
    if (fs::exists(record)) results.push_back(json::parse(read_text(record), nullptr, false));
  }
  std::erase_if(results, [](const json& j) { return j.is_discarded(); });
  write_text_atomically(gradebook_csv(results, labs), b.out / "grades.csv");
  std::vector<std::string> ids;
  for (const auto& m : labs) ids.push_back(m.id);
  const double hours = summary.wall_s / 3600;
  json batch{{"grader_version", b.version}, {"started", started_at}, {"finished", now_utc()}, {"backend", backend},
             {"isolation", b.isolation.describe(b.run_limits)}, {"jobs", jobs_n}, {"submissions", summary.submissions},
             {"graded", summary.graded}, {"refused", summary.refused}, {"skipped_unchanged", summary.skipped_unchanged},
             {"grader_failures", summary.failed},
             {"wall_s", summary.wall_s}, {"labs", ids},
             {"throughput_per_hour", summary.graded > 0 && hours > 0 ? summary.graded / hours : 0.0}};
  if (!b.gpus.empty()) batch["gpus"] = b.gpus;
  add_calibrations_and_budget(batch, b);
  if (!b.budgets.empty()) fmt::print("{}\n", budget_line(b.budgets));
  write_text_atomically(batch.dump(2) + "\n", b.out / "batch.json");
  fs::remove_all(b.out / ".scratch");
  return summary;
}

}  // namespace gpulab::cli
