// The batch: its devices, limits and sandbox, its calibrations, the jobs that grade the students, and
// the batch's own files (grades.csv, batch.json).
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <sstream>
#include <thread>

#include "batch.hpp"
#include "files.hpp"
#include "gpulab/device.hpp"
#include "gpulab/random.hpp"
#include "gpulab/text.hpp"
#include "machine_lock.hpp"
#include "student_outputs.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

std::string options_key(const std::vector<Manifest>& labs, const std::string& backend, const GradeOptions& o) {
  std::vector<std::string> ids;
  for (const auto& m : labs) ids.push_back(m.id);
  // The gate changes results, so a batch with another choice grades again. The default's key names its
  // tools, so grading before it became the default is not taken for grading with it.
  const std::string gate =
      backend != "cuda" || o.sanitize == SanitizeMode::off ? ""
      : o.sanitize == SanitizeMode::all
          ? "|sanitizer gate"
          : fmt::format("|sanitizer {} where shared memory or barriers", fmt::join(default_sanitizer_tools(), "+"));
  return fmt::format("{}:{}|device {}|timeout {}|limit {} s, {} GiB, {} processes, {} MiB{}", backend,
                     fmt::join(ids, ","), o.device, o.idle_timeout_s, o.lab_time_limit_s, o.memory_gib, o.processes,
                     o.output_mib, gate);
}

std::string selection_key(const Batch& b) {
  const Isolation& i = b.isolation;
  const bool gate_missing = b.backend == "cuda" && b.o.sanitize == SanitizeMode::automatic && !b.sanitizer;
  return fmt::format("{}|isolation {}{}{}{}", options_key(b.labs, b.backend, b.o), i.bubblewrap ? "bubblewrap " : "",
                     i.own_user ? "user " : "", i.network_off ? "no-network" : "",
                     gate_missing ? "|no compute-sanitizer" : "");
}

