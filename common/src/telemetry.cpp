#include "gpulab/telemetry.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpulab {

namespace {

constexpr std::pair<std::uint64_t, const char*> kReasonNames[] = {
    {kReasonIdle, "idle"},
    {kReasonApplicationClocks, "application clocks setting"},
    {kReasonSwPowerCap, "SW power cap"},
    {kReasonHwSlowdown, "HW slowdown"},
    {kReasonSyncBoost, "sync boost"},
    {kReasonSwThermal, "SW thermal slowdown"},
    {kReasonHwThermal, "HW thermal slowdown"},
    {kReasonHwPowerBrake, "HW power brake slowdown"},
    {kReasonDisplayClocks, "display clock setting"},
};

Spread spread_of(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {values.front(), median, values.back()};
}

// The few NVML entry points telemetry needs, declared here (nvml.h is not needed to build), and
// looked up in the driver's library at run time.
using NvmlDevice = struct nvmlDevice_st*;
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kClockSm = 1, kClockMemory = 2, kTemperatureGpu = 0;
struct NvmlAddressingMode {  // nvmlDeviceAddressingMode_v1_t
  unsigned version;
  unsigned value;  // 0 none, 1 HMM, 2 ATS
};

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*power)(NvmlDevice, unsigned*) = nullptr;        // milliwatts
  NvmlReturn (*power_limit)(NvmlDevice, unsigned*) = nullptr;  // milliwatts
  NvmlReturn (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*addressing)(NvmlDevice, NvmlAddressingMode*) = nullptr;  // drivers since 2025 only
};

template <typename F>
bool find_symbol(void* library, F& f, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (void* p = dlsym(library, name)) {
      f = reinterpret_cast<F>(p);
      return true;
    }
  return false;
}

// Looks up every entry point; the name of the first one missing, empty when all are there.
std::string bind(void* library, NvmlApi& api) {
  if (!find_symbol(library, api.init, {"nvmlInit_v2"})) return "nvmlInit_v2";
  if (!find_symbol(library, api.shutdown, {"nvmlShutdown"})) return "nvmlShutdown";
  if (!find_symbol(library, api.error_string, {"nvmlErrorString"})) return "nvmlErrorString";
  if (!find_symbol(library, api.by_bus_id, {"nvmlDeviceGetHandleByPciBusId_v2"}))
    return "nvmlDeviceGetHandleByPciBusId_v2";
  if (!find_symbol(library, api.clock, {"nvmlDeviceGetClockInfo"})) return "nvmlDeviceGetClockInfo";
  if (!find_symbol(library, api.max_clock, {"nvmlDeviceGetMaxClockInfo"})) return "nvmlDeviceGetMaxClockInfo";
  if (!find_symbol(library, api.temperature, {"nvmlDeviceGetTemperature"})) return "nvmlDeviceGetTemperature";
  if (!find_symbol(library, api.power, {"nvmlDeviceGetPowerUsage"})) return "nvmlDeviceGetPowerUsage";
  if (!find_symbol(library, api.power_limit, {"nvmlDeviceGetEnforcedPowerLimit"}))
    return "nvmlDeviceGetEnforcedPowerLimit";
  // The newer name first: drivers since 535 call them clocks event reasons.
  if (!find_symbol(library, api.reasons,
                   {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}))
    return "nvmlDeviceGetCurrentClocksEventReasons";
  find_symbol(library, api.addressing, {"nvmlDeviceGetAddressingMode"});
  return {};
}

class NvmlMonitor final : public GpuMonitor {
 public:
  NvmlMonitor(void* library, const NvmlApi& api, NvmlDevice device) : library_(library), api_(api), device_(device) {}
  ~NvmlMonitor() override {
    api_.shutdown();
    dlclose(library_);
  }
  NvmlMonitor(const NvmlMonitor&) = delete;
  NvmlMonitor& operator=(const NvmlMonitor&) = delete;

  std::optional<GpuSample> sample() override {
    unsigned sm = 0, memory = 0, temperature = 0, milliwatts = 0;
    unsigned long long reasons = 0;
    if (api_.clock(device_, kClockSm, &sm) != kNvmlSuccess ||
        api_.clock(device_, kClockMemory, &memory) != kNvmlSuccess ||
        api_.temperature(device_, kTemperatureGpu, &temperature) != kNvmlSuccess ||
        api_.power(device_, &milliwatts) != kNvmlSuccess || api_.reasons(device_, &reasons) != kNvmlSuccess)
      return std::nullopt;
    return GpuSample{double(sm), double(memory), double(temperature), milliwatts / 1000.0, reasons};
  }

