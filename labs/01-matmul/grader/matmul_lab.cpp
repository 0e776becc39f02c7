#include "matmul_lab.hpp"

#include <fmt/format.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <thread>

#include "gpulab/parallel.hpp"
#include "lab_driver.hpp"
#include "matmul_reference.hpp"

namespace gpulab {
namespace {

struct Shape {
  int m, n, k;
  double flops() const { return 2.0 * m * n * k; }
};

// Cases with more multiply-adds than this are checked by reference::matmul_check_large, in
// O(mn + mk + kn), instead of the full O(mnk) reference: at 4096^3 0.2 s instead of 6 s on the 16
// cores of an H100 host (22 s on 2). The CPU timing case (512^3) and every listed and random shape
// keep the full reference.
constexpr double kLargeWork = 134217728.0;  // 2^27
bool large(const Shape& s) { return static_cast<double>(s.m) * s.n * s.k > kLargeWork; }

Shape shape_of(const Case& c) {
  return {static_cast<int>(case_int(c, "m")), static_cast<int>(case_int(c, "n")), static_cast<int>(case_int(c, "k"))};
}

std::vector<float> random_matrix(Rng& rng, std::size_t count, const std::string& inputs = "uniform") {
  return reference::matmul_inputs(rng, count, inputs);
}

std::unique_ptr<Buffer> allocate(Device& device, std::size_t bytes, bool guarded) {
  return guarded ? device.allocate_guarded(bytes) : device.allocate(bytes);
}

// Device buffers of A, B and C for one shape, A and B filled from `ha` and `hb` unless `upload` is false
// (the caller writes them on the device).
struct Operands {
  std::unique_ptr<Buffer> a, b, c;
  // `guarded`: for student code (see Device::allocate_guarded).
  Operands(Device& device, const Shape& s, const std::vector<float>& ha, const std::vector<float>& hb,
           bool guarded = false, bool upload = true)
      : a(allocate(device, ha.size() * sizeof(float), guarded)),
        b(allocate(device, hb.size() * sizeof(float), guarded)),
        c(allocate(device, static_cast<std::size_t>(s.m) * s.n * sizeof(float), guarded)) {
    if (!upload) return;
    a->upload(ha.data(), ha.size() * sizeof(float));
    b->upload(hb.data(), hb.size() * sizeof(float));
  }
};

// Checks C on a grid of rows and columns (reference::matmul_sample_lines: the first and the last,
// the first of every partial last tile, 16 tile boundaries and 16 more at random; about 40 x 40
// elements), each element against a double-precision dot product with the tolerance of
// reference::matmul_check, for A and B as generated (`a`, `b`) transformed by `ta` and `tb`. It reads
// only those rows of C from the device and gathers the columns of B once: cheap enough for every
// timed launch (at 4096^3, 7e6 multiply-adds).
Comparison sampled_check(const std::vector<float>& a, const std::vector<float>& b, const WordTransform& ta,
                         const WordTransform& tb, Buffer& c, const Shape& s, Rng& rng) {
  const double gamma = reference::matmul_error_factor(static_cast<std::size_t>(s.k));
  const auto m = static_cast<std::size_t>(s.m), n = static_cast<std::size_t>(s.n), k = static_cast<std::size_t>(s.k);
  auto value = [](float x, const WordTransform& t) { return std::bit_cast<float>(t(std::bit_cast<std::uint32_t>(x))); };
  const auto rows = reference::matmul_sample_lines(rng, m, 16, false);
  const auto cols = reference::matmul_sample_lines(rng, n, 16, false);
  // On every core: gathering the columns of B misses the cache on every element (20 ms at 4096^2
  // on one core of an H100 host, after every timed launch).
  std::vector<double> b_cols(cols.size() * k);  // column q of the grid, contiguous over p
  parallel_ranges(k, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1; ++p)
      for (std::size_t q = 0; q < cols.size(); ++q) b_cols[q * k + p] = value(b[p * n + cols[q]], tb);
  });
  const std::size_t grid = rows.size() * cols.size();
  std::vector<double> expected(grid), bound(grid);
  std::vector<float> seen(grid), c_row(n);
  std::vector<std::size_t> where(grid);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    c.download_range(c_row.data(), rows[r] * n * sizeof(float), n * sizeof(float));
    for (std::size_t q = 0; q < cols.size(); ++q) {
      seen[r * cols.size() + q] = c_row[cols[q]];
      where[r * cols.size() + q] = rows[r] * n + cols[q];
    }
  }
  parallel_for(rows.size(), [&](std::size_t r) {
    std::vector<double> a_row(k);
    for (std::size_t p = 0; p < k; ++p) a_row[p] = value(a[rows[r] * k + p], ta);
    for (std::size_t q = 0; q < cols.size(); ++q) {
      double exact = 0, magnitude = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const double product = a_row[p] * b_cols[q * k + p];
        exact += product;
        magnitude += std::fabs(product);
      }
      expected[r * cols.size() + q] = exact;
      bound[r * cols.size() + q] = gamma * magnitude + s.k * static_cast<double>(FLT_MIN);
    }
  });
  Comparison cmp = compare_within(expected, bound, seen);
  for (Mismatch& mismatch : cmp.first) mismatch.index = where[mismatch.index];
  cmp.note = fmt::format(
      "{} elements of C were checked, on {} rows and {} columns: the first and the last, tile boundaries and the "
      "rest at random",
      seen.size(), rows.size(), cols.size());
  return cmp;
}

