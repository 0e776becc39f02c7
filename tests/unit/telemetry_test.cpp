// GPU telemetry (gpulab/telemetry.hpp): summaries of samples, the decision to time again after
// throttling, and what reaches the results' JSON; with a scripted monitor instead of NVML.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "gpulab/results.hpp"
#include "gpulab/telemetry.hpp"

using namespace gpulab;
using namespace std::chrono_literals;

namespace {

GpuSample reading(double sm, double power, std::uint64_t reasons = 0, double temperature = 60) {
  return {sm, 2619, temperature, power, reasons};
}

// A monitor that plays the samples of one run after another: run k (counted from 0, advanced by
// next_run()) reads `runs[k]` in a loop.
class ScriptedMonitor final : public GpuMonitor {
 public:
  explicit ScriptedMonitor(std::vector<std::vector<GpuSample>> runs) : runs_(std::move(runs)) {}
  std::optional<GpuSample> sample() override {
    std::lock_guard lock(mutex_);
    const auto& run = runs_.at(std::min(run_, runs_.size() - 1));
    return run.at(read_++ % run.size());
  }
  std::optional<GpuState> state() override { return GpuState{*sample(), 1980, 2619, 700}; }
  void next_run() {
    std::lock_guard lock(mutex_);
    ++run_;
    read_ = 0;
  }

 private:
  std::mutex mutex_;
  std::vector<std::vector<GpuSample>> runs_;
  std::size_t run_ = 0, read_ = 0;
};

constexpr TelemetryPolicy kQuick{1ms, 0ms};

}  // namespace

TEST_CASE("a summary gives each reading's min, median and max and every reason any sample had") {
  const auto s = summarize_telemetry(
      {reading(1980, 300), reading(1755, 700, kReasonSwPowerCap, 70), reading(1900, 500, kReasonIdle, 65)});
  CHECK(s.samples == 3);
  CHECK(s.sm_mhz.min == 1755);
  CHECK(s.sm_mhz.median == 1900);
  CHECK(s.sm_mhz.max == 1980);
  CHECK(s.power_w.median == 500);
  CHECK(s.temperature_c.max == 70);
  CHECK(s.reasons == (kReasonSwPowerCap | kReasonIdle));
  CHECK(s.throttled());
}

TEST_CASE("idle, application clocks and sync boost are not throttling, and power and heat are") {
  CHECK_FALSE(
      summarize_telemetry({reading(1980, 90, kReasonIdle | kReasonApplicationClocks | kReasonSyncBoost)}).throttled());
  for (const std::uint64_t r :
       {kReasonSwPowerCap, kReasonHwSlowdown, kReasonSwThermal, kReasonHwThermal, kReasonHwPowerBrake})
    CHECK(summarize_telemetry({reading(1980, 90), reading(1600, 700, r)}).throttled());
  CHECK(summarize_telemetry({}).samples == 0);
  CHECK_FALSE(summarize_telemetry({}).throttled());
}

TEST_CASE("reason names are NVML's, and an unknown bit is shown by its value") {
  CHECK(reason_names(kReasonSwPowerCap | kReasonHwThermal) ==
        std::vector<std::string>{"SW power cap", "HW thermal slowdown"});
  CHECK(reason_names(0x400) == std::vector<std::string>{"reason 0x400"});
  CHECK(reason_names(0).empty());
}

TEST_CASE("a timing run without throttling runs once and keeps its telemetry") {
  ScriptedMonitor monitor({{reading(1980, 400), reading(1980, 420)}});
  int runs = 0, resets = 0;
  std::optional<TimingTelemetry> telemetry;
  CHECK(time_with_telemetry(
      &monitor, [&] { return ++runs, true; }, [&] { ++resets; }, telemetry, kQuick));
  CHECK(runs == 1);
  CHECK(resets == 0);
  REQUIRE(telemetry);
  CHECK_FALSE(telemetry->remeasured());
  CHECK(telemetry->counted.samples >= 2);  // one at the start, one at the end
  CHECK(describe_remeasure(*telemetry).empty());
}

