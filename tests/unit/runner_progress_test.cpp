// Reading a lab runner's progress file (runner_progress.hpp): what it reported, where it stopped, and
// what in it cannot be trusted.
#include <doctest/doctest.h>

#include "runner_progress.hpp"

using namespace gpulab;
using namespace gpulab::cli;

namespace {

const char* kCalibration =
    R"({"event": "calibration", "took_s": 1.5, "unit": "GB/s", "library": "", "rates": {"copy": 100.0}})";

}  // namespace

TEST_CASE("a runner's events give the device, the calibration, the finished tasks and the phases") {
  const std::string text =
      std::string(R"({"event": "device", "name": "cpu", "platform": "PoCL"})") + "\n" + kCalibration + "\n" +
      R"({"event": "task_begin", "task": "naive"})"
      "\n"
      R"({"event": "case_begin", "task": "naive", "case": "1x1", "at_s": 2.0})"
      "\n"
      R"({"event": "case_end", "task": "naive", "at_s": 2.5, "result": {"name": "1x1", "launches_s": 0.1, "checks_s": 0.25}})"
      "\n"
      R"({"event": "case_begin", "task": "naive", "case": "big", "at_s": 3.0})"
      "\n"
      R"({"event": "case_end", "task": "naive", "at_s": 7.0, "result": {"timing": {}, "timed_s": 3.0, "launches_s": 2.0, "checks_s": 9.0}})"
      "\n"
      R"({"event": "task_end", "result": {"task": "naive", "status": "passed"}})"
      "\n";
  const RunnerProgress p = parse_runner_progress(text);
  CHECK(p.device == nlohmann::json{{"name", "cpu"}, {"platform", "PoCL"}});
  REQUIRE(p.calibration);
  CHECK(p.calibration->rates.at("copy") == 100.0);
  CHECK(p.calibration_doubt.empty());
  REQUIRE(p.task_results.size() == 1);
  CHECK(p.task_results[0].task == "naive");
  CHECK(p.task_results[0].status == Status::passed);
  CHECK(p.current_task.empty());
  CHECK(p.phases.calibration_s == 1.5);
  CHECK(p.phases.correctness_s == 0.5);
  CHECK(p.phases.timing_s == 4.0);
  CHECK(p.phases.timed_launches_s == 3.0);
  CHECK(p.phases.launches_s == doctest::Approx(2.1));
  // A case's checks cannot take more than what its launches left of its time (4 s - 2 s).
  CHECK(p.phases.checks_s == doctest::Approx(0.25 + 2.0));
}

TEST_CASE("a file that ends inside a task says the task and the case the runner was in") {
  const RunnerProgress p = parse_runner_progress(R"({"event": "task_begin", "task": "optimized"})"
                                                 "\n"
                                                 R"({"event": "case_begin", "task": "optimized", "case": "257x3"})"
                                                 "\n"
                                                 R"({"event": "case_e)");  // cut short by the crash
  CHECK(p.current_task == "optimized");
  CHECK(p.current_case == "257x3");
  CHECK(p.task_results.empty());
}

TEST_CASE("a calibration event out of place, or malformed, is doubted; other malformed events are ignored") {
  const std::string after_task = std::string(R"({"event": "task_begin", "task": "naive"})") + "\n" + kCalibration;
  CHECK(parse_runner_progress(after_task).calibration_doubt == "a calibration event after a task began");
  const std::string twice = std::string(kCalibration) + "\n" + kCalibration;
  CHECK(parse_runner_progress(twice).calibration_doubt == "two calibration events from one runner");
  const RunnerProgress bad = parse_runner_progress(R"({"event": "calibration", "unit": "furlongs", "rates": {}})"
                                                   "\n"
                                                   R"({"event": "task_end", "result": 7})"
                                                   "\n"
                                                   R"({"event": "error", "message": "no device"})");
  CHECK_FALSE(bad.calibration);
  CHECK(bad.calibration_doubt.rfind("a malformed calibration event (", 0) == 0);
  CHECK(bad.task_results.empty());
  CHECK(bad.setup_error == "no device");
}

TEST_CASE("how far a runner got before its tasks: loading, opening the device, building the kernels, ready") {
  const std::string start = R"({"event": "start"})", device = R"({"event": "device", "name": "cpu"})",
                    begin = R"({"event": "build_begin"})", end = R"({"event": "build_end"})",
                    task = R"({"event": "task_begin", "task": "naive"})",
                    one_case = R"({"event": "case_begin", "task": "naive", "case": "1x1"})";
  CHECK(parse_runner_progress("").stage == RunnerStage::loading);
  CHECK(parse_runner_progress(start + "\n").stage == RunnerStage::opening_device);
  CHECK(parse_runner_progress(start + "\n" + device + "\n").stage == RunnerStage::device_open);
  const RunnerProgress building = parse_runner_progress(start + "\n" + device + "\n" + begin + "\n");
  CHECK(building.stage == RunnerStage::building_kernels);
  CHECK_FALSE(building.case_begun);
  CHECK(parse_runner_progress(start + "\n" + device + "\n" + begin + "\n" + end + "\n").stage == RunnerStage::ready);
  const RunnerProgress in_case =
      parse_runner_progress(start + "\n" + device + "\n" + begin + "\n" + end + "\n" + task + "\n" + one_case + "\n");
  CHECK(in_case.stage == RunnerStage::ready);
  CHECK(in_case.case_begun);
}
