#include "histogram_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string_view>

#include "histogram_reference.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

using reference::Bins;

// `n` random bytes, eight from each draw (one draw per byte would cost 8x the time on the 256 MiB
// timing case).
std::vector<std::uint8_t> uniform_bytes(std::size_t n, Rng& rng) {
  std::vector<std::uint64_t> words((n + 7) / 8);
  draw_each(rng, std::span(words), [](Rng& r) { return r.next(); });
  std::vector<std::uint8_t> bytes(n);
  if (n > 0) std::memcpy(bytes.data(), words.data(), n);
  return bytes;
}

// English-like text: common words, spaces, sentence ends and line breaks. A few bins (space, e, t)
// take most bytes, as in real text: contention on those bins, none on most others. Written in
// pieces of kTextPiece bytes on every core (a GPU's large case is 256 MiB of text, 3 s on one
// core), each piece from its own part of the stream, so the text depends on the seed alone.
constexpr std::size_t kTextPiece = std::size_t{1} << 20;

void write_text(std::span<std::uint8_t> piece, Rng rng) {
  static constexpr std::array<std::string_view, 32> kWords{
      "the",  "of",   "and",   "to",  "a",    "in",  "is",   "that", "for",    "it",    "as",
      "was",  "with", "be",    "by",  "on",   "not", "he",   "this", "are",    "or",    "his",
      "from", "at",   "which", "but", "have", "an",  "they", "you",  "memory", "thread"};
  std::size_t at = 0;
  bool sentence_start = true;
  auto put = [&](char ch) {
    if (at < piece.size()) piece[at++] = static_cast<std::uint8_t>(ch);
  };
  while (at < piece.size()) {
    const std::string_view word = kWords[static_cast<std::size_t>(rng.integer(0, kWords.size() - 1))];
    put(sentence_start ? static_cast<char>(word[0] - 'a' + 'A') : word[0]);
    for (const char ch : word.substr(1)) put(ch);
    const auto end = rng.integer(0, 15);
    sentence_start = end == 0;  // a capital after a full stop only
    put(end == 0 ? '.' : end == 1 ? ',' : ' ');
    if (end == 0) put(rng.integer(0, 3) == 0 ? '\n' : ' ');
  }
}

std::vector<std::uint8_t> text_bytes(std::size_t n, Rng& rng) {
  std::vector<std::uint8_t> bytes(n);
  const std::size_t pieces = (n + kTextPiece - 1) / kTextPiece;
  // A piece takes at most one draw per byte it writes (a word of one letter and its space: two
  // draws) and three more for the word cut at its end, so pieces 2 kTextPiece draws apart never
  // share one.
  const Rng start = rng;
  parallel_for(pieces, [&](std::size_t p) {
    const std::size_t from = p * kTextPiece;
    write_text(std::span(bytes).subspan(from, std::min(kTextPiece, n - from)), start.skipped(2 * from));
  });
  rng = start.skipped(2 * pieces * kTextPiece);
  return bytes;
}

