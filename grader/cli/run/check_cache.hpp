// `gpulab check` with nothing changed answers at once: a lab's last complete result is shown again
// when its student files, the grader (the gpulab command, the lab's harness libraries and manifest,
// the allowlists: toolchain.hpp's grader_version; the headers student files include), the device and
// the selection (tasks, an explicit seed, the time limit, the source folder) are what they were. No GPU time, no build, no lock.
// `make check` asks for that (gpulab check --reuse); `make check FRESH=1` runs the lab anew on new
// random inputs, which is what a student chasing a race or a rare case wants. The report says which
// labs it shows again and when they ran. Every plain check keeps its results for the next one.
//
// What is kept: results that say something about the student's files (every task's status but
// `timeout` and `error`, which a loaded machine or a grader fault can cause) from a run without a
// grader failure. Like the calibration cache, this only ever feeds the student's own `make check`:
// `gpulab grade` and the course server never read it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/device.hpp"
#include "gpulab/manifest.hpp"
#include "lab_run.hpp"
#include "toolchain.hpp"

namespace gpulab::cli {

// What a check of one lab depends on, besides the student's files' contents.
struct CheckSelection {
  std::string backend;
  std::filesystem::path source;     // the folder of the lab folders
  std::vector<std::string> tasks;   // as selected (select_tasks)
  std::uint64_t explicit_seed = 0;  // SEED=, 0: a random one (any earlier run's will do)
  double timeout = 0;               // TIMEOUT=, 0: the manifest's
};

// The key of `lab`'s check: a hash over the selection, the device (backend, index, name, platform,
// driver or runtime version), the grader and the student files. Throws when a file cannot be read.
std::string check_key(const Toolchain& tc, const Manifest& lab, const CheckSelection& selection,
                      const DeviceInfo& device);

// Whether `lab`'s result says something about the student's code that a re-run with nothing changed
// would say again: no grader failure, no task that timed out or hit an API error.
bool worth_keeping(const LabRun& lab);

// A lab's results as kept, with the seed its inputs were drawn from.
struct KeptLab {
  LabRun lab;
  std::uint64_t seed = 0;
};

class CheckCache {
 public:
  explicit CheckCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // The lab kept under `key`, its `reused` sentence set; empty when there is none or the file is
  // unreadable (said on stderr; the next run replaces it).
  std::optional<KeptLab> find(const std::string& lab_id, const std::string& key) const;
  // Keeps `lab` (run with `seed`, finished at `when`, UTC) under `key` when worth_keeping, else
  // forgets what was kept for the lab. A file that cannot be written is only reported.
  void keep(const std::string& key, const LabRun& lab, std::uint64_t seed, const std::string& when) const;

 private:
  std::filesystem::path file_for(const std::string& lab_id) const { return dir_ / (lab_id + ".json"); }
  std::filesystem::path dir_;
};

}  // namespace gpulab::cli
