// The staff tree: as the CUDA one (baselines_cuda.cu), each level reading from `src + src_offset` and
// writing its block sums at `dst + dst_offset`.
// The harness's harness_tree kernel (bindings_opencl.cpp builds it); students get it encoded,
// never as this source (grader/contract/kernel_embedding.hpp).
#define THREADS 256
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void harness_tree(__global const float* src,
                                                                                int src_offset, int n,
                                                                                __global float* dst, int dst_offset) {
  __local float partial[THREADS];
  const int t = get_local_id(0);
  const int i = get_group_id(0) * 2 * THREADS + t;
  src += src_offset;
  float sum = i < n ? src[i] : 0.0f;
  if (i + THREADS < n) sum += src[i + THREADS];
  partial[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = THREADS / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) dst[dst_offset + get_group_id(0)] = partial[0];
}
