// Lab nbody's CPU reference: the double-precision accelerations, the float error bound and the
// check built on them, the sample of bodies, the inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "gpulab/random.hpp"
#include "nbody_reference.hpp"

using namespace gpulab;

namespace {

// What a student's float kernel computes, with the mistakes and the freedoms the tests need:
// `dropped` leaves out the term of that body in every sum, `ulps` moves every reciprocal square
// root that many ulps up (a fast rsqrt's error, all in one direction: the worst case for a sum);
// `only`, when not empty, lists the bodies computed (the others are left 0); `bits`, when not 0,
// rounds every reciprocal square root to that many significant bits (a cheap approximation).
struct FloatKernel {
  float softening2 = 0.01f;
  long dropped = -1;
  int ulps = 0;
  std::vector<std::size_t> only = {};
  int bits = 0;

  std::vector<float> run(const std::vector<float>& b) const {
    const std::size_t n = b.size() / 4;
    std::vector<float> accel(b.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (!only.empty() && std::find(only.begin(), only.end(), i) == only.end()) continue;
      float a[3] = {0, 0, 0};
      for (std::size_t j = 0; j < n; ++j) {
        if (static_cast<long>(j) == dropped) continue;
        const float d[3] = {b[4 * j] - b[4 * i], b[4 * j + 1] - b[4 * i + 1], b[4 * j + 2] - b[4 * i + 2]};
        float inv = 1.0f / std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + softening2);
        for (int u = 0; u < ulps; ++u) inv = std::nextafter(inv, 2 * inv);
        if (bits > 0) {
          int exponent = 0;
          const float mantissa = std::frexp(inv, &exponent);
          inv = std::ldexp(std::nearbyint(std::ldexp(mantissa, bits)), exponent - bits);
        }
        const float s = b[4 * j + 3] * inv * inv * inv;
        for (int c = 0; c < 3; ++c) a[c] += d[c] * s;
      }
      std::copy(a, a + 3, &accel[4 * i]);
    }
    return accel;
  }
};

std::vector<float> bodies(const char* distribution, std::size_t n, std::uint64_t seed = 3) {
  Rng rng(seed);
  return reference::nbody_inputs(rng, n, distribution);
}

std::vector<std::size_t> every_body(std::size_t n) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  return all;
}

}  // namespace

TEST_CASE("two bodies pull each other along the line between them with the softened inverse square") {
  const std::vector<float> b{0, 0, 0, 1, 3, 4, 0, 0.5f};  // 5 apart; body 1 has mass 0.5
  const float softening2 = 0.25f;
  const double denominator = std::pow(25.0 + 0.25, 1.5);
  const auto first = reference::nbody_expected(b, 0, softening2), second = reference::nbody_expected(b, 1, softening2);
  CHECK(first.accel[0] == doctest::Approx(0.5 * 3 / denominator).epsilon(1e-12));
  CHECK(first.accel[1] == doctest::Approx(0.5 * 4 / denominator).epsilon(1e-12));
  CHECK(first.accel[2] == 0.0);
  CHECK(second.accel[0] == doctest::Approx(-1.0 * 3 / denominator).epsilon(1e-12));
  CHECK(second.accel[1] == doctest::Approx(-1.0 * 4 / denominator).epsilon(1e-12));
}

TEST_CASE("a body's own term is zero: a lone body has no acceleration, and its float kernel passes") {
  const std::vector<float> b{0.3f, -0.7f, 0.1f, 0.8f};
  const auto e = reference::nbody_expected(b, 0, 1e-4f);
  for (int c = 0; c < 3; ++c) CHECK(e.accel[c] == 0.0);
  const auto accel = FloatKernel{1e-4f}.run(b);
  CHECK(reference::nbody_check(b, 1e-4f, accel, every_body(1)).ok());
}

TEST_CASE("the CPU float versions pass the check on cube and Plummer bodies, with either softening") {
  for (const char* distribution : {"cube", "plummer"})
    for (float softening2 : {0.01f, 1e-4f}) {
      CAPTURE(distribution);
      CAPTURE(softening2);
      const auto b = bodies(distribution, 700);
      std::vector<float> one(b.size()), all(b.size());
      reference::nbody_one_core(b, one, softening2);
      reference::nbody_all_cores(b, all, softening2);
      CHECK(reference::nbody_check(b, softening2, one, every_body(700)).ok());
      CHECK(reference::nbody_check(b, softening2, all, every_body(700)).ok());
    }
}

TEST_CASE(
    "a reciprocal square root 4 ulps off in every term, all in one direction, still passes, even for few bodies") {
  // Few bodies: the sum's own rounding allows little, so the terms' allowance (kTermError) decides.
  for (const char* distribution : {"cube", "plummer"})
    for (std::size_t n : {2, 3, 5, 500}) {
      CAPTURE(distribution);
      CAPTURE(n);
      const auto b = bodies(distribution, n);
      CHECK(reference::nbody_check(b, 0.01f, FloatKernel{0.01f, -1, 4}.run(b), every_body(n)).ok());
    }
}

TEST_CASE("a float sum over 2^18 bodies, as in the GPU timing case, passes at sampled bodies") {
  const std::size_t n = std::size_t{1} << 18;
  Rng rng(4);
  const auto b = bodies("cube", n);
  const auto sample = reference::nbody_sample(rng, n, 12);
  CHECK(reference::nbody_check(b, 0.01f, FloatKernel{0.01f, -1, 4, sample}.run(b), sample).ok());
}

