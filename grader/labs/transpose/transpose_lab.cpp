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
    const std::size_t count = static_cast<std::size_t>(rows) * cols;
    Rng rng = ctx.rng(task, c);
    std::vector<float> input(count);
    for (float& x : input) x = rng.uniform(-1.0f, 1.0f);
    const std::vector<float> expected = reference::transpose(input, rows, cols);

    auto in = ctx.device.allocate(count * sizeof(float));
    auto out = ctx.device.allocate(count * sizeof(float));
    in->upload(input.data(), count * sizeof(float));
    const auto launch = labs::bind_transpose(ctx.device, task.function);
    std::vector<float> got(count);

    Launchable l;
    l.prepare = [&] { out->fill(kPoisonByte); };
    l.launch = [&] { launch(*in, *out, rows, cols); };
    l.check = [&] {
      out->download(got.data(), count * sizeof(float));
      return compare_exact<float>(expected, got, static_cast<std::size_t>(rows));  // the output has `rows` columns
    };
    l.work = 2.0 * static_cast<double>(count * sizeof(float));
    return execute(ctx, c, l);
  }
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<TransposeDriver>(); }

}  // namespace gpulab
