// Secrets stay out of student code's reach: the lab runner takes its seed, and whether it runs the
// hidden cases (instructor grading only, in a process of their own), on standard input, never in its
// argv or environment; `gpulab check` never asks for hidden cases.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/results.hpp"

using namespace gpulab::testing;

namespace {

// The lab these tests run: the first with hidden cases and a single task, so that the runner's events
// are one task's.
const gpulab::Manifest& one_task_lab() {
  static const gpulab::Manifest lab = [] {
    for (auto& manifest : gpulab::load_all_manifests(repo_path("labs")))
      if (manifest.tasks.size() == 1 && manifest.has_hidden_cases()) return manifest;
    throw std::runtime_error("no lab has a single task and hidden cases");
  }();
  return lab;
}

struct RunnerEvents {
  std::vector<gpulab::CaseResult> cases;
  gpulab::TaskResult task;
};

// Runs the runner with `secrets` (a JSON line, or nothing) on its standard input.
RunnerEvents run_runner(const fs::path& runner, const std::string& secrets, const std::string& name,
                        int expected_exit = 0) {
  const fs::path progress = fs::path(GPULAB_SCRATCH) / ("hidden-cases-" + name + ".jsonl");
  fs::remove(progress);
  std::string output;
  const fs::path solution = repo_path("solutions") / one_task_lab().id;
  const int exit_code = run_command("printf '%s\\n' '" + secrets + "' | '" + runner.string() + "' --manifest '" +
                                        one_task_lab().path.string() + "' --student-dir '" + solution.string() +
                                        "' --backend opencl --progress '" + progress.string() + "'",
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

TEST_CASE(
    "the lab runner runs the hidden cases only when its standard input asks, alone and marked hidden, and gpulab check "
    "runs none") {
  // With the random cases the seed draws: visible ones in every run, hidden ones only when grading.
  const auto& lab = one_task_lab();
  const gpulab::Manifest manifest = gpulab::with_random_cases(lab, 12345, true);
  std::vector<std::string> hidden, visible;
  for (const auto& c : manifest.cases) (c.hidden ? hidden : visible).push_back(c.name);
  REQUIRE_FALSE(hidden.empty());

  // `gpulab check` builds the runner (and runs only the visible cases).
  const auto check = run_check(repo_path("solutions"), "--backend opencl --lab " + lab.name + " --seed 12345");
  INFO(check.output);
  REQUIRE(check.exit_code == 0);
  CHECK(check.task(lab.name, lab.tasks.front().name).at("cases_total") == visible.size());
  const fs::path runner = fs::path(GPULAB_CLI).parent_path() / "students/solutions" / lab.id / "opencl/runner";
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
  CHECK(grading.task.cases_complete);  // measured; the verdict is the parent's
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
  const auto& lab = one_task_lab();
  SourceTree tree("secrets-spy");
  tree.append(lab.id + "/" + lab.files_with_extension("opencl", ".cpp").front(), R"(#include <cstdio>
__attribute__((constructor)) static void gpulab_test_spy(int argc, char** argv, char** envp) {
  std::printf("spy: argc=%d\n", argc);
  for (int i = 0; i < argc; ++i) std::printf("spy argv: %s\n", argv[i]);
  for (char** e = envp; e && *e; ++e) std::printf("spy env: %s\n", *e);
})");
  const auto run = run_check(tree.root(), "--backend opencl --lab " + lab.name + " --seed 987654321987");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::string printed = run.report.at("labs").at(0).value("output", "");
  REQUIRE(printed.find("spy argv: ") != std::string::npos);  // the spy ran
  CHECK(printed.find("987654321987") == std::string::npos);
  for (const auto& c : lab.cases) {
    CAPTURE(c.name);
    CHECK(printed.find(c.name) == std::string::npos);
  }
}
