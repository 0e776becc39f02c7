// The CPU reference of lab 10-streams: what the grader checks student results against.
#pragma once
#include <span>

namespace gpulab::reference {

// 10-streams: out[i] = a * in[i] + b + key for every i ("scale and shift"; the key is the grader's
// proof that a kernel made the result). The driver draws inputs and parameters for which this is
// exact in float (see streams_lab.cpp), so a fused multiply-add and a multiply followed by an add
// give the same bits, on any device.
inline float scale_shift(float x, float a, float b, float key) { return a * x + b + key; }

// The ranges the driver draws from: inputs, shifts and keys k / 8 for |k| <= kEighthsMax, scales
// m / 4 for 1 <= |m| <= kQuartersMax. Then a * x is a multiple of 1/32 of at most 2^16 in
// magnitude, and a * x + b and a * x + b + key are multiples of 1/32 below 2^17: at most 22
// significant bits, exact in a float's 24, whether the first addition is fused or not.
inline constexpr int kEighthsMax = 32768, kQuartersMax = 64;
void scale_shift(std::span<const float> in, float a, float b, float key, std::span<float> out);

}  // namespace gpulab::reference
