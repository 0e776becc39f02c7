#include "streams_reference.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "gpulab/parallel.hpp"

namespace gpulab::reference {

float draw_input(Rng& rng) {
  const std::uint64_t bits = rng.next();
  const auto mantissa = static_cast<std::uint32_t>(bits) & 0x007FFFFFu, sign = static_cast<std::uint32_t>(bits >> 63);
  const auto exponent = static_cast<int>((bits >> 32) % (kInputLog2Max - kInputLog2Min)) + kInputLog2Min;
  return std::bit_cast<float>(sign << 31 | static_cast<std::uint32_t>(127 + exponent) << 23 | mantissa);
}

float draw_eighths(Rng& rng) { return static_cast<float>(rng.integer(-kEighthsMax, kEighthsMax)) / 8.0f; }

float draw_scale(Rng& rng) {
  const std::uint64_t bits = rng.next();
  const auto k = static_cast<int>((bits >> 1) % (kScaleLog2Max - kScaleLog2Min + 1)) + kScaleLog2Min;
  return std::ldexp(bits & 1 ? 1.0f : -1.0f, k);
}

void scale_shift(std::span<const float> in, float a, float b, float key, std::span<float> out) {
  if (in.size() != out.size()) throw std::invalid_argument("scale_shift: input and output differ in length");
  // On all cores: the timing case's 2^27 elements take a quarter of a second on one.
  parallel_ranges(in.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = scale_shift(in[i], a, b, key);
  });
}

}  // namespace gpulab::reference
