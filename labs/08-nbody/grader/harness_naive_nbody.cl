// The same kernel as baselines_cuda.cu's: one work-item per body, global reads, 1 / sqrt.
// The harness's harness_naive_nbody kernel (bindings_opencl.cpp builds it); students get it encoded,
// never as this source (grader/contract/kernel_embedding.hpp).
__kernel void harness_naive_nbody(__global const float4* bodies, __global float4* accel, int n, float softening2) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float4 me = bodies[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float4 other = bodies[j];
    const float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
    const float dist2 = dx * dx + dy * dy + dz * dz + softening2;
    const float inv_dist = 1.0f / sqrt(dist2);
    const float s = other.w * inv_dist * inv_dist * inv_dist;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  accel[i] = (float4)(ax, ay, az, 0.0f);
}
