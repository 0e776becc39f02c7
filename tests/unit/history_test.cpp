// The history of checks (history.hpp): entries, the file they go to, the timeline.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "files.hpp"
#include "history.hpp"

using namespace gpulab;
using namespace gpulab::cli;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

TaskResult task(const std::string& name, Status status, std::optional<double> ratio = std::nullopt) {
  TaskResult t;
  t.task = name;
  t.status = status;
  if (ratio) t.metric = "copy_fraction", t.ratio = ratio, t.threshold = 0.75;
  return t;
}

RunSummary run_of(std::vector<TaskResult> tasks) {
  LabRun lab;
  lab.id = "07-demo", lab.name = "demo", lab.backend = "opencl";
  lab.calibration.unit = "GB/s";
  lab.calibration.rates = {{"copy", 100.0}};
  lab.tasks = std::move(tasks);
  RunSummary run;
  run.source = "/course/labs", run.backend = "opencl", run.seed = 7;
  run.labs = {lab};
  return run;
}

}  // namespace

TEST_CASE("the history shows each check of a lab as a row, oldest first, with each task's result and figure") {
  const auto first = history_entry(run_of({task("naive", Status::passed), task("tiled", Status::not_implemented)}),
                                   {{"07-demo", "aaaaaaaa1111"}}, "2026-11-24T08:00:00Z");
  const auto second = history_entry(run_of({task("naive", Status::passed), task("tiled", Status::too_slow, 0.6)}),
                                    {{"07-demo", "bbbbbbbb2222"}}, "2026-11-24T09:30:00Z");
  const auto third = history_entry(run_of({task("naive", Status::passed), task("tiled", Status::passed, 0.93)}),
                                   {{"07-demo", "cccccccc3333"}}, "2026-11-24T10:15:00Z");
  CHECK(third["labs"][0]["files"] == "cccccccc3333");
  CHECK(third["labs"][0]["tasks"][1]["figure"] == "93% copy");

  const std::string shown = render_history({first, second, third}, "demo");
  INFO(shown);
  CHECK(shown.find("07-demo · opencl") != std::string::npos);
  const auto row1 = shown.find("2026-11-24 08:00 aaaaaaaa"), row2 = shown.find("2026-11-24 09:30 bbbbbbbb"),
             row3 = shown.find("2026-11-24 10:15 cccccccc");
  REQUIRE(row1 != std::string::npos);
  REQUIRE(row2 != std::string::npos);
  REQUIRE(row3 != std::string::npos);
  CHECK(row1 < row2);
  CHECK(row2 < row3);
  CHECK(shown.find("✘ not implemented", row1) < row2);
  CHECK(shown.find("✘ too slow 60% copy", row2) < row3);
  CHECK(shown.find("✔ 93% copy", row3) != std::string::npos);
  // The same lab by number; another lab has no rows.
  CHECK(render_history({first}, "7") == render_history({first}, "07-demo"));
  CHECK(render_history({first}, "transpose").find("no check of lab transpose recorded yet") != std::string::npos);
}

TEST_CASE("the history file takes one line per check, and a torn line does not hide the others") {
  ScratchFolder folder("history-test");
  const fs::path file = folder.path() / "build" / "history.jsonl";
  CHECK(read_history(file).empty());
  append_history(file, history_entry(run_of({task("naive", Status::passed)}), {}, "2026-11-24T08:00:00Z"));
  std::ofstream(file, std::ios::app) << "{\"when\": \"2026-11-24T08:01";  // a check killed while writing
  std::ofstream(file, std::ios::app) << "\n";
  append_history(file, history_entry(run_of({task("naive", Status::wrong_result)}), {}, "2026-11-24T08:02:00Z"));
  const auto entries = read_history(file);
  REQUIRE(entries.size() == 2);
  CHECK(entries[1]["labs"][0]["tasks"][0]["status"] == "wrong_result");
}

TEST_CASE("a lab's files hash changes with their contents and names, and a missing file counts as empty") {
  ScratchFolder folder("history-hash");
  std::ofstream(folder.path() / "k.cl") << "kernel void k() {}\n";
  const auto before = lab_files_hash(folder.path(), {"k.cl", "host.cpp"});
  CHECK(before.size() == 64);
  CHECK(lab_files_hash(folder.path(), {"k.cl", "host.cpp"}) == before);
  std::ofstream(folder.path() / "k.cl") << "kernel void k() { }\n";
  CHECK(lab_files_hash(folder.path(), {"k.cl", "host.cpp"}) != before);
  CHECK(lab_files_hash(folder.path(), {"k.cl"}) != lab_files_hash(folder.path(), {"k.cl", "host.cpp"}));
}

TEST_CASE("a history line from a submission keeps only known fields of their types, short, and few") {
  const json good = json::parse(R"({"when": "2026-11-21T10:30:00Z", "backend": "cuda", "source": "/home/dana",
      "labs": [{"id": "02-transpose", "name": "transpose", "files": "bbbb", "extra": [[[1]]],
                "tasks": [{"task": "naive", "status": "passed", "figure": "30% copy", "ratio": 0.3, "x": {"y": 1}}]}]})");
  const auto kept = gpulab::cli::sanitized_history_entry(good);
  REQUIRE(kept);
  CHECK_FALSE(kept->contains("source"));  // a path on the student's machine
  CHECK((*kept)["labs"][0] == json::parse(R"({"id": "02-transpose", "name": "transpose", "files": "bbbb",
      "tasks": [{"task": "naive", "status": "passed", "figure": "30% copy", "ratio": 0.3}]})"));

  // Wrong types and a 4 MB name are dropped, not thrown on.
  const json hostile = json::parse(R"({"when": 1, "labs": [5, {"id": 1}, {"id": "01-matmul", "tasks": 5},
      {"id": "02-transpose", "tasks": ["a", {"task": 3}, {"task": "ok", "status": 1, "points": "x"}]}]})");
  const auto cleaned = gpulab::cli::sanitized_history_entry(hostile);
  REQUIRE(cleaned);
  CHECK_FALSE(cleaned->contains("when"));
  REQUIRE((*cleaned)["labs"].size() == 2);
  CHECK((*cleaned)["labs"][0]["tasks"].empty());
  CHECK((*cleaned)["labs"][1]["tasks"] == json::parse(R"([{"task": "ok"}])"));
  json nested = json::parse(R"({"labs": [{"id": "02-transpose"}]})");
  nested["labs"][0]["tasks"] = json::array({{{"task", std::string(4 << 20, 'A')}}});
  CHECK((*gpulab::cli::sanitized_history_entry(nested))["labs"][0]["tasks"].empty());
  CHECK_FALSE(gpulab::cli::sanitized_history_entry(json::parse("[1]")));
  CHECK_FALSE(gpulab::cli::sanitized_history_entry(json::parse(R"({"labs": [{"no": "id"}]})")));
  CHECK(gpulab::cli::render_history({*cleaned}, "02-transpose").find("ok") != std::string::npos);

  // A line of 100,000 nested brackets (200 KB) is no check's: read_history skips it unparsed.
  const fs::path file = fs::temp_directory_path() / "gpulab-history-deep.jsonl";
  std::ofstream(file) << R"({"labs": [{"id": "x", "n": )" << std::string(100000, '[') << std::string(100000, ']')
                      << "}]}\n"
                      << good.dump() << "\n";
  const auto lines = gpulab::cli::read_history(file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["when"] == "2026-11-21T10:30:00Z");
  fs::remove(file);
}
