#include "filter_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <map>
#include <stdexcept>
#include <utility>

#include "filter_reference.hpp"
#include "gpulab/image.hpp"
#include "gpulab/parallel.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;

// A case's input: a photograph from common/images/, or a generated picture that trips up wrong
// kernels (noise in every channel, alpha included; flat colour; a checkerboard; one bright pixel),
// or one of the stress images whose statistics break narrow arithmetic (saturated and bright: the
// largest window sums, which overflow 16-bit or packed accumulators at the largest radius; ramp:
// windows already in order, with ties).
Image make_image(const Case& c, Rng& rng) {
  const std::string source = c.params.value("image", "noise");
  Image image;
  if (source.ends_with(".png")) {
    image = read_png(fs::path(GPULAB_IMAGES_DIR) / source);
  } else {
    const auto width = static_cast<int>(case_int(c, "width")), height = static_cast<int>(case_int(c, "height"));
    if (width < 1 || height < 1)
      throw std::invalid_argument(fmt::format("case '{}': width and height must be >= 1", c.name));
    auto random_byte = [&rng] { return static_cast<std::uint8_t>(rng.next() >> 56); };
    image = Image(width, height);
    if (source == "noise") {  // the top 32 bits of one draw per pixel
      draw_each(rng, std::span(image.pixels), [](Rng& r) {
        const std::uint64_t bits = r.next();
        return Rgba{static_cast<std::uint8_t>(bits >> 56), static_cast<std::uint8_t>(bits >> 48),
                    static_cast<std::uint8_t>(bits >> 40), static_cast<std::uint8_t>(bits >> 32)};
      });
    } else if (source == "constant") {
      std::fill(image.pixels.begin(), image.pixels.end(), Rgba{random_byte(), random_byte(), random_byte(), 255});
    } else if (source == "checkerboard") {
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
          const std::uint8_t v = ((x / 8 + y / 8) % 2) ? 255 : 0;
          image.at(x, y) = {v, v, v, 255};
        }
    } else if (source == "saturated") {  // every channel 255: the largest sums a window can have
      std::fill(image.pixels.begin(), image.pixels.end(), Rgba{255, 255, 255, 255});
    } else if (source == "bright") {  // every channel drawn from 224..255: sums near the largest, all different
      draw_each(rng, std::span(image.pixels), [](Rng& r) {
        const std::uint64_t bits = r.next();
        auto channel = [bits](int shift) { return static_cast<std::uint8_t>(224u | ((bits >> shift) & 31u)); };
        return Rgba{channel(59), channel(51), channel(43), channel(35)};
      });
    } else if (source == "ramp") {  // windows already sorted, ascending or descending, with runs of equal values
      const int diagonal = std::max(1, width + height - 2);
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
          const auto v = static_cast<std::uint8_t>((x + y) * 255 / diagonal);
          image.at(x, y) = {v, static_cast<std::uint8_t>(x * 255 / std::max(1, width - 1)),
                            static_cast<std::uint8_t>(255 - y * 255 / std::max(1, height - 1)),
                            static_cast<std::uint8_t>(255 - v)};
        }
    } else if (source == "dot") {
      std::fill(image.pixels.begin(), image.pixels.end(), Rgba{0, 0, 0, 255});
      image.at(static_cast<int>(rng.integer(0, width - 1)), static_cast<int>(rng.integer(0, height - 1))) = {255, 255,
                                                                                                             255, 255};
    } else {
      throw std::invalid_argument(
          fmt::format("case '{}': unknown image '{}' (a .png file in common/images, noise, "
                      "constant, checkerboard, dot, saturated, bright, ramp)",
                      c.name, source));
    }
  }
  // Salt-and-pepper noise: what a median filter removes and a mean only smears.
  if (const double fraction = c.params.value("salt_pepper", 0.0); fraction > 0)
    for (Rgba& p : image.pixels)
      if (rng.uniform(0.0f, 1.0f) < fraction) p = rng.next() & 1 ? Rgba{255, 255, 255, 255} : Rgba{0, 0, 0, 255};
  return image;
}

