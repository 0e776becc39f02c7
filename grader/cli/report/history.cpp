#include "history.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "gpulab/metrics.hpp"
#include "lab_run.hpp"
#include "sha256.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// "95% copy", "2.33× naive": the ratio with the short name of what it divides by; a task without a
// bound shows its rate ("5.34 GB/s").
std::string figure(const TaskResult& t, const Calibration& calibration) {
  const Metric* m = find_metric(t.metric);
  if (!m || !t.ratio) return t.rate ? format_rate(*t.rate) + " " + calibration.unit : "";
  const std::string label = column_label(*m, calibration);  // "% copy", "× naive"
  return format_ratio(*m, *t.ratio) + " " + label.substr(label.find(' ') + 1);
}

json task_entry(const TaskResult& t, const Calibration& calibration) {
  json j{{"task", t.task}, {"status", to_string(t.status)}, {"status_label", describe(t.status)}, {"points", t.points}};
  if (t.ratio) j["ratio"] = *t.ratio, j["metric"] = t.metric;
  if (const auto shown = figure(t, calibration); !shown.empty()) j["figure"] = shown;
  if (t.threshold) j["threshold"] = *t.threshold;
  if (t.rate) j["rate"] = *t.rate, j["unit"] = calibration.unit;
  if (t.time_ms) j["time_ms"] = *t.time_ms;
  return j;
}

// "✔ 95% copy", "✔", "✘ too slow 60% copy", "✘ wrong result".
std::string cell(const json& task) {
  const std::string status = task.value("status", "");
  const std::string shown = task.value("figure", "");
  if (status == "passed") return shown.empty() ? "✔" : "✔ " + shown;
  return "✘ " + task.value("status_label", status) + (shown.empty() ? "" : " " + shown);
}

// Columns of code points: every character these tables hold (✔ ✘ × ·) is one column wide.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// One lab and backend: a row per check, a column per task (in the order they first appear).
struct Timeline {
  std::vector<std::string> tasks;
  std::vector<std::vector<std::string>> rows;  // when, files, then one cell per task
};

std::string render_timeline(const std::string& title, const Timeline& t) {
  std::vector<std::string> header{"when (UTC)", "files"};
  header.insert(header.end(), t.tasks.begin(), t.tasks.end());
  std::vector<std::size_t> width(header.size());
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
  };
  measure(header);
  for (const auto& r : t.rows) measure(r);
  std::string out = title + "\n";
  auto line = [&](const std::vector<std::string>& row) {
    std::string text = " ";
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string shown = i < row.size() ? row[i] : "";
      text += " " + shown + std::string(width[i] - display_width(shown), ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(header);
  for (const auto& r : t.rows) line(r);
  return out;
}

}  // namespace

json history_entry(const RunSummary& run, const std::map<std::string, std::string>& file_hashes,
                   const std::string& when_utc) {
  json entry{{"when", when_utc}, {"source", run.source}, {"backend", run.backend}, {"seed", run.seed}};
  entry["labs"] = json::array();
  for (const auto& lab : run.labs) {
    json l{{"id", lab.id}, {"name", lab.name}, {"tasks", json::array()}};
    if (auto it = file_hashes.find(lab.id); it != file_hashes.end()) l["files"] = it->second;
    if (lab.device.is_object()) l["device"] = lab.device.value("name", "");
    for (const auto& t : lab.tasks) l["tasks"].push_back(task_entry(t, lab.calibration));
    entry["labs"].push_back(std::move(l));
  }
  return entry;
}

std::string lab_files_hash(const fs::path& lab_folder, const std::vector<std::string>& files) {
  Sha256 hash;
  for (const auto& f : files) {
    hash.update(f + "\n");
    if (fs::is_regular_file(lab_folder / f)) hash.update_file(lab_folder / f);
    hash.update("\n");
  }
  return hash.hex();
}

void append_history(const fs::path& file, const json& entry) {
  fs::create_directories(file.parent_path());
  const std::string line = entry.dump() + "\n";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + file.string() + " to append to it");
  const auto written = ::write(fd, line.data(), line.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size())) throw std::runtime_error("cannot append to " + file.string());
}

