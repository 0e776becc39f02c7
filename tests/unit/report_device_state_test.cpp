// The report's header under the device line: whether kernels reach host memory, the GPU's state at
// the start (or why there is no telemetry), and every timing measured again after throttling.
#include <doctest/doctest.h>

#include "gpulab/telemetry.hpp"
#include "report.hpp"

using namespace gpulab;
using namespace gpulab::cli;

namespace {
RunSummary run_on(nlohmann::json device, std::vector<TaskResult> tasks = {}) {
  LabRun lab;
  lab.id = "02-transpose";
  lab.device = std::move(device);
  lab.tasks = std::move(tasks);
  RunSummary run;
  run.labs = {lab};
  return run;
}
}  // namespace

TEST_CASE("the header shows the GPU's clocks, temperature and power against their limits at the start") {
  GpuState state{{1755, 2619, 34, 71.4, kReasonIdle}, 1980, 2619, 700};
  const std::string report = render_report(
      run_on({{"name", "NVIDIA H100"}, {"class", "gpu"}, {"telemetry", "NVML"}, {"gpu_state", state}}), false);
  CHECK(report.find("GPU at start: SM 1755 of 1980 MHz · memory 2619 of 2619 MHz · 34 °C · 71 of 700 W · clock "
                    "limits: idle\n") != std::string::npos);
  CHECK(report.find("telemetry:") == std::string::npos);
}

TEST_CASE("a GPU without NVML says telemetry is unavailable and why, and a CPU device says nothing of it") {
  const nlohmann::json gpu = {{"name", "NVIDIA H100"}, {"class", "gpu"}, {"telemetry", "unavailable: no NVML"}};
  CHECK(render_report(run_on(gpu), false)
            .find("GPU telemetry: unavailable: no NVML (timings were not checked for throttling)\n") !=
        std::string::npos);
  const nlohmann::json cpu = {{"name", "pthread-cpu"}, {"class", "cpu"}, {"telemetry", "unavailable: no bus id"}};
  CHECK(render_report(run_on(cpu), false).find("telemetry") == std::string::npos);
}

TEST_CASE("a malformed GPU state from the runner is left out of the header, not a crash") {
  const nlohmann::json gpu = {{"name", "x"}, {"class", "gpu"}, {"telemetry", "NVML"}, {"gpu_state", "hot"}};
  CHECK(render_report(run_on(gpu), false).find("GPU at start") == std::string::npos);
}

TEST_CASE("a device whose kernels reach host memory says so, and what the harness cannot enforce there") {
  const nlohmann::json pocl = {{"name", "cpu"},
                               {"class", "cpu"},
                               {"host_memory_access", "OpenCL CPU device: kernels run in the runner process"}};
  const std::string report = render_report(run_on(pocl), false);
  CHECK(report.find("host memory: kernels reach it (OpenCL CPU device: kernels run in the runner process): the "
                    "harness checksums") != std::string::npos);
  CHECK(report.find("cannot stop a kernel reading the runner's memory") != std::string::npos);
  CHECK(render_report(run_on({{"name", "gpu"}, {"class", "gpu"}, {"host_memory_access", ""}}), false)
            .find("host memory:") == std::string::npos);
}

TEST_CASE("a task timed again after throttling is named in the header with the run that counted") {
  TaskResult t;
  t.task = "optimized";
  t.status = Status::passed;
  t.telemetry = TimingTelemetry{summarize_telemetry({{1980, 2619, 60, 500, 0}}),
                                summarize_telemetry({{1500, 2619, 70, 700, kReasonSwPowerCap}})};
  TaskResult steady = t;
  steady.task = "naive";
  steady.telemetry->throttled_first.reset();
  const std::string report = render_report(run_on({{"name", "gpu"}, {"class", "gpu"}}, {steady, t}), false);
  CHECK(report.find("throttling: 02-transpose optimized: timed again after SW power cap in the first run; the "
                    "second run counts (not throttled)\n") != std::string::npos);
  CHECK(report.find("02-transpose naive") == std::string::npos);
}
