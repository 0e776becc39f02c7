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

// Elements of magnitude in [1, 2): the exponent of 1.0 and a random mantissa, of which a distribution
// keeps some bits: fine (all 23: a float sum rounds), coarse (the top 3: multiples of 1/8, whose sums
// are exact in any order up to 2^21), ones (none: every element is 1), all positive; signed (coarse
// with a random sign each: still exact in any order, and a sum of magnitudes is wrong); or precision:
// balanced, signs at random and fixed low mantissa bits, so that a sum of elements rounded to fewer
// bits is off in one direction (reference::balanced_element); or lowbit (small n): 7 random fraction
// bits and a lone low bit, an exact sum that elements rounded to 8 to 23 - log2(n) bits miss
// (reference::lowbit_element).
std::vector<float> make_input(const Case& c, Rng& rng) {
  const auto n = static_cast<std::size_t>(case_int(c, "n"));
  const std::string distribution = c.params.value("distribution", "coarse");
  std::vector<float> values(n);
  if (distribution == "precision") {
    draw_each(rng, std::span(values), [](Rng& r) { return reference::balanced_element(r.next()); });
    return values;
  }
  if (distribution == "lowbit") {
    const int unit_bits = reference::lowbit_unit_bits(static_cast<std::int64_t>(n));
    draw_each(rng, std::span(values), [unit_bits](Rng& r) { return reference::lowbit_element(r.next(), unit_bits); });
    return values;
  }
  std::uint32_t random_bits = 0;  // the mantissa's, and the sign's for signed
  if (distribution == "fine")
    random_bits = 0x007FFFFFu;
  else if (distribution == "coarse")
    random_bits = 0x00700000u;
  else if (distribution == "signed")
    random_bits = 0x80700000u;
  else if (distribution != "ones")
    throw std::invalid_argument(fmt::format(
        "case '{}': unknown distribution '{}' (fine, coarse, signed, ones, precision, lowbit)", c.name, distribution));
  draw_each(rng, std::span(values), [random_bits](Rng& r) {
    return std::bit_cast<float>(0x3F800000u | (static_cast<std::uint32_t>(r.next()) & random_bits));
  });
  return values;
}

reference::Inputs inputs_of(const Case& c) {
  return c.params.value("distribution", "coarse") == "precision" ? reference::Inputs::balanced : reference::Inputs::any;
}

// The bits a timed launch's mask may flip: the sign and the mantissa, but for precision inputs not the
// low 13 bits that make rounding to fewer bits show. `always` is one of them, so no mask is the identity.
MaskBits mask_bits(const Case& c) {
  if (inputs_of(c) == reference::Inputs::balanced) return {.may = 0x807FE000u, .always = 1u << 13};
  return {.may = reference::kSignAndMantissa};
}

// Spikes: in every input set of a large case with a rounding sum, kSpikes elements are written over at
// seeded places before each launch, the last element always (a dropped tail or last tile misses it),
// the others new each time; each is ±M to ±1.875 M, M the least power of two from 2 up that is at least
// four times the tolerance: larger than the tolerance, so a sum that skips or samples part of its input
// misses one and fails, and so does a sum cached from an earlier launch: the spikes move every time and
// no single word reveals where. Small enough to change the tolerance itself by a few parts in 10^4
// (their own rounding), and for balanced inputs to keep every running sum far below 2^13.
constexpr int kSpikes = 16;
constexpr std::size_t kSpikedFrom = std::size_t{1} << 16;

double spike_magnitude(double tolerance) { return std::max(2.0, std::exp2(std::ceil(std::log2(4 * tolerance)))); }

WordPatches draw_spikes(Rng& rng, std::size_t n, double magnitude) {
  return draw_patches(
      rng, kSpikes, n,
      [magnitude](Rng& r, std::size_t) {
        const auto value = static_cast<float>(magnitude * (1.0 + static_cast<double>(r.integer(0, 7)) / 8.0));
        return std::bit_cast<std::uint32_t>(r.integer(0, 1) ? value : -value);
      },
      n - 1);
}