// A case's bytes: uniform, all one byte (every thread hits one bin: the most contention), skewed
// (bin `hot` takes about a quarter of the bytes, its neighbours in XOR most of the rest), text, or
// periodic: a pattern of 2, 3, 4 or 8 distinct random bytes repeated (pixels of one colour, say), so
// that words and vectors repeat while the bytes within them differ: a kernel that counts a run of
// equal words as one byte repeated fails. The hot byte (the equal byte, the skewed peak, the
// pattern's first) is the case's `hot` where it names one, else drawn: 0x00 a quarter of the time,
// 0xFF a quarter, any byte otherwise, so the extremes (zero words, all-ones words: what a kernel
// might take for padding or a sentinel) come up in every distribution.
std::vector<std::uint8_t> make_bytes(const Case& c, Rng& rng) {
  const std::int64_t count = case_int(c, "n");
  if (count < 1) throw std::invalid_argument(fmt::format("case '{}': n must be >= 1", c.name));
  const auto n = static_cast<std::size_t>(count);
  const std::string shape = c.params.value("distribution", "uniform");
  if (shape == "text") return text_bytes(n, rng);
  std::vector<std::uint8_t> bytes = uniform_bytes(n, rng);
  const std::uint64_t draw = rng.next();
  std::uint8_t hot = (draw & 3) == 0 ? 0x00 : (draw & 3) == 1 ? 0xFF : static_cast<std::uint8_t>(draw >> 56);
  if (c.params.contains("hot")) {
    const std::int64_t named = case_int(c, "hot");
    if (named < 0 || named > 255)
      throw std::invalid_argument(fmt::format("case '{}': hot must be a byte, 0..255", c.name));
    hot = static_cast<std::uint8_t>(named);
  }
  if (shape == "uniform") return bytes;
  if (shape == "periodic") {
    static constexpr std::array<std::size_t, 4> kPeriods{2, 3, 4, 8};
    const std::size_t period = kPeriods[static_cast<std::size_t>(rng.integer(0, kPeriods.size() - 1))];
    std::array<std::uint8_t, 8> pattern{};
    for (std::size_t i = 0; i < period; ++i) pattern[i] = static_cast<std::uint8_t>(hot + 37 * i);  // distinct
    for (std::size_t i = 0; i < n; ++i) bytes[i] = pattern[i % period];
    return bytes;
  }
  if (shape == "equal") {
    std::fill(bytes.begin(), bytes.end(), hot);
  } else if (shape == "skewed") {
    for (auto& b : bytes) {  // u^4 / 256^3: P(0) = 1/4, P(< 16) = 1/2
      const std::uint64_t u = b;
      b = static_cast<std::uint8_t>(hot ^ ((u * u * u * u) >> 24));
    }
  } else {
    throw std::invalid_argument(
        fmt::format("case '{}': unknown distribution '{}' (uniform, equal, skewed, text, periodic)", c.name, shape));
  }
  return bytes;
}

// What a wrong histogram says about the kernel: bins never zeroed, bytes missed, bytes counted
// twice or read past the end.
std::string diagnose(const Bins& expected, std::span<const std::uint32_t> got) {
  const std::uint64_t want = std::accumulate(expected.begin(), expected.end(), std::uint64_t{0});
  const std::uint64_t total = std::accumulate(got.begin(), got.end(), std::uint64_t{0});
  bool poison_plus_counts = true;  // every bin holds 0xFFFFFFFF + its count: nobody zeroed the bins
  for (std::size_t b = 0; b < expected.size(); ++b) poison_plus_counts &= got[b] == expected[b] - 1u;
  if (poison_plus_counts)
    return "every bin holds its count plus 0xFFFFFFFF, the poison the bins start with: zero the bins "
           "(cudaMemset, clEnqueueFillBuffer or a kernel) before counting";
  if (total == want) return "the bins add up to n: every byte was counted once, but some in the wrong bin";
  if (total < want)
    return fmt::format(
        "the bins add up to {} of n = {}: {} of the bytes were never counted (the tail past the "
        "last whole block or vector? lost updates without an atomic?)",
        total, want, want - total);
  return fmt::format(
      "the bins add up to {}, more than n = {}: bytes counted twice, or read past the end of "
      "the input (the bytes after it are 0x7F)",
      total, want);
}

Comparison compare_bins(const Bins& expected, std::span<const std::uint32_t> got) {
  Comparison cmp = compare_exact<std::uint32_t>(expected, got);
  if (!cmp.ok()) cmp.note = diagnose(expected, got);
  return cmp;
}

// A case's bytes and their histogram; the bytes past the last whole word (n % 4 of them) apart, as
// timed launches transform whole words and leave those as they are.
struct CaseData {
  std::vector<std::uint8_t> bytes;
  Bins bins{};
  Bins tail_bins{};
};

// The histogram of `data`'s bytes transformed by `t` (whole words only).
Bins transformed_bins(const CaseData& data, const WordTransform& t) {
  Bins words{};
  for (std::size_t b = 0; b < words.size(); ++b) words[b] = data.bins[b] - data.tail_bins[b];
  Bins out = reference::xored(words, static_cast<std::uint8_t>(t.xor_mask));
  for (std::size_t b = 0; b < out.size(); ++b) out[b] += data.tail_bins[b];
  return out;
}

// A timed launch's input: every byte XORed with one random non-zero byte (its histogram is the
// case's with bins[b] moved to bins[b ^ m], exactly), the bytes of each word in a random order too
// (the histogram does not see it; a cache keyed by the contents does).
WordTransform new_transform(Rng& rng) {
  WordTransform t;
  t.xor_mask = static_cast<std::uint32_t>(rng.integer(1, 255)) * 0x01010101u;
  for (int k = 3; k > 0; --k) std::swap(t.byte_order[k], t.byte_order[rng.integer(0, k)]);
  return t;
}

