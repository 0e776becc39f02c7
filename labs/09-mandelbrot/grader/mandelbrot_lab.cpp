#include "mandelbrot_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <mutex>
#include <set>
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
// pixels `aspect` times as tall as wide (square for a listed case), `max_iter`, and for a Julia set
// `julia` = [cx, cy]. A random case names only its `fractal`: its window is drawn near the boundary
// of the set, where the counts vary.
View view_of(int width, int height, double center_re, double center_im, double span, int max_iter,
             double aspect = 1.0) {
  const double step = span / width;
  View v;
  v.dx = static_cast<float>(step);
  v.dy = static_cast<float>(-step * aspect);  // the top row has the largest imaginary part
  v.x0 = static_cast<float>(center_re - (width - 1) / 2.0 * step);
  v.y0 = static_cast<float>(center_im + (height - 1) / 2.0 * step * aspect);
  v.max_iter = max_iter;
  return v;
}

// The most iterations a random window's reference may cost, about the timing spiral's (1.9e9 at
// 4096 x 4096): under a second on a 16-core host. A GPU's large cases reach 4096 x 4096 with
// max_iter up to 1000, which a window mostly inside the set would take to 1.7e10.
constexpr double kIterationBudget = 2.2e9;

// The iterations of a window's reference, from a grid of 32 x 32 of its pixels.
double estimated_iterations(const View& v, int width, int height) {
  constexpr int kGrid = 32;
  double sum = 0;
  for (int gy = 0; gy < kGrid; ++gy)
    for (int gx = 0; gx < kGrid; ++gx)
      sum += reference::escape_count(v, (2 * gx + 1) * width / (2 * kGrid), (2 * gy + 1) * height / (2 * kGrid));
  return sum / (kGrid * kGrid) * width * height;
}

// A Julia constant near the boundary of the Mandelbrot set (a connected or dust-like set with detail
// at every scale), anywhere around it: either sign of each part, so a kernel that mirrors c or drops
// a sign is not right by chance.
void draw_julia_constant(Rng& rng, View& v) {
  View mandelbrot;
  mandelbrot.max_iter = 256;
  for (int attempt = 0; attempt < 256; ++attempt) {
    v.cx = rng.uniform(-2.0f, 0.5f);
    v.cy = rng.uniform(-1.2f, 1.2f);
    const std::uint32_t n = reference::escape_count(mandelbrot, reference::Point{v.cx, v.cy});
    if (n >= 12 && n < 256) return;
  }
  v.cx = rng.uniform(-0.8f, -0.7f);
  v.cy = rng.uniform(0.1f, 0.3f);
}

// A window near the boundary of the set (its centre's count neither 1 nor max_iter), `span` wide
// when the case gives one (a stress case's deep zoom), else drawn from 0.002 to 3, with square
// pixels or pixels up to twice as tall or as wide (the contract's dx and dy are independent); within
// kIterationBudget (the cheapest of the windows drawn, if none is).
View random_view(const Case& c, int width, int height, Rng& rng) {
  const bool julia = c.params.value("fractal", "mandelbrot") == "julia";
  const int max_iter = static_cast<int>(c.params.value("max_iter", 256));
  const bool may_exceed = static_cast<double>(width) * height * max_iter > kIterationBudget;
  View best, last;
  double best_cost = INFINITY;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const double span = c.params.contains("span") ? c.params["span"].get<double>()
                                                  : std::exp(rng.uniform(std::log(0.002f), std::log(3.0f)));
    const double re = rng.uniform(-2.0f, 0.6f), im = rng.uniform(-1.2f, 1.2f);
    const double aspect = rng.integer(0, 1) == 0 ? 1.0 : std::exp(rng.uniform(std::log(0.5f), std::log(2.0f)));
    View v = view_of(width, height, julia ? re + 0.7 : re, im, span, max_iter, aspect);
    if (julia) {
      v.julia = true;
      draw_julia_constant(rng, v);
    }
    last = v;
    const std::uint32_t n =
        reference::escape_count(v, reference::Point{static_cast<float>(re), static_cast<float>(im)});
    if (n <= 3 || n >= static_cast<std::uint32_t>(max_iter)) continue;
    const double cost = may_exceed ? estimated_iterations(v, width, height) : 0;
    if (cost < best_cost) best = v, best_cost = cost;
    if (cost <= kIterationBudget) break;
  }
  return best_cost < INFINITY ? best : last;
}

