// The CPU reference of lab 10-streams: what the grader checks student results against.
#pragma once
#include <span>

namespace gpulab::reference {

// 10-streams: out[i] = a * in[i] + b for every i ("scale and shift"). The driver draws inputs and
// parameters for which this is exact in float (see streams_lab.cpp), so a fused multiply-add and
// a multiply followed by an add give the same bits, on any device.
inline float scale_shift(float x, float a, float b) { return a * x + b; }

// The ranges the driver draws from: inputs and shifts k / 8 for |k| <= kEighthsMax, scales m / 4 for
// 1 <= |m| <= kQuartersMax. Then a * x is a multiple of 1/32 below 2^16 in magnitude and a * x + b
// one below 2^17: at most 22 significant bits, exact in a float's 24.
inline constexpr int kEighthsMax = 32768, kQuartersMax = 64;
void scale_shift(std::span<const float> in, float a, float b, std::span<float> out);

}  // namespace gpulab::reference
