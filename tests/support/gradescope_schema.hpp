// Test support: a results.json checked against the fields and types of the Gradescope autograder
// specification (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
#pragma once
#include <doctest/doctest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace gpulab::testing {

using nlohmann::json;

// Every key one the specification defines, with the type it gives.
inline void check_gradescope_schema(const json& r) {
  const std::set<std::string> top{"score",       "execution_time",     "output",          "output_format",
                                  "visibility",  "stdout_visibility",  "extra_data",      "tests",
                                  "leaderboard", "test_output_format", "test_name_format"};
  const std::set<std::string> visibilities{"hidden", "after_due_date", "after_published", "visible"};
  REQUIRE(r.is_object());
  for (const auto& [key, value] : r.items()) CHECK_MESSAGE(top.count(key), key);
  CHECK((r.contains("score") || !r["tests"].empty()));  // the total, or every test's score
  if (r.contains("score")) CHECK(r["score"].is_number());
  if (r.contains("execution_time")) CHECK(r["execution_time"].is_number_integer());
  if (r.contains("output")) CHECK(r["output"].is_string());
  const std::set<std::string> test_keys{"score",  "max_score",     "status", "name",       "name_format", "number",
                                        "output", "output_format", "tags",   "visibility", "extra_data"};
  for (const auto& t : r["tests"]) {
    for (const auto& [key, value] : t.items()) CHECK_MESSAGE(test_keys.count(key), key);
    CHECK(t["score"].is_number());
    CHECK(t["max_score"].is_number());
    CHECK(t["name"].is_string());
    CHECK(t["output"].is_string());
    CHECK((t["status"] == "passed" || t["status"] == "failed"));
    CHECK(visibilities.count(t["visibility"].get<std::string>()));
  }
  if (r.contains("leaderboard"))
    for (const auto& e : r["leaderboard"]) {
      for (const auto& [key, value] : e.items()) CHECK((key == "name" || key == "value" || key == "order"));
      CHECK(e["name"].is_string());
      CHECK((e["value"].is_number() || e["value"].is_string()));
      if (e.contains("order")) CHECK((e["order"] == "asc" || e["order"] == "desc"));
    }
}

}  // namespace gpulab::testing
