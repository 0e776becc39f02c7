#include "matmul_lab.hpp"

#include <thread>

#include "gpulab/reference.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

struct Shape {
  int m, n, k;
  double flops() const { return 2.0 * m * n * k; }
};

Shape shape_of(const Case& c) {
  return {static_cast<int>(case_int(c, "m")), static_cast<int>(case_int(c, "n")), static_cast<int>(case_int(c, "k"))};
}

std::vector<float> random_matrix(Rng& rng, std::size_t count, const std::string& inputs = "uniform") {
  return reference::matmul_inputs(rng, count, inputs);
}

// Device buffers of A, B and C for one shape, A and B filled.
struct Operands {
  std::unique_ptr<Buffer> a, b, c;
  Operands(Device& device, const Shape& s, const std::vector<float>& ha, const std::vector<float>& hb)
      : a(device.allocate(ha.size() * sizeof(float))),
        b(device.allocate(hb.size() * sizeof(float))),
        c(device.allocate(static_cast<std::size_t>(s.m) * s.n * sizeof(float))) {
    a->upload(ha.data(), ha.size() * sizeof(float));
    b->upload(hb.data(), hb.size() * sizeof(float));
  }
};

class MatmulDriver final : public LabDriver {
 public:
  std::string rate_unit() const override { return "GFLOP/s"; }

  void calibrate(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const Shape s = shape_of(timing);
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration", timing.name));
    const auto ha = random_matrix(rng, static_cast<std::size_t>(s.m) * s.k);
    const auto hb = random_matrix(rng, static_cast<std::size_t>(s.k) * s.n);
    Operands ops(ctx.device, s, ha, hb);
    auto rate_of = [&](const labs::MatmulLaunch& launch) {
      return s.flops() / (median_launch_ms(ctx, [&] { launch(*ops.a, *ops.b, *ops.c, s.m, s.n, s.k); }) * 1e-3) / 1e9;
    };
    cal.rates["naive"] = rate_of(labs::harness_naive_matmul(ctx.device));
    if (const auto peak = ctx.device.peak_gflops()) cal.rates["peak"] = *peak;
    if (auto vendor = labs::vendor_sgemm(ctx.device)) {
      cal.library = vendor->name;
      cal.rates["library"] = rate_of(vendor->launch);
    }

    // The CPU on a cube of at most 1024: a second or so for one core, wherever the lab runs.
    const int side = std::min({s.m, s.n, s.k, 1024});
    const std::size_t count = static_cast<std::size_t>(side) * side;
    std::vector<float> ca(ha.begin(), ha.begin() + count), cb(hb.begin(), hb.begin() + count), cc(count);
    const double cube_flops = 2.0 * side * side * side;
    cal.rates["cpu_1core"] =
        cube_flops / (median_host_ms([&] { reference::matmul_one_core(ca, cb, cc, side, side, side); }, 3) * 1e-3) / 1e9;
    ctx.heartbeat();
    cal.rates["cpu_all_cores"] =
        cube_flops / (median_host_ms([&] { reference::matmul_all_cores(ca, cb, cc, side, side, side); }, 3) * 1e-3) / 1e9;
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    const Shape s = shape_of(c);
    Rng rng = ctx.rng(task, c);
    const std::string inputs = c.params.value("inputs", "uniform");
    const auto ha = random_matrix(rng, static_cast<std::size_t>(s.m) * s.k, inputs);
    const auto hb = random_matrix(rng, static_cast<std::size_t>(s.k) * s.n, inputs);
    const auto check = reference::matmul_check(ha, hb, s.m, s.n, s.k);
    Operands ops(ctx.device, s, ha, hb);
    const auto launch = labs::bind_matmul(ctx.device, task.function);
    std::vector<float> got(static_cast<std::size_t>(s.m) * s.n);

    Launchable l;
    l.prepare = [&] { ops.c->fill(kPoisonByte); };
    l.launch = [&] { launch(*ops.a, *ops.b, *ops.c, s.m, s.n, s.k); };
    l.check = [&] {
      ops.c->download(got.data(), got.size() * sizeof(float));
      return compare_within(check.expected, check.bound, got, static_cast<std::size_t>(s.n));
    };
    l.work = s.flops();
    return execute(ctx, c, l);
  }
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<MatmulDriver>(); }

}  // namespace gpulab