// A case's A and B as generated, and the full reference for them (none for a large case).
struct CaseInputs {
  std::string case_name;
  std::vector<float> a, b;
  reference::MatmulCheck check;
};

class MatmulDriver final : public LabDriver {
 public:
  std::string rate_unit() const override { return "GFLOP/s"; }
  std::string rate_work() const override { return "2·m·n·k flops"; }

  // The naive kernel's probe on operands of the timing case's shape (the naive_speedup bound
  // measures it again between a task's timed launches).
  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const Shape s = shape_of(timing);
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration", timing.name));
    const auto ha = random_matrix(rng, static_cast<std::size_t>(s.m) * s.k);
    const auto hb = random_matrix(rng, static_cast<std::size_t>(s.k) * s.n);
    calibration_ops_ = std::make_unique<Operands>(ctx.device, s, ha, hb);
    naive_ = labs::harness_naive_matmul(ctx.device);
    cal.probes["naive"] = Probe{
        [] {}, [this, s] { naive_(*calibration_ops_->a, *calibration_ops_->b, *calibration_ops_->c, s.m, s.n, s.k); },
        s.flops()};
  }

  void measure_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    const Shape s = shape_of(timing);
    Operands& ops = *calibration_ops_;
    auto rate_of = [&](const labs::MatmulLaunch& launch) {
      return s.flops() / (median_launch_ms(ctx, [&] { launch(*ops.a, *ops.b, *ops.c, s.m, s.n, s.k); }) * 1e-3) / 1e9;
    };
    cal.rates["naive"] = rate_of(naive_);
    if (const auto peak = ctx.device.peak_gflops()) cal.rates["peak"] = *peak;
    // Here, not in prepare: a run given earlier rates never starts the vendor library (cuBLAS's handle).
    if (auto vendor = labs::vendor_sgemm(ctx.device)) {
      cal.library = vendor->name;
      cal.rates["library"] = rate_of(vendor->launch);
    }

    // The CPU on a cube of at most 1024: a second or so for one core, wherever the lab runs.
    const int side = std::min({s.m, s.n, s.k, 1024});
    const std::size_t count = static_cast<std::size_t>(side) * side;
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "calibration cpu", timing.name));
    std::vector<float> ca = random_matrix(rng, count), cb = random_matrix(rng, count), cc(count);
    const double cube_flops = 2.0 * side * side * side;
    measure_cpu_rates(
        ctx, cal, cube_flops, [&] { reference::matmul_one_core(ca, cb, cc, side, side, side); },
        [&] { reference::matmul_all_cores(ca, cb, cc, side, side, side); });
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    const Shape s = shape_of(c);
    // Input sets in distinct buffers. Set 0 first holds A and B as generated, and gets the full
    // reference (a large case: projections and exact elements, reference::matmul_check_large).
    // Before each warm-up and timed launch the runner gives a set new contents: A and B
    // with every element's bits XORed with new random masks (sign and mantissa: the numbers stay
    // finite and of the same size), written on the device from untouched copies, and checked on
    // elements sampled anew, but for the one launch the timing plan checks in full, against the
    // reference of the masked inputs. No operands are ever seen twice, so no cache of results can
    // hit. No-cancel inputs keep their low 16 bits under every mask: the pattern whose rounding to a
    // shorter format does not cancel (reference::matmul_inputs) stays in every timed launch.
    const std::shared_ptr<const CaseInputs> case_inputs = inputs_for(ctx, task, c);
    const std::vector<float>& ha = case_inputs->a;
    const std::vector<float>& hb = case_inputs->b;
    const reference::MatmulCheck& check = case_inputs->check;
    struct Set {
      std::unique_ptr<Operands> ops;
      WordTransform ta, tb;  // its buffers hold A and B transformed so
    };
    const int count_of_sets = input_sets(c);
    std::unique_ptr<Operands> pristine;  // A and B as generated, for the loads of a timing case
    if (count_of_sets > 1) pristine = std::make_unique<Operands>(ctx.device, s, ha, hb);
    const std::uint32_t maskable = c.params.value("inputs", "uniform") == "no-cancel" ? 0x807F0000u : 0x807FFFFFu;
    MaskDraws masks(ctx, task, c, {.may = maskable});
    std::vector<Set> sets(count_of_sets);
    auto load = [&](Set& set) {
      set.ta = masks.next_other(set.ta);  // A alone new is enough: the product is new
      set.tb = masks.next();
      ctx.device.copy_transformed(*pristine->a, *set.ops->a, set.ta);
      ctx.device.copy_transformed(*pristine->b, *set.ops->b, set.tb);
    };
    for (int i = 0; i < count_of_sets; ++i) {
      sets[i].ops = std::make_unique<Operands>(ctx.device, s, ha, hb, true, i == 0);
      if (i > 0) load(sets[i]);  // set 0 holds A and B as generated; the others new masks at once
    }
    const auto launch = labs::bind_matmul(ctx.device, task.function);
    std::vector<float> got(static_cast<std::size_t>(s.m) * s.n);
    Rng samples = ctx.draws("samples", task, c);

    Launchable l;
    l.sets = count_of_sets;
    l.load = [&](int i, int) { load(sets[i]); };
    l.prepare = [&](int i) { sets[i].ops->c->fill(kPoisonByte); };
    l.launch = [&](int i) { launch(*sets[i].ops->a, *sets[i].ops->b, *sets[i].ops->c, s.m, s.n, s.k); };
    l.quick_check = [&](int i) { return sampled_check(ha, hb, sets[i].ta, sets[i].tb, *sets[i].ops->c, s, samples); };
    l.check = [&](int i) {
      sets[i].ops->c->download(got.data(), got.size() * sizeof(float));
      if (sets[i].ta.identity() && sets[i].tb.identity()) {
        if (large(s)) return reference::matmul_check_large(ha, hb, got, s.m, s.n, s.k, samples);
        return compare_within(check.expected, check.bound, got, static_cast<std::size_t>(s.n));
      }
      // The launch the timing plan checks in full: A and B as this set holds them.
      const HostArray<float> a = transformed(ha, sets[i].ta), b = transformed(hb, sets[i].tb);
      if (large(s)) return reference::matmul_check_large(a, b, got, s.m, s.n, s.k, samples);
      const reference::MatmulCheck masked = reference::matmul_check(a, b, s.m, s.n, s.k);
      return compare_within(masked.expected, masked.bound, got, static_cast<std::size_t>(s.n));
    };
    l.watched = [&](int i) {
      const Operands& o = *sets[i].ops;
      return std::vector<Watched>{{o.a.get(), "a", sizeof(float), ha.data(), sets[i].ta},
                                  {o.b.get(), "b", sizeof(float), hb.data(), sets[i].tb},
                                  {o.c.get(), "c", sizeof(float)}};
    };
    l.work = l.flops = s.flops();
    l.least_bytes =
        4.0 * (static_cast<double>(s.m) * s.k + static_cast<double>(s.k) * s.n + static_cast<double>(s.m) * s.n);
    return execute(ctx, c, l);
  }

 private:
  // The timing case's inputs are drawn once per run, not per task, and its reference, where it has
  // one, is computed once for every task. Nothing is lost: the timed launches get new contents each
  // (masks), and the first launch of every task is checked by the reference or, for a large case,
  // by reference::matmul_check_large.
  std::shared_ptr<const CaseInputs> inputs_for(const RunContext& ctx, const Task& task, const Case& c) {
    if (c.timing && timing_inputs_ && timing_inputs_->case_name == c.name) return timing_inputs_;
    const Shape s = shape_of(c);
    Rng rng = ctx.inputs_rng(task, c);
    const std::string inputs = c.params.value("inputs", "uniform");
    auto made = std::make_shared<CaseInputs>();
    made->case_name = c.name;
    made->a = reference::matmul_inputs(rng, s.m, s.k, inputs, reference::MatmulOperand::a);
    made->b = reference::matmul_inputs(rng, s.k, s.n, inputs, reference::MatmulOperand::b);
    if (!large(s)) made->check = reference::matmul_check(made->a, made->b, s.m, s.n, s.k);
    if (c.timing) timing_inputs_ = made;
    return made;
  }

  std::shared_ptr<const CaseInputs> timing_inputs_;
  std::unique_ptr<Operands> calibration_ops_;
  labs::MatmulLaunch naive_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<MatmulDriver>(); }

}  // namespace gpulab
