// Lab nbody's CPU reference: the double-precision accelerations, the float error bound and the
// check built on them, the sample of bodies, the inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "gpulab/parallel.hpp"
#include "gpulab/random.hpp"
#include "nbody_reference.hpp"

using namespace gpulab;

namespace {

// Rounds a normal float x to `bits` significant bits, to nearest (ties away from zero).
float round_to_bits(float x, int bits) {
  const std::uint32_t drop = 24 - bits, word = std::bit_cast<std::uint32_t>(x);
  return std::bit_cast<float>((word + (1u << (drop - 1))) & ~((1u << drop) - 1));
}

// The reciprocal square roots of the tests: a float one, and cheap approximations beyond the lab's
// allowance (2 ulps).
float float_rsqrt(float x) { return 1.0f / std::sqrt(x); }
float bit_trick_rsqrt(float x) {  // 0x5f3759df and one Newton step: about 11.5 bits, always low
  const float y = std::bit_cast<float>(0x5f3759dfu - (std::bit_cast<std::uint32_t>(x) >> 1));
  return y * (1.5f - 0.5f * x * y * y);
}
float half_rsqrt(float x) {  // CUDA's hrsqrt: argument and result in half precision (11 bits)
  return round_to_bits(static_cast<float>(1.0 / std::sqrt(static_cast<double>(round_to_bits(x, 11)))), 11);
}
float rsqrt_12_bits(float x) { return round_to_bits(float_rsqrt(x), 12); }

// What a student's float kernel computes, with the mistakes and the freedoms the tests need:
// `dropped` leaves out the term of that body in every sum, `ulps` moves every reciprocal square
// root that many ulps up (a fast rsqrt's error, all in one direction: the worst case for a sum);
// `only`, when not empty, lists the bodies computed (the others are left 0); `bits`, when not 0,
// rounds every reciprocal square root to that many significant bits (a cheap approximation);
// `rsqrt` computes it; `reversed` sums from the last body down; `position_bits`, when not 0, rounds
// every coordinate to that many bits (positions in half precision).
struct FloatKernel {
  float softening2 = 0.01f;
  long dropped = -1;
  int ulps = 0;
  std::vector<std::size_t> only = {};
  int bits = 0;
  float (*rsqrt)(float) = float_rsqrt;
  bool reversed = false;
  int position_bits = 0;
  float cutoff2 = 0;         // when not 0, pairs whose squared distance exceeds it are left out
  bool by_own_mass = false;  // the force m_i m_j / d^3, then divided by m_i

