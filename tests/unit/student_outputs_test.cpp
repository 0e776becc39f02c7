// The per-student outputs of `gpulab grade` (student_outputs): Gradescope results, feedback and the gradebook.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "deadlines.hpp"
#include "grade.hpp"
#include "gradescope_schema.hpp"
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
  cli::GradescopeOptions shown_now;
  shown_now.hidden_visibility = "visible";
  const json r = cli::gradescope_results(record_with_hidden_failure().get<cli::StudentRecord>(), shown_now);
  CHECK(r["score"] == 3.0);
  CHECK(r["extra_data"]["max_score"] == 10.0);
  gpulab::testing::check_gradescope_schema(r);
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

TEST_CASE("no terminal escape or control character of a student's code or name reaches what anyone reads") {
  const std::string escapes =
      "\x1b[2J\x1b]0;pwned\x07\x1b[1;31m\xC2\x9B"
      "31m\r";
  json r = record_with_hidden_failure();
  r["student"] = "mallory" + escapes;
  r["submission"] = "mallory" + escapes + ".zip";
  r["notes"] = json::array({"01-saxpy: missing x" + escapes});
  r["labs"][0]["output"] = "printed" + escapes;
  r["labs"][0]["device"] = {{"name", "cpu" + escapes}};
  r["labs"][0]["tasks"][0]["status"] = "compile_error";
  r["labs"][0]["tasks"][0]["message"] = "saxpy.cl does not compile" + escapes;
  r["labs"][0]["tasks"][0]["details"] = "saxpy.cl:3: error: \"" + escapes + "YOU GOT FULL MARKS\"";
  const auto record = r.get<cli::StudentRecord>();
  cli::GradescopeOptions shown_now;
  shown_now.hidden_visibility = "visible";
  const std::vector<Manifest> labs{saxpy_lab()};
  const std::string record_json = json(cli::printable_record(record)).dump();
  for (const std::string& seen :
       {cli::feedback_text(record, shown_now), cli::feedback_html(record, shown_now),
        cli::gradescope_results(record, shown_now).dump(), cli::gradebook_csv({record}, labs), record_json}) {
    CAPTURE(seen);
    CHECK(seen.find('\x1b') == std::string::npos);
    CHECK(seen.find('\x07') == std::string::npos);
    CHECK(seen.find('\r') == std::string::npos);
    CHECK(seen.find("\xC2\x9B") == std::string::npos);
    CHECK(seen.find("\\u001b") == std::string::npos);
    CHECK(seen.find("\\u0007") == std::string::npos);
  }
  CHECK(cli::feedback_text(record, shown_now).find("YOU GOT FULL MARKS") != std::string::npos);  // the text stays
  CHECK(cli::printable_record(record).student == "mallory");  // a name stays on one line
}

TEST_CASE("the gradebook has a column per lab task and quotes names that would break a CSV or run as a formula") {
  json r = record_with_hidden_failure();
  r["student"] = "=HYPERLINK(\"x\")";
  r["submission"] = "a,b.zip";
  const std::vector<Manifest> labs{saxpy_lab()};
  const std::string csv = cli::gradebook_csv({r.get<cli::StudentRecord>()}, labs);
  CHECK(csv.rfind("student,submission,01-saxpy/naive,01-saxpy/"
                  "optimized,score,max_score,status,error,findings,attempts,counted\n",
                  0) == 0);
  CHECK(csv.find("\"'=HYPERLINK(\"\"x\"\")\",\"a,b.zip\",3,0,3,10,graded,,,0,latest\n") != std::string::npos);
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
                 "(col < cols)` in kernel t,0,latest\n") != std::string::npos);
}

