#include "filter_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
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
// kernels (noise in every channel, alpha included; flat colour; a checkerboard; one bright pixel).
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
    } else if (source == "dot") {
      std::fill(image.pixels.begin(), image.pixels.end(), Rgba{0, 0, 0, 255});
      image.at(static_cast<int>(rng.integer(0, width - 1)), static_cast<int>(rng.integer(0, height - 1))) = {255, 255,
                                                                                                             255, 255};
    } else {
      throw std::invalid_argument(
          fmt::format("case '{}': unknown image '{}' (a .png file in common/images, noise, "
                      "constant, checkerboard, dot)",
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
  // The reference on some rows only (large images); empty: reference::reference_rows of `reference`.
  std::function<Image(const Image&, const std::vector<int>&)> on_rows = {};
};

Filter filter_of(const std::string& function, const Case& c) {
  if (function == "median3" || function == "median5") {
    const int radius = function == "median3" ? 1 : 2;
    return {fmt::format("median {}", radius), radius,
            [radius](const Image& in) { return reference::median_filter(in, radius); }, 1,
            [radius](const Image& in, const std::vector<int>& rows) {
              return reference::median_filter_rows(in, radius, rows);
            }};
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

// Where the wrong pixels are tells what is wrong: only near the edges is a clamping mistake.
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

Image mirrored(const Image& image, int set) {
  if (set % 4 == 0) return image;
  Image out(image.width, image.height);
  const auto w = static_cast<std::size_t>(image.width);
  auto mirror_rows = [&](std::size_t first, std::size_t last) {
    for (std::size_t y = first; y < last; ++y) mirrored_row(image, set, static_cast<int>(y), &out.pixels[y * w]);
  };
  if (image.pixels.size() < (std::size_t{1} << 20))
    mirror_rows(0, static_cast<std::size_t>(image.height));
  else
    parallel_ranges(static_cast<std::size_t>(image.height), mirror_rows);  // the 16-Mpixel timing images
  return out;
}

// Images above this many pixels (the 4096 x 4096 timing cases) get their reference on sampled rows
// only: 2 x kSampledRowPairs random rows and the rows within the filter's reach of the top and
// bottom edges, every pixel of each (so the left and right edges too). A full reference of a 16
// Mpixel image costs 1-3 s of the host per filter, more than the timed launches themselves; every
// pixel of every smaller case is still compared. The rows come from the run seed: a kernel cannot
// know which of its rows are looked at.
constexpr std::size_t kSampleRowsAbove = std::size_t{1} << 22;
constexpr int kSampledRowPairs = 48;

// Mirror `mirror` (as in `mirrored`) of a reference, read a row at a time: a large image's input
// sets need no mirrored copies of its reference, whose known rows map onto known rows.
struct MirroredReference {
  const Image* image;
  int mirror = 0;
};

// Row y of `reference` with its channels permuted by `channels`, into `row` (width pixels).
void reference_row(const MirroredReference& reference, const WordTransform& channels, int y, Rgba* row) {
  mirrored_row(*reference.image, reference.mirror, y, row);
  channels.apply(row, static_cast<std::size_t>(reference.image->width) * sizeof(Rgba));
}

// A large image's output compared on the known `rows` of `reference` (its channels permuted by
// `channels`) only: those rows are read from the device, and the report gives the pixels' own
// coordinates in the whole image.
Comparison compare_known_rows(Buffer& out, const MirroredReference& reference, const WordTransform& channels,
                              const std::vector<int>& rows, int reach) {
  const int width = reference.image->width, height = reference.image->height;
  const auto w = static_cast<std::size_t>(width);
  Image got(width, static_cast<int>(rows.size())), want(width, static_cast<int>(rows.size()));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out.download_range(&got.pixels[r * w], static_cast<std::size_t>(rows[r]) * w * sizeof(Rgba), w * sizeof(Rgba));
    reference_row(reference, channels, rows[r], &want.pixels[r * w]);
  }
  Comparison cmp = compare_exact<Rgba>(want.pixels, got.pixels, w);
  if (cmp.ok()) return cmp;
  cmp.note = reference::edge_hint(want, got, reach, height, rows);
  cmp.note += fmt::format("{}(this large image is compared on {} sampled rows, edges included)",
                          cmp.note.empty() ? "" : "; ", rows.size());
  for (Mismatch& m : cmp.first) m.index = static_cast<std::size_t>(rows[m.index / w]) * w + m.index % w;
  for (std::size_t& row : cmp.wrong_rows) row = static_cast<std::size_t>(rows[row]);
  cmp.rows = static_cast<std::size_t>(height);
  return cmp;
}

// Whether `kRowsPerLaunch` of the known rows, picked at random, hold the reference (its channels
// permuted by `channels`) in `out`.
constexpr int kRowsPerLaunch = 16;
bool rows_match(Buffer& out, const MirroredReference& reference, const WordTransform& channels,
                const std::vector<int>& rows, Rng& picks) {
  const auto w = static_cast<std::size_t>(reference.image->width);
  const std::size_t row_bytes = w * sizeof(Rgba);
  std::vector<Rgba> got(w), want(w);
  for (int k = 0; k < kRowsPerLaunch; ++k) {
    const int y = rows[static_cast<std::size_t>(picks.integer(0, static_cast<std::int64_t>(rows.size()) - 1))];
    out.download_range(got.data(), static_cast<std::size_t>(y) * row_bytes, row_bytes);
    reference_row(reference, channels, y, want.data());
    if (got != want) return false;
  }
  return true;
}

// What a case's image is made from. Timing cases with the same key (on a GPU every one is 4096 x
// 4096 noise) share one image, drawn once per run, and its mirrored copies.
std::string image_key(const Case& c) {
  return fmt::format("{} {}x{}, salt and pepper {}", c.params.value("image", "noise"), c.params.value("width", 0),
                     c.params.value("height", 0), c.params.value("salt_pepper", 0.0));
}

// The contents of a case for one filter: the input of each input set and its expected output.
struct CaseImages {
  std::string image_key, filter_key;
  std::shared_ptr<const std::vector<Image>> inputs;  // shared by every filter of a timing case
  std::vector<Image> expected;                       // of each input set; of set 0 only when `rows` is not empty
  std::vector<int> rows;  // the rows of `expected` that hold the reference (sampled); empty: all of them
  // What input set i's output must be.
  MirroredReference expected_of_set(int i) const {
    return rows.empty() ? MirroredReference{&expected[static_cast<std::size_t>(i)], 0}
                        : MirroredReference{&expected[0], i};
  }
};

// One task's run of one case. Its input sets live in distinct buffers, holding mirrored copies of
// the case's image; the runner moves contents between sets during timing (load), so no buffer
// repeats its data, and each load also permutes the four channels at random (every filter works
// per channel, so the expected output is permuted the same way): 72 contents, so a cache of results
// rarely hits. The contents stay on the device untouched; a load writes them, permuted, into the
// set's buffer there.
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
        known_rows_(images_->rows),
        permutations_(derive_seed(ctx.run_seed, ctx.manifest.id, "channels " + task.name, c.name)),
        row_picks_(derive_seed(ctx.run_seed, ctx.manifest.id, "checked rows " + task.name, c.name)) {
    upload_input_sets();
    launch_ = labs::bind_filter(ctx.device, task.function);
    radius_ = static_cast<int>(c.params.value("radius", 0));
    if (known_rows_.empty()) got_ = Image(input_.width, input_.height);
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
    if (known_rows_.empty()) {
      l.exact_outputs = [this](int i) {
        return std::vector<ExactOutput>{
            {sets_[i].out.get(), expected_of_contents(i).image->pixels.data(), sets_[i].channels}};
      };
    } else {
      l.quick_check = [this](int i) { return quick_check(i); };
    }
    l.watched = [this](int i) {
      return std::vector<Watched>{
          {sets_[i].in.get(), "in", sizeof(Rgba), contents_[sets_[i].holds].input->pixels.data(), sets_[i].channels},
          {sets_[i].temp.get(), "temp", sizeof(Rgba)},
          {sets_[i].out.get(), "out", sizeof(Rgba)}};
    };
    l.work = 2.0 * filter_.passes * static_cast<double>(bytes_);
    l.least_bytes = 2.0 * static_cast<double>(bytes_);  // a fused filter reads and writes the image once
    return l;
  }

  // Pictures of the cases the manifest marks, and of every wrong one a student can open.
  // (Not of a large image compared on sampled rows: `got_` holds none of its output.)
  void add_pictures(CaseResult& result) const {
    const bool wanted = known_rows_.empty() && (case_.params.value("picture", false) ||
                                                (!result.passed && input_.pixels.size() <= (1u << 22)));
    if (!wanted || ctx_.pictures_dir.empty()) return;
    try {
      const Image input = input_of(last_checked_);
      result.pictures =
          write_case_pictures(ctx_.pictures_dir / task_.name, case_.name, &input, got_, expected_of(last_checked_));
      if (!result.passed) result.details += fmt::format("\nsee the difference: {}", result.pictures.back());
    } catch (const std::exception& e) {  // a full disk must not cost the student the case
      result.details += fmt::format("\n(no pictures for this case: {})", e.what());
    }
  }

 private:
  struct Contents {
    const Image* input;
    MirroredReference expected;
    std::unique_ptr<Buffer> pristine;
  };
  struct Set {
    std::unique_ptr<Buffer> in, temp, out;
    int holds = 0;
    WordTransform channels;  // `in` holds contents[holds].input with its channels permuted so
  };

  void upload_input_sets() {
    const int count_of_sets = input_sets(case_);
    contents_.resize(count_of_sets);
    sets_.resize(count_of_sets);
    Device& device = ctx_.device;
    for (int i = 0; i < count_of_sets; ++i) {
      contents_[i] = {&(*images_->inputs)[i], images_->expected_of_set(i), device.allocate(bytes_)};
      contents_[i].pristine->upload(contents_[i].input->pixels.data(), bytes_);
      sets_[i] = {
          device.allocate_guarded(bytes_), device.allocate_guarded(bytes_), device.allocate_guarded(bytes_), i, {}};
      device.copy(*contents_[i].pristine, *sets_[i].in, bytes_);
    }
  }

  void load(int i, int what) {
    WordTransform channels;
    for (int k = 3; k > 0; --k) std::swap(channels.byte_order[k], channels.byte_order[permutations_.integer(0, k)]);
    sets_[i].holds = what;
    sets_[i].channels = channels;
    ctx_.device.copy_transformed(*contents_[what].pristine, *sets_[i].in, channels);
  }

  Comparison check(int i) {
    last_checked_ = i;
    if (!known_rows_.empty())
      return compare_known_rows(*sets_[i].out, expected_of_contents(i), sets_[i].channels, known_rows_, filter_.reach);
    sets_[i].out->download(got_.pixels.data(), bytes_);
    const Image reference = expected_of(i);
    Comparison cmp = compare_exact<Rgba>(reference.pixels, got_.pixels, static_cast<std::size_t>(input_.width));
    if (!cmp.ok()) cmp.note = reference::edge_hint(reference, got_, filter_.reach, input_.height);
    return cmp;
  }

  // Warm-up and timed launches of a large image: a few of the known rows, picked afresh for each launch.
  Comparison quick_check(int i) {
    if (rows_match(*sets_[i].out, expected_of_contents(i), sets_[i].channels, known_rows_, row_picks_))
      return Comparison{};
    return check(i);  // the full report
  }

  // The reference of the contents set i holds, before the load's permutation.
  const MirroredReference& expected_of_contents(int i) const { return contents_[sets_[i].holds].expected; }
  // What set i's input and output must be now: its contents with the load's permutation.
  Image input_of(int i) const { return transformed(*contents_[sets_[i].holds].input, sets_[i].channels); }
  // (A whole image: not for a large image compared on sampled rows, whose reference has only those.)
  Image expected_of(int i) const { return transformed(*expected_of_contents(i).image, sets_[i].channels); }

  const RunContext& ctx_;
  const Task& task_;
  const Case& case_;
  const Filter& filter_;
  const std::shared_ptr<const CaseImages> images_;
  const Image& input_;  // of set 0; every set's has its size
  const std::size_t bytes_;
  const std::vector<int>& known_rows_;
  std::vector<Contents> contents_;
  std::vector<Set> sets_;
  labs::FilterLaunch launch_;
  int radius_ = 0;
  Image got_;             // the output of a whole-image check (a large image's check reads only its known rows)
  int last_checked_ = 0;  // the set whose output `got_` holds, for the pictures
  Rng permutations_, row_picks_;
};

class FilterDriver final : public LabDriver {
 public:
  std::string rate_work() const override { return "the image's bytes read and written once per pass"; }
  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    const Filter filter = filter_of(task.function, c);
    FilterCaseRun run(ctx, task, c, filter, images_for(ctx, task, c, filter));
    CaseResult result = execute(ctx, c, run.launchable());
    run.add_pictures(result);
    return result;
  }

 private:
  // A timing image is drawn once per run, not per task or case (image_key), and each reference is
  // computed once for the tasks that share it (box and box-tiled): the timed launches get new
  // contents each (mirrors, channel permutations), and the first launch of every task is checked.
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
    const Image& input = (*made->inputs)[0];
    if (input.pixels.size() > kSampleRowsAbove) {
      Rng rng(derive_seed(ctx.run_seed, ctx.manifest.id, "reference rows " + filter.key, c.name));
      made->rows = reference::sampled_rows(rng, input.height, filter.reach, kSampledRowPairs);
    }
    Image expected = made->rows.empty() ? filter.reference(input)
                     : filter.on_rows   ? filter.on_rows(input, made->rows)
                                        : reference::reference_rows(filter.reference, input, filter.reach, made->rows);
    if (made->rows.empty())
      for (int i = 0; i < input_sets(c); ++i) made->expected.push_back(mirrored(expected, i));
    else
      made->expected.push_back(std::move(expected));  // the other sets' rows are read mirrored (MirroredReference)
    if (c.timing) timing_images_ = made;
    return made;
  }

  std::shared_ptr<const CaseImages> timing_images_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<FilterDriver>(); }

}  // namespace gpulab
