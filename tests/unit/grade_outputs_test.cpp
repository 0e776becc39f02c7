// The per-student outputs of `gpulab grade` and the pieces of submission handling that need no device.
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

TEST_CASE("student names come from the folder or archive name, made safe for paths") {
  CHECK(cli::student_name("subs/alice.tar.gz") == "alice");
  CHECK(cli::student_name("subs/Bob Smith.zip") == "Bob_Smith");
  CHECK(cli::student_name("subs/carol") == "carol");
  CHECK(cli::student_name("subs/..zip") == "_.");
}

TEST_CASE("a misnamed file is reported with the name it was found under") {
  const std::vector<std::string> files{"labs/02-transpose/Transpose.cu", "labs/02-transpose/README.md", "notes.txt"};
  const auto close = cli::near_misses(files, "labs/02-transpose/transpose.cu");
  REQUIRE(close.size() == 1);
  CHECK(close[0] == "labs/02-transpose/Transpose.cu");
  CHECK(cli::near_misses({"lab2/transpose.cu"}, "labs/02-transpose/transpose.cu") ==
        std::vector<std::string>{"lab2/transpose.cu"});
}

TEST_CASE("a folder submission takes lab files under a wrapping folder and refuses a link that leaves it") {
  const fs::path root = fs::temp_directory_path() / fmt::format("gpulab-submission-{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root / "alice-repo/labs/02-transpose");
  std::ofstream(root / "alice-repo/labs/02-transpose/transpose.cu") << "// mine\n";
  std::ofstream(root / "alice-repo/labs/02-transpose/transpose.cl") << "// mine\n";
  fs::create_symlink("/etc/hostname", root / "alice-repo/labs/02-transpose/transpose_opencl.cpp");
  const auto files = cli::open_submission(root, root / "unused");
  const Manifest m = load_manifest(fs::path(GPULAB_REPO) / "labs/02-transpose/lab.toml");
  const auto cuda = cli::take_lab_files(files, m, "cuda", root / "taken-cuda");
  CHECK(cuda.complete());
  CHECK(fs::exists(root / "taken-cuda/transpose.cu"));
  const auto opencl = cli::take_lab_files(files, m, "opencl", root / "taken-opencl");
  REQUIRE(opencl.missing.size() == 1);
  CHECK(opencl.missing[0].find("outside the submission") != std::string::npos);
  CHECK_FALSE(fs::exists(root / "taken-opencl/transpose_opencl.cpp"));
  fs::remove_all(root);
}

TEST_CASE(
    "a lab file missing under its name is reported with the near miss, by name in its folder and by path elsewhere") {
  const fs::path root = fs::temp_directory_path() / fmt::format("gpulab-near-miss-{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root / "sub/labs/02-transpose");
  fs::create_directories(root / "sub/lab2");
  std::ofstream(root / "sub/labs/02-transpose/Transpose.cu") << "// mine\n";
  std::ofstream(root / "sub/lab2/transpose.cl") << "// mine\n";
  const auto files = cli::open_submission(root / "sub", root / "unused");
  const Manifest m = load_manifest(fs::path(GPULAB_REPO) / "labs/02-transpose/lab.toml");
  const auto cuda = cli::take_lab_files(files, m, "cuda", root / "taken-cuda");
  REQUIRE(cuda.missing.size() == 1);
  CHECK(cuda.missing[0] == "missing labs/02-transpose/transpose.cu (found Transpose.cu, expected transpose.cu)");
  const auto opencl = cli::take_lab_files(files, m, "opencl", root / "taken-opencl");
  CHECK(
      std::find(
          opencl.missing.begin(), opencl.missing.end(),
          "missing labs/02-transpose/transpose.cl (found it at lab2/transpose.cl: it must be in labs/02-transpose/)") !=
      opencl.missing.end());
  fs::remove_all(root);
}

TEST_CASE("something that is neither a folder nor an archive is refused with what a submission must be") {
  const fs::path file = fs::temp_directory_path() / fmt::format("gpulab-submission-{}.txt", ::getpid());
  std::ofstream(file) << "hello";
  CHECK_THROWS_WITH_AS(cli::open_submission(file, fs::temp_directory_path()),
                       doctest::Contains("not a folder, .zip or .tar.gz"), cli::SubmissionError);
  fs::remove(file);
}

TEST_CASE("a CUDA batch grades three submissions per GPU by default, one per 4 cores at most, and OpenCL one") {
  using gpulab::cli::default_jobs;
  CHECK(default_jobs("cuda", "", 1, 16) == 3);  // one H100, 16 cores: two compile while one runs
  CHECK(default_jobs("cuda", "", 2, 32) == 6);
  CHECK(default_jobs("cuda", "", 8, 16) == 4);  // the cores run out first
  CHECK(default_jobs("cuda", "", 1, 2) == 1);
  CHECK(default_jobs("cuda", "0", 2, 32) == 1);  // a chosen device: one lock, one job
  CHECK(default_jobs("cuda", "", 0, 16) == 1);
  CHECK(default_jobs("opencl", "", 2, 32) == 1);  // PoCL timings are fair only alone
}
