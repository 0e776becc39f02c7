// One student of a batch, in phases: open the submission and hash what it grades, skip it when an
// earlier run graded the same, build and run each lab, write the student's files.
#include <sys/wait.h>

#include <csignal>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <thread>

#include "batch.hpp"
#include "files.hpp"
#include "gpulab/random.hpp"
#include "gpulab/text.hpp"
#include "history.hpp"
#include "lab_job.hpp"
#include "machine_lock.hpp"
#include "student_outputs.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Why a compile ended by the grader's fault rather than the student's, or "": the sandbox could not
// start it, it could not be executed, something outside the grader killed it, or it failed without a
// word (a compiler rejecting code always says why). Limits the grader enforces are the student's.
std::string compile_failure_of_grader(const ChildExit& e, const std::string& output) {
  if (e.killed()) return {};
  if (e.signal == SIGKILL || e.signal == SIGTERM || e.signal == SIGHUP || e.signal == SIGINT)
    return fmt::format("the compiler was killed by signal {} from outside the grader", e.signal);
  if (e.exited_with(ExitStatus::cannot_start))
    return fmt::format("the sandbox could not start the compiler: {}", sandbox_complaint(output));
  if (e.exited_with(ExitStatus::cannot_execute))
    return fmt::format("the compiler could not be executed: {}", sandbox_complaint(output));
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

// The compiler of one lab, in the student's sandbox: it sees the lab's files and writes only its
// build folder. Throws GraderFailure when the grader, not the code, made it fail.
CommandRunner sandboxed_compiler(const Batch& b, const LabPlace& place, const fs::path& lab_dir,
                                 const fs::path& build_dir) {
  return [&b, place, lab_dir, build_dir](const std::string& command) {
    SandboxSpec spec = place.sandbox;
    spec.visible = {lab_dir};
    spec.writable = {build_dir};
    const fs::path log = place.logs / "compile.log";
    fs::remove(log);
    const ChildExit e = run_isolated({"/bin/sh", "-c", command}, log, b.compile_limits, spec);
    BuildCommandOutput c;
    c.output = read_text(log);
    if (const std::string why = compile_failure_of_grader(e, c.output); !why.empty()) throw GraderFailure(why);
    c.status = e.exited_ok() ? 0 : 1;
    if (c.status != 0) c.stopped_by = limit_that_stopped(e, c.output.size(), b.compile_limits);
    return c;
  };
}

// The sanitizer gate on the tasks of `lab` that passed (it only ever takes points away), as the
// batch's mode plans it: by default those whose kernels use shared memory or barriers, read from the
// student's sources (kernel_map.hpp). One runner per tool takes them all.
void sanitize_passed_tasks(const Batch& b, const Manifest& m, const RunRequest& req, LabRun& lab) {
  std::vector<std::string> passed;
  for (const auto& t : lab.tasks)
    if (t.status == Status::passed) passed.push_back(t.task);
  if (passed.empty()) return;
  const KernelMap kernels = map_kernels(m, read_lab_sources(m, b.backend, req.student_dir));
  const SanitizerPlan plan = plan_sanitizer(b.o.sanitize, b.backend, kernels, passed);
  if (plan.tasks.empty()) return;
  const auto sanitize_start = std::chrono::steady_clock::now();
  SanitizerGate gate = *b.sanitizer;
  gate.tools = plan.tools;
  gate.student_files = m.files.at(b.backend);
  gate.shown_dir = m.id;
  gate.parallel = 1;  // the batch's jobs already share the machine's cores
  gate.kernels = kernels;
  RunRequest gated = req;
  gated.tasks = plan.tasks;
  apply_sanitizer_gate(lab, sanitize_lab(gated, gate));
  lab.phases.sanitize_s = seconds_since(sanitize_start);
}

// Runs one built lab of one student under the GPU lock: its visible and hidden passes, and the
// sanitizer gate. The whole of it holds the lock, the correctness-only hidden pass and sanitizer too:
// they use the GPU, and any GPU work beside another submission's timed launches would slow them (the
// interleaved baseline only partly makes up for a load that comes and goes).
LabRun run_lab(Batch& b, const Manifest& m, RunRequest req, const Slot& slot) {
  const int gpu_slot = slot.index % std::max<int>(1, static_cast<int>(b.gpus.size()));
  if (auto it = b.device_calibrations.find({gpu_slot, m.id}); it != b.device_calibrations.end())
    req.calibration = it->second;
  // Timings are only fair when one run at a time uses a GPU: this lock is machine-wide, so other
  // batches and students' `make check` wait too.
  const auto wait_start = std::chrono::steady_clock::now();
  std::optional<MachineLock> gpu;
  if (!b.gpu_lock_names.empty()) gpu = MachineLock::take(b.gpu_lock_names[slot.index % b.gpu_lock_names.size()]);
  const double waited_s = seconds_since(wait_start);
  LabRun lab = supervise(req);
  lab.phases.wait_for_gpu_s = waited_s;
  if (b.sanitizer && lab.grader_failure.empty()) sanitize_passed_tasks(b, m, req, lab);
  return lab;
}

// Builds and runs one lab of one student. Throws GraderFailure when the grader, not the submission,
// failed; LabRun::grader_failure says the same of the run.
LabRun grade_lab(Batch& b, const Manifest& m, const LabFiles& files, const LabPlace& place, const Slot& slot,
                 std::uint64_t seed) {
  LabJob job;
  job.toolchain = &b.tc, job.manifest = &m, job.backend = b.backend;
  job.student_dir = place.scratch / "labs" / m.id;
  job.build_dir = place.scratch / "build" / m.id;
  job.tasks = select_tasks(m, {});
  if (!files.complete()) {
    LabRun lab = lab_of(m, b.backend);
    lab.tasks =
        all_tasks_failed(m, job.tasks, Status::compile_error, fmt::format("{}", fmt::join(files.missing, "; ")), "");
    return lab;
  }
  job.compile = sandboxed_compiler(b, place, job.student_dir, job.build_dir);
  fs::remove_all(job.build_dir);  // always built afresh: nothing from an earlier run is trusted
  fs::create_directories(job.build_dir);
  if (slot.user) give_to_user(job.build_dir, *slot.user);
  RunRequest& req = job.request;
  req.device = b.o.device;
  req.seed = seed;
  if (b.o.idle_timeout_s > 0) req.timeout_s = b.o.idle_timeout_s;
  req.work_dir = place.scratch / "run" / m.id;  // pictures are not kept: no --pictures
  req.hidden_cases = true;
  req.limits = run_limits_for(b, m);
  req.sandbox = place.sandbox;
  req.sandbox.visible = {job.student_dir, job.build_dir};
  job.supervise = [&](const RunRequest& built) {
    if (slot.user) give_to_user(job.build_dir, 0);  // the runner cannot be replaced by the code it runs
    return run_lab(b, m, built, slot);
  };
  return build_and_supervise(job);
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
    } catch (const GraderFailure& e) { failure = e.what(); }
    if (attempt == kAttempts) throw GraderFailure(fmt::format("{}: {} (tried {} times)", m.id, failure, kAttempts));
    {
      std::lock_guard lock(b.print_lock);
      fmt::print(stderr, "  {}: the grader failed ({}); trying again\n", m.id, failure);
    }
    std::this_thread::sleep_for(std::chrono::seconds(attempt));
  }
}

