// One compare-exchange per work-item, as in the CUDA baseline.
// The harness's harness_naive_step kernel (bindings_opencl.cpp builds it); students get it encoded,
// never as this source (grader/contract/kernel_embedding.hpp).
__kernel void harness_naive_step(__global uint* keys, int n, int k, int j, int mirror) {
  const uint t = get_global_id(0);
  const uint i = ((t & ~(j - 1u)) << 1) | (t & (j - 1u));
  const uint partner = mirror ? i ^ (k - 1u) : i + j;
  if (partner >= (uint)n) return;
  const uint a = keys[i], b = keys[partner];
  if (a > b) {
    keys[i] = b;
    keys[partner] = a;
  }
}