  std::optional<GpuState> state() override {
    const auto now = sample();
    if (!now) return std::nullopt;
    GpuState s{*now};
    unsigned sm = 0, memory = 0, limit = 0;
    if (api_.max_clock(device_, kClockSm, &sm) == kNvmlSuccess) s.max_sm_mhz = sm;
    if (api_.max_clock(device_, kClockMemory, &memory) == kNvmlSuccess) s.max_memory_mhz = memory;
    if (api_.power_limit(device_, &limit) == kNvmlSuccess) s.power_limit_w = limit / 1000.0;
    return s;
  }

  std::string addressing_mode() override {
    if (!api_.addressing) return {};
    NvmlAddressingMode mode{sizeof(NvmlAddressingMode) | (1u << 24), 0};  // NVML_STRUCT_VERSION(..., 1)
    if (api_.addressing(device_, &mode) != kNvmlSuccess) return {};
    return mode.value == 1 ? "HMM" : mode.value == 2 ? "ATS" : "none";
  }

 private:
  void* library_;
  NvmlApi api_;
  NvmlDevice device_;
};

}  // namespace

std::vector<std::string> reason_names(std::uint64_t reasons) {
  std::vector<std::string> names;
  for (const auto& [bit, name] : kReasonNames)
    if (reasons & bit) names.emplace_back(name);
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1)
    if ((reasons & bit) && std::none_of(std::begin(kReasonNames), std::end(kReasonNames),
                                        [bit](const auto& known) { return known.first == bit; }))
      names.push_back(fmt::format("reason {:#x}", bit));
  return names;
}

TelemetrySummary summarize_telemetry(const std::vector<GpuSample>& samples) {
  TelemetrySummary s;
  s.samples = static_cast<int>(samples.size());
  std::vector<double> sm, memory, temperature, power;
  for (const GpuSample& g : samples) {
    sm.push_back(g.sm_mhz);
    memory.push_back(g.memory_mhz);
    temperature.push_back(g.temperature_c);
    power.push_back(g.power_w);
    s.reasons |= g.reasons;
  }
  s.sm_mhz = spread_of(std::move(sm));
  s.memory_mhz = spread_of(std::move(memory));
  s.temperature_c = spread_of(std::move(temperature));
  s.power_w = spread_of(std::move(power));
  return s;
}

std::string describe_remeasure(const TimingTelemetry& t) {
  if (!t.throttled_first) return {};
  auto throttling = [](const TelemetrySummary& s) {
    return fmt::format("{}", fmt::join(reason_names(s.reasons & kPowerOrThermal), ", "));
  };
  return fmt::format("timed again after {} in the first run; the second run counts ({})",
                     throttling(*t.throttled_first),
                     t.counted.throttled() ? "throttled again: " + throttling(t.counted) : "not throttled");
}

std::unique_ptr<GpuMonitor> open_nvml_monitor(const std::string& bus_id, std::string& why) {
  if (bus_id.empty()) {
    why = "the device has no PCI bus id (not an NVIDIA GPU)";
    return nullptr;
  }
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why = "no NVML (libnvidia-ml.so.1, part of the NVIDIA driver, is not installed)";
    return nullptr;
  }
  NvmlApi api;
  if (const std::string missing = bind(library, api); !missing.empty()) {
    why = fmt::format("this NVML has no {} (driver too old)", missing);
    dlclose(library);
    return nullptr;
  }
  if (const NvmlReturn status = api.init(); status != kNvmlSuccess) {
    why = fmt::format("NVML did not start: {}", api.error_string(status));
    dlclose(library);
    return nullptr;
  }
  NvmlDevice device = nullptr;
  if (const NvmlReturn status = api.by_bus_id(bus_id.c_str(), &device); status != kNvmlSuccess) {
    why = fmt::format("NVML knows no GPU at PCI {}: {}", bus_id, api.error_string(status));
    api.shutdown();
    dlclose(library);
    return nullptr;
  }
  return std::make_unique<NvmlMonitor>(library, api, device);
}

struct TelemetrySampler::Shared {
  Shared(GpuMonitor& m, std::chrono::milliseconds p) : monitor(m), period(p) {}
  GpuMonitor& monitor;
  std::chrono::milliseconds period;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::vector<GpuSample> samples;
  std::thread thread;

  void take() {
    if (auto s = monitor.sample()) {
      std::lock_guard lock(mutex);
      samples.push_back(*s);
    }
  }
  void loop() {
    take();
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, period, [this] { return stopping; })) {
      lock.unlock();
      take();
      lock.lock();
    }
  }
};

