// A lab's manifest (labs/NN-name/lab.toml): its student files, tasks, cases and thresholds.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpulab {

enum class DeviceClass { gpu, cpu };
const char* to_string(DeviceClass c);

// A malformed manifest: the message names the file, the line and the fix.
class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A task passes its threshold when the measured ratio (see `metric`) reaches the bound for the
// class of device that ran it ("gpu", "cpu"), or for that backend and class where the manifest
// names one ("opencl_gpu": compilers differ). A device without a bound is graded on correctness.
struct Threshold {
  std::string metric;  // a name from metrics(): "copy_fraction", "naive_speedup", ...
  std::map<std::string, double> bounds;
  std::optional<double> bound(const std::string& backend, DeviceClass c) const {
    if (auto it = bounds.find(backend + "_" + to_string(c)); it != bounds.end()) return it->second;
    if (auto it = bounds.find(to_string(c)); it != bounds.end()) return it->second;
    return std::nullopt;
  }
};

struct Task {
  std::string name;
  std::string title;
  std::string function;  // the student function that implements it, named in reports
  double points = 0;
  bool bonus = false;  // its points come on top; failing it does not fail the lab
  std::optional<Threshold> threshold;
};

struct Case {
  std::string name;
  bool timing = false;                // the timed case of the device class
  bool hidden = false;                // runs only in instructor grading (runner --hidden-cases)
  std::vector<DeviceClass> devices;   // empty: every class
  std::vector<std::string> tasks;     // empty: every task; else only these (e.g. lengths only "any-n" takes)
  nlohmann::json params;              // lab-specific fields (sizes, text, distributions)
  bool runs_on(DeviceClass c) const;
  bool applies_to(const std::string& task) const;
};

struct Manifest {
  std::filesystem::path path;
  std::string id;     // "02-transpose": the folder name
  std::string name;   // "transpose": what LAB= matches
  std::string title;
  std::map<std::string, std::vector<std::string>> files;  // backend -> student files
  std::vector<std::string> forbidden;  // what student files must not mention (case-insensitive), e.g. "cublas"
  // Symbols this lab's compiled files may reference beyond grader/allowlist/<backend>.txt (hello copies
  // to and from the host: "cudaMemcpy"), and headers they may not include beyond grader/allowlist/headers.txt.
  std::vector<std::string> allow;
  std::vector<std::string> forbidden_headers;
  double timeout_s = 60;  // seconds without progress before a run is declared hung
  int warmup = 3;
  int repeats = 15;
  std::vector<Task> tasks;
  std::vector<Case> cases;

  const Task* find_task(const std::string& name) const;
  std::vector<const Case*> cases_for(DeviceClass c) const;
  // The cases one task runs on one device class.
  std::vector<const Case*> cases_for(DeviceClass c, const std::string& task) const;
  // Student files of one backend whose names end with `extension` (e.g. ".cl").
  std::vector<std::string> files_with_extension(const std::string& backend, const std::string& extension) const;
  bool has_hidden_cases() const;
};

// The manifest as students see it: without the cases marked `hidden = true`, which only instructor
// grading runs, so students cannot tune their code to them.
Manifest without_hidden_cases(Manifest manifest);

Manifest load_manifest(const std::filesystem::path& path);
// Every labs/*/lab.toml under `labs_root`, in folder order. Broken manifests throw.
std::vector<Manifest> load_all_manifests(const std::filesystem::path& labs_root);

}  // namespace gpulab