TEST_CASE("a run throttled for power is reset and timed again once, and the second run counts") {
  ScriptedMonitor monitor({{reading(1980, 650), reading(1500, 700, kReasonSwPowerCap)}, {reading(1980, 500)}});
  int runs = 0, resets = 0;
  std::optional<TimingTelemetry> telemetry;
  const bool ok = time_with_telemetry(
      &monitor, [&] { return ++runs, true; },
      [&] {
        ++resets;
        monitor.next_run();
      },
      telemetry, kQuick);
  CHECK(ok);
  CHECK(runs == 2);
  CHECK(resets == 1);
  REQUIRE(telemetry);
  REQUIRE(telemetry->remeasured());
  CHECK(telemetry->throttled_first->throttled());
  CHECK_FALSE(telemetry->counted.throttled());
  CHECK(telemetry->counted.sm_mhz.min == 1980);
  CHECK(describe_remeasure(*telemetry) ==
        "timed again after SW power cap in the first run; the second run counts (not throttled)");
}

TEST_CASE("a run throttled again is not timed a third time, and the note says it was throttled both times") {
  ScriptedMonitor monitor({{reading(1400, 700, kReasonHwThermal, 90)}});
  int runs = 0;
  std::optional<TimingTelemetry> telemetry;
  CHECK(time_with_telemetry(
      &monitor, [&] { return ++runs, true; }, [] {}, telemetry, kQuick));
  CHECK(runs == 2);
  REQUIRE(telemetry);
  CHECK(describe_remeasure(*telemetry) ==
        "timed again after HW thermal slowdown in the first run; the second run counts (throttled again: HW "
        "thermal slowdown)");
}

TEST_CASE("a timing that failed is not timed again, throttled or not, and its failure stands") {
  ScriptedMonitor monitor({{reading(1400, 700, kReasonSwPowerCap)}});
  int runs = 0;
  std::optional<TimingTelemetry> telemetry;
  CHECK_FALSE(time_with_telemetry(
      &monitor, [&] { return ++runs, false; }, [] {}, telemetry, kQuick));
  CHECK(runs == 1);
  REQUIRE(telemetry);
  CHECK_FALSE(telemetry->remeasured());
}

TEST_CASE("without a monitor the timing runs once and there is no telemetry") {
  int runs = 0;
  std::optional<TimingTelemetry> telemetry = TimingTelemetry{};
  CHECK(time_with_telemetry(
      nullptr, [&] { return ++runs, true; }, [] {}, telemetry, kQuick));
  CHECK(runs == 1);
  CHECK_FALSE(telemetry);
}

TEST_CASE("the sampler keeps sampling at its period until stopped") {
  ScriptedMonitor monitor({{reading(1980, 400)}});
  TelemetrySampler sampler(monitor, 2ms);
  std::this_thread::sleep_for(60ms);
  const auto samples = sampler.stop();
  CHECK(samples.size() >= 5);  // about 30 at 2 ms; a loaded machine still manages a few
}

TEST_CASE("telemetry goes into a task's JSON and comes back, the throttled first run included") {
  TaskResult t;
  t.task = "naive";
  t.status = Status::passed;
  t.telemetry = TimingTelemetry{summarize_telemetry({reading(1980, 500)}),
                                summarize_telemetry({reading(1400, 700, kReasonSwPowerCap)})};
  const nlohmann::json j = t;
  CHECK(j["telemetry"]["remeasured"] == true);
  CHECK(j["telemetry"]["throttled_first"]["reasons"] == nlohmann::json{"SW power cap"});
  CHECK(j["telemetry"]["counted"]["sm_mhz"]["median"] == 1980);
  CHECK(j["telemetry"]["note"].get<std::string>().find("second run counts") != std::string::npos);
  const auto back = j.get<TaskResult>();
  REQUIRE(back.telemetry);
  CHECK(back.telemetry->throttled_first->reasons == kReasonSwPowerCap);
  CHECK(back.telemetry->counted.power_w.max == 500);
  CHECK_FALSE(nlohmann::json(TaskResult{}).contains("telemetry"));  // none without NVML
}

TEST_CASE("NVML is not opened without a bus id, and a bus id it does not know gives no monitor and a reason") {
  std::string why;
  CHECK_FALSE(open_nvml_monitor("", why));
  CHECK(why.find("no PCI bus id") != std::string::npos);
  why.clear();
  // No NVML here (CI), or NVML without a GPU at this address (a GPU machine): unavailable either way.
  CHECK_FALSE(open_nvml_monitor("0000:ff:1f.7", why));
  CHECK_FALSE(why.empty());
}