// The record's fields known before anything is opened.
StudentRecord new_record(const Batch& b, const StudentJob& job, const Slot& slot) {
  StudentRecord r;
  r.student = job.name;
  r.submission = job.entry.filename().string();
  r.grader_version = b.version;
  r.selection = selection_key(b);
  r.backend = b.backend;
  r.isolation = b.isolation.describe(b.run_limits);
  r.max_score = max_score_of(b);
  r.seed = b.o.seed ? *b.o.seed : fresh_seed();
  r.calibration = b.calibration.is_object() ? b.calibration.value("measured_at", "") : "";
  // Which GPU of the machine graded this student (each job has its own; labs[].device has its PCI address).
  if (!b.gpus.empty()) r.gpu = b.gpus[static_cast<std::size_t>(slot.index) % b.gpus.size()];
  r.node = host_name();
  if (b.o.chunk) r.slurm_job = b.o.chunk->task_id;
  r.submission_stamp = submission_stamp(job.entry);
  return r;
}

// The submission's files, or why it is refused (record.error).
SubmissionFiles open_files(const StudentJob& job, const fs::path& scratch, StudentRecord& record) {
  if (!job.conflict.empty()) {
    record.error = job.conflict;
    return {};
  }
  try {
    return open_submission(job.entry, scratch / "unpacked");
  } catch (const SubmissionError& e) {
    record.error = e.what();
  } catch (const std::exception& e) {  // e.g. an archive whose file and folder share a name
    record.error = fmt::format("{}: cannot be unpacked ({}); make the archive again from the course folder",
                               job.entry.filename().string(), e.what());
  }
  return {};
}

