// Lab 08-nbody, SoA experiment (OpenCL kernels): the tiled and fast kernels of the solution reading
// four arrays x[], y[], z[], m[] (structure of arrays), copied from the float4 bodies by
// to_soa_kernel, and staging four float tiles in local memory. The naive kernel is the solution's.

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

__kernel void to_soa_kernel(__global const float4* bodies, __global float* x, __global float* y, __global float* z,
                            __global float* m, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float4 b = bodies[i];
  x[i] = b.x;
  y[i] = b.y;
  z[i] = b.z;
  m[i] = b.w;
}

inline float3 interact(float3 me, float ox, float oy, float oz, float om, float softening2, float3 acc) {
  const float3 d = (float3)(ox, oy, oz) - me;
  const float inv_dist = rsqrt(d.x * d.x + d.y * d.y + d.z * d.z + softening2);
  return acc + d * (om * inv_dist * inv_dist * inv_dist);
}

#define TILE 256

__kernel __attribute__((reqd_work_group_size(TILE, 1, 1)))
void nbody_tiled_kernel(__global const float* x, __global const float* y, __global const float* z,
                        __global const float* m, __global float4* accel, int n, float softening2) {
  __local float tx[TILE], ty[TILE], tz[TILE], tm[TILE];
  const int i = get_global_id(0), lid = get_local_id(0);
  const float3 me = i < n ? (float3)(x[i], y[i], z[i]) : (float3)(0.0f);
  float3 acc = (float3)(0.0f);
  for (int j0 = 0; j0 < n; j0 += TILE) {
    const int j = j0 + lid;
    tx[lid] = j < n ? x[j] : 0.0f;
    ty[lid] = j < n ? y[j] : 0.0f;
    tz[lid] = j < n ? z[j] : 0.0f;
    tm[lid] = j < n ? m[j] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc = interact(me, tx[k], ty[k], tz[k], tm[k], softening2, acc);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < n) accel[i] = (float4)(acc, 0.0f);
}

#define FAST_THREADS 128
#define BODIES_PER_ITEM 4

__kernel __attribute__((reqd_work_group_size(FAST_THREADS, 1, 1)))
void nbody_fast_kernel(__global const float* x, __global const float* y, __global const float* z,
                       __global const float* m, __global float4* accel, int n, float softening2) {
  __local float tx[FAST_THREADS], ty[FAST_THREADS], tz[FAST_THREADS], tm[FAST_THREADS];
  const int lid = get_local_id(0);
  const int first = get_group_id(0) * FAST_THREADS * BODIES_PER_ITEM + lid;
  float3 me[BODIES_PER_ITEM], acc[BODIES_PER_ITEM];
  for (int b = 0; b < BODIES_PER_ITEM; ++b) {
    const int i = first + b * FAST_THREADS;
    me[b] = i < n ? (float3)(x[i], y[i], z[i]) : (float3)(0.0f);
    acc[b] = (float3)(0.0f);
  }
  for (int j0 = 0; j0 < n; j0 += FAST_THREADS) {
    const int j = j0 + lid;
    tx[lid] = j < n ? x[j] : 0.0f;
    ty[lid] = j < n ? y[j] : 0.0f;
    tz[lid] = j < n ? z[j] : 0.0f;
    tm[lid] = j < n ? m[j] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll 16
    for (int k = 0; k < FAST_THREADS; ++k) {
      const float ox = tx[k], oy = ty[k], oz = tz[k], om = tm[k];
#pragma unroll
      for (int b = 0; b < BODIES_PER_ITEM; ++b) acc[b] = interact(me[b], ox, oy, oz, om, softening2, acc[b]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int b = 0; b < BODIES_PER_ITEM; ++b) {
    const int i = first + b * FAST_THREADS;
    if (i < n) accel[i] = (float4)(acc[b], 0.0f);
  }
}
