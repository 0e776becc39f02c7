// The staff kernels of 04-filter (baselines_cuda.hpp): the reference solution's designs, written for
// the harness, so that a bound measured against them scales with the GPU as the task does.
#include "baselines_cuda.hpp"
#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::filter_cuda {

namespace {

constexpr int kMaxRadius = 8;
constexpr int kBlockX = 32, kBlockY = 8;

__device__ int clamp_to(int v, int size) { return min(max(v, 0), size - 1); }

__device__ void accumulate(uint4& sum, uchar4 p) {
  sum.x += p.x;
  sum.y += p.y;
  sum.z += p.z;
  sum.w += p.w;
}

// The skeleton's tiled box: a 32 x 8 block loads its tile and halo into shared memory, sums 2r + 1
// pixels along each tile row, then 2r + 1 of those row sums down each column.
__global__ void staff_box_tiled_kernel(const uchar4* in, uchar4* out, int width, int height, int radius) {
  __shared__ uchar4 tile[kBlockY + 2 * kMaxRadius][kBlockX + 2 * kMaxRadius];
  __shared__ uint4 row_sums[kBlockY + 2 * kMaxRadius][kBlockX];
  const int tile_w = kBlockX + 2 * radius, tile_h = kBlockY + 2 * radius;
  const int x0 = blockIdx.x * kBlockX - radius, y0 = blockIdx.y * kBlockY - radius;
  for (int ty = threadIdx.y; ty < tile_h; ty += kBlockY) {
    const uchar4* row = in + static_cast<size_t>(clamp_to(y0 + ty, height)) * width;
    for (int tx = threadIdx.x; tx < tile_w; tx += kBlockX) tile[ty][tx] = row[clamp_to(x0 + tx, width)];
  }
  __syncthreads();
  for (int ty = threadIdx.y; ty < tile_h; ty += kBlockY) {
    uint4 sum = make_uint4(0, 0, 0, 0);
    for (int dx = 0; dx <= 2 * radius; ++dx) accumulate(sum, tile[ty][threadIdx.x + dx]);
    row_sums[ty][threadIdx.x] = sum;
  }
  __syncthreads();
  const int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= width || y >= height) return;
  uint4 sum = make_uint4(0, 0, 0, 0);
  for (int dy = 0; dy <= 2 * radius; ++dy) {
    const uint4 s = row_sums[threadIdx.y + dy][threadIdx.x];
    sum.x += s.x, sum.y += s.y, sum.z += s.z, sum.w += s.w;
  }
  const unsigned n = (2 * radius + 1) * (2 * radius + 1);
  out[static_cast<size_t>(y) * width + x] =
      make_uchar4((sum.x + n / 2) / n, (sum.y + n / 2) / n, (sum.z + n / 2) / n, (sum.w + n / 2) / n);
}

// The reference's 5x5 median: r and b in the 16-bit lanes of one word, g and a in another, one
// __vminu2 / __vmaxu2 per compare-exchange of two channels.
__device__ unsigned even_lanes(unsigned pixel) { return pixel & 0x00FF00FFu; }
__device__ unsigned odd_lanes(unsigned pixel) { return (pixel >> 8) & 0x00FF00FFu; }
__device__ unsigned join_lanes(unsigned even, unsigned odd) { return __byte_perm(even, odd, 0x6240); }
__device__ void order(unsigned& a, unsigned& b) {
  const unsigned smaller = __vminu2(a, b);
  b = __vmaxu2(a, b);
  a = smaller;
}
__device__ unsigned median_of_3(unsigned a, unsigned b, unsigned c) {
  return __vmaxu2(__vminu2(a, b), __vminu2(__vmaxu2(a, b), c));
}

constexpr int kHeld = 14;
// Forgetful selection: v[0..last] held; the smallest and the largest are dropped, `next` comes in.
__device__ __forceinline__ void forget_extremes(unsigned (&v)[kHeld], int last, unsigned next) {
#pragma unroll
  for (int i = 1; i <= last; ++i) order(v[0], v[i]);
#pragma unroll
  for (int i = 1; i < last; ++i) order(v[i], v[last]);
  v[0] = next;
}