std::string submission_stamp(const fs::path& entry) {
  std::vector<std::string> lines;
  const auto stamp = [&](const fs::path& p, const std::string& name) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0)
      lines.push_back(fmt::format("{}\t{}\t{}\t{}.{:09}", name, st.st_mode & S_IFMT, st.st_size, st.st_mtim.tv_sec,
                                  st.st_mtim.tv_nsec));
  };
  stamp(entry, ".");
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(entry, ec)))
    for (auto it = fs::recursive_directory_iterator(entry, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      stamp(it->path(), it->path().lexically_relative(entry).string());
  std::sort(lines.begin(), lines.end());
  Sha256 h;
  for (const auto& line : lines) h.update(line + "\n");
  return "sha256:" + h.hex();
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

Limits run_limits_for(const Batch& b, const Manifest& m) {
  Limits limits = b.run_limits;
  limits.memory_bytes = std::max(limits.memory_bytes, static_cast<std::uint64_t>(m.memory_gib * double(1ull << 30)));
  return limits;
}

double max_score_of(const Batch& b) {
  double max_score = 0;
  for (const auto& m : b.labs)
    for (const auto& t : m.tasks)
      if (!t.bonus && m.files.count(b.backend)) max_score += t.points;
  return max_score;
}

std::map<std::string, ReferenceResult> references_for(const Batch& b, const std::string& lab) {
  std::map<std::string, ReferenceResult> out;
  if (b.calibration.contains("labs") && b.calibration["labs"].contains(lab))
    for (const auto& [task, entry] : b.calibration["labs"][lab].items()) out[task] = entry.get<ReferenceResult>();
  return out;
}

int default_jobs(const std::string& backend, const std::string& device, int cuda_gpus, unsigned cores) {
  if (backend != "cuda" || !device.empty() || cuda_gpus < 1) return 1;
  return std::max(1, std::min(3 * cuda_gpus, static_cast<int>(cores / 4)));
}

namespace {

// OUT/.lock, held for the batch: two batches writing one OUT would overwrite each other. The tasks of
// a Slurm submission share it (each student is claimed on its own, grade_student.cpp); a batch on one
// machine holds it alone.
FileLock batch_lock(const fs::path& out, bool shared) {
  FileLock lock(out / ".lock", shared ? FileLock::Kind::shared : FileLock::Kind::exclusive, false);
  if (lock.held()) return lock;
  throw std::runtime_error(
      shared ? fmt::format("a gpulab grade without --slurm is writing {}: wait for it, or give the Slurm "
                           "submission another OUT",
                           out.string())
             : fmt::format("another gpulab grade (or a Slurm submission's job) is writing {}: wait for it "
                           "(gpulab grade --slurm --status shows a submission's jobs), or choose another OUT",
                           out.string()));
}

std::vector<StudentJob> list_submissions(const fs::path& dir) {
  std::vector<StudentJob> jobs;
  std::map<std::string, std::string> conflicts;  // refused with a record, so the gradebook names them
  for (const auto& [name, entry] : submission_entries(dir, &conflicts))
    jobs.push_back({entry, name, conflicts.count(name) ? conflicts[name] : ""});
  return jobs;
}

// A Slurm array task's students: its lines of the submission's list, each still in the folder.
std::vector<StudentJob> chunk_of_submissions(const SlurmChunk& c, const fs::path& dir) {
  std::vector<std::string> names;
  std::istringstream list(read_text_or_throw(c.list));
  for (std::string line; std::getline(list, line);)
    if (!line.empty()) names.push_back(line);
  const auto all = list_submissions(dir);
  std::vector<StudentJob> jobs;
  const std::size_t first = static_cast<std::size_t>(c.index) * static_cast<std::size_t>(c.size);
  for (std::size_t i = first; i < std::min(names.size(), first + static_cast<std::size_t>(c.size)); ++i) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const StudentJob& j) { return j.name == names[i]; });
    if (it != all.end())
      jobs.push_back(*it);
    else
      fmt::print(stderr, "  {}: listed for this task but no longer in {}: left out\n", names[i], dir.string());
  }
  return jobs;
}

// Timings are only fair when one submission at a time runs on a GPU: with CUDA each job gets a GPU
// of its own (CUDA_VISIBLE_DEVICES) and a lock per GPU; a chosen device, or OpenCL on a GPU, has one lock.
void choose_gpus(Batch& b) {
  const DeviceInfo device = find_device(b.backend, b.o.device);
  b.device_class = device.device_class;
  if (b.backend == "cuda" && b.o.device.empty()) {
    const auto gpus = list_devices("cuda");
    std::vector<std::string> ids;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
      std::stringstream s(visible);
      for (std::string id; std::getline(s, id, ',');) ids.push_back(id);
    }
    for (std::size_t i = 0; i < gpus.size(); ++i) b.gpus.push_back(i < ids.size() ? ids[i] : std::to_string(i));
    for (const auto& id : b.gpus) b.gpu_lock_names.push_back(gpu_lock_name("cuda", id));
    if (b.gpus.empty()) b.gpu_lock_names.push_back(gpu_lock_name(device));
  } else if (device.device_class == DeviceClass::gpu) {
    b.gpu_lock_names.push_back(gpu_lock_name(device));
  }
}

