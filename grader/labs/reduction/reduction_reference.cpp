#include "reduction_reference.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "gpulab/parallel.hpp"

namespace gpulab::reference {

namespace {

constexpr std::uint32_t kMantissa = 0x007FFFFFu;
constexpr std::uint32_t kExponentOfOne = 0x3F800000u;  // the bits of 1.0f: [1, 2) shares them

std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }

// The counts of one part of the input.
BinadeCounts count_part(std::span<const float> values) {
  BinadeCounts c;
  c.n = static_cast<std::int64_t>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint32_t bits = bits_of(values[i]);
    if ((bits & ~kMantissa) != kExponentOfOne)
      throw std::invalid_argument(fmt::format("element {} ({}) lies outside [1, 2)", i, values[i]));
    for (int b = 0; b < 23; ++b) c.ones[b] += (bits >> b) & 1u;
  }
  return c;
}

}  // namespace

BinadeCounts count_mantissa_bits(std::span<const float> values) {
  if (values.size() < (std::size_t{1} << 20)) return count_part(values);  // less than a thread's start costs
  BinadeCounts total;
  std::mutex merge;
  parallel_ranges(values.size(), [&](std::size_t begin, std::size_t end) {
    const BinadeCounts part = count_part(values.subspan(begin, end - begin));
    const std::lock_guard lock(merge);
    total.n += part.n;
    for (int b = 0; b < 23; ++b) total.ones[b] += part.ones[b];
  });
  return total;
}

ExactSum exact_sum(const BinadeCounts& counts, std::uint32_t mask) {
  if ((mask & ~kSignAndMantissa) != 0)
    throw std::invalid_argument(fmt::format("mask {:#010x} changes exponent bits", mask));
  // In units of 2^-23: each element is 2^23 + its mantissa; at most 2^28 * 2^24 = 2^52 units.
  std::int64_t units = counts.n << 23;
  std::uint32_t any_bit = 0;  // the mantissa bits set in some element
  for (int b = 0; b < 23; ++b) {
    const std::int64_t set = (mask >> b) & 1u ? counts.n - counts.ones[b] : counts.ones[b];
    units += set << b;
    if (set > 0) any_bit |= 1u << b;
  }
  ExactSum e;
  e.sum_abs = std::ldexp(static_cast<double>(units), -23);
  e.sum = mask >> 31 ? -e.sum_abs : e.sum_abs;
  e.unit_bits = any_bit == 0 ? 0 : 23 - std::countr_zero(any_bit);
  return e;
}

double sum_tolerance(std::int64_t n, const ExactSum& exact) {
  if (exact.sum_abs * std::ldexp(1.0, exact.unit_bits) <= std::ldexp(1.0, 24)) return 0.0;
  const double u = std::ldexp(1.0, -24);
  return kToleranceLambda * std::sqrt(static_cast<double>(n - 1)) * u * exact.sum_abs;
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