struct Filter {
  std::string key;  // the reference it computes: "box 3"; tasks with the same key share it
  int reach;        // how far from a pixel the filter reads
  std::function<Image(const Image&)> reference;
  int passes;  // image reads and writes per pixel, for the effective bandwidth: 2 per pass
};

Filter filter_of(const std::string& function, const Case& c) {
  if (function == "median3" || function == "median5") {
    const int radius = function == "median3" ? 1 : 2;
    return {fmt::format("median {}", radius), radius,
            [radius](const Image& in) { return reference::median_filter(in, radius); }, 1};
  }
  const int radius = static_cast<int>(case_int(c, "radius"));
  if (radius < 0 || radius > reference::kMaxFilterRadius)
    throw std::invalid_argument(
        fmt::format("case '{}': radius {} is outside 0..{}", c.name, radius, reference::kMaxFilterRadius));
  if (function == "gaussian")
    return {fmt::format("gaussian {}", radius), radius,
            [radius](const Image& in) { return reference::gaussian_filter(in, radius); }, 2};
  return {fmt::format("box {}", radius), radius,
          [radius](const Image& in) { return reference::box_filter(in, radius); }, 1};
}

// `image` with the bytes of every pixel transformed by `t` (a channel permutation).
Image transformed(Image image, const WordTransform& t) {
  t.apply(image.pixels.data(), image.bytes());
  return image;
}

// Input set `set` of a case: set 0 as generated, then mirrored left-right, top-bottom, both. Every
// filter here is symmetric and clamps at the edges, so the reference of a mirrored image is the
// mirrored reference: different contents in every set, at no extra reference cost.
// Row y of input set `set`'s mirror of `image`, into `row` (width pixels).
void mirrored_row(const Image& image, int set, int y, Rgba* row) {
  const auto w = static_cast<std::size_t>(image.width);
  const int from_y = set % 4 >= 2 ? image.height - 1 - y : y;
  const Rgba* from = &image.pixels[static_cast<std::size_t>(from_y) * w];
  if (set % 2)
    std::reverse_copy(from, from + w, row);
  else
    std::copy_n(from, w, row);
}

// Images of at least this many pixels are mirrored, permuted and compared on every core.
constexpr std::size_t kParallelFrom = std::size_t{1} << 18;

// Calls body(first_row, last_row) over the rows of an image of `pixels` pixels, on every core when large.
template <typename Body>
void over_rows(int height, std::size_t pixels, Body body) {
  if (pixels < kParallelFrom)
    body(std::size_t{0}, static_cast<std::size_t>(height));
  else
    parallel_ranges(static_cast<std::size_t>(height), body);
}

Image mirrored(const Image& image, int set) {
  if (set % 4 == 0) return image;
  Image out(image.width, image.height);
  const auto w = static_cast<std::size_t>(image.width);
  over_rows(image.height, image.pixels.size(), [&](std::size_t first, std::size_t last) {
    for (std::size_t y = first; y < last; ++y) mirrored_row(image, set, static_cast<int>(y), &out.pixels[y * w]);
  });
  return out;
}

// What a case's image is made from. Timing cases with the same key (on a GPU every one is 4096 x
// 4096 noise) share one image, drawn once per run, and its mirrored copies.
std::string image_key(const Case& c) {
  return fmt::format("{} {}x{}, salt and pepper {}", c.params.value("image", "noise"), c.params.value("width", 0),
                     c.params.value("height", 0), c.params.value("salt_pepper", 0.0));
}

// The contents of a case for one filter: the input of each input set and the reference output of
// set 0's; set i's input is mirror i of set 0's (mirrored), and so is its reference.
struct CaseImages {
  std::string image_key, filter_key;
  std::shared_ptr<const std::vector<Image>> inputs;  // shared by every filter of a timing case
  Image expected;                                    // the reference of inputs[0]
};