// The cores this process may use: a Slurm job's allocation, else its affinity mask, else the machine's.
unsigned usable_cores() {
  if (const char* slurm = std::getenv("SLURM_CPUS_PER_TASK"); slurm && std::atoi(slurm) > 0)
    return static_cast<unsigned>(std::atoi(slurm));
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// How many students at once, and what each job's runners and compilers may use.
void set_jobs_and_limits(Batch& b) {
  const GradeOptions& o = b.o;
  const unsigned cores = usable_cores();
  b.jobs = o.jobs > 0 ? o.jobs : default_jobs(b.backend, o.device, static_cast<int>(b.gpus.size()), cores);
  b.cpu_threads_per_job = std::max(1, static_cast<int>(cores) / b.jobs);
  b.run_limits.wall_s = o.lab_time_limit_s;
  b.run_limits.cpu_s = o.lab_time_limit_s * b.cpu_threads_per_job;
  b.run_limits.memory_bytes = static_cast<std::uint64_t>(o.memory_gib * double(1ull << 30));
  b.run_limits.processes = o.processes;
  b.run_limits.output_bytes = static_cast<std::uint64_t>(o.output_mib * double(1ull << 20));
  b.run_limits.disk_bytes = 4 * b.run_limits.output_bytes;  // a few outputs' worth in its own folder
  b.compile_limits = b.run_limits;
  b.compile_limits.wall_s = std::min(300.0, o.lab_time_limit_s);
  b.compile_limits.cpu_s = b.compile_limits.wall_s * 2;
}

// What a submission sees: neither the solutions, nor the course's tests and history, nor other
// students. The build folder keeps test copies of the solutions, other runs' reports and the docs site
// (which quotes the solutions): only the harness libraries there are needed.
void set_visibility(Batch& b) {
  b.isolation = detect_isolation();
  for (const char* p : {"solutions", "tests", ".git"}) b.hidden.push_back(b.tc.repo / p);
  for (const char* p : {"students", "tests", "site", "bench"}) b.hidden.push_back(b.tc.build_dir / p);
  b.hidden.push_back(b.submissions);
  b.hidden.push_back(b.out);
  // A folder the sandbox users cannot reach (a private home) needs no hiding from them.
  if (b.isolation.own_user)
    std::erase_if(b.hidden, [](const fs::path& p) { return !access_denied(p, kProbeUser, F_OK).empty(); });
  b.needed = {b.tc.repo, b.tc.build_dir};
  if (const char* vendors = std::getenv("OCL_ICD_VENDORS"); vendors && fs::is_directory(vendors))
    b.needed.emplace_back(vendors);
}

// The sanitizer gate of the batch, and the line its header says about it. --sanitize insists (no
// compute-sanitizer, no batch); the default runs it where it can and says once where it cannot.
void set_sanitizer(Batch& b) {
  const SanitizeMode mode = b.o.sanitize;
  if (mode == SanitizeMode::off) {
    b.sanitizer_note = "sanitizer gate: off (--no-sanitize)";
    return;
  }
  if (mode == SanitizeMode::all) {
    b.sanitizer = make_sanitizer_gate(b.tc, b.backend);
    b.sanitizer_note = fmt::format("sanitizer gate: compute-sanitizer {} on every task that passes (--sanitize)",
                                   fmt::join(b.sanitizer->tools, ", "));
    return;
  }
  if (b.backend != "cuda") {
    b.sanitizer_note = fmt::format(
        "sanitizer gate: not on {} (compute-sanitizer needs CUDA); a barrier the static check proves divergent "
        "still fails its task",
        b.backend);
    return;
  }
  try {
    b.sanitizer = make_sanitizer_gate(b.tc, b.backend);
  } catch (const std::exception& e) {
    // Grading goes on without it, and the records say so (selection_key): a later batch with the
    // tool grades these students again.
    b.sanitizer_note =
        fmt::format("sanitizer gate: NOT RUN, {} (--no-sanitize: grade without it on purpose)", e.what());
    if (b.o.quiet) fmt::print(stderr, "gpulab grade: {}\n", b.sanitizer_note);
    return;
  }
  b.sanitizer->tools = default_sanitizer_tools();
  b.sanitizer_note = fmt::format(
      "sanitizer gate: compute-sanitizer {} on the tasks that pass and whose kernels use shared memory or barriers "
      "(--sanitize: every tool and task; --no-sanitize: off)",
      fmt::join(b.sanitizer->tools, ", "));
}

// What the sandbox users must reach to grade anyone: the scratch folder (`probe`, made there as a
// student's folders are), the harness's headers, and the graded labs' manifests and libraries. Not
// the submissions: the grader copies each lab's files into the scratch folder itself.
std::vector<SandboxNeed> sandbox_needs(const Batch& b, const fs::path& probe) {
  std::vector<SandboxNeed> needs{{probe,
                                  R_OK | X_OK,
                                  "the scratch folder, where each submission is built and run,",
                                  "give --out a folder outside it (the scratch folder is OUT/.scratch)",
                                  {},
                                  b.scratch},
                                 {b.tc.repo / "common" / "include", R_OK | X_OK, "the harness's headers", "", {}, {}}};
  const std::string course = "build the course in a folder other users can read";
  for (const auto& m : b.labs) {
    needs.push_back({m.path, R_OK, "the lab's manifest", course, {}, {}});
    const auto& libraries = b.tc.config["labs"].value(m.name + "/" + b.backend, json::array());
    for (const auto& library : libraries)
      needs.push_back({library.get<std::string>(), R_OK, "the harness library", course, {}, {}});
  }
  return needs;
}

// Before any student: sandbox users that cannot reach what they need would fail every student for the
// grader's sake, so the batch refuses to start, naming the folder and the fix. Only a root grader has
// sandbox users; otherwise the sandbox runs as the grader's own user.
// `made` is the outermost folder on the way to the scratch folder that the grader made itself.
void check_sandbox_access(const Batch& b, const fs::path& made) {
  if (!b.isolation.own_user) return;
  const fs::path probe = b.scratch / "access-probe" / "labs";
  fs::create_directories(probe);
  auto needs = sandbox_needs(b, probe);
  needs.front().made_by_grader = made;
  const auto problem = first_unmet_need(needs, kProbeUser);
  fs::remove_all(b.scratch / "access-probe");
  if (problem) throw std::runtime_error(describe(*problem));
}

// OUT/calibration.json of an earlier --calibrate, when the same grader measured it.
void load_reference_calibration(Batch& b) {
  const fs::path file = b.out / "calibration.json";
  if (!fs::exists(file) || b.o.calibrate) return;
  b.calibration = json::parse(read_text(file), nullptr, false);
  if (b.calibration.is_discarded() || b.calibration.value("grader_version", "") != b.version) {
    fmt::print(stderr,
               "gpulab grade: {} was measured by another grader version and is ignored; --calibrate measures "
               "again\n",
               file.string());
    b.calibration = json();
  }
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
  req.limits = run_limits_for(b, m);
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
    const fs::path dir = b.scratch / "_calibration" / m.id;
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

// --calibrate: the reference solutions, graded like a student, give the ratios this machine reaches
// (OUT/calibration.json), which every student's feedback compares with.
void calibrate_reference_solutions(Batch& b) {
  StudentJob job{b.tc.repo / "solutions", "_reference-solution", ""};
  const fs::path dir = b.out / "students" / job.name;
  fs::remove(dir / "result.json");
  grade_in_slot(b, job, 0);
  const auto reference = json::parse(read_text(dir / "result.json")).get<StudentRecord>();
  json cal{{"grader_version", b.version}, {"measured_at", now_utc()}, {"labs", json::object()}};
  for (const auto& lab : reference.labs) {
    cal["device"] = lab.run.device;
    for (const auto& t : lab.run.tasks)
      cal["labs"][lab.run.id][t.task] =
          ReferenceResult{to_string(t.status), t.ratios, t.ratio ? t.metric : "", t.ratio};
  }
  write_text_atomically(cal.dump(2) + "\n", b.out / "calibration.json");
  fs::remove_all(dir);
  b.calibration = cal;
  b.budgets.clear();  // the budget line is the students'
  if (!b.o.quiet)
    fmt::print("  calibration: the reference solutions' ratios on this machine are in {}\n",
               (b.out / "calibration.json").string());
}

// A record that says why this student is not graded (the grader failed: disk full, ...; their Slurm
// task was cancelled), without a content hash, so the next run grades them again.
void write_not_graded(const Batch& b, const StudentJob& job, const std::string& why) {
  StudentRecord r;
  r.student = job.name;
  r.submission = job.entry.filename().string();
  r.grader_version = b.version;
  r.grader_error = true;
  r.max_score = max_score_of(b);
  r.error = printable(fmt::format("not graded: {}; it is graded again on the next run", why));
  write_text_atomically(json(r).dump(2) + "\n", b.out / "students" / job.name / "result.json");
}

// The jobs: each takes the next student until none is left; the batch goes on past the grader's
// failure for one student.
BatchSummary grade_students(Batch& b, const std::vector<StudentJob>& students) {
  BatchSummary summary;
  summary.submissions = static_cast<int>(students.size());
  std::atomic<std::size_t> next{0};
  std::mutex count_lock;
  auto worker = [&](int slot) {
    for (std::size_t i; (i = next++) < students.size();) {
      Outcome outcome;
      try {
        outcome = grade_in_slot(b, students[i], slot);
      } catch (const std::exception& e) {
        {
          std::lock_guard lock(b.print_lock);
          fmt::print(stderr, "  {}: not graded, the grader failed: {}\n", students[i].name, e.what());
        }
        try {
          write_not_graded(b, students[i], fmt::format("the grader failed ({})", e.what()));
        } catch (const std::exception&) {}
        std::lock_guard lock(count_lock);
        ++summary.failed;
        continue;
      }
      std::lock_guard lock(count_lock);
      if (outcome == Outcome::skipped)
        ++summary.skipped_unchanged;
      else
        ++summary.graded, summary.refused += outcome == Outcome::refused;
    }
  };
  std::vector<std::thread> workers;
  for (int s = 0; s < b.jobs; ++s) workers.emplace_back(worker, s);
  for (auto& w : workers) w.join();
  return summary;
}

// "budget per submission (mean of 4): compile 2.1 s, waiting for the GPU 0.0 s, run 3.4 s = ...": where
// a graded submission's time went, from each lab's PhaseTimes (the runners' own clocks split run_s).
std::string budget_line(const std::vector<PhaseTimes>& budgets) {
  PhaseTimes sum;
  for (const auto& p : budgets) sum += p;
  const double n = static_cast<double>(std::max<std::size_t>(1, budgets.size()));
  const double rest = sum.run_s - sum.correctness_s - sum.timing_s - sum.calibration_s;
  return fmt::format(
      "budget per submission (mean of {}): compile {:.1f} s, waiting for the GPU {:.1f} s, run {:.1f} s "
      "= correctness cases {:.1f} s + timing cases {:.1f} s (timed and warm-up launches {:.1f} s, inputs, "
      "references and full checks {:.1f} s) + calibration {:.1f} s + the rest {:.1f} s "
      "(runner start-up, device, kernel builds); of the cases, launches {:.1f} s and the checks after them {:.1f} s; "
      "the hidden pass alone {:.1f} s of the run{}",
      budgets.size(), sum.compile_s / n, sum.wait_for_gpu_s / n, sum.run_s / n, sum.correctness_s / n, sum.timing_s / n,
      sum.timed_launches_s / n, (sum.timing_s - sum.timed_launches_s) / n, sum.calibration_s / n, rest / n,
      sum.launches_s / n, sum.checks_s / n, sum.hidden_s / n,
      sum.sanitize_s > 0 ? fmt::format("; sanitizer {:.1f} s", sum.sanitize_s / n) : "");
}

// batch.json's record of the batch's own calibrations and of where the graded students' time went.
void add_calibrations_and_budget(json& batch, const Batch& b) {
  batch["device_calibrations"] = json::array();
  for (const auto& [where, c] : b.device_calibrations)
    batch["device_calibrations"].push_back(
        {{"gpu_slot", where.first}, {"lab", where.second}, {"calibration", calibration_to_json(c)}});
  PhaseTimes total;
  for (const auto& p : b.budgets) total += p;
  batch["phases_total"] = total;
  batch["phases_students"] = b.budgets.size();
}

// Each student's lateness under the batch's due dates: the CSV's submission time, else the newest
// file time of the submission as received. Warns when a penalty rests on file times, and when the CSV names a student with no submission.
std::map<std::string, Lateness> lateness_of_students(const Batch& b, const std::vector<StudentJob>& students) {
  std::map<std::string, Lateness> out;
  std::vector<std::string> dated_by_files;
  for (const auto& job : students)
    if (const auto l = lateness_of(*b.deadlines, job.name, submission_time(job.entry))) {
      out[job.name] = *l;
      if (l->late_days > 0 && !l->submitted_from.empty()) dated_by_files.push_back(job.name);
    }
  if (!dated_by_files.empty())
    fmt::print(stderr,
               "warning: grades.csv: the late penalty of {} student{} ({}{}) rests on the time of their files, which "
               "copying, unpacking or cloning resets: give their times in the submitted column of {}\n",
               dated_by_files.size(), dated_by_files.size() == 1 ? "" : "s",
               fmt::join(dated_by_files.begin(),
                         dated_by_files.begin() + std::min<std::size_t>(5, dated_by_files.size()), ", "),
               dated_by_files.size() > 5 ? ", ..." : "", b.o.deadlines.string());
  for (const auto& [name, policy] : b.deadlines->students)
    if (std::none_of(students.begin(), students.end(), [&](const StudentJob& j) { return j.name == name; }))
      fmt::print(stderr, "warning: {}: no submission is named {}: is its row (an extension?) misspelt?\n",
                 b.o.deadlines.string(), name);
  return out;
}

// OUT/grades.csv from every student's record, each student's outputs rendered again with this batch's
// options (a student skipped as unchanged was rendered by an earlier run), and OUT/batch.json.
void write_batch_files(const Batch& b, const std::vector<StudentJob>& students, const BatchSummary& summary,
                       const std::string& started_at, const json& slurm = nullptr) {
  std::vector<StudentRecord> records;
  for (const auto& job : students) {
    const fs::path path = b.out / "students" / job.name / "result.json";
    if (!fs::exists(path)) continue;
    const json record = json::parse(read_text(path), nullptr, false);
    if (record.is_discarded()) continue;
    records.push_back(record.get<StudentRecord>());
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(path.parent_path() / "attempts", ec))
      records.back().attempts += e.path().extension() == ".json";
    // Not graded (the grader failed): nothing to upload or hand out until a later run grades it.
    if (!records.back().grader_error)
      write_student_outputs(records.back(), path.parent_path(), gradescope_options(b.o));
  }
  std::optional<std::map<std::string, Lateness>> lateness;
  if (b.deadlines) lateness = lateness_of_students(b, students);
  write_text_atomically(gradebook_csv(records, b.labs, lateness ? &*lateness : nullptr), b.out / "grades.csv");
  std::vector<std::string> ids;
  for (const auto& m : b.labs) ids.push_back(m.id);
  const double hours = summary.wall_s / 3600;
  json batch{{"grader_version", b.version},
             {"started", started_at},
             {"finished", now_utc()},
             {"backend", b.backend},
             {"isolation", b.isolation.describe(b.run_limits)},
             {"jobs", b.jobs},
             {"submissions", summary.submissions},
             {"graded", summary.graded},
             {"refused", summary.refused},
             {"skipped_unchanged", summary.skipped_unchanged},
             {"grader_failures", summary.failed},
             {"wall_s", summary.wall_s},
             {"labs", ids},
             {"leaderboard", b.o.leaderboard},
             {"throughput_per_hour", summary.graded > 0 && hours > 0 ? summary.graded / hours : 0.0}};
  if (!b.gpus.empty()) batch["gpus"] = b.gpus;
  if (!slurm.is_null()) batch["slurm"] = slurm;
  add_calibrations_and_budget(batch, b);
  if (!b.budgets.empty()) fmt::print("{}\n", budget_line(b.budgets));
  write_text_atomically(batch.dump(2) + "\n", b.out / "batch.json");
}

// OUT/slurm/tasks/<task>.json: where a Slurm array task runs and which students it has; once it has
// ended, what became of them and where their time went (for the finishing job's budget line). A
// task that stays "running" after its job has gone was cancelled or failed (gpulab grade --slurm --status).
void write_task_status(const Batch& b, const std::vector<StudentJob>& students, const std::string& started_at,
                       const BatchSummary* done) {
  std::vector<std::string> names;
  for (const auto& job : students) names.push_back(job.name);
  json status{{"task", b.o.chunk->task_id}, {"node", host_name()}, {"state", done ? "done" : "running"},
              {"started", started_at},      {"students", names},   {"grader_version", b.version}};
  if (!b.gpus.empty()) status["gpus"] = b.gpus;
  if (done)
    status.update({{"finished", now_utc()},
                   {"graded", done->graded},
                   {"refused", done->refused},
                   {"skipped_unchanged", done->skipped_unchanged},
                   {"grader_failures", done->failed},
                   {"wall_s", done->wall_s},
                   {"phases", b.budgets}});
  write_text_atomically(status.dump(2) + "\n", b.out / "slurm" / "tasks" / (b.o.chunk->task_id + ".json"));
}

// Where this run keeps its half-done work: a batch on one machine holds OUT alone and clears all of
// OUT/.scratch (what is there was left by a killed batch); a Slurm task clears only its own folder.
void set_scratch(Batch& b) {
  if (b.o.chunk) {
    b.scratch = b.out / ".scratch" / ("slurm-" + b.o.chunk->task_id);
    fs::remove_all(b.scratch);
  } else {
    fs::remove_all(b.out / ".scratch");
    b.scratch = b.out / ".scratch" / "local";
  }
  fs::create_directories(b.scratch);
}

// Students of the submission that no task graded and that have no record at all (their task was
// cancelled, failed or ran out of time) get a "not graded" record, so the gradebook names them; the
// next `gpulab grade --slurm` grades them (a not-graded record is never current).
void mark_students_left_ungraded(const Batch& b, const json& submission, const std::vector<StudentJob>& students) {
  std::istringstream list(read_text(b.o.finish / "students.txt"));
  const int chunk = std::max(1, submission.value("array_chunk", 1));
  int line = 0;
  for (std::string name; std::getline(list, name); ++line) {
    const auto job =
        std::find_if(students.begin(), students.end(), [&](const StudentJob& j) { return j.name == name; });
    if (name.empty() || job == students.end() || fs::exists(b.out / "students" / name / "result.json")) continue;
    write_not_graded(b, *job,
                     fmt::format("its Slurm task {}_{} ended before grading it (cancelled, failed or out of time)",
                                 submission.value("array_job", ""), line / chunk));
  }
}

// The job that finishes a Slurm submission once every array task has ended (however it ended): the
// batch's files from every student's record, the tasks' budgets, their scratch folders removed. A
// student without a current record (a cancelled task's) counts as not graded.
BatchSummary finish_slurm_submission(Batch& b) {
  const json submission = json::parse(read_text_or_throw(b.o.finish / "submission.json"));
  const std::string tasks_of = submission.value("array_job", "") + "_";
  const auto students = list_submissions(b.submissions);
  mark_students_left_ungraded(b, submission, students);
  BatchSummary summary;
  summary.submissions = static_cast<int>(students.size());
  for (const auto& job : students) {
    const json r = json::parse(read_text(b.out / "students" / job.name / "result.json"), nullptr, false);
    const bool graded = r.is_object() && !r.value("grader_error", false);
    summary.graded += graded;
    summary.failed += !graded;
    summary.refused += graded && !r.value("error", "").empty();
  }
  json tasks = json::object();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(b.out / "slurm" / "tasks", ec)) {
    if (e.path().filename().string().rfind(tasks_of, 0) != 0) continue;
    const json t = json::parse(read_text(e.path()), nullptr, false);
    if (!t.is_object()) continue;
    tasks[t.value("task", "")] = t.value("state", "");
    for (const auto& p : t.value("phases", json::array())) b.budgets.push_back(p.get<PhaseTimes>());
  }
  for (const auto& e : fs::directory_iterator(b.out / ".scratch", ec))
    if (e.path().filename().string().rfind("slurm-" + tasks_of, 0) == 0) fs::remove_all(e.path(), ec);
  summary.wall_s = std::max(0.0, static_cast<double>(std::time(nullptr)) - submission.value("submitted_epoch", 0.0));
  json slurm = submission;
  slurm["tasks"] = tasks;
  write_batch_files(b, students, summary, submission.value("submitted_at", now_utc()), slurm);
  return summary;
}

}  // namespace

