// Lab reduction's CPU reference: exact sums from mantissa-bit counts, and the tolerance.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpulab/random.hpp"
#include "reduction_reference.hpp"

using namespace gpulab;

namespace {

// n floats in [1, 2) whose mantissas keep only the bits of `mantissa_bits`.
std::vector<float> binade_values(std::size_t n, std::uint32_t mantissa_bits, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> values(n);
  for (auto& v : values)
    v = std::bit_cast<float>(0x3F800000u | (static_cast<std::uint32_t>(rng.next()) & mantissa_bits));
  return values;
}

std::vector<float> balanced_values(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> values(n);
  for (auto& v : values) v = reference::balanced_element(rng.next());
  return values;
}

// The sum of `values` with every word XORed by `mask`, in long double: exact here (below 2^64 units
// of 2^-23).
long double masked_sum(const std::vector<float>& values, std::uint32_t mask) {
  long double sum = 0;
  for (float v : values) sum += std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) ^ mask);
  return sum;
}

}  // namespace

TEST_CASE("the exact sum from mantissa-bit counts equals the sum of the masked input, for any sign and mantissa mask") {
  // 10007 elements are counted on one thread, 2^20 + 3 in parts on every core.
  for (const std::size_t n : {std::size_t{10007}, (std::size_t{1} << 20) + 3})
    for (const bool balanced : {false, true}) {
      CAPTURE(n);
      CAPTURE(balanced);
      const auto values = balanced ? balanced_values(n, 1) : binade_values(n, 0x007FFFFFu, 1);
      const reference::BinadeCounts counts = reference::count_mantissa_bits(values);
      CHECK(counts.n() == static_cast<std::int64_t>(n));
      CHECK((counts.negative.n > 0) == balanced);
      Rng masks(2);
      for (int i = 0; i < 20; ++i) {
        const std::uint32_t mask = i == 0 ? 0 : static_cast<std::uint32_t>(masks.next()) & reference::kSignAndMantissa;
        CAPTURE(mask);
        const reference::ExactSum exact = reference::exact_sum(counts, mask);
        CHECK(exact.sum == static_cast<double>(masked_sum(values, mask)));
        long double sum_abs = 0, sum_squares = 0;
        for (float v : values) {
          const float x = std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) ^ mask);
          sum_abs += std::fabs(x);
          sum_squares += static_cast<long double>(x) * x;
        }
        CHECK(exact.sum_abs == static_cast<double>(sum_abs));
        CHECK(exact.sum_squares >= static_cast<double>(sum_squares));
      }
    }
}

TEST_CASE("counting rejects magnitudes below 1 or from 2 on, and the exact sum rejects masks that change exponents") {
  CHECK_THROWS_AS(reference::count_mantissa_bits(std::vector<float>{1.5f, 2.0f}), std::invalid_argument);
  CHECK_THROWS_AS(reference::count_mantissa_bits(std::vector<float>{0.75f}), std::invalid_argument);
  CHECK_THROWS_AS(reference::count_mantissa_bits(std::vector<float>{-2.5f}), std::invalid_argument);
  const auto counts = reference::count_mantissa_bits(std::vector<float>{1.0f, -1.25f});
  CHECK(reference::exact_sum(counts).sum == -0.25);
  CHECK_THROWS_AS(reference::exact_sum(counts, 0x00800000u), std::invalid_argument);
}

TEST_CASE("sums of eighths and of ones are exact in any order below 2^24 units, and need no tolerance") {
  const auto eighths = binade_values(1'000'003, 0x00700000u, 3);
  const auto exact = reference::exact_sum(reference::count_mantissa_bits(eighths));
  CHECK(exact.unit_bits == 3);
  CHECK(reference::sum_tolerance(exact, reference::Inputs::any) == 0.0);
  // A float sum in the worst order (ascending) equals it: every partial sum is a float.
  float serial = 0;
  for (float v : eighths) serial += v;
  CHECK(static_cast<double>(serial) == exact.sum);
  const auto ones = reference::exact_sum(reference::count_mantissa_bits(std::vector<float>(65537, 1.0f)));
  CHECK(ones.unit_bits == 0);
  CHECK(ones.sum == 65537.0);
  CHECK(reference::sum_tolerance(ones, reference::Inputs::any) == 0.0);
  // Beyond 2^24 units the order matters again, and the tolerance is not 0.
  reference::BinadeCounts many;
  many.positive.n = std::int64_t{1} << 23;
  many.positive.ones[22] = many.positive.n / 2;  // 2^23 elements of 1 or 1.5: 2^24 * 1.25 units of 1/2
  CHECK(reference::sum_tolerance(reference::exact_sum(many), reference::Inputs::any) > 0.0);
}

TEST_CASE(
    "on fine inputs up to 8191 elements a sum missing one element or counting one twice is outside the tolerance") {
  for (std::size_t n : {31u, 1000u, 4099u, 8191u}) {
    CAPTURE(n);
    const auto values = binade_values(n, 0x007FFFFFu, n);
    const auto exact = reference::exact_sum(reference::count_mantissa_bits(values));
    const double tolerance = reference::sum_tolerance(exact, reference::Inputs::any);
    CHECK(tolerance > 0.0);
    CHECK(tolerance < 1.0);  // every element is at least 1
    // ... and a float sum in the worst order for accuracy (one after the other) is within it.
    float serial = 0;
    for (float v : values) serial += v;
    CHECK(std::fabs(static_cast<double>(serial) - exact.sum) <= tolerance);
  }
}