// One task's run of one case. Its input sets live in distinct buffers, holding mirrored copies of
// the case's image; the runner moves contents between sets during timing (load), so no buffer
// repeats its data, and each load also permutes the four channels at random (every filter works
// per channel, so the expected output is permuted the same way): 72 contents, so a cache of results
// rarely hits. The contents stay on the device untouched; a load writes them, permuted, into the
// set's buffer there. Every launch, timed ones too, is compared with the reference in full: each
// reference costs O(1) or O(r) per pixel on every core, and a comparison of the largest image,
// mirrored and permuted row by row on every core, costs a few milliseconds.
class FilterCaseRun {
 public:
  FilterCaseRun(const RunContext& ctx, const Task& task, const Case& c, const Filter& filter,
                std::shared_ptr<const CaseImages> images)
      : ctx_(ctx),
        task_(task),
        case_(c),
        filter_(filter),
        images_(std::move(images)),
        input_((*images_->inputs)[0]),
        bytes_(input_.bytes()),
        permutations_(ctx.draws("channels", task, c)),
        got_(input_.width, input_.height) {
    upload_input_sets();
    launch_ = labs::bind_filter(ctx.device, task.function);
    radius_ = static_cast<int>(c.params.value("radius", 0));
  }
  FilterCaseRun(const FilterCaseRun&) = delete;  // the launchable's functions hold `this`
  FilterCaseRun& operator=(const FilterCaseRun&) = delete;

  Launchable launchable() {
    Launchable l;
    l.sets = static_cast<int>(sets_.size());
    l.load = [this](int i, int what) { load(i, what); };
    l.prepare = [this](int i) {
      sets_[i].temp->fill(kPoisonByte);
      sets_[i].out->fill(kPoisonByte);
    };
    l.launch = [this](int i) {
      launch_(*sets_[i].in, *sets_[i].temp, *sets_[i].out, input_.width, input_.height, radius_);
    };
    l.check = [this](int i) { return check(i); };
    l.watched = [this](int i) {
      return std::vector<Watched>{
          {sets_[i].in.get(), "in", sizeof(Rgba), contents_[sets_[i].holds]->pixels.data(), sets_[i].channels},
          {sets_[i].temp.get(), "temp", sizeof(Rgba)},
          {sets_[i].out.get(), "out", sizeof(Rgba)}};
    };
    l.host_data = [this](int) {
      return std::vector<HostRegion>{{images_->expected.pixels.data(), bytes_, "the filter's reference output"}};
    };
    l.work = 2.0 * filter_.passes * static_cast<double>(bytes_);
    l.least_bytes = 2.0 * static_cast<double>(bytes_);  // a fused filter reads and writes the image once
    return l;
  }

  // Pictures of the cases the manifest marks, and of every wrong one a student can open (up to 4
  // Mpixels: the pictures of a larger image cost more than its check).
  void add_pictures(CaseResult& result) const {
    const bool wanted =
        case_.params.value("picture", false) || (!result.passed && input_.pixels.size() <= (std::size_t{1} << 22));
    if (!wanted || ctx_.pictures_dir.empty()) return;
    try {
      const Image input = transformed(*contents_[sets_[last_checked_].holds], sets_[last_checked_].channels);
      result.pictures =
          write_case_pictures(ctx_.pictures_dir / task_.name, case_.name, &input, got_, expected_of(last_checked_));
      if (!result.passed) result.details += fmt::format("\nsee the difference: {}", result.pictures.back());
    } catch (const std::exception& e) {  // a full disk must not cost the student the case
      result.details += fmt::format("\n(no pictures for this case: {})", e.what());
    }
  }

 private:
  struct Set {
    std::unique_ptr<Buffer> in, temp, out;
    int holds = 0;           // `in` holds input contents `holds` (mirror `holds` of the image)
    WordTransform channels;  // with its channels permuted so
  };

  void upload_input_sets() {
    const int count_of_sets = input_sets(case_);
    sets_.resize(count_of_sets);
    Device& device = ctx_.device;
    for (int i = 0; i < count_of_sets; ++i) {
      contents_.push_back(&(*images_->inputs)[i]);
      pristine_.push_back(device.allocate(bytes_));
      pristine_.back()->upload(contents_.back()->pixels.data(), bytes_);
      sets_[i] = {
          device.allocate_guarded(bytes_), device.allocate_guarded(bytes_), device.allocate_guarded(bytes_), i, {}};
      device.copy(*pristine_.back(), *sets_[i].in, bytes_);
    }
  }

