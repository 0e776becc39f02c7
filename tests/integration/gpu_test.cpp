// GPU-only checks: CUDA runs, OpenCL on the GPU, and the thresholds, which must pass for the
// reference solution and fail for the naive kernel, with margin. Skipped (exit 77) without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "cli_harness.hpp"
#include "gpu_args.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_tests.hpp"

using namespace gpulab::testing;

namespace {

// The bound must sit at least 10% away from both the weaker and the reference kernel; run-to-run
// noise on the GPU is under 1%.
constexpr double kMargin = 1.1;

// Every task of every lab passes; where a task has a threshold, the solution clears it with margin.
void check_solutions_pass(const std::string& backend) {
  const auto run = run_check(repo_path("solutions"), gpu_args(backend) + selected_lab_args());
  INFO(run.output);
  CHECK(run.exit_code == 0);
  REQUIRE(run.report.is_object());
  for (const auto& lab : run.report.at("labs")) {
    CHECK(lab.at("device").at("class") == "gpu");
    for (const auto& t : lab.at("tasks")) {
      CAPTURE(lab.at("name"));
      CAPTURE(t.at("task"));
      CHECK(t.at("status") == "passed");
      if (t.contains("rate"))
        MESSAGE(backend << " " << lab.at("name").get<std::string>() << "/" << t.at("task").get<std::string>() << ": "
                        << t.at("rate").get<double>() << " " << lab.at("calibration").at("unit").get<std::string>()
                        << ", ratios " << t.at("ratios").dump());
      if (!t.contains("threshold")) continue;
      const double ratio = t.at("ratio"), bound = t.at("threshold");
      CHECK(ratio >= bound * kMargin);
      if (t.contains("tier_threshold")) CHECK(ratio >= t.at("tier_threshold").get<double>() * kMargin);
    }
  }
}

// A declared weaker kernel in place of the task's (lab_tests.hpp, plant_weaker_call).
void check_weaker_call_fails_threshold(const std::string& backend, const LabTests& lab, const WeakerCall& w) {
  SourceTree tree("weaker-" + w.task + "-" + lab.name() + "-" + backend);
  const std::string weaker = plant_weaker_call(tree, lab, w, backend);
  const auto run = run_check(tree.root(), gpu_args(backend) + " --lab " + lab.name() + " --task " + w.task);
  INFO(run.output);
  const auto& t = run.task(lab.name(), w.task);
  if (!t.contains("threshold")) {  // a bound for some backends only (nbody's tiled: CUDA)
    MESSAGE(backend << ": " << lab.name() << "/" << w.task << " has no bound here; the weaker kernel is not timed");
    return;
  }
  CHECK(run.status(lab.name(), w.task) == "too_slow");
  const double ratio = t.at("ratio"), bound = t.at("threshold");
  MESSAGE(backend << ": " << weaker << " submitted as " << w.task << " reaches " << ratio << " (" << t.at("metric")
                  << "); the bound is " << bound);
  CHECK(ratio * kMargin <= bound);
}

// Whole weaker files (solutions/<id>/weaker/) over the solution's: each listed task fails with margin.
void check_weaker_files_fail(const std::string& backend, const LabTests& lab) {
  SourceTree tree("weaker-files-" + lab.name() + "-" + backend);
  plant_weaker_files(tree, lab);
  std::string args = gpu_args(backend) + " --lab " + lab.name();
  for (const auto& t : lab.weaker_file_tasks) args += " --task " + t;
  const auto run = run_check(tree.root(), args);
  INFO(run.output);
  for (const auto& task : lab.weaker_file_tasks) {
    CAPTURE(task);
    CHECK(run.status(lab.name(), task) == "too_slow");
    const auto& t = run.task(lab.name(), task);
    if (!t.contains("ratio")) continue;
    const double ratio = t.at("ratio"), bound = t.at("threshold");
    MESSAGE(backend << ": the weaker " << lab.name() << "/" << task << " reaches " << ratio << " (" << t.at("metric")
                    << "); the bound is " << bound);
    CHECK(ratio * kMargin <= bound);
  }
}

// Every lab's declared weaker kernels (labs/NN-<name>/grader/tests/lab_tests.toml).
void check_thresholds_separate(const std::string& backend) {
  for (const auto& lab : all_lab_tests()) {
    if (!lab_selected(lab.name())) continue;
    CAPTURE(lab.name());
    for (const auto& w : lab.weaker_calls) {
      CAPTURE(w.task);
      check_weaker_call_fails_threshold(backend, lab, w);
    }
    if (!lab.weaker_file_tasks.empty()) check_weaker_files_fail(backend, lab);
  }
}

}  // namespace

TEST_CASE("on CUDA, every reference solution passes every task, and clears every threshold with margin") {
  check_solutions_pass("cuda");
}

TEST_CASE("on CUDA, a weaker kernel submitted for a stronger task fails its threshold with margin") {
  check_thresholds_separate("cuda");
}

TEST_CASE("on OpenCL on the GPU, every reference solution passes, and weaker kernels fail the thresholds") {
  // The device `gpulab devices` lists: if the labs then run elsewhere (a runner that sees only a CPU
  // platform), check_solutions_pass fails on the device class instead of passing on the CPU.
  if (!gpu_listed("opencl", "0")) {
    MESSAGE("no OpenCL GPU device is registered: skipped (see README, backends)");
    return;
  }
  check_solutions_pass("opencl");
  check_thresholds_separate("opencl");
}

int main(int argc, char** argv) {
  if (gpulab::cuda::list_devices().empty()) {
    std::puts("no CUDA device: the GPU tests are skipped");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
