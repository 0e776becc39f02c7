#include "nbody_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <vector>

#include "lab_driver.hpp"
#include "nbody_reference.hpp"

namespace gpulab {
namespace {

// The first launch of a case of up to kCheckAllUpTo bodies is checked in full, every body against
// the reference (2^24 interactions in double: a few hundredths of a second on 2 cores); of a larger
// case, at the first and last body of every tile of 256 (every tile and block boundary of the lab's
// designs) and kFirstSample bodies more at random: at 2^18 bodies 2,048 + 1,024 bodies, 8e8
// interactions, about 0.2 s on the 16 cores of an H100 host. Every warm-up and timed launch is
// checked at the first and last body, 16 tile boundaries and kQuickSample bodies at random (2e7
// interactions: a few milliseconds there); the one the timing plan picks, as the first launch.
// Samples are drawn after the launch; every word of the output is checked for being written and finite.
constexpr std::size_t kCheckAllUpTo = 4096, kFirstSample = 1024, kQuickSample = 64;

// Timed launches see the bodies with every word XORed with a mask of mantissa bits, new before
// every launch: each coordinate and mass stays in its binade and keeps its sign (masses stay in
// [0.5, 1), a mass of 0 becomes subnormal, the cloud keeps its shape), but every position moves, so no acceleration computed for an
// earlier launch is right again, and none can be corrected for the mask.
constexpr std::uint32_t kMantissa = 0x007FFFFFu;

// The bodies buffer holds kPadBodies more after the case's n, copies of its first bodies: a kernel
// that reads past n (a tile loaded without its bounds test) adds their pull and fails, where the
// guard zone's bytes (3.4e38 as floats, infinitely far) would add exactly nothing. Student code gets
// n; a write there changes the input, as any write to it does.
constexpr std::size_t kPadBodies = 1024;

std::vector<float> with_pad(const std::vector<float>& bodies) {
  std::vector<float> padded = bodies;
  for (std::size_t i = 0; i < kPadBodies * reference::kBodyFloats; ++i) padded.push_back(bodies[i % bodies.size()]);
  return padded;
}

struct Problem {
  int n;
  float softening2;
  double interactions() const { return static_cast<double>(n) * n; }
  double flops() const { return reference::kFlopsPerInteraction * interactions(); }
  std::size_t bytes() const { return static_cast<std::size_t>(n) * reference::kBodyFloats * sizeof(float); }
};

Problem problem_of(const Case& c) {
  const double softening2 = c.params.value("softening2", 0.01);
  if (!(softening2 > 0))
    throw std::invalid_argument(fmt::format("case '{}': softening2 must be positive (it makes a_ii = 0)", c.name));
  return {static_cast<int>(case_int(c, "n")), static_cast<float>(softening2)};
}

// A case's bodies as generated (the reference is computed per check: it depends on the set's mask).
struct CaseData {
  std::vector<float> bodies;
};

class NbodyDriver final : public LabDriver {
 public:
  std::string rate_unit() const override { return "GFLOP/s"; }
  std::string rate_work() const override { return "20 flops per interaction, n² interactions"; }

  // The naive kernel's probe on the timing case's bodies (the naive_speedup bound measures it again
  // between a task's timed launches).
  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const Problem p = problem_of(timing);
    const std::shared_ptr<const CaseData> data = data_for(ctx, Task{}, timing);
    calibration_bodies_ = ctx.device.allocate(p.bytes());
    calibration_accel_ = ctx.device.allocate(p.bytes());
    calibration_bodies_->upload(data->bodies.data(), p.bytes());
    naive_ = labs::harness_naive_nbody(ctx.device);
    cal.probes["naive"] =
        Probe{[] {}, [this, p] { naive_(*calibration_bodies_, *calibration_accel_, p.n, p.softening2); }, p.flops()};
  }

  void measure_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const Problem p = problem_of(timing);
    cal.rates["naive"] =
        p.flops() /
        (median_launch_ms(ctx, [&] { naive_(*calibration_bodies_, *calibration_accel_, p.n, p.softening2); }) * 1e-3) /
        1e9;
    if (const auto peak = ctx.device.peak_gflops()) cal.rates["peak"] = *peak;

