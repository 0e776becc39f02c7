// The harness's harness_naive_matmul kernel (bindings_opencl.cpp builds it); students get it encoded,
// never as this source (grader/contract/kernel_embedding.hpp).
__kernel void harness_naive_matmul(__global const float* a, __global const float* b, __global float* c, int m, int n,
                                   int k) {
  const int col = get_global_id(0), row = get_global_id(1);
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int p = 0; p < k; ++p) sum += a[(size_t)row * k + p] * b[(size_t)p * n + col];
  c[(size_t)row * n + col] = sum;
}