TEST_CASE("leaving one body's term out of every sum fails the check in almost every body") {
  for (const char* distribution : {"cube", "plummer"}) {
    CAPTURE(distribution);
    const std::size_t n = 1000;
    const auto b = bodies(distribution, n);
    const auto cmp =
        reference::nbody_check(b, 0.01f, FloatKernel{0.01f, static_cast<long>(n - 1)}.run(b), every_body(n));
    CHECK_FALSE(cmp.ok());
    CHECK(cmp.wrong_rows.size() >= n * 95 / 100);
  }
}

TEST_CASE("a reciprocal square root of 11 significant bits fails the check, from few bodies to many") {
  for (const char* distribution : {"cube", "plummer"})
    for (std::size_t n : {3, 100, 2000}) {
      CAPTURE(distribution);
      CAPTURE(n);
      const auto b = bodies(distribution, n);
      FloatKernel coarse;
      coarse.bits = 11;
      CHECK_FALSE(reference::nbody_check(b, 0.01f, coarse.run(b), every_body(n)).ok());
    }
}

TEST_CASE("a wrong softening fails the check: doubled, or epsilon given where epsilon squared belongs") {
  for (const char* distribution : {"cube", "plummer"}) {
    CAPTURE(distribution);
    const auto b = bodies(distribution, 300);
    const float softening2 = 1e-4f;
    for (float wrong : {2 * softening2, std::sqrt(softening2), softening2 * softening2}) {
      CAPTURE(wrong);
      const auto cmp = reference::nbody_check(b, softening2, FloatKernel{wrong}.run(b), every_body(300));
      CHECK_FALSE(cmp.ok());
      CHECK(cmp.wrong_rows.size() >= 30);
    }
  }
}

TEST_CASE("an unwritten or infinite word, or a w that is not 0, fails the check even in a body not sampled") {
  const auto b = bodies("cube", 64);
  auto accel = FloatKernel{}.run(b);
  const std::vector<std::size_t> sample{0, 1, 2};
  REQUIRE(reference::nbody_check(b, 0.01f, accel, sample).ok());
  auto poisoned = accel;
  std::memset(&poisoned[4 * 40 + 1], 0xFF, sizeof(float));
  const auto untouched = reference::nbody_check(b, 0.01f, poisoned, sample);
  CHECK(untouched.wrong == 1);
  CHECK(untouched.untouched == 1);
  CHECK(untouched.wrong_rows == std::vector<std::size_t>{40});
  auto infinite = accel;
  infinite[4 * 50] = std::numeric_limits<float>::infinity();
  CHECK(reference::nbody_check(b, 0.01f, infinite, sample).wrong == 1);
  auto w = accel;
  w[4 * 60 + 3] = 1.0f;
  const auto nonzero_w = reference::nbody_check(b, 0.01f, w, sample);
  CHECK(nonzero_w.wrong_cols == std::vector<std::size_t>{3});
  // A wrong but finite value is only seen where the sample looks.
  auto off = accel;
  off[4 * 2] *= 1.01f;
  CHECK(reference::nbody_check(b, 0.01f, off, sample).wrong_rows == std::vector<std::size_t>{2});
}

TEST_CASE("the error factor never drops below the terms' own error and grows like the square root of n") {
  const double u = std::ldexp(1.0, -24);
  CHECK(reference::nbody_error_factor(1) >= reference::kTermError * u);
  const double small = reference::nbody_error_factor(10000) - reference::kTermError * u;
  const double large = reference::nbody_error_factor(1000000) - reference::kTermError * u;
  CHECK(large / small == doctest::Approx(10).epsilon(0.01));
}

TEST_CASE("a sample holds distinct bodies in increasing order, the same for the same seed, every body when few") {
  Rng first(11), again(11);
  const auto a = reference::nbody_sample(first, 100000, 1024), b = reference::nbody_sample(again, 100000, 1024);
  CHECK(a == b);
  CHECK(a.size() == 1024);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::set<std::size_t>(a.begin(), a.end()).size() == a.size());
  CHECK(a.back() < 100000);
  Rng few(11);
  CHECK(reference::nbody_sample(few, 50, 1024) == every_body(50));
}

TEST_CASE(
    "nbody inputs: masses from 0.5 to below 1, a cube of side 2, a Plummer sphere with half its bodies near the "
    "centre") {
  const std::size_t n = 20000;
  const auto cube = bodies("cube", n), plummer = bodies("plummer", n);
  std::size_t inner = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto* b : {&cube, &plummer}) {
      CHECK((*b)[4 * i + 3] >= 0.5f);
      CHECK((*b)[4 * i + 3] < 1.0f);
    }
    for (int c = 0; c < 3; ++c) CHECK(std::fabs(cube[4 * i + c]) <= 1.0f);
    const double r = std::hypot(plummer[4 * i], plummer[4 * i + 1], plummer[4 * i + 2]);
    CHECK(r <= 2.0 + 1e-6);
    inner += r < 0.1305;  // the half-mass radius of a Plummer sphere of scale 0.1
  }
  CHECK(inner == doctest::Approx(n / 2.0).epsilon(0.05));
  Rng rng(1);
  CHECK_THROWS_WITH_AS(reference::nbody_inputs(rng, 4, "sphere"), doctest::Contains("cube"), std::invalid_argument);
}