// What a wrong sum most likely means, for the student.
std::string diagnose(const reference::ExactSum& exact, double tolerance, float got, double spike) {
  const double off = static_cast<double>(got) - exact.sum;
  if (std::isnan(got)) return "the sum is NaN: out[0] was never written (it holds the poison), or NaN was added";
  const double n = static_cast<double>(exact.n);
  if (std::isinf(got) || std::fabs(off) > 2 * n + 2 * kSpikes * spike + 1)
    return "the sum is far larger than n elements below 2 can make: did a thread read past the end of `in` "
           "(the memory there reads as 3.4e38), or add a partial sum that was never written?";
  // Spikes far larger than the elements are multiples of spike / 8: missed or doubled ones move the
  // sum by at least that, even when several of opposite signs partly cancel.
  if (spike >= 64 && std::fabs(off) >= spike / 8 - tolerance)
    return fmt::format(
        "off by {:.6g}: in large inputs the grader writes {} elements of ±{:g} or more over the input, the last "
        "element and others at random places, new ones before every launch, and missing or doubling one moves the "
        "sum by that much: does the kernel read every element, the last one included, in every launch (no result "
        "kept from an earlier one)?",
        off, kSpikes, spike);
  const double mean = exact.sum_abs / n;
  return fmt::format(
      "off by {:.6g}, about {:.3g} elements' worth (the mean magnitude is {:.4g}){}: were elements, a tail or a "
      "block's partial sum missed or counted twice, or were elements or sums kept in fewer bits than a float's "
      "(half, bfloat16, truncated mantissas)? (allowed: {})",
      off, off / mean, mean,
      spike > 0 ? fmt::format("; {} elements of ±{:g} or more, the last one among them, are written over this input",
                              kSpikes, spike)
                : "",
      tolerance == 0 ? "nothing: this input sums exactly in any order" : fmt::format("±{:.3g}", tolerance));
}

// The exact sum of the input as XORed by `mask`, with `spikes` in place of the elements they overwrite.
reference::ExactSum spiked_sum(const reference::BinadeCounts& counts, std::uint32_t mask,
                               const std::vector<float>& input, const WordPatches& spikes) {
  reference::ExactSum exact = reference::exact_sum(counts, mask);
  for (const auto& [at, word] : spikes) {
    const double was = std::bit_cast<float>(std::bit_cast<std::uint32_t>(input[at]) ^ mask),
                 now = std::bit_cast<float>(word);
    exact.sum += now - was;
    exact.sum_abs += std::fabs(now) - std::fabs(was);
    exact.sum_squares += now * now;  // still at least the sum of squares: `was` stays counted
  }
  return exact;
}

// Compares a student's sum with the exact sum of the input as XORed by `mask`, with `spikes` of
// magnitude `spike` (0: none) in place of the elements they overwrite.
Comparison check_sum(const reference::BinadeCounts& counts, std::uint32_t mask, const std::vector<float>& input,
                     const WordPatches& spikes, double spike, reference::Inputs inputs, float got) {
  const reference::ExactSum exact = spiked_sum(counts, mask, input, spikes);
  const double tolerance = reference::sum_tolerance(exact, inputs);
  const std::array<double, 1> expected{exact.sum}, bound{tolerance};
  const std::array<float, 1> seen{got};
  Comparison cmp = compare_within(expected, bound, seen);
  if (!cmp.ok()) cmp.note = diagnose(exact, tolerance, got, spike);
  return cmp;
}

// A case's input and the counts its exact sums follow from.
struct CaseData {
  std::vector<float> input;
  reference::BinadeCounts counts;
};

// Scratch floats the contract gives every sum: enough for pairwise passes in global memory.
std::size_t scratch_floats(std::size_t n) { return (n + 1) / 2; }

// One input set of a case: its buffers, and what `in` holds.
struct Set {
  std::unique_ptr<Buffer> in, scratch, out;
  WordTransform transform;  // `in` holds the input transformed so,
  WordPatches spikes;       // with these elements written over it,
  double spike = 0;         // of magnitude spike to 1.875 spike (0: none)
};

class ReductionDriver final : public LabDriver {
 public:
  std::string rate_work() const override { return "bytes read once"; }

