// Lab 01-matmul (OpenCL kernels): C (m x n) = A (m x k) * B (k x n), row-major floats.

// --8<-- [start:naive]
// One work-item per element of C: 2k loads from global memory for 2k flops.
__kernel void matmul_naive_kernel(__global const float* a, __global const float* b, __global float* c,
                                  int m, int n, int k) {
  const int col = get_global_id(0), row = get_global_id(1);
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int p = 0; p < k; ++p) sum += a[(size_t)row * k + p] * b[(size_t)p * n + col];
  c[(size_t)row * n + col] = sum;
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
#define TILE 32

// Each work-group computes a TILE x TILE tile of C from tiles of A and B staged in local memory.
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul_tiled_kernel(__global const float* a, __global const float* b, __global float* c, int m, int n, int k) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int row = get_group_id(1) * TILE + ty;
  const int col = get_group_id(0) * TILE + tx;
  float sum = 0.0f;
  for (int p0 = 0; p0 < k; p0 += TILE) {
    // Out-of-range elements load as 0, so they add nothing to the sums.
    a_tile[ty][tx] = row < m && p0 + tx < k ? a[(size_t)row * k + p0 + tx] : 0.0f;
    b_tile[ty][tx] = p0 + ty < k && col < n ? b[(size_t)(p0 + ty) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);  // the tiles are complete
#pragma unroll
    for (int p = 0; p < TILE; ++p) sum += a_tile[ty][p] * b_tile[p][tx];
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the tiles before they are overwritten
  }
  if (row < m && col < n) c[(size_t)row * n + col] = sum;
}
// --8<-- [end:tiled]

// --8<-- [start:fast]
// A work-group of 256 work-items computes a 128 x 128 tile of C; each work-item 64 elements of it in
// registers, from 8-deep slices of A (transposed: a work-item's rows at one p are adjacent) and B in
// double-buffered local memory. OpenCL has no asynchronous copy to local memory, so the next slices
// are fetched into registers while the current ones are used (step 6 of the road to cuBLAS in the
// docs; the CUDA kernel goes on to a cp.async pipeline and 128 x 256 tiles).
#define BLOCK_M 128
#define BLOCK_N 128
#define BLOCK_K 8
#define THREADS 256
#define LOADS_A 4 /* BLOCK_M * BLOCK_K / THREADS: a work-item's elements of A per slice */
#define PAD_M (BLOCK_M + 4)
// Warp tiles: the 8 warps (sub-groups of 32 on NVIDIA) cover the tile as 4 x 2 pieces of 32 x 64, a
// warp's 32 work-items as 4 x 8, each owning 2 x 2 sub-blocks of 4 x 4 (rows tm, tm + 16; columns
// tn, tn + 32): a warp reads B as 8 adjacent float4 (every bank once) and A as 4 float4 (broadcasts).
#define WARP_M 32
#define WARP_N 64
#define LANES_N 8

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void matmul_fast_kernel(__global const float* restrict a, __global const float* restrict b,
                        __global float* restrict c, int m, int n, int k) {
  __local float4 a_slice4[2][BLOCK_K][PAD_M / 4];  // float4: local memory aligned for vload-free reads
  __local float4 b_slice4[2][BLOCK_K][BLOCK_N / 4];
  __local float* a_slice = (__local float*)a_slice4;  // a_slice[(s * BLOCK_K + p) * PAD_M + i] = A[row0 + i][p0 + p]
  const int tid = get_local_id(0), warp = tid / 32, lane = tid % 32;
  const int tm = warp / (BLOCK_N / WARP_N) * WARP_M + lane / LANES_N * 4;
  const int tn = warp % (BLOCK_N / WARP_N) * WARP_N + lane % LANES_N * 4;
  const int row0 = get_group_id(1) * BLOCK_M, col0 = get_group_id(0) * BLOCK_N;
  // B's slice row by row as float4: one per work-item; a whole float4 when n % 4 == 0 (then the
  // address is 16-byte aligned, and all 4 columns are in or out of the matrix).
  const int bp = tid / (BLOCK_N / 4), bc = tid % (BLOCK_N / 4) * 4;
  const bool vector_b = (n & 3) == 0;
  float a_next[LOADS_A];
  float4 b_next;
  float acc[8][8];  // acc[i][j] = C[row0 + tm + i / 4 * 16 + i % 4][col0 + tn + j / 4 * 32 + j % 4]
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  // Constant-trip loops are unrolled explicitly: acc and the fetched values must stay in registers.
#define FETCH(p0)                                                                                        \
  _Pragma("unroll") for (int i = 0; i < LOADS_A; ++i) {                                                  \
    const int e = tid + i * THREADS, r = row0 + e / BLOCK_K, p = (p0) + e % BLOCK_K;                     \
    a_next[i] = r < m && p < k ? a[(size_t)r * k + p] : 0.0f;                                             \
  }                                                                                                      \
  {                                                                                                      \
    const int p = (p0) + bp, col = col0 + bc;                                                            \
    __global const float* from = b + (size_t)p * n + col;                                                \
    if (vector_b && p < k && col < n) {                                                                  \
      b_next = *(__global const float4*)from;                                                            \
    } else {                                                                                             \
      b_next.x = p < k && col < n ? from[0] : 0.0f;                                                      \
      b_next.y = p < k && col + 1 < n ? from[1] : 0.0f;                                                  \
      b_next.z = p < k && col + 2 < n ? from[2] : 0.0f;                                                  \
      b_next.w = p < k && col + 3 < n ? from[3] : 0.0f;                                                  \
    }                                                                                                    \
  }
#define STAGE(s)                                                                                         \
  _Pragma("unroll") for (int i = 0; i < LOADS_A; ++i) {                                                  \
    const int e = tid + i * THREADS;                                                                     \
    a_slice[((s) * BLOCK_K + e % BLOCK_K) * PAD_M + e / BLOCK_K] = a_next[i];                             \
  }                                                                                                      \
  b_slice4[s][bp][bc / 4] = b_next;

  FETCH(0)
  STAGE(0)
  barrier(CLK_LOCAL_MEM_FENCE);
  int s = 0;
  for (int p0 = 0; p0 < k; p0 += BLOCK_K) {
    const bool more = p0 + BLOCK_K < k;
    if (more) { FETCH(p0 + BLOCK_K) }
#pragma unroll
    for (int p = 0; p < BLOCK_K; ++p) {
      const float4 a0 = a_slice4[s][p][tm / 4], a1 = a_slice4[s][p][tm / 4 + 4];
      const float4 b0 = b_slice4[s][p][tn / 4], b1 = b_slice4[s][p][tn / 4 + 8];
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    // Uniform across the work-group (p0 and k are), so every work-item reaches the barrier.
    if (more) {
      STAGE(s ^ 1)  // the other buffer: nobody reads it during this step
      barrier(CLK_LOCAL_MEM_FENCE);
      s ^= 1;
    }
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = row0 + tm + i / 4 * 16 + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int col = col0 + tn + j / 4 * 32 + j % 4;
      if (col < n) c[(size_t)row * n + col] = acc[i][j];
    }
  }
}
// --8<-- [end:fast]
