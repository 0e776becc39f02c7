#include "reduction_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "lab_driver.hpp"
#include "reduction_reference.hpp"

namespace gpulab {
namespace {

// Floats in [1, 2): the exponent of 1.0 and a random mantissa, of which a distribution keeps the
// bits in `mantissa_bits`: fine (all 23: a float sum rounds), coarse (the top 3: multiples of 1/8,
// whose sums are exact in any order up to 2^21), ones (none: every element is 1).
std::vector<float> make_input(const Case& c, Rng& rng) {
  const auto n = static_cast<std::size_t>(case_int(c, "n"));
  const std::string distribution = c.params.value("distribution", "coarse");
  std::uint32_t mantissa_bits = 0;
  if (distribution == "fine")
    mantissa_bits = 0x007FFFFFu;
  else if (distribution == "coarse")
    mantissa_bits = 0x00700000u;
  else if (distribution != "ones")
    throw std::invalid_argument(
        fmt::format("case '{}': unknown distribution '{}' (fine, coarse, ones)", c.name, distribution));
  std::vector<float> values(n);
  draw_each(rng, std::span(values), [mantissa_bits](Rng& r) {
    return std::bit_cast<float>(0x3F800000u | (static_cast<std::uint32_t>(r.next()) & mantissa_bits));
  });
  return values;
}

// Spikes: in every input set of a large case with a rounding sum, kSpikes elements become ±2^24 to
// ±1.875 * 2^24 (exact floats), at seeded places, before each launch. Each is larger than the sum's
// tolerance, so a sum that skips or samples part of its input misses one and fails, and so does a
// sum cached from an earlier launch: the spikes move every time and no single word reveals where.
constexpr int kSpikes = 16;
constexpr std::size_t kSpikedFrom = std::size_t{1} << 16;

WordPatches draw_spikes(Rng& rng, std::size_t n) {
  WordPatches spikes;
  while (spikes.size() < kSpikes) {
    const auto at = static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(n) - 1));
    if (std::any_of(spikes.begin(), spikes.end(), [at](const auto& s) { return s.first == at; })) continue;
    const float magnitude = 16777216.0f * (1.0f + static_cast<float>(rng.integer(0, 7)) / 8.0f);
    spikes.emplace_back(at, std::bit_cast<std::uint32_t>(rng.integer(0, 1) ? magnitude : -magnitude));
  }
  return spikes;
}

// What a wrong sum most likely means, for the student.
std::string diagnose(double expected, double tolerance, float got, std::int64_t n, bool spiked) {
  const double off = static_cast<double>(got) - expected;
  if (std::isnan(got)) return "the sum is NaN: out[0] was never written (it holds the poison), or NaN was added";
  // Spikes are multiples of 2^21: missed or doubled ones move the sum by at least that, even when
  // several of opposite signs partly cancel.
  if (spiked && std::fabs(off) >= 2097152.0 && std::fabs(off) <= 4.0 * static_cast<double>(n) + 1.0e9)
    return fmt::format(
        "off by {:.6g}: in large inputs the grader puts {} elements of ±2^24 or more at random places, new ones "
        "before every launch, and missing or doubling one moves the sum by that much: does the kernel read every "
        "element, in every launch (no result kept from an earlier one)?",
        off, kSpikes);
  if (std::isinf(got) || std::fabs(off) > 4.0 * static_cast<double>(n) + 1)
    return "the sum is far larger than n elements below 2 can make: did a thread read past the end of `in` "
           "(the memory there reads as 3.4e38), or add a partial sum that was never written?";
  const double mean = std::fabs(expected) / static_cast<double>(n);
  return fmt::format(
      "off by {:.6g}, about {:.3g} elements' worth (the mean element is {:.4g}): were elements, a tail or a "
      "block's partial sum missed or counted twice? (allowed: {})",
      off, off / mean, mean,
      tolerance == 0 ? "nothing: this input sums exactly in any order" : fmt::format("±{:.3g}", tolerance));
}

// Compares a student's sum with the exact sum of the input as XORed by `mask`, with `spikes` in
// place of the elements they overwrite.
Comparison check_sum(const reference::BinadeCounts& counts, std::uint32_t mask, const std::vector<float>& input,
                     const WordPatches& spikes, float got) {
  reference::ExactSum exact = reference::exact_sum(counts, mask);
  for (const auto& [at, word] : spikes) {
    const double was = std::bit_cast<float>(std::bit_cast<std::uint32_t>(input[at]) ^ mask),
                 now = std::bit_cast<float>(word);
    exact.sum += now - was;
    exact.sum_abs += std::fabs(now) - std::fabs(was);
  }
  const double tolerance = reference::sum_tolerance(counts.n, exact);
  const std::array<double, 1> expected{exact.sum}, bound{tolerance};
  const std::array<float, 1> seen{got};
  Comparison cmp = compare_within(expected, bound, seen);
  if (!cmp.ok()) cmp.note = diagnose(exact.sum, tolerance, got, counts.n, !spikes.empty());
  return cmp;
}

// A case's input and the counts its exact sums follow from.
struct CaseData {
  std::vector<float> input;
  reference::BinadeCounts counts;
};

// Scratch floats the contract gives every sum: enough for pairwise passes in global memory.
std::size_t scratch_floats(std::size_t n) { return (n + 1) / 2; }

class ReductionDriver final : public LabDriver {
 public:
  std::string rate_work() const override { return "bytes read once"; }

