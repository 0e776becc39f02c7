// The weaker kernels each lab declares for the GPU test (labs/NN-<name>/grader/tests/lab_tests.toml)
// compile where the GPU test plants them and compute every case right on OpenCL (PoCL in CI): so on a
// GPU they fail their thresholds by being slow, not wrong, and a broken plant shows up here, on any
// machine, rather than only on the GPU one.
#include <doctest/doctest.h>

#include "cli_harness.hpp"
#include "lab_tests.hpp"

using namespace gpulab::testing;

namespace {

void check_computes_right(const CliRun& run, const std::string& lab, const std::string& task) {
  CAPTURE(task);
  const auto& result = run.task(lab, task);
  CHECK(ran_correctly(result));
  CHECK(!result.contains("finding"));
}

}  // namespace

TEST_CASE("every declared weaker kernel compiles in place of its task and computes every case right") {
  int planted = 0;
  for (const auto& lab : all_lab_tests()) {
    CAPTURE(lab.name());
    for (const auto& w : lab.weaker_calls) {
      SourceTree tree("weaker-opencl-" + lab.name() + "-" + w.task);
      plant_weaker_call(tree, lab, w, "opencl");
      const auto run = run_check(tree.root(), "--backend opencl --lab " + lab.name() + " --task " + w.task);
      INFO(run.output);
      check_computes_right(run, lab.name(), w.task);
      ++planted;
    }
    if (lab.weaker_file_tasks.empty()) continue;
    SourceTree tree("weaker-opencl-files-" + lab.name());
    plant_weaker_files(tree, lab);
    std::string args = "--backend opencl --lab " + lab.name();
    for (const auto& task : lab.weaker_file_tasks) args += " --task " + task;
    const auto run = run_check(tree.root(), args);
    INFO(run.output);
    for (const auto& task : lab.weaker_file_tasks) check_computes_right(run, lab.name(), task), ++planted;
  }
  CHECK(planted > 0);
}
