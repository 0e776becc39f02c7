// The CPU reference of lab 10-streams: what the grader checks student results against.
#pragma once
#include <span>

#include "gpulab/random.hpp"

namespace gpulab::reference {

// 10-streams: out[i] = a * in[i] + b + key for every i ("scale and shift"; the key is the grader's
// proof that a kernel made the result), in float: ((a * x) + b) + key. The driver draws scales for
// which a * x is exact in float (see below), so a fused multiply-add and a multiply followed by an
// add give the same bits, on any device, and the result is compared bit for bit.
inline float scale_shift(float x, float a, float b, float key) { return a * x + b + key; }

// The ranges the driver draws from, one draw of the generator each (draw_each):
// - inputs x: full 24-bit significands (every mantissa bit at random), either sign, magnitudes in
//   [2^kInputLog2Min, 2^kInputLog2Max): a kernel that reads inputs in fewer bits (half, bfloat16,
//   truncated or rounded mantissas) is wrong wherever |a * x| is not much smaller than |b + key|;
// - scales a = +-2^k, kScaleLog2Min <= k <= kScaleLog2Max: a * x only moves the exponent, so it is
//   exact (a normal float from 2^-5 to below 2^16), and fma(a, x, b) rounds a * x + b once, as the
//   addition after an exact product does;
// - shifts b and keys: k / 8 for |k| <= kEighthsMax (a key is never 0).
inline constexpr int kEighthsMax = 32768, kInputLog2Min = -3, kInputLog2Max = 12, kScaleLog2Min = -2, kScaleLog2Max = 4;
float draw_input(Rng& rng);
float draw_eighths(Rng& rng);
float draw_scale(Rng& rng);
void scale_shift(std::span<const float> in, float a, float b, float key, std::span<float> out);

}  // namespace gpulab::reference
