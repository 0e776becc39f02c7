// The staff kernel, as the CUDA one (baselines_cuda.cu): bin b of lane l at lane_bins[b * 32 + l].
// The harness's harness_histogram kernel (bindings_opencl.cpp builds it); students get it encoded,
// never as this source (grader/contract/kernel_embedding.hpp).
#define BINS 256
#define THREADS 256
#define LANES 32
void count_word(__local uint* mine, uint word) {
  for (int k = 0; k < 4; ++k) atomic_inc(&mine[((word >> (8 * k)) & 0xFF) * LANES]);
}
void count_vector(__local uint* mine, uint4 v) {
  count_word(mine, v.x);
  count_word(mine, v.y);
  count_word(mine, v.z);
  count_word(mine, v.w);
}
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void harness_histogram(
    __global const uchar* restrict bytes, __global uint* bins, int n) {
  __local uint lane_bins[BINS * LANES];
  const int lid = get_local_id(0);
  for (int i = lid; i < BINS * LANES; i += THREADS) lane_bins[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* mine = lane_bins + lid % LANES;
  const int stride = get_global_size(0), first = get_global_id(0);
  const int vectors = n / 16;
  __global const uint4* as_vectors = (__global const uint4*)bytes;
  int v = first;
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 a = as_vectors[v], b = as_vectors[v + stride];
    count_vector(mine, a);
    count_vector(mine, b);
  }
  if (v < vectors) count_vector(mine, as_vectors[v]);
  for (int i = vectors * 16 + first; i < n; i += stride) atomic_inc(&mine[bytes[i] * LANES]);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint count = 0;
  for (int l = 0; l < LANES; ++l) count += lane_bins[lid * LANES + (lid + l) % LANES];
  if (count > 0) atomic_add(&bins[lid], count);
}
