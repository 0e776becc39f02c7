#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>

#include "gpulab/compare.hpp"
#include "gpulab/parallel.hpp"
#include "gpulab/random.hpp"
#include "gpulab/reference.hpp"

using namespace gpulab;

TEST_CASE("the references' thread helpers visit every index or range exactly once, for any count") {
  for (const std::size_t count : {0u, 1u, 2u, 3u, 7u, 1000u}) {
    std::vector<std::atomic<int>> by_index(count), by_range(count);
    parallel_for(count, [&](std::size_t i) { ++by_index[i]; });
    parallel_ranges(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) ++by_range[i];
    });
    CHECK_MESSAGE(std::all_of(by_index.begin(), by_index.end(), [](const auto& n) { return n == 1; }), count);
    CHECK_MESSAGE(std::all_of(by_range.begin(), by_range.end(), [](const auto& n) { return n == 1; }), count);
  }
}

TEST_CASE("the hello reference turns Hello into World") {
  const std::string text = "Hello ";
  const std::vector<int> offsets{15, 10, 6, 0, -11, 1};
  const auto out = reference::hello(std::vector<char>(text.begin(), text.end()), offsets);
  CHECK(std::string(out.begin(), out.end()) == "World!");
}

TEST_CASE("the transpose reference moves element (r, c) to (c, r) for shapes that are not multiples of its tile") {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 1}, {1, 70}, {70, 1}, {37, 53}, {64, 33}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    std::vector<float> in(rows * cols);
    std::iota(in.begin(), in.end(), 0.0f);
    const auto out = reference::transpose(in, rows, cols);
    bool all = true;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) all &= out[c * rows + r] == in[r * cols + c];
    CHECK(all);
  }
  CHECK_THROWS(reference::transpose(std::vector<float>(5), 2, 3));
}

TEST_CASE("the CPU matmuls agree with the double-precision check within its error bound") {
  const std::size_t m = 37, n = 53, k = 300;
  Rng rng(5);
  std::vector<float> a(m * k), b(k * n), one(m * n), all(m * n);
  for (float& x : a) x = rng.uniform(-1, 1);
  for (float& x : b) x = rng.uniform(-1, 1);
  const auto check = reference::matmul_check(a, b, m, n, k);
  reference::matmul_one_core(a, b, one, m, n, k);
  reference::matmul_all_cores(a, b, all, m, n, k);
  CHECK(compare_within(check.expected, check.bound, one, n).ok());
  CHECK(compare_within(check.expected, check.bound, all, n).ok());
  // The bound is tight enough to catch a dropped term: leave out the last product of one element.
  auto broken = one;
  broken[5] -= a[0 * k + (k - 1)] * b[(k - 1) * n + 5];
  CHECK_FALSE(compare_within(check.expected, check.bound, broken, n).ok());
}

TEST_CASE("the matmul error bound grows with k and with the magnitudes of the products") {
  const std::vector<float> a{1, 1, 1, 1}, b{1, 1, 1, 1};            // 1x4 times 4x1
  const std::vector<float> a2{2, 2, 2, 2};
  const double small = reference::matmul_check(std::vector<float>{1}, std::vector<float>{1}, 1, 1, 1).bound[0];
  const double four = reference::matmul_check(a, b, 1, 1, 4).bound[0];
  const double doubled = reference::matmul_check(a2, b, 1, 1, 4).bound[0];
  CHECK(four > small);
  CHECK(doubled == doctest::Approx(2 * four).epsilon(1e-6));
  CHECK(reference::matmul_check(a, b, 1, 1, 4).expected[0] == 4.0);
}

#include <algorithm>

TEST_CASE("the CPU bitonic network and both CPU sorts agree with std::sort for any length") {
  for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 64u, 1000u, 4097u}) {
    CAPTURE(n);
    Rng rng(n + 1);
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = static_cast<std::uint32_t>(rng.integer(0, 50));  // many ties
    auto expected = keys;
    std::sort(expected.begin(), expected.end());
    auto a = keys, b = keys, c = keys;
    reference::bitonic_sort(a);
    reference::sort_one_core(b);
    reference::sort_all_cores(c);
    CHECK(a == expected);
    CHECK(b == expected);
    CHECK(c == expected);
  }
}

