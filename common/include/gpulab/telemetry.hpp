// The GPU's clocks, temperature, power and throttle reasons (NVML, which the NVIDIA driver ships),
// sampled over a case's timed launches: a timing taken while the GPU slowed itself for power or heat
// says little about the kernel, so it is measured again once, and the report says so.
//
// NVML is opened at run time (dlopen of libnvidia-ml.so.1): nothing links it, and without it (no
// NVIDIA driver, a CPU device) telemetry is unavailable and nothing else changes.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpulab {

// One reading of the GPU.
struct GpuSample {
  double sm_mhz = 0;
  double memory_mhz = 0;
  double temperature_c = 0;
  double power_w = 0;
  std::uint64_t reasons = 0;  // NVML's clocks event ("throttle") reasons, a bitmask (kReason*)
};

// The GPU's state at one moment with its limits: the report's header.
struct GpuState {
  GpuSample now;
  double max_sm_mhz = 0;
  double max_memory_mhz = 0;
  double power_limit_w = 0;  // the enforced limit
};

// NVML's reason bits (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*).
inline constexpr std::uint64_t kReasonIdle = 0x1, kReasonApplicationClocks = 0x2, kReasonSwPowerCap = 0x4,
                               kReasonHwSlowdown = 0x8, kReasonSyncBoost = 0x10, kReasonSwThermal = 0x20,
                               kReasonHwThermal = 0x40, kReasonHwPowerBrake = 0x80, kReasonDisplayClocks = 0x100;
// The reasons that mean the GPU slowed itself for power or heat: a timing under them is measured again.
inline constexpr std::uint64_t kPowerOrThermal =
    kReasonSwPowerCap | kReasonHwSlowdown | kReasonSwThermal | kReasonHwThermal | kReasonHwPowerBrake;

// "SW power cap", "HW thermal slowdown", ...: one name per bit set, unknown bits as "reason 0x200".
std::vector<std::string> reason_names(std::uint64_t reasons);

struct Spread {
  double min = 0, median = 0, max = 0;
};

// What the samples of one timing run show.
struct TelemetrySummary {
  int samples = 0;
  Spread sm_mhz, memory_mhz, temperature_c, power_w;
  std::uint64_t reasons = 0;  // every reason any sample had
  // The GPU slowed itself for power or heat at some point of the run.
  bool throttled() const { return (reasons & kPowerOrThermal) != 0; }
};

TelemetrySummary summarize_telemetry(const std::vector<GpuSample>& samples);

// The telemetry of a case's timing: the run whose figures count and, when the first run was
// throttled and the timing measured again, that first run.
struct TimingTelemetry {
  TelemetrySummary counted;
  std::optional<TelemetrySummary> throttled_first;
  bool remeasured() const { return throttled_first.has_value(); }
};

// "measured again after SW power cap in the first run; the second run counts (throttled again: ...)";
// empty when the timing was not measured again.
std::string describe_remeasure(const TimingTelemetry& t);

// Where readings come from: NVML for a real GPU, a script of samples in tests.
class GpuMonitor {
 public:
  virtual ~GpuMonitor() = default;
  // Empty when a reading failed (the sample is then left out).
  virtual std::optional<GpuSample> sample() = 0;
  virtual std::optional<GpuState> state() = 0;
  // How the GPU addresses host memory: "HMM", "ATS" or "none"; empty where the driver does not say.
  virtual std::string addressing_mode() { return {}; }
};

// NVML's monitor of the GPU at PCI address `bus_id` ("0000:19:00.0"). Null, with the reason in
// `why`, without NVML, without a bus id, or when NVML knows no GPU there.
std::unique_ptr<GpuMonitor> open_nvml_monitor(const std::string& bus_id, std::string& why);

// Samples a monitor on a thread of its own, every `period` from construction (a first sample at
// once) until stop(), which takes a last one: a run shorter than the period still has two.
class TelemetrySampler {
 public:
  TelemetrySampler(GpuMonitor& monitor, std::chrono::milliseconds period);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;
  std::vector<GpuSample> stop();

 private:
  struct Shared;
  std::unique_ptr<Shared> shared_;
};

struct TelemetryPolicy {
  std::chrono::milliseconds period{25};
  // Before timing again after throttling: long enough for a power cap to let go.
  std::chrono::milliseconds cool_down{2000};
};

// Runs `timing` (a case's warm-up and timed launches; false: it failed) under a sampler of
// `monitor`. When the run succeeded and was throttled for power or heat, waits the cool-down, calls
// `reset` (forget the first run's samples) and runs `timing` once more: that second run counts,
// throttled or not. `telemetry` gets both summaries; without a monitor `timing` just runs.
bool time_with_telemetry(GpuMonitor* monitor, const std::function<bool()>& timing, const std::function<void()>& reset,
                         std::optional<TimingTelemetry>& telemetry, const TelemetryPolicy& policy = {});

void to_json(nlohmann::json& j, const TelemetrySummary& s);
void from_json(const nlohmann::json& j, TelemetrySummary& s);
void to_json(nlohmann::json& j, const TimingTelemetry& t);
void from_json(const nlohmann::json& j, TimingTelemetry& t);
void to_json(nlohmann::json& j, const GpuState& s);
void from_json(const nlohmann::json& j, GpuState& s);

}  // namespace gpulab
