// Secrets stay out of student code's reach: the lab runner takes its seed, and whether it runs the
// hidden cases (instructor grading only, in a process of their own), on standard input, never in its
// argv or environment; `gpulab check` never asks for hidden cases.
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

// Runs the runner with `secrets` (a JSON line, or nothing) on its standard input.
RunnerEvents run_runner(const fs::path& runner, const std::string& secrets, const std::string& name, int expected_exit = 0) {
  const fs::path progress = fs::path(GPULAB_SCRATCH) / ("hidden-cases-" + name + ".jsonl");
  fs::remove(progress);
  std::string output;
  const int exit_code = run_command("printf '%s\\n' '" + secrets + "' | '" + runner.string() + "' --manifest '" +
                                        repo_path("labs/00-hello/lab.toml").string() + "' --student-dir '" +
                                        repo_path("solutions/00-hello").string() + "' --backend opencl --progress '" +
                                        progress.string() + "'",
                                    output);
  INFO(output);
  REQUIRE(exit_code == expected_exit);
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

TEST_CASE("the lab runner runs the hidden cases only when its standard input asks, alone and marked hidden, and gpulab check runs none") {
  const gpulab::Manifest manifest = gpulab::load_manifest(repo_path("labs/00-hello/lab.toml"));
  std::vector<std::string> hidden, visible;
  for (const auto& c : manifest.cases) (c.hidden ? hidden : visible).push_back(c.name);
  REQUIRE_FALSE(hidden.empty());

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
  const RunnerEvents students = run_runner(runner, R"({"seed": 12345, "cases": "visible"})", "visible");
  CHECK(names_of(students) == visible);
  CHECK(students.task.cases_total == static_cast<int>(visible.size()));
  for (const auto& c : students.cases) CHECK_FALSE(c.hidden);

  const RunnerEvents grading = run_runner(runner, R"({"seed": 12345, "cases": "hidden"})", "hidden");
  CHECK(names_of(grading) == hidden);
  CHECK(grading.task.status == gpulab::Status::passed);
  CHECK(grading.task.cases_passed == static_cast<int>(hidden.size()));
  for (const auto& c : grading.cases) {
    CAPTURE(c.name);
    CHECK(c.passed);
    CHECK(c.hidden);
  }

  // Without its secrets it runs nothing and says how it is started.
  run_runner(runner, "", "no-secrets", 2);
  const auto events = read_file(fs::path(GPULAB_SCRATCH) / "hidden-cases-no-secrets.jsonl");
  CHECK(events.find("reads its seed from standard input") != std::string::npos);
}

TEST_CASE("student code sees neither the seed nor the case names in its arguments or environment") {
  // A static constructor gets argc, argv and envp from the C library without naming any symbol: the
  // spy prints them all, and the run's output must hold neither the seed nor a case name.
  SourceTree tree("secrets-spy");
  tree.append("00-hello/hello_opencl.cpp", R"(#include <cstdio>
__attribute__((constructor)) static void gpulab_test_spy(int argc, char** argv, char** envp) {
  std::printf("spy: argc=%d\n", argc);
  for (int i = 0; i < argc; ++i) std::printf("spy argv: %s\n", argv[i]);
  for (char** e = envp; e && *e; ++e) std::printf("spy env: %s\n", *e);
})");
  const auto run = run_check(tree.root(), "--backend opencl --lab hello --seed 987654321987");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::string printed = run.report.at("labs").at(0).value("output", "");
  REQUIRE(printed.find("spy argv: ") != std::string::npos);  // the spy ran
  CHECK(printed.find("987654321987") == std::string::npos);
  const gpulab::Manifest manifest = gpulab::load_manifest(repo_path("labs/00-hello/lab.toml"));
  for (const auto& c : manifest.cases) {
    CAPTURE(c.name);
    CHECK(printed.find(c.name) == std::string::npos);
  }
}