std::vector<json> read_history(const fs::path& file) {
  std::vector<json> entries;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > (64u << 10)) continue;  // no check writes such a line
    auto j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("labs") && j["labs"].is_array())
      entries.push_back(std::move(j));
  }
  return entries;
}

namespace {

// Copies `key` of `from` into `to` when it is a string of at most `max` bytes, or a number.
void copy_string(const json& from, json& to, const char* key, std::size_t max) {
  if (const auto it = from.find(key);
      it != from.end() && it->is_string() && it->get_ref<const std::string&>().size() <= max)
    to[key] = *it;
}
void copy_number(const json& from, json& to, const char* key) {
  if (const auto it = from.find(key); it != from.end() && it->is_number()) to[key] = *it;
}

std::optional<json> sanitized_task(const json& t) {
  if (!t.is_object() || !t.contains("task") || !t["task"].is_string() ||
      t["task"].get_ref<const std::string&>().size() > 40)
    return std::nullopt;
  json out = json::object();
  for (const char* key : {"task", "status", "status_label", "figure", "metric", "unit"}) copy_string(t, out, key, 40);
  for (const char* key : {"points", "ratio", "threshold", "rate", "time_ms"}) copy_number(t, out, key);
  return out;
}

std::optional<json> sanitized_lab(const json& l) {
  if (!l.is_object() || !l.contains("id") || !l["id"].is_string() || l["id"].get_ref<const std::string&>().size() > 64)
    return std::nullopt;
  json out = json::object();
  for (const char* key : {"id", "name", "files", "device"}) copy_string(l, out, key, 80);
  out["tasks"] = json::array();
  if (const auto tasks = l.find("tasks"); tasks != l.end() && tasks->is_array())
    for (const auto& t : *tasks)
      if (const auto kept = sanitized_task(t); kept && out["tasks"].size() < 16) out["tasks"].push_back(*kept);
  return out;
}

}  // namespace

std::optional<json> sanitized_history_entry(const json& entry) {
  if (!entry.is_object() || !entry.contains("labs") || !entry["labs"].is_array()) return std::nullopt;
  json out = json::object();
  copy_string(entry, out, "when", 32);
  copy_string(entry, out, "backend", 16);
  copy_number(entry, out, "seed");
  out["labs"] = json::array();
  for (const auto& l : entry["labs"])
    if (const auto kept = sanitized_lab(l); kept && out["labs"].size() < 16) out["labs"].push_back(*kept);
  if (out["labs"].empty()) return std::nullopt;
  return out;
}

std::string render_history(const std::vector<json>& entries, const std::string& lab) {
  std::map<std::string, Timeline> timelines;  // "02-transpose · opencl" -> its rows
  for (const auto& e : entries)
    for (const auto& l : e["labs"]) {
      if (!l.is_object() || !(lab.empty() || lab_named(l.value("id", ""), l.value("name", ""), lab))) continue;
      Timeline& t = timelines[fmt::format("{} · {}", l.value("id", "?"), e.value("backend", "?"))];
      std::vector<std::string> row{e.value("when", "?").substr(0, 16), l.value("files", "").substr(0, 8)};
      std::replace(row[0].begin(), row[0].end(), 'T', ' ');
      std::vector<std::string> cells(t.tasks.size());
      for (const auto& task : l.value("tasks", json::array())) {
        const std::string name = task.value("task", "?");
        auto it = std::find(t.tasks.begin(), t.tasks.end(), name);
        if (it == t.tasks.end()) it = t.tasks.insert(t.tasks.end(), name), cells.resize(t.tasks.size());
        cells[static_cast<std::size_t>(it - t.tasks.begin())] = cell(task);
      }
      row.insert(row.end(), cells.begin(), cells.end());
      t.rows.push_back(std::move(row));
    }
  if (timelines.empty())
    return lab.empty() ? "no checks recorded yet: each `make check` adds one\n"
                       : fmt::format("no check of lab {} recorded yet: each `make check` adds one\n", lab);
  std::string out;
  for (const auto& [title, t] : timelines) out += (out.empty() ? "" : "\n") + render_timeline(title, t);
  return out;
}

}  // namespace gpulab::cli