// A transform other than `current`, the set's at its previous launch (6,120 of them: one repeats now
// and then, as MaskDraws::next_other says).
WordTransform other_transform(Rng& rng, const WordTransform& current) {
  WordTransform t = new_transform(rng);
  while (t == current) t = new_transform(rng);
  return t;
}

// Patches: in every input set of a large case, kPatchedWords words get random bytes, at seeded places,
// before each launch (new_transform alone can be undone from one word: a histogram cached from an
// earlier launch, its bins moved by the mask, would still be right). `expected` follows them.
constexpr std::size_t kPatchedWords = 16, kPatchedFrom = std::size_t{1} << 16;

WordPatches draw_byte_patches(Rng& rng, const std::vector<std::uint8_t>& input, const WordTransform& t,
                              Bins& expected) {
  return draw_patches(rng, kPatchedWords, input.size() / 4, [&](Rng& r, std::size_t at) {
    std::array<std::uint8_t, 4> was{}, now{};
    std::memcpy(was.data(), &input[4 * at], 4);
    t.apply(was.data(), 4);
    const auto word = static_cast<std::uint32_t>(r.next());
    std::memcpy(now.data(), &word, 4);
    for (int k = 0; k < 4; ++k) {
      expected[was[k]] -= 1;
      expected[now[k]] += 1;
    }
    return word;
  });
}

class HistogramDriver final : public LabDriver {
 public:
  std::string rate_work() const override { return "bytes of input read once"; }

  // The staff kernel: the harness's own histogram of the fast task's design (per-lane bins, 16-byte
  // loads), on uniform bytes of the timing case's size; fast's staff_fraction bound measures it again
  // between the task's timed launches. Not on a CPU device, where no bound is set.
  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    if (ctx.device.info().device_class != DeviceClass::gpu) return;
    const int n = static_cast<int>(case_int(timing, "n"));
    prepare_calibration_bytes(ctx, timing);
    staff_bins_ = ctx.device.allocate(sizeof(Bins));
    staff_ = labs::staff_histogram(ctx.device);
    cal.probes["staff"] =
        Probe{[] {}, [this, n] { staff_(*calibration_input_, *staff_bins_, n); }, static_cast<double>(n)};
  }

  // The staff kernel and CUB's HistogramEven on uniform bytes, the size of the timing case, and the
  // CPU on one core and on all of them.
  void measure_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const int n = static_cast<int>(case_int(timing, "n"));
    prepare_calibration_bytes(ctx, timing);
    if (const auto staff = cal.probes.find("staff"); staff != cal.probes.end())
      cal.rates["staff"] = n / (median_launch_ms(ctx, staff->second) * 1e-3) / 1e9;
    if (auto vendor = labs::vendor_histogram(ctx.device, n)) {
      const auto bins = ctx.device.allocate(sizeof(Bins));
      const double ms = median_launch_ms(
          ctx, [&] { vendor->launch(*calibration_input_, *bins, n); }, [&] { bins->fill(0); });
      cal.library = vendor->name;
      cal.rates["library"] = n / (ms * 1e-3) / 1e9;
    }
    measure_cpu_rates(
        ctx, cal, n, [&] { (void)reference::histogram_one_core(calibration_bytes_); },
        [&] { (void)reference::histogram_all_cores(calibration_bytes_); });
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override;

 private:
  // Uniform bytes of the timing case's size, on the host and on the device, drawn once.
  void prepare_calibration_bytes(const RunContext& ctx, const Case& timing) {
    if (calibration_input_) return;
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration", timing.name));
    calibration_bytes_ = uniform_bytes(static_cast<std::size_t>(case_int(timing, "n")), rng);
    calibration_input_ = ctx.device.allocate(calibration_bytes_.size());
    calibration_input_->upload(calibration_bytes_.data(), calibration_bytes_.size());
  }

  // The timing case's bytes are drawn once per run, not per task, and counted once: the timed
  // launches get new contents each (XOR masks), and the first launch of every task is checked.
  std::shared_ptr<const CaseData> data_for(const RunContext& ctx, const Task& task, const Case& c) {
    return timing_data_.get(c, [&] {
      Rng rng = ctx.inputs_rng(task, c);
      auto made = std::make_shared<CaseData>();
      made->bytes = make_bytes(c, rng);
      made->bins = reference::histogram_all_cores(made->bytes);
      const std::size_t whole = made->bytes.size() / 4 * 4;
      made->tail_bins = reference::histogram_one_core(std::span(made->bytes).subspan(whole));
      return made;
    });
  }

  TimingCaseData<CaseData> timing_data_;
  std::vector<std::uint8_t> calibration_bytes_;
  std::unique_ptr<Buffer> calibration_input_, staff_bins_;
  labs::HistogramLaunch staff_;
};

