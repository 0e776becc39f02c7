// Lab 05-reduction (OpenCL kernels): out[0] = in[0] + in[1] + ... + in[n - 1]. Launched by
// reduction_opencl.cpp.

// --8<-- [start:atomic]
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
// --8<-- [end:atomic]

// --8<-- [start:tree]
#define TREE_THREADS 256
#define TREE_ELEMENTS (2 * TREE_THREADS) /* each work-item adds two elements as it loads them */

// Work-group g sums elements [g * 512, g * 512 + 512) of src (from src_offset) into
// dst[dst_offset + g]: a pairwise tree in local memory, halving the active work-items each step.
__kernel __attribute__((reqd_work_group_size(TREE_THREADS, 1, 1)))
void reduce_tree_kernel(__global const float* src, int src_offset, int n, __global float* dst, int dst_offset) {
  __local float partial[TREE_THREADS];
  const int t = get_local_id(0);
  const int i = get_group_id(0) * TREE_ELEMENTS + t;
  src += src_offset;
  float sum = i < n ? src[i] : 0.0f;
  if (i + TREE_THREADS < n) sum += src[i + TREE_THREADS];
  partial[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = TREE_THREADS / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    barrier(CLK_LOCAL_MEM_FENCE);  // a step reads what the step before wrote, in other work-items
  }
  if (t == 0) dst[dst_offset + get_group_id(0)] = partial[0];
}
// --8<-- [end:tree]

// --8<-- [start:fast]
#define FAST_THREADS 256

// A fixed number of work-groups walks over the input: each work-item adds float4 vectors strided by
// the whole NDRange, then the work-group combines its sums in local memory (OpenCL 1.2 has no warp
// shuffles), and one atomic addition per work-group adds its sum to out[0].
// The vectors are read through a float4 pointer, not vload4: vload4 promises only a float's
// alignment, so the compiler may split it into four 4-byte loads; the buffer starts 256-byte
// aligned. Four vectors per iteration keep four loads in flight per work-item; with one per
// iteration each load's latency would show.
__kernel __attribute__((reqd_work_group_size(FAST_THREADS, 1, 1)))
void reduce_fast_kernel(__global const float* restrict in, __global float* out, int n) {
  const int stride = get_global_size(0);
  const int vector_count = n / 4;
  __global const float4* vectors = (__global const float4*)in;
  float4 sums = (float4)(0.0f);
  int v = get_global_id(0);
  for (; v + 3 * stride < vector_count; v += 4 * stride)
    sums += (vectors[v] + vectors[v + stride]) + (vectors[v + 2 * stride] + vectors[v + 3 * stride]);
  for (; v < vector_count; v += stride) sums += vectors[v];
  float sum = (sums.x + sums.y) + (sums.z + sums.w);
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
// --8<-- [end:fast]
