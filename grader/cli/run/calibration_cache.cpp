#include "calibration_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "files.hpp"
#include "sha256.hpp"
#include "toolchain.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

json calibration_cache_key(const DeviceInfo& device, const std::string& grader_version, const Manifest& lab) {
  const auto cases = lab.cases_for(device.device_class);
  const auto timing = std::find_if(cases.begin(), cases.end(), [](const Case* c) { return c->timing; });
  return {{"backend", device.backend},
          {"index", device.index},
          {"name", device.name},
          {"platform", device.platform},
          {"details", device.details},
          {"grader_version", grader_version},
          {"lab", lab.id},
          {"timing_case", timing == cases.end() ? "" : (*timing)->name},
          {"timing_params", timing == cases.end() ? json() : (*timing)->params}};
}

fs::path CalibrationCache::file_for(const json& key) const {
  Sha256 h;
  h.update(key.dump());
  return dir_ / (h.hex().substr(0, 16) + ".json");
}

std::optional<Calibration> CalibrationCache::find(const json& key, double now) const {
  const fs::path file = file_for(key);
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  Calibration c;
  try {
    const json j = json::parse(read_text_or_throw(file));
    // Another key with the same file name (a hash collision) is a miss, not damage.
    if (!j.is_object() || !j.contains("key")) throw std::invalid_argument("no key");
    if (j["key"] != key) return std::nullopt;
    c = calibration_from_json(j.at("calibration"));
    if (!c.measured_at) throw std::invalid_argument("no measured_at");
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpulab: ignoring the calibration cache file {} ({}); measuring again\n", file.string(),
               e.what());
    return std::nullopt;
  }
  // Older than the lifetime, or measured "in the future" (the clock was set back): measure again.
  const double age = now - *c.measured_at;
  if (age > lifetime_s_ || age < -60) return std::nullopt;
  c.origin = "cache";
  return c;
}

void CalibrationCache::save(const json& key, const Calibration& calibration) const {
  if (!calibration.measured_at) throw std::invalid_argument("a cached calibration needs measured_at");
  Calibration kept = calibration;
  kept.origin.clear();  // what it was when measured; find() says "cache"
  fs::create_directories(dir_);
  write_text_atomically(json{{"key", key}, {"calibration", calibration_to_json(kept)}}.dump(2) + "\n", file_for(key));
}

std::string why_not_cacheable(const LabRun& lab, const RunRequest& req, const DeviceInfo& device) {
  if (req.calibration) return "the run was given its calibration";
  if (lab.calibration.rates.empty()) return "the run measured no calibration";
  if (!lab.calibration_doubt.empty()) return lab.calibration_doubt;
  if (!lab.grader_failure.empty()) return "the grader failed";
  if (lab.processes != 1) return "the runner did not finish in one process";
  if (req.sanitize_cases || req.correctness_only) return "not a timed run";
  for (const auto& t : lab.tasks)
    if (t.status == Status::crashed || t.status == Status::timeout) return "a task crashed or timed out";
  const json& d = lab.device;
  if (!d.is_object() || d.value("backend", "") != device.backend || d.value("index", -1) != device.index ||
      d.value("name", "") != device.name || d.value("platform", "") != device.platform ||
      d.value("details", "") != device.details)
    return "the runner reported another device";
  if (!lab.calibration.measured_at) return "the calibration has no measured_at";
  try {
    calibration_from_json(calibration_to_json(lab.calibration));
  } catch (const std::invalid_argument& e) { return e.what(); }
  return {};
}

CheckCalibrations::CheckCalibrations(const Toolchain& tc, const std::string& backend, const std::string& selector,
                                     bool recalibrate)
    : toolchain_(tc), backend_(backend), selector_(selector), cache_(tc.build_dir / "calibration-cache") {
  const char* env = std::getenv("GPULAB_RECALIBRATE");
  recalibrate_ = recalibrate || (env && *env && std::string(env) != "0");
}

std::optional<json> CheckCalibrations::key_for(const Manifest& lab) {
  if (!looked_for_device_) try {  // once, and only when a lab runs (not for `gpulab build`)
      looked_for_device_ = true;
      device_ = find_device(backend_, selector_);
    } catch (const std::exception&) {
      // The runner will say what is wrong with the device; without knowing it here, nothing is cached.
    }
  if (!device_) return std::nullopt;
  try {
    return calibration_cache_key(*device_, grader_version(toolchain_, {lab}, backend_), lab);
  } catch (const std::exception& e) {  // a harness library that cannot be read: run as without a cache
    fmt::print(stderr, "gpulab: no calibration cache for {} ({})\n", lab.id, e.what());
    return std::nullopt;
  }
}

LabRun CheckCalibrations::supervise(RunRequest req) {
  const auto key = key_for(*req.manifest);
  if (key && !recalibrate_) req.calibration = cache_.find(*key, unix_seconds_now());
  if (req.calibration)
    fmt::print(stderr,
               "gpulab: {}: calibration from the cache, measured {:.0f} s ago (make check "
               "RECALIBRATE=1, or gpulab check --recalibrate, measures it again)\n",
               req.manifest->id, std::max(0.0, unix_seconds_now() - req.calibration->measured_at.value_or(0)));
  LabRun lab = cli::supervise(req);
  if (key && why_not_cacheable(lab, req, *device_).empty()) try {
      cache_.save(*key, lab.calibration);
    } catch (const std::exception& e) {  // a read-only build folder: the next run measures again
      fmt::print(stderr, "gpulab: the calibration was not cached ({})\n", e.what());
    }
  return lab;
}

}  // namespace gpulab::cli
