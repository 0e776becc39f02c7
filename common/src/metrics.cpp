#include "gpulab/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpulab {

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> all{
      {"copy_fraction", "copy", true, "% copy", "of the device's copy bandwidth"},
      {"library_fraction", "library", true, "% library", "of the vendor library"},
      {"peak_fraction", "peak", true, "% peak", "of the device's estimated FP32 peak"},
      {"naive_speedup", "naive", false, "× naive", "the speed of the harness's naive kernel"},
      {"cpu_speedup", "cpu_1core", false, "× 1 core", "the speed of the CPU version on one core"},
      {"cpu_all_speedup", "cpu_all_cores", false, "× cores", "the speed of the CPU version on all cores"},
  };
  return all;
}

const Metric* find_metric(const std::string& name) {
  for (const auto& m : metrics())
    if (name == m.name) return &m;
  return nullptr;
}

std::map<std::string, double> ratios_of(double rate, const Calibration& calibration) {
  std::map<std::string, double> out;
  for (const auto& m : metrics())
    if (auto it = calibration.rates.find(m.calibration); it != calibration.rates.end() && it->second > 0)
      out[m.name] = rate / it->second;
  return out;
}

std::optional<double> speed_of_light_ms(double least_bytes, double flops, const Calibration& calibration) {
  std::optional<double> ms;
  if (least_bytes > 0 && calibration.copy_gbps && *calibration.copy_gbps > 0)
    ms = least_bytes / (*calibration.copy_gbps * 1e9) * 1e3;
  if (flops > 0 && calibration.peak_gflops && *calibration.peak_gflops > 0)
    ms = std::max(ms.value_or(0.0), flops / (*calibration.peak_gflops * 1e9) * 1e3);
  return ms;
}

bool faster_than_device(double median_ms, std::optional<double> light_ms) {
  return light_ms && *light_ms > 0 && median_ms * kSpeedOfLightMargin < *light_ms;
}

std::string format_ratio(const Metric& metric, double value) {
  return metric.fraction ? fmt::format("{:.0f}%", value * 100) : fmt::format("{:.2f}×", value);
}

std::string describe_ratio(const Metric& metric, double value, const Calibration& calibration) {
  const bool library = std::string(metric.calibration) == "library" && !calibration.library.empty();
  return fmt::format("{} {}", format_ratio(metric, value), library ? "of " + calibration.library : metric.against);
}

std::string column_label(const Metric& metric, const Calibration& calibration) {
  if (std::string(metric.calibration) == "library" && !calibration.library.empty())
    return "% " + calibration.library.substr(0, calibration.library.find(' '));
  return metric.label;
}

}  // namespace gpulab
