// Lab streams' CPU reference and the exactness its inputs are drawn for.
#include <doctest/doctest.h>

#include <cmath>
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
  const float x_max = reference::kEighthsMax / 8.0f, a_max = reference::kQuartersMax / 4.0f;
  std::vector<float> xs{x_max, -x_max, 0.125f, -0.125f, x_max - 0.125f};
  std::vector<float> as{a_max, -a_max, 0.25f, -0.25f, a_max - 0.25f};
  Rng rng(20261124);
  for (int i = 0; i < 1000; ++i) {
    xs.push_back(static_cast<float>(rng.integer(-reference::kEighthsMax, reference::kEighthsMax)) / 8.0f);
    as.push_back(static_cast<float>(rng.integer(1, reference::kQuartersMax)) / 4.0f * (i % 2 ? 1.0f : -1.0f));
  }
  int disagreements = 0;
  for (const float x : xs)
    for (const float a : as)
      for (const float b : {x_max, -x_max, 0.125f, xs[static_cast<std::size_t>(std::fabs(a) * 8) % xs.size()]})
        for (const float key : {x_max, -x_max, -0.125f, xs[static_cast<std::size_t>(std::fabs(b) * 8) % xs.size()]}) {
          const volatile float product = a * x;  // rounded to float on its own: no fusing
          const volatile float separate_sum = product + b;
          const float separate = separate_sum + key, fused = std::fma(a, x, b) + key;
          disagreements += separate != fused || reference::scale_shift(x, a, b, key) != fused;
        }
  CHECK(disagreements == 0);
}
