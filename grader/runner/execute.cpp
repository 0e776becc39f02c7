#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "lab_driver.hpp"

namespace gpulab {

std::int64_t case_int(const Case& c, const char* key) {
  if (!c.params.contains(key) || !c.params[key].is_number_integer())
    throw std::invalid_argument(fmt::format("case '{}' needs an integer '{}' in the manifest", c.name, key));
  return c.params[key].get<std::int64_t>();
}

double median_launch_ms(const RunContext& ctx, const Probe& probe) {
  for (int i = 0; i < ctx.manifest.warmup; ++i) {
    probe.prepare();
    probe.launch();
    ctx.device.synchronize();
  }
  std::vector<double> samples;
  for (int i = 0; i < ctx.manifest.repeats; ++i) {
    probe.prepare();
    ctx.device.flush_caches();  // as before the student's timed launches
    samples.push_back(ctx.device.time(probe.launch).counted_ms());
    ctx.heartbeat();
  }
  return summarize(samples).median;
}

double median_launch_ms(const RunContext& ctx, const std::function<void()>& launch,
                        const std::function<void()>& prepare) {
  return median_launch_ms(ctx, Probe{prepare, launch, 0});
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

void measure_cpu_rates(const RunContext& ctx, Calibration& cal, double work, const std::function<void()>& one_core,
                       const std::function<void()>& all_cores, int repeats) {
  cal.rates["cpu_1core"] = work / (median_host_ms(one_core, repeats) * 1e-3) / 1e9;
  ctx.heartbeat();
  cal.rates["cpu_all_cores"] = work / (median_host_ms(all_cores, repeats) * 1e-3) / 1e9;
}

// Warm-up and timed launches compare large buffers by sampling: the first and the last chunk and
// kSampledChunks more at random (about 1 MiB). Skipped or partial work leaves poison or stale data in
// far more than that; the untimed first launch of every case is compared whole, and so is one
// warm-up or timed launch that the timing plan picks (TimingPlan::full_check).
constexpr std::size_t kChunkBytes = 64 << 10, kSampledChunks = 14, kWholeBelow = 4 << 20;

// The chunks of a `size`-byte buffer to compare: all of it when small or without `rng` (in pieces
// of kWholeBelow, so a 256 MiB buffer needs no 256 MiB copies on the host), else a random sample.
std::vector<std::pair<std::size_t, std::size_t>> chunks_to_compare(std::size_t size, Rng* rng) {
  if (!rng || size <= kWholeBelow) {
    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    for (std::size_t at = 0; at < size; at += kWholeBelow) pieces.emplace_back(at, std::min(kWholeBelow, size - at));
    return pieces;
  }
  std::vector<std::pair<std::size_t, std::size_t>> chunks{{0, kChunkBytes}, {size - kChunkBytes, kChunkBytes}};
  for (std::size_t i = 0; i < kSampledChunks; ++i) {
    const auto at = static_cast<std::size_t>(rng->integer(0, static_cast<std::int64_t>(size - kChunkBytes)));
    chunks.emplace_back(at / 64 * 64, kChunkBytes);  // whole words, whatever the element size
  }
  return chunks;
}

namespace {

// After the guard damage of a buffer student code allocated and kept across calls.
constexpr const char* kKeptBufferHint =
    ". A kernel wrote past the end (or before the start) of a buffer your code allocated and still holds: check "
    "the bounds test of every thread (if (i < n), not <=) and the size you allocated";

// The inputs and outputs are in host memory and the function returned without starting a kernel.
constexpr const char* kNoKernel =
    "your function returned without launching a kernel, so the results were computed on the host (or not at "
    "all): the lab's work is done by a kernel on the device. Launch it (CUDA: kernel<<<blocks, threads>>>(...); "
    "OpenCL: clEnqueueNDRangeKernel) on device buffers, and copy only its inputs and results";

// "changed its input a: 3 of 1,024 elements differ, the first at index 17"; empty when unchanged.
std::string describe_input_change(const Watched& w, const std::vector<std::uint8_t>& now) {
  const auto* before = static_cast<const std::uint8_t*>(w.original);
  if (std::memcmp(before, now.data(), now.size()) == 0) return {};
  const std::size_t e = std::max<std::size_t>(w.element_bytes, 1);
  std::size_t changed = 0, first = now.size();
  for (std::size_t i = 0; i < now.size() / e; ++i)
    if (std::memcmp(before + i * e, now.data() + i * e, e) != 0) {
      changed += 1;
      first = std::min(first, i);
    }
  return fmt::format(
      "changed its input {}: {} of {} elements differ after the launch, the first at index {} (inputs "
      "are read-only: write results only to the outputs)",
      w.name, changed, now.size() / e, first);
}

// Writes the patched words that lie in [offset, offset + bytes) of a buffer into `part`, its copy.
void overwrite_patched(std::vector<std::uint8_t>& part, std::size_t offset, const WordPatches* patches) {
  if (!patches) return;
  for (const auto& [index, word] : *patches) {
    const std::size_t at = index * sizeof word;
    if (at >= offset && at + sizeof word <= offset + part.size())
      std::memcpy(part.data() + (at - offset), &word, sizeof word);
  }
}

// Whether `buffer` holds `expected` with every word transformed by `transform` and `patches` written
// over it, in the chunks compared (all of it without `rng`) and at every patched word.
bool matches(Buffer& buffer, const void* expected, Rng* rng, const WordTransform& transform = {},
             const WordPatches* patches = nullptr) {
  std::vector<std::uint8_t> now, want;
  const bool patched = patches && !patches->empty();
  if (patched && rng)  // the few words that tell this launch from an earlier one: always compared
    for (const auto& [index, word] : *patches) {
      std::uint32_t seen = 0;
      if ((index + 1) * sizeof word > buffer.size()) return false;
      buffer.download_range(&seen, index * sizeof word, sizeof word);
      if (seen != word) return false;
    }
  for (const auto& [offset, bytes] : chunks_to_compare(buffer.size(), rng)) {
    now.resize(bytes);
    buffer.download_range(now.data(), offset, bytes);
    const auto* from = static_cast<const std::uint8_t*>(expected) + offset;
    if (transform.identity() && !patched) {  // no copy: a first launch's whole input, 64 MiB and more
      if (std::memcmp(from, now.data(), bytes) != 0) return false;
      continue;
    }
    want.assign(from, from + bytes);
    transform.apply(want.data(), bytes);
    overwrite_patched(want, offset, patches);
    if (want != now) return false;
  }
  return true;
}

// What the last launch of `set` did outside its outputs: guard zones and inputs (by sampling when
// `rng` is given). Empty: nothing.
std::string inspect_buffers(const Launchable& l, int set, Rng* rng) {
  if (!l.watched) return {};
  std::vector<std::string> problems;
  std::vector<std::uint8_t> now;
  for (const Watched& w : l.watched(set)) {
    if (auto damage = describe_guard_damage(*w.buffer, w.name, w.element_bytes); !damage.empty())
      problems.push_back(std::move(damage));
    if (!w.original || w.in_place || matches(*w.buffer, w.original, rng, w.transform, w.patches)) continue;
    now.resize(w.buffer->size());  // changed: the whole buffer, for the report
    w.buffer->download(now.data(), now.size());
    if (!w.transform.identity()) w.transform.inverse().apply(now.data(), now.size());
    if (w.patches)  // the patched words as the harness wrote them count as unchanged
      for (const auto& [index, word] : *w.patches)
        if ((index + 1) * sizeof word <= now.size())
          std::memcpy(now.data() + index * sizeof word,
                      static_cast<const std::uint8_t*>(w.original) + index * sizeof word, sizeof word);
    if (auto change = describe_input_change(w, now); !change.empty()) problems.push_back(std::move(change));
  }
  return fmt::format("{}", fmt::join(problems, "; "));
}

// The harness's host data that the checks of `set` rely on: the inputs' originals, the expected
// contents of exact outputs, the words patched into both, and what the driver adds (host_data).
std::vector<HostRegion> host_regions(const Launchable& l, int set) {
  std::vector<HostRegion> regions;
  std::vector<std::pair<const Buffer*, std::string>> names;
  auto add_patches = [&](const WordPatches* p, const std::string& what) {
    if (p && !p->empty()) regions.push_back({p->data(), p->size() * sizeof(p->front()), what});
  };
  if (l.watched)
    for (const Watched& w : l.watched(set)) {
      names.emplace_back(w.buffer, w.name);
      if (w.original) regions.push_back({w.original, w.buffer->size(), "the harness's copy of input " + w.name});
      add_patches(w.patches, "the words the harness patched into input " + w.name);
    }
  if (l.exact_outputs)
    for (const ExactOutput& o : l.exact_outputs(set)) {
      const auto named = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == o.buffer; });
      const std::string name = named == names.end() ? "an output" : "output " + named->second;
      regions.push_back({o.expected, o.buffer->size(), "the expected contents of " + name});
      add_patches(o.patches, "the words patched into the expected contents of " + name);
    }
  if (l.host_data)
    for (HostRegion& r : l.host_data(set)) regions.push_back(std::move(r));
  return regions;
}

// A random pick from 0..count-1 other than `not_this`.
int pick_other(Rng& rng, int count, int not_this) {
  const int pick = static_cast<int>(rng.integer(0, count - 2));
  return pick >= not_this ? pick + 1 : pick;
}

// How many warm-up and timed launches, which input set each uses and which contents it holds:
// drawn from the run seed, so neither count nor order can be predicted by student code. No set
// runs twice in a row, and a set gets other contents than it held at its previous launch. Timing
// takes at least `least` launches and at most `repeats`: it stops in between once the ratio
// decides its bound (ratio_decided), and a task without a bound stops at the least count.
class TimingPlan {
 public:
  TimingPlan(const RunContext& ctx, const Case& c, const Launchable& l)
      : ctx_(ctx), l_(l), rng_(derive_seed(ctx.run_seed, ctx.manifest.id, "timing plan " + ctx.task, c.name)) {
    warmup = static_cast<int>(rng_.integer(ctx.manifest.warmup, ctx.manifest.warmup + 2));
    repeats = static_cast<int>(rng_.integer(ctx.manifest.repeats, ctx.manifest.repeats + 4));
    least = std::min(repeats, static_cast<int>(rng_.integer(kLeastTimed, kLeastTimed + 2)));
    full_check = static_cast<int>(rng_.integer(1, warmup + least));
    for (int i = 0; i < l.sets; ++i) contents_.push_back(i);
  }
  int next_set() {
    if (l_.sets < 2) return 0;
    previous_ = pick_other(rng_, l_.sets, previous_);
    if (l_.load) {
      contents_[previous_] = pick_other(rng_, l_.sets, contents_[previous_]);
      l_.load(previous_, contents_[previous_]);
      ctx_.device.synchronize();  // loads may enqueue device work (Device::copy_transformed)
    }
    return previous_;
  }
  static constexpr int kLeastTimed = 7;  // a median of 7 already ignores three slow launches
  int warmup = 0, repeats = 0, least = 0;
  // The warm-up or timed launch (counted from 1) whose output is compared whole, not by sampling:
  // a kernel that goes wrong only after its first launch, in a block or stripe that no sample
  // happens to hit, is caught there, and student code cannot tell which launch it is.
  int full_check = 0;

