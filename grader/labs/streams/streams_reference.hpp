// The CPU reference of lab 10-streams: what the grader checks student results against.
#pragma once
#include <span>

namespace gpulab::reference {

// 10-streams: out[i] = a * in[i] + b for every i ("scale and shift"). The driver draws inputs and
// parameters for which this is exact in float (see streams_lab.cpp), so a fused multiply-add and
// a multiply followed by an add give the same bits, on any device.
inline float scale_shift(float x, float a, float b) { return a * x + b; }
void scale_shift(std::span<const float> in, float a, float b, std::span<float> out);

}  // namespace gpulab::reference
