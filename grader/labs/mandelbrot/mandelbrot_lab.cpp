#include "mandelbrot_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "gpulab/image.hpp"
#include "gpulab/parallel.hpp"
#include "lab_driver.hpp"
#include "mandelbrot_reference.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using reference::View;

// A case's window: `center` = [re, im] and `span` (the width of the window in the complex plane),
// square pixels, `max_iter`, and for a Julia set `julia` = [cx, cy]. A random case names only its
// `fractal`: its window is drawn near the boundary of the set, where the counts vary.
View view_of(int width, int height, double center_re, double center_im, double span, int max_iter) {
  const double step = span / width;
  View v;
  v.dx = static_cast<float>(step);
  v.dy = static_cast<float>(-step);  // the top row has the largest imaginary part
  v.x0 = static_cast<float>(center_re - (width - 1) / 2.0 * step);
  v.y0 = static_cast<float>(center_im + (height - 1) / 2.0 * step);
  v.max_iter = max_iter;
  return v;
}

View random_view(const Case& c, int width, int height, Rng& rng) {
  const bool julia = c.params.value("fractal", "mandelbrot") == "julia";
  const int max_iter = static_cast<int>(c.params.value("max_iter", 256));
  View v;
  for (int attempt = 0; attempt < 1000; ++attempt) {  // a centre whose count is neither 1 nor max_iter
    const double span = std::exp(rng.uniform(std::log(0.002f), std::log(3.0f)));
    const double re = rng.uniform(-2.0f, 0.6f), im = rng.uniform(-1.2f, 1.2f);
    v = view_of(width, height, julia ? re + 0.7 : re, im, span, max_iter);
    if (julia) {  // constants near the boundary of the Mandelbrot set give connected, detailed sets
      v.julia = true;
      v.cx = rng.uniform(-0.8f, -0.7f);
      v.cy = rng.uniform(0.1f, 0.3f);
    }
    const std::uint32_t n =
        reference::escape_count(v, reference::Point{static_cast<float>(re), static_cast<float>(im)});
    if (n > 3 && n < static_cast<std::uint32_t>(max_iter)) break;
  }
  return v;
}

View make_view(const Case& c, int width, int height, Rng& rng) {
  const int max_iter = static_cast<int>(case_int(c, "max_iter"));
  if (max_iter < 1) throw std::invalid_argument(fmt::format("case '{}': max_iter must be >= 1", c.name));
  if (!c.params.contains("center")) return random_view(c, width, height, rng);
  const auto& center = c.params.at("center");
  View v = view_of(width, height, center.at(0).get<double>(), center.at(1).get<double>(), c.params.value("span", 3.0),
                   max_iter);
  if (c.params.contains("julia")) {
    v.julia = true;
    v.cx = c.params["julia"].at(0).get<float>();
    v.cy = c.params["julia"].at(1).get<float>();
  }
  return v;
}

// `view` moved by `shift_x`, `shift_y` pixels (fractions too): a new window at the same cost.
View shifted(const View& view, double shift_x, double shift_y) {
  View v = view;
  v.x0 = static_cast<float>(view.x0 + shift_x * view.dx);
  v.y0 = static_cast<float>(view.y0 + shift_y * view.dy);
  return v;
}

// ---- checking ----

// Pixels whose count differs from the exact one although every variant of the arithmetic agrees
// there (a stable pixel) may be at most one in kStableDiffer: a kernel in double precision, or
// with other fused multiply-adds than the reference's variants, moves a few such pixels (0.08% of
// a detailed Julia set at most, in our tests), a wrong kernel moves whole regions.
constexpr std::size_t kStableDiffer = 500;

struct PixelCheck {
  std::size_t index;  // in the whole image
  std::uint32_t expected, got;
  std::string allowed;
};

// The wrong pixels' pattern, in words a student can act on; "" when none is recognised.
std::string hint(const std::vector<PixelCheck>& wrong, std::size_t untouched, int max_iter) {
  if (wrong.empty() || untouched == wrong.size()) return "";  // the report already says none was written
  const auto delta = static_cast<std::int64_t>(wrong[0].got) - static_cast<std::int64_t>(wrong[0].expected);
  const bool same_delta = std::all_of(wrong.begin(), wrong.end(), [&](const PixelCheck& p) {
    return static_cast<std::int64_t>(p.got) - static_cast<std::int64_t>(p.expected) == delta;
  });
  if (same_delta)
    return fmt::format(
        "every wrong pixel is off by {:+}: check where the loop counts (n starts at 0, one step adds 1, the loop "
        "stops at max_iter = {} or when x*x + y*y > 4, tested before the step)",
        delta, max_iter);
  return "check which point a pixel stands for: (x0 + px * dx, y0 + py * dy), px the column, py the row from the "
         "top (dy is negative), and for a Julia set z starts at that point and c is (cx, cy)";
}