TelemetrySampler::TelemetrySampler(GpuMonitor& monitor, std::chrono::milliseconds period)
    : shared_(std::make_unique<Shared>(monitor, period)) {
  shared_->thread = std::thread([s = shared_.get()] { s->loop(); });
}

TelemetrySampler::~TelemetrySampler() {
  if (shared_->thread.joinable()) stop();
}

std::vector<GpuSample> TelemetrySampler::stop() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
  }
  shared_->wake.notify_all();
  shared_->thread.join();
  shared_->take();  // the state at the end of the run
  return std::move(shared_->samples);
}

namespace {
// `timing` under a sampler: whether it succeeded, and what the samples show.
std::pair<bool, TelemetrySummary> sampled_run(GpuMonitor& monitor, const std::function<bool()>& timing,
                                              std::chrono::milliseconds period) {
  TelemetrySampler sampler(monitor, period);
  const bool ok = timing();  // an exception stops the sampler in its destructor
  return {ok, summarize_telemetry(sampler.stop())};
}
}  // namespace

bool time_with_telemetry(GpuMonitor* monitor, const std::function<bool()>& timing, const std::function<void()>& reset,
                         std::optional<TimingTelemetry>& telemetry, const TelemetryPolicy& policy) {
  telemetry.reset();
  if (!monitor) return timing();
  const auto [ok, first] = sampled_run(*monitor, timing, policy.period);
  telemetry = TimingTelemetry{first, std::nullopt};
  if (!ok || !first.throttled()) return ok;
  std::this_thread::sleep_for(policy.cool_down);
  reset();
  const auto [ok_again, second] = sampled_run(*monitor, timing, policy.period);
  telemetry = TimingTelemetry{second, first};
  return ok_again;
}

void to_json(nlohmann::json& j, const TelemetrySummary& s) {
  auto spread = [](const Spread& v) { return nlohmann::json{{"min", v.min}, {"median", v.median}, {"max", v.max}}; };
  j = {{"samples", s.samples},
       {"sm_mhz", spread(s.sm_mhz)},
       {"memory_mhz", spread(s.memory_mhz)},
       {"temperature_c", spread(s.temperature_c)},
       {"power_w", spread(s.power_w)},
       {"reasons_mask", s.reasons},
       {"reasons", reason_names(s.reasons)},
       {"throttled", s.throttled()}};
}
void from_json(const nlohmann::json& j, TelemetrySummary& s) {
  auto spread = [&j](const char* key) {
    const auto& v = j.at(key);
    return Spread{v.at("min").get<double>(), v.at("median").get<double>(), v.at("max").get<double>()};
  };
  s.samples = j.at("samples");
  s.sm_mhz = spread("sm_mhz");
  s.memory_mhz = spread("memory_mhz");
  s.temperature_c = spread("temperature_c");
  s.power_w = spread("power_w");
  s.reasons = j.value("reasons_mask", std::uint64_t{0});
}

void to_json(nlohmann::json& j, const TimingTelemetry& t) {
  j = {{"counted", t.counted}, {"remeasured", t.remeasured()}};
  if (t.throttled_first) {
    j["throttled_first"] = *t.throttled_first;
    j["note"] = describe_remeasure(t);
  }
}
void from_json(const nlohmann::json& j, TimingTelemetry& t) {
  t.counted = j.at("counted").get<TelemetrySummary>();
  if (j.contains("throttled_first")) t.throttled_first = j["throttled_first"].get<TelemetrySummary>();
}

void to_json(nlohmann::json& j, const GpuState& s) {
  j = {{"sm_mhz", s.now.sm_mhz},
       {"max_sm_mhz", s.max_sm_mhz},
       {"memory_mhz", s.now.memory_mhz},
       {"max_memory_mhz", s.max_memory_mhz},
       {"temperature_c", s.now.temperature_c},
       {"power_w", s.now.power_w},
       {"power_limit_w", s.power_limit_w},
       {"reasons_mask", s.now.reasons},
       {"reasons", reason_names(s.now.reasons)}};
}
void from_json(const nlohmann::json& j, GpuState& s) {
  s.now.sm_mhz = j.value("sm_mhz", 0.0);
  s.max_sm_mhz = j.value("max_sm_mhz", 0.0);
  s.now.memory_mhz = j.value("memory_mhz", 0.0);
  s.max_memory_mhz = j.value("max_memory_mhz", 0.0);
  s.now.temperature_c = j.value("temperature_c", 0.0);
  s.now.power_w = j.value("power_w", 0.0);
  s.power_limit_w = j.value("power_limit_w", 0.0);
  s.now.reasons = j.value("reasons_mask", std::uint64_t{0});
}

}  // namespace gpulab
