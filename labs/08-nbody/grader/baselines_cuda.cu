#include "baselines_cuda.hpp"
#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::nbody_cuda {

namespace {

// One thread per body, every other body read from global memory (the L1 cache serves the warp's
// common address), 1 / sqrt as written: what a first CUDA version of the formula looks like.
__global__ void harness_naive_kernel(const float4* bodies, float4* accel, int n, float softening2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 me = bodies[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float4 other = bodies[j];
    const float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
    const float dist2 = dx * dx + dy * dy + dz * dz + softening2;
    const float inv_dist = 1.0f / sqrtf(dist2);
    const float s = other.w * inv_dist * inv_dist * inv_dist;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  accel[i] = make_float4(ax, ay, az, 0.0f);
}

}  // namespace

void launch_naive(const float* bodies, float* accel, int n, float softening2) {
  constexpr int block = 256;
  harness_naive_kernel<<<blocks_for(n, block), block>>>(reinterpret_cast<const float4*>(bodies),
                                                        reinterpret_cast<float4*>(accel), n, softening2);
  check(cudaGetLastError(), "launching the harness's naive n-body kernel");
}

}  // namespace gpulab::labs::nbody_cuda