  std::vector<float> run(const std::vector<float>& exact) const {
    const std::size_t n = exact.size() / 4;
    std::vector<float> accel(exact.size()), b = exact;
    for (std::size_t word = 0; word < b.size() && position_bits; ++word)
      if (word % 4 != 3) b[word] = round_to_bits(b[word], position_bits);
    auto body = [&](std::size_t i) {
      float a[3] = {0, 0, 0};
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t j = reversed ? n - 1 - k : k;
        if (static_cast<long>(j) == dropped) continue;
        float d[3];
        for (int c = 0; c < 3; ++c) d[c] = b[4 * j + c] - b[4 * i + c];
        const float d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        if (cutoff2 > 0 && d2 > cutoff2) continue;
        float inv = rsqrt(d2 + softening2);
        for (int u = 0; u < ulps; ++u) inv = std::nextafter(inv, 2 * inv);
        if (bits > 0) inv = round_to_bits(inv, bits);
        const float s =
            by_own_mass ? b[4 * i + 3] * b[4 * j + 3] * inv * inv * inv / b[4 * i + 3] : b[4 * j + 3] * inv * inv * inv;
        for (int c = 0; c < 3; ++c) a[c] += d[c] * s;
      }
      std::copy(a, a + 3, &accel[4 * i]);
    };
    if (only.empty())
      for (std::size_t i = 0; i < n; ++i) body(i);
    else
      gpulab::parallel_for(only.size(), [&](std::size_t s) { body(only[s]); });
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

TEST_CASE("wide bodies: the float versions pass, and leaving out pairs beyond a cutoff fails, up to 1,000 apart") {
  for (float softening2 : {0.01f, 1e-4f})
    for (std::size_t n : {200, 700}) {
      CAPTURE(softening2);
      CAPTURE(n);
      const auto b = bodies("wide", n);
      std::vector<float> one(b.size());
      reference::nbody_one_core(b, one, softening2);
      CHECK(reference::nbody_check(b, softening2, one, every_body(n)).ok());
      CHECK(reference::nbody_check(b, softening2, FloatKernel{softening2, -1, 4}.run(b), every_body(n)).ok());
      for (float cutoff : {4.0f, 16.0f, 100.0f, 1000.0f}) {
        CAPTURE(cutoff);
        FloatKernel near{softening2};
        near.cutoff2 = cutoff * cutoff;
        const auto cmp = reference::nbody_check(b, softening2, near.run(b), every_body(n));
        CHECK_FALSE(cmp.ok());
        if (cutoff == 4.0f) CHECK(cmp.wrong_rows.size() >= n / 2);  // the cube's bodies too
      }
    }
}

TEST_CASE("every distribution has bodies of mass 0, and a force divided by the body's own mass fails there") {
  for (const char* distribution : {"cube", "plummer", "wide", "signed"}) {
    CAPTURE(distribution);
    const std::size_t n = 300;
    const auto b = bodies(distribution, n);
    std::size_t massless = 0;
    for (std::size_t i = 0; i < n; ++i) massless += b[4 * i + 3] == 0.0f;
    CHECK(massless >= n / 32);
    CHECK(massless <= n / 8);
    FloatKernel force;
    force.by_own_mass = true;
    const auto cmp = reference::nbody_check(b, 0.01f, force.run(b), every_body(n));
    CHECK_FALSE(cmp.ok());
    CHECK(cmp.wrong_rows.size() >= massless);
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

// 2^18 bodies, as in the GPU timing case, at a quick check's sample with 8 bodies at random (26 in
// all: each float kernel and the reference take a second or so on 2 cores).
std::vector<std::size_t> sampled(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  return reference::nbody_sample(rng, n, 8, false);
}

TEST_CASE("at 2^18 bodies float kernels pass: a float rsqrt, one 2 ulps high, OpenCL's 1 / sqrt, the sum reversed") {
  const std::size_t n = std::size_t{1} << 18;
  for (const char* distribution : {"cube", "signed"}) {
    CAPTURE(distribution);
    const auto b = bodies(distribution, n);
    const auto sample = sampled(n, 4);
    FloatKernel plain{0.01f, -1, 0, sample}, high = plain, reversed = plain, division = plain;
    high.ulps = 2;
    reversed.reversed = true;
    division.rsqrt = [](float x) {  // a square root 2 ulps high, as OpenCL allows 3, then a division
      return 1.0f / std::bit_cast<float>(std::bit_cast<std::uint32_t>(std::sqrt(x)) + 2);
    };
    for (const auto* kernel : {&plain, &high, &reversed, &division})
      CHECK(reference::nbody_check(b, 0.01f, kernel->run(b), sample).ok());
  }
}

TEST_CASE(
    "at 2^18 bodies of either sign, a 12-bit, a half-precision and a bit-trick rsqrt fail, and so do half positions") {
  const std::size_t n = std::size_t{1} << 18;
  const auto b = bodies("signed", n);
  const auto sample = sampled(n, 5);
  FloatKernel coarse{0.01f, -1, 0, sample};
  using Rsqrt = float (*)(float);
  const std::pair<const char*, Rsqrt> coarse_ones[] = {
      {"12 bits", rsqrt_12_bits}, {"half", half_rsqrt}, {"bit trick and one Newton step", bit_trick_rsqrt}};
  for (const auto& [name, rsqrt] : coarse_ones) {
    CAPTURE(name);
    coarse.rsqrt = rsqrt;
    const auto cmp = reference::nbody_check(b, 0.01f, coarse.run(b), sample);
    CHECK_FALSE(cmp.ok());
  }
  FloatKernel half_positions{0.01f, -1, 0, sample};
  half_positions.position_bits = 11;
  CHECK_FALSE(reference::nbody_check(b, 0.01f, half_positions.run(b), sample).ok());
}

TEST_CASE("at 2^18 bodies in a cube, the bit-trick rsqrt fails: its error is always low, so it scales the pull") {
  const std::size_t n = std::size_t{1} << 18;
  const auto b = bodies("cube", n);
  const auto sample = sampled(n, 6);
  FloatKernel trick{0.01f, -1, 0, sample};
  trick.rsqrt = bit_trick_rsqrt;
  const auto cmp = reference::nbody_check(b, 0.01f, trick.run(b), sample);
  CHECK(cmp.wrong_rows.size() >= sample.size() / 2);
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

TEST_CASE("a reciprocal square root of 12 significant bits fails the check, from few bodies to many") {
  for (const char* distribution : {"cube", "plummer", "signed"})
    for (std::size_t n : {3, 100, 2000}) {
      CAPTURE(distribution);
      CAPTURE(n);
      const auto b = bodies(distribution, n);
      FloatKernel coarse;
      coarse.bits = 12;
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

TEST_CASE("the bound: the terms' allowance and Higham's worst case when few, a random walk of partial sums when many") {
  const double u = std::ldexp(1.0, -24);
  // One term: no rounding in the sum, the term's own allowance and underflow.
  reference::TermSums one{0.5, 0.5, 0.25, 0.5};
  CHECK(reference::nbody_bound(one, 1) <= (reference::kTermError + 2) * u * 0.5);
  // n terms of +-1 that cancel (a = 0): the sum's part, sqrt(n) times sqrt(sum t^2), grows like n
  // and outgrows the terms' (like sqrt(n)); Higham's worst case would grow like n^2.
  auto random_walk = [](double n) { return reference::TermSums{0, n, n, 0}; };
  const auto small = static_cast<std::size_t>(1) << 14, large = static_cast<std::size_t>(1) << 20;
  const double ratio =
      reference::nbody_bound(random_walk(large), large) / reference::nbody_bound(random_walk(small), small);
  CHECK(ratio > 40);
  CHECK(ratio < 64.5);
  // Never more than the worst cases: kTermError u sum |t| for the terms, gamma_n sum |t| for the sum.
  for (const std::size_t n : {2, 10, 1000}) {
    const reference::TermSums same_sign{static_cast<double>(n), static_cast<double>(n), static_cast<double>(n),
                                        static_cast<double>(n)};
    const double nu = static_cast<double>(n) * u;
    CHECK(reference::nbody_bound(same_sign, n) <=
          (reference::kTermError * u + nu / (1 - nu) + nu * u) * n * (1 + 1e-12) + n * 1.2e-38);
  }
}

TEST_CASE("a sample holds distinct bodies in increasing order, the same for the same seed, every body when few") {
  Rng first(11), again(11);
  const auto a = reference::nbody_sample(first, 100000, 1024, false),
             b = reference::nbody_sample(again, 100000, 1024, false);
  CHECK(a == b);
  CHECK(a.size() >= 1024);
  CHECK(a.size() <= 1024 + reference::kQuickBoundaries + 2);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::set<std::size_t>(a.begin(), a.end()).size() == a.size());
  CHECK(a.back() == 99999);
  CHECK(a.front() == 0);
  Rng few(11);
  CHECK(reference::nbody_sample(few, 50, 1024, true) == every_body(50));
}

TEST_CASE("a full sample holds the first and last body of every tile of 256 and the first of each last partial tile") {
  const std::size_t n = 262143;  // 1,023 full tiles of 256 and one of 255; partial tiles of 32 to 1,024
  Rng rng(12);
  const auto sample = reference::nbody_sample(rng, n, 1024, true);
  const std::set<std::size_t> in(sample.begin(), sample.end());
  for (std::size_t first = 0; first < n; first += 256) {
    CHECK(in.count(first) == 1);
    CHECK(in.count(std::min(n, first + 256) - 1) == 1);
  }
  for (std::size_t tile = 32; tile <= 1024; tile *= 2) CHECK(in.count(n / tile * tile) == 1);
  CHECK(sample.size() == 2 * 1024 + 3 + 1024);  // + 262,016, 262,080, 262,112: partial tiles of 128, 64, 32
}

TEST_CASE(
    "nbody inputs: masses from 0.5 to below 1 or one in 16 of them 0, a cube of side 2, a Plummer sphere with half its "
    "bodies near the centre, a wide cloud with a quarter of them 4 to 4096 out, signed masses half of them negative") {
  const std::size_t n = 20000;
  const auto cube = bodies("cube", n), plummer = bodies("plummer", n), wide = bodies("wide", n);
  std::size_t inner = 0, massless = 0, far = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto* b : {&cube, &plummer, &wide}) {
      const float m = (*b)[4 * i + 3];
      massless += m == 0.0f;
      CHECK((m == 0.0f || m >= 0.5f));
      CHECK(m < 1.0f);
    }
    for (int c = 0; c < 3; ++c) CHECK(std::fabs(cube[4 * i + c]) <= 1.0f);
    const double r = std::hypot(plummer[4 * i], plummer[4 * i + 1], plummer[4 * i + 2]);
    CHECK(r <= 2.0 + 1e-6);
    inner += r < 0.1305;  // the half-mass radius of a Plummer sphere of scale 0.1
    const double out = std::hypot(wide[4 * i], wide[4 * i + 1], wide[4 * i + 2]);
    if (out > std::sqrt(3.0) + 1e-6) {
      CHECK(out >= 4.0 * (1 - 1e-6));
      CHECK(out <= 4096.0 * (1 + 1e-6));
      ++far;
    }
  }
  CHECK(inner == doctest::Approx(n / 2.0).epsilon(0.05));
  CHECK(massless == doctest::Approx(3 * n / 16.0).epsilon(0.1));
  CHECK(far == doctest::Approx(n / 4.0).epsilon(0.05));
  const auto charged = bodies("signed", n);
  std::size_t negative = 0, charged_massless = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float m = charged[4 * i + 3];
    charged_massless += m == 0.0f;
    CHECK((m == 0.0f || std::fabs(m) >= 0.5f));
    CHECK(std::fabs(m) < 1.0f);
    negative += m < 0;
  }
  CHECK(charged_massless == doctest::Approx(n / 16.0).epsilon(0.1));
  CHECK(negative == doctest::Approx(n * 15 / 32.0).epsilon(0.05));
  Rng rng(1);
  CHECK_THROWS_WITH_AS(reference::nbody_inputs(rng, 4, "sphere"), doctest::Contains("signed"), std::invalid_argument);
}