TEST_CASE("the gradebook says how many gradings of a student are kept, and that the latest counts") {
  json r = record_with_hidden_failure();
  r["graded_at"] = "2026-11-28T02:54:10Z";
  auto record = r.get<cli::StudentRecord>();
  record.attempts = 3;
  const std::string csv = cli::gradebook_csv({record}, {saxpy_lab()});
  CHECK(csv.find(",graded,,,3,latest (2026-11-28T02:54:10Z)\n") != std::string::npos);
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
  CHECK(csv.find("dana,dana.zip,,,,10,not graded,not graded: the grader failed (the compiler was killed by signal "
                 "9),,0,none (not graded)\n") != std::string::npos);
  INFO(csv);
  CHECK(csv.find("erin,erin.zip,0,0,0,10,refused,erin.zip: none of the lab files is there,,0,latest\n") !=
        std::string::npos);
}

TEST_CASE(
    "a task graded on hidden cases is two Gradescope tests: its visible cases now, its points after the due date") {
  json j = record_with_hidden_failure();
  j["labs"][0]["tasks"][0]["cases"] = json::parse(R"([{"name": "8x8", "passed": true, "hidden": false},
                                                      {"name": "97x3", "passed": true, "hidden": true}])");
  const auto record = j.get<cli::StudentRecord>();
  const json r = cli::gradescope_results(record);
  gpulab::testing::check_gradescope_schema(r);
  CHECK_FALSE(r.contains("score"));  // Gradescope sums the tests, and shows the sum when it shows them all
  REQUIRE(r["tests"].size() == 4);
  // naive passed everywhere; optimized failed only in a hidden case: its visible cases passed.
  CHECK(r["tests"][0]["name"] == "01-saxpy / naive (saxpy_naive): the cases you can run");
  CHECK(r["tests"][0]["max_score"] == 0.0);
  CHECK(r["tests"][0]["visibility"] == "visible");
  CHECK(r["tests"][1]["score"] == 3.0);
  CHECK(r["tests"][1]["visibility"] == "after_due_date");
  CHECK(r["tests"][2]["status"] == "passed");
  CHECK(r["tests"][2]["visibility"] == "visible");
  CHECK(r["tests"][3]["status"] == "failed");
  CHECK(r["tests"][3]["score"] == 0.0);
  CHECK(r["tests"][3]["max_score"] == 7.0);
  CHECK(r["tests"][3]["visibility"] == "after_due_date");
  double sum = 0;
  for (const auto& t : r["tests"]) sum += t["score"].get<double>();
  CHECK(sum == 3.0);

  const std::string feedback = cli::feedback_text(record);
  CHECK(feedback.find("On Gradescope, the points of 01-saxpy / naive, 01-saxpy / optimized (graded on cases the "
                      "course does not publish) are shown after the due date") != std::string::npos);
  cli::GradescopeOptions published;
  published.hidden_visibility = "after_published";
  CHECK(cli::gradescope_results(record, published)["tests"][3]["visibility"] == "after_published");
  published.hidden_visibility = "tomorrow";
  CHECK_THROWS_WITH(cli::gradescope_results(record, published), doctest::Contains("after_due_date, after_published"));
}

