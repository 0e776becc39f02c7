// The parts of `gpulab grade --slurm` that need no cluster: the jobs' scripts and arguments, which
// students a submission sends, and which share of them an array task takes.
#include <doctest/doctest.h>

#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "slurm.hpp"

using namespace gpulab::cli;
using gpulab::testing::write_file;
namespace fs = std::filesystem;

TEST_CASE("a Slurm job's script carries each option as an #SBATCH line and runs the grader with its arguments quoted") {
  SbatchScript s{"gpulab-grade",
                 "/out/slurm/1/logs/task-%A_%a.log",
                 "0-3%2",
                 {"--partition=gpu", "--gres=gpu:1"},
                 {"/course/build/gpulab", "grade", "--submissions", "/course/sub missions"}};
  const std::string text = sbatch_script_text(s);
  CHECK(text.starts_with("#!/bin/sh\n#SBATCH --job-name=gpulab-grade\n"));
  CHECK(text.find("#SBATCH --array=0-3%2\n") != std::string::npos);
  CHECK(text.find("#SBATCH --output=/out/slurm/1/logs/task-%A_%a.log\n") != std::string::npos);
  CHECK(text.find("#SBATCH --partition=gpu\n#SBATCH --gres=gpu:1\n") != std::string::npos);
  CHECK(text.find("exec '/course/build/gpulab' 'grade' '--submissions' '/course/sub missions'\n") != std::string::npos);
  s.directives.push_back("--comment=two words");
  CHECK_THROWS_WITH_AS(sbatch_script_text(s), doctest::Contains("whitespace"), std::invalid_argument);
}

TEST_CASE("a CUDA submission asks each task for a GPU unless told otherwise, and an OpenCL one only when told") {
  SlurmOptions s;
  CHECK(sbatch_directives(s, "cuda") == std::vector<std::string>{"--gres=gpu:1"});
  CHECK(sbatch_directives(s, "opencl").empty());
  s.partition = "a100";
  s.gres = "gpu:a100:1";
  s.time = "1:00:00";
  s.sbatch_args = {"--account=course"};
  CHECK(sbatch_directives(s, "opencl") ==
        std::vector<std::string>{"--partition=a100", "--gres=gpu:a100:1", "--time=1:00:00", "--account=course"});
  s.gres = "none";
  CHECK(sbatch_directives(s, "cuda") ==
        std::vector<std::string>{"--partition=a100", "--time=1:00:00", "--account=course"});
}

TEST_CASE("the jobs' command lines repeat every option of the submitting command that changes a grade") {
  GradeOptions o;
  o.submissions = "subs";
  o.out = "/results";
  o.backend = "cuda";
  o.labs = {"hello", "transpose"};
  o.seed = 42;
  o.sanitize = SanitizeMode::all;
  o.memory_gib = 4;
  const auto a = grade_arguments(o);
  const auto has = [&](const std::string& option, const std::string& value) {
    for (std::size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == option && a[i + 1] == value) return true;
    return false;
  };
  CHECK(has("--submissions", (fs::current_path() / "subs").string()));
  CHECK(has("--out", "/results"));
  CHECK(has("--backend", "cuda"));
  CHECK(has("--lab", "hello"));
  CHECK(has("--lab", "transpose"));
  CHECK(has("--seed", "42"));
  CHECK(has("--memory", "4"));
  CHECK(std::find(a.begin(), a.end(), "--sanitize") != a.end());
  CHECK(std::find(a.begin(), a.end(), "--no-sanitize") == a.end());
  CHECK(std::find(a.begin(), a.end(), "--force") == a.end());
  // The gate's default is no option at all; turning it off is one the jobs must repeat.
  o.sanitize = SanitizeMode::automatic;
  auto b = grade_arguments(o);
  CHECK(std::find(b.begin(), b.end(), "--sanitize") == b.end());
  CHECK(std::find(b.begin(), b.end(), "--no-sanitize") == b.end());
  o.sanitize = SanitizeMode::off;
  b = grade_arguments(o);
  CHECK(std::find(b.begin(), b.end(), "--no-sanitize") != b.end());
}

TEST_CASE("a submission sends the students whose record is missing, failed, stale or older than their files") {
  const fs::path out = fs::path(GPULAB_SCRATCH) / "slurm-unit" / "out", subs = out.parent_path() / "subs";
  fs::remove_all(out.parent_path());
  std::vector<std::pair<std::string, fs::path>> entries;
  for (const char* s : {"current", "failed", "old_grader", "edited", "new"}) {
    write_file(subs / s / "labs" / "00-hello" / "hello.cl", "kernel");
    entries.emplace_back(s, subs / s);
  }
  const std::string options = "opencl:00-hello|device |timeout 0";
  const auto record = [&](const std::string& name, const std::string& version, bool failed) {
    nlohmann::json r{{"grader_version", version},
                     {"selection", options + "|isolation bubblewrap "},
                     {"calibration", ""},
                     {"submission_stamp", submission_stamp(subs / name)}};
    if (failed) r["grader_error"] = true;
    write_file(out / "students" / name / "result.json", r.dump());
  };
  record("current", "v1", false);
  record("failed", "v1", true);
  record("old_grader", "v0", false);
  record("edited", "v1", false);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write_file(subs / "edited" / "labs" / "00-hello" / "hello.cl", "kernel, edited");
  CHECK(students_to_grade(out, entries, "v1", options, "", false) ==
        std::vector<std::string>{"failed", "old_grader", "edited", "new"});
  CHECK(students_to_grade(out, entries, "v1", options + ",01-matmul", "", false).size() == 5);       // other labs
  CHECK(students_to_grade(out, entries, "v1", options, "2026-11-24T10:00:00Z", false).size() == 5);  // recalibrated
  CHECK(students_to_grade(out, entries, "v1", options, "", true).size() == 5);
}

TEST_CASE("an array task takes its share of the list from Slurm's environment, and refuses to run outside Slurm") {
  ::setenv("SLURM_ARRAY_JOB_ID", "812", 1);
  ::setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  const SlurmChunk c = chunk_from_environment("/out/slurm/1/students.txt", 10);
  CHECK(c.index == 3);
  CHECK(c.size == 10);
  CHECK(c.task_id == "812_3");
  ::unsetenv("SLURM_ARRAY_JOB_ID");
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::setenv("SLURM_JOB_ID", "811", 1);  // the calibration job: no array
  CHECK(chunk_from_environment("/out/slurm/1/nobody.txt", 1).task_id == "811");
  ::unsetenv("SLURM_JOB_ID");
  CHECK_THROWS_WITH_AS(chunk_from_environment("/x", 1), doctest::Contains("gpulab grade --slurm"),
                       std::invalid_argument);
}
