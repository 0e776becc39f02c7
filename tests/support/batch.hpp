// Test support for batch grading: a folder of submissions made from the solutions or the skeletons,
// `gpulab grade` run on it, and each student's result.json.
#pragma once
#include <fmt/format.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace gpulab::testing {

struct Batch {
  fs::path submissions, out;
  explicit Batch(const std::string& name)
      : submissions(fs::path(GPULAB_SCRATCH) / name / "submissions"), out(fs::path(GPULAB_SCRATCH) / name / "out") {
    fs::remove_all(submissions.parent_path());
    fs::create_directories(submissions);
  }
  // A submission holding one lab folder (`lab`, e.g. "02-x") copied from `tree` ("solutions", "labs").
  void add_folder(const std::string& student, const std::string& tree, const std::string& lab) {
    fs::create_directories(submissions / student / "labs");
    fs::copy(tree_path(tree) / lab, submissions / student / "labs" / lab, fs::copy_options::recursive);
  }
  int grade(const std::string& args, std::string& output) const {
    return run_command(fmt::format("'{}' grade --submissions '{}' --out '{}' {}", GPULAB_CLI, submissions.string(),
                                   out.string(), args),
                       output);
  }
  nlohmann::json result(const std::string& student) const {
    return nlohmann::json::parse(read_file(out / "students" / student / "result.json"));
  }
};

// Each task's status in a result.json, by task name.
inline std::map<std::string, std::string> statuses(const nlohmann::json& result) {
  std::map<std::string, std::string> out;
  for (const auto& l : result["labs"])
    for (const auto& t : l["tasks"]) out[t["task"]] = t["status"];
  return out;
}

}  // namespace gpulab::testing
