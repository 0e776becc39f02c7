// The console report (one table per lab) and the JSON file of a whole run.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "supervisor.hpp"

namespace gpulab::cli {

struct RunSummary {
  std::string source;  // the folder graded
  std::string backend;
  std::uint64_t seed = 0;
  std::vector<LabRun> labs;

  double points() const;
  double max_points() const;
  // Bonus tasks count in points when passed, never in the maximum, and never fail a run.
  int tasks_passed() const;
  int tasks_total() const;
  bool all_passed() const;
};

// The JSON report of `gpulab check` (with the totals, for readers of the file), and back.
nlohmann::json to_json(const RunSummary& run);
void from_json(const nlohmann::json& j, RunSummary& run);
// Writes via a temporary file and a rename, so a reader never sees half a report.
void write_json_atomically(const nlohmann::json& data, const std::filesystem::path& path);
std::string render_report(const RunSummary& run, bool color);
// The run's outcome in one line, for the end of a `make check` that did not pass (gpulab check
// --outcome): how many required tasks failed, or that none ran; empty when the run passed.
std::string render_outcome(const RunSummary& run);
// A lab's warnings (LabRun::warnings), one "  warning: file:line: ..." line each, yellow with colour;
// empty when there are none.
std::string render_warnings(const std::vector<std::string>& warnings, bool color);

}  // namespace gpulab::cli
