// Lab streams' CPU reference and the exactness its inputs are drawn for.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpulab/random.hpp"
#include "streams_reference.hpp"

using namespace gpulab;

TEST_CASE("the streams reference computes a * x + b + key for every element and refuses an output of another length") {
  const std::vector<float> in{0.0f, 1.0f, -2.5f, 4096.0f, -0.125f};
  std::vector<float> out(in.size());
  reference::scale_shift(in, -1.5f, 0.25f, 2.0f, out);
  CHECK(out == std::vector<float>{2.25f, 0.75f, 6.0f, -6141.75f, 2.4375f});
  std::vector<float> shorter(in.size() - 1);
  CHECK_THROWS(reference::scale_shift(in, 1.0f, 0.0f, 0.0f, shorter));
}

TEST_CASE("over the ranges the streams driver draws from, a fused multiply-add and a multiply then an add agree") {
  // The extremes of every range, then random draws: a device that fuses and one that does not must
  // produce the reference's bits, or the exact comparison would fail correct kernels.
  const float x_low = std::ldexp(1.0f, reference::kInputLog2Min),
              x_high = std::nextafter(std::ldexp(1.0f, reference::kInputLog2Max), 0.0f),
              shift_max = reference::kEighthsMax / 8.0f;
  std::vector<float> xs{x_low, -x_low, x_high, -x_high, std::nextafter(x_low, 1.0f)};
  std::vector<float> as{std::ldexp(1.0f, reference::kScaleLog2Min), -std::ldexp(1.0f, reference::kScaleLog2Max)};
  std::vector<float> shifts{shift_max, -shift_max, 0.125f, -0.125f, 0.0f};
  Rng rng(20261124);
  for (int i = 0; i < 300; ++i) {
    xs.push_back(reference::draw_input(rng));
    as.push_back(reference::draw_scale(rng));
    shifts.push_back(reference::draw_eighths(rng));
  }
  int disagreements = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (const float a : as)
      for (std::size_t k = 0; k < 8; ++k) {
        const float x = xs[i], b = shifts[(i + k) % shifts.size()], key = shifts[(3 * i + 7 * k + 1) % shifts.size()];
        const volatile float product = a * x;  // rounded to float on its own: no fusing
        const volatile float separate_sum = product + b;
        const float separate = separate_sum + key, fused = std::fma(a, x, b) + key;
        disagreements += separate != fused || reference::scale_shift(x, a, b, key) != fused;
      }
  CHECK(disagreements == 0);
}

TEST_CASE("the streams inputs have full significands: inputs read in 16 bits, rounded or truncated, are wrong") {
  Rng rng(7);
  int truncated_wrong = 0, rounded_wrong = 0, full = 0;
  const int count = 10000;
  for (int i = 0; i < count; ++i) {
    const float x = reference::draw_input(rng), a = reference::draw_scale(rng), b = reference::draw_eighths(rng),
                key = reference::draw_eighths(rng);
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    full += (bits & 0xFFu) != 0;
    const float truncated = std::bit_cast<float>(bits & 0xFFFFFF00u),
                rounded = std::bit_cast<float>((bits + 0x80u) & 0xFFFFFF00u);
    const float right = reference::scale_shift(x, a, b, key);
    truncated_wrong += reference::scale_shift(truncated, a, b, key) != right;
    rounded_wrong += reference::scale_shift(rounded, a, b, key) != right;
    CHECK(std::fabs(x) >= std::ldexp(1.0f, reference::kInputLog2Min));
    CHECK(std::fabs(x) < std::ldexp(1.0f, reference::kInputLog2Max));
    CHECK(std::fabs(a * x) >= std::ldexp(1.0f, reference::kInputLog2Min + reference::kScaleLog2Min));
  }
  CHECK(full > count * 9 / 10);
  CHECK(truncated_wrong > count / 4);
  CHECK(rounded_wrong > count / 4);
}