// The medians of a 2 x 2 block of outputs from the 6 x 6 values around it; shared values first.
__device__ void median5_lanes(const unsigned (&v)[6][6], unsigned (&median)[2][2]) {
  unsigned all[kHeld];
#pragma unroll
  for (int k = 0; k < kHeld; ++k) all[k] = v[1 + k / 4][1 + k % 4];
  forget_extremes(all, 13, v[4][3]);
  forget_extremes(all, 12, v[4][4]);
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    unsigned column[kHeld];
#pragma unroll
    for (int k = 0; k < kHeld; ++k) column[k] = all[k];
#pragma unroll
    for (int k = 0; k < 4; ++k) forget_extremes(column, 11 - k, v[1 + k][x == 0 ? 0 : 5]);
#pragma unroll
    for (int y = 0; y < 2; ++y) {
      unsigned own[kHeld];
#pragma unroll
      for (int k = 0; k < kHeld; ++k) own[k] = column[k];
#pragma unroll
      for (int k = 0; k < 5; ++k) forget_extremes(own, 7 - k, v[y == 0 ? 0 : 5][x + k]);
      median[y][x] = median_of_3(own[0], own[1], own[2]);
    }
  }
}

// A thread's run of one row: 2 pixels from x0 (one 8-byte load when the rows have an even width, as
// the timed image has) and 2 pixels either side, clamped at the edges.
__device__ void load_run(const unsigned* __restrict__ row, int x0, int width, unsigned (&px)[6]) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    px[i] = row[max(x0 - 2 + i, 0)];
    px[4 + i] = row[min(x0 + 2 + i, width - 1)];
  }
  if (width % 2 == 0) {
    const uint2 v = *reinterpret_cast<const uint2*>(row + x0);
    px[2] = v.x, px[3] = v.y;
  } else {
    px[2] = row[x0], px[3] = row[min(x0 + 1, width - 1)];
  }
}

// Each thread filters a 2 x 2 block of outputs from rows y0 - 2 .. y0 + 3 (clamped).
__global__ void __launch_bounds__(128)
    staff_median5_kernel(const unsigned* __restrict__ in, unsigned* __restrict__ out, int width, int height) {
  const int x0 = 2 * (blockIdx.x * blockDim.x + threadIdx.x), y0 = 2 * (blockIdx.y * blockDim.y + threadIdx.y);
  if (x0 >= width || y0 >= height) return;
  unsigned even[6][6], odd[6][6], even_median[2][2], odd_median[2][2];
#pragma unroll
  for (int r = 0; r < 6; ++r) {
    unsigned px[6];
    load_run(in + static_cast<size_t>(clamp_to(y0 - 2 + r, height)) * width, x0, width, px);
#pragma unroll
    for (int c = 0; c < 6; ++c) even[r][c] = even_lanes(px[c]), odd[r][c] = odd_lanes(px[c]);
  }
  median5_lanes(even, even_median);
  median5_lanes(odd, odd_median);
#pragma unroll
  for (int y = 0; y < 2; ++y) {
    if (y0 + y >= height) break;
    unsigned* row = out + static_cast<size_t>(y0 + y) * width;
    const unsigned a = join_lanes(even_median[y][0], odd_median[y][0]),
                   b = join_lanes(even_median[y][1], odd_median[y][1]);
    if (width % 2 == 0) {
      *reinterpret_cast<uint2*>(row + x0) = make_uint2(a, b);
    } else {
      row[x0] = a;
      if (x0 + 1 < width) row[x0 + 1] = b;
    }
  }
}

}  // namespace

void staff_box_tiled(const void* in, void* out, int width, int height, int radius) {
  const dim3 block(kBlockX, kBlockY), grid(blocks_for(width, kBlockX), blocks_for(height, kBlockY));
  staff_box_tiled_kernel<<<grid, block>>>(static_cast<const uchar4*>(in), static_cast<uchar4*>(out), width, height,
                                          radius);
  check(cudaGetLastError(), "launching the harness's tiled box filter");
}

void staff_median5(const void* in, void* out, int width, int height) {
  const dim3 block(32, 4), grid(blocks_for(blocks_for(width, 2), 32), blocks_for(blocks_for(height, 2), 4));
  staff_median5_kernel<<<grid, block>>>(static_cast<const unsigned*>(in), static_cast<unsigned*>(out), width, height);
  check(cudaGetLastError(), "launching the harness's 5x5 median");
}

}  // namespace gpulab::labs::filter_cuda