// Compares `got` with the exact counts `expected` of the image rows `rows` (all of them when
// empty), allowing the differences of unstable pixels (reference::tolerated_range) and a few stable ones.
Comparison compare_counts(const View& view, int width, int height, const std::vector<std::uint32_t>& expected,
                          const std::vector<std::uint32_t>& got, const std::vector<int>& rows = {}) {
  const auto w = static_cast<std::size_t>(width);
  std::vector<PixelCheck> wrong, stable;
  std::size_t untouched = 0, unstable = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (got[i] == expected[i]) continue;
    const int px = static_cast<int>(i % w), py = rows.empty() ? static_cast<int>(i / w) : rows[i / w];
    const std::size_t index = static_cast<std::size_t>(py) * w + static_cast<std::size_t>(px);
    if (got[i] > static_cast<std::uint32_t>(view.max_iter)) {
      untouched += got[i] == 0xFFFFFFFFu;
      wrong.push_back({index, expected[i], got[i], fmt::format("a count in 0..{}", view.max_iter)});
      continue;
    }
    const reference::CountRange range = reference::tolerated_range(view, px, py);
    if (range.lo != range.hi) {
      ++unstable;  // any count: rounding decides where such an orbit escapes
      continue;
    }
    stable.push_back({index, expected[i], got[i], "no other: every rounding of this pixel gives the expected count"});
  }
  if (stable.size() > expected.size() / kStableDiffer) wrong.insert(wrong.end(), stable.begin(), stable.end());
  Comparison cmp;
  cmp.total = expected.size();
  cmp.cols = w;
  cmp.rows = static_cast<std::size_t>(height);
  cmp.wrong = wrong.size();
  cmp.untouched = untouched;
  if (wrong.empty()) return cmp;
  std::sort(wrong.begin(), wrong.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  std::vector<std::size_t> indices;
  for (const PixelCheck& p : wrong) {
    indices.push_back(p.index);
    if (cmp.first.size() < 8) cmp.first.push_back({p.index, show_value(p.expected), show_value(p.got), p.allowed});
  }
  cmp = detail::finish(std::move(cmp), indices);
  cmp.note = hint(wrong, untouched, view.max_iter);
  if (unstable > 0)
    cmp.note += fmt::format("{}({} unstable pixels whose count depends on rounding were accepted as they are)",
                            cmp.note.empty() ? "" : "; ", unstable);
  if (!rows.empty()) cmp.note += fmt::format("; this large image was compared on {} sampled rows", rows.size());
  return cmp;
}

// ---- pictures ----

// A count as a colour: black inside the set, else a gradient by the logarithm of the count.
Rgba colour(std::uint32_t n, int max_iter) {
  if (n >= static_cast<std::uint32_t>(max_iter)) return {0, 0, 0, 255};
  const double t = std::log1p(n) / std::log1p(max_iter);
  auto channel = [](double v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0, 1.0) * 255.0 + 0.5); };
  return {channel(3 * t - 1.2), channel(1.8 * t - 0.1), channel(0.3 + 1.2 * t), 255};
}

Image coloured(const std::vector<std::uint32_t>& counts, int width, int height, int max_iter) {
  Image image(width, height);
  for (std::size_t i = 0; i < counts.size(); ++i) image.pixels[i] = colour(counts[i], max_iter);
  return image;
}

// ---- cases ----

// Images above this many pixels (the GPU timing case) have their timed launches checked on
// kCheckedRows random rows of each launch's own window, whose reference is computed then; every
// pixel of the first launch is compared.
constexpr std::size_t kWholeCheckUpTo = std::size_t{1} << 20;
constexpr int kCheckedRows = 8;

// A case's window and its exact counts (the timing case's made once per run, shared by the tasks
// and the calibration).
struct CaseData {
  int width = 0, height = 0;
  View view;
  std::vector<std::uint32_t> expected;
  double iterations = 0;  // the summed counts: the work of one launch
};

