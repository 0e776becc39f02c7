// The large-case matmul check (reference::matmul_check_large): projections and exact elements in
// O(mn + mk + kn) instead of the full O(mnk) reference. A correct float product must pass it, and
// the faults a kernel makes must fail it.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "gpulab/compare.hpp"
#include "gpulab/random.hpp"
#include "matmul_reference.hpp"

using namespace gpulab;

namespace {

struct Product {
  std::size_t m, n, k;
  std::vector<float> a, b, c;
};

std::vector<float> random_floats(Rng& rng, std::size_t count) {
  std::vector<float> out(count);
  for (float& x : out) x = rng.uniform(-1, 1);
  return out;
}

// C = A B in float as a GPU kernel computes it: one float sum per element, fused multiply-adds in
// tiles of 32 along k, each tile summed apart and then added (as register-blocked kernels do).
std::vector<float> float_product(const std::vector<float>& a, const std::vector<float>& b, std::size_t m, std::size_t n,
                                 std::size_t k) {
  std::vector<float> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float sum = 0;
      for (std::size_t p0 = 0; p0 < k; p0 += 32) {
        float tile = 0;
        for (std::size_t p = p0; p < std::min(k, p0 + 32); ++p) tile = std::fma(a[i * k + p], b[p * n + j], tile);
        sum += tile;
      }
      c[i * n + j] = sum;
    }
  return c;
}

Product make_product(std::size_t m, std::size_t n, std::size_t k, std::uint64_t seed) {
  Rng rng(seed);
  Product p{m, n, k, random_floats(rng, m * k), random_floats(rng, k * n), {}};
  p.c = float_product(p.a, p.b, m, n, k);
  return p;
}

Comparison check(const Product& p, const std::vector<float>& c, std::uint64_t seed = 1) {
  Rng rng(seed);
  return reference::matmul_check_large(p.a, p.b, c, p.m, p.n, p.k, rng);
}

bool names_row(const Comparison& cmp, std::size_t row) {
  return std::binary_search(cmp.wrong_rows.begin(), cmp.wrong_rows.end(), row);
}

std::vector<float> transposed(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) out[j * rows + i] = x[i * cols + j];
  return out;
}

}  // namespace

TEST_CASE("a correct float product passes the large-case matmul check, whatever vectors and grid it draws") {
  const Product p = make_product(300, 280, 310, 7);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const Comparison cmp = check(p, p.c, seed);
    CHECK(cmp.ok());
    CHECK(cmp.wrong_rows.empty());
    CHECK(cmp.wrong_cols.empty());
    CHECK(cmp.total >= reference::kMatmulGridSide * reference::kMatmulGridSide);
  }
}

TEST_CASE(
    "a product whose every element is off by 0.9 of its error bound, in any pattern of signs, passes the large-case "
    "check") {
  const Product p = make_product(300, 280, 310, 8);
  const auto full = reference::matmul_check(p.a, p.b, p.m, p.n, p.k);
  Rng signs(3);
  for (const int pattern : {0, 1, 2}) {  // all up; alternating by column; random
    CAPTURE(pattern);
    std::vector<float> c(p.c.size());
    for (std::size_t e = 0; e < c.size(); ++e) {
      const double sign = pattern == 0 ? 1 : pattern == 1 ? ((e % p.n) % 2 ? -1 : 1) : (signs.next() & 1 ? 1 : -1);
      c[e] = static_cast<float>(full.expected[e] + 0.9 * sign * full.bound[e]);
    }
    REQUIRE(compare_within(full.expected, full.bound, c).ok());  // the full check passes it too
    CHECK(check(p, c).ok());
  }
}

TEST_CASE("one element of C off by a clearly wrong amount fails the large-case check, which names its row and column") {
  const Product p = make_product(300, 280, 310, 9);
  for (const auto& [i, j] : {std::pair<std::size_t, std::size_t>{0, 0}, {123, 45}, {299, 279}}) {
    CAPTURE(i);
    CAPTURE(j);
    std::vector<float> c = p.c;
    c[i * p.n + j] += 1.0f;  // the elements are about 6 in size, their bounds below 0.001
    const Comparison cmp = check(p, c);
    CHECK_FALSE(cmp.ok());
    CHECK(cmp.wrong == 1);
    REQUIRE(cmp.first.size() == 1);
    CHECK(cmp.first[0].index == i * p.n + j);
    CHECK(cmp.wrong_rows == std::vector<std::size_t>{i});
    CHECK(cmp.wrong_cols == std::vector<std::size_t>{j});
    CHECK(cmp.report().find(std::string("row ") + std::to_string(i)) != std::string::npos);
  }
}

