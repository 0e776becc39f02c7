#include "bitonic_lab.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpulab/reference.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

// Keys of one case: uniform over all 32-bit values, or a shape that trips up wrong networks.
std::vector<std::uint32_t> make_keys(const Case& c, Rng& rng) {
  const auto n = static_cast<std::size_t>(case_int(c, "n"));
  const std::string shape = c.params.value("distribution", "uniform");
  std::vector<std::uint32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = static_cast<std::uint32_t>(rng.next());
  if (shape == "uniform") return keys;
  if (shape == "sorted") {
    std::sort(keys.begin(), keys.end());
  } else if (shape == "reversed") {
    std::sort(keys.rbegin(), keys.rend());
  } else if (shape == "equal") {
    std::fill(keys.begin(), keys.end(), keys.empty() ? 0 : keys[0]);
  } else if (shape == "few") {
    for (auto& k : keys) k %= 8;  // 8 distinct values, many ties
  } else if (shape == "sawtooth") {
    for (std::size_t i = 0; i < n; ++i) keys[i] = static_cast<std::uint32_t>(i % 1000);
  } else {
    throw std::invalid_argument(fmt::format("case '{}': unknown distribution '{}' (uniform, sorted, reversed, equal, "
                                            "few, sawtooth)", c.name, shape));
  }
  return keys;
}

// Says where a wrong output stops being sorted, or that it is sorted but lost keys.
std::string diagnose(const std::vector<std::uint32_t>& got) {
  const auto at = std::is_sorted_until(got.begin(), got.end());
  if (at == got.end()) return "the output is sorted but is not a permutation of the input: keys were lost or duplicated";
  const std::size_t i = static_cast<std::size_t>(at - got.begin()) - 1;
  std::string around;
  for (std::size_t p = i >= 2 ? i - 2 : 0; p < std::min(got.size(), i + 4); ++p)
    around += fmt::format("{}{}{}", around.empty() ? "" : ", ", p == i || p == i + 1 ? "*" : "", got[p]);
  return fmt::format("not sorted at index {}: {} > {} (around it: {})", i, got[i], got[i + 1], around);
}

class BitonicDriver final : public LabDriver {
 public:
  std::string rate_unit() const override { return "Gkeys/s"; }

  void calibrate(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const int n = static_cast<int>(case_int(timing, "n"));
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration", timing.name));
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = static_cast<std::uint32_t>(rng.next());
    auto buffer = ctx.device.allocate(keys.size() * sizeof(std::uint32_t));
    // Fresh keys before every launch: on sorted keys a network swaps nothing and looks faster.
    auto rate_of = [&](const labs::SortLaunch& sort) {
      const double ms = median_launch_ms(ctx, [&] { sort(*buffer, n); },
                                         [&] { buffer->upload(keys.data(), keys.size() * sizeof(std::uint32_t)); });
      return n / (ms * 1e-3) / 1e9;
    };
    cal.rates["naive"] = rate_of(labs::harness_naive_sort(ctx.device));
    if (auto vendor = labs::vendor_sort(ctx.device, n)) {
      cal.library = vendor->name;
      cal.rates["library"] = rate_of(vendor->launch);
    }
    // The CPU on at most 2^22 keys: a fraction of a second on one core.
    std::vector<std::uint32_t> sample(keys.begin(), keys.begin() + std::min<std::size_t>(keys.size(), 1u << 22)), work;
    auto cpu_rate = [&](void (*sort)(std::span<std::uint32_t>)) {
      std::vector<double> ms;
      for (int i = 0; i < 3; ++i) {
        work = sample;  // copied outside the timed part
        ms.push_back(median_host_ms([&] { sort(work); }, 1));
      }
      return sample.size() / (summarize(ms).median * 1e-3) / 1e9;
    };
    cal.rates["cpu_1core"] = cpu_rate(reference::sort_one_core);
    ctx.heartbeat();
    cal.rates["cpu_all_cores"] = cpu_rate(reference::sort_all_cores);
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    Rng rng = ctx.rng(task, c);
    const std::vector<std::uint32_t> input = make_keys(c, rng);
    std::vector<std::uint32_t> expected = input;
    std::sort(expected.begin(), expected.end());
    const std::size_t bytes = input.size() * sizeof(std::uint32_t);
    auto keys = ctx.device.allocate(bytes);
    const auto sort = labs::bind_sort(ctx.device, task.function);
    std::vector<std::uint32_t> got(input.size());

    Launchable l;
    l.prepare = [&] { keys->upload(input.data(), bytes); };  // the sort works in place
    l.launch = [&] { sort(*keys, static_cast<int>(input.size())); };
    l.check = [&] {
      keys->download(got.data(), bytes);
      Comparison cmp = compare_exact<std::uint32_t>(expected, got);
      if (!cmp.ok()) cmp.note = diagnose(got);
      return cmp;
    };
    l.work = static_cast<double>(input.size());
    return execute(ctx, c, l);
  }
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<BitonicDriver>(); }

}  // namespace gpulab
