// Lab 08-nbody (OpenCL kernels): one step of an all-pairs gravitational n-body, softened.
// bodies[j] = (x, y, z, mass); accel[i] must receive (ax, ay, az, 0) with
//   a_i = sum over all j of m_j (r_j - r_i) / (|r_j - r_i|^2 + softening2)^(3/2).
// The term j = i is 0: loop over every j, no test needed. Launched by nbody_opencl.cpp.

__kernel void nbody_naive_kernel(__global const float4* bodies, __global float4* accel, int n, float softening2) {
  // TODO 1 (one work-item per body): i = get_global_id(0); work-items with i >= n return. Read your
  //   own body once: float4 me = bodies[i].
  // TODO 2 (the formula, read from global memory): for every j < n read bodies[j] and add its term:
  //   dx = other.x - me.x (likewise dy, dz); dist2 = dx*dx + dy*dy + dz*dz + softening2;
  //   inv_dist = 1.0f / sqrt(dist2); s = other.w * inv_dist^3; ax += dx * s (likewise ay, az).
  // TODO 3: store accel[i] = (float4)(ax, ay, az, 0.0f) once, at the end.
}

#define TILE 256

__kernel __attribute__((reqd_work_group_size(TILE, 1, 1)))
void nbody_tiled_kernel(__global const float4* bodies, __global float4* accel, int n, float softening2) {
  // TODO 1 (local memory): __local float4 tile[TILE].
  // TODO 2 (cooperative, coalesced loads): i = get_global_id(0), lid = get_local_id(0); read your own
  //   body ((float4)(0.0f) past n). For each j0 = 0, TILE, ... < n, work-item lid loads
  //   bodies[j0 + lid] into tile[lid], or (float4)(0.0f) past n: mass 0 adds exactly 0.
  // TODO 3 (barrier): barrier(CLK_LOCAL_MEM_FENCE) once the tile is loaded, then
  // TODO 4 (reuse, rsqrt): add the terms of the TILE bodies of the tile, with inv_dist = rsqrt(dist2),
  // TODO 5 (second barrier): barrier(CLK_LOCAL_MEM_FENCE) before the next tile overwrites it.
  // TODO 6: work-items with i < n store their acceleration. Every work-item must reach both barriers.
}

// Bonus: anything correct that beats the threshold (see the README and nbody.cu for a plan).
__kernel void nbody_fast_kernel(__global const float4* bodies, __global float4* accel, int n, float softening2) {
  // TODO (register blocking): your fastest kernel.
}
