// End-to-end: the nbody lab's timed launches cannot be answered from an earlier launch, and its
// check names a body that is off. Part of gpulab_integration_tests (OpenCL, PoCL in CI).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "cli_harness.hpp"

using namespace gpulab::testing;

namespace {
const char* kNaiveLaunch =
    R"(void nbody_naive(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  constexpr size_t local = 256;
  launch(lab, "nbody_naive_kernel", bodies, accel, n, softening2, local, round_up(n, local));
})";

// The naive task, computing each body count once and replaying that result for every later launch
// of the same count, from a device buffer of its own (nothing goes through the host).
const char* kReplay =
    R"(void nbody_naive(const gpulab::OpenCLLab& lab, cl_mem bodies, cl_mem accel, int n, float softening2) {
  static std::map<int, cl_mem> kept;  // planted: the first result of each n, replayed
  const size_t bytes = static_cast<size_t>(n) * 4 * sizeof(float);
  if (const auto it = kept.find(n); it != kept.end()) {
    check(clEnqueueCopyBuffer(lab.queue(), it->second, accel, 0, 0, bytes, 0, nullptr, nullptr), "replaying");
    return;
  }
  constexpr size_t local = 256;
  launch(lab, "nbody_naive_kernel", bodies, accel, n, softening2, local, round_up(n, local));
  cl_int status = CL_SUCCESS;
  cl_mem copy = clCreateBuffer(lab.context(), CL_MEM_READ_WRITE, bytes, nullptr, &status);
  check(status, "keeping a result");
  check(clEnqueueCopyBuffer(lab.queue(), accel, copy, 0, 0, bytes, 0, nullptr, nullptr), "keeping a result");
  kept[n] = copy;
})";
}  // namespace

TEST_CASE("an nbody kernel that replays its first result for the timing case fails at the first warm-up launch") {
  SourceTree tree("nbody-replay");
  tree.replace("08-nbody/nbody_opencl.cpp", kNaiveLaunch, kReplay);
  tree.replace("08-nbody/nbody_opencl.cpp", "#include \"gpulab/student/opencl.hpp\"",
               "#include <map>\n\n#include \"gpulab/student/opencl.hpp\"");
  const auto run = run_check(tree.root(), "--backend opencl --lab nbody --task naive --seed 5");
  INFO(run.output);
  REQUIRE(run.report.is_object());
  CHECK(run.status("nbody", "naive") == "wrong_result");
  // Every listed and random case, each launched once, is right the first time its body count comes
  // up (a case with the count of an earlier one gets that one's result: random counts may repeat):
  // only the timing case is replayed. A case's work is 20 n^2: the same for the same count.
  int failed = 0;
  std::set<double> counts;
  for (const auto& c : run.task("nbody", "naive").at("cases")) {
    if (!counts.insert(c.at("work").get<double>()).second || c.at("passed").get<bool>()) continue;
    ++failed;
    const std::string message = c.at("message");
    CHECK(message.find("warm-up launch") != std::string::npos);
  }
  CHECK(failed == 1);
}