 private:
  const RunContext& ctx_;
  const Launchable& l_;
  Rng rng_;
  std::vector<int> contents_;  // what each set holds now
  int previous_ = 0;           // the correctness launch used set 0
};

// The framework's rule for timing cases: every warm-up and timed launch sees contents that its set
// did not hold at its previous launch, so no launch can return a result kept from an earlier one.
// A driver that breaks it (one input set, no `load`, or a `load` that changes nothing a launch
// sees) stops the run as the grader's failure, before any student result depends on it.
class FreshLaunches {
 public:
  FreshLaunches(const Case& c, const Launchable& l) : c_(c), l_(l) {
    if (c.timing && (l.sets < 2 || !l.load))
      fault_ = fmt::format(
          "the lab's driver gives timing case '{}' {} input set{}{}: a timing case needs several, "
          "and a Launchable::load that gives each new contents before its launches (lab_driver.hpp)",
          c.name, l.sets, l.sets == 1 ? "" : "s", l.load ? "" : " and no load");
  }
  const std::string& fault() const { return fault_; }

  // Before a launch of `set` (after its prepare): what it will see, against its previous launch.
  void check(int set, bool warmup_or_timed) {
    if (!c_.timing || !fault_.empty()) return;
    const std::uint64_t now = fingerprint(set);
    const auto last = last_.find(set);
    if (warmup_or_timed && last != last_.end() && last->second == now)
      fault_ = fmt::format(
          "the lab's driver gave input set {} of timing case '{}' the contents and arguments it held "
          "at its previous launch: a kernel could return the result it kept from then. "
          "Launchable::load must change what the set's launch sees (new contents, a new mask, or "
          "new Launchable::arguments)",
          set + 1, c_.name);
    last_[set] = now;
  }