// "none of the lab files is there (it holds: ...)": a misnamed file is the likeliest reason, so the
// near misses say which ("found Transpose.cu, expected transpose.cu").
std::string nothing_found(const StudentJob& job, const SubmissionFiles& files,
                          const std::map<std::string, LabFiles>& taken) {
  std::vector<std::string> some(files.files.begin(),
                                files.files.begin() + std::min<std::size_t>(files.files.size(), 5));
  std::vector<std::string> near;
  for (const auto& [id, t] : taken)
    for (const auto& line : t.near_misses) near.push_back(fmt::format("{}: {}", id, line));
  return fmt::format(
      "{}: none of the lab files is there (it holds: {}){}; a submission holds the course layout, e.g. "
      "labs/02-transpose/transpose.cu",
      job.entry.filename().string(), some.empty() ? "nothing" : fmt::format("{}", fmt::join(some, ", ")),
      near.empty() ? "" : fmt::format("; {}", fmt::join(near, "; ")));
}

// The student's make check history, when the submission holds one (history.jsonl at its top, in
// build/, or under one wrapping folder): the lines of the batch's labs, the newest kHistoryLines,
// and only those lines' labs. A broken or foreign line is skipped; a file over 4 MiB is not read.
std::vector<json> submitted_history(const Batch& b, const SubmissionFiles& files) {
  constexpr std::size_t kHistoryLines = 300;
  const auto found = std::find_if(files.files.begin(), files.files.end(), [](const std::string& f) {
    const fs::path p(f);
    return p.filename() == "history.jsonl" && std::distance(p.begin(), p.end()) <= 3;
  });
  std::error_code ec;
  if (found == files.files.end() || fs::file_size(files.root / *found, ec) > (4u << 20) || ec) return {};
  std::vector<json> kept;
  // The student wrote it: only known fields of known types survive (no local paths, no deep nesting).
  for (const json& line : read_history(files.root / *found)) {
    auto entry = sanitized_history_entry(line);
    if (!entry || !entry->contains("when")) continue;
    json labs = json::array();
    for (const auto& lab : (*entry)["labs"])
      if (std::any_of(b.labs.begin(), b.labs.end(), [&](const Manifest& m) { return lab["id"] == m.id; }))
        labs.push_back(lab);
    if (labs.empty()) continue;
    (*entry)["labs"] = labs;
    kept.push_back(std::move(*entry));
  }
  if (kept.size() > kHistoryLines) kept.erase(kept.begin(), kept.end() - kHistoryLines);
  return kept;
}

