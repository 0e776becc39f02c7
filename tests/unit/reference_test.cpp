#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "gpulab/compare.hpp"
#include "gpulab/random.hpp"
#include "gpulab/reference.hpp"

using namespace gpulab;

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