namespace {
Image noise_image(int width, int height, std::uint64_t seed) {
  Rng rng(seed);
  Image image(width, height);
  for (Rgba& p : image.pixels) {
    const auto bits = rng.next();
    p = {std::uint8_t(bits), std::uint8_t(bits >> 8), std::uint8_t(bits >> 16), std::uint8_t(bits >> 24)};
  }
  return image;
}
}  // namespace

TEST_CASE("the box reference is the rounded mean of the clamped window, and radius 0 copies the image") {
  const Image noise = noise_image(7, 5, 1);
  CHECK(reference::box_filter(noise, 0).pixels == noise.pixels);
  // A 1 x 1 image: every clamped coordinate reads the one pixel, so the mean is the pixel.
  const Image one = noise_image(1, 1, 2);
  CHECK(reference::box_filter(one, 8).pixels == one.pixels);
  // Corner (0, 0), radius 1, of a 2 x 1 image with red values 0 and 10: the clamped window holds
  // 0 six times and 10 three times: (30 + 4) / 9 = 3.
  Image two(2, 1);
  two.at(0, 0) = {0, 0, 0, 0};
  two.at(1, 0) = {10, 20, 255, 1};
  const Image box = reference::box_filter(two, 1);
  CHECK(box.at(0, 0) == Rgba{3, 7, 85, 0});  // (60 + 4) / 9 = 7, (765 + 4) / 9 = 85, (3 + 4) / 9 = 0
  CHECK(box.at(1, 0) == Rgba{7, 13, 170, 1});
}

TEST_CASE("the gaussian reference spreads one bright pixel into the binomial weights, rounding after each pass") {
  CHECK(reference::binomial_weights(2) == std::vector<std::uint32_t>{1, 4, 6, 4, 1});
  CHECK(reference::binomial_weights(0) == std::vector<std::uint32_t>{1});
  Image dot(9, 9, Rgba{0, 0, 0, 255});
  dot.at(4, 4) = {255, 255, 255, 255};
  const Image h = reference::gaussian_horizontal(dot, 2);
  // Row 4 after the horizontal pass: 255 * (1 4 6 4 1) / 16, rounded half up.
  const std::uint8_t row[5] = {16, 64, 96, 64, 16};  // 15.9, 63.75, 95.6, 63.75, 15.9
  for (int k = 0; k < 5; ++k) CHECK(h.at(2 + k, 4).r == row[k]);
  const Image g = reference::gaussian_filter(dot, 2);
  CHECK(g.at(4, 4).r == (96 * 6 + 8) / 16);  // the centre: the vertical pass of the rounded row
  CHECK(g.at(0, 0).r == 0);
  CHECK(g.at(4, 4).a == 255);  // a constant channel stays constant
  CHECK(reference::gaussian_filter(dot, 0).pixels == dot.pixels);
}

TEST_CASE("the median reference removes an isolated pixel and keeps edges of flat regions") {
  Image image(6, 6, Rgba{10, 20, 30, 40});
  image.at(3, 2) = {255, 0, 255, 0};
  CHECK(reference::median_filter(image, 1).pixels == Image(6, 6, Rgba{10, 20, 30, 40}).pixels);
  // Left half dark, right half bright: a 3 x 3 or 5 x 5 median keeps the step where it is.
  Image step(8, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 8; ++x) step.at(x, y) = x < 4 ? Rgba{0, 0, 0, 0} : Rgba{200, 200, 200, 200};
  CHECK(reference::median_filter(step, 1).pixels == step.pixels);
  CHECK(reference::median_filter(step, 2).pixels == step.pixels);
  CHECK_THROWS(reference::median_filter(step, 3));
}

