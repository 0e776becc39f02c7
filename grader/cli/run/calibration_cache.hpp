// Calibrations measured once and reused (issue #15, "fast feedback"). A lab's calibrations (device
// copy bandwidth, vendor library, the harness's naive kernel, the CPU) do not change between two
// `make check` runs a minute apart, yet measuring cuBLAS or the CPU reference costs seconds each time.
//
// `gpulab check` keeps them in build/calibration-cache/, one file per key (device, grader, lab,
// timing case), for 10 minutes. Only this process (the CLI) reads and writes the cache; a runner,
// which runs student code, only receives cached rates on standard input. The runner still measures
// a threshold's baseline interleaved with the timed launches (RunContext::baseline): the cache only
// removes the measurements before the tasks.
//
// Trust rule for what gets cached: a calibration the runner measured itself (none was sent), from a
// run in one process that reported every task, on the device the key names, its event once and before
// any task began (LabRun::calibration_doubt empty), with valid rates. The progress file is written by
// the process that runs student code, so this rule cannot stop a student from forging their own cache
// on their own machine; it only ever feeds their own `make check`. `gpulab grade` never uses this
// cache: it measures once per batch with a runner of the pristine skeletons (grade.cpp).
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpulab/device.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/metrics.hpp"
#include "student_build.hpp"
#include "supervisor.hpp"

namespace gpulab::cli {

// What a cached calibration is valid for: the device (backend, index, name, platform and driver or
// runtime version in `details`), the grader (grade.hpp's grader_version over the lab: the gpulab
// command, the harness libraries, the manifest), the lab, and the timing case it was measured for.
nlohmann::json calibration_cache_key(const DeviceInfo& device, const std::string& grader_version, const Manifest& lab);

class CalibrationCache {
 public:
  static constexpr double kLifetimeS = 600;  // an edit loop's worth; clocks and load drift beyond
  explicit CalibrationCache(std::filesystem::path dir, double lifetime_s = kLifetimeS)
      : dir_(std::move(dir)), lifetime_s_(lifetime_s) {}

  // The calibration cached for `key` and measured at most the lifetime before `now`, with origin
  // "cache"; empty on a miss. A file that cannot be read as a calibration is ignored, with a message
  // on stderr (the next save replaces it).
  std::optional<Calibration> find(const nlohmann::json& key, double now) const;
  // Keeps `calibration` (it must carry measured_at) for `key`, replacing what was there.
  void save(const nlohmann::json& key, const Calibration& calibration) const;
  std::filesystem::path file_for(const nlohmann::json& key) const;

 private:
  std::filesystem::path dir_;
  double lifetime_s_;
};

// The trust rule (see the top of this file): "" when `lab`'s calibration may be cached for `device`,
// else why not.
std::string why_not_cacheable(const LabRun& lab, const RunRequest& request, const DeviceInfo& device);

// `gpulab check`'s use of the cache: each lab runs with a fresh cached calibration when there is
// one, else measures and leaves what the trust rule allows in the cache.
class CheckCalibrations {
 public:
  // `recalibrate` (or GPULAB_RECALIBRATE set and not "0"): measure every lab afresh, and cache that.
  CheckCalibrations(const Toolchain& toolchain, const std::string& backend, const std::string& device_selector,
                    bool recalibrate);
  LabRun supervise(RunRequest request);

 private:
  std::optional<nlohmann::json> key_for(const Manifest& lab);

  const Toolchain& toolchain_;
  std::string backend_, selector_;
  bool looked_for_device_ = false;
  std::optional<DeviceInfo> device_;  // empty: the device could not be found here; no caching
  CalibrationCache cache_;
  bool recalibrate_;
};

}  // namespace gpulab::cli