  void load(int i, int what) {
    WordTransform channels;
    for (int k = 3; k > 0; --k) std::swap(channels.byte_order[k], channels.byte_order[permutations_.integer(0, k)]);
    sets_[i].holds = what;
    sets_[i].channels = channels;
    ctx_.device.copy_transformed(*pristine_[what], *sets_[i].in, channels);
  }

  // Row y of what set i's output must be: the reference mirrored as its contents are, channels permuted.
  void expected_row(int i, int y, Rgba* row) const {
    mirrored_row(images_->expected, sets_[i].holds, y, row);
    sets_[i].channels.apply(row, static_cast<std::size_t>(input_.width) * sizeof(Rgba));
  }

  // The whole output of set i against its reference, row by row on every core; the full report
  // (and where the wrong pixels lie) only when some row differs.
  Comparison check(int i) {
    last_checked_ = i;
    sets_[i].out->download(got_.pixels.data(), bytes_);
    const auto w = static_cast<std::size_t>(input_.width);
    std::atomic<bool> same{true};
    over_rows(input_.height, input_.pixels.size(), [&](std::size_t first, std::size_t last) {
      std::vector<Rgba> want(w);
      for (std::size_t y = first; y < last && same.load(std::memory_order_relaxed); ++y) {
        expected_row(i, static_cast<int>(y), want.data());
        if (!std::equal(want.begin(), want.end(), got_.pixels.begin() + static_cast<std::ptrdiff_t>(y * w)))
          same = false;
      }
    });
    if (same) {
      Comparison cmp;
      cmp.total = input_.pixels.size();
      cmp.cols = w;
      cmp.rows = static_cast<std::size_t>(input_.height);
      return cmp;
    }
    const Image reference = expected_of(i);
    Comparison cmp = compare_exact<Rgba>(reference.pixels, got_.pixels, w);
    cmp.note = reference::edge_hint(reference, got_, filter_.reach);
    return cmp;
  }

  // What set i's output must be now, as a whole image (for reports and pictures).
  Image expected_of(int i) const {
    Image out(input_.width, input_.height);
    const auto w = static_cast<std::size_t>(input_.width);
    over_rows(input_.height, input_.pixels.size(), [&](std::size_t first, std::size_t last) {
      for (std::size_t y = first; y < last; ++y) expected_row(i, static_cast<int>(y), &out.pixels[y * w]);
    });
    return out;
  }

  const RunContext& ctx_;
  const Task& task_;
  const Case& case_;
  const Filter& filter_;
  const std::shared_ptr<const CaseImages> images_;
  const Image& input_;  // of set 0; every set's has its size
  const std::size_t bytes_;
  std::vector<const Image*> contents_;             // input contents k: mirror k of the image
  std::vector<std::unique_ptr<Buffer>> pristine_;  // contents k on the device, untouched
  std::vector<Set> sets_;
  labs::FilterLaunch launch_;
  int radius_ = 0;
  Rng permutations_;
  Image got_;             // the output of the last check
  int last_checked_ = 0;  // the set whose output `got_` holds, for the pictures
};