 private:
  // The checksum (host_watch.hpp) of what the driver declares the set's launch will see: each input's
  // original with its transform and patches (whole when small, else the same seeded chunks every
  // time), the patched words, and the arguments. Taken from the declarations, not read back from the
  // device: after every launch the framework compares the device's inputs with the same declarations
  // (inspect_buffers), and an in-place buffer's output with the reference of what was declared, so a
  // driver that declares contents it did not load fails every lab's own tests.
  std::uint64_t fingerprint(int set) const {
    std::vector<std::uint8_t> seen, part;
    if (l_.watched)
      for (const Watched& w : l_.watched(set)) {
        if (!w.original) continue;     // an output: poisoned alike before every launch
        Rng places(w.buffer->size());  // the same places at every launch of the case
        for (const auto& [offset, bytes] : chunks_to_compare(w.buffer->size(), &places)) {
          const auto* from = static_cast<const std::uint8_t*>(w.original) + offset;
          part.assign(from, from + bytes);
          w.transform.apply(part.data(), part.size());
          overwrite_patched(part, offset, w.patches);
          seen.insert(seen.end(), part.begin(), part.end());
        }
        if (w.patches)
          for (const auto& [index, word] : *w.patches) {
            const auto* bytes = reinterpret_cast<const std::uint8_t*>(&word);
            seen.insert(seen.end(), bytes, bytes + sizeof word);
          }
      }
    if (l_.arguments) {
      const std::string text = l_.arguments(set);
      seen.insert(seen.end(), text.begin(), text.end());
    }
    return host_checksum(seen.data(), seen.size());
  }