TEST_CASE("the leaderboard lists the rates of tasks that passed without an integrity finding, and only when asked") {
  json j = record_with_hidden_failure();
  j["labs"][0]["calibration"] = {{"unit", "GB/s"}, {"rates", {{"copy", 2900.0}}}, {"copy_gbps", 2900.0}};
  j["labs"][0]["tasks"][0]["rate"] = 812.5;
  j["labs"][0]["tasks"][1]["rate"] = 2600.0;  // wrong in a hidden case only
  j["labs"].push_back(j["labs"][0]);
  j["labs"][1]["id"] = "02-copy";
  j["labs"][1]["tasks"][0]["finding"] = "faster_than_device";
  j["labs"][1]["tasks"][1]["status"] = "timeout";
  j["labs"][1]["tasks"][1]["hidden_case"] = false;
  const auto record = j.get<cli::StudentRecord>();
  CHECK_FALSE(cli::gradescope_results(record).contains("leaderboard"));
  cli::GradescopeOptions o;
  o.leaderboard = true;
  o.hidden_visibility = "visible";  // every result shown now: the task that failed a hidden case is off the board
  const json r = cli::gradescope_results(record, o);
  gpulab::testing::check_gradescope_schema(r);
  REQUIRE(r["leaderboard"].size() == 1);
  CHECK(r["leaderboard"][0]["name"] == "01-saxpy / naive (GB/s)");
  CHECK(r["leaderboard"][0]["value"] == 812.5);
  CHECK(r["leaderboard"][0]["order"] == "desc");
  // With hidden results shown after the due date, the board (shown at once) must not give them away:
  // the task whose visible cases passed is on it.
  o.hidden_visibility = "after_due_date";
  const json later = cli::gradescope_results(record, o);
  REQUIRE(later["leaderboard"].size() == 2);
  CHECK(later["leaderboard"][1]["name"] == "01-saxpy / optimized (GB/s)");
  CHECK(later["output"].get<std::string>().find("show their points after the due date") != std::string::npos);
  o.hidden_visibility = "after_published";
  CHECK(cli::gradescope_results(record, o)["output"].get<std::string>().find("once the grades are published") !=
        std::string::npos);
}

namespace {
cli::SubmissionTime at(std::time_t t) { return {t, "file time"}; }
}  // namespace

TEST_CASE(
    "due dates: extensions and grace override the course's, late days cost their percentage, past the limit all") {
  const fs::path csv = fs::temp_directory_path() / fmt::format("gpulab-deadlines-{}.csv", ::getpid());
  std::ofstream(csv) << "student,due,grace_hours,penalty_per_day,max_late_days,submitted\n"
                        "*,2026-12-01T23:59:00+01:00,1,10,3,\n"
                        "alice,2026-12-04T23:59:00+01:00,,,,\n"
                        "bob,,,,,2026-12-02T08:00:00Z\n"
                        "\n";
  const auto d = cli::read_deadlines(csv);
  const std::time_t due = cli::parse_iso_time("2026-12-01T22:59:00Z");
  CHECK(cli::iso_time(due) == "2026-12-01T22:59:00Z");
  // On time, and within the hour of grace.
  CHECK(cli::lateness_of(d, "carol", at(due - 60))->penalty == 0);
  CHECK(cli::lateness_of(d, "carol", at(due + 3000))->late_days == 0);
  // 2 hours late: one started day, 10%; 2 days and a bit: 30%; 4 days: past the limit of 3, everything.
  CHECK(cli::lateness_of(d, "carol", at(due + 7200))->penalty == doctest::Approx(0.1));
  CHECK(cli::lateness_of(d, "carol", at(due + 2 * 86400 + 7200))->late_days == 3);
  CHECK(cli::lateness_of(d, "carol", at(due + 2 * 86400 + 7200))->penalty == doctest::Approx(0.3));
  CHECK(cli::lateness_of(d, "carol", at(due + 4 * 86400))->penalty == 1.0);
  // alice's extension; bob's time from the CSV, not the file's: 9 h late, minus the hour of grace.
  CHECK(cli::lateness_of(d, "alice", at(due + 2 * 86400))->penalty == 0);
  const auto bob = *cli::lateness_of(d, "bob", at(due - 86400));
  CHECK(bob.submitted_from.empty());  // the CSV's time
  CHECK(bob.late_days == 1);

  // The gradebook: raw score, lateness and the final score.
  json r = record_with_hidden_failure();
  r["student"] = "carol";
  const std::map<std::string, cli::Lateness> late{{"carol", *cli::lateness_of(d, "carol", at(due + 7200))}};
  const std::string gradebook = cli::gradebook_csv({r.get<cli::StudentRecord>()}, {saxpy_lab()}, &late);
  CHECK(gradebook.find(",submitted,due,late_days,late_penalty,final_score,attempts,counted\n") != std::string::npos);
  CHECK(gradebook.find(",2026-12-02T00:59:00Z (file time),2026-12-01T22:59:00Z,1,10,2.7,0,latest\n") !=
        std::string::npos);
  fs::remove(csv);
}

