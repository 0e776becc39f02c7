#include "bitonic_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <span>

#include "bitonic_reference.hpp"
#include "gpulab/parallel.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

// Keys of one case: uniform over all 32-bit values, or a shape that trips up wrong networks or
// narrow comparisons (stress entries draw them at the timing size: sorted with every core).
std::vector<std::uint32_t> make_keys(const Case& c, Rng& rng) {
  const auto n = static_cast<std::size_t>(case_int(c, "n"));
  const std::string shape = c.params.value("distribution", "uniform");
  std::vector<std::uint32_t> keys(n);
  draw_each(rng, std::span(keys), [](Rng& r) { return static_cast<std::uint32_t>(r.next()); });
  if (shape == "uniform") {
    // Keys are any 32-bit values, the padding's UINT_MAX and 0 among them (uniform keys almost never
    // are): a kernel that tells padding from keys by value loses these.
    for (int extreme = 0; extreme < 8 && n > 0; ++extreme)
      keys[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(n) - 1))] = extreme % 2 ? 0u : 0xFFFFFFFFu;
    return keys;
  }
  if (shape == "sorted") {
    reference::sort_all_cores(keys);
  } else if (shape == "reversed") {
    reference::sort_all_cores(keys);
    std::reverse(keys.begin(), keys.end());
  } else if (shape == "high-equal") {  // one high half for all, random low halves: a comparison of
    const std::uint32_t high = keys.empty() ? 0 : keys[0] & 0xFFFF0000u;  // the high bits sees ties only
    for (auto& k : keys) k = high | (k & 0xFFFFu);
  } else if (shape == "equal") {
    std::fill(keys.begin(), keys.end(), keys.empty() ? 0 : keys[0]);
  } else if (shape == "few") {  // 8 distinct values, many ties, from both ends: UINT_MAX is the padding
    static constexpr std::array<std::uint32_t, 8> kFew{0, 1, 2, 3, 0xFFFFFFFCu, 0xFFFFFFFDu, 0xFFFFFFFEu, 0xFFFFFFFFu};
    for (auto& k : keys) k = kFew[k % 8];
  } else if (shape == "sawtooth") {
    for (std::size_t i = 0; i < n; ++i) keys[i] = static_cast<std::uint32_t>(i % 1000);
  } else {
    throw std::invalid_argument(
        fmt::format("case '{}': unknown distribution '{}' (uniform, sorted, reversed, equal, "
                    "few, sawtooth, high-equal)",
                    c.name, shape));
  }
  return keys;
}

// Says where a wrong output stops being sorted, or that it is sorted but lost keys.
std::string diagnose(const std::vector<std::uint32_t>& got) {
  const auto at = std::is_sorted_until(got.begin(), got.end());
  if (at == got.end())
    return "the output is sorted but is not a permutation of the input: keys were lost or duplicated";
  const std::size_t i = static_cast<std::size_t>(at - got.begin()) - 1;
  std::string around;
  for (std::size_t p = i >= 2 ? i - 2 : 0; p < std::min(got.size(), i + 4); ++p)
    around += fmt::format("{}{}{}", around.empty() ? "" : ", ", p == i || p == i + 1 ? "*" : "", got[p]);
  return fmt::format("not sorted at index {}: {} > {} (around it: {})", i, got[i], got[i + 1], around);
}

using Fingerprint = std::pair<std::uint64_t, std::uint64_t>;

// A fingerprint of a multiset of keys that no order changes: two sums of mixed keys, each key
// first mapped back through `undo` (the transform its load applied), so it matches the contents.
Fingerprint fingerprint(std::span<const std::uint32_t> keys, const WordTransform& undo = {}) {
  std::uint64_t sum = 0, mixed = 0;
  for (std::uint32_t key : keys) {
    std::uint64_t z = undo(key) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    sum += z ^ (z >> 31);
    mixed += (z ^ (z >> 29)) * (z | 1);
  }
  return {sum, mixed};
}