  const Case& c_;
  const Launchable& l_;
  std::map<int, std::uint64_t> last_;
  std::string fault_;
};

// Adds the seconds from its making to its end to `into`: where a case's host time goes (CaseResult's
// prepare_s, launches_s, checks_s).
class AddSeconds {
 public:
  explicit AddSeconds(double& into) : into_(into), started_(std::chrono::steady_clock::now()) {}
  AddSeconds(const AddSeconds&) = delete;
  AddSeconds& operator=(const AddSeconds&) = delete;
  ~AddSeconds() { into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count(); }

 private:
  double& into_;
  std::chrono::steady_clock::time_point started_;
};

class CaseRun {
 public:
  CaseRun(const RunContext& ctx, const Case& c, const Launchable& l)
      : ctx_(ctx),
        c_(c),
        l_(l),
        samples_rng_(derive_seed(ctx.run_seed, ctx.manifest.id, "sampled checks " + ctx.task, c.name)),
        fresh_(c, l) {
    result_.name = c.name;
    result_.work = l.work;
  }

  CaseResult run() {
    if (!fresh_.fault().empty()) return driver_fault();
    try {
      if (!launch_checked(0, false, "")) return result_;
      if (c_.timing) {
        const auto started = std::chrono::steady_clock::now();
        // Timed again once, after a cool-down, when the GPU throttled for power or heat meanwhile.
        const bool timed = time_with_telemetry(
            ctx_.monitor, [&] { return time_launches(); },
            [&] {
              samples_.clear();
              baseline_samples_.clear();
              launches_ = 0;  // the second run has its full check too
            },
            result_.telemetry);
        result_.timed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (!fresh_.fault().empty()) return driver_fault();
        if (!timed) return result_;
      }
    } catch (const BufferOverrun& e) {  // a buffer the student's code allocated itself (errors.hpp)
      fail(e.what(), e.what(), "buffer_violation");
      return result_;
    }
    result_.passed = true;
    return result_;
  }

 private:
  CaseResult driver_fault() {
    result_.passed = false;
    result_.driver_fault = fresh_.fault();
    return result_;
  }

  bool fail(std::string message, std::string details, std::string finding = "") {
    result_.passed = false;
    result_.message = fmt::format("case {}: {}", c_.name, message);
    result_.details = fmt::format("case {}: {}", c_.name, details);
    result_.finding = std::move(finding);
    return false;
  }

  // Before student code runs on `set`: checksums of the harness's host data, where the device's
  // kernels can reach host memory.
  void watch_host(int set) {
    if (!ctx_.watch_host_memory) return;
    const AddSeconds clock(result_.watch_s);
    host_watch_.take(host_regions(l_, set));
  }

