// The verdict on a task (gpulab/verdict.hpp): decided by the parent from the runner's measurements
// and the manifest, without a device.
#include <doctest/doctest.h>

#include "gpulab/verdict.hpp"

using namespace gpulab;

namespace {

// A timed task as a manifest declares it: 2 points, 3x the naive kernel on a GPU (4x on OpenCL
// GPUs), a bonus tier of 1 point at 6x on a GPU; no bound on a CPU.
Task timed_task() {
  Task t;
  t.name = "tiled";
  t.function = "matmul_tiled";
  t.points = 2;
  t.threshold = Threshold{"naive_speedup", {{"gpu", 3.0}, {"opencl_gpu", 4.0}}};
  t.tier = Tier{Threshold{"naive_speedup", {{"gpu", 6.0}}}, 1};
  return t;
}

CaseResult a_case(const std::string& name, bool passed, bool hidden = false) {
  CaseResult c;
  c.name = name;
  c.passed = passed;
  c.hidden = hidden;
  return c;
}

// What a runner reports of a task whose three cases ran, the last one timed at `speedup` x naive.
TaskResult measured(double speedup, std::vector<bool> passed = {true, true, true}) {
  TaskResult r;
  r.task = "tiled";
  r.cases_complete = true;
  r.cases_total = static_cast<int>(passed.size());
  for (std::size_t i = 0; i < passed.size(); ++i) r.cases.push_back(a_case("case " + std::to_string(i), passed[i]));
  r.ratios = {{"naive_speedup", speedup}, {"copy_fraction", 0.4}};
  return r;
}

Calibration naive_calibration() {
  Calibration c;
  c.unit = "GFLOP/s";
  c.rates = {{"naive", 100.0}};
  return c;
}

TaskResult judged(TaskResult r, const std::string& backend = "cuda",
                  std::optional<DeviceClass> device = DeviceClass::gpu) {
  judge_task(r, timed_task(), backend, device, naive_calibration());
  return r;
}

}  // namespace

TEST_CASE("a task whose cases all passed passes when its ratio reaches the manifest's bound for the device") {
  const TaskResult r = judged(measured(3.5));
  CHECK(r.status == Status::passed);
  CHECK(r.threshold == 3.0);
  CHECK(r.ratio == 3.5);
  CHECK(r.metric == "naive_speedup");
  CHECK(r.points == 2);
  CHECK(r.max_points == 2);
  CHECK(r.function == "matmul_tiled");
  CHECK(r.cases_passed == 3);
  // The OpenCL bound of the same class is the backend's own.
  CHECK(judged(measured(3.5), "opencl").status == Status::too_slow);
  // A CPU has no bound here: graded on correctness.
  const TaskResult cpu = judged(measured(0.1), "opencl", DeviceClass::cpu);
  CHECK(cpu.status == Status::passed);
  CHECK_FALSE(cpu.threshold);
}

TEST_CASE("a correct task below its bound is too slow, its message says the ratio and the bound, and borderline") {
  TaskResult r = judged(measured(2.5));
  CHECK(r.status == Status::too_slow);
  CHECK(r.points == 0);
  CHECK(r.message.find("correct, but reached 2.5") != std::string::npos);
  CHECK(r.message.find("the threshold is 3") != std::string::npos);
  CHECK(r.message.find("borderline") == std::string::npos);
  TaskResult close = measured(2.9);
  close.borderline = true;
  CHECK(judged(close).message.find("borderline: measured again") != std::string::npos);
}

TEST_CASE("a wrong case makes a wrong result that lists every wrong case, a hidden one only as hidden") {
  TaskResult r = measured(9.0, {true, false, true});
  r.cases.push_back(a_case("41x59", false, true));
  r.cases_total = 4;
  r = judged(r);
  CHECK(r.status == Status::wrong_result);
  CHECK(r.cases_passed == 2);
  CHECK(r.points == 0);
  CHECK(r.details.find("wrong in 2 of 4 cases: case 1, 41x59 (hidden case)") != std::string::npos);
}

TEST_CASE("a case's finding decides before its cases: faster than the device is impossible, else a violation") {
  TaskResult fast = measured(50.0);
  fast.cases.back().finding = "faster_than_device";
  CHECK(judged(fast).status == Status::impossible_speed);
  TaskResult writes = measured(3.5, {true, false, true});
  writes.cases[1].finding = "buffer_violation";
  const TaskResult w = judged(writes);
  CHECK(w.status == Status::buffer_violation);
  CHECK(w.finding == "buffer_violation");
  CHECK(w.points == 0);
}

TEST_CASE("a bound without its measurement is an error that asks to fix the manifest, not a pass") {
  TaskResult r = measured(3.5);
  r.ratios.erase("naive_speedup");
  r = judged(r);
  CHECK(r.status == Status::error);
  CHECK(r.message.find("fix the manifest") != std::string::npos);
}

TEST_CASE("the bounds, the tier and the points come from the manifest, never from the runner's result") {
  TaskResult forged = measured(6.5);
  forged.threshold = 0.1;
  forged.tier_threshold = 0.2;
  forged.tier_points = 50;
  forged.points = 100;
  forged.max_points = 100;
  forged.metric = "copy_fraction";  // 0.4 of the copy would pass no bound of this task
  forged.ratio = 99;
  const TaskResult r = judged(forged);
  CHECK(r.threshold == 3.0);
  CHECK(r.tier_threshold == 6.0);
  CHECK(r.tier_points == 1);
  CHECK(r.ratio == 6.5);
  CHECK(r.points == 3);  // the task's 2 and the tier's 1
  CHECK(r.max_points == 2);
  TaskResult below_tier = measured(4.0);
  CHECK(judged(below_tier).points == 2);
  // A runner's cases_passed is counted again from its cases.
  TaskResult counted = measured(3.5, {true, false, true});
  counted.cases_passed = 3;
  CHECK(judged(counted).status == Status::wrong_result);
}

TEST_CASE("a verdict claimed without every case run is not taken, and a runner's own failures keep zero points") {
  TaskResult claimed;
  claimed.task = "tiled";
  claimed.status = Status::passed;
  claimed.cases_passed = claimed.cases_total = 10;
  claimed.points = 2;
  const TaskResult r = judged(claimed);
  CHECK(r.status == Status::error);
  CHECK(r.points == 0);
  CHECK(r.message.find("a verdict is the grader's to decide") != std::string::npos);
  for (Status s : {Status::not_implemented, Status::error, Status::kernel_fault, Status::compile_error}) {
    TaskResult stopped;
    stopped.task = "tiled";
    stopped.status = s;
    stopped.message = "what stopped it";
    const TaskResult kept = judged(stopped);
    CHECK(kept.status == s);
    CHECK(kept.message == "what stopped it");
    CHECK(kept.points == 0);
    CHECK(kept.max_points == 2);
  }
}

TEST_CASE("a timed task from a runner that never said its device class is an error, not a pass without a bound") {
  const TaskResult r = judged(measured(0.5), "cuda", std::nullopt);
  CHECK(r.status == Status::error);
  CHECK(r.message.find("class of device") != std::string::npos);
  Task untimed = timed_task();
  untimed.threshold.reset();
  untimed.tier.reset();
  TaskResult correct = measured(0.5);
  judge_task(correct, untimed, "cuda", std::nullopt, naive_calibration());
  CHECK(correct.status == Status::passed);
}