TEST_CASE(
    "a due-date CSV with a time without a time zone, an unknown column or a bad number is refused, naming the line") {
  const fs::path csv = fs::temp_directory_path() / fmt::format("gpulab-bad-deadlines-{}.csv", ::getpid());
  std::ofstream(csv) << "student,due\n*,2026-12-01 23:59\n";
  CHECK_THROWS_WITH(cli::read_deadlines(csv), doctest::Contains(":2: due: '2026-12-01 23:59' is not a time with a "
                                                                "time zone: write it as 2026-12-01T23:59:00+01:00"));
  std::ofstream(csv) << "student,deadline\n";
  CHECK_THROWS_WITH(cli::read_deadlines(csv), doctest::Contains(":1: unknown column 'deadline'"));
  std::ofstream(csv) << "student,due,penalty_per_day\n*,2026-12-01T23:59Z,-5\n";
  CHECK_THROWS_WITH(cli::read_deadlines(csv), doctest::Contains(":2: penalty_per_day '-5' must be a number"));
  CHECK_THROWS_WITH(cli::read_deadlines(csv.string() + ".missing"), doctest::Contains("cannot be read"));
  fs::remove(csv);
}

TEST_CASE("a submission is dated by its newest file, and its own .git is never run") {
  const fs::path root = fs::temp_directory_path() / fmt::format("gpulab-handed-in-{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root / "clone" / ".git");
  // A config that would run a program of the student's if the grader ran git there.
  std::ofstream(root / "clone" / ".git" / "config")
      << "[core]\n\tfsmonitor = touch " << (root / "ran").string() << "\n[log]\n\tshowSignature = true\n";
  std::ofstream(root / "clone" / "kernel.cu") << "// mine\n";
  const auto t = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(root / "clone" / "kernel.cu", t);
  fs::last_write_time(root / "clone" / ".git" / "config", t);
  const auto handed_in = cli::submission_time(root / "clone");
  CHECK(handed_in.source == "file time");
  CHECK(std::abs(std::difftime(std::time(nullptr), handed_in.time) - 48 * 3600) < 120);
  CHECK_FALSE(fs::exists(root / "ran"));
  fs::remove_all(root);
}

TEST_CASE(
    "a due-date CSV from a spreadsheet (byte order mark) reads; a date not in the calendar and half days do not") {
  const fs::path csv = fs::temp_directory_path() / fmt::format("gpulab-bom-deadlines-{}.csv", ::getpid());
  std::ofstream(csv) << "\xEF\xBB\xBFstudent,due\n*,2026-12-01T23:59:00Z\n";
  CHECK(cli::iso_time(*cli::read_deadlines(csv).everyone.due) == "2026-12-01T23:59:00Z");
  std::ofstream(csv) << "student,due\n*,2026-02-30T12:00Z\n";
  CHECK_THROWS_WITH(cli::read_deadlines(csv), doctest::Contains("'2026-02-30T12:00Z' is not a date of the calendar"));
  std::ofstream(csv) << "student,due,max_late_days\n*,2026-12-01T23:59Z,2.5\n";
  CHECK_THROWS_WITH(cli::read_deadlines(csv), doctest::Contains("max_late_days '2.5' must be a whole number of days"));
  fs::remove(csv);
}

TEST_CASE("an empty submission folder is dated by its own time and says it has no files, never 1970") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpulab-empty-submission-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "labs");  // folders, but no file
  const auto when = cli::submission_time(dir);
  CHECK(when.time > cli::parse_iso_time("2020-01-01T00:00:00Z"));
  CHECK(when.source == "folder time, no files");
  std::ofstream(dir / "labs/a.cu") << "x";
  CHECK(cli::submission_time(dir).source == "file time");
  fs::remove_all(dir);
}