  // The staff kernel: the harness's own shared-memory tree (the tree task's design), on the timing
  // case's input; the tree's staff_fraction bound measures it again between the task's timed launches.
  // Not on a CPU device, where no bound is set: there it would take seconds of a `make check`.
  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    if (ctx.device.info().device_class != DeviceClass::gpu) return;
    const std::shared_ptr<const CaseData> data = data_for(ctx, Task{}, timing);
    const std::size_t n = data->input.size(), bytes = n * sizeof(float);
    staff_in_ = ctx.device.allocate(bytes);
    staff_in_->upload(data->input.data(), bytes);
    staff_scratch_ = ctx.device.allocate((n / 256 + 64) * sizeof(float));  // every level's block sums
    staff_out_ = ctx.device.allocate(sizeof(float));
    staff_ = labs::staff_reduce(ctx.device);
    cal.probes["staff"] =
        Probe{[] {}, [this, n] { staff_(*staff_in_, *staff_scratch_, *staff_out_, static_cast<int>(n)); },
              static_cast<double>(bytes)};
  }

  // The staff tree, CUB's sum (CUDA) and the CPU's, on the timing case's input.
  void measure_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const std::shared_ptr<const CaseData> data = data_for(ctx, Task{}, timing);
    const std::size_t n = data->input.size(), bytes = n * sizeof(float);
    if (const auto staff = cal.probes.find("staff"); staff != cal.probes.end())
      cal.rates["staff"] = static_cast<double>(bytes) / (median_launch_ms(ctx, staff->second) * 1e-3) / 1e9;
    // Here, not in prepare: a run given earlier rates never starts the vendor library.
    if (auto vendor = labs::vendor_reduce(ctx.device, static_cast<int>(n))) {
      std::unique_ptr<Buffer> own_input;  // the staff tree's input where it has one (a GPU), else its own
      Buffer* in = staff_in_.get();
      if (!in) {
        own_input = ctx.device.allocate(bytes);
        own_input->upload(data->input.data(), bytes);
        in = own_input.get();
      }
      const std::unique_ptr<Buffer> out = ctx.device.allocate(sizeof(float));
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

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override;

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
  labs::ReduceLaunch staff_;
  std::unique_ptr<Buffer> staff_in_, staff_scratch_, staff_out_;
};

CaseResult ReductionDriver::run(const RunContext& ctx, const Task& task, const Case& c) {
  // One input; each input set holds it with every word XORed with a mask of its own (sign and
  // mantissa bits: the elements stay in one binade), and a set gets a new mask before each warm-up and
  // timed launch, written on the device from an untouched copy. The exact sum under any mask follows
  // from the input's mantissa-bit counts. One word reveals the mask, so a large rounding case also
  // gets spikes (draw_spikes), new ones before every launch: a result cached and corrected for the
  // mask, or a sum of a sample, misses them.
  const std::shared_ptr<const CaseData> data = data_for(ctx, task, c);
  const std::vector<float>& input = data->input;
  const int n = static_cast<int>(input.size());
  const std::size_t bytes = input.size() * sizeof(float), scratch_bytes = scratch_floats(input.size()) * sizeof(float);
  const reference::Inputs inputs = inputs_of(c);
  MaskDraws masks(ctx, task, c, mask_bits(c));
  const int count_of_sets = input_sets(c);
  const PristineInput pristine(ctx.device, input.data(), bytes, count_of_sets);
  Rng spike_rng = ctx.draws("spikes", task, c);
  std::vector<Set> sets(count_of_sets);
  auto hold = [&](Set& set, const WordTransform& t) {
    set.transform = t;
    const double tolerance = reference::sum_tolerance(reference::exact_sum(data->counts, t.xor_mask), inputs);
    const bool spiked = tolerance > 0 && input.size() >= kSpikedFrom;
    set.spike = spiked ? spike_magnitude(tolerance) : 0.0;
    set.spikes = spiked ? draw_spikes(spike_rng, input.size(), set.spike) : WordPatches{};
    pristine.write(*set.in, t, set.spikes);
  };
  for (int i = 0; i < count_of_sets; ++i) {
    sets[i].in = ctx.device.allocate_guarded(bytes);
    sets[i].scratch = ctx.device.allocate_guarded(scratch_bytes);
    sets[i].out = ctx.device.allocate_guarded(sizeof(float));
    hold(sets[i], i == 0 ? WordTransform{} : masks.next());  // the first launch of a case sees the plain input
  }
  const auto reduce = labs::bind_reduce(ctx.device, task.function);

  Launchable l;
  l.sets = count_of_sets;
  l.load = [&](int i, int) { hold(sets[i], masks.next_other(sets[i].transform)); };
  l.prepare = [&](int i) {  // nothing survives in scratch from one launch to the next
    sets[i].out->fill(kPoisonByte);
    sets[i].scratch->fill(kPoisonByte);
  };
  l.launch = [&](int i) { reduce(*sets[i].in, *sets[i].scratch, *sets[i].out, n); };
  l.check = [&](int i) {
    float got = 0;
    sets[i].out->download(&got, sizeof got);
    const Set& s = sets[i];
    return check_sum(data->counts, s.transform.xor_mask, input, s.spikes, s.spike, inputs, got);
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

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<ReductionDriver>(); }

}  // namespace gpulab