// The staff kernels (labs::staff_filter) of the tasks whose bound is a staff_fraction, on a noise
// image of the timing case's size. The calibration's "staff" probe runs the design of the task
// being timed (`design`, set before each task's cases run): the tiled box for box-tiled (and the
// calibration's own measurement, on the first timing case: the box's), the 5x5 median for median5.
class StaffKernels {
 public:
  void prepare(const RunContext& ctx, const Case& timing) {
    width_ = static_cast<int>(case_int(timing, "width"));
    height_ = static_cast<int>(case_int(timing, "height"));
    radius_ = static_cast<int>(timing.params.value("radius", 3));
    Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "staff image", timing.name));
    Case noise;
    noise.name = "staff image";
    noise.params = {{"image", "noise"}, {"width", width_}, {"height", height_}};
    const Image image = make_image(noise, rng);
    in_ = ctx.device.allocate(image.bytes());
    out_ = ctx.device.allocate(image.bytes());
    in_->upload(image.pixels.data(), image.bytes());
    for (const char* function : {"box_tiled", "median5"}) {
      kernels_[function] = labs::staff_filter(ctx.device, function);
      self_check(ctx, function, image);
    }
  }
  void set_design(const std::string& function) { design_ = kernels_.contains(function) ? function : "box_tiled"; }
  Probe probe() {
    const double bytes = 4.0 * width_ * height_;
    return Probe{[] {}, [this] { kernels_.at(design_)(*in_, *out_, width_, height_, radius_); }, 2.0 * bytes};
  }

 private:
  // A staff kernel that computed a wrong result would make every bound against it wrong: a fault
  // of the grader, reported as one (an error, never the student's wrong result).
  void self_check(const RunContext& ctx, const std::string& function, const Image& image) {
    out_->fill(kPoisonByte);
    kernels_.at(function)(*in_, *out_, width_, height_, radius_);
    ctx.device.synchronize();
    Image got(width_, height_);
    out_->download(got.pixels.data(), got.bytes());
    const Image want =
        function == "median5" ? reference::median_filter(image, 2) : reference::box_filter(image, radius_);
    if (got.pixels != want.pixels)
      throw std::logic_error(
          fmt::format("the harness's staff kernel {} computed a wrong result on this device: "
                      "a fault of the grader, please report it",
                      function));
  }

  int width_ = 0, height_ = 0, radius_ = 0;
  std::unique_ptr<Buffer> in_, out_;
  std::map<std::string, labs::StaffLaunch> kernels_;
  std::string design_ = "box_tiled";
};

class FilterDriver final : public LabDriver {
 public:
  std::string rate_work() const override { return "the image's bytes read and written once per pass"; }

  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    staff_.prepare(ctx, timing);
    cal.probes["staff"] = staff_.probe();
  }

  // The staff rate of the report's column: the tiled box's (the calibration's timing case is the
  // box's). Each bounded task's ratio divides by its own design's rate, timed beside its launches.
  // A CPU device has no bound, so no column either.
  void measure_calibration(const RunContext& ctx, const Case&, Calibration& cal) override {
    if (ctx.device.info().device_class != DeviceClass::gpu) return;
    staff_.set_design("box_tiled");
    const Probe& probe = cal.probes.at("staff");
    cal.rates["staff"] = probe.work / (median_launch_ms(ctx, probe) * 1e-3) / 1e9;
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    staff_.set_design(task.function);  // the staff probe timed beside this task's launches
    const Filter filter = filter_of(task.function, c);
    FilterCaseRun run(ctx, task, c, filter, images_for(ctx, task, c, filter));
    CaseResult result = execute(ctx, c, run.launchable());
    run.add_pictures(result);
    return result;
  }

 private:
  // A timing image is drawn once per run, not per task or case (image_key), and each reference is
  // computed once for the tasks that share it (box and box-tiled): the timed launches get new
  // contents each (mirrors, channel permutations), and every launch of every task is checked.
  std::shared_ptr<const CaseImages> images_for(const RunContext& ctx, const Task& task, const Case& c,
                                               const Filter& filter) {
    const std::shared_ptr<const CaseImages>& last = timing_images_;
    const std::string key = image_key(c);
    const bool same_image = c.timing && last && last->image_key == key;
    if (same_image && last->filter_key == filter.key) return last;
    auto made = std::make_shared<CaseImages>();
    made->image_key = key;
    made->filter_key = filter.key;
    if (same_image) {
      made->inputs = last->inputs;
    } else {
      Rng rng =
          c.timing ? Rng(derive_seed(ctx.run_seed, ctx.manifest.id, "timing image", key)) : ctx.inputs_rng(task, c);
      const Image input = make_image(c, rng);
      auto inputs = std::make_shared<std::vector<Image>>();
      for (int i = 0; i < input_sets(c); ++i) inputs->push_back(mirrored(input, i));
      made->inputs = std::move(inputs);
    }
    made->expected = filter.reference((*made->inputs)[0]);
    if (c.timing) timing_images_ = made;
    return made;
  }

  std::shared_ptr<const CaseImages> timing_images_;
  StaffKernels staff_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<FilterDriver>(); }

}  // namespace gpulab