// The same fingerprint on every core (the parts' sums add up), with each part's count of descents
// (keys greater than the next one) for a check of order in the same pass.
Fingerprint fingerprint_all_cores(std::span<const std::uint32_t> keys, const WordTransform& undo = {},
                                  std::size_t* descents = nullptr) {
  std::mutex merge;
  Fingerprint total{0, 0};
  std::size_t total_descents = 0;
  parallel_ranges(keys.size(), [&](std::size_t begin, std::size_t end) {
    std::size_t part_descents = 0;
    if (descents)
      for (std::size_t i = std::max<std::size_t>(begin, 1); i < end; ++i) part_descents += keys[i - 1] > keys[i];
    const Fingerprint part = fingerprint(keys.subspan(begin, end - begin), undo);
    const std::lock_guard lock(merge);
    total_descents += part_descents;
    total.first += part.first;
    total.second += part.second;
  });
  if (descents) *descents = total_descents;
  return total;
}

// A linear-time check of a timed sort: the output is in order and holds the keys of the contents
// (fingerprint `input`) that the load transformed by `load`. On every core: it runs after every
// timed launch of keys by the million.
Comparison linear_check(const std::vector<std::uint32_t>& got, Fingerprint input, const WordTransform& load) {
  Comparison cmp;
  cmp.total = got.size();
  const Fingerprint output = fingerprint_all_cores(got, load.inverse(), &cmp.wrong);
  if (cmp.wrong > 0) {
    cmp.note = diagnose(got);
  } else if (output != input) {
    cmp.wrong = 1;
    cmp.note = "the output is sorted but is not a permutation of the input: keys were lost or duplicated";
  }
  return cmp;
}

// Lists longer than this (the 2^24-key timing cases) get no sorted reference: their first launch,
// like every timed one, is checked in linear time (in order, and the same multiset of keys), which
// is what a sorted reference would tell, without sorting 16 million keys on the host for it.
constexpr std::size_t kReferenceSortUpTo = std::size_t{1} << 22;

// A case's contents (one list of keys per input set), their fingerprints, and contents 0 sorted
// (empty above kReferenceSortUpTo keys).
struct CaseKeys {
  std::string case_name;
  std::vector<std::vector<std::uint32_t>> contents;
  std::vector<Fingerprint> fingerprints;
  std::vector<std::uint32_t> sorted_first;
};

class BitonicDriver final : public LabDriver {
 public:
  std::string rate_unit() const override { return "Gkeys/s"; }
  std::string rate_work() const override { return "keys sorted"; }