  // After a launch of `set`: the harness's host data, guards, inputs, then the output (cheaply for
  // warm-up and timed launches).
  bool verify(int set, bool quick, const std::string& which) {
    std::vector<std::string> changed;
    if (!host_watch_.empty()) {
      const AddSeconds clock(result_.watch_s);
      changed = host_watch_.changed();
    }
    if (!changed.empty()) return fail(describe_host_write(changed), describe_host_write(changed), "buffer_violation");
    std::string problem;
    {
      const AddSeconds clock(result_.buffers_s);
      problem = inspect_buffers(l_, set, quick ? &samples_rng_ : nullptr);
    }
    if (!problem.empty()) return fail(which + problem, which + problem, "buffer_violation");
    if (!quick) {
      const AddSeconds clock(result_.buffers_s);
      if (const std::string kept = student_kept_buffer_damage(); !kept.empty())
        return fail(which + kept, which + kept + kKeptBufferHint, "buffer_violation");
    }
    if (quick && l_.exact_outputs) {
      bool same = true;
      for (const ExactOutput& o : l_.exact_outputs(set))
        same = same && matches(*o.buffer, o.expected, &samples_rng_, o.transform, o.patches);
      if (same) return true;
    }
    const Comparison cmp = quick && l_.quick_check && !l_.exact_outputs ? l_.quick_check(set) : l_.check(set);
    if (!cmp.ok()) return fail(which + cmp.summary(), which + cmp.report());
    return true;
  }

  // Whether the next warm-up or timed launch is compared by sampling (all but the plan's full check).
  bool sampled_next() { return ++launches_ != full_check_at_; }

  bool launch_checked(int set, bool quick, const std::string& which) {
    if (!prepared(set, !which.empty())) return false;
    const unsigned long kernels_before = student_kernel_launches();
    {
      const AddSeconds clock(result_.launches_s);
      if (ctx_.profiled) ctx_.device.begin_profiled_region();
      l_.launch(set);
      ctx_.device.synchronize();
      if (ctx_.profiled) ctx_.device.end_profiled_region();
    }
    if (l_.kernel_required && l_.work > 0 && student_kernel_launches() == kernels_before)
      return fail(kNoKernel, kNoKernel);
    const AddSeconds clock(result_.checks_s);
    return verify(set, quick, which);
  }

  // Before a launch of `set`: the driver's prepare, the fresh-contents rule, the host watch.
  bool prepared(int set, bool warmup_or_timed) {
    const AddSeconds clock(result_.prepare_s);
    l_.prepare(set);
    fresh_.check(set, warmup_or_timed);
    if (!fresh_.fault().empty()) return false;
    watch_host(set);
    return true;
  }

  // The plan's next input set, loaded with new contents (the driver's load).
  int next_set(TimingPlan& plan) {
    const AddSeconds clock(result_.prepare_s);
    return plan.next_set();
  }

  // One timed launch of `set` after a cache flush, then (every other time) one of the baseline.
  bool timed_pair(int set, int number, int of) {
    if (!prepared(set, true)) return false;
    {
      const AddSeconds clock(result_.launches_s);
      ctx_.device.flush_caches();
      samples_.push_back(ctx_.device.time([&] { l_.launch(set); }).counted_ms());
    }
    {
      const AddSeconds clock(result_.checks_s);
      if (!verify(set, sampled_next(),
                  fmt::format("the output of timed launch {} of {} (input set {}) is wrong: ", number, of, set + 1)))
        return false;
    }
    // The baseline after every other launch: enough samples for its median at half the cost.
    if (ctx_.baseline && number % 2 == 1) {
      const AddSeconds clock(result_.launches_s);
      ctx_.baseline->prepare();
      ctx_.device.flush_caches();
      baseline_samples_.push_back(ctx_.device.time(ctx_.baseline->launch).counted_ms());
    }
    ctx_.heartbeat();
    return true;
  }

  // Whether more timed launches could change the verdict: no bound to decide, or the ratio far
  // enough from it for the noise measured so far.
  bool decided() const {
    if (!ctx_.bound || !ctx_.baseline) return true;
    const auto r = ratio();
    if (!r || baseline_samples_.size() < 3) return false;
    return ratio_decided(*r, *ctx_.bound, relative_spread(samples_) + relative_spread(baseline_samples_));
  }

