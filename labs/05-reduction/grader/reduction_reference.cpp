#include "reduction_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "gpulab/parallel.hpp"

namespace gpulab::reference {

namespace {

constexpr std::uint32_t kMantissa = 0x007FFFFFu;
constexpr std::uint32_t kSign = 0x80000000u;
constexpr std::uint32_t kExponentOfOne = 0x3F800000u;  // the bits of 1.0f: [1, 2) shares them

std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }

// The counts of one part of the input, through histograms of the mantissa's low byte, middle byte
// and top 7 bits per sign: three increments an element instead of 23 bit tests (a GPU's large case
// counts 2^28 elements), then each bucket's count added to the bits its value has set.
BinadeCounts count_part(std::span<const float> values) {
  std::array<std::array<std::array<std::int64_t, 256>, 3>, 2> histograms{};  // [sign][piece][value]
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint32_t bits = bits_of(values[i]);
    if ((bits & ~kMantissa & ~kSign) != kExponentOfOne)
      throw std::invalid_argument(fmt::format("element {} ({}) has a magnitude outside [1, 2)", i, values[i]));
    auto& side = histograms[bits >> 31];  // an index, not a branch: balanced inputs have random signs
    side[0][bits & 0xFFu] += 1;
    side[1][(bits >> 8) & 0xFFu] += 1;
    side[2][(bits >> 16) & 0x7Fu] += 1;
  }
  BinadeCounts c;
  const std::array<SignCounts*, 2> sides{&c.positive, &c.negative};
  for (std::size_t sign = 0; sign < 2; ++sign)
    for (std::size_t piece = 0; piece < 3; ++piece)
      for (std::uint32_t value = 0; value < 256; ++value) {
        const std::int64_t count = histograms[sign][piece][value];
        if (piece == 0) sides[sign]->n += count;
        for (std::uint32_t b = 0; b < 8 && piece * 8 + b < 23; ++b)
          if ((value >> b) & 1u) sides[sign]->ones[piece * 8 + b] += count;
      }
  return c;
}

void add(SignCounts& to, const SignCounts& part) {
  to.n += part.n;
  for (int b = 0; b < 23; ++b) to.ones[b] += part.ones[b];
}

// The sum of one sign's magnitudes under `mask`'s mantissa bits, in units of 2^-23: each element is
// 2^23 + its mantissa, at most 2^28 * 2^24 = 2^52 units. `any_bit` gathers the mantissa bits set.
std::int64_t magnitude_units(const SignCounts& c, std::uint32_t mask, std::uint32_t& any_bit) {
  std::int64_t units = c.n << 23;
  for (int b = 0; b < 23; ++b) {
    const std::int64_t set = (mask >> b) & 1u ? c.n - c.ones[b] : c.ones[b];
    units += set << b;
    if (set > 0) any_bit |= 1u << b;
  }
  return units;
}

}  // namespace

BinadeCounts count_mantissa_bits(std::span<const float> values) {
  if (values.size() < (std::size_t{1} << 20)) return count_part(values);  // less than a thread's start costs
  BinadeCounts total;
  std::mutex merge;
  parallel_ranges(values.size(), [&](std::size_t begin, std::size_t end) {
    const BinadeCounts part = count_part(values.subspan(begin, end - begin));
    const std::lock_guard lock(merge);
    add(total.positive, part.positive);
    add(total.negative, part.negative);
  });
  return total;
}

ExactSum exact_sum(const BinadeCounts& counts, std::uint32_t mask) {
  if ((mask & ~kSignAndMantissa) != 0)
    throw std::invalid_argument(fmt::format("mask {:#010x} changes exponent bits", mask));
  std::uint32_t any_bit = 0;
  const std::int64_t positive = magnitude_units(counts.positive, mask, any_bit),
                     negative = magnitude_units(counts.negative, mask, any_bit);
  const std::int64_t signed_units = mask & kSign ? negative - positive : positive - negative;
  ExactSum e;
  e.n = counts.n();
  e.sum = std::ldexp(static_cast<double>(signed_units), -23);
  e.sum_abs = std::ldexp(static_cast<double>(positive + negative), -23);
  e.sum_squares = 2 * e.sum_abs;
  e.unit_bits = any_bit == 0 ? 0 : 23 - std::countr_zero(any_bit);
  return e;
}

float balanced_element(std::uint64_t random_bits) {
  const bool negative = (random_bits >> 63) & 1u, all_ones = (random_bits >> 62) & 1u;
  const std::uint32_t low = negative ? 0u : all_ones ? 0xFFFu : 0x001u;
  const auto high = static_cast<std::uint32_t>(random_bits) & 0x007FE000u;
  return std::bit_cast<float>((negative ? kSign : 0u) | kExponentOfOne | high | low);
}

int lowbit_unit_bits(std::int64_t n) {
  if (n < 1 || n > kLowbitMaxN)
    throw std::invalid_argument(fmt::format("lowbit inputs hold 1 to {} elements, not {}", kLowbitMaxN, n));
  return 23 - static_cast<int>(std::bit_width(static_cast<std::uint64_t>(n - 1)));  // 23 - ceil(log2 n)
}

float lowbit_element(std::uint64_t random_bits, int unit_bits) {
  const auto top = static_cast<std::uint32_t>(random_bits) & 0x007F0000u;  // fraction bits 2^-1 .. 2^-7
  return std::bit_cast<float>(kExponentOfOne | top | 1u << (23 - unit_bits));
}

double sum_tolerance(const ExactSum& exact, Inputs inputs) {
  if (exact.sum_abs * std::ldexp(1.0, exact.unit_bits) <= std::ldexp(1.0, 24)) return 0.0;
  const double u = std::ldexp(1.0, -24);
  if (inputs == Inputs::balanced) {
    constexpr double depth = kMaxSerialPartials / 2 + kMaxPairLevels;
    return kToleranceLambda * u * std::sqrt((depth + 1) * (exact.sum_squares + exact.sum * exact.sum));
  }
  const double depth = static_cast<double>(std::min(exact.n - 1, kMaxDepth));
  return kToleranceLambda * std::sqrt(depth) * u * exact.sum_abs;
}

double sum_one_core(std::span<const float> values) {
  double sum = 0;
  for (float x : values) sum += x;
  return sum;
}

double sum_all_cores(std::span<const float> values) {
  double total = 0;
  std::mutex merge;
  parallel_ranges(values.size(), [&](std::size_t begin, std::size_t end) {
    const double part = sum_one_core(values.subspan(begin, end - begin));
    const std::lock_guard lock(merge);
    total += part;
  });
  return total;
}

}  // namespace gpulab::reference
