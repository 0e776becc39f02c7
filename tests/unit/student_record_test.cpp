// A graded student's record (student_record.hpp) and its labs (lab_run.hpp) survive result.json.
#include <doctest/doctest.h>

#include "student_record.hpp"

using namespace gpulab;
using namespace gpulab::cli;
using nlohmann::json;

namespace {

StudentRecord graded_record() {
  StudentRecord r;
  r.student = "eve";
  r.submission = "eve.zip";
  r.grader_version = "1+abc";
  r.backend = "opencl";
  r.notes = {"01-saxpy: missing labs/01-saxpy/saxpy.cl"};
  r.max_score = 10;
  r.seed = 42;
  r.content_hash = "sha256:00";
  LabRun lab;
  lab.id = "01-saxpy";
  lab.name = "saxpy";
  lab.warnings = {"01-saxpy/saxpy.cl:3: barrier under an if"};
  lab.phases.compile_s = 1.2344;
  lab.calibration.rates = {{"copy", 50.0}};
  TaskResult fast;
  fast.task = "fast";
  fast.status = Status::wrong_result;
  fast.failed_in_hidden_case = true;
  fast.max_points = 7;
  fast.ratio = 0.4;
  fast.metric = "copy_fraction";
  TaskResult bonus;
  bonus.task = "bonus";
  bonus.status = Status::passed;
  bonus.points = bonus.max_points = 2;
  bonus.bonus = true;
  lab.tasks = {fast, bonus};
  r.labs.push_back({lab, {{"fast", ReferenceResult{"passed", {{"copy_fraction", 0.9}}, "copy_fraction", 0.9}}}});
  r.score = 2;
  r.phases = lab.phases;
  return r;
}

}  // namespace

TEST_CASE("a graded record writes each lab's score, maximum, phases and references, and reads back the same") {
  const json j = graded_record();
  const json& lab = j.at("labs").at(0);
  CHECK(lab.at("score") == 2.0);
  CHECK(lab.at("max_score") == 7.0);  // the bonus task counts in points, not in the maximum
  CHECK(lab.at("phases").at("compile_s") == 1.234);
  CHECK(lab.at("tasks").at(0).at("reference").at("ratio") == 0.9);
  CHECK(lab.at("tasks").at(0).at("hidden_case") == true);
  CHECK(j.at("score") == 2.0);

  const auto back = j.get<StudentRecord>();
  CHECK(back.student == "eve");
  CHECK(back.notes == graded_record().notes);
  CHECK(back.seed == 42);
  CHECK(back.score == 2.0);
  REQUIRE(back.labs.size() == 1);
  const LabRun& run = back.labs[0].run;
  CHECK(run.warnings == graded_record().labs[0].run.warnings);
  CHECK(run.calibration.rates.at("copy") == 50.0);
  CHECK(run.tasks.at(0).failed_in_hidden_case);
  CHECK(back.labs[0].references.at("fast").ratio == 0.9);
  CHECK(back.labs[0].references.at("fast").metric == "copy_fraction");
  CHECK(json(back) == j);
}

TEST_CASE("a record of the grader's failure has no score and no labs, only why") {
  StudentRecord r = graded_record();
  r.labs.clear();
  r.grader_error = true;
  r.error = "not graded: the grader failed (disk full); it is graded again on the next run";
  const json j = r;
  CHECK(j.at("score").is_null());
  CHECK(j.at("grader_error") == true);
  CHECK_FALSE(j.contains("selection"));
  const auto back = j.get<StudentRecord>();
  CHECK_FALSE(back.score);
  CHECK(back.grader_error);
  CHECK_FALSE(back.refused());
}

TEST_CASE("a lab written by an older grader, with a calibration that no longer validates, keeps its rates") {
  const json old{{"id", "01-saxpy"},
                 {"tasks", json::array()},
                 {"calibration", {{"unit", "GB/s"}, {"library", ""}, {"rates", {{"copy", 10.0}, {"retired", 1.0}}}}}};
  const auto lab = old.get<LabRun>();
  CHECK(lab.calibration.rates.at("copy") == 10.0);
  CHECK(lab.calibration.unit == "GB/s");
}
