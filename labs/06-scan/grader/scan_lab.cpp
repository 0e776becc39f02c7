#include "scan_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "gpulab/parallel.hpp"
#include "lab_driver.hpp"
#include "scan_reference.hpp"

namespace gpulab {
namespace {

// The words of one input: uniform over all 32-bit values (the sums wrap many times), or a shape
// whose right answer a student can read in a mismatch report.
HostArray<std::uint32_t> make_input(const Case& c, Rng& rng) {
  const auto n = static_cast<std::size_t>(case_int(c, "n"));
  const std::string shape = c.params.value("values", "uniform");
  HostArray<std::uint32_t> words = zeroed_on_all_cores<std::uint32_t>(n);
  if (shape == "uniform") {
    draw_each(rng, std::span(words), [](Rng& r) { return static_cast<std::uint32_t>(r.next()); });
  } else if (shape == "ones") {  // out[i] = i + 1
    std::fill(words.begin(), words.end(), 1u);
  } else if (shape == "small") {  // 0..9: sums a reader can check by eye
    draw_each(rng, std::span(words), [](Rng& r) { return static_cast<std::uint32_t>(r.integer(0, 9)); });
  } else if (shape == "wrap") {  // near 2^32: almost every sum wraps
    draw_each(rng, std::span(words), [](Rng& r) { return 0xFFFFFFFFu - static_cast<std::uint32_t>(r.integer(0, 15)); });
  } else {
    throw std::invalid_argument(
        fmt::format("case '{}': unknown values '{}' (uniform, ones, small, wrap)", c.name, shape));
  }
  return words;
}

// A timed launch is checked without a reference, on the chunks the framework samples outputs on
// (chunks_to_compare: all of a small output, the first, the last and 14 seeded 64 KiB chunks of a
// large one): each chunk's first word against the exact sum (mod 2^32) of the words before it, and
// every later word against its left neighbour plus its input word. That holds only for the inclusive
// scan, so on the words it looks at it is as strict as the reference, and a large output is not
// copied to the host at every launch (512 MiB at a GPU's timing size). The runner checks the first
// launch of every case and one seeded timed launch in full.

// The sums (mod 2^32) of the transformed input's words before each of `starts` (sorted): the input
// is summed once, on every core, in blocks, and each start adds the part of its block before it.
std::vector<std::uint32_t> sums_before(std::span<const std::uint32_t> input, const WordTransform& load,
                                       const std::vector<std::size_t>& starts) {
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  std::vector<std::uint32_t> block_sums((input.size() + kBlock - 1) / kBlock);
  parallel_for(block_sums.size(), [&](std::size_t b) {
    std::uint32_t sum = 0;
    for (std::size_t i = b * kBlock; i < std::min(input.size(), (b + 1) * kBlock); ++i) sum += load(input[i]);
    block_sums[b] = sum;
  });
  std::vector<std::uint32_t> sums;
  for (const std::size_t start : starts) {
    std::uint32_t sum = 0;
    for (std::size_t b = 0; b < start / kBlock; ++b) sum += block_sums[b];
    for (std::size_t i = start / kBlock * kBlock; i < start; ++i) sum += load(input[i]);
    sums.push_back(sum);
  }
  return sums;
}

// Whether the scan of `input` under `load` lies in `out` on the chunks sampled with `rng`.
bool scan_matches(std::span<const std::uint32_t> input, const WordTransform& load, Buffer& out, Rng& rng) {
  constexpr std::size_t kWord = sizeof(std::uint32_t);
  auto chunks = chunks_to_compare(input.size() * kWord, &rng);
  std::sort(chunks.begin(), chunks.end());
  std::vector<std::size_t> starts;
  for (const auto& chunk : chunks) starts.push_back(chunk.first / kWord);
  const std::vector<std::uint32_t> before = sums_before(input, load, starts);
  std::vector<std::uint32_t> got;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    got.resize(chunks[c].second / kWord);
    out.download_range(got.data(), chunks[c].first, got.size() * kWord);
    std::uint32_t previous = before[c];
    for (std::size_t k = 0; k < got.size(); ++k) {
      if (got[k] - previous != load(input[starts[c] + k])) return false;
      previous = got[k];
    }
  }
  return true;
}

// A case's contents (one input per input set) and the scan of contents 0.
struct CaseData {
  std::vector<HostArray<std::uint32_t>> contents;
  HostArray<std::uint32_t> expected_first;
};

// One task's run of one case. Input sets live in distinct buffers; the runner moves contents between
// sets during timing (load), and each load XORs the words with a new random mask, written on the
// device from an untouched copy: a new input every time, so no result cached by pointer or by
// content is right again. The expected output of a masked input is not the masked output (a sum does
// not commute with XOR), so timed launches are checked without a reference (scan_matches); a full
// reference is computed only for the launches the runner checks in full and for a report.
class ScanCaseRun {
 public:
  ScanCaseRun(const RunContext& ctx, const Task& task, const Case& c, std::shared_ptr<const CaseData> data)
      : ctx_(ctx),
        data_(std::move(data)),
        n_(data_->contents[0].size()),
        bytes_(n_ * sizeof(std::uint32_t)),
        masks_(ctx, task, c),
        samples_(ctx.draws("samples", task, c)),
        garbage_(ctx.draws("scratch garbage", task, c)),
        launch_(labs::bind_scan(ctx.device, task.function)),
        got_(zeroed_on_all_cores<std::uint32_t>(n_)) {
    const int count_of_sets = input_sets(c);
    for (int i = 0; i < count_of_sets; ++i) {
      if (count_of_sets > 1) {
        pristine_.push_back(ctx.device.allocate(bytes_));
        pristine_.back()->upload(data_->contents[i].data(), bytes_);
      }
      // The scratch is n words, at least one, so even n = 1 gets a real buffer.
      sets_.push_back({ctx.device.allocate_guarded(bytes_),
                       ctx.device.allocate_guarded(bytes_),
                       ctx.device.allocate_guarded(std::max<std::size_t>(bytes_, sizeof(std::uint32_t))),
                       i,
                       {},
                       false});
      sets_.back().in->upload(data_->contents[i].data(), bytes_);  // the first launch sees the plain input
    }
  }
  ScanCaseRun(const ScanCaseRun&) = delete;  // the launchable's functions hold `this`
  ScanCaseRun& operator=(const ScanCaseRun&) = delete;

