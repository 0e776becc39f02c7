// Lab matmul's CPU reference: the double-precision check and its error bound, the CPU matmuls, the inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "gpulab/compare.hpp"
#include "gpulab/random.hpp"
#include "matmul_reference.hpp"

using namespace gpulab;

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
  const std::vector<float> a{1, 1, 1, 1}, b{1, 1, 1, 1};  // 1x4 times 4x1
  const std::vector<float> a2{2, 2, 2, 2};
  const double small = reference::matmul_check(std::vector<float>{1}, std::vector<float>{1}, 1, 1, 1).bound[0];
  const double four = reference::matmul_check(a, b, 1, 1, 4).bound[0];
  const double doubled = reference::matmul_check(a2, b, 1, 1, 4).bound[0];
  CHECK(four > small);
  CHECK(doubled == doctest::Approx(2 * four).epsilon(1e-6));
  CHECK(reference::matmul_check(a, b, 1, 1, 4).expected[0] == 4.0);
}

#include <algorithm>

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

TEST_CASE(
    "on no-cancel inputs the matmul bound passes float kernels in any order and fails half or bfloat16 inputs, "
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
    for (Kernel imprecise : {Kernel::half_inputs, Kernel::bfloat16_inputs, Kernel::half_sums, Kernel::dropped_term}) {
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
  CHECK(reference::matmul_error_factor(4 * 4096) ==
        doctest::Approx(2 * reference::matmul_error_factor(4096)).epsilon(1e-3));
}

TEST_CASE(
    "no-cancel matmul inputs are positive and below 1 and share their low mantissa bits, and unknown kinds are named") {
  Rng rng(11);
  const auto x = reference::matmul_inputs(rng, 1000, "no-cancel");
  CHECK(std::all_of(x.begin(), x.end(), [&](float v) {
    return v >= 0.5f && v < 1.0f && (std::bit_cast<std::uint32_t>(v) & 0xFFFFu) == reference::kNoCancelLowBits;
  }));
  CHECK(std::set<float>(x.begin(), x.end()).size() > 100);
  const auto y = reference::matmul_inputs(rng, 1000, "uniform");
  CHECK(std::any_of(y.begin(), y.end(), [](float v) { return v < 0; }));
  CHECK_THROWS_WITH(reference::matmul_inputs(rng, 1, "gaussian"),
                    doctest::Contains("use \"uniform\", \"no-cancel\" or \"scaled\""));
}

TEST_CASE("scaled matmul inputs scale each row of A and each column of B by its own power of two") {
  Rng rng(12);
  const std::size_t rows = 200, cols = 300;
  const auto a = reference::matmul_inputs(rng, rows, cols, "scaled", reference::MatmulOperand::a);
  const auto b = reference::matmul_inputs(rng, rows, cols, "scaled", reference::MatmulOperand::b);
  const float top = std::ldexp(1.0f, reference::kScaledExponent);
  auto exponent_range = [](float lo, float hi) { return std::ilogb(hi) - std::ilogb(lo); };
  int spread_a = 0, spread_b = 0;
  float largest = 0, smallest = top;
  for (std::size_t i = 0; i < rows; ++i) {  // a row of A: one scale, values below it
    float row_max = 0;
    for (std::size_t j = 0; j < cols; ++j) row_max = std::max(row_max, std::fabs(a[i * cols + j]));
    largest = std::max(largest, row_max);
    smallest = std::min(smallest, row_max);
    for (std::size_t j = 0; j < cols; ++j) CHECK(std::fabs(a[i * cols + j]) <= row_max);
    CHECK(row_max <= top);
  }
  spread_a = exponent_range(smallest, largest);
  largest = 0, smallest = top;
  for (std::size_t j = 0; j < cols; ++j) {
    float col_max = 0;
    for (std::size_t i = 0; i < rows; ++i) col_max = std::max(col_max, std::fabs(b[i * cols + j]));
    largest = std::max(largest, col_max);
    smallest = std::min(smallest, col_max);
  }
  spread_b = exponent_range(smallest, largest);
  CHECK(spread_a > 40);  // far beyond [-1, 1) both ways
  CHECK(spread_b > 40);
  CHECK(std::any_of(a.begin(), a.end(), [](float v) { return std::fabs(v) > 1e6f; }));
  CHECK(std::any_of(a.begin(), a.end(), [](float v) { return v != 0 && std::fabs(v) < 1e-6f; }));
  CHECK_THROWS(reference::matmul_inputs(rng, 10, "scaled"));
}
