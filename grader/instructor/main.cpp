// gpulab-instructor: the instructor's commands (grade, audit, similarity, release), apart from the
// student's `gpulab` (grader/cli/main.cpp), which hands these commands on to this one.
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "audit.hpp"
#include "batch.hpp"
#include "commands.hpp"
#include "files.hpp"
#include "gpulab/device.hpp"
#include "gpulab/random.hpp"
#include "gpulab/text.hpp"
#include "grade.hpp"
#include "release.hpp"
#include "similarity.hpp"
#if GPULAB_HAVE_SERVER
#include "server.hpp"
#endif
#include "slurm.hpp"

namespace fs = std::filesystem;
using namespace gpulab;
using namespace gpulab::cli;

namespace {

// The lab, device and run options the instructor's commands share (`gpulab check` has its own).
struct LabOptions {
  std::vector<std::string> labs;
  std::string backend, device;
  std::uint64_t seed = 0;
  double timeout = 0;
  bool sanitize = false;
};

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

int grade(const LabOptions& c, GradeOptions g, const SlurmOptions& slurm) {
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
int audit(const LabOptions& c, bool correctness_only, int jobs) {
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

void add_grade_command(CLI::App& app, LabOptions& o, GradeCommand& c) {
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

void add_audit_command(CLI::App& app, LabOptions& o, AuditCommand& a) {
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

void add_similarity_command(CLI::App& app, LabOptions& o, SimilarityCommand& c) {
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
int similarity(const LabOptions& o, SimilarityCommand& c) {
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

// gpulab serve and gpulab roster (grader/server/server.hpp).
struct ServerCommands {
  CLI::App* serve = nullptr;
  CLI::App* roster = nullptr;
  std::string dir, listen = "127.0.0.1:8080", roster_csv, database;
  std::vector<std::string> reissue;
  int workers = 1, max_pending = 3;
  bool slurm = false;
  double max_upload_mib = 1;
  std::vector<std::string> grade_args;
};

void add_server_commands(CLI::App& app, LabOptions& o, ServerCommands& c) {
  c.serve = app.add_subcommand("serve",
                               "the course server: students submit with `gpulab submit` and get the official "
                               "grade from this machine's devices (gpulab roster makes their tokens)");
  c.serve->add_option("--dir", c.dir, "the server's folder: its SQLite store, the submitted files, the gradings")
      ->required();
  c.serve->add_option("--database", c.database,
                      "a PostgreSQL database (postgresql://USER@HOST/DB) instead of DIR/gpulab.sqlite: for servers "
                      "on several machines sharing one queue");
  c.serve->add_option("--listen", c.listen, "HOST:PORT to listen on (PORT 0: any free port, printed)")
      ->capture_default_str();
  c.serve->add_option("--backend", o.backend, "cuda or opencl (default: gpulab grade's)");
  c.serve->add_option("--device", o.device, "device index or part of its name");
  c.serve->add_option("--workers", c.workers, "submissions graded at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  c.serve->add_option("--max-pending", c.max_pending, "a student's submissions of one lab waiting or being graded")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  c.serve->add_option("--max-upload", c.max_upload_mib, "MiB of files one submission may hold")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1024.0));
  c.serve->add_option("--grade-arg", c.grade_args,
                      "one more option for gpulab grade (repeatable), e.g. --grade-arg=--time-limit=300");
  c.serve->add_flag("--slurm", c.slurm,
                    "grade each submission as a Slurm job (gpulab grade --slurm; --grade-arg=--partition=gpu and "
                    "the like set its options); --workers is then how many jobs are queued at once");
  c.roster =
      app.add_subcommand("roster", "import the class roster into a server's folder and make each new student's token");
  c.roster->add_option("--dir", c.dir, "the server's folder (gpulab serve --dir)")->required();
  c.roster->add_option("--import", c.roster_csv, "CSV with the header id,name,email");
  c.roster->add_option("--database", c.database, "the server's PostgreSQL database (gpulab serve --database)");
  c.roster->add_option("--reissue", c.reissue,
                       "a new token for this student, whose old one stops working (repeatable)");
}

int run_server_command(const LabOptions& o, const ServerCommands& c, bool serve) {
#if GPULAB_HAVE_SERVER
  if (!serve && c.roster_csv.empty() && c.reissue.empty())
    throw std::invalid_argument("gpulab roster: give --import FILE (the class) or --reissue ID (a lost token)");
  if (!serve) return server::import_roster(c.dir, c.roster_csv, c.reissue, c.database);
  server::ServeOptions s;
  s.dir = fs::absolute(c.dir);
  const auto colon = c.listen.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("--listen takes HOST:PORT, e.g. 0.0.0.0:8080");
  s.host = c.listen.substr(0, colon);
  s.port = std::stoi(c.listen.substr(colon + 1));
  s.backend = o.backend;
  s.device = o.device;
  s.workers = c.workers;
  s.max_pending = c.max_pending;
  s.max_upload_bytes = static_cast<std::size_t>(c.max_upload_mib * (1 << 20));
  s.grade_args = c.grade_args;
  s.slurm = c.slurm;
  s.database = c.database;
  return server::serve(s);
#else
  (void)o, (void)c, (void)serve;
  fmt::print(
      stderr,
      "gpulab: this build has no course server: install libcpp-httplib-dev and libsqlitecpp-dev "
      "(scripts/install-deps.sh check), then configure the build again (rm build/CMakeCache.txt; make instructor)\n");
  return 2;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpulab-instructor: grade submissions, audit the grader, compare students, release the course"};
  app.require_subcommand(1);
  LabOptions o;
  GradeCommand grade_command;
  add_grade_command(app, o, grade_command);
  AuditCommand audit_command;
  add_audit_command(app, o, audit_command);
  SimilarityCommand similarity_command;
  add_similarity_command(app, o, similarity_command);

  std::string release_out;
  auto* release_cmd =
      app.add_subcommand("release", "write the repository students clone: no solutions, no hidden cases");
  release_cmd->add_option("--out", release_out, "an empty or new folder")->required();
  std::vector<std::string> release_cuda_archs;
  release_cmd->add_option("--cuda-arch", release_cuda_archs,
                          "compile the harness's CUDA kernels for this architecture (sm_90; repeat it); default: "
                          "sm_75 to sm_120");
  ServerCommands server_commands;
  add_server_commands(app, o, server_commands);
  CLI11_PARSE(app, argc, argv);

  try {
    if (server_commands.serve->parsed() || server_commands.roster->parsed())
      return run_server_command(o, server_commands, server_commands.serve->parsed());
    if (app.got_subcommand("release")) return release(release_out, release_cuda_archs);
    if (app.got_subcommand("audit")) return audit(o, audit_command.correctness_only, audit_command.jobs);
    if (app.got_subcommand("similarity")) return similarity(o, similarity_command);
    grade_command.options.submissions = grade_command.submissions;
    grade_command.options.out = grade_command.out;
    grade_command.options.sanitize = grade_command.sanitize_all  ? SanitizeMode::all
                                     : grade_command.no_sanitize ? SanitizeMode::off
                                                                 : SanitizeMode::automatic;
    return grade(o, grade_command.options, grade_command.slurm);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: {}\n", e.what());
    return 2;
  }
}