CaseData make_data(const Case& c, Rng& rng) {
  CaseData d;
  d.width = static_cast<int>(case_int(c, "width"));
  d.height = static_cast<int>(case_int(c, "height"));
  if (d.width < 1 || d.height < 1)
    throw std::invalid_argument(fmt::format("case '{}': width and height must be >= 1", c.name));
  d.view = make_view(c, d.width, d.height, rng);
  d.expected = reference::escape_counts(d.view, d.width, d.height);
  d.iterations = static_cast<double>(reference::total_iterations(d.expected));
  return d;
}

// One task's run of one case. A timing case's input sets are windows: set 0 the case's own, and
// every load a new one, shifted by a random whole and fractional number of pixels, so no two
// launches compute the same image and a kept result is wrong. The first launch is compared in full;
// a launch of a shifted window on the rows a check draws, computed for that window.
class MandelbrotCaseRun {
 public:
  MandelbrotCaseRun(const RunContext& ctx, const Task& task, const Case& c, std::shared_ptr<const CaseData> data)
      : ctx_(ctx),
        task_(task),
        case_(c),
        data_(std::move(data)),
        pixels_(data_->expected.size()),
        shifts_(derive_seed(ctx.run_seed, ctx.manifest.id, "windows " + task.name, c.name)),
        row_picks_(derive_seed(ctx.run_seed, ctx.manifest.id, "checked rows " + task.name, c.name)),
        launch_(labs::bind_mandelbrot(ctx.device, task.function)) {
    for (int i = 0; i < input_sets(c); ++i) {
      sets_.push_back({ctx.device.allocate_guarded(pixels_ * sizeof(std::uint32_t)), data_->view});
      if (i > 0) load(i, i);
    }
    got_.resize(pixels_);
  }
  MandelbrotCaseRun(const MandelbrotCaseRun&) = delete;  // the launchable's functions hold `this`
  MandelbrotCaseRun& operator=(const MandelbrotCaseRun&) = delete;

  Launchable launchable() {
    Launchable l;
    l.sets = static_cast<int>(sets_.size());
    l.load = [this](int i, int what) { load(i, what); };
    l.prepare = [this](int i) { sets_[i].counts->fill(kPoisonByte); };
    l.launch = [this](int i) { launch_(*sets_[i].counts, data_->width, data_->height, sets_[i].view); };
    l.check = [this](int i) { return check(i); };
    l.quick_check = [this](int i) { return check_rows(i); };
    l.watched = [this](int i) {
      return std::vector<Watched>{{sets_[i].counts.get(), "counts", sizeof(std::uint32_t)}};
    };
    l.work = data_->iterations;
    l.least_bytes = static_cast<double>(pixels_ * sizeof(std::uint32_t));
    return l;
  }

  // Pictures of the cases the manifest marks, and of every wrong small one.
  void add_pictures(CaseResult& result) const {
    const bool wanted = case_.params.value("picture", false) || (!result.passed && pixels_ <= kWholeCheckUpTo);
    if (!wanted || ctx_.pictures_dir.empty() || !whole_checked_) return;
    try {
      const int max_iter = data_->view.max_iter;
      result.pictures = write_case_pictures(ctx_.pictures_dir / task_.name, case_.name, nullptr,
                                            coloured(got_, data_->width, data_->height, max_iter),
                                            coloured(data_->expected, data_->width, data_->height, max_iter));
      if (!result.passed && result.pictures.size() > 2)
        result.details += fmt::format("\nsee the difference: {}", result.pictures.back());
    } catch (const std::exception& e) {  // a full disk must not cost the student the case
      result.details += fmt::format("\n(no pictures for this case: {})", e.what());
    }
  }

 private:
  struct Set {
    std::unique_ptr<Buffer> counts;
    View view;
  };

  void load(int i, int) {
    const double shift_x = shifts_.integer(-8, 8) + shifts_.uniform(0.0f, 1.0f);
    const double shift_y = shifts_.integer(-8, 8) + shifts_.uniform(0.0f, 1.0f);
    sets_[i].view = shifted(data_->view, shift_x, shift_y);
  }

  bool holds_case_view(int i) const {
    const View &a = sets_[i].view, &b = data_->view;
    return a.x0 == b.x0 && a.y0 == b.y0;
  }

  Comparison check(int i) {
    if (!holds_case_view(i)) return check_rows(i);
    sets_[i].counts->download(got_.data(), pixels_ * sizeof(std::uint32_t));
    whole_checked_ = true;
    return compare_counts(data_->view, data_->width, data_->height, data_->expected, got_);
  }