    // The CPU on at most 4096 bodies: a tenth of a second or so on one core.
    const std::shared_ptr<const CaseData> data = data_for(ctx, Task{}, timing);
    const std::size_t bodies = std::min<std::size_t>(static_cast<std::size_t>(p.n), kCheckAllUpTo);
    const std::span<const float> some(data->bodies.data(), bodies * reference::kBodyFloats);
    std::vector<float> accel(some.size());
    const double flops = reference::kFlopsPerInteraction * static_cast<double>(bodies) * bodies;
    measure_cpu_rates(
        ctx, cal, flops, [&] { reference::nbody_one_core(some, accel, p.softening2); },
        [&] { reference::nbody_all_cores(some, accel, p.softening2); });
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override;

 private:
  // The timing case's bodies are drawn once per run, not per task (the calibration uses them too).
  std::shared_ptr<const CaseData> data_for(const RunContext& ctx, const Task& task, const Case& c) {
    return timing_data_.get(c, [&] {
      Rng rng = ctx.inputs_rng(task, c);
      auto made = std::make_shared<CaseData>();
      made->bodies = reference::nbody_inputs(rng, static_cast<std::size_t>(case_int(c, "n")),
                                             c.params.value("distribution", "cube"));
      return made;
    });
  }

  TimingCaseData<CaseData> timing_data_;
  std::unique_ptr<Buffer> calibration_bodies_, calibration_accel_;
  labs::NbodyLaunch naive_;
};

// One input set: its device buffers, the mask its bodies are XORed with, and those bodies on the
// host with the pad after them (the reference reads the first n).
struct Set {
  std::unique_ptr<Buffer> bodies, accel;
  WordTransform transform;
  std::vector<float> host;
};

CaseResult NbodyDriver::run(const RunContext& ctx, const Task& task, const Case& c) {
  // Input sets in distinct buffers; set 0 holds the bodies as generated, and before every warm-up
  // and timed launch a set gets them anew with a new mask (kMantissa), written on the device from an
  // untouched copy. Each check draws the bodies it compares after the launch, from the case's own
  // seeded stream: student code cannot know which.
  const Problem p = problem_of(c);
  const std::shared_ptr<const CaseData> data = data_for(ctx, task, c);
  const std::vector<float>& bodies = data->bodies;
  const std::vector<float> padded = with_pad(bodies);
  const std::size_t padded_bytes = padded.size() * sizeof(float);
  const int count_of_sets = input_sets(c);
  const PristineInput pristine(ctx.device, padded.data(), padded_bytes, count_of_sets);
  MaskDraws masks(ctx, task, c, {.may = kMantissa});
  std::vector<Set> sets(count_of_sets);
  auto hold = [&](Set& set, const WordTransform& t) {
    set.transform = t;
    pristine.write(*set.bodies, t);
    set.host = padded;
    t.apply(set.host.data(), padded_bytes);
  };
  for (int i = 0; i < count_of_sets; ++i) {
    sets[i].bodies = ctx.device.allocate_guarded(padded_bytes);
    sets[i].accel = ctx.device.allocate_guarded(p.bytes());
    hold(sets[i], i == 0 ? WordTransform{} : masks.next());  // the first launch of a case sees the plain bodies
  }
  const auto launch = labs::bind_nbody(ctx.device, task.function);
  Rng samples = ctx.draws("samples", task, c);
  std::vector<float> got(bodies.size());
  auto check_with = [&](int i, std::size_t sample_size, bool boundaries) {
    sets[i].accel->download(got.data(), p.bytes());
    const auto sample = reference::nbody_sample(samples, static_cast<std::size_t>(p.n), sample_size, boundaries);
    return reference::nbody_check(std::span(sets[i].host).first(bodies.size()), p.softening2, got, sample);
  };

  Launchable l;
  l.sets = count_of_sets;
  l.load = [&](int i, int) { hold(sets[i], masks.next_other(sets[i].transform)); };
  l.prepare = [&](int i) { sets[i].accel->fill(kPoisonByte); };
  l.launch = [&](int i) { launch(*sets[i].bodies, *sets[i].accel, p.n, p.softening2); };
  l.check = [&](int i) {
    return check_with(i, static_cast<std::size_t>(p.n) <= kCheckAllUpTo ? p.n : kFirstSample, true);
  };
  l.quick_check = [&](int i) { return check_with(i, kQuickSample, false); };
  l.watched = [&](int i) {
    return std::vector<Watched>{{sets[i].bodies.get(), "bodies", sizeof(float), padded.data(), sets[i].transform},
                                {sets[i].accel.get(), "accel", sizeof(float)}};
  };
  l.work = l.flops = p.flops();
  l.least_bytes = 2.0 * static_cast<double>(p.bytes());  // the bodies read once, the accelerations written once
  return execute(ctx, c, l);
}

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<NbodyDriver>(); }

}  // namespace gpulab
