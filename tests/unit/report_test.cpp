// The console report (report.hpp) renders from the typed run.
#include <doctest/doctest.h>

#include "report.hpp"

using namespace gpulab;
using namespace gpulab::cli;

TEST_CASE("a task that failed in a hidden case is marked so in the report, from the result's own field") {
  RunSummary run;
  run.source = "labs";
  LabRun lab;
  lab.id = "01-saxpy";
  TaskResult t;
  t.task = "fast";
  t.function = "saxpy_fast";
  t.status = Status::wrong_result;
  t.message = "case 257: 3 of 257 elements differ";
  t.failed_in_hidden_case = true;
  lab.tasks = {t};
  run.labs = {lab};
  const std::string report = render_report(run, false);
  CHECK(report.find("✘ fast (saxpy_fast): (hidden case) case 257: 3 of 257 elements differ\n") != std::string::npos);
  run.labs[0].tasks[0].failed_in_hidden_case = false;
  CHECK(render_report(run, false).find("(hidden case)") == std::string::npos);
}

TEST_CASE("a run's JSON gives each lab's tasks with their status and metric in words") {
  RunSummary run;
  LabRun lab;
  TaskResult t;
  t.task = "fast";
  t.status = Status::too_slow;
  t.metric = "copy_fraction";
  lab.tasks = {t};
  run.labs = {lab};
  const auto task = to_json(run).at("labs").at(0).at("tasks").at(0);
  CHECK(task.at("status_label") == "too slow");
  CHECK(task.at("metric_label") == "fraction of the device's copy bandwidth");
  CHECK(task.at("metric_unit") == "%");
}

TEST_CASE(
    "on a CPU device the report says which tasks' speed is shown but not graded and that races cannot show, and on a "
    "GPU says nothing") {
  TaskResult tiled, fast;
  tiled.task = "tiled", fast.task = "fast";
  tiled.metric = fast.metric = "naive_speedup";
  tiled.status = fast.status = Status::passed;
  tiled.ratio = 0.8, fast.ratio = 6.0;
  fast.threshold = 2.0;  // a bound this device class has
  LabRun lab;
  lab.tasks = {tiled, fast};
  lab.device = {{"class", "cpu"}, {"name", "PoCL"}};
  RunSummary run;
  run.labs = {lab};
  const std::string cpu = render_report(run, false);
  CHECK(cpu.find("CPU device: the speed of tiled is not graded here, the GPU grade decides") != std::string::npos);
  CHECK(cpu.find("a race between them (a barrier left out, a plain += where an atomic belongs) cannot show") !=
        std::string::npos);
  run.labs[0].device["class"] = "gpu";
  CHECK(render_report(run, false).find("not graded") == std::string::npos);
}

TEST_CASE("the calibration line prints slow rates with their digits, and says when the CPU figures contradict") {
  LabRun lab;
  lab.calibration.unit = "Gkeys/s";
  lab.calibration.rates = {{"naive", 0.0042}, {"cpu_1core", 2.0}, {"cpu_all_cores", 1.5}};
  RunSummary run;
  run.labs = {lab};
  const std::string busy = render_report(run, false);
  CHECK(busy.find("naive kernel 0.0042 Gkeys/s") != std::string::npos);
  CHECK(busy.find("0.00 ") == std::string::npos);
  CHECK(busy.find("the CPU figures are unreliable") != std::string::npos);
  run.labs[0].calibration.rates["cpu_all_cores"] = 3.5;
  CHECK(render_report(run, false).find("unreliable") == std::string::npos);
}

TEST_CASE("a run's JSON report reads back as the same run, and its totals are the run's") {
  RunSummary run;
  run.source = "labs";
  run.backend = "opencl";
  run.seed = 7;
  LabRun lab;
  lab.id = "01-saxpy";
  TaskResult t;
  t.task = "fast";
  t.status = Status::passed;
  t.points = t.max_points = 3;
  lab.tasks = {t};
  run.labs = {lab};
  const nlohmann::json j = to_json(run);
  CHECK(j.at("points") == 3.0);
  CHECK(j.at("passed") == true);
  const auto back = j.get<RunSummary>();
  CHECK(back.seed == 7);
  CHECK(back.backend == "opencl");
  REQUIRE(back.labs.size() == 1);
  CHECK(back.labs[0].tasks.at(0).points == 3);
  CHECK(to_json(back) == j);
}

TEST_CASE("a run that ran no task is never reported as passed") {
  RunSummary run;
  run.source = "labs";
  run.backend = "opencl";
  CHECK_FALSE(run.all_passed());
  const std::string report = render_report(run, false);
  CHECK(report.find("NOTHING RAN: no selected lab has a task with files for opencl") != std::string::npos);
  CHECK(report.find("PASSED") == std::string::npos);
}

TEST_CASE("a run that did not pass says in one line how many required tasks failed, or that none ran") {
  RunSummary run;
  run.backend = "opencl";
  CHECK(render_outcome(run) ==
        "no task ran: no selected lab has a task with files for opencl (see LAB=, TASK= and BACKEND=)");
  TaskResult naive, fast, extra;
  naive.status = Status::passed;
  fast.status = Status::wrong_result;
  LabRun lab;
  lab.tasks = {naive, fast};
  run.labs = {lab};
  CHECK(render_outcome(run) == "1 of 2 tasks failed: the report above says which and why");
  // A failed bonus task does not fail the run, so it is not counted.
  extra.bonus = true;
  extra.status = Status::too_slow;
  run.labs[0].tasks.push_back(extra);
  CHECK(render_outcome(run) == "1 of 2 required tasks failed: the report above says which and why");
  run.labs[0].tasks[1].status = Status::passed;
  CHECK(render_outcome(run).empty());
}

TEST_CASE("a task with a bonus tier earns its points only past the tier's bound, and the report says which") {
  TaskResult fast;
  fast.task = "fast";
  fast.metric = "copy_fraction";
  fast.status = Status::passed;
  fast.threshold = 0.01, fast.tier_threshold = 0.09, fast.tier_points = 1;
  fast.ratio = 0.12;
  CHECK(tier_reached(fast));
  CHECK(points_earned(fast, 2) == 3);
  fast.ratio = 0.05;
  CHECK_FALSE(tier_reached(fast));
  CHECK(points_earned(fast, 2) == 2);
  fast.status = Status::wrong_result;
  fast.ratio = 0.5;
  CHECK(points_earned(fast, 2) == 0);
  // The tier survives the JSON a batch keeps.
  const TaskResult back = nlohmann::json(fast).get<TaskResult>();
  CHECK(back.tier_threshold == 0.09);
  CHECK(back.tier_points == 1);

  fast.status = Status::passed;
  fast.ratio = 0.12;
  fast.points = points_earned(fast, 2);
  fast.max_points = 2;
  LabRun lab;
  lab.tasks = {fast};
  RunSummary run;
  run.labs = {lab};
  CHECK(render_report(run, false).find("bonus tier: +1 at ≥9% — reached") != std::string::npos);
  run.labs[0].tasks[0].ratio = 0.05;
  CHECK(render_report(run, false).find("bonus tier: +1 at ≥9% — not reached") != std::string::npos);
  run.labs[0].tasks[0].tier_threshold.reset();
  CHECK(render_report(run, false).find("bonus tier") == std::string::npos);
}
