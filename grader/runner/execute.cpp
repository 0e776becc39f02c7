#include <fmt/format.h>

#include <chrono>

#include "lab_driver.hpp"

namespace gpulab {

std::int64_t case_int(const Case& c, const char* key) {
  if (!c.params.contains(key) || !c.params[key].is_number_integer())
    throw std::invalid_argument(fmt::format("case '{}' needs an integer '{}' in the manifest", c.name, key));
  return c.params[key].get<std::int64_t>();
}

double median_launch_ms(const RunContext& ctx, const std::function<void()>& launch,
                        const std::function<void()>& prepare) {
  for (int i = 0; i < ctx.manifest.warmup; ++i) {
    prepare();
    launch();
    ctx.device.synchronize();
  }
  std::vector<double> samples;
  for (int i = 0; i < ctx.manifest.repeats; ++i) {
    prepare();
    samples.push_back(ctx.device.time(launch).counted_ms());
    ctx.heartbeat();
  }
  return summarize(samples).median;
}

double median_host_ms(const std::function<void()>& work, int repeats) {
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return summarize(samples).median;
}

CaseResult execute(const RunContext& ctx, const Case& c, const Launchable& l) {
  CaseResult result;
  result.name = c.name;
  result.work = l.work;
  auto fail_with = [&](const Comparison& cmp, const char* when) {
    result.passed = false;
    result.message = fmt::format("case {}: {}{}", c.name, when, cmp.summary());
    result.details = fmt::format("case {}: {}{}", c.name, when, cmp.report());
    return result;
  };

  l.prepare();
  l.launch();
  ctx.device.synchronize();
  if (const Comparison first = l.check(); !first.ok()) return fail_with(first, "");

  if (c.timing) {
    for (int i = 1; i < ctx.manifest.warmup; ++i) {
      l.prepare();
      l.launch();
      ctx.device.synchronize();
      ctx.heartbeat();
    }
    std::vector<double> samples;
    for (int i = 0; i < ctx.manifest.repeats; ++i) {
      l.prepare();  // so the checked output below is the work of a timed launch
      samples.push_back(ctx.device.time(l.launch).counted_ms());
      ctx.heartbeat();
    }
    if (const Comparison timed = l.check(); !timed.ok()) return fail_with(timed, "the output of a timed launch is wrong: ");
    result.timing = summarize(samples);
  }
  result.passed = true;
  return result;
}

}  // namespace gpulab