  std::optional<double> ratio() const {
    if (!ctx_.baseline || baseline_samples_.empty() || samples_.empty()) return std::nullopt;
    return (l_.work / summarize(samples_).median) / (ctx_.baseline->work / summarize(baseline_samples_).median);
  }

  bool time_launches() {
    if (!plan_) plan_.emplace(ctx_, c_, l_);  // a second run goes on with its sets' contents and random stream
    TimingPlan& plan = *plan_;
    full_check_at_ = plan.full_check;
    for (int i = 0; i < plan.warmup; ++i) {
      if (!launch_checked(next_set(plan), sampled_next(), "the output of a warm-up launch is wrong: ")) return false;
      ctx_.heartbeat();
    }
    for (int i = 0; i < plan.repeats && !(i >= plan.least && decided()); ++i)
      if (!timed_pair(next_set(plan), i + 1, plan.repeats)) return false;
    // Just below the bound: one more round before it fails, so a burst of load cannot decide it.
    if (const auto r = ratio(); r && ctx_.bound && *r < *ctx_.bound && *r >= *ctx_.bound * (1 - kBorderline))
      for (int i = 0; i < plan.repeats; ++i)
        if (!timed_pair(next_set(plan), plan.repeats + i + 1, 2 * plan.repeats)) return false;
    result_.timing = summarize(samples_);
    if (ctx_.baseline && !baseline_samples_.empty())
      result_.baseline_rate = ctx_.baseline->work / (summarize(baseline_samples_).median * 1e-3) / 1e9;
    if (const auto r = ratio(); r && ctx_.bound) result_.borderline = std::fabs(*r / *ctx_.bound - 1) < kBorderline;
    return within_speed_of_light();
  }

  // A GPU cannot beat its own memory or arithmetic; on a CPU device PoCL's copy is one thread's
  // memcpy, not the memory's limit, so no bound is set there.
  bool within_speed_of_light() {
    if (!ctx_.calibration || ctx_.device.info().device_class != DeviceClass::gpu) return true;
    const auto light = speed_of_light_ms(l_.least_bytes, l_.flops, *ctx_.calibration);
    if (!faster_than_device(result_.timing->median, light)) return true;
    const std::string why = fmt::format(
        "faster than this device can do the work: the timed launch did not compute the result (median {:.4f} ms; "
        "the device needs at least {:.4f} ms to move {:.0f} MB at its copy bandwidth{})",
        result_.timing->median, *light, l_.least_bytes / 1e6, l_.flops > 0 ? " and do its flops at the FP32 peak" : "");
    return fail(why, why, "faster_than_device");
  }

  const RunContext& ctx_;
  const Case& c_;
  const Launchable& l_;
  CaseResult result_;
  std::vector<double> samples_, baseline_samples_;
  int launches_ = 0, full_check_at_ = 0;  // warm-up and timed launches so far; the one checked whole
  std::optional<TimingPlan> plan_;
  HostWatch host_watch_;
  Rng samples_rng_;  // where sampled checks look: seeded, not predictable by student code
  FreshLaunches fresh_;
};

}  // namespace

CaseResult execute(const RunContext& ctx, const Case& c, const Launchable& launchable) {
  return CaseRun(ctx, c, launchable).run();
}

}  // namespace gpulab

// Read by the guards around buffers student code allocates (grader/allowlist/*_guards.cpp), through
// a weak reference; exported from the runner (toolchain.json's link flags).
extern "C" {
__attribute__((visibility("default"))) volatile int gpulab_student_guards_off = 0;
// Counted by the launch guards (every kernel launch call of student code), read around a launch.
__attribute__((visibility("default"))) volatile unsigned long gpulab_student_kernel_launches = 0;
// Set by the guards when the student's library loads: their check of every buffer it keeps.
__attribute__((visibility("default"))) int (*gpulab_student_live_buffers_damaged)(char* out,
                                                                                  unsigned long size) = nullptr;
}

std::string gpulab::student_kept_buffer_damage() {
  char found[512] = {};
  return gpulab_student_live_buffers_damaged && gpulab_student_live_buffers_damaged(found, sizeof found) ? found : "";
}

void gpulab::set_student_buffer_guards(bool on) { gpulab_student_guards_off = on ? 0 : 1; }

unsigned long gpulab::student_kernel_launches() { return gpulab_student_kernel_launches; }
