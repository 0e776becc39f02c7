// The history of a student's checks (`gpulab history`, `make history`): every `gpulab check` appends
// one line to build/history.jsonl: when, which folder, backend and device, and per lab the hash of the
// student's files with each task's status and figures. Printed as a timeline per lab, it shows the road
// from naive to fast (and which edit broke what); the file can be handed in with a submission.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report.hpp"

namespace gpulab::cli {

// One check as a history line. `file_hashes`: lab id -> hash of its student files (lab_files_hash).
nlohmann::json history_entry(const RunSummary& run, const std::map<std::string, std::string>& file_hashes,
                             const std::string& when_utc);

// The SHA-256 of a lab's student files for a backend, names included (a missing file counts as empty).
std::string lab_files_hash(const std::filesystem::path& lab_folder, const std::vector<std::string>& files);

// Appends `entry` as one line (a single write, so concurrent checks do not interleave).
void append_history(const std::filesystem::path& file, const nlohmann::json& entry);

// Every well-formed line of the file, oldest first; a torn or foreign line, or one over 64 KiB, is
// skipped. None: empty.
std::vector<nlohmann::json> read_history(const std::filesystem::path& file);

// A history line from elsewhere (a student's submission: untrusted) rebuilt from the fields a line
// holds, each of its type and cut to a sane length (a few labs and tasks, short strings); empty when
// it has no lab left. What the grader keeps, renders and hands to the summary page.
std::optional<nlohmann::json> sanitized_history_entry(const nlohmann::json& entry);

// The timeline of one lab (or of every lab, `lab` empty: its folder, name or number), one row per
// check that ran it: when, the files' hash, and each task's result ("✔ 95% copy", "✘ wrong result").
std::string render_history(const std::vector<nlohmann::json>& entries, const std::string& lab);

}  // namespace gpulab::cli
