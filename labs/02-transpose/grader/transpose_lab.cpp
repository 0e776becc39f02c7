#include "transpose_lab.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "gpulab/parallel.hpp"
#include "lab_driver.hpp"
#include "transpose_reference.hpp"

namespace gpulab {
namespace {

// An element of an input: mostly uniform in [-1, 1), and one in 32 a float no arithmetic keeps as
// it is (a transpose does none, and out holds each element's bits): zeros of either sign, a
// subnormal, an infinity, a NaN with a payload, the largest float. Never all ones, the outputs'
// poison, so an unwritten element is never right by chance.
float element(Rng& r) {
  const auto bits = static_cast<std::uint32_t>(r.next());
  if (bits % 32 != 0) return r.uniform(-1.0f, 1.0f);
  const std::uint32_t sign = bits & 0x80000000u, payload = (bits >> 5) & 0x007FFFFEu;
  switch (bits / 32 % 6) {
    case 0: return std::bit_cast<float>(sign);                                 // +0 or -0
    case 1: return std::bit_cast<float>(sign | payload | 1u);                  // subnormal
    case 2: return std::bit_cast<float>(sign | 0x7F800000u);                   // infinity
    case 3: return std::bit_cast<float>(sign | 0x7FC00000u | (payload >> 2));  // quiet NaN
    case 4: return std::bit_cast<float>(0x7F800000u | payload | 1u);           // signalling NaN (sign clear)
    default: return std::bit_cast<float>(sign | 0x7F7FFFFFu);                  // the largest float
  }
}

// Patched words per input set of a large case (see run).
constexpr std::size_t kPatches = 16, kPatchedFrom = std::size_t{1} << 16;

// A case's input and its transpose.
struct CaseData {
  std::vector<float> input, expected;
};

class TransposeDriver final : public LabDriver {
 public:
  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    const auto rows = static_cast<int>(case_int(c, "rows"));
    const auto cols = static_cast<int>(case_int(c, "cols"));
    const std::size_t count = static_cast<std::size_t>(rows) * cols, bytes = count * sizeof(float);
    // One input and its transpose; each input set holds the input with every element's bits XORed
    // with a mask of its own (sign and mantissa: the numbers stay finite), and a set gets a new mask
    // before each warm-up and timed launch, written on the device from an untouched copy. A transpose
    // moves bits, so the expected output is the transpose XORed with the same mask (and the patches
    // below, transposed): no two launches alike, and no earlier output right again.
    const std::shared_ptr<const CaseData> data = data_for(ctx, task, c, rows, cols);
    const std::vector<float>& input = data->input;
    const std::vector<float>& expected = data->expected;
    MaskDraws masks(ctx, task, c, {.may = 0x807FFFFFu});
    struct Set {
      std::unique_ptr<Buffer> in, out;
      WordTransform transform;  // `in` holds `input` transformed so,
      WordPatches in_patches;   // with these words written over it,
      WordPatches out_patches;  // which land here in the output
    };
    // A large case's sets get kPatches random words at seeded places too, new ones before every
    // launch: one word reveals the mask, so an output cached from an earlier launch could be
    // corrected for it at copy speed; the patches, which the checks always compare, it cannot know.
    const bool patched = count >= kPatchedFrom;
    Rng patch_rng = ctx.draws("patches", task, c);
    const int count_of_sets = input_sets(c);
    const PristineInput pristine(ctx.device, input.data(), bytes, count_of_sets);
    std::vector<Set> sets(count_of_sets);
    auto hold = [&](Set& set, const WordTransform& t) {
      set.transform = t;
      set.out_patches.clear();
      set.in_patches = draw_patches(patch_rng, patched ? kPatches : 0, count, [&](Rng& rng, std::size_t at) {
        const auto word = std::bit_cast<std::uint32_t>(rng.uniform(-1.0f, 1.0f));
        const std::size_t r = at / static_cast<std::size_t>(cols), col = at % static_cast<std::size_t>(cols);
        set.out_patches.emplace_back(col * static_cast<std::size_t>(rows) + r, word);  // (r, col) moves to (col, r)
        return word;
      });
      pristine.write(*set.in, t, set.in_patches);
    };
    for (int i = 0; i < count_of_sets; ++i) {
      sets[i] = Set{};
      sets[i].in = ctx.device.allocate_guarded(bytes);
      sets[i].out = ctx.device.allocate_guarded(bytes);
      hold(sets[i], i == 0 ? WordTransform{} : masks.next());  // the first launch of a case sees the plain input
    }
    const auto launch = labs::bind_transpose(ctx.device, task.function);
    std::vector<float> got(count);

    Launchable l;
    l.sets = count_of_sets;
    l.load = [&](int i, int) { hold(sets[i], masks.next_other(sets[i].transform)); };
    l.prepare = [&](int i) { sets[i].out->fill(kPoisonByte); };
    l.launch = [&](int i) { launch(*sets[i].in, *sets[i].out, rows, cols); };
    l.check = [&](int i) {
      sets[i].out->download(got.data(), bytes);
      // The output has `rows` columns.
      const Set& set = sets[i];
      if (set.transform.identity() && set.out_patches.empty())
        return compare_exact<float>(expected, got, static_cast<std::size_t>(rows));
      HostArray<float> want = transformed(expected, set.transform);
      for (const auto& [at, word] : set.out_patches) want[at] = std::bit_cast<float>(word);
      return compare_exact<float>(want, got, static_cast<std::size_t>(rows));
    };
    l.exact_outputs = [&](int i) {
      return std::vector<ExactOutput>{{sets[i].out.get(), expected.data(), sets[i].transform, &sets[i].out_patches}};
    };
    l.watched = [&](int i) {
      return std::vector<Watched>{
          {sets[i].in.get(), "in", sizeof(float), input.data(), sets[i].transform, &sets[i].in_patches},
          {sets[i].out.get(), "out", sizeof(float)}};
    };
    l.work = l.least_bytes = 2.0 * static_cast<double>(bytes);
    return execute(ctx, c, l);
  }

 private:
  // The timing case's input is drawn once per run, not per task, and transposed once for every
  // task: the timed launches get new contents each (masks), and every first launch is checked in full.
  std::shared_ptr<const CaseData> data_for(const RunContext& ctx, const Task& task, const Case& c, int rows, int cols) {
    return timing_data_.get(c, [&] {
      Rng rng = ctx.inputs_rng(task, c);
      auto made = std::make_shared<CaseData>();
      made->input.resize(static_cast<std::size_t>(rows) * cols);
      draw_each(rng, std::span(made->input), element);
      made->expected = reference::transpose(made->input, rows, cols);
      return made;
    });
  }

  TimingCaseData<CaseData> timing_data_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<TransposeDriver>(); }

}  // namespace gpulab
