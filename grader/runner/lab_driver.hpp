// The contract between the runner and one lab: the runner owns devices, seeds, timing, progress
// and error handling; a lab driver makes a case's data, calls the student's function through the
// backend bindings, and checks the output against the CPU reference.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "gpulab/compare.hpp"
#include "gpulab/device.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/metrics.hpp"
#include "gpulab/random.hpp"
#include "gpulab/results.hpp"

namespace gpulab {

struct RunContext {
  Device& device;
  const Manifest& manifest;
  std::uint64_t run_seed;
  // Called after every launch, so a slow but working kernel is not mistaken for a hung one.
  std::function<void()> heartbeat = [] {};
  // Where image labs write their pictures (input, output, reference, difference); empty: nowhere.
  std::filesystem::path pictures_dir = {};
  // The case's own random stream: the same for the same run seed, lab, task and case.
  Rng rng(const Task& task, const Case& c) const {
    return Rng(derive_seed(run_seed, manifest.id, task.name, c.name));
  }
};

// One case, ready to run: the runner prepares, launches, checks, and for a timing case repeats the
// launch under the device clock and checks the output of a timed launch again.
struct Launchable {
  // Before every launch: fill every output with kPoisonByte, and restore inputs a launch changes
  // (an in-place sort), so each launch, timed ones included, does the whole job.
  std::function<void()> prepare;
  std::function<void()> launch;          // call the student's function once
  std::function<Comparison()> check;     // fetch the outputs and compare with the reference
  double work = 0;                       // what one launch must do, in the driver's rate unit
};

CaseResult execute(const RunContext& ctx, const Case& c, const Launchable& launchable);

// Median time in ms of `launch` on the device, after warm-up launches: for calibrations.
// `prepare` runs, untimed, before every launch (e.g. fresh input for an in-place sort).
double median_launch_ms(const RunContext& ctx, const std::function<void()>& launch,
                        const std::function<void()>& prepare = [] {});
// Median wall-clock time in ms of `work` on the host, over `repeats` runs: for CPU calibrations.
double median_host_ms(const std::function<void()>& work, int repeats);

class LabDriver {
 public:
  virtual ~LabDriver() = default;
  virtual CaseResult run(const RunContext& ctx, const Task& task, const Case& c) = 0;
  // The unit of Launchable::work per second: "GB/s" (work in bytes; the runner then also measures
  // the device's copy bandwidth), "GFLOP/s", "Gkeys/s".
  virtual std::string rate_unit() const { return "GB/s"; }
  // Adds the lab's own calibrations (a vendor library, the harness's naive kernel, the CPU) for
  // the timing case `timing` to `calibration`, in the rate unit.
  virtual void calibrate(const RunContext&, const Case& /*timing*/, Calibration& /*calibration*/) {}
};

// Defined once per lab (grader/labs/<name>/); the runner executable of a lab links exactly one.
std::unique_ptr<LabDriver> make_lab_driver();

// Reads an integer case parameter, naming the case and the key when it is missing or wrong.
std::int64_t case_int(const Case& c, const char* key);

// Finds the student function a task names in a lab's bindings table.
template <typename Function>
Function find_function(const std::map<std::string, Function>& functions, const std::string& name) {
  auto it = functions.find(name);
  if (it == functions.end())
    throw std::invalid_argument("the manifest names function '" + name + "', which this lab's bindings do not define");
  return it->second;
}

}  // namespace gpulab