View make_view(const Case& c, int width, int height, Rng& rng) {
  const int max_iter = static_cast<int>(case_int(c, "max_iter"));
  if (max_iter < 1) throw std::invalid_argument(fmt::format("case '{}': max_iter must be >= 1", c.name));
  if (!c.params.contains("center")) return random_view(c, width, height, rng);
  const auto& center = c.params.at("center");
  const double aspect = c.params.value("aspect", 1.0);
  if (!(aspect > 0)) throw std::invalid_argument(fmt::format("case '{}': aspect must be positive", c.name));
  View v = view_of(width, height, center.at(0).get<double>(), center.at(1).get<double>(), c.params.value("span", 3.0),
                   max_iter, aspect);
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

// A pixel passes when its count is one a kernel that follows the contract up to its rounding may
// give there (reference::count_tolerated): the exact count, one within the range of the contract's
// roundings, or the count of a rounding a compiler may choose (fused multiply-adds in either order,
// double precision) from the pixel's point or one float step away. Every such kernel passes on every
// pixel by construction. Other differences (flush-to-zero arithmetic, say) are allowed only where
// rare and scattered: at most one pixel in kUnexplainedPer, and never two in one kBlock x kBlock
// block of the image, so a wrong row, column, tile, tail or stripe fails, whatever its size.
constexpr std::size_t kUnexplainedPer = std::size_t{1} << 16;
constexpr int kBlock = 16;

struct PixelCheck {
  std::size_t index;  // in the whole image
  std::uint32_t expected, got;
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
         "top (dy is negative), and for a Julia set z starts at that point and c is (cx, cy), and compute every "
         "step in float (not half precision, not fewer mantissa bits)";
}

// The pixels of `got` that no rounding of the contract explains, in index order, `limit` at most:
// the search stops there (a wrong kernel differs on most pixels, and each costs up to 336 counts).
std::vector<PixelCheck> unexplained_pixels(const View& view, int width, const std::vector<std::uint32_t>& expected,
                                           const std::vector<std::uint32_t>& got, const std::vector<int>& rows,
                                           std::size_t limit) {
  const auto w = static_cast<std::size_t>(width);
  std::vector<std::size_t> differing;
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (got[i] != expected[i]) differing.push_back(i);
  std::mutex found_lock;
  std::vector<PixelCheck> found;
  std::atomic<bool> enough{false};
  constexpr std::size_t kChunk = 16;  // pixels per work item: neighbours cost alike
  auto check_chunk = [&](std::size_t chunk) {
    for (std::size_t k = chunk * kChunk; k < std::min(differing.size(), (chunk + 1) * kChunk) && !enough; ++k) {
      const std::size_t i = differing[k];
      const int px = static_cast<int>(i % w), py = rows.empty() ? static_cast<int>(i / w) : rows[i / w];
      const bool in_range = got[i] <= static_cast<std::uint32_t>(view.max_iter);
      if (in_range && reference::count_tolerated(view, px, py, got[i])) continue;
      const std::lock_guard lock(found_lock);
      found.push_back({static_cast<std::size_t>(py) * w + static_cast<std::size_t>(px), expected[i], got[i]});
      if (found.size() > limit) enough = true;
    }
  };
  const std::size_t chunks = (differing.size() + kChunk - 1) / kChunk;
  if (differing.size() <= 256)
    for (std::size_t c = 0; c < chunks; ++c) check_chunk(c);
  else
    parallel_for(chunks, check_chunk);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return found;
}

// Whether the unexplained pixels are few and scattered enough to be rounding the grader does not
// model: at most one in kUnexplainedPer pixels of the image, none in range of the poison, no two
// in one kBlock x kBlock block.
bool scattered_enough(const std::vector<PixelCheck>& unexplained, std::size_t pixels, int width, int max_iter) {
  if (unexplained.size() > pixels / kUnexplainedPer) return false;
  std::set<std::size_t> blocks;
  const auto w = static_cast<std::size_t>(width), blocks_per_row = (w + kBlock - 1) / kBlock;
  for (const PixelCheck& p : unexplained) {
    if (p.got > static_cast<std::uint32_t>(max_iter)) return false;
    if (!blocks.insert(p.index / w / kBlock * blocks_per_row + p.index % w / kBlock).second) return false;
  }
  return true;
}

// Compares `got` with the exact counts `expected` of the image rows `rows` (all of them when
// empty), accepting what the contract's roundings explain (see kUnexplainedPer).
Comparison compare_counts(const View& view, int width, int height, const std::vector<std::uint32_t>& expected,
                          const std::vector<std::uint32_t>& got, const std::vector<int>& rows = {}) {
  Comparison cmp;
  cmp.total = expected.size();
  cmp.cols = static_cast<std::size_t>(width);
  cmp.rows = static_cast<std::size_t>(height);
  const std::size_t allowed = expected.size() / kUnexplainedPer, shown = 1024;
  const std::vector<PixelCheck> wrong = unexplained_pixels(view, width, expected, got, rows, std::max(allowed, shown));
  if (scattered_enough(wrong, expected.size(), width, view.max_iter)) return cmp;
  std::vector<std::size_t> indices;
  for (const PixelCheck& p : wrong) {
    indices.push_back(p.index);
    cmp.untouched += p.got == 0xFFFFFFFFu;
    if (cmp.first.size() >= 8) continue;
    const int px = static_cast<int>(p.index % static_cast<std::size_t>(width));
    const int py = static_cast<int>(p.index / static_cast<std::size_t>(width));
    const reference::CountRange range = reference::tolerated_range(view, px, py);
    const std::string allowed_counts =
        p.got > static_cast<std::uint32_t>(view.max_iter) ? fmt::format("a count in 0..{}", view.max_iter)
        : range.lo == range.hi
            ? "no other: every rounding of the contract gives the expected count"
            : fmt::format("{}..{} (the contract's roundings here), or a count one of them gives", range.lo, range.hi);
    cmp.first.push_back({p.index, show_value(p.expected), show_value(p.got), allowed_counts});
  }
  cmp.wrong = wrong.size();
  cmp = detail::finish(std::move(cmp), indices);
  cmp.note = hint(wrong, cmp.untouched, view.max_iter);
  if (wrong.size() > std::max(allowed, shown))
    cmp.note += fmt::format("{}(the check stopped after {} wrong pixels)", cmp.note.empty() ? "" : "; ", wrong.size());
  else if (!wrong.empty() && wrong.size() <= allowed)
    cmp.note += fmt::format(
        "{}({} pixels no rounding of the contract gives: allowed where scattered, at most one "
        "in {} and never two in one {}x{} block, but these are not)",
        cmp.note.empty() ? "" : "; ", wrong.size(), kUnexplainedPer, kBlock, kBlock);
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

// Images above this many pixels (the GPU's large and timing cases) have their warm-up and timed
// launches checked on sampled rows of each launch's own window, whose reference is computed then:
// the first two and last two rows, the rows on both sides of the last 16- and 64-row boundary (the
// tail of a tiled kernel), kBoundaryPairs random pairs of rows either side of a 16-row boundary
// (the designs' block rows) and kCheckedRows random rows, every pixel of each. Every first launch,
// and the one warm-up or timed launch the runner picks, is compared in full (for a shifted window,
// with a full reference of that window: about 2^31 iterations at most, see kIterationBudget).
constexpr std::size_t kWholeCheckUpTo = std::size_t{1} << 20;
constexpr int kCheckedRows = 8, kBoundaryPairs = 8;

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
        shifts_(ctx.draws("windows", task, c)),
        row_picks_(ctx.draws("checked rows", task, c)),
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
    l.arguments = [this](int i) {  // new contents are a new window: the launch's arguments
      const View& v = sets_[i].view;
      return fmt::format("{} {} {} {} {} {} {} {}", v.x0, v.y0, v.dx, v.dy, v.max_iter, v.julia, v.cx, v.cy);
    };
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

  // The whole image: the case's own window against its reference, a shifted one against a
  // reference computed for it now (on every core).
  Comparison check(int i) {
    const View& view = sets_[i].view;
    if (holds_case_view(i)) {
      sets_[i].counts->download(got_.data(), pixels_ * sizeof(std::uint32_t));
      whole_checked_ = true;  // got_ holds the case's own window, for the pictures
      return compare_counts(view, data_->width, data_->height, data_->expected, got_);
    }
    std::vector<std::uint32_t> got(pixels_);
    sets_[i].counts->download(got.data(), pixels_ * sizeof(std::uint32_t));
    return compare_counts(view, data_->width, data_->height,
                          reference::escape_counts(view, data_->width, data_->height), got);
  }

  // The rows a warm-up or timed launch of a large image is checked on (kWholeCheckUpTo).
  std::vector<int> checked_rows() {
    const int h = data_->height;
    std::vector<int> rows{0, 1, h - 2, h - 1};
    for (const int tile : {16, 64})
      if (const int last = (h - 1) / tile * tile; last > 0) rows.insert(rows.end(), {last - 1, last});
    for (int k = 0; k < kBoundaryPairs && h > 16; ++k) {
      const int boundary = 16 * static_cast<int>(row_picks_.integer(1, (h - 1) / 16));
      rows.insert(rows.end(), {boundary - 1, boundary});
    }
    for (int k = 0; k < kCheckedRows; ++k) rows.push_back(static_cast<int>(row_picks_.integer(0, h - 1)));
    std::erase_if(rows, [h](int y) { return y < 0 || y >= h; });
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
  }

  // A warm-up or timed launch: a small image in full, a large one on checked_rows, both against
  // the reference of the launch's own window.
  Comparison check_rows(int i) {
    if (pixels_ <= kWholeCheckUpTo) return check(i);
    const View& view = sets_[i].view;
    const std::vector<int> rows = checked_rows();
    const auto w = static_cast<std::size_t>(data_->width);
    std::vector<std::uint32_t> got(rows.size() * w);
    for (std::size_t r = 0; r < rows.size(); ++r)
      sets_[i].counts->download_range(&got[r * w], static_cast<std::size_t>(rows[r]) * w * sizeof(std::uint32_t),
                                      w * sizeof(std::uint32_t));
    return compare_counts(view, data_->width, data_->height, reference::escape_counts_rows(view, data_->width, rows),
                          got, rows);
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