// Opens the submission and takes each lab's files into the scratch folder; the record gets the
// notes, the refusal if any, and the content hash: what decides whether a rerun may skip this student.
std::map<std::string, LabFiles> open_and_hash(const Batch& b, const StudentJob& job, const fs::path& scratch,
                                              StudentRecord& record) {
  const SubmissionFiles files = open_files(job, scratch, record);
  try {
    record.history = submitted_history(b, files);
  } catch (const std::exception& e) {  // it informs and never grades: without it the grading goes on
    record.notes.push_back(fmt::format("your make check history could not be read ({}); it is left out", e.what()));
  }
  std::map<std::string, LabFiles> taken;
  Sha256 hash;
  hash.update(record.selection);
  if (!record.error.empty() && fs::is_regular_file(job.entry))
    hash.update_file(job.entry);  // a refused archive: all of it
  std::size_t found = 0;
  for (const auto& m : b.labs) {
    if (!record.error.empty() || !m.files.count(b.backend)) continue;
    LabFiles& lab = taken[m.id];
    try {
      lab = take_lab_files(files, m, b.backend, scratch / "labs" / m.id);
    } catch (const std::exception& e) {  // a file that cannot be read or copied
      lab.missing.push_back(fmt::format("its files cannot be read ({})", e.what()));
    }
    for (const auto& f : lab.taken) {
      hash.update(m.id + "/" + f);
      hash.update("\n", 1);
      hash.update_file(scratch / "labs" / m.id / f);
      hash.update("\n", 1);
    }
    for (const auto& missing : lab.missing) record.notes.push_back(fmt::format("{}: {}", m.id, missing));
    found += lab.taken.size();
  }
  if (!record.history.empty()) hash.update(json(record.history).dump());  // a newer history: render again
  if (record.error.empty() && found == 0) record.error = nothing_found(job, files, taken);
  record.content_hash = "sha256:" + hash.hex();
  return taken;
}

// Resume: the same files, graded by the same grader with the same selection, need no second run.
bool graded_before(const Batch& b, const StudentRecord& record, const fs::path& path) {
  if (b.o.force || !fs::exists(path)) return false;
  const json old = json::parse(read_text(path), nullptr, false);
  return !old.is_discarded() && old.value("content_hash", "") == record.content_hash &&
         old.value("grader_version", "") == b.version && old.value("selection", "") == record.selection &&
         old.value("calibration", "") == record.calibration;
}

// A line per lab as it starts and ends, when the batch grades several labs (a whole course takes a
// student minutes); not with --quiet, and not for one lab, whose student line says it all.
void say_progress(Batch& b, const std::string& line) {
  if (b.o.quiet || b.labs.size() < 2) return;
  std::lock_guard lock(b.print_lock);
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

// Builds and runs each lab of the batch, into the record.
void grade_labs(Batch& b, const Slot& slot, const fs::path& scratch, const std::map<std::string, LabFiles>& taken,
                StudentRecord& record) {
  // The scratch folder belongs to the grader; the submission's code may write only in box/ (its
  // home) and, while it compiles, in its build folder. Logs, progress and output files live in
  // folders it cannot write, so it cannot swap them for links or plant a runner.
  const LabPlace place{scratch, scratch / "box", scratch / "logs", sandbox_for(b, scratch / "box", slot)};
  fs::create_directories(place.box);
  fs::create_directories(place.logs);
  PhaseTimes phases;  // over the student's labs
  for (const auto& m : b.labs) {
    if (!m.files.count(b.backend)) continue;
    const auto lab_start = std::chrono::steady_clock::now();
    say_progress(b, fmt::format("  {}: {} ...", record.student, m.id));
    LabRun lab = grade_lab_with_retries(b, m, taken.at(m.id), place, slot, record.seed);
    say_progress(b, fmt::format("  {}: {}: {} / {} points ({:.0f} s)", record.student, m.id, points_text(lab.points()),
                                points_text(lab.max_points()), seconds_since(lab_start)));
    phases += lab.phases;
    // Paths in messages: the scratch folder means nothing to a student.
    const std::string scratch_prefix = scratch.string() + "/";
    for (auto& task : lab.tasks) {
      task.message = replace_all(task.message, scratch_prefix);
      task.details = replace_all(task.details, scratch_prefix);
      for (auto& c : task.cases) c.pictures.clear();  // pictures stay in the scratch folder, not in reports
    }
    record.labs.push_back({std::move(lab), references_for(b, m.id)});
  }
  record.phases = phases;
  std::lock_guard lock(b.print_lock);
  b.budgets.push_back(phases);
}

// attempts/<graded_at>.json, a name no earlier grading of the student has taken.
fs::path attempt_path(const fs::path& dir, const std::string& graded_at) {
  fs::path path = dir / "attempts" / (graded_at + ".json");
  for (int n = 2; fs::exists(path); ++n) path = dir / "attempts" / fmt::format("{}-{}.json", graded_at, n);
  return path;
}

// A regrade adds a record and overwrites none: every grading of the student is kept in attempts/
// (result.json is the latest, the one that counts). A record written before attempts/ existed is
// kept there first; a not-graded record (the grader failed) is no attempt.
void keep_attempt(const std::string& text, const std::string& graded_at, const fs::path& dir) {
  const fs::path latest = dir / "result.json";
  if (!fs::exists(dir / "attempts") && fs::exists(latest)) {
    const json earlier = json::parse(read_text(latest), nullptr, false);
    if (earlier.is_object() && !earlier.value("grader_error", false) && !earlier.value("graded_at", "").empty()) {
      fs::create_directories(dir / "attempts");
      write_text_atomically(read_text(latest), attempt_path(dir, earlier.value("graded_at", "")));
    }
  }
  fs::create_directories(dir / "attempts");
  write_text_atomically(text, attempt_path(dir, graded_at.empty() ? now_utc() : graded_at));
}

// The record last: a student counts as graded only once every file of theirs is complete.
void write_student_files(const StudentRecord& record, const fs::path& dir, const GradescopeOptions& options) {
  const auto dump = [](const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; };
  write_student_outputs(record, dir, options);
  const std::string text = dump(record);
  keep_attempt(text, record.graded_at, dir);
  write_text_atomically(text, dir / "result.json");
}

}  // namespace

