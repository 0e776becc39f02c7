#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "gpulab/random.hpp"

using namespace gpulab;

TEST_CASE("the same seed gives the same sequence") {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    CHECK(x == b.next());
    differs |= x != c.next();
  }
  CHECK(differs);
}

TEST_CASE("case seeds depend on the run seed, the lab, the task and the case, and on nothing else") {
  const auto s = derive_seed(7, "08-smooth", "naive", "37x53");
  CHECK(s == derive_seed(7, "08-smooth", "naive", "37x53"));
  CHECK(s != derive_seed(8, "08-smooth", "naive", "37x53"));
  CHECK(s != derive_seed(7, "07-saxpy", "naive", "37x53"));
  CHECK(s != derive_seed(7, "08-smooth", "optimized", "37x53"));
  CHECK(s != derive_seed(7, "08-smooth", "naive", "53x37"));
  // Field boundaries matter: ("ab", "c") and ("a", "bc") are different cases.
  CHECK(derive_seed(1, "ab", "c", "x") != derive_seed(1, "a", "bc", "x"));
}

TEST_CASE("uniform floats stay between lo, included, and hi, excluded, and cover the range") {
  Rng r(1);
  float lo = 1, hi = -1;
  for (int i = 0; i < 100000; ++i) {
    const float x = r.uniform(-1.0f, 1.0f);
    REQUIRE(x >= -1.0f);
    REQUIRE(x < 1.0f);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  CHECK(lo < -0.99f);
  CHECK(hi > 0.99f);
}

TEST_CASE("integers include both ends of their range") {
  Rng r(3);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(r.integer(-2, 2));
  CHECK(seen == std::set<std::int64_t>{-2, -1, 0, 1, 2});
}

TEST_CASE("fresh seeds are short enough to type and differ between calls") {
  const auto a = fresh_seed(), b = fresh_seed();
  CHECK(a < 1000000000ULL);
  CHECK(a != b);
}

TEST_CASE("a stream drawn on every core holds the numbers of one pass and leaves the generator where the pass would") {
  const std::size_t count = 100003;  // not a multiple of any core count
  Rng one_pass(42);
  std::vector<float> expected(count);
  for (float& x : expected) x = one_pass.uniform(-1.0f, 1.0f);
  Rng parallel(42);
  std::vector<float> got(count);
  draw_each(parallel, std::span(got), [](Rng& r) { return r.uniform(-1.0f, 1.0f); });
  CHECK(got == expected);
  CHECK(parallel.next() == one_pass.next());
  CHECK(Rng(7).skipped(3).next() == [] {
    Rng r(7);
    r.next();
    r.next();
    r.next();
    return r.next();
  }());
}
