#include "transpose_lab.hpp"

#include "gpulab/reference.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

class TransposeDriver final : public LabDriver {
 public:
  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    const auto rows = static_cast<int>(case_int(c, "rows"));
    const auto cols = static_cast<int>(case_int(c, "cols"));
    const std::size_t count = static_cast<std::size_t>(rows) * cols, bytes = count * sizeof(float);
    Rng rng = ctx.rng(task, c);
    // Input sets in distinct buffers with different contents; the transpose of each is cheap. The
    // runner moves contents between sets during timing (load), so no buffer repeats its data.
    struct Contents {
      std::vector<float> input, expected;
    };
    struct Set {
      std::unique_ptr<Buffer> in, out;
      int holds = 0;  // which contents
    };
    const int count_of_sets = input_sets(c);
    std::vector<Contents> contents(count_of_sets);
    std::vector<Set> sets(count_of_sets);
    for (int i = 0; i < count_of_sets; ++i) {
      contents[i].input.resize(count);
      for (float& x : contents[i].input) x = rng.uniform(-1.0f, 1.0f);
      contents[i].expected = reference::transpose(contents[i].input, rows, cols);
      sets[i] = {ctx.device.allocate_guarded(bytes), ctx.device.allocate_guarded(bytes), i};
      sets[i].in->upload(contents[i].input.data(), bytes);
    }
    const auto launch = labs::bind_transpose(ctx.device, task.function);
    std::vector<float> got(count);

    Launchable l;
    l.sets = count_of_sets;
    l.load = [&](int i, int what) {
      sets[i].holds = what;
      sets[i].in->upload(contents[what].input.data(), bytes);
    };
    l.prepare = [&](int i) { sets[i].out->fill(kPoisonByte); };
    l.launch = [&](int i) { launch(*sets[i].in, *sets[i].out, rows, cols); };
    l.check = [&](int i) {
      sets[i].out->download(got.data(), bytes);
      // The output has `rows` columns.
      return compare_exact<float>(contents[sets[i].holds].expected, got, static_cast<std::size_t>(rows));
    };
    l.exact_outputs = [&](int i) {
      return std::vector<ExactOutput>{{sets[i].out.get(), contents[sets[i].holds].expected.data()}};
    };
    l.watched = [&](int i) {
      return std::vector<Watched>{{sets[i].in.get(), "in", sizeof(float), contents[sets[i].holds].input.data()},
                                  {sets[i].out.get(), "out", sizeof(float)}};
    };
    l.work = l.least_bytes = 2.0 * static_cast<double>(bytes);
    return execute(ctx, c, l);
  }
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<TransposeDriver>(); }

}  // namespace gpulab
