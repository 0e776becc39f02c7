#include "gpulab/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpulab {

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> all{
      {"copy_fraction", "copy", true, "% copy", "of the device's copy bandwidth"},
      {"library_fraction", "library", true, "% library", "of the vendor library"},
      {"peak_fraction", "peak", true, "% peak", "of the device's estimated FP32 peak"},
      {"naive_speedup", "naive", false, "× naive", "the speed of the harness's naive kernel"},
      // For a task limited by latency, launches or instruction throughput rather than by what copy or
      // the FP32 peak measure: the harness's own kernel of the task's design, timed in the same run,
      // scales with the GPU as the task does (a course scoring against its staff reference).
      {"staff_fraction", "staff", true, "% staff", "of the harness's own kernel of the same design"},
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

bool ratio_decided(double ratio, double bound, double spread) {
  if (bound <= 0 || ratio <= 0) return false;
  return std::fabs(ratio / bound - 1) >= std::max(kDecisiveMargin, 3 * spread);
}

bool faster_than_device(double median_ms, std::optional<double> light_ms) {
  return light_ms && *light_ms > 0 && median_ms * kSpeedOfLightMargin < *light_ms;
}

std::string format_rate(double rate) {
  return rate >= 100 ? fmt::format("{:.0f}", rate)
         : rate >= 1 ? fmt::format("{:.2f}", rate)
                     : fmt::format("{:.3g}", rate);
}

std::string format_ratio(const Metric& metric, double value, std::optional<double> bound) {
  const double scale = metric.fraction ? 100 : 1;
  const int usual = metric.fraction ? 0 : 2;
  int decimals = usual;
  auto shown = [&](double x) { return fmt::format("{:.{}f}", x * scale, decimals); };
  while (bound && decimals < usual + 3 && shown(value) == shown(*bound)) ++decimals;
  return shown(value) + (metric.fraction ? "%" : "×");
}

std::string describe_ratio(const Metric& metric, double value, const Calibration& calibration,
                           std::optional<double> bound) {
  const bool library = std::string(metric.calibration) == "library" && !calibration.library.empty();
  return fmt::format("{} {}", format_ratio(metric, value, bound),
                     library ? "of " + calibration.library : metric.against);
}

std::string column_label(const Metric& metric, const Calibration& calibration) {
  if (std::string(metric.calibration) == "library" && !calibration.library.empty())
    return "% " + calibration.library.substr(0, calibration.library.find(' '));
  return metric.label;
}

const std::vector<std::string>& calibration_keys() {
  static const std::vector<std::string> keys{"copy", "library", "peak", "naive", "staff", "cpu_1core", "cpu_all_cores"};
  return keys;
}

std::string calibration_label(const std::string& key, const Calibration& calibration) {
  static const std::map<std::string, std::string> names{
      {"copy", "device copy"},           {"library", "vendor library"},           {"peak", "FP32 peak (estimated)"},
      {"naive", "naive kernel"},         {"staff", "staff kernel (same design)"}, {"cpu_1core", "CPU 1 core"},
      {"cpu_all_cores", "CPU all cores"}};
  if (key == "library" && !calibration.library.empty()) return calibration.library;
  const auto it = names.find(key);
  return it == names.end() ? key : it->second;
}

nlohmann::json calibration_labels(const Calibration& c) {
  nlohmann::json columns = nlohmann::json::array(), calibrations = nlohmann::json::array();
  for (const auto& m : metrics())
    if (c.rates.count(m.calibration))
      columns.push_back({{"metric", m.name}, {"label", column_label(m, c)}, {"unit", m.fraction ? "%" : "×"}});
  for (const auto& key : calibration_keys())
    if (c.rates.count(key)) calibrations.push_back({{"rate", key}, {"label", calibration_label(key, c)}});
  return {{"columns", columns}, {"calibrations", calibrations}};
}

nlohmann::json calibration_to_json(const Calibration& c) {
  nlohmann::json j{{"unit", c.unit}, {"library", c.library}, {"rates", c.rates}};
  if (!c.work.empty()) j["work"] = c.work;
  if (c.copy_gbps) j["copy_gbps"] = *c.copy_gbps;
  if (c.peak_gflops) j["peak_gflops"] = *c.peak_gflops;
  if (c.measured_at) j["measured_at"] = *c.measured_at;
  if (!c.origin.empty()) j["origin"] = c.origin;
  return j;
}

namespace {

// A figure a calibration may hold: a finite number above zero (a rate of 0 or NaN would make every
// ratio infinite or meaningless).
double positive(const nlohmann::json& j, const std::string& what) {
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() <= 0)
    throw std::invalid_argument(fmt::format("{} is not a positive number ({})", what, j.dump()));
  return j.get<double>();
}

}  // namespace

Calibration calibration_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("a calibration is a JSON object");
  Calibration c;
  c.unit = j.value("unit", "");
  if (c.unit != "GB/s" && c.unit != "GFLOP/s" && c.unit != "Gkeys/s" && c.unit != "Giter/s")
    throw std::invalid_argument(fmt::format("unknown rate unit '{}'", c.unit));
  if (j.contains("library") && !j["library"].is_string()) throw std::invalid_argument("library is not a string");
  c.library = j.value("library", "");
  if (j.contains("work") && j["work"].is_string()) c.work = j["work"].get<std::string>();
  if (!j.contains("rates") || !j["rates"].is_object()) throw std::invalid_argument("no rates");
  const auto& known = calibration_keys();
  for (const auto& [name, value] : j["rates"].items()) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw std::invalid_argument(fmt::format("unknown rate '{}'", name));
    c.rates[name] = positive(value, "rate " + name);
  }
  if (j.contains("copy_gbps")) c.copy_gbps = positive(j["copy_gbps"], "copy_gbps");
  if (j.contains("peak_gflops")) c.peak_gflops = positive(j["peak_gflops"], "peak_gflops");
  if (j.contains("measured_at")) c.measured_at = positive(j["measured_at"], "measured_at");
  if (j.contains("origin") && j["origin"].is_string()) c.origin = j["origin"].get<std::string>();
  return c;
}

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace gpulab