TEST_CASE("on 2^28 positive inputs a serial float sum, which stops growing near 2^25, is far outside the tolerance") {
  reference::BinadeCounts counts;
  counts.positive.n = std::int64_t{1} << 28;
  counts.positive.ones.fill(counts.positive.n / 2);  // mantissas uniform: a mean of 1.5
  const auto exact = reference::exact_sum(counts);
  const double tolerance = reference::sum_tolerance(exact, reference::Inputs::any);
  CHECK(exact.sum == doctest::Approx(1.5 * std::ldexp(1.0, 28)).epsilon(1e-6));
  // The contract's depth, not n - 1, bounds the roundings: 1.4e-4 of the sum, not 0.9 %.
  CHECK(tolerance < 2e-4 * exact.sum);
  CHECK(std::fabs(std::ldexp(1.0, 25) - exact.sum) > 1000 * tolerance);
}

TEST_CASE(
    "on balanced inputs the tolerance is a fraction of one element up to 2^28 of them, and at the timing sizes "
    "far below what rounding the inputs to 16 mantissa bits costs") {
  for (const int log_n : {16, 22, 28}) {
    for (const double deviations : {1.0, 3.0}) {
      CAPTURE(log_n);
      CAPTURE(deviations);
      // Balanced counts: half the elements negative, mantissas uniform (x^2 averages 2.33), and a sum
      // `deviations` standard deviations from 0 (the tolerance grows with it).
      reference::ExactSum exact;
      exact.n = std::int64_t{1} << log_n;
      exact.sum_abs = 1.5 * static_cast<double>(exact.n);
      exact.sum_squares = 2 * exact.sum_abs;
      exact.sum = deviations * std::sqrt(2.33 * static_cast<double>(exact.n));
      exact.unit_bits = 23;
      const double tolerance = reference::sum_tolerance(exact, reference::Inputs::balanced);
      CHECK(tolerance > 0);
      const double one_element = log_n == 28 ? 1.0 : log_n == 22 ? 0.15 : 0.02;
      CHECK(tolerance < (deviations == 1 ? 1.0 : 2.5) * one_element);
      // Truncating the positive elements to 16 mantissa bits moves the sum by about n / 4 * 128 units of
      // 2^-23, which grows as n, the tolerance as sqrt(n): at the CPU (2^22) and GPU (2^28) timing sizes
      // dozens to a thousand tolerances.
      CHECK(static_cast<double>(exact.n) / 4 * 128 * std::ldexp(1.0, -23) > (log_n >= 22 ? 50 : 5) * tolerance);
    }
  }
}

TEST_CASE("the CPU sums in double agree on one core and on all cores") {
  const auto values = binade_values(3'000'017, 0x007FFFFFu, 5);
  const double one = reference::sum_one_core(values), all = reference::sum_all_cores(values);
  const double exact = reference::exact_sum(reference::count_mantissa_bits(values)).sum;
  CHECK(std::fabs(one - exact) <= 1e-6 * exact);
  CHECK(std::fabs(all - exact) <= 1e-6 * exact);
}

TEST_CASE("lowbit inputs sum exactly in float, and elements rounded to 8 up to U bits, any way, miss the sum") {
  // Rounds a float in [1, 2) to `bits` significant bits: truncated, to nearest with ties away from
  // zero (adding half a unit, as in integer code), or to nearest even.
  enum class Rounding { truncate, half_away, half_even };
  auto rounded = [](float x, int bits, Rounding mode) {
    const std::uint32_t drop = 24 - bits, word = std::bit_cast<std::uint32_t>(x), unit = 1u << drop;
    const std::uint32_t rest = word & (unit - 1), kept = word & ~(unit - 1);
    if (mode == Rounding::truncate) return std::bit_cast<float>(kept);
    const bool up = rest > unit / 2 || (rest == unit / 2 && (mode == Rounding::half_away || (kept & unit)));
    return std::bit_cast<float>(up ? kept + unit : kept);
  };
  for (const std::int64_t n : {1, 2, 7, 64, 100, 1000, 4096}) {
    CAPTURE(n);
    const int unit_bits = reference::lowbit_unit_bits(n);
    Rng rng(static_cast<std::uint64_t>(n));
    std::vector<float> values(static_cast<std::size_t>(n));
    for (auto& v : values) v = reference::lowbit_element(rng.next(), unit_bits);
    const reference::ExactSum exact = reference::exact_sum(reference::count_mantissa_bits(values));
    CHECK(exact.unit_bits == unit_bits);
    CHECK(reference::sum_tolerance(exact, reference::Inputs::any) == 0.0);
    float forward = 0, backward = 0;  // any order is exact
    for (std::size_t i = 0; i < values.size(); ++i) {
      forward += values[i];
      backward += values[values.size() - 1 - i];
    }
    CHECK(forward == exact.sum);
    CHECK(backward == exact.sum);
    for (int bits = 8; bits <= unit_bits; ++bits)
      for (const Rounding mode : {Rounding::truncate, Rounding::half_away, Rounding::half_even}) {
        CAPTURE(bits);
        CAPTURE(static_cast<int>(mode));
        long double sum = 0;
        for (float v : values) sum += rounded(v, bits, mode);
        CHECK(std::fabs(sum - exact.sum) == static_cast<long double>(n) * std::ldexp(1.0L, -unit_bits));
      }
  }
  CHECK(reference::lowbit_unit_bits(64) == 17);
  CHECK(reference::lowbit_unit_bits(7) == 20);
  CHECK(reference::lowbit_unit_bits(1) == 23);
  CHECK_THROWS(reference::lowbit_unit_bits(4097));
}
