// Test support for the corpus of cheats (tests/fixtures/cheats): what its expected.toml says each
// submission must get, and why a graded result does not meet that. The format is described at the
// top of tests/fixtures/cheats/expected.toml.
#pragma once
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <nlohmann/json.hpp>

namespace gpulab::testing::cheats {

inline std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A TOML string or array of strings as a list; nothing for an absent key.
inline std::vector<std::string> strings_of(const toml::node* node) {
  std::vector<std::string> out;
  if (!node) return out;
  if (auto s = node->value<std::string>()) out.push_back(*s);
  if (auto a = node->as_array())
    for (const auto& e : *a)
      if (auto s = e.value<std::string>()) out.push_back(*s);
  return out;
}

inline bool contains_all(const std::string& text, const std::vector<std::string>& parts) {
  const std::string haystack = lowered(text);
  return std::all_of(parts.begin(), parts.end(),
                     [&](const std::string& p) { return haystack.find(lowered(p)) != std::string::npos; });
}

inline bool contains_any(const std::string& text, const std::vector<std::string>& parts) {
  const std::string haystack = lowered(text);
  return parts.empty() || std::any_of(parts.begin(), parts.end(), [&](const std::string& p) {
           return haystack.find(lowered(p)) != std::string::npos;
         });
}

// Graded as a correct submission: every case right and passed; on a CPU (OpenCL) a correct task may
// also be too slow, since two jobs at once disturb each other's timings.
inline bool graded_correct(const nlohmann::json& task, const std::string& backend) {
  const std::string status = task.value("status", "");
  const bool all_cases = task.value("cases_passed", -1) == task.value("cases_total", -2);
  return all_cases && (status == "passed" || (backend == "opencl" && status == "too_slow"));
}

// Does `task` meet one outcome of the expectation ({ status, message, message_any, backend })?
inline bool meets(const nlohmann::json& task, const toml::table& outcome, const std::string& backend) {
  const std::string want = outcome["status"].value<std::string>().value_or("");
  const std::string status = task.value("status", "");
  const std::string text = task.value("message", "") + "\n" + task.value("details", "");
  bool status_ok = false;
  if (want == "correct") return graded_correct(task, backend);
  if (want == "any_failure")
    status_ok = status != "passed" && task.value("points", 0.0) == 0.0;
  else
    status_ok = status == want;
  return status_ok && contains_all(text, strings_of(outcome.get("message"))) &&
         contains_any(text, strings_of(outcome.get("message_any")));
}

// The outcomes a task may have on `backend`: the task's own list, else the lab's `every_task`
// list; outcomes for the other backend only do not count. None left: the task must be correct.
inline std::vector<const toml::table*> outcomes_for(const toml::table& expected, const std::string& task,
                                                    const std::string& backend) {
  const toml::array* list = expected.get_as<toml::array>(task);
  if (!list) list = expected.get_as<toml::array>("every_task");
  std::vector<const toml::table*> out;
  if (list)
    for (const auto& node : *list)
      if (const auto* o = node.as_table())
        if (auto only = (*o)["backend"].value<std::string>(); !only || *only == backend) out.push_back(o);
  return out;
}

// Why the result of one cheat does not meet its expectation, or "" when it does.
inline std::string mismatch(const nlohmann::json& result, const toml::table& expected, const std::string& backend) {
  if (!result.value("error", "").empty()) return "refused as a whole: " + result.value("error", "");
  const std::string lab = expected["lab"].value<std::string>().value_or("?");
  const nlohmann::json* graded = nullptr;
  for (const auto& l : result["labs"])
    if (l.value("name", "") == lab) graded = &l;
  if (!graded) return fmt::format("no result for lab {}", lab);
  if ((*graded)["tasks"].empty()) return fmt::format("lab {} has no task results", lab);
  std::string why;
  for (const auto& task : (*graded)["tasks"]) {
    const std::string name = task.value("task", "");
    const auto outcomes = outcomes_for(expected, name, backend);
    const bool ok = outcomes.empty() ? graded_correct(task, backend)
                                     : std::any_of(outcomes.begin(), outcomes.end(),
                                                   [&](const toml::table* o) { return meets(task, *o, backend); });
    if (!ok)
      why += fmt::format("{}/{}: got {} ({}/{} cases) \"{}\"; ", lab, name, task.value("status", "?"),
                         task.value("cases_passed", 0), task.value("cases_total", 0),
                         (task.value("message", "") + " " + task.value("details", "")).substr(0, 300));
  }
  return why;
}

}  // namespace gpulab::testing::cheats
