// Lab 08-nbody, SoA experiment (CUDA): a drop-in nbody.cu whose tiled and fast tasks first copy the
// float4 bodies into four arrays x[], y[], z[], m[] (structure of arrays) and then compute from
// those, staging four float tiles in shared memory. The naive task is the AoS solution's. See
// README.md here for how to run it against the AoS solution.
#include "gpulab/student/cuda.hpp"

constexpr int kNaiveBlock = 256;

__global__ void nbody_naive_kernel(const float4* bodies, float4* accel, int n, float softening2) {
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

void nbody_naive(const float4* bodies, float4* accel, int n, float softening2) {
  nbody_naive_kernel<<<gpulab::blocks_for(n, kNaiveBlock), kNaiveBlock>>>(bodies, accel, n, softening2);
  gpulab::check(cudaGetLastError(), "launching nbody_naive_kernel");
}

namespace {

// The four arrays, n floats each, kept from one launch to the next (grown when n grows), so the
// timed launches measure the kernels and not cudaMalloc; the last ones live until the process ends
// (freeing them from a static destructor would race the harness's own teardown).
struct Soa {
  float* x = nullptr;
  float* y = nullptr;
  float* z = nullptr;
  float* m = nullptr;
};

class SoaScratch {
 public:
  Soa ensure(int n) {
    if (n > capacity_) {
      release();
      for (float** array : {&soa_.x, &soa_.y, &soa_.z, &soa_.m})
        gpulab::check(cudaMalloc(array, static_cast<size_t>(n) * sizeof(float)), "allocating an SoA array");
      capacity_ = n;
    }
    return soa_;
  }

 private:
  void release() {
    for (float* array : {soa_.x, soa_.y, soa_.z, soa_.m})
      if (array) gpulab::check(cudaFree(array), "freeing an SoA array");
    soa_ = {};
    capacity_ = 0;
  }
  Soa soa_;
  int capacity_ = 0;
};

__global__ void to_soa_kernel(const float4* bodies, Soa soa, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 b = bodies[i];
  soa.x[i] = b.x;
  soa.y[i] = b.y;
  soa.z[i] = b.z;
  soa.m[i] = b.w;
}

Soa soa_of(const float4* bodies, int n) {
  static SoaScratch scratch;
  const Soa soa = scratch.ensure(n);
  to_soa_kernel<<<gpulab::blocks_for(n, 256), 256>>>(bodies, soa, n);
  gpulab::check(cudaGetLastError(), "launching to_soa_kernel");
  return soa;
}

__device__ __forceinline__ void interact(float x, float y, float z, float ox, float oy, float oz, float om,
                                         float softening2, float3& acc) {
  const float dx = ox - x, dy = oy - y, dz = oz - z;
  const float inv_dist = rsqrtf(dx * dx + dy * dy + dz * dz + softening2);
  const float s = om * inv_dist * inv_dist * inv_dist;
  acc.x += dx * s;
  acc.y += dy * s;
  acc.z += dz * s;
}

}  // namespace

constexpr int kTile = 256;

// The AoS tiled kernel with four float tiles: four shared loads per interaction instead of one.
__global__ void nbody_tiled_kernel(Soa soa, float4* accel, int n, float softening2) {
  __shared__ float tx[kTile], ty[kTile], tz[kTile], tm[kTile];
  const int i = blockIdx.x * kTile + threadIdx.x;
  const float x = i < n ? soa.x[i] : 0.0f, y = i < n ? soa.y[i] : 0.0f, z = i < n ? soa.z[i] : 0.0f;
  float3 acc = make_float3(0.0f, 0.0f, 0.0f);
  for (int j0 = 0; j0 < n; j0 += kTile) {
    const int j = j0 + threadIdx.x;
    tx[threadIdx.x] = j < n ? soa.x[j] : 0.0f;
    ty[threadIdx.x] = j < n ? soa.y[j] : 0.0f;
    tz[threadIdx.x] = j < n ? soa.z[j] : 0.0f;
    tm[threadIdx.x] = j < n ? soa.m[j] : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) interact(x, y, z, tx[k], ty[k], tz[k], tm[k], softening2, acc);
    __syncthreads();
  }
  if (i < n) accel[i] = make_float4(acc.x, acc.y, acc.z, 0.0f);
}

void nbody_tiled(const float4* bodies, float4* accel, int n, float softening2) {
  const Soa soa = soa_of(bodies, n);
  nbody_tiled_kernel<<<gpulab::blocks_for(n, kTile), kTile>>>(soa, accel, n, softening2);
  gpulab::check(cudaGetLastError(), "launching nbody_tiled_kernel (SoA)");
}

constexpr int kFastThreads = 128, kBodiesPerThread = 4;
constexpr int kFastBodies = kFastThreads * kBodiesPerThread;

// The AoS fast kernel (4 bodies per thread) with four float tiles.
__global__ void __launch_bounds__(kFastThreads) nbody_fast_kernel(Soa soa, float4* accel, int n, float softening2) {
  __shared__ float tx[kFastThreads], ty[kFastThreads], tz[kFastThreads], tm[kFastThreads];
  const int first = blockIdx.x * kFastBodies + threadIdx.x;
  float x[kBodiesPerThread], y[kBodiesPerThread], z[kBodiesPerThread];
  float3 acc[kBodiesPerThread];
#pragma unroll
  for (int b = 0; b < kBodiesPerThread; ++b) {
    const int i = first + b * kFastThreads;
    x[b] = i < n ? soa.x[i] : 0.0f;
    y[b] = i < n ? soa.y[i] : 0.0f;
    z[b] = i < n ? soa.z[i] : 0.0f;
    acc[b] = make_float3(0.0f, 0.0f, 0.0f);
  }
  for (int j0 = 0; j0 < n; j0 += kFastThreads) {
    const int j = j0 + threadIdx.x;
    tx[threadIdx.x] = j < n ? soa.x[j] : 0.0f;
    ty[threadIdx.x] = j < n ? soa.y[j] : 0.0f;
    tz[threadIdx.x] = j < n ? soa.z[j] : 0.0f;
    tm[threadIdx.x] = j < n ? soa.m[j] : 0.0f;
    __syncthreads();
#pragma unroll 16
    for (int k = 0; k < kFastThreads; ++k) {
      const float ox = tx[k], oy = ty[k], oz = tz[k], om = tm[k];
#pragma unroll
      for (int b = 0; b < kBodiesPerThread; ++b) interact(x[b], y[b], z[b], ox, oy, oz, om, softening2, acc[b]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int b = 0; b < kBodiesPerThread; ++b) {
    const int i = first + b * kFastThreads;
    if (i < n) accel[i] = make_float4(acc[b].x, acc[b].y, acc[b].z, 0.0f);
  }
}

void nbody_fast(const float4* bodies, float4* accel, int n, float softening2) {
  const Soa soa = soa_of(bodies, n);
  nbody_fast_kernel<<<gpulab::blocks_for(n, kFastBodies), kFastThreads>>>(soa, accel, n, softening2);
  gpulab::check(cudaGetLastError(), "launching nbody_fast_kernel (SoA)");
}
