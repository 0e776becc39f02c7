// End-to-end behaviour of `gpulab check` on the OpenCL backend (PoCL in CI): what a student and
// an instructor see for correct, unfinished and broken code.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"

using namespace gpulab::testing;

namespace {
std::vector<gpulab::Manifest> all_labs() { return gpulab::load_all_manifests(repo_path("labs")); }
}  // namespace

TEST_CASE("every reference solution passes every task on OpenCL") {
  const auto run = run_check(repo_path("solutions"), "--backend opencl");
  INFO(run.output);
  REQUIRE(run.report.is_object());
  bool all_fast_enough = true;
  for (const auto& lab : run.report.at("labs"))
    for (const auto& task : lab.at("tasks")) {
      CAPTURE(task.at("task"));
      CHECK(ran_correctly(task));
      CHECK(!task.contains("finding"));  // no buffer violation, nothing faster than the device
      all_fast_enough &= task.at("status") == "passed";
    }
  if (all_fast_enough) {  // the usual case; a loaded machine may leave a CPU speed bound short
    CHECK(run.exit_code == 0);
    CHECK(run.report.at("passed") == true);
    CHECK(run.report.at("points").get<double>() > run.report.at("max_points").get<double>());  // with the bonus
    CHECK(run.output.find("PASSED") != std::string::npos);
  }
  // Every task with a CPU bound was timed and measured by its metric (copy bandwidth, naive kernel).
  int measured = 0;
  for (const auto& lab : all_labs())
    for (const auto& task : lab.tasks) {
      if (!task.threshold || !task.threshold->bounds.contains("cpu")) continue;
      CAPTURE(task.name);
      const auto& result = run.task(lab.name, task.name);
      CHECK(result.at("rate").get<double>() > 0);
      CHECK(result.at("metric") == task.threshold->metric);
      CHECK(result.at("ratio").get<double>() > 0);
      ++measured;
    }
  CHECK(measured > 0);
}

TEST_CASE("a fresh skeleton reports each task as not implemented, naming the file and line of the TODO") {
  const auto run = run_check(committed_labs(), "--backend opencl");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  for (const auto& lab : all_labs())
    for (const auto& task : lab.tasks) {
      CAPTURE(lab.name);
      CAPTURE(task.name);
      CHECK(run.status(lab.name, task.name) == "not_implemented");
      // "labs/<id>/<file>:<line>", the line of the TODO in one of the lab's OpenCL files
      const std::string message = run.task(lab.name, task.name).at("message");
      bool names_a_lab_file = false;
      for (const auto& file : lab.files.at("opencl"))
        names_a_lab_file |= message.find("labs/" + lab.id + "/" + file + ":") != std::string::npos;
      CHECK(names_a_lab_file);
    }
  CHECK(run.output.find("not implemented") != std::string::npos);
}

TEST_CASE("the --outcome file says how many tasks failed, goes when a check passes, and says when one did not run") {
  const auto lab = all_labs().front();
  int required = 0;
  for (const auto& task : lab.tasks) required += !task.bonus;
  const fs::path outcome = fs::path(GPULAB_SCRATCH) / "outcome.txt";
  const std::string args = "--backend opencl --lab " + lab.name + " --outcome '" + outcome.string() + "'";
  const auto skeleton = run_check(committed_labs(), args);
  INFO(skeleton.output);
  CHECK(skeleton.exit_code == 1);
  CHECK(read_file(outcome).starts_with(std::to_string(required) + " of " + std::to_string(required) + " task"));
  CHECK(read_file(outcome).ends_with(" failed: the report above says which and why\n"));
  // The first lab's solution passes on any device: the earlier run's line must not outlive it.
  const auto solution = run_check(repo_path("solutions"), args);
  INFO(solution.output);
  CHECK(solution.exit_code == 0);
  CHECK_FALSE(fs::exists(outcome));
  const auto error = run_check(repo_path("solutions"), args + " --task nosuchtask");
  CHECK(error.exit_code == 2);
  CHECK(error.output.find("TASK=nosuchtask is not a task") != std::string::npos);  // still said
  CHECK(read_file(outcome) == "the check did not run: the message above says why\n");
}

TEST_CASE("PROFILE=1 on OpenCL grades as without it and says that Nsight Compute profiles CUDA kernels only") {
  const auto lab = all_labs().front();
  const auto run = run_check(committed_labs(), "--backend opencl --profile --lab " + lab.name);
  INFO(run.output);
  CHECK(run.exit_code == 1);
  for (const auto& task : lab.tasks) CHECK(run.status(lab.name, task.name) == "not_implemented");
  CHECK(run.output.find("profile: not run: PROFILE=1 runs NVIDIA's Nsight Compute, which measures CUDA kernels only: "
                        "profile with BACKEND=cuda") != std::string::npos);
  CHECK_FALSE(run.report.at("labs").at(0).contains("profile"));
}

TEST_CASE("a missing student file is named, with how to restore it") {
  const auto lab = all_labs().front();
  const std::string kernel = lab.files_with_extension("opencl", ".cl").front();
  SourceTree tree("missing-file");
  tree.remove(lab.id + "/" + kernel);
  const auto run = run_check(tree.root(), "--backend opencl --lab " + lab.name);
  INFO(run.output);
  for (const auto& task : lab.tasks) {
    CAPTURE(task.name);
    CHECK(run.status(lab.name, task.name) == "compile_error");
    const std::string message = run.task(lab.name, task.name).at("message");
    CHECK(message.find("missing file") != std::string::npos);
    CHECK(message.find(kernel) != std::string::npos);
  }
}