TEST_CASE(
    "a wrong row, a wrong column, swapped rows of A, an all-zero C, a scaled C, unwritten elements and an "
    "infinite element fail the large-case check") {
  const Product p = make_product(300, 280, 310, 10);
  const std::size_t n = p.n;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    std::vector<float> c = p.c;
    std::copy_n(&p.c[18 * n], n, &c[17 * n]);  // row 17 holds row 18
    Comparison cmp = check(p, c, seed);
    CHECK_FALSE(cmp.ok());
    CHECK(names_row(cmp, 17));

    c = p.c;
    for (std::size_t i = 0; i < p.m; ++i) c[i * n + 5] = p.c[i * n + 6];  // column 5 holds column 6
    cmp = check(p, c, seed);
    CHECK_FALSE(cmp.ok());
    CHECK(std::binary_search(cmp.wrong_cols.begin(), cmp.wrong_cols.end(), std::size_t{5}));

    std::vector<float> a = p.a;  // A with rows 3 and 200 swapped
    std::swap_ranges(&a[3 * p.k], &a[4 * p.k], &a[200 * p.k]);
    cmp = check(p, float_product(a, p.b, p.m, p.n, p.k), seed);
    CHECK_FALSE(cmp.ok());
    CHECK((names_row(cmp, 3) && names_row(cmp, 200)));

    CHECK_FALSE(check(p, std::vector<float>(p.c.size(), 0.0f), seed).ok());
    c = p.c;
    for (float& x : c) x *= 1.001f;
    CHECK_FALSE(check(p, c, seed).ok());

    c = p.c;  // the last row never written: the poison pattern, a NaN
    std::fill(&c[(p.m - 1) * n], &c[p.m * n], std::bit_cast<float>(0xFFFFFFFFu));
    cmp = check(p, c, seed);
    CHECK_FALSE(cmp.ok());
    CHECK(cmp.untouched == cmp.wrong);
    CHECK(names_row(cmp, p.m - 1));

    for (const float odd : {INFINITY, -INFINITY, NAN}) {  // one element not finite
      CAPTURE(odd);
      c = p.c;
      c[42 * n + 17] = odd;
      cmp = check(p, c, seed);
      CHECK_FALSE(cmp.ok());
      CHECK(cmp.wrong_rows == std::vector<std::size_t>{42});
    }
  }
}

TEST_CASE("a transposed result and A^T B fail the large-case check of a square product") {
  const Product p = make_product(288, 288, 288, 11);
  CHECK(check(p, p.c).ok());
  CHECK_FALSE(check(p, transposed(p.c, p.m, p.n)).ok());
  CHECK_FALSE(check(p, float_product(transposed(p.a, p.m, p.k), p.b, p.m, p.n, p.k)).ok());
  CHECK_FALSE(check(p, float_product(p.a, transposed(p.b, p.k, p.n), p.m, p.n, p.k)).ok());
}

TEST_CASE("the exact elements at chosen rows and columns are those of the full matmul reference") {
  const Product p = make_product(37, 53, 300, 12);
  const auto full = reference::matmul_check(p.a, p.b, p.m, p.n, p.k);
  const std::vector<std::size_t> rows{0, 5, 36}, cols{52, 1, 7, 7};
  std::vector<std::size_t> every_col(p.n);
  std::iota(every_col.begin(), every_col.end(), std::size_t{0});
  for (const std::vector<std::size_t>& chosen : {cols, every_col}) {
    const auto at = reference::matmul_check_at(p.a, p.b, p.m, p.n, p.k, rows, chosen);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t q = 0; q < chosen.size(); ++q) {
        const std::size_t e = rows[r] * p.n + chosen[q];
        CHECK(at.expected[r * chosen.size() + q] == doctest::Approx(full.expected[e]).epsilon(1e-12));
        CHECK(at.bound[r * chosen.size() + q] == doctest::Approx(full.bound[e]).epsilon(1e-12));
      }
  }
  CHECK_THROWS(reference::matmul_check_at(p.a, p.b, p.m, p.n, p.k, std::vector<std::size_t>{37}, cols));
}

TEST_CASE("a full sample of lines holds every block boundary of 128, all of a last partial block, and more at random") {
  for (const std::size_t size : {4095u, 4096u, 300u}) {
    CAPTURE(size);
    Rng rng(5);
    const auto lines = reference::matmul_sample_lines(rng, size, 64, true);
    const std::set<std::size_t> in(lines.begin(), lines.end());
    CHECK(std::is_sorted(lines.begin(), lines.end()));
    CHECK(in.size() == lines.size());
    for (std::size_t first = 0; first < size; first += 128) {
      CHECK(in.count(first) == 1);
      CHECK(in.count(std::min(size, first + 128) - 1) == 1);
    }
    for (std::size_t i = size / 128 * 128; i < size; ++i) CHECK(in.count(i) == 1);
    std::size_t boundaries = 2 * ((size + 127) / 128) + size % 128;
    for (std::size_t tile = 8; tile <= 256; tile *= 2) CHECK((size % tile == 0 || in.count(size / tile * tile) == 1));
    CHECK(lines.size() >= std::min(size, 64 + boundaries - 2));  // boundaries shared by two counts are
    CHECK(lines.size() <= 64 + boundaries + 6);                  // counted once; 256's tile may add one
  }
  Rng few(5);
  CHECK(reference::matmul_sample_lines(few, 3, 64, true) == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE(
    "a quick sample of lines holds the first, the last and the start of every partial tile, and some boundaries") {
  Rng rng(6);
  const std::size_t size = 4093;  // 4093 % 8 = 5, the last tiles of 8 to 256 are partial
  const auto lines = reference::matmul_sample_lines(rng, size, 16, false);
  const std::set<std::size_t> in(lines.begin(), lines.end());
  for (const std::size_t line : {std::size_t{0}, size - 1}) CHECK(in.count(line) == 1);
  for (std::size_t tile = 8; tile <= 256; tile *= 2) CHECK(in.count(size / tile * tile) == 1);
  CHECK(lines.size() <= 16 + reference::kMatmulQuickBoundaries + 2 + 6);
  CHECK(lines.size() >= 16 + 8);
}

TEST_CASE(
    "one element in the last row and column, off by tens of its bound, fails the large check: no sample misses it") {
  const Product p = make_product(300, 280, 310, 13);
  const auto corner = reference::matmul_check_at(p.a, p.b, p.m, p.n, p.k, std::vector<std::size_t>{p.m - 1},
                                                 std::vector<std::size_t>{p.n - 1});
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    std::vector<float> c = p.c;
    c.back() = static_cast<float>(corner.expected[0] + 30 * corner.bound[0]);  // below any line's tolerance
    const Comparison cmp = check(p, c, seed);
    CHECK_FALSE(cmp.ok());
    CHECK(cmp.wrong == 1);
  }
}