  // Random keys on the device and the naive sort's probe (the naive_speedup bound measures it again
  // between a task's timed launches).
  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const int n = static_cast<int>(case_int(timing, "n"));
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration", timing.name));
    calibration_keys_.resize(n);
    draw_each(rng, std::span(calibration_keys_), [](Rng& r) { return static_cast<std::uint32_t>(r.next()); });
    calibration_buffer_ = ctx.device.allocate(calibration_keys_.size() * sizeof(std::uint32_t));
    naive_ = labs::harness_naive_sort(ctx.device);
    cal.probes["naive"] =
        Probe{[this] { calibration_buffer_->upload(calibration_keys_.data(), calibration_keys_.size() * 4); },
              [this, n] { naive_(*calibration_buffer_, n); }, static_cast<double>(n)};
  }

  void measure_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const int n = static_cast<int>(case_int(timing, "n"));
    const std::vector<std::uint32_t>& keys = calibration_keys_;
    Buffer* buffer = calibration_buffer_.get();
    // Fresh keys before every launch: on sorted keys a network swaps nothing and looks faster.
    auto rate_of = [&](const labs::SortLaunch& sort) {
      const double ms = median_launch_ms(
          ctx, [&] { sort(*buffer, n); }, [&] { buffer->upload(keys.data(), keys.size() * sizeof(std::uint32_t)); });
      return n / (ms * 1e-3) / 1e9;
    };
    cal.rates["naive"] = rate_of(naive_);
    // Here, not in prepare: a run given earlier rates never starts the vendor library.
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
    // Input sets in distinct buffers with different keys: contents 0 are compared with std::sort's
    // result (up to kReferenceSortUpTo keys), every later launch with a linear check (in order, and
    // the same keys). The runner moves contents between sets during timing (load), and each load
    // XORs the keys with a new random mask: a new multiset every time, so no cache of sorted results
    // (not even one keyed by an order-free hash of the keys) can hit. The contents stay on the device
    // untouched; before every launch of the in-place sort the device writes them, transformed, into
    // the set's buffer.
    const std::shared_ptr<const CaseKeys> keys = keys_for(ctx, task, c);
    struct Set {
      std::unique_ptr<Buffer> keys;
      int holds = 0;
      WordTransform transform;  // a launch sorts contents[holds] transformed so
    };
    const int count_of_sets = input_sets(c);
    std::vector<std::unique_ptr<Buffer>> pristine(count_of_sets);  // contents i, untouched
    std::vector<Set> sets(count_of_sets);
    for (int i = 0; i < count_of_sets; ++i) {
      const std::size_t size = keys->contents[i].size() * sizeof(std::uint32_t);
      pristine[i] = ctx.device.allocate(size);
      pristine[i]->upload(keys->contents[i].data(), size);
      sets[i] = {ctx.device.allocate_guarded(size), i, {}};
    }
    MaskDraws masks(ctx, task, c);
    const std::vector<std::uint32_t>& expected = keys->sorted_first;
    const std::size_t n = keys->contents[0].size(), bytes = n * sizeof(std::uint32_t);
    const auto sort = labs::bind_sort(ctx.device, task.function);
    std::vector<std::uint32_t> got(n);

    Launchable l;
    l.sets = count_of_sets;
    l.load = [&](int i, int what) {
      sets[i].holds = what;
      sets[i].transform = masks.next_other(sets[i].transform);
    };
    l.prepare = [&](int i) {  // it sorts in place: the keys again before every launch
      if (bytes) ctx.device.copy_transformed(*pristine[sets[i].holds], *sets[i].keys, sets[i].transform);
      ctx.device.synchronize();
    };
    l.launch = [&](int i) { sort(*sets[i].keys, static_cast<int>(n)); };
    l.quick_check = [&](int i) {
      sets[i].keys->download(got.data(), bytes);
      return linear_check(got, keys->fingerprints[sets[i].holds], sets[i].transform);
    };
    l.check = [&](int i) {
      if (sets[i].holds != 0 || !sets[i].transform.identity() || expected.size() != n) return l.quick_check(i);
      sets[i].keys->download(got.data(), bytes);
      Comparison cmp = compare_exact<std::uint32_t>(expected, got);
      if (!cmp.ok()) cmp.note = diagnose(got);
      return cmp;
    };
    l.watched = [&](int i) {
      const Set& set = sets[i];
      return std::vector<Watched>{{.buffer = set.keys.get(),
                                   .name = "keys",
                                   .element_bytes = sizeof(std::uint32_t),
                                   .original = keys->contents[set.holds].data(),
                                   .transform = set.transform,
                                   .in_place = true}};
    };
    l.work = static_cast<double>(n);
    l.least_bytes = 2.0 * static_cast<double>(bytes);  // every key read and written once
    return execute(ctx, c, l);
  }

 private:
  // The timing case's keys are drawn once per run, not per task, with their fingerprints:
  // the timed launches get new keys each (masks), and the first launch of every task is checked
  // in full.
  std::shared_ptr<const CaseKeys> keys_for(const RunContext& ctx, const Task& task, const Case& c) {
    if (c.timing && timing_keys_ && timing_keys_->case_name == c.name) return timing_keys_;
    Rng rng = ctx.inputs_rng(task, c);
    auto made = std::make_shared<CaseKeys>();
    made->case_name = c.name;
    for (int i = 0; i < input_sets(c); ++i) {
      made->contents.push_back(make_keys(c, rng));
      made->fingerprints.push_back(fingerprint_all_cores(made->contents.back()));
    }
    if (made->contents[0].size() <= kReferenceSortUpTo) {
      made->sorted_first = made->contents[0];
      reference::sort_all_cores(made->sorted_first);
    }
    if (c.timing) timing_keys_ = made;
    return made;
  }

  std::shared_ptr<const CaseKeys> timing_keys_;
  std::vector<std::uint32_t> calibration_keys_;
  std::unique_ptr<Buffer> calibration_buffer_;
  labs::SortLaunch naive_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<BitonicDriver>(); }

}  // namespace gpulab