TEST_CASE("a lab is chosen by folder, name or number, and a wrong name lists the labs") {
  const auto labs = all_labs();
  REQUIRE(labs.size() >= 2);
  const auto& chosen = labs[1];  // not the first, so "the first lab" cannot pass for the chosen one
  for (const std::string& lab : {chosen.id, chosen.name, std::to_string(std::stoi(chosen.id))}) {
    const auto run =
        run_check(repo_path("solutions"), "--backend opencl --task " + chosen.tasks.front().name + " --lab " + lab);
    CAPTURE(lab);
    REQUIRE(run.report.is_object());
    REQUIRE(run.report.at("labs").size() == 1);
    CHECK(run.report.at("labs")[0].at("id") == chosen.id);
  }
  const auto bad = run_check(repo_path("solutions"), "--backend opencl --lab nosuchlab");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("LAB=nosuchlab matches no lab; the labs are:") != std::string::npos);
  for (const auto& lab : labs) CHECK(bad.output.find(" " + lab.name) != std::string::npos);
}

TEST_CASE("asking for CUDA where it cannot run says why and what to run instead") {
  if (gpu_listed("cuda", "0")) {
    MESSAGE("this machine has a CUDA GPU: nothing to say instead");
    return;
  }
  const auto run = run_check(repo_path("solutions"), "--backend cuda --lab " + all_labs().front().name);
  INFO(run.output);
  CHECK(run.exit_code != 0);
  // Without nvcc the grader has no CUDA backend; with it, the files compile but nothing can run.
  const bool not_built = run.output.find("CUDA (nvcc) was not found when the grader was built") != std::string::npos;
  const bool no_device =
      run.output.find("this machine has no CUDA device: your CUDA files compiled") != std::string::npos;
  CHECK(not_built != no_device);
  CHECK(run.output.find("`make check BACKEND=opencl`") != std::string::npos);
  CHECK(run.output.find("running without the GPU lock") == std::string::npos);
}

TEST_CASE("every check adds a line to the history of the build folder, which gpulab history prints") {
  const auto lab = all_labs().front();
  const auto run = run_check(repo_path("solutions"), "--backend opencl --lab " + lab.name);
  REQUIRE(run.report.is_object());
  const std::uint64_t seed = run.report.at("seed");
  // Other tests check at the same time: this run's line is the one with its seed and folder.
  std::ifstream history(fs::path(GPULAB_CLI).parent_path() / "history.jsonl");
  bool found = false;
  for (std::string line; std::getline(history, line);) {
    const auto entry = nlohmann::json::parse(line, nullptr, false);
    if (entry.is_discarded() || entry.value("seed", std::uint64_t{0}) != seed) continue;
    found = entry.value("source", "") == run.report.value("source", "?") && entry.at("labs").size() == 1 &&
            entry.at("labs")[0].at("files").get<std::string>().size() == 64;
  }
  CHECK(found);
  std::string shown;
  CHECK(run_command(std::string("'") + GPULAB_CLI + "' history --lab " + lab.name, shown) == 0);
  CHECK(shown.find(lab.id + " · opencl") != std::string::npos);
}

TEST_CASE(
    "with --reuse (make check) and nothing changed a check shows the last results without running, and an edit or a "
    "check without it runs the lab" *
    doctest::skip(!instructor_repository())) {
  const auto lab = all_labs().front();
  SourceTree tree("check-reuse");
  const std::string args = "--backend opencl --lab " + lab.name;
  const auto first = run_check(tree.root(), args + " --reuse");
  REQUIRE(first.report.is_object());
  CHECK_FALSE(first.report.at("labs")[0].contains("reused"));

  const auto again = run_check(tree.root(), args + " --reuse");
  INFO(again.output);
  REQUIRE(again.report.is_object());
  CHECK(again.exit_code == first.exit_code);
  CHECK(again.report.at("seed") == first.report.at("seed"));  // SEED= reproduces what is shown
  CHECK(again.report.at("labs")[0].value("reused", "").find("nothing changed since its check at") != std::string::npos);
  CHECK(again.report.at("labs")[0].at("tasks") == first.report.at("labs")[0].at("tasks"));
  CHECK(again.output.find("nothing changed since its last check: its results again (FRESH=1 runs it)") !=
        std::string::npos);

  tree.append(lab.id + "/" + lab.files.at("opencl").front(), "// an edit");
  const auto edited = run_check(tree.root(), args + " --reuse");
  REQUIRE(edited.report.is_object());
  CHECK_FALSE(edited.report.at("labs")[0].contains("reused"));
  CHECK(edited.report.at("seed") != first.report.at("seed"));

  const auto fresh = run_check(tree.root(), args);
  REQUIRE(fresh.report.is_object());
  CHECK_FALSE(fresh.report.at("labs")[0].contains("reused"));
}

TEST_CASE("a misspelt task name is an error that lists the lab's tasks, and runs nothing") {
  const auto lab = all_labs().front();
  const std::string misspelt = lab.tasks.front().name + "-typo";
  const auto run = run_check(repo_path("solutions"), "--backend opencl --lab " + lab.name + " --task " + misspelt);
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("TASK=" + misspelt + " is not a task of " + lab.id + "; the tasks are " + lab.id + ": " +
                        lab.tasks.front().name) != std::string::npos);
  CHECK(run.output.find("PASSED") == std::string::npos);
  CHECK_FALSE(run.report.is_object());  // nothing ran, so no report was written
}

TEST_CASE("the report names the seed, and the same seed gives the same inputs") {
  const std::string lab = all_labs().front().name;
  const auto run = run_check(repo_path("solutions"), "--backend opencl --lab " + lab + " --seed 12345");
  CHECK(run.report.at("seed") == 12345);
  CHECK(run.output.find("SEED=12345 reproduces this run") != std::string::npos);
}
