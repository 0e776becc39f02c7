#include "check_cache.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "files.hpp"
#include "history.hpp"
#include "sha256.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

std::string check_key(const Toolchain& tc, const Manifest& lab, const CheckSelection& selection,
                      const DeviceInfo& device) {
  const auto files = lab.files.find(selection.backend);
  Sha256 headers;  // what the student's files include besides each other
  for (const char* header : {"cuda.hpp", "opencl.hpp"})
    headers.update_file(tc.repo / "common" / "include" / "gpulab" / "student" / header);
  const json key = {
      {"lab", lab.id},
      {"backend", selection.backend},
      {"source", selection.source.string()},
      {"tasks", selection.tasks},
      {"seed", selection.explicit_seed},
      {"timeout", selection.timeout},
      {"device", {device.backend, device.index, device.name, device.platform, device.details, device.bus_id}},
      {"grader", grader_version(tc, {lab}, selection.backend)},
      {"student_headers", headers.hex()},
      {"files", files == lab.files.end() ? "" : lab_files_hash(selection.source / lab.id, files->second)}};
  Sha256 h;
  h.update(key.dump());
  return h.hex();
}

bool worth_keeping(const LabRun& lab) {
  if (!lab.grader_failure.empty() || lab.tasks.empty()) return false;
  return std::none_of(lab.tasks.begin(), lab.tasks.end(),
                      [](const TaskResult& t) { return t.status == Status::timeout || t.status == Status::error; });
}

std::optional<KeptLab> CheckCache::find(const std::string& lab_id, const std::string& key) const {
  const fs::path file = file_for(lab_id);
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  try {
    const json j = json::parse(read_text_or_throw(file));
    if (j.value("key", "") != key) return std::nullopt;
    LabRun lab = j.at("lab").get<LabRun>();
    const auto seed = j.at("seed").get<std::uint64_t>();
    if (lab.calibration.origin.empty()) lab.calibration.origin = "kept";  // the report: "measured N s ago"
    lab.reused = fmt::format(
        "nothing changed since its check at {} (seed {}): these are that check's results. `make check FRESH=1` "
        "runs it again on new random inputs, where a race or a rare case may show",
        j.at("checked_at").get<std::string>(), seed);
    return KeptLab{std::move(lab), seed};
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: ignoring the kept result {} ({}); running the lab\n", file.string(), e.what());
    return std::nullopt;
  }
}

void CheckCache::keep(const std::string& key, const LabRun& lab, std::uint64_t seed, const std::string& when) const {
  const fs::path file = file_for(lab.id);
  try {
    if (!worth_keeping(lab)) {
      fs::remove(file);
      return;
    }
    LabRun kept = lab;
    kept.reused.clear();
    fs::create_directories(dir_);
    write_text_atomically(json{{"key", key}, {"seed", seed}, {"checked_at", when}, {"lab", kept}}.dump() + "\n", file);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: the result of {} was not kept for the next check ({})\n", lab.id, e.what());
  }
}

}  // namespace gpulab::cli
