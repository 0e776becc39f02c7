// The per-student outputs of `gpulab grade` (student_outputs): Gradescope results, feedback and the gradebook.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "grade.hpp"
#include "student_outputs.hpp"
#include "submission.hpp"

using namespace gpulab;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A made-up lab: the outputs depend on no real lab's manifest.
Manifest saxpy_lab() {
  Manifest m;
  m.id = "01-saxpy";
  m.name = "saxpy";
  for (const char* task : {"naive", "optimized"}) {
    Task t;
    t.name = task;
    m.tasks.push_back(t);
  }
  return m;
}

json record_with_hidden_failure() {
  return json::parse(R"json({
    "student": "eve", "submission": "eve.zip", "score": 3.0, "max_score": 10.0, "error": "", "notes": [],
    "labs": [{"id": "01-saxpy", "name": "saxpy", "title": "Saxpy", "backend": "opencl",
      "tasks": [
        {"task": "naive", "function": "saxpy_naive", "status": "passed", "message": "", "details": "",
         "points": 3.0, "max_points": 3.0, "bonus": false, "cases_passed": 2, "cases_total": 2, "cases": []},
        {"task": "optimized", "function": "saxpy_optimized", "status": "wrong_result", "hidden_case": true,
         "message": "case 41x59 (primes): 12 of 2419 elements differ",
         "details": "wrong in 1 of 12 cases: 41x59 (primes) (hidden case)", "points": 0.0, "max_points": 7.0,
         "bonus": false, "cases_passed": 11, "cases_total": 12,
         "cases": [{"name": "41x59 (primes)", "passed": false, "hidden": true, "message": "41x59 differs",
                    "details": "row 3"}]}]}]
  })json");
}

}  // namespace

TEST_CASE("Gradescope results give every task its name, score, maximum and output, and the totals") {
  const json r = cli::gradescope_results(record_with_hidden_failure().get<cli::StudentRecord>());
  CHECK(r["score"] == 3.0);
  CHECK(r["max_score"] == 10.0);
  REQUIRE(r["tests"].size() == 2);
  CHECK(r["tests"][0]["name"] == "01-saxpy / naive (saxpy_naive)");
  CHECK(r["tests"][0]["score"] == 3.0);
  CHECK(r["tests"][1]["max_score"] == 7.0);
  CHECK(r["tests"][1]["status"] == "failed");
  CHECK(r["tests"][1]["output"].get<std::string>().find("wrong result") != std::string::npos);
}

TEST_CASE("what a student sees never names the shape of a hidden case") {
  const auto record = record_with_hidden_failure().get<cli::StudentRecord>();
  const std::string gradescope = cli::gradescope_results(record).dump(), text = cli::feedback_text(record),
                    html = cli::feedback_html(record);
  for (const std::string& seen : {gradescope, text, html}) {
    CHECK(seen.find("41x59") == std::string::npos);
    CHECK(seen.find("2419") == std::string::npos);  // the mismatch report would give the size away
    CHECK(seen.find("does not publish") != std::string::npos);
  }
}

TEST_CASE("the gradebook has a column per lab task and quotes names that would break a CSV or run as a formula") {
  json r = record_with_hidden_failure();
  r["student"] = "=HYPERLINK(\"x\")";
  r["submission"] = "a,b.zip";
  const std::vector<Manifest> labs{saxpy_lab()};
  const std::string csv = cli::gradebook_csv({r.get<cli::StudentRecord>()}, labs);
  CHECK(csv.rfind("student,submission,01-saxpy/naive,01-saxpy/optimized,score,max_score,status,error,findings\n", 0) ==
        0);
  CHECK(csv.find("\"'=HYPERLINK(\"\"x\"\")\",\"a,b.zip\",3,0,3,10,graded,,\n") != std::string::npos);
}

TEST_CASE("the gradebook's findings column lists each task's finding and each divergent-barrier warning") {
  json r = record_with_hidden_failure();
  r["labs"][0]["tasks"][1]["finding"] = "sanitizer";
  r["labs"][0]["warnings"] =
      json::array({"01-saxpy/saxpy.cu:36: __syncthreads() under `if (col < cols)` in kernel t — a barrier every thread "
                   "must reach"});
  const std::vector<Manifest> labs{saxpy_lab()};
  const std::string csv = cli::gradebook_csv({r.get<cli::StudentRecord>()}, labs);
  CHECK(csv.find(",graded,,01-saxpy/optimized: sanitizer; 01-saxpy/saxpy.cu:36: __syncthreads() under `if "
                 "(col < cols)` in kernel t\n") != std::string::npos);
}

TEST_CASE("a student the grader failed for has no points in the gradebook, only 'not graded' and why") {
  const json failed{{"student", "dana"},
                    {"submission", "dana.zip"},
                    {"grader_error", true},
                    {"score", nullptr},
                    {"max_score", 10.0},
                    {"labs", json::array()},
                    {"error", "not graded: the grader failed (the compiler was killed by signal 9)"}};
  json refused = failed;
  refused.erase("grader_error");
  refused["student"] = "erin";
  refused["submission"] = "erin.zip";
  refused["score"] = 0.0;
  refused["error"] = "erin.zip: none of the lab files is there";
  const std::vector<Manifest> labs{saxpy_lab()};
  const std::string csv =
      cli::gradebook_csv({failed.get<cli::StudentRecord>(), refused.get<cli::StudentRecord>()}, labs);
  CHECK(csv.find(
            "dana,dana.zip,,,,10,not graded,not graded: the grader failed (the compiler was killed by signal 9),\n") !=
        std::string::npos);
  INFO(csv);
  CHECK(csv.find("erin,erin.zip,0,0,0,10,refused,erin.zip: none of the lab files is there,\n") != std::string::npos);
}