  // A launch of a shifted window: a small image in full, a large one on a few random rows and the
  // first and last; their counts for this window are computed now.
  Comparison check_rows(int i) {
    if (holds_case_view(i)) return check(i);
    const View& view = sets_[i].view;
    std::vector<int> rows;
    if (pixels_ > kWholeCheckUpTo) {
      rows = {0, data_->height - 1};
      for (int k = 0; k < kCheckedRows; ++k) rows.push_back(static_cast<int>(row_picks_.integer(0, data_->height - 1)));
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }
    const auto w = static_cast<std::size_t>(data_->width);
    std::vector<std::uint32_t> got(rows.empty() ? pixels_ : rows.size() * w);
    if (rows.empty()) sets_[i].counts->download(got.data(), pixels_ * sizeof(std::uint32_t));
    for (std::size_t r = 0; r < rows.size(); ++r)
      sets_[i].counts->download_range(&got[r * w], static_cast<std::size_t>(rows[r]) * w * sizeof(std::uint32_t),
                                      w * sizeof(std::uint32_t));
    const auto expected = rows.empty() ? reference::escape_counts(view, data_->width, data_->height)
                                       : reference::escape_counts_rows(view, data_->width, rows);
    return compare_counts(view, data_->width, data_->height, expected, got, rows);
  }

  const RunContext& ctx_;
  const Task& task_;
  const Case& case_;
  const std::shared_ptr<const CaseData> data_;
  const std::size_t pixels_;
  Rng shifts_, row_picks_;
  labs::MandelbrotLaunch launch_;
  std::vector<Set> sets_;
  std::vector<std::uint32_t> got_;  // the output of the case's own window, for the pictures
  bool whole_checked_ = false;
};

class MandelbrotDriver final : public LabDriver {
 public:
  std::string rate_unit() const override { return "Giter/s"; }
  std::string rate_work() const override { return "escape iterations: the counts of every pixel summed"; }

  // The harness's naive kernel on the timing case's window (the naive_speedup bound measures it again
  // between a task's timed launches).
  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    timing_data_ = data_for(ctx, nullptr, timing);
    calibration_buffer_ = ctx.device.allocate(timing_data_->expected.size() * sizeof(std::uint32_t));
    naive_ = labs::harness_naive_mandelbrot(ctx.device);
    cal.work = "escape iterations (the counts of every pixel summed)";
    cal.probes["naive"] = Probe{
        [] {}, [this] { naive_(*calibration_buffer_, timing_data_->width, timing_data_->height, timing_data_->view); },
        timing_data_->iterations};
  }

  void measure_calibration(const RunContext& ctx, const Case&, Calibration& cal) override {
    const CaseData& d = *timing_data_;
    const double ms = median_launch_ms(ctx, cal.probes["naive"]);
    cal.rates["naive"] = d.iterations / (ms * 1e-3) / 1e9;
    // The CPU on every 16th row (at most 64 rows): its rate in iterations per second.
    std::vector<int> rows;
    for (int y = 0; y < d.height && rows.size() < 64; y += std::max(1, d.height / 64)) rows.push_back(y);
    std::uint64_t iterations = 0;
    for (int y : rows)
      for (int x = 0; x < d.width; ++x) iterations += d.expected[static_cast<std::size_t>(y) * d.width + x];
    measure_cpu_rates(
        ctx, cal, static_cast<double>(iterations),
        [&] {
          for (int y : rows)
            for (int x = 0; x < d.width; ++x) reference::escape_count(d.view, x, y);
        },
        [&] { reference::escape_counts_rows(d.view, d.width, rows); });
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    MandelbrotCaseRun run(ctx, task, c, data_for(ctx, &task, c));
    CaseResult result = execute(ctx, c, run.launchable());
    run.add_pictures(result);
    return result;
  }

 private:
  std::shared_ptr<const CaseData> data_for(const RunContext& ctx, const Task* task, const Case& c) {
    return data_.get(c, [&] {
      // (A timing case's stream is the same for every task and the calibration: RunContext::inputs_rng.)
      Rng rng =
          task ? ctx.inputs_rng(*task, c) : Rng(derive_seed(ctx.run_seed, ctx.manifest.id, "timing inputs", c.name));
      return std::make_shared<const CaseData>(make_data(c, rng));
    });
  }

  TimingCaseData<CaseData> data_;
  std::shared_ptr<const CaseData> timing_data_;
  std::unique_ptr<Buffer> calibration_buffer_;
  labs::MandelbrotLaunch naive_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<MandelbrotDriver>(); }

}  // namespace gpulab
