// Lab 05-reduction (OpenCL kernels): out[0] = in[0] + in[1] + ... + in[n - 1]. Launched by
// reduction_opencl.cpp.

// OpenCL 1.2 has no atomic addition of floats: read the sum, add, and swap the bits in only if
// nobody changed the sum meanwhile (compare-and-swap); otherwise try again with what they wrote.
void atomic_add_float(volatile __global float* target, float value) {
  volatile __global uint* bits = (volatile __global uint*)target;
  uint expected = *bits;
  for (;;) {
    const uint seen = atomic_cmpxchg(bits, expected, as_uint(as_float(expected) + value));
    if (seen == expected) return;
    expected = seen;
  }
}

__kernel void reduce_atomic_kernel(__global const float* in, __global float* out, int n) {
  const int i = get_global_id(0);
  if (i < n) atomic_add_float(out, in[i]);
}

// Weaker tree (for the GPU test): no local memory, one launch per level of a pairwise tree in
// global memory: about three times the traffic of one pass.
__kernel void pairwise_kernel(__global const float* src, __global float* dst, int count, int width) {
  const int i = get_global_id(0);
  if (i < width) dst[i] = src[i] + (i + width < count ? src[i + width] : 0.0f);  // reads only i, i + width
}

#define FAST_THREADS 256

// A fixed number of work-groups walks over the input: each work-item adds float4 vectors strided by
// the whole NDRange, then the work-group combines its sums in local memory (OpenCL 1.2 has no warp
// shuffles), and one atomic addition per work-group adds its sum to out[0].
__kernel __attribute__((reqd_work_group_size(FAST_THREADS, 1, 1)))
void reduce_fast_kernel(__global const float* restrict in, __global float* out, int n) {
  const int stride = get_global_size(0);
  const int vector_count = n / 4;
  float sum = 0.0f;
  for (int v = get_global_id(0); v < vector_count; v += stride) {
    const float4 x = vload4(v, in);
    sum += (x.x + x.y) + (x.z + x.w);
  }
  for (int i = 4 * vector_count + get_global_id(0); i < n; i += stride) sum += in[i];  // the last n % 4

  __local float partial[FAST_THREADS];
  const int t = get_local_id(0);
  partial[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int width = FAST_THREADS / 2; width > 0; width /= 2) {
    if (t < width) partial[t] += partial[t + width];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) atomic_add_float(out, partial[0]);
}
