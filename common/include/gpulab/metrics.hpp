// Performance metrics: a task's rate (in its lab's unit: GB/s, GFLOP/s, Gkeys/s) divided by a
// calibration measured in the same run on the same device, so one threshold fits every GPU.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab {

// Rates measured before the tasks, in the lab's unit.
struct Calibration {
  std::string unit = "GB/s";
  std::string library;                   // what "library" is, e.g. "cuBLAS SGEMM"
  std::map<std::string, double> rates;   // keys: copy, library, naive, cpu_1core, cpu_all_cores
};

struct Metric {
  const char* name;         // as in a manifest's threshold: "copy_fraction"
  const char* calibration;  // the rate it divides by: "copy"
  bool fraction;            // shown as a percentage (else as a speedup, "2.5×")
  const char* label;        // report column: "% copy"
  const char* against;      // for sentences: "of the device's copy bandwidth"
};

const std::vector<Metric>& metrics();
const Metric* find_metric(const std::string& name);
// Every metric the calibration allows for this rate.
std::map<std::string, double> ratios_of(double rate, const Calibration& calibration);
// "93%" for a fraction, "2.5×" for a speedup.
std::string format_ratio(const Metric& metric, double value);
// "45% of the device's copy bandwidth", "1.24× the speed of the harness's naive kernel"
std::string describe_ratio(const Metric& metric, double value, const Calibration& calibration);
// The report's column label: "% copy", "% cuBLAS SGEMM", "× naive".
std::string column_label(const Metric& metric, const Calibration& calibration);

}  // namespace gpulab
