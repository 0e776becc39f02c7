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
// A work-group of 256 work-items computes a 128 x 128 tile of C; each work-item an 8 x 8 block of
// it in registers, from 16-deep slices of A (transposed) and B in double-buffered local memory.
// The next slices are fetched into registers while the current ones are used.
#define BLOCK_M 128
#define BLOCK_N 128
#define BLOCK_K 16
#define THREAD_M 8
#define THREAD_N 8
#define THREADS 256 /* (BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N) */
#define LOADS 8     /* BLOCK_M * BLOCK_K / THREADS */
#define PAD_M (BLOCK_M + 4)

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void matmul_fast_kernel(__global const float* restrict a, __global const float* restrict b,
                        __global float* restrict c, int m, int n, int k) {
  __local float a_slice[2][BLOCK_K][PAD_M];
  __local float b_slice[2][BLOCK_K][BLOCK_N];
  const int tid = get_local_id(0);
  const int tx = tid % (BLOCK_N / THREAD_N), ty = tid / (BLOCK_N / THREAD_N);
  const int row0 = get_group_id(1) * BLOCK_M, col0 = get_group_id(0) * BLOCK_N;
  float a_next[LOADS], b_next[LOADS];
  // Constant-trip loops are unrolled explicitly: acc, a_next and b_next must stay in registers.
  float acc[THREAD_M][THREAD_N];
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_N; ++j) acc[i][j] = 0.0f;

#define FETCH(p0)                                                                       \
  _Pragma("unroll") for (int i = 0; i < LOADS; ++i) {                                                     \
    const int e = tid + i * THREADS;                                                    \
    const int ar = row0 + e / BLOCK_K, ap = (p0) + e % BLOCK_K;                         \
    a_next[i] = ar < m && ap < k ? a[(size_t)ar * k + ap] : 0.0f;                       \
    const int bp = (p0) + e / BLOCK_N, bc = col0 + e % BLOCK_N;                         \
    b_next[i] = bp < k && bc < n ? b[(size_t)bp * n + bc] : 0.0f;                       \
  }
#define STAGE(buffer)                                                                   \
  _Pragma("unroll") for (int i = 0; i < LOADS; ++i) {                                                     \
    const int e = tid + i * THREADS;                                                    \
    a_slice[buffer][e % BLOCK_K][e / BLOCK_K] = a_next[i];                              \
    b_slice[buffer][e / BLOCK_N][e % BLOCK_N] = b_next[i];                              \
  }

  FETCH(0)
  STAGE(0)
  barrier(CLK_LOCAL_MEM_FENCE);
  int buffer = 0;
  for (int p0 = 0; p0 < k; p0 += BLOCK_K) {
    const bool more = p0 + BLOCK_K < k;
    if (more) { FETCH(p0 + BLOCK_K) }
#pragma unroll
    for (int p = 0; p < BLOCK_K; ++p) {
      const float4 a0 = vload4(0, &a_slice[buffer][p][ty * THREAD_M]);
      const float4 a1 = vload4(0, &a_slice[buffer][p][ty * THREAD_M + 4]);
      const float4 b0 = vload4(0, &b_slice[buffer][p][tx * THREAD_N]);
      const float4 b1 = vload4(0, &b_slice[buffer][p][tx * THREAD_N + 4]);
      const float av[THREAD_M] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[THREAD_N] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    // Uniform across the work-group (p0 and k are), so every work-item reaches the barrier.
    if (more) {
      STAGE(buffer ^ 1)
      barrier(CLK_LOCAL_MEM_FENCE);
      buffer ^= 1;
    }
  }

#pragma unroll
  for (int i = 0; i < THREAD_M; ++i) {
    const int row = row0 + ty * THREAD_M + i;
    if (row >= m) break;
#pragma unroll
    for (int j = 0; j < THREAD_N; ++j) {
      const int col = col0 + tx * THREAD_N + j;
      if (col < n) c[(size_t)row * n + col] = acc[i][j];
    }
  }
}
// --8<-- [end:fast]
