// Lab 08-nbody (OpenCL kernels): one step of an all-pairs gravitational n-body, softened.
// bodies[j] = (x, y, z, mass); accel[i] = (ax, ay, az, 0) with
//   a_i = sum over all j of m_j (r_j - r_i) / (|r_j - r_i|^2 + softening2)^(3/2).
// The term j = i is 0, so no kernel tests for it. Launched by nbody_opencl.cpp.

// --8<-- [start:naive]
// One work-item per body; every other body is read from global memory, as written in the formula.
__kernel void nbody_naive_kernel(__global const float4* bodies, __global float4* accel, int n, float softening2) {
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
// --8<-- [end:naive]

// --8<-- [start:tiled]
#define TILE 256

// The acceleration body `me` gets from body `other`, added to `acc`: one rsqrt (within 2 ulps, a
// single instruction on a GPU) instead of a square root and a division.
inline float3 interact(float4 me, float4 other, float softening2, float3 acc) {
  const float3 d = other.xyz - me.xyz;
  const float inv_dist = rsqrt(d.x * d.x + d.y * d.y + d.z * d.z + softening2);
  const float s = other.w * inv_dist * inv_dist * inv_dist;
  return acc + d * s;
}

// GPU Gems 3, chapter 31: the work-group walks through the bodies a tile at a time, each work-item
// loading one body of it into local memory. Bodies past n load as mass 0 at the origin: their
// terms are exactly 0, so the inner loop needs no bounds test.
__kernel __attribute__((reqd_work_group_size(TILE, 1, 1)))
void nbody_tiled_kernel(__global const float4* bodies, __global float4* accel, int n, float softening2) {
  __local float4 tile[TILE];
  const int i = get_global_id(0), lid = get_local_id(0);
  const float4 me = i < n ? bodies[i] : (float4)(0.0f);
  float3 acc = (float3)(0.0f);
  for (int j0 = 0; j0 < n; j0 += TILE) {
    tile[lid] = j0 + lid < n ? bodies[j0 + lid] : (float4)(0.0f);
    barrier(CLK_LOCAL_MEM_FENCE);  // the tile is complete
    for (int k = 0; k < TILE; ++k) acc = interact(me, tile[k], softening2, acc);
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the tile before the next one overwrites it
  }
  if (i < n) accel[i] = (float4)(acc, 0.0f);
}
// --8<-- [end:tiled]

// --8<-- [start:fast]
#define FAST_THREADS 256
#define BODIES_PER_ITEM 4

// The interaction with the softening first in the sum, so the three squares are three fused
// multiply-adds, with no separate multiply and add.
inline float3 interact_fast(float4 me, float4 other, float softening2, float3 acc) {
  const float3 d = other.xyz - me.xyz;
  const float inv_dist = rsqrt(fma(d.z, d.z, fma(d.y, d.y, fma(d.x, d.x, softening2))));
  const float s = other.w * inv_dist * inv_dist * inv_dist;
  return fma(d, (float3)(s), acc);
}

// Register blocking: each work-item computes BODIES_PER_ITEM bodies (FAST_THREADS apart, so loads
// and stores stay coalesced): every float4 read from local memory feeds BODIES_PER_ITEM
// interactions, and the independent accumulators hide each other's latency.
__kernel __attribute__((reqd_work_group_size(FAST_THREADS, 1, 1)))
void nbody_fast_kernel(__global const float4* bodies, __global float4* accel, int n, float softening2) {
  __local float4 tile[FAST_THREADS];
  const int lid = get_local_id(0);
  const int first = get_group_id(0) * FAST_THREADS * BODIES_PER_ITEM + lid;
  float4 me[BODIES_PER_ITEM];
  float3 acc[BODIES_PER_ITEM];
  for (int b = 0; b < BODIES_PER_ITEM; ++b) {
    const int i = first + b * FAST_THREADS;
    me[b] = i < n ? bodies[i] : (float4)(0.0f);
    acc[b] = (float3)(0.0f);
  }
  for (int j0 = 0; j0 < n; j0 += FAST_THREADS) {
    tile[lid] = j0 + lid < n ? bodies[j0 + lid] : (float4)(0.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll 16
    for (int k = 0; k < FAST_THREADS; ++k) {
      const float4 other = tile[k];
#pragma unroll
      for (int b = 0; b < BODIES_PER_ITEM; ++b) acc[b] = interact_fast(me[b], other, softening2, acc[b]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int b = 0; b < BODIES_PER_ITEM; ++b) {
    const int i = first + b * FAST_THREADS;
    if (i < n) accel[i] = (float4)(acc[b], 0.0f);
  }
}
// --8<-- [end:fast]
