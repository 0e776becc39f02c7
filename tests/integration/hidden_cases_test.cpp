// Hidden cases run only in instructor grading: the lab runner that `gpulab check` links runs them
// when started with --hidden-cases, and `gpulab check` itself never asks for them.
#include <doctest/doctest.h>

#include <sstream>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/results.hpp"

using namespace gpulab::testing;

namespace {

struct RunnerEvents {
  std::vector<gpulab::CaseResult> cases;
  gpulab::TaskResult task;
};

RunnerEvents run_runner(const fs::path& runner, const std::string& extra_args, const std::string& name) {
  const fs::path progress = fs::path(GPULAB_SCRATCH) / ("hidden-cases-" + name + ".jsonl");
  fs::remove(progress);
  std::string output;
  const int exit_code = run_command("'" + runner.string() + "' --manifest '" + repo_path("labs/00-hello/lab.toml").string() +
                                        "' --student-dir '" + repo_path("solutions/00-hello").string() +
                                        "' --backend opencl --seed 12345 --progress '" + progress.string() + "' " +
                                        extra_args,
                                    output);
  INFO(output);
  REQUIRE(exit_code == 0);
  RunnerEvents events;
  std::istringstream lines(read_file(progress));
  for (std::string line; std::getline(lines, line);) {
    const auto e = nlohmann::json::parse(line);
    if (e.at("event") == "case_end") events.cases.push_back(e.at("result").get<gpulab::CaseResult>());
    if (e.at("event") == "task_end") events.task = e.at("result").get<gpulab::TaskResult>();
  }
  return events;
}

}  // namespace

TEST_CASE("the lab runner runs hidden cases only with --hidden-cases, marks them hidden, and gpulab check runs none") {
  const gpulab::Manifest manifest = gpulab::load_manifest(repo_path("labs/00-hello/lab.toml"));
  std::vector<std::string> all, visible;
  for (const auto& c : manifest.cases) {
    all.push_back(c.name);
    if (!c.hidden) visible.push_back(c.name);
  }
  REQUIRE(all.size() > visible.size());

  // `gpulab check` builds the runner (and runs only the visible cases).
  const auto check = run_check(repo_path("solutions"), "--backend opencl --lab hello --seed 12345");
  INFO(check.output);
  REQUIRE(check.exit_code == 0);
  CHECK(check.task("hello", "hello").at("cases_total") == visible.size());
  const fs::path runner = fs::path(GPULAB_CLI).parent_path() / "students/solutions/00-hello/opencl/runner";
  REQUIRE_MESSAGE(fs::exists(runner), "gpulab check no longer leaves its runner at " << runner);

  auto names_of = [](const RunnerEvents& e) {
    std::vector<std::string> names;
    for (const auto& c : e.cases) names.push_back(c.name);
    return names;
  };
  const RunnerEvents students = run_runner(runner, "", "without-flag");
  CHECK(names_of(students) == visible);
  CHECK(students.task.cases_total == static_cast<int>(visible.size()));
  for (const auto& c : students.cases) CHECK_FALSE(c.hidden);

  const RunnerEvents grading = run_runner(runner, "--hidden-cases", "with-flag");
  CHECK(names_of(grading) == all);
  CHECK(grading.task.status == gpulab::Status::passed);
  CHECK(grading.task.cases_passed == static_cast<int>(all.size()));
  for (std::size_t i = 0; i < grading.cases.size(); ++i) {
    CAPTURE(grading.cases[i].name);
    CHECK(grading.cases[i].passed);
    CHECK(grading.cases[i].hidden == manifest.cases[i].hidden);
  }
}