TEST_CASE("a filter's reference on sampled rows equals its full reference on those rows, edges included") {
  Rng rng(2024);
  Image in(97, 61);
  for (Rgba& p : in.pixels) p = {static_cast<std::uint8_t>(rng.next()), static_cast<std::uint8_t>(rng.next()),
                                 static_cast<std::uint8_t>(rng.next()), static_cast<std::uint8_t>(rng.next())};
  const std::vector<std::pair<int, std::function<Image(const Image&)>>> filters = {
      {3, [](const Image& i) { return reference::box_filter(i, 3); }},
      {8, [](const Image& i) { return reference::box_filter(i, 8); }},
      {2, [](const Image& i) { return reference::gaussian_filter(i, 2); }},
      {7, [](const Image& i) { return reference::gaussian_filter(i, 7); }},
      {1, [](const Image& i) { return reference::median_filter(i, 1); }},
      {2, [](const Image& i) { return reference::median_filter(i, 2); }}};
  for (const auto& [reach, filter] : filters) {
    const std::vector<int> rows = reference::sampled_rows(rng, in.height, reach, 6);
    for (int y = 0; y <= reach; ++y) {  // the edge rows, whose strips clamp
      CHECK(std::binary_search(rows.begin(), rows.end(), y));
      CHECK(std::binary_search(rows.begin(), rows.end(), in.height - 1 - y));
    }
    for (int y : rows) CHECK(std::binary_search(rows.begin(), rows.end(), in.height - 1 - y));  // mirror-closed
    const Image full = filter(in), sampled = reference::reference_rows(filter, in, reach, rows);
    for (int y : rows)
      for (int x = 0; x < in.width; ++x) REQUIRE(sampled.at(x, y) == full.at(x, y));
  }
  for (int radius : {1, 2}) {  // the medians' own row version
    const std::vector<int> rows = reference::sampled_rows(rng, in.height, radius, 6);
    const Image full = reference::median_filter(in, radius), sampled = reference::median_filter_rows(in, radius, rows);
    for (int y : rows)
      for (int x = 0; x < in.width; ++x) REQUIRE(sampled.at(x, y) == full.at(x, y));
  }
}

TEST_CASE("a PNG written by the harness reads back pixel for pixel, and a broken file is named") {
  const auto dir = std::filesystem::temp_directory_path() / "gpulab-png-test";
  const Image noise = noise_image(13, 7, 3);
  write_png(dir / "noise.png", noise);
  const Image back = read_png(dir / "noise.png");
  CHECK(back.width == 13);
  CHECK(back.height == 7);
  CHECK(back.pixels == noise.pixels);
  // The photographs of the lab are RGB: they read as opaque RGBA.
  const Image photo = read_png(std::filesystem::path(GPULAB_IMAGES_DIR) / "chelsea.png");
  CHECK(photo.width == 451);
  CHECK(photo.height == 300);
  CHECK(std::all_of(photo.pixels.begin(), photo.pixels.end(), [](const Rgba& p) { return p.a == 255; }));
  {
    std::ofstream(dir / "broken.png") << "not a png";
  }
  CHECK_THROWS_WITH(read_png(dir / "broken.png"), doctest::Contains("broken.png"));
  CHECK_THROWS_WITH(read_png(dir / "missing.png"), doctest::Contains("missing.png"));
  std::filesystem::remove_all(dir);
}

