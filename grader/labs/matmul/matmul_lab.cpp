#include "matmul_lab.hpp"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
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

std::unique_ptr<Buffer> allocate(Device& device, std::size_t bytes, bool guarded) {
  return guarded ? device.allocate_guarded(bytes) : device.allocate(bytes);
}

// Device buffers of A, B and C for one shape, A and B filled.
struct Operands {
  std::unique_ptr<Buffer> a, b, c;
  // `guarded`: for student code (see Device::allocate_guarded).
  Operands(Device& device, const Shape& s, const std::vector<float>& ha, const std::vector<float>& hb,
           bool guarded = false)
      : a(allocate(device, ha.size() * sizeof(float), guarded)),
        b(allocate(device, hb.size() * sizeof(float), guarded)),
        c(allocate(device, static_cast<std::size_t>(s.m) * s.n * sizeof(float), guarded)) {
    a->upload(ha.data(), ha.size() * sizeof(float));
    b->upload(hb.data(), hb.size() * sizeof(float));
  }
};

// Checks `samples` elements of C chosen at random, each against a double-precision dot product
// with the tolerance of reference::matmul_check: linear in the sample, for every timed launch.
Comparison sampled_check(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& got,
                         const Shape& s, Rng& rng, std::size_t samples = 1024) {
  const double gamma = reference::matmul_error_factor(static_cast<std::size_t>(s.k));
  std::vector<double> expected(samples), bound(samples);
  std::vector<float> seen(samples);
  std::vector<std::size_t> where(samples);
  for (std::size_t t = 0; t < samples; ++t) {
    const auto i = static_cast<std::size_t>(rng.integer(0, s.m - 1)), j = static_cast<std::size_t>(rng.integer(0, s.n - 1));
    double exact = 0, magnitude = 0;
    for (std::size_t p = 0; p < static_cast<std::size_t>(s.k); ++p) {
      const double x = a[i * s.k + p], y = b[p * s.n + j];
      exact += x * y;
      magnitude += std::fabs(x * y);
    }
    expected[t] = exact;
    bound[t] = gamma * magnitude + s.k * static_cast<double>(FLT_MIN);
    where[t] = i * s.n + j;
    seen[t] = got[where[t]];
  }
  Comparison cmp = compare_within(expected, bound, seen);
  for (Mismatch& m : cmp.first) m.index = where[m.index];
  cmp.note = fmt::format("{} elements of C chosen at random were checked", samples);
  return cmp;
}

class MatmulDriver final : public LabDriver {
 public:
  std::string rate_unit() const override { return "GFLOP/s"; }

  void calibrate(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const Shape s = shape_of(timing);
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration", timing.name));
    const auto ha = random_matrix(rng, static_cast<std::size_t>(s.m) * s.k);
    const auto hb = random_matrix(rng, static_cast<std::size_t>(s.k) * s.n);
    calibration_ops_ = std::make_unique<Operands>(ctx.device, s, ha, hb);
    Operands& ops = *calibration_ops_;
    auto rate_of = [&](const labs::MatmulLaunch& launch) {
      return s.flops() / (median_launch_ms(ctx, [&] { launch(*ops.a, *ops.b, *ops.c, s.m, s.n, s.k); }) * 1e-3) / 1e9;
    };
    naive_ = labs::harness_naive_matmul(ctx.device);
    cal.rates["naive"] = rate_of(naive_);
    // Kept, to be measured again between a task's timed launches (the naive_speedup bound).
    cal.probes["naive"] = Probe{[] {}, [this, s] { naive_(*calibration_ops_->a, *calibration_ops_->b, *calibration_ops_->c, s.m, s.n, s.k); }, s.flops()};
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
    // Input sets in distinct buffers with different contents. Contents 0 get the full reference;
    // the others (timing only) are checked on elements sampled anew after every launch. The runner
    // moves contents between sets during timing (load), so no buffer repeats its data.
    struct Contents {
      std::vector<float> a, b;
    };
    struct Set {
      std::unique_ptr<Operands> ops;
      std::vector<float> a, b;  // what its buffers hold now
      bool full_reference = false;  // they hold contents 0 as generated: the full reference applies
    };
    const int count_of_sets = input_sets(c);
    std::vector<Contents> contents(count_of_sets);
    std::vector<Set> sets(count_of_sets);
    const std::string inputs = c.params.value("inputs", "uniform");
    for (int i = 0; i < count_of_sets; ++i) {
      contents[i].a = random_matrix(rng, static_cast<std::size_t>(s.m) * s.k, inputs);
      contents[i].b = random_matrix(rng, static_cast<std::size_t>(s.k) * s.n, inputs);
      sets[i] = {std::make_unique<Operands>(ctx.device, s, contents[i].a, contents[i].b, true), contents[i].a,
                 contents[i].b, i == 0};
    }
    const auto check = reference::matmul_check(contents[0].a, contents[0].b, s.m, s.n, s.k);
    const auto launch = labs::bind_matmul(ctx.device, task.function);
    std::vector<float> got(static_cast<std::size_t>(s.m) * s.n);
    Rng samples(derive_seed(ctx.run_seed, ctx.manifest.id, "samples " + task.name, c.name));
    Rng scales(derive_seed(ctx.run_seed, ctx.manifest.id, "scales " + task.name, c.name));
    // A power of two with a random sign: exact in floating point, and new contents at every load,
    // so not even a cache keyed by the contents of A and B ever sees the same operands twice.
    auto random_scale = [&] { return std::ldexp(scales.next() & 1 ? 1.0f : -1.0f, static_cast<int>(scales.integer(-6, 6))); };

    Launchable l;
    l.sets = count_of_sets;
    l.load = [&](int i, int what) {
      Set& set = sets[i];
      const float sa = random_scale(), sb = random_scale();
      for (std::size_t p = 0; p < set.a.size(); ++p) set.a[p] = contents[what].a[p] * sa;
      for (std::size_t p = 0; p < set.b.size(); ++p) set.b[p] = contents[what].b[p] * sb;
      set.full_reference = false;
      set.ops->a->upload(set.a.data(), set.a.size() * sizeof(float));
      set.ops->b->upload(set.b.data(), set.b.size() * sizeof(float));
    };
    l.prepare = [&](int i) { sets[i].ops->c->fill(kPoisonByte); };
    l.launch = [&](int i) { launch(*sets[i].ops->a, *sets[i].ops->b, *sets[i].ops->c, s.m, s.n, s.k); };
    l.quick_check = [&](int i) {
      sets[i].ops->c->download(got.data(), got.size() * sizeof(float));
      return sampled_check(sets[i].a, sets[i].b, got, s, samples);
    };
    l.check = [&](int i) {
      if (!sets[i].full_reference) return l.quick_check(i);
      sets[i].ops->c->download(got.data(), got.size() * sizeof(float));
      return compare_within(check.expected, check.bound, got, static_cast<std::size_t>(s.n));
    };
    l.watched = [&](int i) {
      const Operands& o = *sets[i].ops;
      return std::vector<Watched>{{o.a.get(), "a", sizeof(float), sets[i].a.data()},
                                  {o.b.get(), "b", sizeof(float), sets[i].b.data()},
                                  {o.c.get(), "c", sizeof(float)}};
    };
    l.work = l.flops = s.flops();
    l.least_bytes = 4.0 * (static_cast<double>(s.m) * s.k + static_cast<double>(s.k) * s.n + static_cast<double>(s.m) * s.n);
    return execute(ctx, c, l);
  }

 private:
  std::unique_ptr<Operands> calibration_ops_;
  labs::MatmulLaunch naive_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<MatmulDriver>(); }

}  // namespace gpulab