  Launchable launchable() {
    Launchable l;
    l.sets = static_cast<int>(sets_.size());
    l.load = [this](int i, int what) { load(i, what); };
    l.prepare = [this](int i) {
      sets_[i].out->fill(kPoisonByte);
      fill_scratch_with_garbage(sets_[i]);
    };
    l.launch = [this](int i) { launch_(*sets_[i].in, *sets_[i].out, *sets_[i].scratch, static_cast<int>(n_)); };
    l.check = [this](int i) { return check(i); };
    l.quick_check = [this](int i) { return quick_check(i); };
    l.watched = [this](int i) {
      const Set& s = sets_[i];
      return std::vector<Watched>{{s.in.get(), "in", sizeof(std::uint32_t), data_->contents[s.holds].data(), s.load},
                                  {s.out.get(), "out", sizeof(std::uint32_t)},
                                  {s.scratch.get(), "scratch", sizeof(std::uint32_t)}};
    };
    l.work = l.least_bytes = 2.0 * static_cast<double>(bytes_);  // every word read once and written once
    return l;
  }

 private:
  struct Set {
    std::unique_ptr<Buffer> in, out, scratch;
    int holds = 0;
    WordTransform load;     // `in` holds contents[holds] transformed so
    bool launched = false;  // its scratch holds what a launch left there
  };

  // The contract lends the scratch "filled with garbage before every launch", and no one garbage:
  // the poison, zeros, another byte, or (from a set's second launch on) what its last launch left
  // there, drawn after the set's previous launch. A kernel that counts on one pattern (states of all
  // ones read as "not ready") or finds its own earlier states and sums fails.
  void fill_scratch_with_garbage(Set& s) {
    const auto pick = garbage_.integer(0, s.launched ? 3 : 2);
    s.launched = true;
    if (pick == 3) return;
    const auto other = static_cast<std::uint8_t>(garbage_.integer(1, 0xFE));
    s.scratch->fill(pick == 0 ? kPoisonByte : pick == 1 ? std::uint8_t{0} : other);
  }

  void load(int i, int what) {
    sets_[i].holds = what;
    sets_[i].load = masks_.next_other(sets_[i].load);
    ctx_.device.copy_transformed(*pristine_[what], *sets_[i].in, sets_[i].load);
  }