namespace {

// x rounded to nearest (ties to even) with `bits` significant bits, as a kernel that converts to a
// shorter format would: 11 for half and TF32, 8 for bfloat16. (Range limits do not matter here.)
float round_to_bits(float x, int bits) {
  auto word = std::bit_cast<std::uint32_t>(x);
  const int drop = 24 - bits;
  const std::uint32_t mask = (1u << drop) - 1, half = 1u << (drop - 1), rest = word & mask;
  word &= ~mask;
  if (rest > half || (rest == half && ((word >> drop) & 1))) word += 1u << drop;
  return std::bit_cast<float>(word);
}

enum class Kernel { sequential, fused, tiles_of_32, reversed, half_inputs, bfloat16_inputs, half_sums, dropped_term };

// C = A B on the CPU, computed the way one kind of kernel would.
std::vector<float> matmul_like(Kernel kernel, const std::vector<float>& a, const std::vector<float>& b, std::size_t m,
                               std::size_t n, std::size_t k) {
  std::vector<float> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float sum = 0, tile = 0;
      for (std::size_t q = 0; q < k; ++q) {
        const std::size_t p = kernel == Kernel::reversed ? k - 1 - q : q;
        float x = a[i * k + p], y = b[p * n + j];
        switch (kernel) {
          case Kernel::fused: sum = std::fma(x, y, sum); break;
          case Kernel::tiles_of_32:
            tile += x * y;
            if (p % 32 == 31 || p == k - 1) sum += tile, tile = 0;
            break;
          case Kernel::half_inputs: sum += round_to_bits(x, 11) * round_to_bits(y, 11); break;
          case Kernel::bfloat16_inputs: sum += round_to_bits(x, 8) * round_to_bits(y, 8); break;
          case Kernel::half_sums: sum = round_to_bits(sum + x * y, 11); break;
          case Kernel::dropped_term: sum += p + 1 < k ? x * y : 0.0f; break;
          default: sum += x * y;
        }
      }
      c[i * n + j] = sum;
    }
  return c;
}

}  // namespace

TEST_CASE("on no-cancel inputs the matmul bound passes float kernels in any order and fails half or bfloat16 inputs, "
          "half-precision sums and a dropped term, at every k from 1 to 4099") {
  for (const std::size_t k : {1u, 2u, 17u, 64u, 257u, 1000u, 4099u}) {
    CAPTURE(k);
    const std::size_t m = 6, n = 7;
    Rng rng(k);
    const auto a = reference::matmul_inputs(rng, m * k, "no-cancel");
    const auto b = reference::matmul_inputs(rng, k * n, "no-cancel");
    const auto check = reference::matmul_check(a, b, m, n, k);
    auto passes = [&](Kernel kernel) {
      return compare_within(check.expected, check.bound, matmul_like(kernel, a, b, m, n, k), n).ok();
    };
    for (Kernel correct : {Kernel::sequential, Kernel::fused, Kernel::tiles_of_32, Kernel::reversed}) {
      CAPTURE(static_cast<int>(correct));
      CHECK(passes(correct));
    }
    for (Kernel imprecise :
         {Kernel::half_inputs, Kernel::bfloat16_inputs, Kernel::half_sums, Kernel::dropped_term}) {
      CAPTURE(static_cast<int>(imprecise));
      CHECK_FALSE(passes(imprecise));
    }
  }
}

TEST_CASE("the matmul error factor is the worst-case bound up to k = 100 and grows like sqrt(k) beyond") {
  const double u = std::ldexp(1.0, -24);
  CHECK(reference::matmul_error_factor(1) == doctest::Approx(u / (1 - u)));
  CHECK(reference::matmul_error_factor(50) == doctest::Approx(50 * u / (1 - 50 * u)));
  CHECK(reference::matmul_error_factor(4096) == doctest::Approx(10 * 64 * u).epsilon(1e-3));
  CHECK(reference::matmul_error_factor(4 * 4096) == doctest::Approx(2 * reference::matmul_error_factor(4096)).epsilon(1e-3));
}

TEST_CASE("no-cancel matmul inputs are positive and below 1 and share their low mantissa bits, and unknown kinds are named") {
  Rng rng(11);
  const auto x = reference::matmul_inputs(rng, 1000, "no-cancel");
  CHECK(std::all_of(x.begin(), x.end(), [&](float v) {
    return v >= 0.5f && v < 1.0f && (std::bit_cast<std::uint32_t>(v) & 0xFFFFu) == reference::kNoCancelLowBits;
  }));
  CHECK(std::set<float>(x.begin(), x.end()).size() > 100);
  const auto y = reference::matmul_inputs(rng, 1000, "uniform");
  CHECK(std::any_of(y.begin(), y.end(), [](float v) { return v < 0; }));
  CHECK_THROWS_WITH(reference::matmul_inputs(rng, 1, "gaussian"), doctest::Contains("use \"uniform\" or \"no-cancel\""));
}