Outcome grade_student(Batch& b, const StudentJob& job, const Slot& slot) {
  // One student is graded by one process at a time, across the tasks of Slurm submissions (a task of
  // a resubmission may start while an earlier one still runs): a second grader waits on its claim,
  // then finds the student graded and skips them. Released when its holder ends, however it ends.
  fs::create_directories(b.out / ".claims");
  const FileLock claim(b.out / ".claims" / (job.name + ".lock"), FileLock::Kind::exclusive, true);
  if (!claim.held()) throw std::runtime_error(fmt::format("cannot claim {} in {}/.claims", job.name, b.out.string()));
  const auto started = std::chrono::steady_clock::now();
  const fs::path student_out = b.out / "students" / job.name;
  const fs::path scratch = b.scratch / job.name;
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  StudentRecord record = new_record(b, job, slot);
  const auto taken = open_and_hash(b, job, scratch, record);
  if (graded_before(b, record, student_out / "result.json")) {
    fs::remove_all(scratch);
    return Outcome::skipped;
  }
  const bool refused = !record.error.empty();
  if (!refused) grade_labs(b, slot, scratch, taken, record);
  double score = 0, bonus = 0;  // a score above the maximum is bonus points: say so
  for (const auto& lab : record.labs) {
    score += lab.run.points();
    for (const auto& t : lab.run.tasks)  // a bonus task's points, and a bonus tier's above a task's maximum
      bonus += t.bonus ? t.points : std::max(0.0, t.points - t.max_points);
  }
  record.score = score;
  record.graded_at = now_utc();
  record.duration_s = seconds_since(started);
  record = printable_record(std::move(record));  // result.json too: instructors print it, and grep it
  write_student_files(record, student_out, gradescope_options(b.o));
  fs::remove_all(scratch);
  if (!b.o.quiet) {
    std::lock_guard lock(b.print_lock);
    if (refused)
      fmt::print("  {}: refused: {}\n", record.student, record.error);
    else
      fmt::print("  {}: {} / {} points{} ({:.0f} s)\n", record.student, points_text(score),
                 points_text(record.max_score), bonus > 0 ? fmt::format(", {} of them bonus", points_text(bonus)) : "",
                 record.duration_s);
    std::fflush(stdout);
  }
  return refused ? Outcome::refused : Outcome::graded;
}

}  // namespace gpulab::cli
