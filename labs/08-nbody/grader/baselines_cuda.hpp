// The CUDA calibration baseline of 08-nbody, compiled by nvcc on its own: the harness's naive
// kernel. Device pointers to float4 arrays of n elements, passed as floats (4 per body).
#pragma once

namespace gpulab::labs::nbody_cuda {

void launch_naive(const float* bodies, float* accel, int n, float softening2);

}  // namespace gpulab::labs::nbody_cuda
