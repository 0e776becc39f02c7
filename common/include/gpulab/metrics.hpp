// Performance metrics: a task's rate (in its lab's unit: GB/s, GFLOP/s, Gkeys/s, Giter/s) divided by a
// calibration measured in the same run on the same device, so one threshold fits every GPU.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpulab {

// A calibration launch that can be measured again, interleaved with a student's timed launches
// (so a clock change or another process hits both): `work` in the lab's unit per launch.
struct Probe {
  std::function<void()> prepare = [] {};  // untimed, before every launch
  std::function<void()> launch;
  double work = 0;
};

// Rates measured before the tasks, in the lab's unit.
struct Calibration {
  std::string unit = "GB/s";
  std::string library;                  // what "library" is, e.g. "cuBLAS SGEMM"
  std::string work;                     // what one launch's work counts, for readers: "2·m·n·k flops"
  std::map<std::string, double> rates;  // keys: copy, library, peak, naive, staff, cpu_1core, cpu_all_cores
  std::map<std::string, Probe> probes;  // device calibrations that can be re-measured, same keys
  std::optional<double> copy_gbps;      // device copy bandwidth, every lab (for the speed of light)
  std::optional<double> peak_gflops;    // estimated FP32 peak, where known
  std::optional<double> measured_at;    // unix seconds, when the rates were measured
  // Where the rates come from: "" measured by this run; "cache": `gpulab check`'s calibration cache
  // (an earlier run on this device); "batch": measured once for a whole `gpulab grade` batch.
  std::string origin;
};

// The measured part of a calibration (no probes) as JSON: unit, library, work, rates, copy_gbps,
// peak_gflops, measured_at, origin; what the parent sends a runner and what the cache keeps.
nlohmann::json calibration_to_json(const Calibration& calibration);
// The same, read back and checked: a known unit, known rate names, finite positive numbers. Throws
// std::invalid_argument saying what is wrong (a corrupt cache file, a malformed event).
Calibration calibration_from_json(const nlohmann::json& j);
// Unix time now, in seconds: what measured_at holds.
double unix_seconds_now();

// The least time in ms the device can do a launch's work in: `least_bytes` of memory traffic at
// the copy bandwidth, and `flops` at the FP32 peak; empty when neither is known.
std::optional<double> speed_of_light_ms(double least_bytes, double flops, const Calibration& calibration);
// Whether a launch of median `median_ms` beat the speed of light by more than the margin (10%:
// a kernel can beat the copy calibration by a few percent, never by ten).
bool faster_than_device(double median_ms, std::optional<double> light_ms);
inline constexpr double kSpeedOfLightMargin = 1.10;
// A ratio within this fraction of its bound is measured again before it fails, and reported as borderline.
inline constexpr double kBorderline = 0.05;
// Timed launches stop early (after the least count) once the ratio is this far from its bound...
inline constexpr double kDecisiveMargin = 0.15;
// Whether a ratio already decides its bound: at least kDecisiveMargin away from it, and at least
// three times `spread` (relative_spread of the student's samples plus the baseline's) away, so a
// noisy clock keeps measuring up to the full count.
bool ratio_decided(double ratio, double bound, double spread);

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
// A rate with the digits it needs: "2926", "12.34", "0.0123" (a slow CPU rate never reads "0.00").
std::string format_rate(double rate);
// "93%" for a fraction, "2.5×" for a speedup.
// Against a `bound`, with the decimals it takes to tell the two apart (a student who reached 4.96%
// of a 5% bound reads "4.96%", not "5%"), up to three more.
std::string format_ratio(const Metric& metric, double value, std::optional<double> bound = std::nullopt);
// "45% of the device's copy bandwidth", "1.24× the speed of the harness's naive kernel"
std::string describe_ratio(const Metric& metric, double value, const Calibration& calibration,
                           std::optional<double> bound = std::nullopt);
// The report's column label: "% copy", "% cuBLAS SGEMM", "× naive".
std::string column_label(const Metric& metric, const Calibration& calibration);

// The rates a calibration may hold (Calibration::rates keys), in the order reports list them.
const std::vector<std::string>& calibration_keys();
// What a calibration rate is, for readers: "device copy", "cuBLAS SGEMM", "naive kernel".
std::string calibration_label(const std::string& key, const Calibration& calibration);
// The words a renderer of a lab's JSON shows (scripts/docs/render_measured.py), in report order:
// {"columns": [{"metric", "label", "unit"}...] for the metrics this calibration allows,
//  "calibrations": [{"rate", "label"}...] for the rates it holds}.
nlohmann::json calibration_labels(const Calibration& calibration);

}  // namespace gpulab