CaseResult HistogramDriver::run(const RunContext& ctx, const Task& task, const Case& c) {
  // One input; each input set holds it with every byte XORed with a mask of its own and the bytes
  // of each word shuffled (new_transform), and a set gets a new transform before each warm-up and
  // timed launch, written on the device from an untouched copy, and a large case's sets get a few
  // random words too (draw_byte_patches), new ones each launch: no two launches alike, no result of an
  // earlier one right again, and the expected bins follow exactly. Transforms work on whole words:
  // the n % 4 bytes after the last one stay as they are. The input buffer is exactly n bytes, with
  // guard zones of 0x7F around it: a kernel that reads past the end counts bytes that are not there.
  const std::shared_ptr<const CaseData> data = data_for(ctx, task, c);
  const std::vector<std::uint8_t>& input = data->bytes;
  const std::size_t n = input.size(), whole = n / 4 * 4;
  const int count_of_sets = input_sets(c);
  Rng masks = ctx.draws("masks", task, c);  // the bytes' own transforms (new_transform)
  struct Set {
    std::unique_ptr<Buffer> bytes, bins;
    WordTransform transform;  // `bytes` holds the input transformed so,
    WordPatches patches;      // with these words written over it
    Bins expected;
  };
  const PristineInput pristine(ctx.device, input.data(), whole, count_of_sets);
  Rng patch_rng = ctx.draws("patches", task, c);
  std::vector<Set> sets(count_of_sets);
  auto hold = [&](Set& set, const WordTransform& t) {
    set.transform = t;
    set.expected = transformed_bins(*data, t);
    set.patches = n >= kPatchedFrom ? draw_byte_patches(patch_rng, input, t, set.expected) : WordPatches{};
    if (whole > 0) pristine.write(*set.bytes, t, set.patches);
    if (whole < n) set.bytes->upload_range(input.data() + whole, whole, n - whole);
  };
  for (int i = 0; i < count_of_sets; ++i) {
    sets[i].bytes = ctx.device.allocate_guarded(n);
    sets[i].bins = ctx.device.allocate_guarded(sizeof(Bins));
    hold(sets[i], i == 0 ? WordTransform{} : new_transform(masks));  // the first launch sees the plain input
  }
  const auto launch = labs::bind_histogram(ctx.device, task.function);
  std::array<std::uint32_t, 256> got{};

  Launchable l;
  l.sets = count_of_sets;
  l.load = [&](int i, int) { hold(sets[i], other_transform(masks, sets[i].transform)); };
  l.prepare = [&](int i) { sets[i].bins->fill(kPoisonByte); };  // the launch must zero the bins itself
  l.launch = [&](int i) { launch(*sets[i].bytes, *sets[i].bins, static_cast<int>(n)); };
  l.check = [&](int i) {
    sets[i].bins->download(got.data(), sizeof(Bins));
    return compare_bins(sets[i].expected, got);
  };
  l.exact_outputs = [&](int i) { return std::vector<ExactOutput>{{sets[i].bins.get(), sets[i].expected.data()}}; };
  l.watched = [&](int i) {
    return std::vector<Watched>{{sets[i].bytes.get(), "bytes", 1, input.data(), sets[i].transform, &sets[i].patches},
                                {sets[i].bins.get(), "bins", sizeof(std::uint32_t)}};
  };
  l.work = l.least_bytes = static_cast<double>(n);  // every byte read once; 1 KiB of bins written
  return execute(ctx, c, l);
}

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<HistogramDriver>(); }

}  // namespace gpulab