  // CUB's sum (CUDA) and the CPU's, on the timing case's input.
  void measure_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const std::shared_ptr<const CaseData> data = data_for(ctx, Task{}, timing);
    const std::size_t n = data->input.size(), bytes = n * sizeof(float);
    // Here, not in prepare: a run given earlier rates never starts the vendor library.
    if (auto vendor = labs::vendor_reduce(ctx.device, static_cast<int>(n))) {
      const std::unique_ptr<Buffer> in = ctx.device.allocate(bytes), out = ctx.device.allocate(sizeof(float));
      in->upload(data->input.data(), bytes);
      const double ms = median_launch_ms(
          ctx, Probe{[] {}, [&] { vendor->launch(*in, *out, static_cast<int>(n)); }, static_cast<double>(bytes)});
      cal.library = vendor->name;
      cal.rates["library"] = static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
    }
    // The CPU on at most 2^24 floats: a fraction of a second on one core.
    const std::span<const float> sample(data->input.data(), std::min<std::size_t>(n, std::size_t{1} << 24));
    volatile double sink = 0;  // the sum is used, so the loop is not optimised away
    measure_cpu_rates(
        ctx, cal, static_cast<double>(sample.size_bytes()), [&] { sink = reference::sum_one_core(sample); },
        [&] { sink = reference::sum_all_cores(sample); });
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    // One input; each input set holds it with every word XORed with a mask of its own (sign and
    // mantissa bits: the elements stay in one binade, all of one sign), and a set gets a new mask
    // before each warm-up and timed launch, written on the device from an untouched copy. The exact
    // sum under any mask follows from the input's mantissa-bit counts. One word reveals the mask, so
    // a large rounding case also gets spikes (draw_spikes), new ones before every launch: a result
    // cached and corrected for the mask, or a sum of a sample, misses them.
    const std::shared_ptr<const CaseData> data = data_for(ctx, task, c);
    const std::vector<float>& input = data->input;
    const int n = static_cast<int>(input.size());
    const std::size_t bytes = input.size() * sizeof(float),
                      scratch_bytes = scratch_floats(input.size()) * sizeof(float);
    Rng masks(derive_seed(ctx.run_seed, ctx.manifest.id, "masks " + task.name, c.name));
    auto new_mask = [&] {
      return WordTransform{(static_cast<std::uint32_t>(masks.next()) & reference::kSignAndMantissa) | 1u};
    };
    struct Set {
      std::unique_ptr<Buffer> in, scratch, out;
      WordTransform transform;  // `in` holds `input` transformed so,
      WordPatches spikes;       // with these elements written over it
    };
    const int count_of_sets = input_sets(c);
    const PristineInput pristine(ctx.device, input.data(), bytes, count_of_sets);
    const bool spiked = c.params.value("distribution", "coarse") == "fine" && input.size() >= kSpikedFrom;
    Rng spike_rng(derive_seed(ctx.run_seed, ctx.manifest.id, "spikes " + task.name, c.name));
    std::vector<Set> sets(count_of_sets);
    auto hold = [&](Set& set, const WordTransform& t) {
      set.transform = t;
      set.spikes = spiked ? draw_spikes(spike_rng, input.size()) : WordPatches{};
      pristine.write(*set.in, t, set.spikes);
    };
    for (int i = 0; i < count_of_sets; ++i) {
      sets[i] = {ctx.device.allocate_guarded(bytes),
                 ctx.device.allocate_guarded(scratch_bytes),
                 ctx.device.allocate_guarded(sizeof(float)),
                 {}};
      hold(sets[i], i == 0 ? WordTransform{} : new_mask());  // the first launch of a case sees the plain input
    }
    const auto reduce = labs::bind_reduce(ctx.device, task.function);

    Launchable l;
    l.sets = count_of_sets;
    l.load = [&](int i, int) { hold(sets[i], new_mask()); };
    l.prepare = [&](int i) {  // nothing survives in scratch from one launch to the next
      sets[i].out->fill(kPoisonByte);
      sets[i].scratch->fill(kPoisonByte);
    };
    l.launch = [&](int i) { reduce(*sets[i].in, *sets[i].scratch, *sets[i].out, n); };
    l.check = [&](int i) {
      float got = 0;
      sets[i].out->download(&got, sizeof got);
      return check_sum(data->counts, sets[i].transform.xor_mask, input, sets[i].spikes, got);
    };
    l.watched = [&](int i) {
      return std::vector<Watched>{
          {sets[i].in.get(), "in", sizeof(float), input.data(), sets[i].transform, &sets[i].spikes},
          {sets[i].scratch.get(), "scratch", sizeof(float)},
          {sets[i].out.get(), "out", sizeof(float)}};
    };
    l.work = l.least_bytes = static_cast<double>(bytes);  // every element read once
    return execute(ctx, c, l);
  }

 private:
  // The timing case's input is drawn and counted once per run, not per task (its calibration uses
  // it too); every other case's is the task's own.
  std::shared_ptr<const CaseData> data_for(const RunContext& ctx, const Task& task, const Case& c) {
    return timing_data_.get(c, [&] {
      Rng rng = ctx.inputs_rng(task, c);
      auto made = std::make_shared<CaseData>();
      made->input = make_input(c, rng);
      made->counts = reference::count_mantissa_bits(made->input);
      return made;
    });
  }

  TimingCaseData<CaseData> timing_data_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<ReductionDriver>(); }

}  // namespace gpulab