GradescopeOptions gradescope_options(const GradeOptions& o) { return {o.leaderboard, o.hidden_visibility}; }

BatchSummary grade_batch(const Toolchain& tc, const std::vector<Manifest>& labs, const std::string& backend,
                         const GradeOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  const std::string started_at = now_utc();
  Batch b(tc, labs, backend, o);
  b.out = fs::absolute(o.out).lexically_normal();
  b.submissions = fs::absolute(o.submissions).lexically_normal();
  fs::path made = b.out;  // the outermost folder of OUT's that the grader makes: its mode is the grader's umask's
  while (!fs::exists(made.parent_path())) made = made.parent_path();
  if (fs::exists(b.out)) made = b.out / ".scratch";
  fs::create_directories(b.out / "students");
  const FileLock lock = batch_lock(b.out, o.chunk || !o.finish.empty());
  b.version = grader_version(tc, labs, backend);
  require_gradescope_visibility(o.hidden_visibility);
  if (!o.deadlines.empty()) b.deadlines = read_deadlines(o.deadlines);
  if (!o.finish.empty()) {
    set_jobs_and_limits(b);
    set_visibility(b);
    return finish_slurm_submission(b);
  }
  const auto students = o.chunk ? chunk_of_submissions(*o.chunk, b.submissions) : list_submissions(b.submissions);
  set_scratch(b);
  set_visibility(b);
  check_sandbox_access(b, made);  // before the devices are opened: a refusal comes at once
  choose_gpus(b);
  set_jobs_and_limits(b);
  set_sanitizer(b);
  load_reference_calibration(b);
  if (o.chunk) write_task_status(b, students, started_at, nullptr);
  if (!o.quiet) {
    fmt::print("gpulab grade: {} submissions from {} into {} ({}, {} job{}, grader {}{})\nisolation: {}\n{}\n",
               students.size(), b.submissions.string(), b.out.string(), backend, b.jobs, b.jobs > 1 ? "s" : "",
               b.version, o.chunk ? fmt::format(", Slurm task {} on {}", o.chunk->task_id, host_name()) : "",
               b.isolation.describe(b.run_limits), b.sanitizer_note);
    std::fflush(stdout);
  }
  calibrate_batch(b);
  if (!o.quiet && !b.device_calibrations.empty())
    fmt::print("  device calibrations: measured once for the batch, by the skeletons' runners, for {} lab{}\n",
               b.device_calibrations.size(), b.device_calibrations.size() > 1 ? "s" : "");
  if (o.calibrate) calibrate_reference_solutions(b);
  BatchSummary summary = grade_students(b, students);
  summary.wall_s = seconds_since(started);
  if (o.chunk)
    write_task_status(b, students, started_at, &summary);
  else
    write_batch_files(b, students, summary, started_at);
  fs::remove_all(o.chunk ? b.scratch : b.out / ".scratch");
  return summary;
}

}  // namespace gpulab::cli