  // The whole output against the reference, with a hint at the kind of mistake.
  Comparison check(int i) {
    const Set& s = sets_[i];
    sets_[i].out->download(got_.data(), bytes_);
    const HostArray<std::uint32_t>* expected = &data_->expected_first;
    HostArray<std::uint32_t> input, computed;
    if (s.holds != 0 || !s.load.identity()) {
      input = transformed(data_->contents[s.holds], s.load);
      computed = zeroed_on_all_cores<std::uint32_t>(n_);
      reference::inclusive_scan_all_cores(input, computed);
      expected = &computed;
    }
    Comparison cmp = compare_exact<std::uint32_t>(*expected, got_);
    if (!cmp.ok() && !cmp.first.empty()) {
      const std::span<const std::uint32_t> in = input.empty() ? std::span(data_->contents[0]) : std::span(input);
      cmp.note = reference::scan_hint(in, *expected, got_, cmp.first.front().index);
    }
    return cmp;
  }

  Comparison quick_check(int i) {
    if (!scan_matches(data_->contents[sets_[i].holds], sets_[i].load, *sets_[i].out, samples_))
      return check(i);  // the full report
    Comparison right;
    right.total = n_;
    return right;
  }

  const RunContext& ctx_;
  const std::shared_ptr<const CaseData> data_;
  const std::size_t n_, bytes_;
  MaskDraws masks_;
  Rng samples_;  // where timed launches of a large case are checked (scan_matches)
  Rng garbage_;  // what the scratch holds at each launch
  labs::ScanLaunch launch_;
  std::vector<std::unique_ptr<Buffer>> pristine_;  // contents i, untouched (timing cases)
  std::vector<Set> sets_;
  HostArray<std::uint32_t> got_;
};

// Words by the billion per second would read oddly: rates are GB/s of 8 bytes per word (read and written).
constexpr double kBytesPerWord = 2.0 * sizeof(std::uint32_t);
// The CPU calibrations scan at most this many words: a fraction of a second on one core.
constexpr std::size_t kCpuCalibrationWords = std::size_t{1} << 24;

class ScanDriver final : public LabDriver {
 public:
  std::string rate_work() const override { return "bytes read and written once (8 per word)"; }

  void measure_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const auto n = static_cast<std::size_t>(case_int(timing, "n"));
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration", timing.name));
    HostArray<std::uint32_t> words = zeroed_on_all_cores<std::uint32_t>(n);
    draw_each(rng, std::span(words), [](Rng& r) { return static_cast<std::uint32_t>(r.next()); });
    if (auto vendor = labs::vendor_scan(ctx.device, static_cast<int>(n))) {
      auto in = ctx.device.allocate(n * sizeof(std::uint32_t)), out = ctx.device.allocate(n * sizeof(std::uint32_t)),
           scratch = ctx.device.allocate(sizeof(std::uint32_t));
      in->upload(words.data(), n * sizeof(std::uint32_t));
      const double ms = median_launch_ms(ctx, [&] { vendor->launch(*in, *out, *scratch, static_cast<int>(n)); });
      cal.library = vendor->name;
      cal.rates["library"] = kBytesPerWord * static_cast<double>(n) / (ms * 1e-3) / 1e9;
    }
    words.resize(std::min(n, kCpuCalibrationWords));
    std::vector<std::uint32_t> sums(words.size());
    measure_cpu_rates(
        ctx, cal, kBytesPerWord * static_cast<double>(words.size()),
        [&] { reference::inclusive_scan_one_core(words, sums); },
        [&] { reference::inclusive_scan_all_cores(words, sums); }, 5);
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    ScanCaseRun run(ctx, task, c, data_for(ctx, task, c));
    return execute(ctx, c, run.launchable());
  }

 private:
  // The timing case's inputs are drawn once per run, not per task, and scanned once: the timed
  // launches get new inputs each (masks), and the first launch of every task is checked in full.
  std::shared_ptr<const CaseData> data_for(const RunContext& ctx, const Task& task, const Case& c) {
    return timing_data_.get(c, [&] {
      Rng rng = ctx.inputs_rng(task, c);
      auto made = std::make_shared<CaseData>();
      for (int i = 0; i < input_sets(c); ++i) made->contents.push_back(make_input(c, rng));
      made->expected_first = zeroed_on_all_cores<std::uint32_t>(made->contents[0].size());
      reference::inclusive_scan_all_cores(made->contents[0], made->expected_first);
      return made;
    });
  }

  TimingCaseData<CaseData> timing_data_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<ScanDriver>(); }

}  // namespace gpulab
